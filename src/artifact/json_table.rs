//! JSON rows -> an Arrow table a user can query (the `db` stage's Parquet export).
//!
//! Columns are the union of the rows' top-level keys in first-seen order, after a leading
//! `id` column (the row's primary key). A column whose values are all strings, integers,
//! numbers or booleans gets that Arrow type; anything nested (lists, objects, mixed types)
//! is stored as its JSON text, which DuckDB and pandas can still parse.

use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use serde_json::Value;
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Unknown,
    Str,
    Int,
    Float,
    Bool,
    Json,
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Unknown,
        Value::String(_) => Kind::Str,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_i64() => Kind::Int,
        Value::Number(_) => Kind::Float,
        _ => Kind::Json,
    }
}

fn merge(a: Kind, b: Kind) -> Kind {
    match (a, b) {
        (Kind::Unknown, k) | (k, Kind::Unknown) => k,
        (x, y) if x == y => x,
        (Kind::Int, Kind::Float) | (Kind::Float, Kind::Int) => Kind::Float,
        _ => Kind::Json,
    }
}

/// Build a table from `(primary key, row object)` pairs.
pub fn json_rows_to_batch(rows: &[(String, Value)]) -> RecordBatch {
    let mut names: Vec<String> = Vec::new();
    for (_, row) in rows {
        if let Value::Object(map) = row {
            for key in map.keys() {
                if key != "id" && !names.contains(key) {
                    names.push(key.clone());
                }
            }
        }
    }
    let kinds: Vec<Kind> = names
        .iter()
        .map(|name| {
            rows.iter()
                .filter_map(|(_, r)| r.get(name))
                .fold(Kind::Unknown, |k, v| merge(k, kind_of(v)))
        })
        .collect();

    let mut fields = vec![Field::new("id", DataType::Utf8, false)];
    let mut columns: Vec<ArrayRef> = {
        let mut b = StringBuilder::new();
        for (key, _) in rows {
            b.append_value(key);
        }
        vec![Arc::new(b.finish())]
    };
    for (name, kind) in names.iter().zip(&kinds) {
        let values = rows
            .iter()
            .map(|(_, r)| r.get(name).filter(|v| !v.is_null()));
        let (dtype, array): (DataType, ArrayRef) = match kind {
            Kind::Int => {
                let mut b = Int64Builder::new();
                values.for_each(|v| b.append_option(v.and_then(Value::as_i64)));
                (DataType::Int64, Arc::new(b.finish()))
            }
            Kind::Float => {
                let mut b = Float64Builder::new();
                values.for_each(|v| b.append_option(v.and_then(Value::as_f64)));
                (DataType::Float64, Arc::new(b.finish()))
            }
            Kind::Bool => {
                let mut b = BooleanBuilder::new();
                values.for_each(|v| b.append_option(v.and_then(Value::as_bool)));
                (DataType::Boolean, Arc::new(b.finish()))
            }
            Kind::Str | Kind::Unknown => {
                let mut b = StringBuilder::new();
                values.for_each(|v| b.append_option(v.and_then(Value::as_str)));
                (DataType::Utf8, Arc::new(b.finish()))
            }
            Kind::Json => {
                let mut b = StringBuilder::new();
                values.for_each(|v| b.append_option(v.map(Value::to_string)));
                (DataType::Utf8, Arc::new(b.finish()))
            }
        };
        fields.push(Field::new(name, dtype, true));
        columns.push(array);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .expect("json table columns are built from the same rows")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn infers_scalar_types_and_keeps_nested_as_json() {
        let rows = vec![
            (
                "a".to_string(),
                json!({"name": "Ann", "age": 3, "score": 1, "tags": ["x"]}),
            ),
            (
                "b".to_string(),
                json!({"name": "Bo", "score": 2.5, "ok": true}),
            ),
        ];
        let batch = json_rows_to_batch(&rows);
        let schema = batch.schema();
        let ty = |n: &str| schema.field_with_name(n).unwrap().data_type().clone();
        assert_eq!(ty("id"), DataType::Utf8);
        assert_eq!(ty("age"), DataType::Int64);
        assert_eq!(ty("score"), DataType::Float64);
        assert_eq!(ty("tags"), DataType::Utf8);
        assert_eq!(ty("ok"), DataType::Boolean);
        assert_eq!(batch.num_rows(), 2);
    }
}
