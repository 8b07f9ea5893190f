//! Reading an OpenAI-compatible server's answers: a chat completion (content, thinking and
//! tool calls in the shapes OpenAI, vLLM, llama.cpp and DeepSeek send them), an
//! embeddings list, the token usage, and the context window a `/models` listing reports.
//!
//! Architecture invariant: an answer we cannot read is a typed [`LlmError::Malformed`],
//! never a panic.

use serde_json::Value;

use super::transport::shorten;
use crate::llm::chat::{AssistantMessage, ChatResponse, ToolCall, Usage};
use crate::llm::error::LlmError;

fn malformed(context: &str, detail: String) -> LlmError {
    LlmError::Malformed {
        context: context.to_string(),
        detail,
    }
}

/// Read a chat completion. Accepts what OpenAI, vLLM, llama.cpp and DeepSeek send:
/// `content` as a string or a list of text parts, thinking as `reasoning_content` or
/// `reasoning`, tool-call arguments as a JSON string (or, leniently, an object; `""` means
/// no arguments). Arguments that do not parse as a JSON object - typically cut off by
/// `max_tokens` - make the whole answer malformed.
pub fn parse_chat_response(
    context: &str,
    json: &Value,
    fallback_model: &str,
) -> Result<ChatResponse, LlmError> {
    let choice = json
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| malformed(context, "no `choices[0]` in the answer".to_string()))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| malformed(context, "no `choices[0].message` object".to_string()))?;
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<String>(),
        ),
        Some(other) => {
            return Err(malformed(
                context,
                format!(
                    "`content` is neither text nor null: {}",
                    shorten(&other.to_string())
                ),
            ));
        }
    };
    let reasoning_content = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| message.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|v| !v.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| malformed(context, "`tool_calls` is not a list".to_string()))?;
        for (i, call) in calls.iter().enumerate() {
            tool_calls.push(parse_tool_call(context, i, call, finish_reason.as_deref())?);
        }
    }
    Ok(ChatResponse {
        message: AssistantMessage {
            content,
            tool_calls,
            reasoning_content,
        },
        finish_reason,
        usage: parse_usage(json),
        model: json
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(fallback_model)
            .to_string(),
        from_cache: false,
    })
}

fn parse_tool_call(
    context: &str,
    i: usize,
    call: &Value,
    finish_reason: Option<&str>,
) -> Result<ToolCall, LlmError> {
    let name = call
        .pointer("/function/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| malformed(context, format!("tool call #{i} has no function name")))?;
    let arguments = match call.pointer("/function/arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(s)) if s.trim().is_empty() => "{}".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Object(_)) => v.to_string(),
        Some(other) => {
            return Err(malformed(
                context,
                format!("tool call #{i} '{name}': arguments are {other}, not a JSON object"),
            ));
        }
    };
    match serde_json::from_str::<Value>(&arguments) {
        Ok(Value::Object(_)) => {}
        Ok(_) => {
            return Err(malformed(
                context,
                format!("tool call #{i} '{name}': arguments are not a JSON object"),
            ));
        }
        Err(e) => {
            let hint = if finish_reason == Some("length") {
                " (finish_reason=length: cut off by max_tokens)"
            } else {
                ""
            };
            return Err(malformed(
                context,
                format!(
                    "tool call #{i} '{name}': arguments are not valid JSON ({e}){hint}: {}",
                    shorten(&arguments)
                ),
            ));
        }
    }
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("call_{i}"));
    Ok(ToolCall {
        id,
        name: name.to_string(),
        arguments,
    })
}

/// The context window a `/models` answer reports for `model`: vLLM's `max_model_len`,
/// or `context_length` / `max_context_length` (OpenRouter, LM Studio and others).
pub fn served_context_window(listed: &Value, model: &str) -> Option<u64> {
    let entry = listed
        .get("data")?
        .as_array()?
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))?;
    ["max_model_len", "context_length", "max_context_length"]
        .iter()
        .find_map(|k| entry.get(*k).and_then(Value::as_u64))
}

/// Read an embeddings answer: one vector per input, in input order.
pub fn parse_embeddings(
    context: &str,
    json: &Value,
    expected: usize,
) -> Result<(Vec<Vec<f32>>, u64), LlmError> {
    let data = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(context, "no `data` list in the answer".to_string()))?;
    if data.len() != expected {
        return Err(malformed(
            context,
            format!("{} embeddings for {expected} inputs", data.len()),
        ));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (pos, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(pos, |i| i as usize);
        let vector = item
            .get("embedding")
            .and_then(Value::as_array)
            .and_then(|v| {
                v.iter()
                    .map(|x| x.as_f64().map(|f| f as f32))
                    .collect::<Option<Vec<f32>>>()
            })
            .ok_or_else(|| {
                malformed(
                    context,
                    format!("embedding #{pos} is not a list of numbers"),
                )
            })?;
        match out.get_mut(index) {
            Some(slot @ None) => *slot = Some(vector),
            _ => {
                return Err(malformed(
                    context,
                    format!("embedding index {index} is out of range or repeated"),
                ));
            }
        }
    }
    let tokens = json
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok((out.into_iter().flatten().collect(), tokens))
}

/// The token counts of an answer: `usage.prompt_tokens` and `usage.completion_tokens`, and
/// the prompt tokens the server read from its prompt cache where it says so
/// (`usage.prompt_tokens_details.cached_tokens`, the OpenAI and vLLM shape; at most the
/// prompt tokens). Missing counts are 0.
pub fn parse_usage(json: &Value) -> Usage {
    let tokens = |pointer: &str| json.pointer(pointer).and_then(Value::as_u64);
    let prompt_tokens = tokens("/usage/prompt_tokens").unwrap_or(0);
    Usage {
        prompt_tokens,
        cached_prompt_tokens: tokens("/usage/prompt_tokens_details/cached_tokens")
            .unwrap_or(0)
            .min(prompt_tokens),
        completion_tokens: tokens("/usage/completion_tokens").unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn chat_response_with_tool_calls_and_reasoning() {
        let json = json!({
            "model": "served-model",
            "choices": [{"finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "reasoning": "think",
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
                    {"type": "function", "function": {"name": "g", "arguments": ""}},
                    {"id": "c", "type": "function", "function": {"name": "h", "arguments": {"y": 2}}}
                ]}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7}
        });
        let r = parse_chat_response("role 'agent'", &json, "cfg-model").unwrap();
        assert_eq!(r.model, "served-model");
        assert_eq!(r.message.reasoning_content.as_deref(), Some("think"));
        let calls: Vec<(&str, &str, &str)> = r
            .message
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("a", "f", "{\"x\":1}"),
                ("call_1", "g", "{}"),
                ("c", "h", "{\"y\":2}")
            ]
        );
        assert_eq!(r.usage.completion_tokens, 7);
    }

    #[test]
    fn malformed_answers_are_typed_errors() {
        let cases = [
            json!({}),
            json!({"choices": []}),
            json!({"choices": [{"message": "text"}]}),
            json!({"choices": [{"message": {"content": 5}}]}),
            json!({"choices": [{"finish_reason": "length", "message": {"tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": "{\"user_id\": \"ab"}}]}}]}),
            json!({"choices": [{"message": {"tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}}]}),
            json!({"choices": [{"message": {"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "[1]"}}]}}]}),
        ];
        for json in cases {
            let err = parse_chat_response("role 'agent'", &json, "m").unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Malformed, "{json}: {err}");
        }
    }

    #[test]
    fn embeddings_in_index_order() {
        let json = json!({"data": [
            {"index": 1, "embedding": [0.5, 1.0]},
            {"index": 0, "embedding": [0.25, 2.0]}
        ], "usage": {"prompt_tokens": 4}});
        let (v, tokens) = parse_embeddings("e", &json, 2).unwrap();
        assert_eq!(v, vec![vec![0.25, 2.0], vec![0.5, 1.0]]);
        assert_eq!(tokens, 4);
        assert!(parse_embeddings("e", &json, 3).is_err());
        assert!(parse_embeddings("e", &json!({"data": [{"embedding": "AAAA"}]}), 1).is_err());
    }

    #[test]
    fn usage_reads_the_cached_prompt_tokens_where_the_server_reports_them() {
        let answer = |usage: Value| json!({"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": usage});
        let usage_of = |usage: Value| {
            parse_chat_response("role 'agent'", &answer(usage), "m")
                .unwrap()
                .usage
        };
        let with_details = usage_of(json!({"prompt_tokens": 120, "completion_tokens": 9,
            "prompt_tokens_details": {"cached_tokens": 96}}));
        assert_eq!(
            (
                with_details.prompt_tokens,
                with_details.cached_prompt_tokens,
                with_details.completion_tokens
            ),
            (120, 96, 9)
        );
        // A server that says nothing of its cache: every prompt token is uncached.
        let plain = usage_of(json!({"prompt_tokens": 120, "completion_tokens": 9}));
        assert_eq!(plain.cached_prompt_tokens, 0);
        let null_details = usage_of(json!({"prompt_tokens": 7, "prompt_tokens_details": null}));
        assert_eq!(
            (
                null_details.prompt_tokens,
                null_details.cached_prompt_tokens
            ),
            (7, 0)
        );
        // Never more cached than prompt tokens.
        let odd =
            usage_of(json!({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 50}}));
        assert_eq!(odd.cached_prompt_tokens, 10);
        assert_eq!(usage_of(json!(null)), Usage::default());
    }
}
