//! Redacting an API key a server repeated in its answer: content, thinking, tool-call ids,
//! names and arguments, and the model id.
//!
//! Architecture invariant: tool-call arguments stay valid JSON whatever the key holds, and
//! arguments without the key are left byte for byte as the model wrote them.

use serde_json::Value;

use crate::llm::chat::ChatResponse;

/// What a key is replaced with wherever a server repeats it.
const REDACTED: &str = "[redacted]";

/// Replace `key` in text, spelled as is or as it appears inside a JSON string (a `"` or
/// `\` in it escaped), so a tool call written as JSON in the content cannot bring it back
/// when the call is read out of the text.
fn redact_text(text: &mut String, key: &str) {
    if text.contains(key) {
        *text = text.replace(key, REDACTED);
    }
    let quoted = serde_json::to_string(key).unwrap_or_default();
    let escaped = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(key);
    if escaped != key && text.contains(escaped) {
        *text = text.replace(escaped, REDACTED);
    }
}

/// Replace `key` in every string and object key of a JSON value; true when one changed.
fn redact_value(value: &mut Value, key: &str) -> bool {
    match value {
        Value::String(s) if s.contains(key) => {
            *s = s.replace(key, REDACTED);
            true
        }
        Value::Array(items) => {
            // Every item is visited: `any` would stop at the first one redacted.
            let mut changed = false;
            for item in items {
                changed |= redact_value(item, key);
            }
            changed
        }
        Value::Object(map) => {
            let mut changed = false;
            let entries = std::mem::take(map);
            for (mut name, mut v) in entries {
                if name.contains(key) {
                    name = name.replace(key, REDACTED);
                    changed = true;
                }
                changed |= redact_value(&mut v, key);
                map.insert(name, v);
            }
            changed
        }
        _ => false,
    }
}

/// Tool-call arguments with `key` replaced inside their JSON string values, so they stay
/// valid JSON whatever the key holds; re-encoded only when something changed (arguments
/// that do not parse are redacted as text).
fn redact_arguments(arguments: &mut String, key: &str) {
    match serde_json::from_str::<Value>(arguments) {
        Ok(mut value) => {
            if redact_value(&mut value, key) {
                *arguments = value.to_string();
            }
        }
        Err(_) => redact_text(arguments, key),
    }
}

/// Remove an API key a server repeated in its answer: content, thinking, tool-call ids,
/// names and arguments (arguments stay valid JSON), and the model id. An empty key
/// redacts nothing.
pub fn redact_response(response: &mut ChatResponse, key: &str) {
    if key.is_empty() {
        return;
    }
    let message = &mut response.message;
    for text in [&mut message.content, &mut message.reasoning_content]
        .into_iter()
        .flatten()
    {
        redact_text(text, key);
    }
    for call in &mut message.tool_calls {
        redact_text(&mut call.id, key);
        redact_text(&mut call.name, key);
        redact_arguments(&mut call.arguments, key);
    }
    redact_text(&mut response.model, key);
    if let Some(reason) = &mut response.finish_reason {
        redact_text(reason, key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::chat::{AssistantMessage, ToolCall, Usage};
    use serde_json::json;

    #[test]
    fn a_repeated_key_is_redacted_and_arguments_stay_json() {
        // ASCII graphic keys may hold a quote and a backslash, which JSON text escapes.
        for key in ["sk-plain-123", r#"sk-"quoted"\slash"#] {
            let quoted = serde_json::to_string(key).unwrap();
            let escaped = &quoted[1..quoted.len() - 1];
            let args = json!({"token": key, "list": [format!("a {key} b")], (key): 1}).to_string();
            let mut r = ChatResponse {
                message: AssistantMessage {
                    content: Some(format!("key {key}; as JSON {{\"k\": \"{escaped}\"}}")),
                    tool_calls: vec![ToolCall {
                        id: format!("call-{key}"),
                        name: format!("tool{key}"),
                        arguments: args,
                    }],
                    reasoning_content: Some(format!("thinking about {key}")),
                },
                finish_reason: Some("stop".into()),
                usage: Usage::default(),
                model: format!("m-{key}"),
                from_cache: false,
            };
            redact_response(&mut r, key);
            let text = serde_json::to_string(&r).unwrap();
            assert!(!text.contains(key) && !text.contains(escaped), "{text}");
            assert!(!format!("{r:?}").contains(key));
            let call = &r.message.tool_calls[0];
            let back = call.arguments_json().unwrap();
            assert_eq!(back["token"], "[redacted]");
            assert_eq!(back["list"][0], "a [redacted] b");
            assert_eq!(back["[redacted]"], 1);
            assert_eq!(
                r.message.reasoning_content.as_deref(),
                Some("thinking about [redacted]")
            );
            assert_eq!(call.name, "tool[redacted]");
        }
        // Arguments without the key are left byte for byte as the model wrote them.
        let mut r = ChatResponse {
            message: AssistantMessage {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "c".into(),
                    name: "t".into(),
                    arguments: "{ \"b\": 1,  \"a\": 2 }".into(),
                }],
                reasoning_content: None,
            },
            finish_reason: None,
            usage: Usage::default(),
            model: "m".into(),
            from_cache: false,
        };
        redact_response(&mut r, "sk-x");
        assert_eq!(r.message.tool_calls[0].arguments, "{ \"b\": 1,  \"a\": 2 }");
    }
}
