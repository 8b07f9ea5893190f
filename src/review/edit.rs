//! What an edit does to a task: the edited task replayed (its new reference state), the
//! edit verified with the verification gates, and the edit's kind the way the paper counts
//! its review: gold edits (arguments or outputs changed), id swaps (only id-like argument
//! values replaced, the instruction following them), rewrites (the instruction rewritten)
//! and emotion edits.

use super::Edit;
use crate::artifact::TaskRecord;
use crate::domain::Environment;
use serde_json::Value;
use std::collections::BTreeMap;

/// `task` with `edit`'s fields in place of its own, not replayed (its reference hash is the
/// original's): what a page shows as the current values. The error says which field is wrong.
pub fn edited_fields(task: &TaskRecord, edit: &Edit) -> Result<TaskRecord, String> {
    let mut out = task.clone();
    if let Some(text) = &edit.instruction {
        if text.trim().is_empty() {
            return Err("the instruction is empty".into());
        }
        out.instruction = Some(text.trim().to_string());
    }
    if let Some(text) = &edit.emotion_instruction {
        if text.trim().is_empty() {
            return Err("the emotion instruction is empty".into());
        }
        out.emotion_instruction = Some(text.trim().to_string());
    }
    if let Some(outputs) = &edit.outputs {
        out.outputs = outputs
            .iter()
            .map(|o| o.trim().to_string())
            .filter(|o| !o.is_empty())
            .collect();
    }
    if let Some(args) = &edit.arguments {
        let actions = &mut out.actions;
        if args.len() != actions.len() {
            return Err(format!(
                "arguments: {} entries for {} reference actions (an edit changes arguments, not the actions)",
                args.len(),
                actions.len()
            ));
        }
        for (i, (a, v)) in actions.iter_mut().zip(args).enumerate() {
            if !(v.is_object() || v.is_null()) {
                return Err(format!(
                    "arguments[{i}] ({}): must be a JSON object",
                    a.name
                ));
            }
            a.kwargs = v.clone();
        }
    }
    Ok(out)
}

/// `task` with `edit` applied and its reference hash recomputed by replay; the error says
/// which field or call is wrong. The result is not yet verified: see [`verify_edit`].
pub fn apply_edit(
    env: &dyn Environment,
    task: &TaskRecord,
    edit: &Edit,
) -> Result<TaskRecord, String> {
    let mut out = edited_fields(task, edit)?;
    // The new reference state: the edited calls on a fresh fork, each succeeding.
    let mut state = env.fork();
    for (i, a) in out.actions.iter().enumerate() {
        let r = state.invoke(&a.name, &a.kwargs);
        if r.is_error {
            return Err(format!("action {i} ({}) fails: {}", a.name, r.text));
        }
    }
    out.reference_hash = state.state_hash().to_hex();
    Ok(out)
}

/// Apply `edit` and verify the result with `gates` (replay, policy, ids, quality,
/// information; an inconclusive verdict passes: the reviewer is the judge).
pub fn verify_edit(
    env: &dyn Environment,
    task: &TaskRecord,
    edit: &Edit,
    gates: &crate::verify::Gates,
) -> Result<TaskRecord, String> {
    let edited = apply_edit(env, task, edit)?;
    match crate::verify::verify_task_with(env, &edited, gates) {
        Ok(()) => Ok(edited),
        Err(r) if r.kind == crate::verify::RejectKind::Inconclusive => Ok(edited),
        Err(r) => Err(format!("{}: {}", r.kind.as_str(), r.reason)),
    }
}

/// What kind of change an edit is, the paper's way (an edit may be several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EditKinds {
    pub gold_edit: bool,
    pub id_swap: bool,
    pub rewrite: bool,
    pub emotion_edit: bool,
}

/// An id-like value: one token with a digit in it ("#W2378156", "BKG001", "sara_doe_496").
fn id_like(s: &str) -> bool {
    !s.is_empty() && !s.contains(char::is_whitespace) && s.chars().any(|c| c.is_ascii_digit())
}

/// Every scalar of a JSON value by its path (`.key`, `[i]`; the root is ""): what an
/// argument diff compares.
pub fn json_leaves(v: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    leaves_into(v, String::new(), &mut out);
    out
}

fn leaves_into(v: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                leaves_into(x, format!("{path}.{k}"), out);
            }
        }
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                leaves_into(x, format!("{path}[{i}]"), out);
            }
        }
        other => {
            out.insert(path, other.clone());
        }
    }
}

/// Classify an edit of `before` into `after` (both whole tasks).
pub fn edit_kinds(before: &TaskRecord, after: &TaskRecord) -> EditKinds {
    let leaves = |t: &TaskRecord| {
        let mut out = BTreeMap::new();
        for (i, a) in t.actions.iter().enumerate() {
            leaves_into(&a.kwargs, format!("{i}"), &mut out);
        }
        out
    };
    let (old, new) = (leaves(before), leaves(after));
    let mut swaps: Vec<(String, String)> = Vec::new();
    let mut other_change = old.len() != new.len() || before.outputs != after.outputs;
    for (k, v) in &old {
        match (v, new.get(k)) {
            (a, Some(b)) if a == b => {}
            (Value::String(a), Some(Value::String(b))) if id_like(a) && id_like(b) => {
                swaps.push((a.clone(), b.clone()))
            }
            _ => other_change = true,
        }
    }
    let old_text = before.instruction.clone().unwrap_or_default();
    let new_text = after.instruction.clone().unwrap_or_default();
    // The instruction as the swaps alone would leave it.
    let mut swapped = old_text.clone();
    for (a, b) in &swaps {
        swapped = swapped.replace(a.as_str(), b);
    }
    EditKinds {
        gold_edit: other_change,
        id_swap: !swaps.is_empty() && !other_change,
        rewrite: new_text != swapped,
        emotion_edit: before.emotion_instruction != after.emotion_instruction,
    }
}
