//! Only what the customer can know: an instruction may not name an id that the task itself
//! creates (the customer learns a new booking's number from the agent, so the instruction
//! says "the booking you just made"), an id the domain declares internal (a package or an
//! agent id the customer never sees), or an item as an attribute dump ("the webcam
//! (microphone: mono, resolution: 1080p)") where a customer would name it in words. And a
//! request may not name something the task made by words that point at another thing it
//! made: with three tickets opened, "the ticket you just made" is the third, and a call on
//! the first must be asked for as "the first ticket you made" ([`check_made_references`]).
//!
//! Which id fields a customer cannot know is the domain's declaration
//! (`Hooks::internal_id_fields`), not a list kept here.
//!
//! Architecture invariant: knows tasks through `TaskRecord`, domains through
//! `Environment`; reuses the coherence module's replay of the reference steps.

use super::coherence::{Step, created_ids};
use crate::domain::kit::text::ORDINALS;
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
    /// Something the task made, named by words that point at another thing it made ("the
    /// ticket you just made" for the first of three tickets).
    MisnamedMade,
}

impl Unknowable {
    pub const ALL: [Unknowable; 4] = [
        Unknowable::Created,
        Unknowable::Internal,
        Unknowable::AttributeDump,
        Unknowable::MisnamedMade,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Unknowable::Created => "created_id",
            Unknowable::Internal => "internal_id",
            Unknowable::AttributeDump => "attribute_dump",
            Unknowable::MisnamedMade => "misnamed_made",
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
    made_in_task(steps, customer_records)
        .into_iter()
        .map(|m| m.id)
        .collect()
}

/// An id one of the task's own writes created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Made {
    pub id: String,
    /// The step that created it and that step's tool.
    pub step: usize,
    pub tool: String,
}

/// Ids the task's own writes created, in step order, each with the step that made it.
pub fn made_in_task(steps: &[Step], customer_records: &str) -> Vec<Made> {
    let mut seen = customer_records.to_string();
    let mut out: Vec<Made> = Vec::new();
    for (k, s) in steps.iter().enumerate() {
        for id in created_ids(s, &seen) {
            if !out.iter().any(|m| m.id == id) {
                out.push(Made {
                    id,
                    step: k,
                    tool: s.tool.clone(),
                });
            }
        }
        seen.push_str(&s.args.to_string());
        seen.push_str(&s.output);
    }
    out
}

/// How a customer names something made earlier in the conversation: the latest of its
/// kind is "the ticket you just made"; with several made by the same tool, an earlier one
/// is "the first ticket you made" (its place among the steps that made one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadeRef {
    Latest,
    Nth(usize),
}

impl MadeRef {
    /// How `made` (one of `all`, which the steps before the request made) is named.
    pub fn of(made: &Made, all: &[Made]) -> MadeRef {
        let mut makers: Vec<usize> = all
            .iter()
            .filter(|m| m.tool == made.tool)
            .map(|m| m.step)
            .collect();
        makers.dedup();
        match makers.iter().position(|&k| k == made.step) {
            Some(i) if i + 1 < makers.len() => MadeRef::Nth(i),
            _ => MadeRef::Latest,
        }
    }

    /// The reference a request makes in words, if any: "you just made" is the latest,
    /// "the second ... you made" the second.
    pub fn said_in(request: &str) -> Option<MadeRef> {
        let lower = request.to_lowercase();
        if lower.contains("you just made") {
            return Some(MadeRef::Latest);
        }
        let words: Vec<&str> = lower.split(' ').collect();
        words.iter().enumerate().find_map(|(i, w)| {
            let n = ORDINALS.iter().position(|o| o == w)?;
            let the = i > 0 && words[i - 1].trim_start_matches('(') == "the";
            let made = words[i + 1..]
                .windows(2)
                .take(3)
                .any(|p| p[0] == "you" && p[1].trim_end_matches(['.', ',', ';', ')']) == "made");
            (the && made).then_some(MadeRef::Nth(n))
        })
    }
}

/// A request that names something made in the task by words that point at another one:
/// "the ticket you just made" for a call on the first of three tickets made. Each request
/// is checked against its own step (`requests[k]` for `steps[k]`). Words that tell the two
/// apart pass ("the booking you just made for the Norway Coastal Rail" when the later booking
/// is for Morocco): a name or code of the request that the used one's making step has (its
/// request or its arguments) and the latest one's does not.
pub fn check_made_references(
    requests: &[Option<String>],
    steps: &[Step],
    customer_records: &str,
) -> Option<Finding> {
    let all = made_in_task(steps, customer_records);
    for (k, step) in steps.iter().enumerate() {
        let Some(said) = requests.get(k).and_then(|r| r.as_deref()) else {
            continue;
        };
        let Some(how) = MadeRef::said_in(said) else {
            continue;
        };
        let before: Vec<Made> = all.iter().filter(|m| m.step < k).cloned().collect();
        let args = step.args.to_string();
        let used: Vec<&Made> = before
            .iter()
            .filter(|m| args.contains(&format!("\"{}\"", m.id)))
            .collect();
        let latest_of = |m: &Made| {
            before
                .iter()
                .rev()
                .find(|x| x.tool == m.tool)
                .map(|x| x.step)
        };
        let told_apart = |m: &Made| {
            how == MadeRef::Latest
                && latest_of(m).is_some_and(|l| {
                    let words = |j: usize| {
                        let mut text = requests.get(j).cloned().flatten().unwrap_or_default();
                        text.push(' ');
                        text.push_str(&steps[j].args.to_string());
                        text
                    };
                    let (mine, latest) = (words(m.step), words(l));
                    marked_words(said)
                        .iter()
                        .any(|w| mine.contains(w.as_str()) && !latest.contains(w.as_str()))
                })
        };
        if used.is_empty()
            || used
                .iter()
                .any(|m| MadeRef::of(m, &before) == how || told_apart(m))
        {
            continue;
        }
        let named = match how {
            MadeRef::Latest => "the latest one made".to_string(),
            MadeRef::Nth(n) => format!("the {} one made", ORDINALS[n]),
        };
        return Some(Finding {
            kind: Unknowable::MisnamedMade,
            detail: format!(
                "request {} ('{said}') points at {named}, but {} uses {}",
                k + 1,
                step.tool,
                used.iter()
                    .map(|m| m.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    None
}

/// The words of a request that can tell one made thing from another: names and codes (a
/// capital letter not opening a sentence, or a digit), "Norway", "2025-FALL".
fn marked_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sentence in text.split(['.', '!', '?', ';', ':']) {
        let words = sentence
            .split(|c: char| c.is_whitespace() || ",()'\"".contains(c))
            .filter(|w| !w.is_empty());
        for (i, w) in words.enumerate() {
            let marked = w.chars().any(|c| c.is_ascii_digit())
                || i > 0 && w.chars().next().is_some_and(char::is_uppercase);
            if marked && w.len() >= 2 {
                out.push(w.to_string());
            }
        }
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
            told: Vec::new(),
            target: Vec::new(),
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

    #[test]
    fn a_made_thing_must_be_named_by_words_that_point_at_it() {
        let ticket = |n: &str| {
            step(
                "create_support_ticket",
                json!({"category": "device"}),
                &format!(r#"{{"ticket_id": "{n}"}}"#),
                ToolKind::Write,
            )
        };
        let read = |n: &str| {
            step(
                "get_support_ticket_details",
                json!({"ticket_id": n}),
                "{}",
                ToolKind::Read,
            )
        };
        let steps = [ticket("T241"), ticket("T242"), ticket("T243"), read("T241")];
        let asked = |last: &str| {
            let mut r: Vec<Option<String>> = vec![Some("Open a ticket.".into()); 3];
            r.push(Some(last.to_string()));
            check_made_references(&r, &steps, "")
        };
        // The call reads the first ticket: "just made" points at the third.
        let f = asked("You want the status of the ticket you just made.").unwrap();
        assert_eq!(f.kind, Unknowable::MisnamedMade);
        assert!(f.detail.contains("T241"), "{}", f.detail);
        assert!(asked("You want the status of the second ticket you made.").is_some());
        assert_eq!(
            asked("You want the status of the first ticket you made."),
            None
        );
        // A name the used one's making step has and the latest's does not tells them apart.
        let booked = |term: &str| {
            step(
                "register",
                json!({"term": term}),
                &format!(r#"{{"registration_id": "REG-{term}"}}"#),
                ToolKind::Write,
            )
        };
        let change = step(
            "update_registration",
            json!({"registration_id": "REG-2025-FALL"}),
            "ok",
            ToolKind::Write,
        );
        let terms = [booked("2025-FALL"), booked("2025-SPRING"), change];
        let r = |said: &str| vec![None, None, Some(said.to_string())];
        assert_eq!(
            check_made_references(
                &r("Change the 2025-FALL registration you just made."),
                &terms,
                ""
            ),
            None
        );
        assert!(
            check_made_references(
                &r("Change the registration you just made. Thanks."),
                &terms,
                ""
            )
            .is_some()
        );
        // Words that name nothing made are not this check's business.
        assert_eq!(asked("You want the status of your old ticket."), None);
        // One ticket made: "just made" is it, however many steps later.
        let one = [ticket("T241"), read("T241")];
        let r = vec![
            None,
            Some("Then check the ticket you just made.".to_string()),
        ];
        assert_eq!(check_made_references(&r, &one, ""), None);
        // The ordinals count the steps that made one, not the ids (a step may make two).
        let made = made_in_task(&steps, "");
        assert_eq!(MadeRef::of(&made[0], &made), MadeRef::Nth(0));
        assert_eq!(MadeRef::of(&made[2], &made), MadeRef::Latest);
        assert_eq!(
            MadeRef::said_in("(the third booking you made)"),
            Some(MadeRef::Nth(2))
        );
        assert_eq!(MadeRef::said_in("the first thing you said"), None);
    }
}
