//! Small phrasing helpers shared by every domain's request sentences and user facts.
//!
//! Architecture invariant: pure string functions; variation is driven by the call's content
//! (FNV-1a), never by an RNG, so grounding stays reproducible.

use super::pyjson::py_str_scalar;
use serde_json::Value;

/// A stable choice among `n` phrasings driven by `key` (FNV-1a: same on every platform).
pub fn variant(key: &str, n: usize) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % n.max(1) as u64) as usize
}

/// Whether `value` reads as a record id rather than a word: one token of letters with
/// digits (`credit_card_7815826`, `BKG-04590`, `#W1234567`) or with a capital after its
/// first letter (`YvzlLDj`, `MYMHLLX`), or a number of eight digits or more (an item id,
/// `8251151632`). Words, dates, times, amounts, zip codes and short numbers are not.
pub fn id_like(value: &str) -> bool {
    let v = value.trim_start_matches('#');
    let letters = v.chars().filter(char::is_ascii_alphabetic).count();
    let digits = v.chars().filter(char::is_ascii_digit).count();
    let inner_capital = v.chars().skip(1).any(|c| c.is_ascii_uppercase());
    let token = (4..=64).contains(&v.len()) && !v.contains(char::is_whitespace) && !v.contains('@');
    token && (letters > 0 && (digits > 0 || inner_capital) || digits >= 8 && digits == v.len())
}

/// The string argument `key`, or "" when absent or not a string.
pub fn arg_str<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The string items of a list argument.
pub fn arg_list<'a>(args: &'a Value, key: &str) -> Vec<&'a str> {
    args.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The items of a list argument (e.g. the payment objects of `payment_methods`); none when
/// it is absent or not a list.
pub fn arg_items<'a>(args: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    args.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The non-empty ones of `ids`, each once, in first-seen order (a hook's internal ids).
pub fn distinct_ids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids.into_iter().filter(|s| !s.is_empty()) {
        if !out.iter().any(|x| x == id) {
            out.push(id.to_string());
        }
    }
    out
}

/// What a read tells at `pointers` of its JSON output (JSON pointers, `""` the whole
/// output), in pointer order with repeats kept (see [`values_at`]); an output that is not
/// JSON tells nothing. The rule of `tools.toml`'s `tells` and of `required_outputs` hooks.
pub fn output_values(output: &str, pointers: &[&str]) -> Vec<String> {
    serde_json::from_str::<Value>(output)
        .map(|v| values_at(&v, pointers))
        .unwrap_or_default()
}

/// The values at `pointers` of `v`, in order: a non-empty string as it is, a number as
/// Python's `str()` prints it (`7`, `1300.0`: how the tools print it), each of those
/// among a list's items; nothing for anything else (absent, null, booleans, objects).
pub fn values_at(v: &Value, pointers: &[&str]) -> Vec<String> {
    fn told(v: &Value) -> Option<String> {
        match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(_) => py_str_scalar(v),
            _ => None,
        }
    }
    let mut out = Vec::new();
    for found in pointers.iter().filter_map(|p| v.pointer(p)) {
        match found {
            Value::Array(items) => out.extend(items.iter().filter_map(told)),
            other => out.extend(told(other)),
        }
    }
    out
}

/// A search request's filters as words: for each (argument, clause) the arguments give
/// as a non-empty string, a space and the clause with `{}` replaced by the value
/// (`[("campus", "on the {} campus")]` -> " on the North campus").
pub fn filter_clauses(args: &Value, clauses: &[(&str, &str)]) -> String {
    let given = |key: &str| {
        args.get(key)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    clauses
        .iter()
        .filter_map(|(key, text)| Some(format!(" {}", text.replace("{}", given(key)?))))
        .collect()
}

/// "a", "a and b", "a, b and c".
pub fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// How a customer says they pay, given each payment as (method as they name it, amount):
/// "with your Visa card ending in 1234", or split, "by putting $100.00 on your Visa card
/// ending in 1234 and $50.00 on your PayPal account" (`amount` says an amount).
pub fn payments_phrase<A: Copy>(payments: &[(String, A)], amount: impl Fn(A) -> String) -> String {
    match payments {
        [(one, _)] => format!("with {one}"),
        many => {
            let parts: Vec<String> = many
                .iter()
                .map(|(m, a)| format!("{} on {m}", amount(*a)))
                .collect();
            format!("by putting {}", join_and(&parts))
        }
    }
}

/// "a", "a and b", "a, b, and c" (with the serial comma).
pub fn join_and_serial(parts: &[String]) -> String {
    match parts {
        [init @ .., last] if init.len() >= 2 => format!("{}, and {last}", init.join(", ")),
        _ => join_and(parts),
    }
}

/// Ordinals a customer uses for one of several things made in the conversation ("the
/// second ticket you made"); `quality::knowable` reads them back.
pub const ORDINALS: [&str; 6] = ["first", "second", "third", "fourth", "fifth", "sixth"];

/// "two", "three", ... for small counts; digits otherwise.
pub fn count_word(n: usize) -> String {
    match n {
        1 => "one".into(),
        2 => "two".into(),
        3 => "three".into(),
        4 => "four".into(),
        5 => "five".into(),
        n => n.to_string(),
    }
}

/// A dollar amount as a customer says it ("$120.00").
pub fn dollars(x: f64) -> String {
    format!("${x:.2}")
}

/// An amount in a departure's currency: dollars as "$3,948.00", other currencies with
/// their code after the number ("18,500.00 SEK"), as a customer paying in them says it.
pub fn money_in(x: f64, currency: &str) -> String {
    let amount = money(x);
    match currency {
        "" | "USD" => amount,
        code => format!("{} {code}", amount.replacen('$', "", 1)),
    }
}

/// A dollar amount with thousands separators ("$3,948.00"), as a customer says a large one.
pub fn money(x: f64) -> String {
    let cents = (x.abs() * 100.0).round() as i64;
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!(
        "{}${grouped}.{:02}",
        if x < 0.0 { "-" } else { "" },
        cents % 100
    )
}

/// "Visa", "American Express", ... from a lower-case brand key.
pub fn brand_name(brand: &str) -> String {
    match brand.to_lowercase().as_str() {
        "visa" => "Visa".into(),
        "mastercard" => "Mastercard".into(),
        "amex" => "American Express".into(),
        "discover" => "Discover".into(),
        other => capitalize(other),
    }
}

/// First letter upper-case.
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// `snake_case` words as a customer says them ("follow_up" -> "follow up").
pub fn words(s: &str) -> String {
    s.replace('_', " ")
}

/// Python's `str.title()` on ASCII words ("follow_up" -> "Follow_Up").
pub fn title_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_alpha = false;
    for c in s.chars() {
        if c.is_alphabetic() {
            if prev_alpha {
                out.extend(c.to_lowercase());
            } else {
                out.extend(c.to_uppercase());
            }
            prev_alpha = true;
        } else {
            out.push(c);
            prev_alpha = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_clauses_name_the_given_filters_in_order() {
        let args = serde_json::json!({"day": "Monday", "campus": "", "city": "Oslo"});
        let clauses = [
            ("campus", "on the {} campus"),
            ("city", "in {}"),
            ("day", "on {}"),
        ];
        assert_eq!(filter_clauses(&args, &clauses), " in Oslo on Monday");
    }

    #[test]
    fn distinct_ids_and_output_values() {
        assert_eq!(distinct_ids(["b", "", "a", "b"]), ["b", "a"]);
        let out = r#"{"status": "open", "n": 3, "x": 2.0, "home": {"score": "7"},
            "tags": ["a", "", 4, true, {"b": 1}], "note": "", "ok": true, "none": null}"#;
        assert_eq!(
            output_values(
                out,
                &["/home/score", "/n", "/gone", "/status", "/x", "/home/score"]
            ),
            ["7", "3", "open", "2.0", "7"],
            "pointer order, numbers as Python prints them, repeats kept"
        );
        assert_eq!(
            output_values(out, &["/tags", "/note", "/ok", "/none", "/home"]),
            ["a", "4"]
        );
        assert_eq!(output_values("\"12\"", &[""]), ["12"]);
        assert!(output_values("not json", &[""]).is_empty());
    }

    #[test]
    fn phrases() {
        assert_eq!(
            join_and(&["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
        assert_eq!(join_and(&["a".into()]), "a");
        assert_eq!(
            join_and_serial(&["a".into(), "b".into(), "c".into()]),
            "a, b, and c"
        );
        assert_eq!(join_and_serial(&["a".into(), "b".into()]), "a and b");
        assert_eq!(join_and_serial(&[]), "");
        assert_eq!(dollars(12.5), "$12.50");
        assert_eq!(brand_name("amex"), "American Express");
        assert_eq!(title_case("follow_up visit"), "Follow_Up Visit");
        assert_eq!(variant("x", 1), 0);
        assert!(variant("anything", 3) < 3);
    }

    #[test]
    fn amounts_are_said_in_the_departures_currency() {
        assert_eq!(money_in(3948.0, "USD"), "$3,948.00");
        assert_eq!(money_in(3948.0, ""), "$3,948.00");
        assert_eq!(money_in(18500.0, "SEK"), "18,500.00 SEK");
        assert_eq!(money_in(-12.5, "JPY"), "-12.50 JPY");
    }
}
