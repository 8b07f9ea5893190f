//! `tasks` stage: verification. A refined task is kept only when
//! 1. its reference actions replay on a fresh fork, every call succeeding, to the recorded
//!    state hash;
//! 2. every call obeys the domain's machine-checkable policy rules on the state before it;
//! 3. its instruction is sufficient: every argument value is stated in the instruction,
//!    revealed by the customer's own records or an earlier reference call, or (for
//!    internal ids) resolvable through a user fact the instruction states — and no internal
//!    id appears in the instruction;
//! 4. where 1–3 are inconclusive (only free-text values missing from the instruction), the
//!    judge role decides; the scripted judge rejects.
//!
//! Rejected tasks go to `_rejects.parquet` with their reason. Verification does not read
//! emotion columns; it carries them through.

use crate::artifact::{self, RejectRecord, TaskRecord};
use crate::config::ConfigError;
use crate::domain::{Domain, DomainError, Environment, Split, UserFact};
use crate::pipeline::{PipelineError, Stage, StageContext};
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

pub struct TasksStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksConfig {
    /// `[roles.judge]`: decides inconclusive tasks. Scripted (the default) rejects them.
    #[serde(default)]
    pub roles: crate::llm::RolesConfig,
}

/// The LLM judge's instructions (our own words).
pub const JUDGE_PROMPT: &str = "You check whether a customer-service task can be carried out \
as specified. You get the customer's instruction, the reference tool calls an agent must \
make, and the value an automatic check could not find stated. Decide whether the customer, \
following the instruction, could give the agent that value, or the agent could look it up \
from what the customer says. Answer ACCEPT or REJECT on the first line, then one sentence \
of reason.";

/// The train and eval databases of a domain, loaded once.
pub struct SplitEnvs {
    train: Box<dyn Environment>,
    eval: Box<dyn Environment>,
}

impl SplitEnvs {
    pub fn load(db_dir: &Path, domain: &dyn Domain) -> Result<Self, DomainError> {
        Ok(SplitEnvs {
            train: super::db::load_db(db_dir, domain, Split::Train)?,
            eval: super::db::load_db(db_dir, domain, Split::Eval)?,
        })
    }

    pub fn for_split(&self, split: &str) -> &dyn Environment {
        if split == "eval" {
            self.eval.as_ref()
        } else {
            self.train.as_ref()
        }
    }
}

/// A task's reference actions as (name, kwargs).
pub fn parse_actions(task: &TaskRecord) -> Result<Vec<(String, Value)>, String> {
    let v: Vec<Value> =
        serde_json::from_str(&task.actions).map_err(|e| format!("actions column: {e}"))?;
    v.into_iter()
        .map(|a| {
            let name = a
                .get("name")
                .and_then(Value::as_str)
                .ok_or("action without a name")?;
            Ok((
                name.to_string(),
                a.get("kwargs").cloned().unwrap_or(Value::Null),
            ))
        })
        .collect()
}

/// Why a task failed verification.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    pub kind: &'static str,
    pub reason: String,
}

fn reject(kind: &'static str, reason: impl Into<String>) -> Rejection {
    Rejection {
        kind,
        reason: reason.into(),
    }
}

/// Replay with policy checks; returns each call's output.
pub fn replay_checked(env: &dyn Environment, task: &TaskRecord) -> Result<Vec<String>, Rejection> {
    let actions = parse_actions(task).map_err(|e| reject("malformed", e))?;
    let mut state = env.fork();
    let mut outputs = Vec::with_capacity(actions.len());
    for (j, (tool, args)) in actions.iter().enumerate() {
        // Policy is judged on the state before the call; a call the tool itself refuses is a
        // replay failure whatever the policy says.
        let policy = state.check_policy(tool, args);
        let out = state.invoke(tool, args);
        if out.is_error {
            return Err(reject(
                "replay",
                format!("action {j} ({tool}) failed on replay: {}", out.text),
            ));
        }
        policy.map_err(|rule| {
            reject(
                "policy",
                format!("action {j} ({tool}) breaks the policy: {rule}"),
            )
        })?;
        outputs.push(out.text);
    }
    let hash = state.state_hash().to_hex();
    if hash != task.reference_hash {
        return Err(reject(
            "replay",
            format!(
                "final state {hash} differs from the reference {}",
                task.reference_hash
            ),
        ));
    }
    Ok(outputs)
}

fn leaves<'a>(path: String, v: &'a Value, out: &mut Vec<(String, &'a str)>) {
    match v {
        Value::String(s) => out.push((path, s)),
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                leaves(format!("{path}[{i}]"), x, out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(p, x, out);
            }
        }
        // Numbers (amounts, counts) are derived by the agent from prices and policy, and
        // booleans are yes/no choices: neither is a fact the customer must state verbatim.
        _ => {}
    }
}

/// No internal id of any action may appear in the instruction.
pub fn check_no_internal_ids(
    env: &dyn Environment,
    task: &TaskRecord,
    instruction: &str,
) -> Result<(), String> {
    for (tool, args) in parse_actions(task)? {
        for id in env.internal_ids(&tool, &args) {
            if !id.is_empty() && instruction.contains(&id) {
                return Err(format!(
                    "the instruction reveals internal id '{id}' (an argument of {tool})"
                ));
            }
        }
    }
    Ok(())
}

fn normalise(s: &str) -> String {
    s.to_lowercase().replace('_', " ")
}

/// Information sufficiency; `Err` names the first argument the customer could not supply.
/// Internal-id and identity gaps are hard failures; a free-text value that is merely not
/// stated verbatim comes back as `Inconclusive`.
pub fn check_information(
    env: &dyn Environment,
    task: &TaskRecord,
    facts: &[UserFact],
    instruction: &str,
) -> Result<(), String> {
    match information_gaps(env, task, facts, instruction, &reference_outputs(env, task)) {
        Gaps::None => Ok(()),
        Gaps::Hard(e) | Gaps::Inconclusive(e) => Err(e),
    }
}

/// The outcome of the sufficiency analysis.
pub enum Gaps {
    None,
    Hard(String),
    Inconclusive(String),
}

/// The output of each reference call, replayed in order on a fresh fork (no checks).
pub fn reference_outputs(env: &dyn Environment, task: &TaskRecord) -> Vec<String> {
    let mut state = env.fork();
    parse_actions(task)
        .unwrap_or_default()
        .iter()
        .map(|(tool, args)| state.invoke(tool, args).text)
        .collect()
}

/// `outputs` are the reference calls' outputs in order (what the agent would see), e.g.
/// from [`replay_checked`] or [`reference_outputs`].
pub fn information_gaps(
    env: &dyn Environment,
    task: &TaskRecord,
    facts: &[UserFact],
    instruction: &str,
    outputs: &[String],
) -> Gaps {
    let inst = normalise(instruction);
    let stated = |f: &UserFact| {
        inst.contains(&normalise(&f.text))
            || (!f.values.is_empty() && f.values.iter().all(|v| inst.contains(&normalise(v))))
    };
    if let Some(identity) = facts.iter().find(|f| f.kind == "identity")
        && !stated(identity)
    {
        return Gaps::Hard("the instruction does not say how the customer authenticates".into());
    }
    let actions = match parse_actions(task) {
        Ok(a) => a,
        Err(e) => return Gaps::Hard(e),
    };
    let mut knowledge = env.customer_records(&task.user_id).join("\n");
    let mut soft: Option<String> = None;
    for (j, (tool, args)) in actions.iter().enumerate() {
        let internal = env.internal_ids(tool, args);
        let mut vals = Vec::new();
        leaves(String::new(), args, &mut vals);
        for (path, value) in vals {
            if internal.iter().any(|i| i == value) {
                if !facts
                    .iter()
                    .any(|f| f.ids.iter().any(|i| i == value) && stated(f))
                {
                    return Gaps::Hard(format!(
                        "action {j} ({tool}) argument '{path}' is internal id '{value}' and no stated fact resolves it"
                    ));
                }
                continue;
            }
            let known = inst.contains(&normalise(value)) || knowledge.contains(value);
            if !known && soft.is_none() {
                soft = Some(format!(
                    "action {j} ({tool}) argument '{path}' = '{value}' is neither stated nor obtainable"
                ));
            }
        }
        knowledge.push('\n');
        knowledge.push_str(outputs.get(j).map(String::as_str).unwrap_or_default());
    }
    match soft {
        None => Gaps::None,
        Some(e) => Gaps::Inconclusive(e),
    }
}

/// Verify one task: replay + policy, id rule, information (judge on inconclusive).
/// Verify one task: replay + policy, id rule, information. A task whose only gap is a
/// value not stated verbatim comes back as kind `inconclusive`, for the judge.
pub fn verify_task(env: &dyn Environment, task: &TaskRecord) -> Result<(), Rejection> {
    let outputs = replay_checked(env, task)?;
    let instruction = task
        .instruction
        .as_deref()
        .ok_or_else(|| reject("malformed", "task has no instruction"))?;
    check_no_internal_ids(env, task, instruction).map_err(|e| reject("forbidden_id", e))?;
    let facts: Vec<UserFact> = serde_json::from_str(&task.user_facts).unwrap_or_default();
    match information_gaps(env, task, &facts, instruction, &outputs) {
        Gaps::None => Ok(()),
        Gaps::Hard(e) => Err(reject("information", e)),
        Gaps::Inconclusive(e) => Err(reject("inconclusive", e)),
    }
}

/// The judge's request for one inconclusive task.
pub fn judge_request(task: &TaskRecord, gap: &str, seed: u64) -> crate::llm::ChatRequest {
    crate::llm::ChatRequest::new(vec![
        crate::llm::ChatMessage::system(JUDGE_PROMPT),
        crate::llm::ChatMessage::user(format!(
            "Instruction:\n{}\n\nReference tool calls:\n{}\n\nNot found stated: {gap}",
            task.instruction.as_deref().unwrap_or_default(),
            task.actions
        )),
    ])
    .with_seed(seed)
}

/// Settle inconclusive verdicts with the judge role; other verdicts pass through.
fn judge_inconclusive(
    ctx: &StageContext,
    judge: &crate::llm::RoleModel,
    tasks: &[TaskRecord],
    verdicts: Vec<Result<(), Rejection>>,
) -> Result<Vec<Result<(), Rejection>>, PipelineError> {
    let crate::llm::RoleModel::Endpoint(model) = judge else {
        // The scripted judge cannot read; it does not keep an inconclusive task.
        return Ok(verdicts
            .into_iter()
            .map(|v| match v {
                Err(r) if r.kind == "inconclusive" => Err(reject(
                    "judge",
                    format!("inconclusive, rejected by the scripted judge: {}", r.reason),
                )),
                other => other,
            })
            .collect());
    };
    type Call = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), Rejection>> + Send>>;
    let calls: Vec<Call> = tasks
        .iter()
        .zip(verdicts)
        .map(|(task, v)| match v {
            Err(r) if r.kind == "inconclusive" => {
                let model = std::sync::Arc::clone(model);
                let req = judge_request(
                    task,
                    &r.reason,
                    crate::seed::derive_seed(ctx.seed, &["judge", &task.task_id]),
                );
                Box::pin(async move {
                    let answer = model
                        .chat(req)
                        .await
                        .map_err(|e| reject("endpoint_error", format!("judge: {e}")))?;
                    let text = answer.message.content.unwrap_or_default();
                    let first = text.lines().next().unwrap_or("").to_uppercase();
                    if first.contains("ACCEPT") && !first.contains("REJECT") {
                        Ok(())
                    } else {
                        Err(reject(
                            "judge",
                            format!("rejected by the {} judge: {}", answer.model, text.trim()),
                        ))
                    }
                }) as Call
            }
            other => Box::pin(async move { other }) as Call,
        })
        .collect();
    super::roles::run_all(calls).map_err(|e| ctx.fail(e))
}

impl Stage for TasksStage {
    fn name(&self) -> &'static str {
        "tasks"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "emotions"]
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        let cfg: TasksConfig = crate::config::parse_typed(path, table)?;
        super::roles::check_roles(path, &cfg.roles, &[crate::llm::Role::Judge])
    }
    fn preflight(&self, path: &Path, table: &toml::Table) -> Result<(), String> {
        let cfg: TasksConfig =
            crate::config::parse_typed(path, table).map_err(|e| e.to_string())?;
        super::roles::preflight_roles(&cfg.roles)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: TasksConfig = ctx.typed_config()?;
        let (refined, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("emotions").join("part-00000.parquet"),
        )?;
        let envs = SplitEnvs::load(&ctx.input_dir("db"), ctx.domain)?;
        let verdicts =
            crate::parallel::parallel_map(&refined, |t| verify_task(envs.for_split(&t.split), t));
        let judge = super::roles::open_role(ctx, &cfg.roles, crate::llm::Role::Judge)?;
        let verdicts = judge_inconclusive(ctx, &judge, &refined, verdicts)?;
        let mut kept = Vec::new();
        let mut rejects = Vec::new();
        for (task, verdict) in refined.into_iter().zip(verdicts) {
            match verdict {
                Ok(()) => kept.push(task),
                Err(r) => rejects.push(RejectRecord {
                    domain: task.domain.clone(),
                    split: task.split.clone(),
                    trace_id: task.trace_id.clone(),
                    task_id: Some(task.task_id.clone()),
                    stage: "tasks".into(),
                    reason_kind: r.kind.into(),
                    reason: r.reason,
                }),
            }
        }
        let prov = ctx.provenance();
        artifact::write_records(&ctx.out("part-00000.parquet"), &kept, &prov)?;
        artifact::write_records(&ctx.out("_rejects.parquet"), &rejects, &prov)?;
        let train = kept.iter().filter(|t| t.split == "train").count();
        Ok(format!(
            "{} verified (train {}, eval {}), {} rejected",
            kept.len(),
            train,
            kept.len() - train,
            rejects.len()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::TraceRecord;
    use crate::stage::grounded::{GroundedConfig, ground_trace, task_record};

    fn cfg() -> GroundedConfig {
        toml::from_str("").unwrap()
    }

    fn grounded(env: &dyn Environment, intents: &[&[&str]]) -> TaskRecord {
        let intents: Vec<Vec<String>> = intents
            .iter()
            .map(|w| w.iter().map(|s| s.to_string()).collect())
            .collect();
        let g = ground_trace(env, "airline", "t1", &intents, 5, &cfg()).expect("groundable");
        let trace = TraceRecord {
            trace_id: "t1".into(),
            domain: "airline".into(),
            split: "train".into(),
            sample_index: 0,
            n_intents: intents.len() as i32,
            length: intents.iter().map(Vec::len).sum::<usize>() as i32,
            intents,
        };
        task_record(&trace, &g)
    }

    fn airline() -> Box<dyn Environment> {
        crate::domain::find("airline")
            .unwrap()
            .generate(3, Split::Eval)
    }

    #[test]
    fn multi_intent_traces_ground_for_one_customer_and_replay() {
        let env = airline();
        let task = grounded(
            env.as_ref(),
            &[
                &["get_user_details", "get_reservation_details"],
                &["search_direct_flight", "book_reservation"],
            ],
        );
        let actions = parse_actions(&task).unwrap();
        assert_eq!(actions.len(), 4);
        assert_eq!(task.action_intents, vec![0, 0, 1, 1]);
        assert_eq!(actions[0].1["user_id"], task.user_id);
        assert_eq!(
            actions[3].1["user_id"], task.user_id,
            "the booking is for the same customer"
        );
        assert!(replay_checked(env.as_ref(), &task).is_ok());
    }

    #[test]
    fn each_verification_rule_rejects_a_crafted_violation() {
        let env = airline();
        let mut task = grounded(
            env.as_ref(),
            &[&["get_reservation_details", "cancel_reservation"]],
        );
        let actions = parse_actions(&task).unwrap();
        let rid = actions[1].1["reservation_id"].as_str().unwrap().to_string();

        // Replay: a changed reference hash, and an action on a reservation that does not exist.
        let mut wrong_hash = task.clone();
        wrong_hash.reference_hash = "0".repeat(32);
        assert_eq!(
            replay_checked(env.as_ref(), &wrong_hash).unwrap_err().kind,
            "replay"
        );
        let mut missing = task.clone();
        missing.actions = task.actions.replace(&rid, "NOSUCH");
        assert_eq!(
            replay_checked(env.as_ref(), &missing).unwrap_err().kind,
            "replay"
        );

        // Policy: cancel a reservation the policy does not allow to be cancelled (the tool
        // itself would accept it).
        let blocked = env
            .customers()
            .iter()
            .flat_map(|u| {
                let out = env
                    .fork()
                    .invoke("get_user_details", &serde_json::json!({"user_id": u}));
                let v: Value = serde_json::from_str(&out.text).unwrap_or_default();
                v["reservations"].as_array().cloned().unwrap_or_default()
            })
            .filter_map(|r| r.as_str().map(str::to_string))
            .find(|r| {
                let args = serde_json::json!({"reservation_id": r});
                env.check_policy("cancel_reservation", &args).is_err()
                    && !env.fork().invoke("cancel_reservation", &args).is_error
            })
            .expect("some reservation is not cancellable under the policy");
        let mut breach = task.clone();
        breach.actions = serde_json::json!([{"name": "cancel_reservation", "kwargs": {"reservation_id": blocked}}]).to_string();
        let mut after = env.fork();
        after.invoke(
            "cancel_reservation",
            &serde_json::json!({"reservation_id": blocked}),
        );
        breach.reference_hash = after.state_hash().to_hex();
        assert_eq!(
            replay_checked(env.as_ref(), &breach).unwrap_err().kind,
            "policy"
        );

        // Information: an instruction that never names the reservation is inconclusive, and
        // the scripted judge rejects it; one that prints an internal id breaks the id rule.
        task.instruction = Some("You want to cancel a trip. Your user id is someone.".into());
        let r = verify_task(env.as_ref(), &task).unwrap_err();
        assert!(matches!(r.kind, "inconclusive" | "information"), "{r:?}");
        assert!(
            r.reason.contains("reservation_id") || r.reason.contains("authenticates"),
            "{r:?}"
        );
    }

    #[test]
    fn an_instruction_that_prints_an_internal_id_is_rejected() {
        let env = airline();
        let mut task = grounded(
            env.as_ref(),
            &[&["search_direct_flight", "book_reservation"]],
        );
        let actions = parse_actions(&task).unwrap();
        let payment = actions[1].1["payment_methods"][0]["payment_id"]
            .as_str()
            .unwrap()
            .to_string();
        task.instruction = Some(format!(
            "You want to book this trip and pay with {payment}."
        ));
        let r = verify_task(env.as_ref(), &task).unwrap_err();
        assert_eq!(r.kind, "forbidden_id", "{r:?}");
        assert!(r.reason.contains(&payment));
    }
}
