//! tau-bench-format task files and deterministic replay of their gold actions.
//!
//! A task file is a JSON list of `{user_id, instruction, actions: [{name, kwargs}], outputs,
//! ...}` with optional emotion fields (`emotion_family`, `emotion_leaf`,
//! `dimension_politeness`, `dimension_urgency`, `dimension_trust_in_agent`); other fields
//! (e.g. `annotator`) are ignored. Replay runs each task's actions in order on a fresh fork
//! of the database and reports every call and each task's outcome and final state hash.
//!
//! Architecture invariant: replay knows domains only through `Environment`.

pub use crate::domain::Action;
use crate::domain::Environment;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TauTask {
    #[serde(default)]
    pub user_id: String,
    #[serde(default)]
    pub instruction: String,
    pub actions: Vec<Action>,
    #[serde(default)]
    pub outputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emotion_family: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emotion_leaf: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension_politeness: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension_urgency: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension_trust_in_agent: Option<String>,
}

impl TauTask {
    /// The tau-bench shape of a verified task. The instruction is what the user simulator
    /// reads: the emotion instruction, when present, follows as its own section.
    pub fn from_record(t: &crate::artifact::TaskRecord) -> TauTask {
        let mut instruction = t.instruction.clone().unwrap_or_default();
        if let Some(e) = &t.emotion_instruction {
            instruction.push_str("\n\n## How you feel and communicate\n");
            instruction.push_str(e);
        }
        TauTask {
            user_id: t.user_id.clone(),
            instruction,
            actions: t.actions.clone(),
            outputs: t.outputs.clone(),
            emotion_family: t.emotion_family.clone(),
            emotion_leaf: t.emotion.clone(),
            dimension_politeness: t.politeness.clone(),
            dimension_urgency: t.urgency.clone(),
            dimension_trust_in_agent: t.trust.clone(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct TaskFileError {
    pub path: String,
    pub message: String,
}

/// Read a tau-bench task file; errors name the file and the task index.
pub fn read_task_file(path: &Path) -> Result<Vec<TauTask>, TaskFileError> {
    let err = |message: String| TaskFileError {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| err(format!("invalid JSON: {e}")))?;
    let Value::Array(items) = value else {
        return Err(err("expected a JSON list of tasks".into()));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value::<TauTask>(item).map_err(|e| err(format!("task [{i}]: {e}")))
        })
        .collect()
}

/// One replayed call.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CallRecord {
    pub task_index: usize,
    pub action_index: usize,
    pub name: String,
    pub kwargs: Value,
    pub output: String,
    pub is_error: bool,
}

/// One replayed task.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskOutcome {
    pub task_index: usize,
    pub user_id: String,
    pub all_succeeded: bool,
    pub first_failure: Option<usize>,
    pub state_hash: String,
}

/// Replay one task's actions on a fresh fork of `base`.
pub fn replay_task(
    base: &dyn Environment,
    index: usize,
    task: &TauTask,
) -> (Vec<CallRecord>, TaskOutcome) {
    let mut env = base.fork();
    let mut calls = Vec::with_capacity(task.actions.len());
    let mut first_failure = None;
    for (j, action) in task.actions.iter().enumerate() {
        let kwargs = if action.kwargs.is_null() {
            Value::Object(Default::default())
        } else {
            action.kwargs.clone()
        };
        let out = env.invoke(&action.name, &kwargs);
        if out.is_error && first_failure.is_none() {
            first_failure = Some(j);
        }
        calls.push(CallRecord {
            task_index: index,
            action_index: j,
            name: action.name.clone(),
            kwargs,
            output: out.text,
            is_error: out.is_error,
        });
    }
    let outcome = TaskOutcome {
        task_index: index,
        user_id: task.user_id.clone(),
        all_succeeded: first_failure.is_none(),
        first_failure,
        state_hash: env.state_hash().to_hex(),
    };
    (calls, outcome)
}

/// Replay every task; the JSONL lines (`{"type": "call", ...}` per call, then
/// `{"type": "task", ...}` per task) and the outcomes.
pub fn replay_tasks(base: &dyn Environment, tasks: &[TauTask]) -> (String, Vec<TaskOutcome>) {
    let mut jsonl = String::new();
    let mut outcomes = Vec::with_capacity(tasks.len());
    let tagged = |kind: &str, v: Value| {
        let mut obj = serde_json::Map::new();
        obj.insert("type".into(), Value::String(kind.into()));
        if let Value::Object(m) = v {
            obj.extend(m);
        }
        Value::Object(obj).to_string()
    };
    for (i, task) in tasks.iter().enumerate() {
        let (calls, outcome) = replay_task(base, i, task);
        for c in &calls {
            jsonl.push_str(&tagged("call", serde_json::to_value(c).unwrap_or_default()));
            jsonl.push('\n');
        }
        jsonl.push_str(&tagged(
            "task",
            serde_json::to_value(&outcome).unwrap_or_default(),
        ));
        jsonl.push('\n');
        outcomes.push(outcome);
    }
    (jsonl, outcomes)
}

/// Per task: true when its gold actions include a failing call and leave the database as it
/// was. An agent that does nothing then matches the reference state, so such a task cannot
/// tell a working agent from an idle one (a gold action sequence whose calls all fail is the
/// common case: a task file written for another database).
pub fn broken_gold(base: &dyn Environment, tasks: &[TauTask]) -> Vec<bool> {
    let initial = base.state_hash().to_hex();
    tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (_, outcome) = replay_task(base, i, t);
            !outcome.all_succeeded && outcome.state_hash == initial
        })
        .collect()
}
/// Imported tau-bench tasks as task rows, so published benchmarks run in this harness.
/// The reference hash comes from replaying the gold actions on the given database; the
/// scripted user states the task's instruction as its request and authenticates with the
/// task's user id (the only fact a tau-bench task file carries).
pub fn tasks_from_tau_bench(
    env: &dyn crate::domain::Environment,
    domain: &str,
    tasks: &[crate::replay::TauTask],
) -> Vec<crate::artifact::TaskRecord> {
    tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (_, outcome) = crate::replay::replay_task(env, i, t);
            let identity = crate::domain::UserFact {
                kind: "identity".into(),
                text: format!("Your user id is {}.", t.user_id),
                values: vec![t.user_id.clone()],
                ids: Vec::new(),
            };
            let mut requests: Vec<Option<String>> = vec![None; t.actions.len().max(1)];
            requests[0] = Some(t.instruction.clone());
            crate::artifact::TaskRecord {
                task_id: format!("{domain}-{i:04}"),
                domain: domain.to_string(),
                split: crate::split::Split::Eval,
                trace_id: String::new(),
                user_id: t.user_id.clone(),
                intents: vec![t.actions.iter().map(|a| a.name.clone()).collect()],
                actions: t.actions.clone(),
                action_intents: vec![0; t.actions.len()],
                outputs: t.outputs.clone(),
                user_facts: vec![identity],
                requests,
                reference_hash: outcome.state_hash,
                grounder: "imported".into(),
                instruction: Some(t.instruction.clone()),
                refiner: Some("imported".into()),
                emotion_family: t.emotion_family.clone(),
                emotion: t.emotion_leaf.clone(),
                politeness: t.dimension_politeness.clone(),
                urgency: t.dimension_urgency.clone(),
                trust: t.dimension_trust_in_agent.clone(),
                ..Default::default()
            }
        })
        .collect()
}
