//! Failure analysis: why an episode did not succeed, in the paper's fault taxonomy
//! (PAPER_FACTS, "Error taxonomy"). Most faults are decidable from the transcript, the
//! task's reference actions and the environment, so deterministic detectors come first,
//! one module each ([`DETECTORS`]); the [`judge`] role is asked only about what rules
//! cannot decide (misread intent, hallucination, inconsistency, friction in general,
//! emotional neglect), and its labels are marked as model labels.
//!
//! An [`Episode`] is built once per rollout: the transcript with the agent's reasoning
//! dropped (a scripted agent's reasoning names its own mistakes; detectors judge behaviour,
//! not intentions), every executed tool call replayed on a fork of the task's database
//! (classifying schema errors, re-checking the domain's policy on the state each write ran
//! on, and checking that the replay reproduces the recorded observation), and the
//! customer's distinctive facts. Detectors are pure functions of it.
//!
//! Architecture invariant: knows tasks and rollouts through their records, domains through
//! `Environment`/`ToolSpec`, models through the role layer; never reads or writes files,
//! and never reads a rollout's `injected_mistakes` (the ground truth it is measured by).

pub mod alignment;
pub mod clean;
pub mod confirmation;
pub mod early_stop;
pub mod episode;
pub mod judge;
pub mod policy;
pub mod revealed;
pub mod reverification;
pub mod run;
pub mod schema;
pub mod step_limit;
pub mod transfer;
pub mod unsatisfied;
pub mod unseen;

use crate::split::Split;
pub use episode::{AnalysisError, CallOutcome, Episode, ExecutedCall};
pub use run::{AnalysisConfig, analyse_source, summary};

/// A fault of the paper's taxonomy, plus four labels of our own: `step_limit` (the
/// episode was cut at the step limit), `context_exceeded` (the conversation outgrew a
/// model's context window), `user_unsatisfied` (the user left with
/// `###UNSATISFIED###`; the detail is their stated reason) and `unlabelled` (a failed
/// episode no detector or judge explained, so every failure shows up in the tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    MissedAction,
    WrongOrder,
    ExtraAction,
    RepeatedAction,
    MisreadIntent,
    EarlyStop,
    WrongArguments,
    SchemaError,
    Hallucination,
    Inconsistent,
    RevealedEarly,
    PolicyBreach,
    Friction,
    EmotionalNeglect,
    WrongTransfer,
    StepLimit,
    ContextExceeded,
    UserUnsatisfied,
    Unlabelled,
}

impl Fault {
    /// Every fault, in the taxonomy's order (the order of the stats tables).
    pub const ALL: [Fault; 19] = [
        Fault::MissedAction,
        Fault::WrongOrder,
        Fault::ExtraAction,
        Fault::RepeatedAction,
        Fault::MisreadIntent,
        Fault::EarlyStop,
        Fault::WrongArguments,
        Fault::SchemaError,
        Fault::Hallucination,
        Fault::Inconsistent,
        Fault::RevealedEarly,
        Fault::PolicyBreach,
        Fault::Friction,
        Fault::EmotionalNeglect,
        Fault::WrongTransfer,
        Fault::StepLimit,
        Fault::ContextExceeded,
        Fault::UserUnsatisfied,
        Fault::Unlabelled,
    ];

    /// The faults only a reader can decide: the judge's whole vocabulary.
    pub const JUDGED: [Fault; 5] = [
        Fault::MisreadIntent,
        Fault::Hallucination,
        Fault::Inconsistent,
        Fault::Friction,
        Fault::EmotionalNeglect,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Fault::MissedAction => "missed_action",
            Fault::WrongOrder => "wrong_order",
            Fault::ExtraAction => "extra_action",
            Fault::RepeatedAction => "repeated_action",
            Fault::MisreadIntent => "misread_intent",
            Fault::EarlyStop => "early_stop",
            Fault::WrongArguments => "wrong_arguments",
            Fault::SchemaError => "schema_error",
            Fault::Hallucination => "hallucination",
            Fault::Inconsistent => "inconsistent",
            Fault::RevealedEarly => "revealed_early",
            Fault::PolicyBreach => "policy_breach",
            Fault::Friction => "friction",
            Fault::EmotionalNeglect => "emotional_neglect",
            Fault::WrongTransfer => "wrong_transfer",
            Fault::StepLimit => "step_limit",
            Fault::ContextExceeded => "context_exceeded",
            Fault::UserUnsatisfied => "user_unsatisfied",
            Fault::Unlabelled => "unlabelled",
        }
    }

    pub fn parse(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// The taxonomy's group.
    pub fn category(self) -> &'static str {
        match self {
            Fault::MissedAction
            | Fault::WrongOrder
            | Fault::ExtraAction
            | Fault::RepeatedAction => "missing/extra action",
            Fault::MisreadIntent | Fault::EarlyStop => "incomplete",
            Fault::WrongArguments | Fault::SchemaError => "wrong tool call",
            Fault::Hallucination | Fault::Inconsistent | Fault::RevealedEarly => "integrity",
            Fault::PolicyBreach
            | Fault::Friction
            | Fault::EmotionalNeglect
            | Fault::WrongTransfer => "policy & interaction",
            Fault::StepLimit | Fault::ContextExceeded | Fault::UserUnsatisfied => "ending",
            Fault::Unlabelled => "unexplained",
        }
    }

    /// Faults about where the agent's actions left the reference path: the earliest of
    /// them in an episode is its first diverging step.
    pub fn diverges(self) -> bool {
        matches!(
            self,
            Fault::MissedAction
                | Fault::WrongOrder
                | Fault::ExtraAction
                | Fault::RepeatedAction
                | Fault::WrongArguments
                | Fault::EarlyStop
                | Fault::WrongTransfer
        )
    }
}

/// One fault found in one episode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub fault: Fault,
    /// Index into the episode's `messages` of the evidence (for action faults, the first
    /// message where the agent left the reference path).
    pub step: Option<usize>,
    /// 1-based position of the tool call among the episode's calls, when the fault is one.
    pub call: Option<usize>,
    /// The detector's name, or `judge:<model>` for a model label.
    pub detector: String,
    pub detail: String,
    /// Whose fault a judge's label says it is: `agent` or `user` (detectors: none).
    pub party: Option<&'static str>,
    /// A judge's severity: `minor`, `major` or `critical` (detectors: none).
    pub severity: Option<&'static str>,
}

impl Finding {
    pub fn new(fault: Fault, detector: &str, detail: impl Into<String>) -> Finding {
        Finding {
            fault,
            step: None,
            call: None,
            detector: detector.to_string(),
            detail: detail.into(),
            party: None,
            severity: None,
        }
    }

    pub fn at(mut self, step: usize) -> Finding {
        self.step = Some(step);
        self
    }

    pub fn at_call(mut self, call: &ExecutedCall) -> Finding {
        self.step = Some(call.step);
        self.call = Some(call.ordinal);
        self
    }
}

/// A deterministic detector: a name and a pure function of the episode.
pub type Detector = (&'static str, fn(&Episode) -> Vec<Finding>);

/// The deterministic detectors, in the order their findings are listed.
pub const DETECTORS: &[Detector] = &[
    (alignment::NAME, alignment::detect),
    (early_stop::NAME, early_stop::detect),
    (schema::NAME, schema::detect),
    (policy::NAME, policy::detect),
    (confirmation::NAME, confirmation::detect),
    (revealed::NAME, revealed::detect),
    (unseen::NAME, unseen::detect),
    (transfer::NAME, transfer::detect),
    (reverification::NAME, reverification::detect),
    (step_limit::NAME, step_limit::detect),
    (unsatisfied::NAME, unsatisfied::detect),
];

/// Every deterministic detector's findings for one episode, in [`DETECTORS`] order.
pub fn detect_all(ep: &Episode) -> Vec<Finding> {
    DETECTORS.iter().flat_map(|(_, f)| f(ep)).collect()
}

/// Whether an episode is analysed: scored (not an infrastructure failure) and, unless
/// `all` is set, not a success.
pub fn in_scope(rollout: &crate::artifact::RolloutRecord, all: bool) -> bool {
    let infra = rollout.termination == crate::harness::Termination::EndpointError.as_str();
    !infra && (all || rollout.reward < 1)
}

/// One finding per fault and kind of decider (detector or judge): the earliest evidence,
/// its detail saying how many more there were; ordered by step (findings without one last),
/// then by the taxonomy's order.
pub fn merge(findings: Vec<Finding>) -> Vec<Finding> {
    let judged = |f: &Finding| f.detector.starts_with("judge:");
    let mut out: Vec<(Finding, usize)> = Vec::new();
    for f in findings {
        match out
            .iter_mut()
            .find(|(g, _)| g.fault == f.fault && judged(g) == judged(&f))
        {
            Some((g, more)) => {
                *more += 1;
                if f.step.unwrap_or(usize::MAX) < g.step.unwrap_or(usize::MAX) {
                    *g = f;
                }
            }
            None => out.push((f, 0)),
        }
    }
    let mut out: Vec<Finding> = out
        .into_iter()
        .map(|(mut f, more)| {
            if more > 0 {
                f.detail.push_str(&format!(" (+{more} more)"));
            }
            f
        })
        .collect();
    out.sort_by_key(|f| (f.step.unwrap_or(usize::MAX), f.fault, judged(f)));
    out
}

/// The rows of one episode: its findings merged ([`merge`]), or one `unlabelled` row for a
/// failed episode nobody explained.
pub fn finish(ep: &Episode, findings: Vec<Finding>) -> Vec<Finding> {
    let mut findings = merge(findings);
    if findings.is_empty() && ep.reward < 1 {
        findings.push(Finding::new(
            Fault::Unlabelled,
            "none",
            format!(
                "reward {} ({}); no detector fired",
                ep.reward, ep.termination
            ),
        ));
    }
    findings
}

/// An analysed rollout: its index in the input, the episode, the detectors' findings.
pub struct Analysed {
    pub index: usize,
    pub episode: Episode,
    pub findings: Vec<Finding>,
}

/// The databases the tasks of each split start from.
#[derive(Clone, Copy)]
pub struct StartStates<'a> {
    pub train: &'a dyn crate::domain::Environment,
    pub eval: &'a dyn crate::domain::Environment,
}

impl<'a> StartStates<'a> {
    /// One database for both splits (imported task files).
    pub fn single(env: &'a dyn crate::domain::Environment) -> Self {
        StartStates {
            train: env,
            eval: env,
        }
    }

    pub fn for_split(&self, split: Split) -> &'a dyn crate::domain::Environment {
        if split == Split::Eval {
            self.eval
        } else {
            self.train
        }
    }
}

/// Run every deterministic detector over the rollouts in scope ([`in_scope`]), in input
/// order, on all cores. `starts` gives the database a split's tasks start from; a rollout
/// whose task is unknown, or that does not replay, is an error naming the episode.
pub fn analyse_rollouts(
    starts: StartStates<'_>,
    tasks: &std::collections::BTreeMap<String, crate::artifact::TaskRecord>,
    rollouts: &[crate::artifact::RolloutRecord],
    all: bool,
) -> Result<Vec<Analysed>, AnalysisError> {
    let todo: Vec<usize> = (0..rollouts.len())
        .filter(|&i| in_scope(&rollouts[i], all))
        .collect();
    crate::parallel::parallel_map(&todo, |&i| {
        let r = &rollouts[i];
        let task = tasks
            .get(&r.task_id)
            .ok_or_else(|| AnalysisError::Malformed {
                task_id: r.task_id.clone(),
                trial: r.trial,
                field: "task_id",
                message: "not among the tasks the rollouts were made from".into(),
            })?;
        let episode = Episode::build(starts.for_split(task.split), task, r)?;
        let findings = detect_all(&episode);
        Ok(Analysed {
            index: i,
            episode,
            findings,
        })
    })
    .into_iter()
    .collect()
}

/// Add the judge's labels (an endpoint judge; the scripted one abstains). Returns how many
/// answers were unreadable (those episodes keep the detectors' findings only).
pub fn add_judge_labels(
    judge: &crate::llm::RoleModel,
    ctx: &judge::JudgeContext,
    analysed: &mut [Analysed],
    seed: u64,
) -> Result<usize, String> {
    let crate::llm::RoleModel::Endpoint(model) = judge else {
        return Ok(0);
    };
    let asks: Vec<(&Episode, Vec<Finding>)> = analysed
        .iter()
        .map(|a| (&a.episode, a.findings.clone()))
        .collect();
    let answers = judge::judge_all(model, ctx, &asks, seed)?;
    let mut unreadable = 0;
    for (a, answer) in analysed.iter_mut().zip(answers) {
        match answer {
            Ok(labels) => a.findings.extend(labels),
            Err(_) => unreadable += 1,
        }
    }
    Ok(unreadable)
}

/// The fault rows of analysed rollouts from one source artifact.
pub fn fault_records(
    source: &str,
    rollouts: &[crate::artifact::RolloutRecord],
    analysed: Vec<Analysed>,
) -> Vec<crate::artifact::FaultRecord> {
    let mut rows = Vec::new();
    for a in analysed {
        let r = &rollouts[a.index];
        for f in finish(&a.episode, a.findings) {
            rows.push(crate::artifact::FaultRecord {
                task_id: r.task_id.clone(),
                trial: r.trial,
                domain: r.domain.clone(),
                split: r.split,
                source: source.to_string(),
                agent_model: r.agent_model.clone(),
                user_model: r.user_model.clone(),
                reward: r.reward,
                termination: r.termination.clone(),
                fault: f.fault.as_str().to_string(),
                category: f.fault.category().to_string(),
                step: f.step.and_then(|s| i32::try_from(s).ok()),
                call: f.call.and_then(|s| i32::try_from(s).ok()),
                model_label: f.detector.starts_with("judge:"),
                detector: f.detector,
                detail: f.detail,
                party: f.party.map(str::to_string),
                severity: f.severity.map(str::to_string),
            });
        }
    }
    rows
}

#[cfg(test)]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_names_round_trip_and_judged_faults_are_in_the_taxonomy() {
        for f in Fault::ALL {
            assert_eq!(Fault::parse(f.as_str()), Some(f));
        }
        for f in Fault::JUDGED {
            assert!(!f.diverges());
            assert_ne!(f.category(), "ending");
        }
        assert_eq!(Fault::parse("made_up"), None);
    }

    #[test]
    fn merging_keeps_the_earliest_finding_per_fault_and_decider() {
        let at = |fault, step: usize, det: &str| Finding::new(fault, det, "d").at(step);
        let merged = merge(vec![
            at(Fault::PolicyBreach, 9, "policy"),
            at(Fault::PolicyBreach, 5, "confirmation"),
            at(Fault::Friction, 3, "judge:m"),
            at(Fault::Friction, 7, "reverification"),
        ]);
        let got: Vec<(Fault, Option<usize>, &str, &str)> = merged
            .iter()
            .map(|f| (f.fault, f.step, f.detector.as_str(), f.detail.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (Fault::Friction, Some(3), "judge:m", "d"),
                (Fault::PolicyBreach, Some(5), "confirmation", "d (+1 more)"),
                (Fault::Friction, Some(7), "reverification", "d"),
            ]
        );
    }
}
