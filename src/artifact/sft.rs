//! The SFT export's Parquet form (`_sft.parquet`): chat rows for TRL's SFT trainer with
//! one fixed schema. Every message carries the same keys; tool-call arguments and the tool
//! list are JSON strings (the `_sft.jsonl` beside it keeps them as objects).
//!
//! Architecture invariant: encoding only; the rows come from the trajectories stage.

use arrow_array::{ArrayRef, BooleanArray, ListArray, RecordBatch, StringArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use serde_json::{Value, json};
use std::sync::Arc;

/// The Parquet form of SFT rows: every message has the same keys, arguments and tools are
/// JSON strings, so one fixed schema holds all rows.
fn sft_parquet_row(row: &Value) -> Value {
    let messages: Vec<Value> = row["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|m| {
            let calls: Vec<Value> = m["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|c| json!({"id": c["id"], "type": "function", "function": {"name": c["function"]["name"], "arguments": c["function"]["arguments"].to_string()}}))
                .collect();
            json!({
                "role": m["role"], "content": m["content"], "tool_calls": calls,
                "tool_call_id": m.get("tool_call_id").cloned().unwrap_or(Value::Null),
                "name": m.get("name").cloned().unwrap_or(Value::Null),
                "reasoning_content": m.get("reasoning_content").cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    json!({"messages": messages, "tools": row["tools"].to_string(), "task_id": row["task_id"], "domain": row["domain"],
           "agent_model": row["agent_model"], "user_model": row["user_model"], "scripted": row["scripted"]})
}

pub fn sft_schema() -> SchemaRef {
    let s = |n: &str, null| Field::new(n, DataType::Utf8, null);
    let function = DataType::Struct(Fields::from(vec![s("name", false), s("arguments", false)]));
    let call = DataType::Struct(Fields::from(vec![
        s("id", false),
        s("type", false),
        Field::new("function", function, false),
    ]));
    let message = DataType::Struct(Fields::from(vec![
        s("role", false),
        s("content", true),
        Field::new(
            "tool_calls",
            DataType::List(Arc::new(Field::new("item", call, true))),
            true,
        ),
        s("tool_call_id", true),
        s("name", true),
        s("reasoning_content", true),
    ]));
    Arc::new(Schema::new(vec![
        Field::new(
            "messages",
            DataType::List(Arc::new(Field::new("item", message, true))),
            false,
        ),
        s("tools", false),
        s("task_id", false),
        s("domain", false),
        s("agent_model", false),
        s("user_model", false),
        Field::new("scripted", DataType::Boolean, false),
    ]))
}

/// Encode SFT rows as RecordBatches of at most [`super::BATCH_BYTES`] of JSON text each
/// (a string array holds at most 2 GiB), in order; a small set is one batch.
pub fn sft_batches(rows: &[Value]) -> Result<Vec<RecordBatch>, String> {
    super::runs_by_bytes(rows, |r| r.to_string().len(), super::BATCH_BYTES)
        .into_iter()
        .map(sft_batch)
        .collect()
}

/// A string cell: JSON null is a null cell where the column allows it; anything else but a
/// string is an error naming the field.
fn text<'a>(v: &'a Value, field: &str, nullable: bool) -> Result<Option<&'a str>, String> {
    match v {
        Value::String(s) => Ok(Some(s)),
        Value::Null if nullable => Ok(None),
        other => Err(format!("field '{field}': expected a string, found {other}")),
    }
}

fn strings<'a>(
    values: impl IntoIterator<Item = &'a Value>,
    field: &str,
    nullable: bool,
) -> Result<ArrayRef, String> {
    let cells = values
        .into_iter()
        .map(|v| text(v, field, nullable))
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Arc::new(StringArray::from(cells)))
}

/// The struct fields of a `Struct` or `List<Struct>` column of the schema.
fn struct_fields(t: &DataType) -> Fields {
    match t {
        DataType::Struct(f) => f.clone(),
        DataType::List(item) => struct_fields(item.data_type()),
        _ => Fields::empty(),
    }
}

fn list(item: &DataType, lengths: &[usize], values: ArrayRef) -> Result<ArrayRef, String> {
    let DataType::List(field) = item else {
        return Err("not a list column".into());
    };
    let list = ListArray::try_new(
        field.clone(),
        OffsetBuffer::from_lengths(lengths.iter().copied()),
        values,
        None,
    )
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(list))
}

fn structs(fields: Fields, columns: Vec<ArrayRef>) -> Result<ArrayRef, String> {
    Ok(Arc::new(
        StructArray::try_new(fields, columns, None).map_err(|e| e.to_string())?,
    ))
}

/// Encode SFT rows as one RecordBatch of the fixed schema, column by column.
pub fn sft_batch(rows: &[Value]) -> Result<RecordBatch, String> {
    let schema = sft_schema();
    let rows: Vec<Value> = rows.iter().map(sft_parquet_row).collect();
    let messages: Vec<&Value> = rows
        .iter()
        .flat_map(|r| r["messages"].as_array().into_iter().flatten())
        .collect();
    let calls: Vec<&Value> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .collect();
    let messages_type = schema.field(0).data_type();
    let message_fields = struct_fields(messages_type);
    let calls_type = message_fields[2].data_type().clone();
    let call_fields = struct_fields(&calls_type);
    let function_fields = struct_fields(call_fields[2].data_type());
    let functions = structs(
        function_fields,
        vec![
            strings(calls.iter().map(|c| &c["function"]["name"]), "name", false)?,
            strings(
                calls.iter().map(|c| &c["function"]["arguments"]),
                "arguments",
                false,
            )?,
        ],
    )?;
    let call_array = structs(
        call_fields,
        vec![
            strings(calls.iter().map(|c| &c["id"]), "id", false)?,
            strings(calls.iter().map(|c| &c["type"]), "type", false)?,
            functions,
        ],
    )?;
    let call_counts: Vec<usize> = messages
        .iter()
        .map(|m| m["tool_calls"].as_array().map_or(0, Vec::len))
        .collect();
    let message_array = structs(
        message_fields,
        vec![
            strings(messages.iter().map(|m| &m["role"]), "role", false)?,
            strings(messages.iter().map(|m| &m["content"]), "content", true)?,
            list(&calls_type, &call_counts, call_array)?,
            strings(
                messages.iter().map(|m| &m["tool_call_id"]),
                "tool_call_id",
                true,
            )?,
            strings(messages.iter().map(|m| &m["name"]), "name", true)?,
            strings(
                messages.iter().map(|m| &m["reasoning_content"]),
                "reasoning_content",
                true,
            )?,
        ],
    )?;
    let message_counts: Vec<usize> = rows
        .iter()
        .map(|r| r["messages"].as_array().map_or(0, Vec::len))
        .collect();
    let column = |name: &str| strings(rows.iter().map(|r| &r[name]), name, false);
    let scripted = rows
        .iter()
        .map(|r| {
            r["scripted"].as_bool().ok_or_else(|| {
                format!(
                    "field 'scripted': expected a boolean, found {}",
                    r["scripted"]
                )
            })
        })
        .collect::<Result<Vec<bool>, String>>()?;
    let columns = vec![
        list(messages_type, &message_counts, message_array)?,
        column("tools")?,
        column("task_id")?,
        column("domain")?,
        column("agent_model")?,
        column("user_model")?,
        Arc::new(BooleanArray::from(scripted)) as ArrayRef,
    ];
    RecordBatch::try_new(schema, columns).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    fn row() -> Value {
        json!({
            "messages": [
                {"role": "system", "content": "policy"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "function": {"name": "get_user", "arguments": {"id": "u1"}}},
                    {"id": "c2", "function": {"name": "think", "arguments": {}}}]},
                {"role": "tool", "content": "{}", "tool_call_id": "c1", "name": "get_user"},
            ],
            "tools": [{"type": "function"}], "task_id": "t1", "domain": "airline",
            "agent_model": "scripted", "user_model": "scripted", "scripted": true,
        })
    }

    #[test]
    fn rows_become_nested_columns_with_nulls_where_a_message_has_no_value() {
        let batch = sft_batch(&[row(), row()]).unwrap();
        assert_eq!(batch.num_rows(), 2);
        let messages = batch
            .column(0)
            .as_any()
            .downcast_ref::<ListArray>()
            .unwrap();
        assert_eq!(messages.value_offsets(), &[0, 3, 6]);
        let first = messages.value(0);
        let m = first.as_any().downcast_ref::<StructArray>().unwrap();
        let content = m.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(content.value(0), "policy");
        assert!(content.is_null(1));
        let calls = m.column(2).as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(calls.value_offsets(), &[0, 0, 2, 2]);
        let call = calls.value(1);
        let call = call.as_any().downcast_ref::<StructArray>().unwrap();
        let function = call
            .column(2)
            .as_any()
            .downcast_ref::<StructArray>()
            .unwrap();
        let args = function
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(args.value(0), r#"{"id":"u1"}"#);
        assert_eq!(batch.schema(), sft_schema());
        assert_eq!(sft_batch(&[]).unwrap().num_rows(), 0);
    }

    #[test]
    fn a_missing_required_field_is_named() {
        let mut r = row();
        r["task_id"] = Value::Null;
        assert_eq!(
            sft_batch(&[r]).unwrap_err(),
            "field 'task_id': expected a string, found null"
        );
        let mut r = row();
        r["messages"][0]["role"] = json!(3);
        assert_eq!(
            sft_batch(&[r]).unwrap_err(),
            "field 'role': expected a string, found 3"
        );
    }
}
