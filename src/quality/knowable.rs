//! Only what the customer can know: an instruction may not name an id that the task itself
//! creates (the customer learns a new booking's number from the agent, so the instruction
//! says "the booking you just made"), an id the domain declares internal (a package or an
//! agent id the customer never sees), or an item as an attribute dump ("the webcam
//! (microphone: mono, resolution: 1080p)") where a customer would name it in words.
//!
//! Which id fields a customer cannot know is the domain's declaration
//! (`Hooks::internal_id_fields`), not a list kept here.
//!
//! Architecture invariant: knows tasks through `TaskRecord`, domains through
//! `Environment`; reuses the coherence module's replay of the reference steps.

use super::coherence::{Step, created_ids};
use serde_json::Value;

/// What kind of unknowable value an instruction names (the `rule` of an `unknowable`
/// rejection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unknowable {
    /// An id created by one of the task's own calls.
    Created,
    /// A value of a field the domain declares internal.
    Internal,
    /// An item named by a `key: value` attribute list.
    AttributeDump,
}

impl Unknowable {
    pub const ALL: [Unknowable; 3] = [
        Unknowable::Created,
        Unknowable::Internal,
        Unknowable::AttributeDump,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Unknowable::Created => "created_id",
            Unknowable::Internal => "internal_id",
            Unknowable::AttributeDump => "attribute_dump",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: Unknowable,
    pub detail: String,
}

/// Ids the task's own writes created, in step order.
pub fn task_created_ids(steps: &[Step], customer_records: &str) -> Vec<String> {
    let mut seen = customer_records.to_string();
    let mut out = Vec::new();
    for s in steps {
        for id in created_ids(s, &seen) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        seen.push_str(&s.args.to_string());
        seen.push_str(&s.output);
    }
    out
}

/// Values of the declared internal fields anywhere in the steps' arguments and outputs.
pub fn internal_values(steps: &[Step], fields: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if fields.is_empty() {
        return out;
    }
    for s in steps {
        field_values(&s.args, fields, &mut out);
        if let Ok(v) = serde_json::from_str::<Value>(&s.output) {
            field_values(&v, fields, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

fn field_values(v: &Value, fields: &[&str], out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match x {
                    Value::String(s) if fields.contains(&k.as_str()) && s.len() >= 2 => {
                        out.push(s.clone())
                    }
                    _ => field_values(x, fields, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|x| field_values(x, fields, out)),
        _ => {}
    }
}

/// Whether `id` occurs in `text` as a word of its own (not inside a longer word).
pub fn names(text: &str, id: &str) -> bool {
    let mut from = 0;
    while let Some(at) = text[from..].find(id).map(|a| a + from) {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        if !part(before) && !part(after) {
            return true;
        }
        from = at + id.len();
    }
    false
}

/// "(microphone: mono, resolution: 1080p)": a parenthesised list of `key: value` pairs.
pub fn attribute_dump(text: &str) -> Option<String> {
    let mut from = 0;
    while let Some(open) = text[from..].find('(').map(|a| a + from) {
        let Some(close) = text[open..].find(')').map(|c| c + open) else {
            break;
        };
        let inner = &text[open + 1..close];
        let pairs = inner
            .split(',')
            .filter(|p| {
                p.split_once(':').is_some_and(|(k, v)| {
                    let k = k.trim();
                    !k.is_empty()
                        && !v.trim().is_empty()
                        && k.chars().all(|c| c.is_alphabetic() || c == ' ' || c == '_')
                        // "(10:30)" is a time, not an attribute.
                        && !v.trim().starts_with(|c: char| c.is_ascii_digit() && k.chars().all(|c| c.is_ascii_digit()))
                })
            })
            .count();
        if pairs >= 1 && inner.contains(": ") {
            return Some(text[open..=close].to_string());
        }
        from = close + 1;
    }
    None
}

/// The first thing `instruction` names that the customer cannot know.
pub fn check(
    instruction: &str,
    steps: &[Step],
    customer_records: &str,
    internal_fields: &[&str],
) -> Option<Finding> {
    if let Some(id) = task_created_ids(steps, customer_records)
        .into_iter()
        .find(|id| names(instruction, id))
    {
        return Some(Finding {
            kind: Unknowable::Created,
            detail: format!(
                "the instruction names '{id}', which the task itself creates (say \"the one you just made\")"
            ),
        });
    }
    if let Some(id) = internal_values(steps, internal_fields)
        .into_iter()
        .find(|id| names(instruction, id))
    {
        return Some(Finding {
            kind: Unknowable::Internal,
            detail: format!("the instruction names '{id}', an internal id a customer never sees"),
        });
    }
    attribute_dump(instruction).map(|dump| Finding {
        kind: Unknowable::AttributeDump,
        detail: format!("the instruction names an item by its attribute list {dump}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Intent, StateHash, ToolKind};
    use serde_json::json;

    fn step(tool: &str, args: Value, output: &str, kind: ToolKind) -> Step {
        Step {
            tool: tool.into(),
            args,
            output: output.into(),
            kind,
            intent: Intent::Book,
            before: StateHash(1),
            after: StateHash(2),
        }
    }

    #[test]
    fn created_internal_and_dumped_values_are_found() {
        let steps = [
            step(
                "book_movie",
                json!({"movie_id": "M1", "agent_id": "AG7"}),
                r#"{"booking_id": "BKG001", "movie_id": "M1"}"#,
                ToolKind::Write,
            ),
            step(
                "get_booking",
                json!({"booking_id": "BKG001"}),
                "{}",
                ToolKind::Read,
            ),
        ];
        let f = check(
            "Then you want to check your booking BKG001.",
            &steps,
            "",
            &[],
        )
        .unwrap();
        assert_eq!(f.kind, Unknowable::Created);
        assert_eq!(
            check(
                "Then you want to check the booking you just made.",
                &steps,
                "",
                &[]
            ),
            None
        );
        // An id the customer already had is not created by the task.
        assert_eq!(
            check(
                "You want booking BKG001.",
                &steps,
                r#"{"bookings": ["BKG001"]}"#,
                &[]
            ),
            None
        );
        let f = check("You want agent AG7.", &steps, "", &["agent_id"]).unwrap();
        assert_eq!(f.kind, Unknowable::Internal);
        let f = check(
            "You want to return the webcam (microphone: mono, resolution: 1080p).",
            &[],
            "",
            &[],
        )
        .unwrap();
        assert_eq!(f.kind, Unknowable::AttributeDump);
        for ok in [
            "You want the 1080p webcam with a mono microphone.",
            "You want the show (the 10:30 one) and Seattle (SEA).",
            "You want BKG0012.",
        ] {
            assert_eq!(check(ok, &steps, "", &[]), None, "{ok}");
        }
    }
}
