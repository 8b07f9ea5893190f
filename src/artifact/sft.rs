//! The SFT export's Parquet form (`_sft.parquet`): chat rows for TRL's SFT trainer with
//! one fixed schema. Every message carries the same keys; tool-call arguments and the tool
//! list are JSON strings (the `_sft.jsonl` beside it keeps them as objects).
//!
//! Architecture invariant: encoding only; the rows come from the trajectories stage.

use serde_json::{Value, json};

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

pub fn sft_schema() -> arrow::datatypes::SchemaRef {
    use arrow::datatypes::{DataType, Field, Fields, Schema};
    use std::sync::Arc;
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
/// (the JSON decoder takes every row it is given into one batch, and a string array holds
/// at most 2 GiB), in order; a small set is one batch.
pub fn sft_batches(rows: &[Value]) -> Result<Vec<arrow::array::RecordBatch>, String> {
    super::runs_by_bytes(rows, |r| r.to_string().len(), super::BATCH_BYTES)
        .into_iter()
        .map(sft_batch)
        .collect()
}

/// Encode SFT rows as a RecordBatch through arrow's JSON decoder (fixed schema).
pub fn sft_batch(rows: &[Value]) -> Result<arrow::array::RecordBatch, String> {
    let schema = sft_schema();
    let mut decoder = arrow::json::ReaderBuilder::new(schema.clone())
        .build_decoder()
        .map_err(|e| e.to_string())?;
    let parquet_rows: Vec<Value> = rows.iter().map(sft_parquet_row).collect();
    decoder
        .serialize(&parquet_rows)
        .map_err(|e| e.to_string())?;
    Ok(decoder
        .flush()
        .map_err(|e| e.to_string())?
        .unwrap_or_else(|| arrow::array::RecordBatch::new_empty(schema)))
}
