//! What the agent must tell: after a read the customer asked for ("which flights does it
//! cover?"), the values of its output the customer wants to hear — the domain's own choice
//! (`required_outputs`), else the output fields the request names, else what the record or
//! list is about (a status, names). Grounding records them as the task's `outputs`; the
//! quality measure checks that every requested read has them.
//!
//! Architecture invariant: knows domains through `Environment`; pure.

use crate::domain::Environment;
use serde_json::Value;

/// The values the agent must tell after a read the customer asked for: the domain's own
/// choice (`required_outputs`), else the output's values whose field the request names
/// ("the balance" -> the `balance` field). Nothing for writes and for reads the customer
/// did not ask for.
pub fn answer(
    env: &dyn Environment,
    tool: &str,
    args: &Value,
    output: &str,
    request: Option<&str>,
) -> Vec<String> {
    let Some(request) = request else {
        return Vec::new();
    };
    if !is_read(env, tool) {
        return Vec::new();
    }
    let own = env.required_outputs(tool, args, output);
    if !own.is_empty() {
        return own;
    }
    named_fields(request, output)
}

/// Output values whose field name the request sentence says ("its status", "the video
/// link" -> `status`, `video_link`), in output order, without repeats; at most eight.
pub fn named_fields(request: &str, output: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(output) else {
        return Vec::new();
    };
    let said = format!(
        " {} ",
        request
            .to_lowercase()
            .replace(|c: char| !c.is_alphanumeric(), " ")
    );
    let mut out = Vec::new();
    fn walk(v: &Value, said: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let name = k.replace('_', " ").to_lowercase();
                    // "balances" names `balance`, "the running time" `running_time`.
                    let named = [" ", "s ", "es "]
                        .iter()
                        .any(|end| said.contains(&format!(" {name}{end}")));
                    let scalars: Vec<String> = match x {
                        Value::Array(items) => items.iter().filter_map(scalar).collect(),
                        other => scalar(other).into_iter().collect(),
                    };
                    if named && !scalars.is_empty() {
                        for val in scalars {
                            if !out.contains(&val) {
                                out.push(val);
                            }
                        }
                    } else {
                        walk(x, said, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, said, out)),
            _ => {}
        }
    }
    walk(&v, &said, &mut out);
    if out.is_empty() {
        // Nothing named: what the call is about — the status of one record, or the names
        // of the records a list returns.
        out = about(&v);
    }
    out.truncate(8);
    out
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() && s.len() <= 80 => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The values a customer asking about `v` wants to hear when their request names no field:
/// a record's status (or its name), a list's names or titles.
fn about(v: &Value) -> Vec<String> {
    const KEYS: &[&str] = &["status", "name", "title", "full_name"];
    let pick =
        |m: &serde_json::Map<String, Value>| KEYS.iter().find_map(|k| m.get(*k).and_then(scalar));
    match v {
        Value::Object(m) => {
            if let Some(x) = pick(m) {
                return vec![x];
            }
            // `{"bookings": [...]}`: the list inside.
            m.values()
                .find(|x| x.is_array())
                .map(about)
                .unwrap_or_default()
        }
        Value::Array(items) => items
            .iter()
            .filter_map(|x| match x {
                Value::Object(m) => pick(m),
                other => scalar(other),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn is_read(env: &dyn Environment, tool: &str) -> bool {
    env.tool_specs()
        .iter()
        .any(|s| s.name == tool && s.kind == crate::domain::ToolKind::Read)
}
