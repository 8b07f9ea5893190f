//! JSON text columns: a typed record field declared `as Json` in `record!` is stored as
//! the JSON text of its value in a string column, encoded and decoded here only
//! ([`JsonText`]: the text, byte for byte, that the column holds), and a record's serde form
//! keeps the same text ([`json_text`]).

use super::records::{CellError, Encoding, downcast};
use crate::message::ChatMessage;
use crate::task::{Action, UserFact};
use arrow_array::builder::StringBuilder;
use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::DataType;
use std::sync::Arc;

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

/// JSON text in a string column (`as Json` in `record!`; an `Option` is a nullable column).
pub(super) struct Json;

impl Json {
    fn encode<'a, T: JsonText + 'a>(values: impl Iterator<Item = Option<&'a T>>) -> ArrayRef {
        let mut b = StringBuilder::new();
        for v in values {
            match v {
                Some(v) => b.append_value(v.to_json()),
                None => b.append_null(),
            }
        }
        Arc::new(b.finish())
    }

    fn decode<T: JsonText>(array: &dyn Array) -> Result<Vec<Option<T>>, CellError> {
        let a = downcast::<StringArray, Option<String>>(array)?;
        (0..a.len())
            .map(|i| {
                if a.is_null(i) {
                    return Ok(None);
                }
                T::from_json(a.value(i))
                    .map(Some)
                    .map_err(|e| CellError::row(i, e.to_string()))
            })
            .collect()
    }
}

impl<T: JsonText> Encoding<T> for Json {
    const NULLABLE: bool = false;
    fn data_type() -> DataType {
        DataType::Utf8
    }
    fn to_array<'a>(values: impl Iterator<Item = &'a T>) -> ArrayRef
    where
        T: 'a,
    {
        Json::encode(values.map(Some))
    }
    fn from_array(array: &dyn Array) -> Result<Vec<T>, CellError> {
        Json::decode(array)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| CellError::row(i, "null")))
            .collect()
    }
    fn encoded_bytes(value: &T) -> usize {
        8 + value.json_len()
    }
}

impl<T: JsonText> Encoding<Option<T>> for Json {
    const NULLABLE: bool = true;
    fn data_type() -> DataType {
        DataType::Utf8
    }
    fn to_array<'a>(values: impl Iterator<Item = &'a Option<T>>) -> ArrayRef
    where
        T: 'a,
    {
        Json::encode(values.map(Option::as_ref))
    }
    fn from_array(array: &dyn Array) -> Result<Vec<Option<T>>, CellError> {
        Json::decode(array)
    }
    fn encoded_bytes(value: &Option<T>) -> usize {
        8 + value.as_ref().map_or(0, JsonText::json_len)
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
