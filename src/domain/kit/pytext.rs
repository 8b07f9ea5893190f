//! Hand-written text outputs (the tau-bench family's other serialiser, DOMAINS.md 10.2): a
//! template over a row, rendered the way a Python f-string over the row's dict renders, so
//! a domain keeps its tools' texts as data next to them and reproduces them exactly.
//!
//! `{a.b}` looks a path up in the row; a missing key fails with Python's `KeyError` text
//! (`'b'`), and placeholders are read left to right, so the first missing key wins as in an
//! f-string. `{a.b?text}` uses `text` where the key is missing (`dict.get(key, text)`).
//! Values print as Python's `str()` does: strings as they are, `4.0`, `True`, `None`.
//! Filters after `|`: `money` is `:.2f`; `title` is `.replace('_', ' ').title()`; `join`
//! joins a list with ", "; `or_none` does the same but prints `None` for an empty list.
//! `{{` and `}}` are literal braces.
//!
//! Architecture invariant: pure formatting of JSON values; knows no domain.

use super::pyjson::py_float_repr;
use super::text::{title_case, words};
use serde_json::Value;

/// Python's `str()` of a JSON value as it sits in a dict.
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) if n.is_f64() => py_float_repr(n.as_f64().unwrap_or_default()),
        other => other.to_string(),
    }
}

fn lookup<'a>(row: &'a Value, path: &str) -> Result<&'a Value, String> {
    path.split('.')
        .try_fold(row, |v, key| v.get(key).ok_or_else(|| format!("'{key}'")))
}

fn apply(value: &Value, filter: &str) -> Result<String, String> {
    let list = || -> Vec<String> {
        value
            .as_array()
            .map(|a| a.iter().map(py_str).collect())
            .unwrap_or_default()
    };
    Ok(match filter {
        "" => py_str(value),
        "money" => format!("{:.2}", value.as_f64().ok_or("money needs a number")?),
        "title" => title_case(&words(&py_str(value))),
        "join" => list().join(", "),
        "or_none" if list().is_empty() => "None".into(),
        "or_none" => list().join(", "),
        other => return Err(format!("unknown filter '{other}'")),
    })
}

/// Render `template` against `row`; `Err` is the `KeyError` text of the first missing key.
pub fn render(template: &str, row: &Value) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        let close = tail.find('}').ok_or("unclosed placeholder")?;
        let spec = &tail[1..close];
        let (path, filter) = spec.split_once('|').unwrap_or((spec, ""));
        let (path, fallback) = match path.split_once('?') {
            Some((p, f)) => (p, Some(f)),
            None => (path, None),
        };
        match (lookup(row, path), fallback) {
            (Ok(v), _) => out.push_str(&apply(v, filter)?),
            (Err(_), Some(f)) => out.push_str(f),
            (Err(e), None) => return Err(e),
        }
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_like_a_python_f_string_over_the_dict() {
        let row = json!({"id": "A1", "fee": 200.0, "n": 3, "ok": true, "auth": null,
            "kind": "follow_up", "langs": ["English", "Spanish"], "none": [],
            "name": {"last": "Lee"}});
        assert_eq!(
            render("{id}: ${fee|money} x{n} {ok} {auth} {kind|title}", &row).unwrap(),
            "A1: $200.00 x3 True None Follow Up"
        );
        assert_eq!(
            render("{langs|join}; {none|or_none}", &row).unwrap(),
            "English, Spanish; None"
        );
        assert_eq!(
            render("{name.title?Dr.} {name.last} {{x}}", &row).unwrap(),
            "Dr. Lee {x}"
        );
        assert_eq!(py_str(&json!(4.0)), "4.0");
        // The first missing key, left to right, is the KeyError.
        assert_eq!(
            render("{id} {link} {name.title}", &row).unwrap_err(),
            "'link'"
        );
        assert_eq!(render("{name.title}", &row).unwrap_err(), "'title'");
        assert!(render("{id|shout}", &row).unwrap_err().contains("shout"));
    }
}
