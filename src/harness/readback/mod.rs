//! What the oracle agent says back: a write's confirmation in the customer's words
//! ([`summarise_write_as`], with what the conversation has shown, [`Heard`]) and the values
//! a customer asked to hear, each named by the field, line or tool it came from ([`tell`]).
//!
//! The confirmation is here; what the conversation has shown is `heard.rs`, the values a
//! customer asked to hear `answers.rs`.
//!
//! Architecture invariant: text from tool arguments and results only; no environment, no
//! task.

mod answers;
mod heard;

pub(super) use answers::{field_of, tell, tool_words};
pub use heard::Heard;
use serde_json::Value;

/// An entry of a list argument as a person names it: a traveler or passenger by name, an
/// add-on or item by its description or name (with its type), a small record of plain
/// values by its fields ("room type single, occupancy 1"); `None` for what has no such
/// words (payment splits the customer knows no words for: ids and amounts). An entry
/// holding an id the customer knows by other words (`known_as`) is said in those words, with its amount ("your Visa credit card ending in 7846 ($36.86)"),
/// and a small record keyed by one id says the id with its other values ("R5-04 (adult)").
fn describe_entry_as(
    entry: &Value,
    known_as: &[(String, String)],
    heard: Option<&Heard>,
) -> Option<String> {
    let m = entry.as_object()?;
    let text = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    if let Some(words) = m.values().find_map(|v| {
        let id = v.as_str()?;
        known_as.iter().find(|(k, _)| k == id).map(|(_, w)| w)
    }) {
        return Some(match m.get("amount").and_then(Value::as_f64) {
            Some(a) => format!("{words} ({})", money_words(a, heard)),
            None => words.clone(),
        });
    }
    let ids: Vec<&str> = m
        .iter()
        .filter(|(k, _)| k.ends_with("_id"))
        .filter_map(|(_, v)| v.as_str())
        .collect();
    if ids.len() == 1 && m.len() <= 3 && m.values().all(Value::is_string) {
        let rest: Vec<String> = m
            .iter()
            .filter(|(k, _)| !k.ends_with("_id"))
            .filter_map(|(_, v)| v.as_str().map(|s| s.replace('_', " ")))
            .collect();
        return Some(if rest.is_empty() {
            ids[0].to_string()
        } else {
            format!("{} ({})", ids[0], rest.join(", "))
        });
    }
    if let (Some(first), Some(last)) = (text("first_name"), text("last_name")) {
        return Some(format!("{first} {last}"));
    }
    for key in ["description", "name", "title"] {
        if let Some(v) = text(key) {
            return Some(match text("type") {
                Some(kind) => format!("{v} ({})", kind.replace('_', " ")),
                None => v.to_string(),
            });
        }
    }
    let plain = m.len() <= 3
        && m.iter().all(|(k, v)| {
            !k.ends_with("_id") && (v.is_string() || v.is_number() || v.is_boolean())
        });
    plain.then(|| {
        m.iter()
            .map(|(k, v)| {
                let v = v
                    .as_str()
                    .map_or_else(|| v.to_string(), |s| s.replace('_', " "));
                format!("{} {v}", k.replace('_', " "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// An amount read back: as the customer said it; else in dollars, unless the conversation
/// showed another currency, where the bare figure is said rather than a wrong symbol.
fn money_words(amount: f64, heard: Option<&Heard>) -> String {
    match heard {
        Some(h) => h.amount_as_said(amount).unwrap_or_else(|| {
            if h.shows_other_currency() {
                format!("{amount:.2}")
            } else {
                format!("${amount:.2}")
            }
        }),
        None => format!("${amount:.2}"),
    }
}

/// Whether an argument names who the customer is (their account, their contact), not what
/// the action is about: a booking id the customer identified with is still read back when
/// it is the booking being cancelled.
fn names_the_customer(key: &str) -> bool {
    [
        "user",
        "client",
        "customer",
        "patient",
        "student",
        "traveler",
        "member",
        "guest",
        "email",
        "phone",
        "account_holder",
    ]
    .iter()
    .any(|w| key.contains(w))
}

/// A fact "You have a Visa credit card ending in 7846." (or "You hold a checking account
/// ...", "You pay with your VISA card ending in 3303.") as the agent says it back: "your Visa credit card ending in 7846"; `None` for a
/// fact of another shape.
pub(super) fn customer_words(fact: &str) -> Option<String> {
    if let Some(own) = fact
        .strip_prefix("You pay with ")
        .and_then(|r| r.strip_prefix("your "))
    {
        let own = own.trim_end_matches('.');
        return (!own.is_empty()).then(|| format!("your {own}"));
    }
    let rest = fact
        .strip_prefix("You have ")
        .or_else(|| fact.strip_prefix("You hold "))?;
    let rest = rest
        .strip_prefix("an ")
        .or_else(|| rest.strip_prefix("a "))
        .unwrap_or(rest);
    let rest = rest.trim_end_matches('.');
    (!rest.is_empty()).then(|| format!("your {rest}"))
}

/// What a write will do, from its tool name and arguments, in the agent's words:
/// "cancel reservation 4WQ150 (reason: change of plan)", list entries by
/// what they are ("travelers: Ada Lee and Bo Lee"). The customer's own ids are left out
/// where they say who the customer is (reading them back would sound like another identity
/// question), and so are values nothing was chosen for.
pub fn summarise_write(name: &str, args: &Value, customer: &[String]) -> String {
    summarise_write_as(name, args, customer, &[], None)
}

/// How an argument's key reads aloud as the label of its value: an id's key names the
/// thing ("order_id" as "order", "new_item_ids" as "new items"), "address1" reads "address
/// line 1", underscores as spaces.
fn key_words(k: &str) -> String {
    key_words_for(k, 2)
}

/// [`key_words`] for a key holding `n` values: a list of ids reads in the singular when it
/// holds one ("add course", "device").
fn key_words_for(k: &str, n: usize) -> String {
    if let Some(base) = k.strip_suffix("_ids") {
        let words = base.replace('_', " ");
        let one = words.strip_suffix('s').unwrap_or(&words);
        return if n == 1 {
            one.to_string()
        } else {
            format!("{one}s")
        };
    }
    if let Some(base) = k.strip_suffix("_id") {
        return base.replace('_', " ");
    }
    let base = k.trim_end_matches(|c: char| c.is_ascii_digit());
    let words = base.replace('_', " ");
    if base.len() < k.len() && !base.is_empty() {
        format!("{words} line {}", &k[base.len()..])
    } else {
        words
    }
}

/// The id values of an `_id` / `_ids` argument, for checking whether the customer said them.
fn id_values(k: &str, v: &Value) -> Vec<String> {
    if !(k.ends_with("_id") || k.ends_with("_ids")) {
        return Vec::new();
    }
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// [`summarise_write`], where an id the customer knows by other words (`known_as`: id and
/// words, "your Visa credit card ending in 7846") is read back in those words
/// ("payment: your Visa credit card ending in 7846", not "payment id credit card 8509532"),
/// and, given what the conversation has shown (`heard`), ids the customer never said (a
/// course, a show the customer named by its title) are read back by the words a tool result
/// gives them ("add course: ENVS-3698 Soil and Water Science"), or as ids when no result
/// has words for every one of them.
pub fn summarise_write_as(
    name: &str,
    args: &Value,
    customer: &[String],
    known_as: &[(String, String)],
    heard: Option<&Heard>,
) -> String {
    let mut action = name.replace('_', " ");
    let mut details = Vec::new();
    if let Value::Object(m) = args {
        for (k, v) in m {
            if v.as_str().is_some_and(|s| customer.iter().any(|c| c == s)) && names_the_customer(k)
            {
                continue;
            }
            if let Some((_, words)) = v
                .as_str()
                .and_then(|s| known_as.iter().find(|(id, _)| id == s))
            {
                details.push(format!("{}: {words}", key_words(k)));
                continue;
            }
            let ids = id_values(k, v);
            // Ids the customer knows by words: a list of them ("allowed from accounts"),
            // or ids the conversation showed but nobody said.
            let known = |id: &String| {
                known_as
                    .iter()
                    .find(|(k, _)| k == id)
                    .map(|(_, w)| w.clone())
            };
            let listed = (v.is_array() && !ids.is_empty())
                .then(|| ids.iter().map(known).collect::<Option<Vec<String>>>())
                .flatten();
            let in_words = listed.or_else(|| {
                let heard =
                    heard.filter(|h| !ids.is_empty() && ids.iter().all(|id| !h.said(id)))?;
                ids.iter().map(|id| heard.words_for(id)).collect()
            });
            if let Some(words) = in_words {
                details.push(format!(
                    "{}: {}",
                    key_words_for(k, words.len()),
                    crate::domain::kit::text::join_and(&words)
                ));
                continue;
            }
            let value = match v {
                // Nothing chosen is nothing to read back ("insurance null", "add ons ").
                Value::Null => continue,
                Value::String(s) if s.is_empty() => continue,
                Value::Object(_) => match describe_entry_as(v, known_as, heard) {
                    Some(words) => words,
                    None => continue,
                },
                Value::Array(items) if items.is_empty() => "none".to_string(),
                // An id is read as it is written ("tv_plus", "APPT_7"); a choice as words.
                _ if !ids.is_empty() => crate::domain::kit::text::join_and(&ids),
                Value::String(s) => match heard.and_then(|h| h.date_as_said(s)) {
                    Some(said) => said,
                    // A note's own full stop would end the read-back mid-list (".;").
                    None => s.replace('_', " ").trim_end_matches('.').to_string(),
                },
                Value::Array(items) if items.iter().all(Value::is_string) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                Value::Array(items)
                    if items
                        .iter()
                        .all(|i| describe_entry_as(i, known_as, heard).is_some()) =>
                {
                    let named: Vec<String> = items
                        .iter()
                        .filter_map(|i| describe_entry_as(i, known_as, heard))
                        .collect();
                    crate::domain::kit::text::join_and(&named)
                }
                Value::Array(items) if items.len() == 1 => "one entry".to_string(),
                Value::Array(items) => format!("{} entries", items.len()),
                other => other.to_string(),
            };
            // A dollar amount named with its unit ("price_usd") reads as money: "price: $0.22".
            let (label, value) = match (k.strip_suffix("_usd"), v.as_f64()) {
                (Some(base), Some(x)) => (key_words(base), format!("${x:.2}")),
                _ => (key_words_for(k, ids.len()), value),
            };
            details.push(format!("{label}: {value}"));
        }
    }
    // "unfreeze account (account: your credit account ending in 0838)" reads as "unfreeze
    // your credit account ending in 0838": a detail in the customer's own words that names
    // the action's object takes its place.
    if let Some((verb, noun)) = action.rsplit_once(' ')
        && let Some(i) = details.iter().position(|d| {
            d.strip_prefix(noun)
                .and_then(|rest| rest.strip_prefix(": your "))
                .is_some()
        })
    {
        let words = details.remove(i).split_off(noun.len() + 2);
        action = format!("{verb} {words}");
    } else if let Some((_, noun)) = action.rsplit_once(' ')
        && let Some(i) = details.iter().position(|d| {
            d.strip_prefix(noun)
                .and_then(|rest| rest.strip_prefix(": "))
                .is_some_and(crate::domain::kit::text::id_like)
        })
    {
        // "cancel booking (booking: BKG-86834)" reads as "cancel booking BKG-86834": the
        // object's one code follows its noun.
        let id = details.remove(i).split_off(noun.len() + 2);
        action = format!("{action} {id}");
    }
    if details.is_empty() {
        action
    } else {
        format!("{action} ({})", details.join("; "))
    }
}

#[cfg(test)]
mod tests;
