//! Answer shapes: where a server put the model's thinking and its tool calls.
//!
//! A server started with a reasoning parser and a tool-call parser returns thinking in
//! `reasoning_content` (or `reasoning`) and calls in `tool_calls`. One started without them
//! leaves both in `content`: thinking as `<think>...</think>` (or only a closing tag, when the
//! chat template opened the block in the prompt), calls in the model's own text format. This
//! module moves them where they belong, per role:
//!
//! - [`ReasoningFormat`]: `auto` (the fields, then `<think>` text), `fields`, `tags`.
//! - [`ToolCallFormat`]: `auto` (the field, then any text format below, but only when the
//!   request offered tools), `field` (never read text: a text call is a
//!   [`LlmError::TextToolCall`] whose hint names the server flag), `hermes`
//!   (`<tool_call>{"name": .., "arguments": ..}</tool_call>`, Hermes / Qwen), `llama3` (the
//!   whole answer is `{"name": .., "parameters": ..}`, optionally after `<|python_tag|>`,
//!   one object or a list, or several joined by `;`), `mistral` (`[TOOL_CALLS][{..}]` or
//!   `[TOOL_CALLS]name[ARGS]{..}`).
//!
//! A text call gets the id `text_call_<i>`; its arguments are checked like a field call's
//! (a JSON object, or the answer is malformed). Llama 3 JSON is read only when every object
//! names an offered tool: a plain JSON answer to a question stays text.
//!
//! Normalising is deterministic and runs on every answer, cached or not, so the cache holds
//! what the server said and a changed format setting applies to old answers too.
//! Architecture invariant: nothing here knows which role or stage asked.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::chat::{ChatResponse, ToolCall};
use crate::llm::error::LlmError;

/// Where a role's thinking is read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningFormat {
    /// The `reasoning_content` / `reasoning` field, then `<think>` blocks left in `content`.
    #[default]
    Auto,
    /// Only the fields; `content` is taken as it is.
    Fields,
    /// Only `<think>` blocks in `content` (a field, if the server sent one, is kept too).
    Tags,
}

/// Where a role's tool calls are read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallFormat {
    /// The `tool_calls` field; when it is empty and the request offered tools, any of the
    /// text formats.
    #[default]
    Auto,
    /// Only the `tool_calls` field. A call left in the text is an error naming the flag.
    Field,
    Hermes,
    Llama3,
    Mistral,
}

const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

/// Move `<think>` text out of `content` into the reasoning, per `format`.
fn split_thinking(resp: &mut ChatResponse, format: ReasoningFormat) {
    if format == ReasoningFormat::Fields {
        return;
    }
    let Some(content) = resp.message.content.take() else {
        return;
    };
    let (thinking, rest) = extract_think(&content);
    if thinking.is_empty() && rest == content {
        resp.message.content = Some(content);
        return;
    }
    let reasoning = match (resp.message.reasoning_content.take(), thinking.is_empty()) {
        (Some(field), false) if !field.trim().is_empty() => format!("{field}\n{thinking}"),
        (Some(field), true) => field,
        (_, _) => thinking,
    };
    resp.message.reasoning_content = (!reasoning.trim().is_empty()).then_some(reasoning);
    let rest = rest.trim();
    resp.message.content = (!rest.is_empty()).then(|| rest.to_string());
}

/// `(thinking, the rest)` of a text: every `<think>...</think>` block, an unclosed
/// `<think>` (thinking cut off by `max_tokens`: all of it is thinking), and a leading
/// block closed without an opening tag (the template opened it in the prompt).
pub fn extract_think(text: &str) -> (String, String) {
    let mut thinking: Vec<&str> = Vec::new();
    let mut rest = String::new();
    let mut cur = text;
    if let Some(close) = cur.find(THINK_CLOSE)
        && !cur[..close].contains(THINK_OPEN)
    {
        thinking.push(cur[..close].trim());
        cur = &cur[close + THINK_CLOSE.len()..];
    }
    while let Some(open) = cur.find(THINK_OPEN) {
        rest.push_str(&cur[..open]);
        let inner = &cur[open + THINK_OPEN.len()..];
        match inner.find(THINK_CLOSE) {
            Some(close) => {
                thinking.push(inner[..close].trim());
                cur = &inner[close + THINK_CLOSE.len()..];
            }
            None => {
                thinking.push(inner.trim());
                cur = "";
            }
        }
    }
    rest.push_str(cur);
    let thinking: Vec<&str> = thinking.into_iter().filter(|t| !t.is_empty()).collect();
    (thinking.join("\n"), rest)
}

/// What a text tool-call parse found: the calls and the text around them.
struct TextCalls {
    calls: Vec<(String, String)>,
    rest: String,
}

fn malformed(context: &str, detail: String) -> LlmError {
    LlmError::Malformed {
        context: context.to_string(),
        detail,
    }
}

/// One `{"name": .., "arguments" | "parameters": ..}` object as (name, arguments JSON).
fn call_object(context: &str, format: &str, v: &Value) -> Result<(String, String), LlmError> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| malformed(context, format!("{format} tool call without a name: {v}")))?;
    let args = match v.get("arguments").or_else(|| v.get("parameters")) {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
            malformed(
                context,
                format!("{format} tool call '{name}': arguments are not valid JSON ({e})"),
            )
        })?,
        Some(other) => other.clone(),
    };
    if !args.is_object() {
        return Err(malformed(
            context,
            format!("{format} tool call '{name}': arguments are not a JSON object"),
        ));
    }
    Ok((name.to_string(), args.to_string()))
}

fn parse_json(context: &str, format: &str, text: &str) -> Result<Value, LlmError> {
    serde_json::from_str(text.trim()).map_err(|e| {
        malformed(
            context,
            format!(
                "{format} tool call is not valid JSON ({e}): {}",
                super::provider::transport::shorten(text)
            ),
        )
    })
}

/// Hermes / Qwen: `<tool_call>{..}</tool_call>` blocks (an unclosed last block runs to the
/// end of the text).
fn hermes(context: &str, text: &str) -> Result<Option<TextCalls>, LlmError> {
    const OPEN: &str = "<tool_call>";
    const CLOSE: &str = "</tool_call>";
    if !text.contains(OPEN) {
        return Ok(None);
    }
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut cur = text;
    while let Some(open) = cur.find(OPEN) {
        rest.push_str(&cur[..open]);
        let inner = &cur[open + OPEN.len()..];
        let (body, next) = match inner.find(CLOSE) {
            Some(close) => (&inner[..close], &inner[close + CLOSE.len()..]),
            None => (inner, ""),
        };
        let v = parse_json(context, "hermes", body)?;
        calls.push(call_object(context, "hermes", &v)?);
        cur = next;
    }
    rest.push_str(cur);
    Ok(Some(TextCalls { calls, rest }))
}

/// Mistral: `[TOOL_CALLS][{..}, ..]` (v3 tokenizers) or `[TOOL_CALLS]name[ARGS]{..}`
/// (v11+), possibly repeated.
fn mistral(context: &str, text: &str) -> Result<Option<TextCalls>, LlmError> {
    const TAG: &str = "[TOOL_CALLS]";
    const ARGS: &str = "[ARGS]";
    let Some(start) = text.find(TAG) else {
        return Ok(None);
    };
    let rest = text[..start].to_string();
    let mut calls = Vec::new();
    for chunk in text[start..].split(TAG).filter(|c| !c.trim().is_empty()) {
        let chunk = chunk.trim();
        if let Some((name, args)) = chunk.split_once(ARGS) {
            let args = parse_json(context, "mistral", args)?;
            let v = serde_json::json!({"name": name.trim(), "arguments": args});
            calls.push(call_object(context, "mistral", &v)?);
            continue;
        }
        match parse_json(context, "mistral", chunk)? {
            Value::Array(items) => {
                for item in &items {
                    calls.push(call_object(context, "mistral", item)?);
                }
            }
            v => calls.push(call_object(context, "mistral", &v)?),
        }
    }
    Ok(Some(TextCalls { calls, rest }))
}

/// Llama 3 JSON: the whole answer is the call(s); read only if each names an offered tool.
fn llama3(context: &str, text: &str, offered: &[&str]) -> Result<Option<TextCalls>, LlmError> {
    let body = text.trim();
    let body = body.strip_prefix("<|python_tag|>").unwrap_or(body).trim();
    if !(body.starts_with('{') || body.starts_with('[')) {
        return Ok(None);
    }
    let objects: Vec<Value> = match serde_json::from_str::<Value>(body) {
        Ok(Value::Array(items)) => items,
        Ok(v @ Value::Object(_)) => vec![v],
        Ok(_) => return Ok(None),
        // Several calls joined by ';' (Llama 3.2's habit).
        Err(_) => match body
            .split(';')
            .map(|p| serde_json::from_str::<Value>(p.trim()))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(items) => items,
            Err(_) => return Ok(None),
        },
    };
    let names_offered = !objects.is_empty()
        && objects.iter().all(|o| {
            o.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| offered.contains(&n))
                && (o.get("parameters").is_some() || o.get("arguments").is_some())
        });
    if !names_offered {
        return Ok(None);
    }
    let calls = objects
        .iter()
        .map(|o| call_object(context, "llama3", o))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(TextCalls {
        calls,
        rest: String::new(),
    }))
}

/// The names of the functions a request's `tools` offer.
pub fn offered_names(tools: &[Value]) -> Vec<&str> {
    tools
        .iter()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
        .collect()
}

/// Whether a text looks like a tool call a server's parser should have taken.
fn looks_like_text_call(text: &str, offered: &[&str]) -> bool {
    text.contains("<tool_call>")
        || text.contains("[TOOL_CALLS]")
        || text.contains("<|python_tag|>")
        || llama3("", text, offered).ok().flatten().is_some()
}

/// The one-line hint of a [`LlmError::TextToolCall`].
pub const TEXT_CALL_HINT: &str = "start vLLM with `--enable-auto-tool-choice --tool-call-parser <hermes|llama3_json|mistral|...>` or llama.cpp's llama-server with `--jinja`, or set `tool_call_format = \"auto\"` for this role";

/// Bring a response into the shape the pipeline reads: thinking in `reasoning_content`,
/// calls in `tool_calls`. `tools` is what the request offered.
pub fn normalize(
    context: &str,
    resp: &mut ChatResponse,
    reasoning: ReasoningFormat,
    tool_calls: ToolCallFormat,
    tools: &[Value],
) -> Result<(), LlmError> {
    split_thinking(resp, reasoning);
    if !resp.message.tool_calls.is_empty() || tools.is_empty() {
        return Ok(());
    }
    let Some(text) = resp.message.content.clone() else {
        return Ok(());
    };
    let offered = offered_names(tools);
    let found = match tool_calls {
        ToolCallFormat::Field => {
            if looks_like_text_call(&text, &offered) {
                return Err(LlmError::TextToolCall {
                    context: context.to_string(),
                    hint: TEXT_CALL_HINT.to_string(),
                });
            }
            None
        }
        ToolCallFormat::Hermes => hermes(context, &text)?,
        ToolCallFormat::Mistral => mistral(context, &text)?,
        ToolCallFormat::Llama3 => llama3(context, &text, &offered)?,
        ToolCallFormat::Auto => match hermes(context, &text)? {
            Some(found) => Some(found),
            None => match mistral(context, &text)? {
                Some(found) => Some(found),
                None => llama3(context, &text, &offered)?,
            },
        },
    };
    let Some(found) = found else {
        return Ok(());
    };
    resp.message.tool_calls = found
        .calls
        .into_iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall {
            id: format!("text_call_{i}"),
            name,
            arguments,
        })
        .collect();
    let rest = found.rest.trim();
    resp.message.content = (!rest.is_empty()).then(|| rest.to_string());
    if resp.finish_reason.as_deref() == Some("stop") {
        resp.finish_reason = Some("tool_calls".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::chat::AssistantMessage;
    use crate::llm::error::ErrorKind;
    use serde_json::json;

    fn answer(content: &str) -> ChatResponse {
        ChatResponse {
            message: AssistantMessage {
                content: Some(content.to_string()),
                ..AssistantMessage::default()
            },
            finish_reason: Some("stop".into()),
            usage: Default::default(),
            model: "m".into(),
            from_cache: false,
        }
    }

    fn tools() -> Vec<Value> {
        ["get_user_details", "cancel_reservation"]
            .iter()
            .map(|n| json!({"type": "function", "function": {"name": n, "parameters": {}}}))
            .collect()
    }

    fn calls(r: &ChatResponse) -> Vec<(String, Value)> {
        r.message
            .tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments_json().unwrap()))
            .collect()
    }

    fn norm(content: &str, fmt: ToolCallFormat) -> Result<ChatResponse, LlmError> {
        let mut r = answer(content);
        normalize("role 'agent'", &mut r, ReasoningFormat::Auto, fmt, &tools())?;
        Ok(r)
    }

    #[test]
    fn think_blocks_leave_the_content() {
        let mut r = answer("<think>Check the policy.</think>\n\nYour flight is HAT030.");
        normalize(
            "r",
            &mut r,
            ReasoningFormat::Auto,
            ToolCallFormat::Auto,
            &[],
        )
        .unwrap();
        assert_eq!(r.message.content.as_deref(), Some("Your flight is HAT030."));
        assert_eq!(
            r.message.reasoning_content.as_deref(),
            Some("Check the policy.")
        );
        // The template opened the block: only the closing tag is in the answer.
        let (t, rest) = extract_think("The user wants a refund.</think>Sure.");
        assert_eq!(
            (t.as_str(), rest.as_str()),
            ("The user wants a refund.", "Sure.")
        );
        // Cut off by max_tokens: all thinking, no content.
        let mut r = answer("<think>Let me see, the booking");
        normalize(
            "r",
            &mut r,
            ReasoningFormat::Auto,
            ToolCallFormat::Auto,
            &[],
        )
        .unwrap();
        assert_eq!(r.message.content, None);
        assert_eq!(
            r.message.reasoning_content.as_deref(),
            Some("Let me see, the booking")
        );
        // A field is kept and the tags are added after it.
        let mut r = answer("<think>b</think>ok");
        r.message.reasoning_content = Some("a".into());
        normalize(
            "r",
            &mut r,
            ReasoningFormat::Tags,
            ToolCallFormat::Auto,
            &[],
        )
        .unwrap();
        assert_eq!(r.message.reasoning_content.as_deref(), Some("a\nb"));
        // `fields` leaves the text alone.
        let mut r = answer("<think>b</think>ok");
        normalize(
            "r",
            &mut r,
            ReasoningFormat::Fields,
            ToolCallFormat::Auto,
            &[],
        )
        .unwrap();
        assert_eq!(r.message.content.as_deref(), Some("<think>b</think>ok"));
    }

    #[test]
    fn hermes_calls_with_text_and_thinking_around_them() {
        let r = norm(
            "<think>Need the user first.</think>Let me look.\n<tool_call>\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"ab_1\"}}\n</tool_call>\n<tool_call>{\"name\": \"cancel_reservation\", \"arguments\": \"{\\\"reservation_id\\\": \\\"X1\\\"}\"}</tool_call>",
            ToolCallFormat::Auto,
        )
        .unwrap();
        assert_eq!(
            calls(&r),
            [
                ("get_user_details".into(), json!({"user_id": "ab_1"})),
                ("cancel_reservation".into(), json!({"reservation_id": "X1"}))
            ]
        );
        assert_eq!(r.message.content.as_deref(), Some("Let me look."));
        assert_eq!(
            r.message.reasoning_content.as_deref(),
            Some("Need the user first.")
        );
        assert_eq!(r.message.tool_calls[1].id, "text_call_1");
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn llama3_json_only_when_it_names_an_offered_tool() {
        for text in [
            "{\"name\": \"get_user_details\", \"parameters\": {\"user_id\": \"ab_1\"}}",
            "<|python_tag|>{\"name\": \"get_user_details\", \"parameters\": {\"user_id\": \"ab_1\"}}",
            "[{\"name\": \"get_user_details\", \"parameters\": {\"user_id\": \"ab_1\"}}]",
        ] {
            let r = norm(text, ToolCallFormat::Auto).unwrap();
            assert_eq!(
                calls(&r),
                [("get_user_details".into(), json!({"user_id": "ab_1"}))],
                "{text}"
            );
            assert_eq!(r.message.content, None);
        }
        let two = norm(
            "{\"name\": \"get_user_details\", \"parameters\": {}}; {\"name\": \"cancel_reservation\", \"parameters\": {\"reservation_id\": \"X\"}}",
            ToolCallFormat::Llama3,
        )
        .unwrap();
        assert_eq!(two.message.tool_calls.len(), 2);
        // JSON that is not a call of an offered tool stays text.
        for text in [
            "{\"name\": \"Ann\", \"parameters\": {}}",
            "{\"total\": 3}",
            "[1, 2]",
        ] {
            let r = norm(text, ToolCallFormat::Auto).unwrap();
            assert!(r.message.tool_calls.is_empty(), "{text}");
            assert_eq!(r.message.content.as_deref(), Some(text));
        }
    }

    #[test]
    fn mistral_both_generations() {
        let old = norm(
            "[TOOL_CALLS][{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"ab_1\"}}, {\"name\": \"cancel_reservation\", \"arguments\": {\"reservation_id\": \"X\"}}]",
            ToolCallFormat::Auto,
        )
        .unwrap();
        assert_eq!(old.message.tool_calls.len(), 2);
        let new = norm(
            "[TOOL_CALLS]get_user_details[ARGS]{\"user_id\": \"ab_1\"}[TOOL_CALLS]cancel_reservation[ARGS]{\"reservation_id\": \"X\"}",
            ToolCallFormat::Mistral,
        )
        .unwrap();
        assert_eq!(calls(&new), calls(&old));
    }

    #[test]
    fn text_without_calls_and_requests_without_tools_stay_text() {
        let r = norm("Your reservation is cancelled.", ToolCallFormat::Auto).unwrap();
        assert!(r.message.tool_calls.is_empty());
        // No tools offered (a user simulator or a refiner): nothing is read as a call.
        let mut r = answer("<tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call>");
        normalize(
            "r",
            &mut r,
            ReasoningFormat::Auto,
            ToolCallFormat::Auto,
            &[],
        )
        .unwrap();
        assert!(r.message.tool_calls.is_empty());
        // A field call wins; the text is not read.
        let mut r =
            answer("<tool_call>{\"name\": \"cancel_reservation\", \"arguments\": {}}</tool_call>");
        r.message.tool_calls = vec![ToolCall {
            id: "a".into(),
            name: "get_user_details".into(),
            arguments: "{}".into(),
        }];
        normalize(
            "r",
            &mut r,
            ReasoningFormat::Auto,
            ToolCallFormat::Auto,
            &tools(),
        )
        .unwrap();
        assert_eq!(r.message.tool_calls.len(), 1);
    }

    #[test]
    fn broken_text_calls_are_malformed_and_field_mode_names_the_flag() {
        for text in [
            "<tool_call>{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"ab</tool_call>",
            "<tool_call>{\"arguments\": {}}</tool_call>",
            "[TOOL_CALLS]get_user_details[ARGS]{\"user_id\"",
            "<tool_call>{\"name\": \"get_user_details\", \"arguments\": [1]}</tool_call>",
        ] {
            let err = norm(text, ToolCallFormat::Auto).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Malformed, "{text}: {err}");
        }
        let err = norm(
            "<tool_call>{\"name\": \"get_user_details\", \"arguments\": {}}</tool_call>",
            ToolCallFormat::Field,
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TextToolCall);
        let line = err.to_string();
        assert!(
            line.contains("--tool-call-parser") && line.contains("--jinja"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        // Plain text in field mode is fine.
        assert!(norm("Hello.", ToolCallFormat::Field).is_ok());
    }
}
