//! What the oracle agent says back: a write's confirmation in the customer's words
//! ([`summarise_write_as`], with what the conversation has shown, [`Heard`]) and the values
//! a customer asked to hear, each named by the field, line or tool it came from ([`tell`]).
//!
//! Architecture invariant: text from tool arguments and results only; no environment, no
//! task.

use super::{ChatMessage, MessageRole};
use serde_json::{Map, Value};

/// The field of a JSON tool result whose value is `output` (the innermost key), if any.
pub(super) fn field_of(result: &str, output: &str) -> Option<String> {
    // A field name ("status", "flight_number"), not an id used as a map key ("ZMI51TK3").
    let field = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    fn walk(
        v: &Value,
        key: Option<&str>,
        output: &str,
        field: &dyn Fn(&str) -> bool,
    ) -> Option<String> {
        match v {
            Value::Object(m) => m
                .iter()
                .find_map(|(k, x)| walk(x, if field(k) { Some(k) } else { key }, output, field)),
            Value::Array(items) => items.iter().find_map(|x| walk(x, key, output, field)),
            Value::String(s) if s == output => key.map(str::to_string),
            Value::Number(n) if n.to_string() == output => key.map(str::to_string),
            Value::Bool(b) if b.to_string() == output => key.map(str::to_string),
            _ => None,
        }
    }
    let Ok(v) = serde_json::from_str::<Value>(result) else {
        return text_label(result, output);
    };
    walk(&v, None, output, &field).map(|k| k.replace('_', " "))
}

/// What a read tool reports, from its name: "get_senior_discount" -> "senior discount",
/// "price_preview" -> "price preview"; `None` for the generic helpers.
pub(super) fn tool_words(tool: &str) -> Option<String> {
    if matches!(tool, "" | "calculate" | "think") {
        return None;
    }
    let rest = ["get_", "list_", "search_", "find_", "check_", "calculate_"]
        .iter()
        .find_map(|p| tool.strip_prefix(p))
        .unwrap_or(tool);
    Some(rest.replace('_', " "))
}

/// What a value of a plain-text result is: the label before it on its own line
/// ("Consultation Fee: $255.00" makes it the "consultation fee"), else the heading above
/// it ("Troubleshooting steps:" over "1) Restart device" makes it the "first
/// troubleshooting step").
fn text_label(result: &str, output: &str) -> Option<String> {
    let lines: Vec<&str> = result.lines().map(str::trim).collect();
    let at = lines.iter().position(|l| l.contains(output))?;
    if let Some((label, value)) = lines[at].split_once(": ")
        && value.contains(output)
    {
        let label = label.trim_start_matches(['-', '•', '*', ' ']);
        // A numbered entry ("Option 2: Once-daily schedule") is one of the "options".
        let label = label
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .trim_end();
        if !label.is_empty() && label.chars().all(|c| c.is_alphabetic() || c == ' ') {
            return Some(label.to_lowercase());
        }
    }
    // A `key=value` field of a line ("unit_cost_usd=0.28"): the key names it (a
    // currency code at its end is the unit, not the name).
    if let Some(key) = lines[at].split([' ', '|']).find_map(|f| {
        let (k, v) = f.split_once('=')?;
        (v == output && !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .then_some(k)
    }) {
        let key = key.strip_suffix("_usd").unwrap_or(key);
        return Some(key.replace('_', " "));
    }
    let heading = lines[..at]
        .iter()
        .rev()
        .find_map(|l| l.strip_suffix(':'))
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_alphabetic() || c == ' '))?
        .to_lowercase();
    // "1) ..." or "1. ...": the item's place in the list.
    let number: Option<usize> = lines[at]
        .split([')', '.'])
        .next()
        .filter(|n| n.len() < lines[at].len())
        .and_then(|n| n.trim().parse().ok());
    let ordinal = number.and_then(|n| crate::domain::kit::text::ORDINALS.get(n.wrapping_sub(1)));
    match ordinal {
        Some(o) => {
            let one = heading
                .strip_suffix('s')
                .filter(|h| !h.ends_with('s'))
                .unwrap_or(&heading);
            Some(format!("{o} {one}"))
        }
        None => Some(heading),
    }
}

/// The values a customer asked to hear, in words: "The status is active, and the balance
/// is 146.5." Values found under one field are said together ("the games are A, B and
/// C"); a value found under no field is said as it is.
pub(super) fn tell(items: &[(String, Option<String>)]) -> String {
    let mut groups: Vec<(Option<&str>, Vec<&str>)> = Vec::new();
    for (value, label) in items {
        match groups.iter_mut().find(|(l, _)| *l == label.as_deref()) {
            Some((_, values)) => values.push(value),
            None => groups.push((label.as_deref(), vec![value.as_str()])),
        }
    }
    let list = |items: &[String]| match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    };
    let parts: Vec<String> = groups
        .iter()
        .map(|(label, values)| {
            let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            // "analysis", "status", "address" are singular.
            let plural =
                |l: &str| l.ends_with('s') && !["ss", "us", "is"].iter().any(|e| l.ends_with(e));
            match (label, values.len()) {
                // A field named by a participle or an adjective ("booked", "available")
                // is no noun to say "the booked is" of: "booked: R5-04".
                (Some(l), _) if ["ed", "able", "ible"].iter().any(|e| l.ends_with(e)) => {
                    format!("{l}: {}", list(&values))
                }
                // A plural field ("payees", "subtitles") with one value: "payees: Elif
                // Iyer" (neither "the payees is" nor "the payees are" one name).
                (Some(l), 1) if plural(l) => format!("{l}: {}", values[0]),
                (Some(l), 1) => format!("the {l} is {}", values[0]),
                // Several values: "the games are ...", "the names are ...".
                (Some(l), _) if plural(l) => format!("the {l} are {}", list(&values)),
                (Some(l), _) if ["ss", "us", "is"].iter().any(|e| l.ends_with(e)) => {
                    format!("the {l} values are {}", list(&values))
                }
                (Some(l), _) => format!("the {l}s are {}", list(&values)),
                (None, _) => list(&values),
            }
        })
        .collect();
    let mut text = match parts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{}; and {last}", rest.join("; ")),
    };
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    // A value that is a sentence (a policy's text) brings its own full stop.
    if text.ends_with(['.', '!', '?']) {
        text
    } else {
        format!("{text}.")
    }
}

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
/// "cancel reservation (reservation: 4WQ150; reason: change of plan)", list entries by
/// what they are ("travelers: Ada Lee and Bo Lee"). The customer's own ids are left out
/// where they say who the customer is (reading them back would sound like another identity
/// question), and so are values nothing was chosen for.
pub fn summarise_write(name: &str, args: &Value, customer: &[String]) -> String {
    summarise_write_as(name, args, customer, &[], None)
}

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
    pub(super) fn field_of(&self, value: &str) -> Option<String> {
        self.results.iter().rev().find_map(|r| {
            serde_json::from_str::<Value>(r)
                .is_ok()
                .then(|| field_of(r, value))
                .flatten()
        })
    }

    /// What the customer says, and a tool result, heard outside a transcript (the
    /// discovery plan asks what a confirmation would have words for).
    pub(super) fn hear(&mut self, said: &str, result: Option<&str>) {
        self.said.push_str(said);
        self.results.extend(result.map(str::to_string));
    }

    /// Whether the customer said `id`.
    pub(super) fn said(&self, id: &str) -> bool {
        self.said.contains(id)
    }

    /// A tool's `YY-MM-DD` date ("25-03-04") as the customer said it ("2025-03-04"), when
    /// they did.
    fn date_as_said(&self, value: &str) -> Option<String> {
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
    fn amount_as_said(&self, amount: f64) -> Option<String> {
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
    fn shows_other_currency(&self) -> bool {
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
    pub(super) fn words_for(&self, id: &str) -> Option<String> {
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
        self.results.iter().rev().find_map(|r| {
            if !r.contains(id) {
                return None;
            }
            let Ok(v) = serde_json::from_str::<Value>(r) else {
                return text_words_for(r, id);
            };
            let m = find(&v, id)?;
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
                (c, n) => n.or(c.map(str::to_string)),
            }
        })
    }
}

/// The words a plain-text result gives the record it lists with `id`: the line's text
/// before "(ID: id)" ("• MD Horatio Marchetti (ID: dr_marchetti_anesthesiology)" gives
/// "MD Horatio Marchetti").
fn text_words_for(result: &str, id: &str) -> Option<String> {
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
            details.push(format!("{}: {value}", key_words_for(k, ids.len())));
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
    }
    if details.is_empty() {
        action
    } else {
        format!("{action} ({})", details.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::{field_of, summarise_write, summarise_write_as, tell};
    use serde_json::json;

    #[test]
    fn a_detail_naming_the_object_in_the_customers_words_takes_its_place() {
        let known = vec![
            (
                "C1".to_string(),
                "your credit account ending in 0838".to_string(),
            ),
            (
                "K1".to_string(),
                "your Visa debit card ending in 1234".to_string(),
            ),
        ];
        let say = |tool: &str, args| summarise_write_as(tool, &args, &[], &known, None);
        assert_eq!(
            say("unfreeze_account", json!({"account_id": "C1"})),
            "unfreeze your credit account ending in 0838"
        );
        assert_eq!(
            say("freeze_card", json!({"card_id": "K1", "reason": "lost"})),
            "freeze your Visa debit card ending in 1234 (reason: lost)"
        );
        // Not the object, or not in the customer's words: kept as a detail.
        assert_eq!(
            say("make_loan_payment", json!({"from_account_id": "C1"})),
            "make loan payment (from account: your credit account ending in 0838)"
        );
        assert_eq!(
            say(
                "add_beneficiary",
                json!({"allowed_from_account_ids": ["C1"]})
            ),
            "add beneficiary (allowed from account: your credit account ending in 0838)"
        );
        assert_eq!(
            say("cancel_reservation", json!({"reservation_id": "ABC123"})),
            "cancel reservation (reservation: ABC123)"
        );
    }

    #[test]
    fn a_confirmation_reads_back_what_the_customer_knows_and_leaves_out_ids_never_said() {
        let args = json!({
            "booking_id": "2W8RZWV-B",
            "show_id": "35YU4IX-S",
            "seats": [
                {"seat_id": "R5-04", "ticket_type": "adult"},
                {"seat_id": "R5-05", "ticket_type": "child"}
            ],
            "payments": [{"payment_id": "O3NSKUK-WALLET", "amount": 36.86}],
            "address1": "12 Elm Street",
            "address2": ""
        });
        let known = vec![(
            "O3NSKUK-WALLET".to_string(),
            "your Google Pay wallet".to_string(),
        )];
        let mut heard = super::Heard::default();
        heard.update(&[
            crate::llm::ChatMessage::user("I'd like to change the seats on booking 2W8RZWV-B."),
            crate::llm::ChatMessage::tool(
                "call_1",
                "list_shows",
                r#"[{"show_id": "35YU4IX-S", "title": "Broken Orchard"}]"#,
            ),
            crate::llm::ChatMessage::tool(
                "call_2",
                "list_courses_by_term",
                r#"[{"course_id": "273JGXY", "course_code": "ENVS-3698", "title": "Soil and Water Science"}]"#,
            ),
        ]);
        let course = json!({"registration_id": "LF5X5ZB", "add_course_ids": ["273JGXY"]});
        assert_eq!(
            super::summarise_write_as(
                "update_registration_courses",
                &course,
                &[],
                &[],
                Some(&heard)
            ),
            "update registration courses (add course: ENVS-3698 Soil and Water Science; \
             registration: LF5X5ZB)"
        );
        let text = super::summarise_write_as("update_booking", &args, &[], &known, Some(&heard));
        assert!(text.contains("booking: 2W8RZWV-B"), "{text}");
        assert!(!text.contains("35YU4IX-S"), "{text}");
        assert!(text.contains("show: Broken Orchard"), "{text}");
        assert!(text.contains("R5-04 (adult) and R5-05 (child)"), "{text}");
        assert!(
            text.contains("payments: your Google Pay wallet ($36.86)"),
            "{text}"
        );
        assert!(text.contains("address line 1: 12 Elm Street"), "{text}");
        assert!(!text.contains("address line 2"), "{text}");
        // Without what the customer said, every id is read back (as before).
        let all = super::summarise_write_as("update_booking", &args, &[], &known, None);
        assert!(all.contains("show: 35YU4IX-S"), "{all}");
        // A record that only refers to an id (a phone listed under its plan) does not name
        // it; the plan's own record does.
        let mut heard = super::Heard::default();
        let mut transcript = vec![crate::llm::ChatMessage::tool(
            "call_1",
            "get_customer_details",
            r#"{"devices": [{"device_id": "1", "name": "Nokia G42", "service": "mobile_golden_years"}]}"#,
        )];
        heard.update(&transcript);
        let remove = json!({"action": "remove", "service_id": "mobile_golden_years"});
        let said = super::summarise_write_as("manage_service", &remove, &[], &[], Some(&heard));
        assert!(!said.contains("Nokia"), "{said}");
        transcript.push(crate::llm::ChatMessage::tool(
            "call_2",
            "get_service_details",
            r#"{"service_id": "mobile_golden_years", "name": "Golden Years Mobile Plan"}"#,
        ));
        heard.update(&transcript);
        let said = super::summarise_write_as("manage_service", &remove, &[], &[], Some(&heard));
        assert!(said.contains("service: Golden Years Mobile Plan"), "{said}");
        // A box-score line names its player, not the club every line holds: the club is
        // named by the game's own club entry, and without one it is read back as its id.
        let line = r#"{"name": "Luka Abernathy", "club_id": "DVL5GUO", "player_id": "UNWCC3R"},
            {"name": "Marcus Adeyemi", "club_id": "DVL5GUO", "player_id": "ZYO5E68"}"#;
        let event = json!({"club_id": "DVL5GUO", "player_id": "UNWCC3R", "points": 2});
        let mut heard = super::Heard::default();
        let mut transcript = vec![crate::llm::ChatMessage::tool(
            "call_1",
            "get_game_box_score",
            format!("[{line}]"),
        )];
        heard.update(&transcript);
        let said =
            super::summarise_write_as("record_scoring_event", &event, &[], &[], Some(&heard));
        assert!(said.contains("club: DVL5GUO"), "{said}");
        transcript.push(crate::llm::ChatMessage::tool(
            "call_2",
            "get_game_details",
            format!(
                r#"{{"clubs": {{"home": {{"name": "Stonebridge Glaciers", "club_id": "DVL5GUO"}}}}, "box_score": [{line}]}}"#
            ),
        ));
        heard.update(&transcript);
        let said =
            super::summarise_write_as("record_scoring_event", &event, &[], &[], Some(&heard));
        assert!(said.contains("club: Stonebridge Glaciers"), "{said}");
        assert!(said.contains("player: Luka Abernathy"), "{said}");
        // The same item twice in an order is still that item.
        let mut heard = super::Heard::default();
        let vacuum = r#"{"name": "Robot Vacuum", "item_id": "9368139105", "product_id": "P1"}"#;
        heard.update(&[crate::llm::ChatMessage::tool(
            "call_1",
            "get_order_details",
            format!(r#"{{"items": [{vacuum}, {vacuum}]}}"#),
        )]);
        let ret = json!({"order_id": "#W6286941", "item_ids": ["9368139105"]});
        let said = super::summarise_write_as("return_items", &ret, &[], &[], Some(&heard));
        assert!(said.contains("Robot Vacuum"), "{said}");
    }
    #[test]
    fn amounts_and_dates_are_read_back_as_the_customer_said_them() {
        let known = vec![("FWOK9UY".to_string(), "your Amex card".to_string())];
        let book = |amount: f64| {
            json!({"departure_date": "25-03-04", "package_id": "3IRC1V0",
                "payment_methods": [{"payment_id": "FWOK9UY", "amount": amount}]})
        };
        let say = |heard: &super::Heard, amount: f64| {
            super::summarise_write_as("book_package", &book(amount), &[], &known, Some(heard))
        };
        let mut heard = super::Heard::default();
        heard.update(&[crate::llm::ChatMessage::user(
            "Book it for 2025-03-04, paying 4,495.00 EUR with my Amex.",
        )]);
        let said = say(&heard, 4495.0);
        assert!(said.contains("your Amex card (4,495.00 EUR)"), "{said}");
        assert!(said.contains("departure date: 2025-03-04"), "{said}");
        // An amount the customer did not say: no dollar sign once a result showed another
        // currency; a date they did not say stays as the tool writes it.
        let said = say(&heard, 4490.0);
        assert!(said.contains("your Amex card ($4490.00)"), "{said}");
        let mut other = heard.clone();
        other.update(&[
            crate::llm::ChatMessage::user("Book it for 2025-03-04, paying 4,495.00 EUR."),
            crate::llm::ChatMessage::tool(
                "call_1",
                "get_package_details",
                r#"{"currency": "JPY"}"#,
            ),
        ]);
        let said = say(&other, 4490.0);
        assert!(said.contains("your Amex card (4490.00)"), "{said}");
        let mut dollars = super::Heard::default();
        dollars.update(&[crate::llm::ChatMessage::user(
            "I'll pay $14,495.00 and then $495.00.",
        )]);
        let said = say(&dollars, 495.0);
        assert!(said.contains("($495.00)"), "{said}");
        assert!(said.contains("departure date: 25-03-04"), "{said}");
        // A told value that is a sentence keeps one full stop.
        let policy = "Free cancellation up to 60 days before departure.";
        assert_eq!(
            super::tell(&[(policy.into(), Some("cancellation policy".into()))]),
            format!("The cancellation policy is {policy}")
        );
    }

    #[test]
    fn values_no_field_names_are_named_by_their_line_or_tool() {
        let listing = "Available Providers:\n\n• MD Horatio Marchetti (ID: dr_marchetti_anesthesiology)\n  Fee: $1";
        assert_eq!(
            super::text_words_for(listing, "dr_marchetti_anesthesiology").as_deref(),
            Some("MD Horatio Marchetti")
        );
        assert_eq!(super::text_words_for(listing, "dr_x"), None);
        let details = "Appointment Details (ID: APPT_7)\nPatient: Quinn (ID: quinn_1)";
        assert_eq!(super::text_words_for(details, "APPT_7"), None);
        assert_eq!(
            super::text_words_for(details, "quinn_1").as_deref(),
            Some("Quinn")
        );
        assert_eq!(
            super::text_label("Provider:\n  Consultation Fee: $255.00\n", "$255.00").as_deref(),
            Some("consultation fee")
        );
        let options = "Optimized regimen options:\nOption 1: Lowest-cost suppliers\n  - Zolpidem | \
            dosage=5mg | unit_cost_usd=0.28\n  Synergy notes:\n    - Same doses\nOption 2: Once-daily";
        let told: Vec<(String, Option<String>)> = ["Lowest-cost suppliers", "Once-daily", "0.28"]
            .iter()
            .map(|v| (v.to_string(), super::text_label(options, v)))
            .collect();
        assert_eq!(
            super::tell(&told),
            "The options are Lowest-cost suppliers and Once-daily; and the unit cost is 0.28."
        );
        assert_eq!(
            super::tool_words("get_senior_discount").as_deref(),
            Some("senior discount")
        );
        assert_eq!(super::tool_words("calculate"), None);
    }
    #[test]
    fn answers_name_the_field_of_each_value() {
        let result = r#"{"account": {"status": "active", "balance": {"current": 146.5}}}"#;
        assert_eq!(field_of(result, "active").as_deref(), Some("status"));
        assert_eq!(field_of(result, "146.5").as_deref(), Some("current"));
        assert_eq!(field_of(result, "closed"), None);
        assert_eq!(field_of("not json", "active"), None);
        // A plain-text list under a heading: the value is its place in the list.
        let steps = "\nTroubleshooting steps: \n1) Restart device \n2) Check signal coverage\n";
        assert_eq!(
            field_of(steps, "Restart device").as_deref(),
            Some("first troubleshooting step")
        );
        assert_eq!(
            field_of(steps, "Check signal coverage").as_deref(),
            Some("second troubleshooting step")
        );
        assert_eq!(field_of("Status: open", "open").as_deref(), Some("status"));
        assert_eq!(
            tell(&[
                ("Google".into(), Some("manufacturer".into())),
                ("Restart device".into(), field_of(steps, "Restart device")),
            ]),
            "The manufacturer is Google; and the first troubleshooting step is Restart device."
        );
        // An id used as a map key is not a field: the value is told under the map's field.
        let payees = r#"{"payees": {"ZMI51TK3": "Elif Iyer"}, "other": {"Q1": "x"}}"#;
        assert_eq!(field_of(payees, "Elif Iyer").as_deref(), Some("payees"));
        let told = tell(&[
            ("active".into(), Some("status".into())),
            ("146.5".into(), Some("current balance".into())),
            ("X1".into(), None),
        ]);
        assert_eq!(
            told,
            "The status is active; the current balance is 146.5; and X1."
        );
        let games = tell(&[
            ("A1".into(), Some("games".into())),
            ("B2".into(), Some("games".into())),
            ("C3".into(), Some("games".into())),
            ("Thornbury".into(), Some("city".into())),
        ]);
        assert_eq!(
            games,
            "The games are A1, B2 and C3; and the city is Thornbury."
        );
        assert_eq!(
            tell(&[
                ("Aurora".into(), Some("name".into())),
                ("Bijou".into(), Some("name".into())),
                ("R5-04".into(), Some("booked".into())),
                ("open".into(), Some("status".into())),
                ("final".into(), Some("status".into())),
            ]),
            "The names are Aurora and Bijou; booked: R5-04; and the status values are open and final."
        );
        assert_eq!(
            tell(&[("2D".into(), Some("format".into()))]),
            "The format is 2D."
        );
        assert_eq!(
            tell(&[("Elif Iyer".into(), Some("payees".into()))]),
            "Payees: Elif Iyer."
        );
        assert_eq!(
            tell(&[(
                "none found".into(),
                Some("drug interaction analysis".into())
            )]),
            "The drug interaction analysis is none found."
        );
        assert_eq!(
            tell(&[("open".into(), Some("status".into()))]),
            "The status is open."
        );
    }
    #[test]
    fn a_confirmation_reads_back_choices_not_blanks_or_the_customer() {
        let args = json!({
            "add_ons": [],
            "departure_date": "24-12-02",
            "insurance": null,
            "rooming": {"room_type": "single"},
            "travelers": [{"first_name": "Q"}],
            "traveler_id": "F8XHQCG",
        });
        assert_eq!(
            summarise_write("book_package", &args, &["F8XHQCG".to_string()]),
            "book package (add ons: none; departure date: 24-12-02; rooming: room type single; \
             travelers: first name Q)"
        );
        // List entries by what they are; entries of ids and amounts only are counted.
        let args = json!({
            "add_ons": [{"description": "Private airport pickup", "price": 75.0, "type": "transfer"}],
            "travelers": [
                {"first_name": "Ada", "last_name": "Lee", "dob": "87-04-15"},
                {"first_name": "Bo", "last_name": "Lee", "dob": "90-01-02"},
            ],
            "payment_methods": [{"payment_id": "card_1", "amount": 10}, {"payment_id": "gift_2", "amount": 5}],
        });
        assert_eq!(
            summarise_write("book_package", &args, &[]),
            "book package (add ons: Private airport pickup (transfer); payment methods: 2 entries; \
             travelers: Ada Lee and Bo Lee)"
        );
        assert_eq!(summarise_write("cancel_all", &json!({}), &[]), "cancel all");
        let note = json!({"note": "Patient asked for a copy.", "record_id": "R1"});
        assert_eq!(
            summarise_write("update_note", &note, &[]),
            "update note (note: Patient asked for a copy; record: R1)"
        );
        // Ids are read as written, named by their key in the singular for one.
        assert_eq!(
            summarise_write(
                "manage_service",
                &json!({"action": "add", "service_id": "tv_plus", "devices_ids": ["3"],
                    "drop_course_ids": []}),
                &[]
            ),
            "manage service (action: add; device: 3; drop courses: none; service: tv_plus)"
        );
        // A booking the customer identified with is still named when it is what changes.
        assert_eq!(
            summarise_write(
                "cancel_booking",
                &json!({"booking_id": "OC3VOQC-B"}),
                &["OC3VOQC-B".to_string()]
            ),
            "cancel booking (booking: OC3VOQC-B)"
        );
        // An id the customer knows by other words is read back in those words.
        let card = super::customer_words("You have a Visa credit card ending in 7846.");
        assert_eq!(
            card.as_deref(),
            Some("your Visa credit card ending in 7846")
        );
        assert_eq!(super::customer_words("Your user id is x."), None);
        assert_eq!(
            super::customer_words("You hold a checking account in EUR ending in 0912.").as_deref(),
            Some("your checking account in EUR ending in 0912")
        );
        assert_eq!(
            super::customer_words("You pay with your VISA card ending in 3303.").as_deref(),
            Some("your VISA card ending in 3303")
        );
        let known = [("credit_card_8509532".to_string(), card.unwrap())];
        let args = json!({"payment_id": "credit_card_8509532", "reservation_id": "YTNH41"});
        assert_eq!(
            super::summarise_write_as("update_reservation_flights", &args, &[], &known, None),
            "update reservation flights (payment: your Visa credit card ending in 7846; \
             reservation: YTNH41)"
        );
    }
}
