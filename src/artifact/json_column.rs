//! JSON text columns: a typed record field declared `as Json` in `record!` is stored as
//! the JSON text of its value in a string column (`records/encoding.rs` builds the
//! column); the text, byte for byte, and its decoding are here ([`JsonText`]), and a
//! record's serde form keeps the same text ([`json_text`]).

use crate::message::ChatMessage;
use crate::task::{Action, UserFact};

/// A value stored as JSON text: its one encoding (what the Parquet column holds, byte for
/// byte) and its decoding.
pub trait JsonText: Sized {
    /// Write the column's text to `out`.
    fn write_json(&self, out: impl std::io::Write);
    fn from_json(text: &str) -> Result<Self, serde_json::Error>;

    /// The column's text.
    fn to_json(&self) -> String {
        let mut bytes = Vec::new();
        self.write_json(&mut bytes);
        // serde_json writes UTF-8 only.
        String::from_utf8(bytes).expect("JSON text is UTF-8")
    }

    /// The length of the column's text, without keeping it.
    fn json_len(&self) -> usize {
        let mut counter = ByteCount(0);
        self.write_json(&mut counter);
        counter.0
    }
}

/// An `io::Write` that only counts.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `JsonText` as serde writes the type (struct fields in declaration order).
macro_rules! serde_json_text {
    ($($t:ty),*) => {$(
        impl JsonText for $t {
            fn write_json(&self, out: impl std::io::Write) {
                // Strings, lists and derived structs always serialise, and the writers here
                // (memory, a counter) never fail.
                serde_json::to_writer(out, self).expect("a JSON column value serialises")
            }
            fn from_json(text: &str) -> Result<Self, serde_json::Error> {
                serde_json::from_str(text)
            }
        }
    )*};
}

serde_json_text!(
    Vec<UserFact>,
    Vec<Option<String>>,
    Vec<String>,
    Vec<ChatMessage>
);

/// A task's actions are written `{"kwargs": ..., "name": ...}`, keys in sorted order: the
/// form the `actions` column has always held (the grounder wrote each action as a JSON
/// object), while `Action` itself serialises name first, as tau-bench task files do.
impl JsonText for Vec<Action> {
    fn write_json(&self, out: impl std::io::Write) {
        #[derive(serde::Serialize)]
        struct Stored<'a> {
            kwargs: &'a serde_json::Value,
            name: &'a str,
        }
        let stored: Vec<Stored> = self
            .iter()
            .map(|a| Stored {
                kwargs: &a.kwargs,
                name: &a.name,
            })
            .collect();
        serde_json::to_writer(out, &stored).expect("actions serialise")
    }
    fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// Serde for a `JsonText` field (`#[serde(with = "json_text")]`): the same text as its
/// column, so a record's JSON (a journal line) holds the row as the Parquet file does.
pub mod json_text {
    use super::JsonText;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<T: JsonText, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&value.to_json())
    }

    pub fn deserialize<'de, T: JsonText, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let text = String::deserialize(d)?;
        T::from_json(&text).map_err(serde::de::Error::custom)
    }

    /// The same for an `Option` field (`null` for `None`).
    pub mod option {
        use super::JsonText;
        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<T: JsonText, S: Serializer>(
            value: &Option<T>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match value {
                Some(v) => s.serialize_some(&v.to_json()),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, T: JsonText, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<T>, D::Error> {
            Option::<String>::deserialize(d)?
                .map(|text| T::from_json(&text).map_err(serde::de::Error::custom))
                .transpose()
        }
    }
}
