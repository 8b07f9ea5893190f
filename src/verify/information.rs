//! Information sufficiency: whether the customer can supply every value the reference
//! calls need (stated, or shown by an earlier call), and the rule that the instruction
//! prints no internal id.

use crate::artifact::TaskRecord;
use crate::domain::{Environment, UserFact};
use serde_json::Value;

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
    for crate::task::Action {
        name: tool,
        kwargs: args,
    } in &task.actions
    {
        for id in env.internal_ids(tool, args) {
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
    task.actions
        .iter()
        .map(|a| state.invoke(&a.name, &a.kwargs).text)
        .collect()
}

/// `outputs` are the reference calls' outputs in order (what the agent would see), e.g.
/// from [`replay_checked`](super::replay_checked) or [`reference_outputs`].
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
    let actions = &task.actions;
    let mut knowledge = env.customer_records(&task.user_id).join("\n");
    let mut soft: Option<String> = None;
    for (
        j,
        crate::task::Action {
            name: tool,
            kwargs: args,
        },
    ) in actions.iter().enumerate()
    {
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
