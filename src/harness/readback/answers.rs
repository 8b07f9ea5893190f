//! The values a customer asked to hear, in words ([`tell`]), each named by the field, line
//! or tool it came from ([`field_of`], [`tool_words`]).

use serde_json::Value;

/// The field of a JSON tool result whose value is `output` (the innermost key), if any.
pub(in crate::harness) fn field_of(result: &str, output: &str) -> Option<String> {
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
    walk(&v, None, output, &field).map(|k| label_words(&k))
}

/// A field's key as words, initialisms capitalised: "mpaa_rating" as "MPAA rating".
fn label_words(key: &str) -> String {
    const INITIALISMS: [&str; 6] = ["mpaa", "kyc", "iban", "url", "sku", "pin"];
    key.split('_')
        .map(|w| {
            if INITIALISMS.contains(&w) {
                w.to_uppercase()
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a read tool reports, from its name: "get_senior_discount" -> "senior discount",
/// "price_preview" -> "price preview"; `None` for the generic helpers.
pub(in crate::harness) fn tool_words(tool: &str) -> Option<String> {
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
pub(super) fn text_label(result: &str, output: &str) -> Option<String> {
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

/// A label whose last word is a unit ("runtime minutes", "price usd", "usage hours"):
/// the label without it, and the unit as it follows a number.
fn with_unit(label: &str) -> Option<(&str, &'static str)> {
    let (head, unit) = label.rsplit_once(' ')?;
    let unit = match unit {
        "minutes" => "minutes",
        "hours" => "hours",
        "days" => "days",
        "usd" => "USD",
        "eur" => "EUR",
        _ => return None,
    };
    Some((head, unit))
}

/// The values a customer asked to hear, in words: "The status is active, and the balance
/// is 146.5." Values found under one field are said together ("the games are A, B and
/// C"); a value found under no field is said as it is.
pub(in crate::harness) fn tell(items: &[(String, Option<String>)]) -> String {
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
            // A field named with its unit says the unit after the value: "the runtime is
            // 102 minutes", not "runtime minutes: 102".
            let (label, values): (Option<&str>, Vec<String>) =
                match label.and_then(|l| with_unit(l)) {
                    Some((head, unit)) => (
                        Some(head),
                        values.iter().map(|v| format!("{v} {unit}")).collect(),
                    ),
                    None => (*label, values.iter().map(|v| v.to_string()).collect()),
                };
            let label = &label;
            // "analysis", "status", "address" are singular; "suppliers for zolpidem" is
            // as plural as its noun.
            let plural = |l: &str| {
                let noun = [" for ", " of ", " in "]
                    .iter()
                    .find_map(|p| l.split_once(p).map(|(noun, _)| noun))
                    .unwrap_or(l);
                noun.ends_with('s') && !["ss", "us", "is"].iter().any(|e| noun.ends_with(e))
            };
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
                // "statuses", "addresses", "analyses".
                (Some(l), _) if l.ends_with("is") => {
                    format!("the {}es are {}", &l[..l.len() - 2], list(&values))
                }
                (Some(l), _) if ["ss", "us"].iter().any(|e| l.ends_with(e)) => {
                    format!("the {l}es are {}", list(&values))
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
