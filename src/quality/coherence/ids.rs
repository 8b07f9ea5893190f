//! The ids a step is about: the entities its arguments name ([`entities`]; not the
//! customer's own or how they pay), the ids a write created ([`created_ids`]), and words
//! shaped like record ids ([`id_words`]).

use super::Step;
use crate::domain::ToolKind;
use serde_json::Value;

/// Argument keys that name the entity a call is about: `*_id`, `*_number`, `*_code`,
/// `*_ref` (Restaurant's `ticket_ref`, `plate_refs`) and bare `id`, minus the ones that
/// name how the customer pays (`payment_id`, `instrument_ref`, ...).
fn entity_key(key: &str) -> bool {
    let named = key == "id"
        || key.ends_with("_id")
        || key.ends_with("_number")
        || key.ends_with("_code")
        || key.ends_with("_ids")
        || key.ends_with("_ref")
        || key.ends_with("_refs");
    named
        && !key.contains("payment")
        && !key.contains("method")
        && !key.contains("source")
        && !key.contains("instrument")
}

/// Argument keys that name who the customer is (`user_id`, `client_id`, `patient_id`, ...):
/// under them the customer's own ids say whose records a call touches, not which entity.
fn names_the_customer(key: &str) -> bool {
    [
        "user", "customer", "client", "student", "patient", "traveler", "member", "holder",
        "guest", "email", "phone",
    ]
    .iter()
    .any(|w| key.contains(w))
}

/// The entity values of a call's arguments (sorted). The customer's own ids count only
/// where they name something else than the customer: a booking id a moviegoer proves who
/// they are with is still the booking a change and a cancel both touch.
pub fn entities(args: &Value, customer: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    collect(args, None, customer, &mut out);
    out.sort();
    out.dedup();
    out
}

fn collect(v: &Value, key: Option<&str>, customer: &[&str], out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                collect(x, Some(k), customer, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                collect(x, key, customer, out);
            }
        }
        Value::String(s) if !s.is_empty() => {
            let Some(k) = key.filter(|k| entity_key(k)) else {
                return;
            };
            if !(customer.contains(&s.as_str()) && names_the_customer(k)) {
                out.push(s.clone());
            }
        }
        _ => {}
    }
}

/// Ids a write created: id-valued strings of its output (JSON under an entity key, or an
/// id-shaped word of a text output) that neither its arguments nor anything seen before
/// carried.
pub fn created_ids(step: &Step, seen: &str) -> Vec<String> {
    if step.kind != ToolKind::Write {
        return Vec::new();
    }
    let mut found = Vec::new();
    match serde_json::from_str::<Value>(&step.output) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => collect(&v, None, &[], &mut found),
        _ => found.extend(id_words(&step.output)),
    }
    let args = step.args.to_string();
    found.retain(|id| id.len() >= 3 && !args.contains(id.as_str()) && !seen.contains(id.as_str()));
    found.sort();
    found.dedup();
    found
}

/// Words that look like record ids: letters and digits mixed (BKG001, TICKET241, R-1042),
/// at least one digit and one letter.
pub fn id_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches(|c| c == '-' || c == '_'))
        .filter(|w| {
            w.len() >= 4
                && w.chars().any(|c| c.is_ascii_digit())
                && w.chars().any(|c| c.is_ascii_uppercase())
                && !w.chars().any(|c| c.is_ascii_lowercase())
        })
        .map(str::to_string)
        .collect()
}
