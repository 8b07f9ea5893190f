//! Python value semantics that reference tools written in plain Python rely on, beyond
//! `json.dumps` ([`super::pyjson`]):
//! - [`PyDict`]: a string-keyed map that keeps insertion order, as a Python dict does
//!   (`d[k] = v` appends a new key, `d.pop(k)` removes one), read from JSON in document
//!   order and printed back in that order.
//! - [`Canonical`]: a row wrapper whose serialisation (hence its state-hash digest and its
//!   export) has every map sorted, so two rows equal as Python dicts hash equal even when a
//!   [`PyDict`] inside them was built in another order. Tool outputs print the inner row.
//! - [`py_float`] (`float(str)`), [`py_fixed2`] (`f"{x:.2f}"`), [`py_max`] (`max(a, b)` on
//!   floats) and [`py_repr`] (`repr()` of JSON-like values, e.g. a list of dicts pasted into
//!   an error message).
//! - [`read_ordered_table`]: a reference data file (`{id: row}`) read in file order, the
//!   error naming the file and the row.
//!
//! Architecture invariant: value semantics only; knows no domain.

use crate::domain::DomainError;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::ser::{CharEscape, Formatter};
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::path::Path;

/// A string-keyed map in insertion order (a Python dict). Lookups are linear: meant for the
/// small maps rows carry (charge lines, options), and for reading a table in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct PyDict<V> {
    entries: Vec<(String, V)>,
}

impl<V> Default for PyDict<V> {
    fn default() -> Self {
        PyDict {
            entries: Vec::new(),
        }
    }
}

impl<V> PyDict<V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// `d[key] = value`: an existing key keeps its position, a new one goes last.
    pub fn insert(&mut self, key: impl Into<String>, value: V) {
        let key = key.into();
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => self.entries.push((key, value)),
        }
    }

    /// `d.pop(key, None)`.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<V> IntoIterator for PyDict<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<K: Into<String>, V> FromIterator<(K, V)> for PyDict<V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut d = PyDict::new();
        for (k, v) in iter {
            d.insert(k, v);
        }
        d
    }
}

impl<V: Serialize> Serialize for PyDict<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for PyDict<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ordered<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Ordered<V> {
            type Value = PyDict<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PyDict<V>, A::Error> {
                let mut out = PyDict::new();
                while let Some(key) = map.next_key::<String>()? {
                    // Name the key: a bad row deep in a 500-row file is otherwise a needle
                    // in a haystack.
                    let value = map.next_value::<V>().map_err(|e| {
                        serde::de::Error::custom(format_args!("at key '{key}': {e}"))
                    })?;
                    // Duplicate keys: Python's json keeps the first position, last value.
                    out.insert(key, value);
                }
                Ok(out)
            }
        }
        d.deserialize_map(Ordered(PhantomData))
    }
}

/// A row that hashes and exports by content: it serialises as its JSON value with every
/// map's keys sorted (what `serde_json::Value` does), so insertion order inside a
/// [`PyDict`] cannot change a state hash. Deref to the row for tools and outputs.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Canonical<T>(pub T);

impl<T: Serialize> Serialize for Canonical<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::to_value(&self.0)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

impl<T> Deref for Canonical<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Canonical<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// Python's `float(text)`: surrounding whitespace, a sign, `inf`/`infinity`/`nan` in any
/// case, exponents, and underscores between digits (`1_000`) are accepted.
pub fn py_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let bytes = t.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_' {
            let digit_before = i > 0 && bytes[i - 1].is_ascii_digit();
            let digit_after = bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !(digit_before && digit_after) {
                return None;
            }
        }
    }
    let cleaned = t.replace('_', "");
    let lower = cleaned.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if lower.len() - unsigned.len() > 1 {
        return None;
    }
    match unsigned {
        "inf" | "infinity" | "nan" => {}
        // Rust also reads words Python refuses ("infinit"); anything alphabetic that is not
        // one of Python's spellings or an exponent is refused here.
        u if u.bytes().any(|b| b.is_ascii_alphabetic() && b != b'e') => return None,
        _ => {}
    }
    lower.parse().ok()
}

/// Python's `f"{x:.2f}"` (`%.2f`): the exact binary value rounded half-to-even, as Rust's
/// fixed-precision formatting does; `nan`, `inf`, `-inf` spelled as Python spells them.
pub fn py_fixed2(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:.2}")
    }
}

/// Python's `max(a, b)` on floats: `a` unless `b > a` (so `max(-0.0, 0.0)` is `-0.0` and
/// `max(nan, 0.0)` is `nan`).
pub fn py_max(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// Python's `repr()` of a JSON-like value (`None`, `True`, `'text'`, `[...]`, `{'k': v}`),
/// maps in their serialisation order. Strings take Python's quote choice: single quotes
/// unless the text holds a single quote and no double quote. Control characters are
/// escaped; other characters print as they are (Python also escapes a few non-printable
/// Unicode categories this does not model).
pub fn py_repr<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(64);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, ReprFormatter::default());
    if value.serialize(&mut ser).is_err() {
        return "None".into();
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Python's `repr()` of one string.
pub fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f || (0x80..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A `serde_json` formatter writing Python `repr` text. Strings are buffered whole, since
/// the quote character depends on their content.
#[derive(Default)]
struct ReprFormatter {
    string: Option<String>,
}

impl Formatter for ReprFormatter {
    fn write_null<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b"None")
    }
    fn write_bool<W: ?Sized + io::Write>(&mut self, w: &mut W, value: bool) -> io::Result<()> {
        w.write_all(if value { b"True" } else { b"False" })
    }
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        let text = match super::pyjson::py_float_repr(value).as_str() {
            "NaN" => "nan".to_string(),
            "Infinity" => "inf".to_string(),
            "-Infinity" => "-inf".to_string(),
            other => other.to_string(),
        };
        w.write_all(text.as_bytes())
    }
    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }
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
    fn begin_string<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.string = Some(String::new());
        Ok(())
    }
    fn end_string<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        let s = self.string.take().unwrap_or_default();
        w.write_all(py_str_repr(&s).as_bytes())
    }
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        _w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if let Some(s) = self.string.as_mut() {
            s.push_str(fragment);
        }
        Ok(())
    }
    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        _w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        // serde_json escapes these for JSON; keep the raw character and let repr decide.
        let c = match escape {
            CharEscape::Quote => '"',
            CharEscape::ReverseSolidus => '\\',
            CharEscape::Solidus => '/',
            CharEscape::Backspace => '\u{8}',
            CharEscape::FormFeed => '\u{c}',
            CharEscape::LineFeed => '\n',
            CharEscape::CarriageReturn => '\r',
            CharEscape::Tab => '\t',
            CharEscape::AsciiControl(b) => char::from(b),
        };
        if let Some(s) = self.string.as_mut() {
            s.push(c);
        }
        Ok(())
    }
}

/// Read a reference data file `<dir>/<stem>.json` (an object keyed by id) in file order;
/// the error names the file and the row that failed.
pub fn read_ordered_table<T: DeserializeOwned>(
    dir: &Path,
    stem: &str,
) -> Result<PyDict<T>, DomainError> {
    let path = dir.join(format!("{stem}.json"));
    let fail = |message: String| DomainError::Import {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| fail(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| fail(format!("invalid table: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dict_keeps_python_insertion_order() {
        let mut d: PyDict<f64> = serde_json::from_str(r#"{"b": 1.0, "a": 2.0, "b": 3.0}"#).unwrap();
        assert_eq!(d.keys().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(d.get("b"), Some(&3.0));
        d.insert("c", 4.0);
        d.insert("b", 5.0);
        assert_eq!(d.remove("a"), Some(2.0));
        assert_eq!(super::super::pyjson::dumps(&d), r#"{"b": 5.0, "c": 4.0}"#);
        let err = serde_json::from_str::<PyDict<f64>>(r#"{"x": 1.0, "y": "no"}"#).unwrap_err();
        assert!(err.to_string().contains("at key 'y'"), "{err}");
    }

    #[test]
    fn canonical_rows_hash_by_content() {
        let a: PyDict<i64> = [("x", 1), ("y", 2)].into_iter().collect();
        let b: PyDict<i64> = [("y", 2), ("x", 1)].into_iter().collect();
        assert_ne!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
        assert_eq!(
            serde_json::to_string(&Canonical(a.clone())).unwrap(),
            serde_json::to_string(&Canonical(b)).unwrap()
        );
        let back: Canonical<PyDict<i64>> = serde_json::from_str(r#"{"y": 2, "x": 1}"#).unwrap();
        assert_eq!(back.keys().collect::<Vec<_>>(), ["y", "x"]);
    }

    /// Expected values are CPython 3.11's.
    #[test]
    fn floats_and_reprs_like_python() {
        assert_eq!(py_float(" 45.00 "), Some(45.0));
        assert_eq!(py_float("1_000.5"), Some(1000.5));
        assert_eq!(py_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(py_float("nan").unwrap().is_nan());
        for bad in [
            "", "1__0", "_1", "1_", "abc", "1e", "0x10", "infinit", "--1", "4 5",
        ] {
            assert_eq!(py_float(bad), None, "{bad}");
        }
        assert_eq!(py_fixed2(40.0), "40.00");
        assert_eq!(py_fixed2(0.125), "0.12");
        assert_eq!(py_fixed2(2.675), "2.67");
        assert_eq!(py_fixed2(f64::NAN), "nan");
        assert_eq!(py_fixed2(-0.0), "-0.00");
        assert!(py_max(-0.0, 0.0).is_sign_negative());
        assert!(py_max(f64::NAN, 0.0).is_nan());
        assert_eq!(py_max(-3.0, 0.0), 0.0);
        assert_eq!(
            py_repr(&json!([{"device_id": "1", "name": "55\" TV", "service": null}])),
            r#"[{'device_id': '1', 'name': '55" TV', 'service': None}]"#
        );
        assert_eq!(
            py_repr(&json!(["it's", "a\\b\n", true, 2.5, 3])),
            r#"["it's", 'a\\b\n', True, 2.5, 3]"#
        );
        assert_eq!(py_str_repr("both ' and \""), r#"'both \' and "'"#);
    }
}
