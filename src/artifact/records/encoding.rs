//! How a `record!` field's values become its column ([`Encoding`]): `Native`, by the field
//! type's own [`Column`], or `Json`, as the JSON text of each value in a string column; and
//! the schema field and decoding of one column, naming the column in any error.

use super::ColumnError;
use super::column::{CellError, Column, downcast};
use crate::artifact::json_column::JsonText;
use arrow_array::builder::StringBuilder;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field};
use std::sync::Arc;

/// The schema field of a column named `name` holding `T` encoded by `E`.
pub(super) fn field<E: Encoding<T>, T>(name: &str) -> Field {
    Field::new(name, E::data_type(), E::NULLABLE)
}

/// Decode the column `name` of `batch`, naming the column in any error.
pub(super) fn decode<E: Encoding<T>, T>(
    batch: &RecordBatch,
    name: &str,
) -> Result<Vec<T>, ColumnError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| (name.to_string(), "missing".to_string()))?;
    E::from_array(array.as_ref()).map_err(|e| (name.to_string(), e.to_string()))
}

/// How a field's values become its column: `Native`, by the field type's own [`Column`]
/// (the default), or `Json`, as the JSON text of each value in a string column.
pub(super) trait Encoding<T> {
    const NULLABLE: bool;
    fn data_type() -> DataType;
    fn to_array<'a>(values: impl Iterator<Item = &'a T>) -> ArrayRef
    where
        T: 'a;
    fn from_array(array: &dyn Array) -> Result<Vec<T>, CellError>;
    fn encoded_bytes(value: &T) -> usize;
}

/// The field type's own column.
pub(super) struct Native;

impl<T: Column> Encoding<T> for Native {
    const NULLABLE: bool = T::NULLABLE;
    fn data_type() -> DataType {
        T::data_type()
    }
    fn to_array<'a>(values: impl Iterator<Item = &'a T>) -> ArrayRef
    where
        T: 'a,
    {
        T::to_array(values)
    }
    fn from_array(array: &dyn Array) -> Result<Vec<T>, CellError> {
        T::from_array(array)
    }
    fn encoded_bytes(value: &T) -> usize {
        value.encoded_bytes()
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
