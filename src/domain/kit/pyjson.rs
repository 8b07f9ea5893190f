//! Tool outputs as the reference environments print them.
//!
//! Two families (DOMAINS.md section 10.2):
//! - tau-bench style: Python's `json.dumps(obj)` with default settings — `", "` and `": "`
//!   separators, non-ASCII escaped as `\uXXXX`, floats in Python's `repr` (`4.0`, `1e+16`),
//!   keys in the object's own order. [`dumps`] writes any `Serialize` value that way; a
//!   typed row serialises its fields in declaration order, which is the order the
//!   reference's dicts hold them in when our field order follows theirs.
//! - tau2 style (`Environment.to_json_str`): strings pass through; a pydantic model is
//!   `model_dump()`ed (numbers stay numbers); inside *plain* dicts, lists and tuples every
//!   int, float and bool becomes its Python `str()` (`"6"`, `"1.5"`, `"True"`); a top-level
//!   scalar becomes a JSON string (`"\"6\""`). [`Py`] is that value model and
//!   [`Py::to_json_str`] the serialiser.
//!
//! Architecture invariant: pure formatting; knows no domain.

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::Formatter;
use std::collections::BTreeMap;
use std::io;

/// Python's `repr(float)`: shortest round-trip digits, fixed notation for decimal exponents
/// -4..=15, otherwise `1e+16` / `1.5e-05`; integral values keep `.0`.
pub fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{x:e}"); // e.g. "1.5e-5", "-1e16"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let fixed = format!("{x}");
        if fixed.contains('.') {
            fixed
        } else {
            format!("{fixed}.0")
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

/// Python's `str()` of a JSON scalar, as tau2's serialiser applies it inside plain dicts
/// (`None` for strings, null and containers).
pub fn py_str_scalar(v: &Value) -> Option<String> {
    match v {
        Value::Bool(true) => Some("True".into()),
        Value::Bool(false) => Some("False".into()),
        Value::Number(n) => Some(match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => py_float_repr(f),
            _ => n.to_string(),
        }),
        _ => None,
    }
}

/// `serde_json` formatter producing `json.dumps` text (ensure_ascii, default separators).
#[derive(Default)]
pub struct PyFormatter;

impl Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(py_float_repr(value).as_bytes())
    }
    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // ensure_ascii: everything outside printable ASCII as \uXXXX (UTF-16 units).
        if fragment.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            return w.write_all(fragment.as_bytes());
        }
        let mut buf = [0u16; 2];
        for c in fragment.chars() {
            if (' '..'\u{7f}').contains(&c) {
                write!(w, "{c}")?;
            } else {
                for unit in c.encode_utf16(&mut buf) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// `json.dumps(value)` of any serialisable value.
pub fn dumps<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    // Our own types and `Value`s always serialise (string keys only).
    if value.serialize(&mut ser).is_err() {
        return "null".into();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// A `{name: id}` listing as `json.dumps` prints it, sorted by name; a repeated name keeps
/// every id (a list, in the given order) where the references' dict keeps only the last.
pub fn name_listing<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, id) in entries {
        by_name.entry(name).or_default().push(id);
    }
    let listing: BTreeMap<&str, Value> = by_name
        .into_iter()
        .map(|(name, ids)| {
            let value = match ids.as_slice() {
                [one] => Value::from(*one),
                many => Value::from(many.to_vec()),
            };
            (name, value)
        })
        .collect();
    dumps(&listing)
}

/// What a read tool prints for a row it looked up: the row as a model (tau2's
/// `to_json_str` of its `model_dump()`), or the lookup's error.
pub fn model_json<T: Serialize + ?Sized>(row: Result<&T, String>) -> Result<String, String> {
    row.map(|r| Py::model(r).to_json_str())
}

/// A value as tau2's `to_json_str` sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Py {
    /// A pydantic model: dumped as-is (numbers stay numbers). Holds its JSON text.
    Model(String),
    /// A plain Python value: scalars inside become strings when serialised.
    Plain(Value),
    List(Vec<Py>),
    Dict(Vec<(String, Py)>),
}

impl Py {
    /// A model from a typed row (fields in declaration order).
    pub fn model<T: Serialize + ?Sized>(row: &T) -> Py {
        Py::Model(dumps(row))
    }

    pub fn models<'a, T: Serialize + 'a>(rows: impl IntoIterator<Item = &'a T>) -> Py {
        Py::List(rows.into_iter().map(Py::model).collect())
    }

    pub fn dict<K: Into<String>>(entries: impl IntoIterator<Item = (K, Py)>) -> Py {
        Py::Dict(entries.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    pub fn str(s: impl Into<String>) -> Py {
        Py::Plain(Value::String(s.into()))
    }

    /// tau2's `Environment.to_json_str`.
    pub fn to_json_str(&self) -> String {
        if let Py::Plain(Value::String(s)) = self {
            return s.clone();
        }
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Py::Model(json) => out.push_str(json),
            Py::Plain(v) => write_plain(v, out),
            Py::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Py::Dict(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&dumps(k));
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_plain(v: &Value, out: &mut String) {
    match v {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_plain(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&dumps(k));
                out.push_str(": ");
                write_plain(item, out);
            }
            out.push('}');
        }
        other => match py_str_scalar(other) {
            Some(s) => out.push_str(&dumps(&s)),
            None => out.push_str(&dumps(other)),
        },
    }
}

impl From<Value> for Py {
    fn from(v: Value) -> Py {
        Py::Plain(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Expected strings are CPython 3.11's `json.dumps` / `repr` outputs.
    #[test]
    fn dumps_like_python() {
        assert_eq!(py_float_repr(4.0), "4.0");
        assert_eq!(py_float_repr(0.1), "0.1");
        assert_eq!(py_float_repr(1e16), "1e+16");
        assert_eq!(py_float_repr(1.5e-5), "1.5e-05");
        assert_eq!(py_float_repr(0.0001), "0.0001");
        assert_eq!(py_float_repr(123456789012345.6), "123456789012345.6");
        assert_eq!(py_float_repr(-2.5), "-2.5");
        assert_eq!(
            dumps(&json!({"a": [1, 2.5, true, null], "b": "caf\u{e9} \u{1F600}"})),
            r#"{"a": [1, 2.5, true, null], "b": "caf\u00e9 \ud83d\ude00"}"#
        );
        assert_eq!(dumps("tab\there\u{7f}"), r#""tab\there\u007f""#);
    }

    #[test]
    fn to_json_str_like_tau2() {
        #[derive(Serialize)]
        struct Row {
            id: &'static str,
            score: i64,
            ok: bool,
        }
        let row = Row {
            id: "G1",
            score: 6,
            ok: true,
        };
        // A model keeps its numbers.
        assert_eq!(
            Py::model(&row).to_json_str(),
            r#"{"id": "G1", "score": 6, "ok": true}"#
        );
        // A plain dict stringifies them, recursively, but not inside a model.
        let out = Py::dict([
            ("wins", Py::Plain(json!(3))),
            ("ratio", Py::Plain(json!(0.5))),
            ("flags", Py::Plain(json!([true, false, null]))),
            ("game", Py::model(&row)),
        ]);
        assert_eq!(
            out.to_json_str(),
            r#"{"wins": "3", "ratio": "0.5", "flags": ["True", "False", null], "game": {"id": "G1", "score": 6, "ok": true}}"#
        );
        // A top-level int is a JSON string; a top-level str passes through.
        assert_eq!(Py::Plain(json!(6)).to_json_str(), r#""6""#);
        assert_eq!(
            Py::str("Transfer successful").to_json_str(),
            "Transfer successful"
        );
    }
}
