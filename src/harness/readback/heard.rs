//! What a conversation has shown so far ([`Heard`]): what the customer said and the tool
//! results, and the words they give an id, a date or an amount when it is read back.

use super::answers::field_of;
use crate::harness::{ChatMessage, MessageRole};
use serde_json::{Map, Value};

/// What a conversation has shown so far: the customer's words and the tool results, kept
/// up to date message by message (each message is read once).
#[derive(Clone, Debug, Default)]
pub struct Heard {
    said: String,
    results: Vec<String>,
    upto: usize,
}

impl Heard {
    /// Read the messages added since the last call.
    pub fn update(&mut self, transcript: &[ChatMessage]) {
        if transcript.len() < self.upto {
            *self = Heard::default();
        }
        for m in &transcript[self.upto..] {
            let Some(text) = m.content.as_deref() else {
                continue;
            };
            match m.role {
                MessageRole::User => {
                    self.said.push_str(text);
                    self.said.push('\n');
                }
                MessageRole::Tool => self.results.push(text.to_string()),
                _ => {}
            }
        }
        self.upto = transcript.len();
    }

    /// The field of the latest tool result that holds `value` whole under a field name.
    pub(in crate::harness) fn field_of(&self, value: &str) -> Option<String> {
        self.results.iter().rev().find_map(|r| {
            serde_json::from_str::<Value>(r)
                .is_ok()
                .then(|| field_of(r, value))
                .flatten()
        })
    }

    /// What the customer says, and a tool result, heard outside a transcript (the
    /// discovery plan asks what a confirmation would have words for).
    pub(in crate::harness) fn hear(&mut self, said: &str, result: Option<&str>) {
        self.said.push_str(said);
        self.results.extend(result.map(str::to_string));
    }

    /// Whether the customer said `id`.
    pub(in crate::harness) fn said(&self, id: &str) -> bool {
        self.said.contains(id)
    }

    /// A tool's `YY-MM-DD` date ("25-03-04") as the customer said it ("2025-03-04"), when
    /// they did.
    pub(super) fn date_as_said(&self, value: &str) -> Option<String> {
        let b = value.as_bytes();
        let short = b.len() == 8
            && b[2] == b'-'
            && b[5] == b'-'
            && value.chars().filter(char::is_ascii_digit).count() == 6;
        let long = format!("20{value}");
        (short && self.said.contains(&long)).then_some(long)
    }

    /// An amount as the customer said it, with its currency ("4,495.00 EUR", "$36.86"),
    /// when they said it; `None` otherwise.
    pub(super) fn amount_as_said(&self, amount: f64) -> Option<String> {
        let plain = format!("{amount:.2}");
        let grouped = crate::domain::kit::text::money(amount).replacen('$', "", 1);
        for form in [grouped.as_str(), plain.as_str()] {
            for (at, _) in self.said.match_indices(form) {
                let before = &self.said[..at];
                let after = &self.said[at + form.len()..];
                // The whole number, not a part of a longer one.
                let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == ',');
                if digit(before.chars().last()) || digit(after.chars().next()) {
                    continue;
                }
                if let Some(symbol) = before.chars().last().filter(|c| "$€£¥".contains(*c)) {
                    return Some(format!("{symbol}{form}"));
                }
                let code: String = after.chars().skip(1).take(4).collect();
                let code = code.trim_end_matches(|c: char| !c.is_ascii_uppercase());
                if after.starts_with(' ')
                    && code.len() == 3
                    && code.chars().all(|c| c.is_ascii_uppercase())
                {
                    return Some(format!("{form} {code}"));
                }
            }
        }
        None
    }

    /// Whether a tool result showed a currency other than US dollars.
    pub(super) fn shows_other_currency(&self) -> bool {
        self.results.iter().any(|r| {
            r.match_indices("\"currency\": \"")
                .any(|(at, m)| !r[at + m.len()..].starts_with("USD"))
        })
    }

    /// The words the latest tool result that shows `id` gives the thing it names: its code
    /// and its title or name ("ENVS-3698 Soil and Water Science"); `None` when no result
    /// has such words for it. The thing is a record holding the id in an id field, not one
    /// that merely mentions it: a phone listed under a plan (`{"device_id": "1", "name":
    /// "Nokia G42", "service": "mobile_golden_years"}`) does not name the plan.
    pub(in crate::harness) fn words_for(&self, id: &str) -> Option<String> {
        fn own_id(m: &Map<String, Value>, id: &str) -> bool {
            let id_key = |k: &str| {
                k == "id"
                    || k == "code"
                    || ["_id", "_ref", "_code", "_number"]
                        .iter()
                        .any(|s| k.ends_with(s))
            };
            m.iter().any(|(k, v)| id_key(k) && v.as_str() == Some(id))
        }
        fn find<'v>(v: &'v Value, id: &str) -> Option<&'v Map<String, Value>> {
            match v {
                Value::Object(m) if own_id(m, id) => Some(m),
                Value::Object(m) => m.values().find_map(|x| find(x, id)),
                Value::Array(items) => {
                    // An id that rows of one list with different names hold (the club on
                    // every line of a box score) is a reference they share, not any one
                    // row's own id; the same item twice in an order is still that item.
                    let mut names = items
                        .iter()
                        .filter_map(Value::as_object)
                        .filter(|m| own_id(m, id))
                        .map(|m| m.get("name").or_else(|| m.get("title")));
                    let first = names.next();
                    if names.any(|n| Some(n) != first) {
                        items
                            .iter()
                            .filter_map(Value::as_object)
                            .find_map(|m| m.values().find_map(|x| find(x, id)))
                    } else {
                        items.iter().find_map(|x| find(x, id))
                    }
                }
                _ => None,
            }
        }
        // A record that names the thing (or a text line listing it) wins over a later one
        // that only says when it starts: a booking holds its theater's id beside its own
        // start, and that start is not the theater's name.
        let words = |timed: bool| {
            self.results.iter().rev().find_map(|r| {
                if !r.contains(id) {
                    return None;
                }
                match serde_json::from_str::<Value>(r) {
                    Ok(v) => self.record_words(find(&v, id)?, id, timed),
                    Err(_) if !timed => text_words_for(r, id),
                    Err(_) => None,
                }
            })
        };
        words(false).or_else(|| words(true))
    }

    /// The words one record holding `id` gives: its code and its name, else (`timed`) when
    /// it starts.
    fn record_words(&self, m: &Map<String, Value>, id: &str, timed: bool) -> Option<String> {
        let text = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let code = m
            .iter()
            .find(|(k, _)| k.ends_with("code"))
            .and_then(|(_, v)| v.as_str());
        // A person's name is two fields ("name": {"first_name": .., "last_name": ..}).
        let person = m.get("name").and_then(|n| {
            let part = |k: &str| n.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            Some(format!("{} {}", part("first_name")?, part("last_name")?))
        });
        let name = ["title", "name", "description"]
            .iter()
            .find_map(|k| text(k).map(str::to_string))
            .or(person);
        match (code, name) {
            (Some(c), Some(n)) => Some(format!("{c} {n}")),
            (None, None) if timed => self.when_words(m, id),
            (None, None) => None,
            (c, n) => n.or(c.map(str::to_string)),
        }
    }

    /// The words of a record with no name but a start time (a film's show): the title of
    /// what it is of, when a result gave one, and when it starts ("Velvet Echoes on
    /// 2024-07-12 at 18:30"), as the customer named it.
    fn when_words(&self, m: &Map<String, Value>, id: &str) -> Option<String> {
        let start = m
            .iter()
            .find(|(k, _)| k.starts_with("start_time"))
            .and_then(|(_, v)| v.as_str())?;
        let when = crate::domain::kit::tau2::long_stamp(start)?;
        // What the record is of (a show's film): another id of it a result names.
        let of = m
            .iter()
            .filter(|(k, _)| k.ends_with("_id"))
            .filter_map(|(_, v)| v.as_str())
            .filter(|other| *other != id)
            .find_map(|other| self.name_of(other));
        Some(match of {
            Some(name) => format!("{name} on {when}"),
            None => when,
        })
    }

    /// The title the latest result showing `id` gives its record (a film's; a theater's
    /// or a screen's name is where the show is, not what it is of).
    fn name_of(&self, id: &str) -> Option<String> {
        self.results.iter().rev().find_map(|r| {
            let v = serde_json::from_str::<Value>(r).ok()?;
            let m = v.as_object()?;
            let own = m
                .iter()
                .any(|(k, x)| k.ends_with("_id") && x.as_str() == Some(id));
            let title = m.get("title").and_then(Value::as_str).filter(|_| own)?;
            Some(title.to_string())
        })
    }
}

/// The words a plain-text result gives the record it lists with `id`: the line's text
/// before "(ID: id)" ("• MD Horatio Marchetti (ID: dr_marchetti_anesthesiology)" gives
/// "MD Horatio Marchetti").
pub(super) fn text_words_for(result: &str, id: &str) -> Option<String> {
    let tag = format!("(ID: {id})");
    let (at, line) = result.lines().enumerate().find(|(_, l)| l.contains(&tag))?;
    let item = line.trim_start().starts_with(['-', '•', '*']);
    // The first line of a record's own printout is its heading ("Appointment Details (ID:
    // APPT_7)"), not its name; a listed entry's words are.
    if at == 0 && !item {
        return None;
    }
    let words = line[..line.find(&tag)?]
        .trim()
        .trim_start_matches(['-', '•', '*', ' '])
        .trim_end_matches([':', ' ']);
    // "Provider: Dr. Yamamoto - Psychiatry": the label before the name is not part of it.
    let words = match words.split_once(": ") {
        Some((label, name)) if label.chars().all(|c| c.is_alphabetic() || c == ' ') => name,
        _ => words,
    };
    (!words.is_empty()).then(|| words.to_string())
}
