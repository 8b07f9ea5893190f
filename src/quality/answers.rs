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
        // A one-word answer in plain text ("scheduled"): that word is what to tell.
        let text = output.trim();
        let word = !text.is_empty()
            && text.len() <= 40
            && text
                .chars()
                .all(|c| c.is_alphanumeric() || " _-.$".contains(c))
            && !text.contains("  ");
        return if word {
            vec![text.to_string()]
        } else {
            Vec::new()
        };
    };
    // A bracketed aside describes what is asked about ("the Iceland package (the 7-day
    // trip)"), it asks for nothing: its words name no field.
    let said = format!(
        " {} ",
        without_asides(request)
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

/// `text` without its bracketed asides.
fn without_asides(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
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
        Value::String(_) | Value::Number(_) => scalar(v).into_iter().collect(),
        Value::Object(m) => {
            if let Some(x) = pick(m) {
                return vec![x];
            }
            // An id -> name map (`{"01IVZ8R3": "Lerato Bakker"}`) or a name -> id one: the
            // names, which are the side a customer would say.
            if !m.is_empty() && m.values().all(Value::is_string) {
                let wordy = |t: &str| t.contains(' ') || t.chars().any(char::is_lowercase);
                let values: Vec<String> = m.values().filter_map(scalar).collect();
                let keys_wordy = m.keys().filter(|k| wordy(k)).count();
                let values_wordy = values.iter().filter(|v| wordy(v)).count();
                return if keys_wordy > values_wordy {
                    m.keys().cloned().collect()
                } else {
                    values
                };
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

/// Whether `tool` is one of the environment's read tools.
pub fn is_read(env: &dyn Environment, tool: &str) -> bool {
    env.tool_specs()
        .iter()
        .any(|s| s.name == tool && s.kind == crate::domain::ToolKind::Read)
}

#[cfg(test)]
mod tests {
    use super::named_fields;

    #[test]
    fn a_named_field_is_told_and_an_unnamed_record_tells_its_status() {
        let out = r#"{"status": "confirmed", "balance": 12.5, "seats": ["1A", "1B"]}"#;
        assert_eq!(named_fields("You want to hear the balance.", out), ["12.5"]);
        assert_eq!(named_fields("You want both seats.", out), ["1A", "1B"]);
        assert_eq!(named_fields("Is it still on?", out), ["confirmed"]);
    }

    #[test]
    fn words_in_a_bracketed_aside_name_no_field() {
        let output = r#"{"name": "Iceland Whales", "itinerary": [{"day": 1}, {"day": 2}]}"#;
        let request = "You want to hear what the Iceland Whales package (the 7-day trip) includes.";
        assert_eq!(named_fields(request, output), vec!["Iceland Whales"]);
        assert_eq!(
            named_fields("You want to know each day of the trip.", output),
            vec!["1", "2"]
        );
    }

    #[test]
    fn a_one_word_text_answer_is_told_but_a_sentence_is_not() {
        assert_eq!(
            named_fields("Is the show going ahead?", "scheduled"),
            ["scheduled"]
        );
        assert_eq!(
            named_fields("Any interactions?", "\"none found\""),
            ["none found"]
        );
        assert!(
            named_fields(
                "Any interactions?",
                "No documented high-risk interactions found for the supplied medications."
            )
            .is_empty()
        );
    }

    #[test]
    fn a_map_between_ids_and_names_tells_the_names() {
        let by_id = r#"{"01IVZ8R3": "Lerato Bakker", "7QX2KD01": "Ana Ruiz"}"#;
        assert_eq!(
            named_fields("Which payees are saved?", by_id),
            ["Lerato Bakker", "Ana Ruiz"]
        );
        let by_name = r#"{"Harbor Hawks": "CLB001", "Lakeside Lions": "CLB002"}"#;
        assert_eq!(
            named_fields("Which clubs are there?", by_name),
            ["Harbor Hawks", "Lakeside Lions"]
        );
        assert!(named_fields("Which payees are saved?", "{}").is_empty());
        assert!(named_fields("Which payees are saved?", "[]").is_empty());
    }
}
