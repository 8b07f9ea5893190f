//! The quality gates verification applies to a task that replays ([`Gates`]): coherence,
//! knowable ids, language, answered requests and length, each rejection with its rule.

use super::{RejectKind, Rejection, reject};
use crate::artifact::TaskRecord;
use crate::domain::Environment;
use crate::quality::coherence::Step;

/// The quality gates of verification (`stages/tasks.toml`), each on by default.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Gates {
    /// Reject incoherent compositions.
    pub coherence: bool,
    /// Reject instructions naming created or internal ids, or attribute dumps.
    pub knowable: bool,
    /// Reject mechanical language errors in the instruction and emotion instruction.
    pub language: bool,
    /// Reject tasks that ask to hear something their `outputs` do not carry.
    pub answered: bool,
    /// Reject tasks with more reference actions than this.
    pub max_actions: usize,
}

/// Reference actions a task may have by default. The public hand-checked tasks have 10 or
/// more in 7% of cases; the paper's successful trajectories average 5.2.
pub const MAX_ACTIONS: usize = 10;

impl Default for Gates {
    fn default() -> Self {
        Gates {
            coherence: true,
            knowable: true,
            language: true,
            answered: true,
            max_actions: MAX_ACTIONS,
        }
    }
}

fn with_rule(kind: RejectKind, rule: &'static str, reason: String) -> Rejection {
    Rejection {
        kind,
        rule: Some(rule),
        reason,
    }
}

/// The quality gates on a task that replays: coherence, knowable ids, language, answered
/// information requests, length. Replays the task once; verification, which has replayed
/// it already, calls [`check_quality_on`].
pub fn check_quality(
    env: &dyn Environment,
    task: &TaskRecord,
    instruction: &str,
    gates: &Gates,
) -> Result<(), Rejection> {
    let steps = crate::quality::coherence::replay_steps(env, task);
    check_quality_on(env, task, instruction, gates, &steps)
}

/// [`check_quality`] on the task's steps as replayed.
pub fn check_quality_on(
    env: &dyn Environment,
    task: &TaskRecord,
    instruction: &str,
    gates: &Gates,
    m: &[Step],
) -> Result<(), Rejection> {
    if gates.coherence {
        let ids = crate::quality::coherence::customer_ids(task);
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let findings = crate::quality::coherence::check_steps(m, &ids);
        // One change of mind the instruction states is the customer's, not an accident.
        if !crate::quality::coherence::is_stated_change_of_mind(&findings, instruction)
            && let Some(f) = findings.into_iter().next()
        {
            return Err(with_rule(RejectKind::Incoherent, f.kind.as_str(), f.detail));
        }
    }
    if gates.knowable {
        let records = env.customer_records(&task.user_id).join("\n");
        let requests = &task.requests;
        if let Some(f) =
            crate::quality::knowable::check(instruction, m, &records, env.internal_id_fields())
                .or_else(|| crate::quality::knowable::check_made_references(requests, m, &records))
        {
            return Err(with_rule(RejectKind::Unknowable, f.kind.as_str(), f.detail));
        }
    }
    if gates.language {
        for text in crate::quality::task_texts(task) {
            if let Some(h) = crate::quality::language::check(text).into_iter().next() {
                return Err(with_rule(
                    RejectKind::Language,
                    h.rule.as_str(),
                    format!("language: {h}"),
                ));
            }
        }
    }
    if gates.answered {
        let unanswered = crate::quality::unanswered(task, m);
        if unanswered > 0 {
            return Err(reject(
                RejectKind::Unanswered,
                format!(
                    "{} read(s) the customer asks to hear have a value the outputs do not carry or no reference call shows",
                    unanswered
                ),
            ));
        }
    }
    if m.len() > gates.max_actions {
        return Err(reject(
            RejectKind::TooLong,
            format!(
                "{} reference actions (max_actions = {})",
                m.len(),
                gates.max_actions
            ),
        ));
    }
    Ok(())
}
