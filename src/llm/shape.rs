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

use crate::llm::chat::{ChatMessage, ChatResponse, MessageRole, ToolCall};
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

const TOOL_CALL_OPEN: &str = "<tool_call>";
const TOOL_CALL_CLOSE: &str = "</tool_call>";

/// Hermes / Qwen: `<tool_call>{..}</tool_call>` blocks (an unclosed last block runs to the
/// end of the text).
fn hermes(context: &str, text: &str) -> Result<Option<TextCalls>, LlmError> {
    if !text.contains(TOOL_CALL_OPEN) {
        return Ok(None);
    }
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut cur = text;
    while let Some(open) = cur.find(TOOL_CALL_OPEN) {
        rest.push_str(&cur[..open]);
        let inner = &cur[open + TOOL_CALL_OPEN.len()..];
        let (body, next) = match inner.find(TOOL_CALL_CLOSE) {
            Some(close) => (&inner[..close], &inner[close + TOOL_CALL_CLOSE.len()..]),
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

/// The tools block [`tools_in_prompt`] adds to the system prompt, in our own words but in
/// the Hermes layout (`# Tools`, schemas inside `<tools>`, calls inside `<tool_call>`), so a
/// model trained on that format finds the markers it expects.
pub fn hermes_tools_block(tools: &[Value]) -> String {
    let mut block = String::from(
        "# Tools\n\nThe functions below are yours to call, one or several in an answer.\n\n\
         Their JSON schemas stand between <tools></tools> XML tags:\n<tools>",
    );
    for tool in tools {
        block.push('\n');
        block.push_str(&tool.to_string());
    }
    block.push_str(
        "\n</tools>\n\nTo call one, write its name and arguments as a JSON object inside \
         <tool_call></tool_call> XML tags, one block per call:\n<tool_call>\n\
         {\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
    );
    block
}

/// One call as a model writes it in the Hermes format.
fn hermes_call_text(call: &ToolCall) -> String {
    // Arguments the model wrote are JSON (checked when read); the raw text is kept if not.
    let arguments = serde_json::from_str::<Value>(&call.arguments)
        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
    // Name first, as the format's example in the prompt has it.
    let name = Value::String(call.name.clone());
    format!("{TOOL_CALL_OPEN}\n{{\"name\": {name}, \"arguments\": {arguments}}}\n{TOOL_CALL_CLOSE}")
}

/// The conversation of a request whose tools go in the prompt instead of the request's
/// `tools` (for a server that refuses `tools`, such as llama.cpp's `llama-server` without
/// `--jinja`, or whose template ignores them): the tools are listed in the system prompt in
/// the Hermes format ([`hermes_tools_block`]; a system message is added first if there is
/// none), every earlier assistant call is written back as the `<tool_call>` text the model
/// would have written, and each run of tool results becomes one user message of
/// `<tool_response>` blocks, as the Hermes and Qwen2.5 templates render them. Such servers
/// drop a message's `tool_calls` and, with many built-in templates, have no `tool` role, so
/// nothing is left in a field or role they would lose. The answer's `<tool_call>` text is
/// read back by [`normalize`] (`tool_call_format` `auto` or `hermes`).
pub fn tools_in_prompt(messages: &[ChatMessage], tools: &[Value]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len() + 1);
    let mut rest = messages;
    if !tools.is_empty() {
        let block = hermes_tools_block(tools);
        match messages.split_first() {
            Some((first, tail)) if first.role == MessageRole::System => {
                let text = match first.content.as_deref() {
                    Some(policy) if !policy.trim().is_empty() => format!("{policy}\n\n{block}"),
                    _ => block,
                };
                out.push(ChatMessage {
                    content: Some(text),
                    ..first.clone()
                });
                rest = tail;
            }
            _ => out.push(ChatMessage::system(block)),
        }
    }
    // Whether the last message out is a user message of tool results: the results of one
    // assistant message's calls share it.
    let mut in_results = false;
    for message in rest {
        match message.role {
            MessageRole::Assistant if !message.tool_calls.is_empty() => {
                let mut parts: Vec<String> = message
                    .content
                    .iter()
                    .filter(|c| !c.trim().is_empty())
                    .cloned()
                    .collect();
                parts.extend(message.tool_calls.iter().map(hermes_call_text));
                out.push(ChatMessage {
                    content: Some(parts.join("\n")),
                    tool_calls: Vec::new(),
                    ..message.clone()
                });
            }
            MessageRole::Tool => {
                let response = format!(
                    "<tool_response>\n{}\n</tool_response>",
                    message.content.as_deref().unwrap_or("")
                );
                match out.last_mut() {
                    Some(prev) if in_results => {
                        let joined =
                            format!("{}\n{response}", prev.content.as_deref().unwrap_or(""));
                        prev.content = Some(joined);
                    }
                    _ => out.push(ChatMessage::user(response)),
                }
            }
            _ => out.push(message.clone()),
        }
        in_results = message.role == MessageRole::Tool;
    }
    out
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

    #[test]
    fn tools_in_prompt_lists_the_tools_and_writes_calls_and_results_as_text() {
        let call = |id: &str, name: &str, args: &str| ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        };
        let messages = vec![
            ChatMessage::system("Airline policy."),
            ChatMessage::user("Cancel X1 for ab_1."),
            ChatMessage::assistant_tool_calls(
                Some("Let me look.".into()),
                vec![
                    call("text_call_0", "get_user_details", "{\"user_id\":\"ab_1\"}"),
                    call(
                        "text_call_1",
                        "cancel_reservation",
                        "{\"reservation_id\":\"X1\"}",
                    ),
                ],
            ),
            ChatMessage::tool("text_call_0", "get_user_details", "{\"name\": \"Ann\"}"),
            ChatMessage::tool("text_call_1", "cancel_reservation", "Error: not found"),
            ChatMessage::assistant("It was not found."),
        ];
        let sent = tools_in_prompt(&messages, &tools());
        let roles: Vec<MessageRole> = sent.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                MessageRole::System,
                MessageRole::User,
                MessageRole::Assistant,
                MessageRole::User,
                MessageRole::Assistant
            ],
            "the two results share one user message; no tool role is left"
        );
        let system = sent[0].content.as_deref().unwrap();
        assert!(system.starts_with("Airline policy.\n\n# Tools"), "{system}");
        assert!(system.contains("<tools>\n{"), "{system}");
        assert!(
            system.contains("\"name\":\"cancel_reservation\""),
            "{system}"
        );
        assert!(system.contains("</tools>"), "{system}");
        assert!(system.contains("<tool_call>\n{\"name\": <function-name>"));
        assert!(sent.iter().all(|m| m.tool_calls.is_empty()));
        assert_eq!(
            sent[2].content.as_deref(),
            Some(
                "Let me look.\n<tool_call>\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\":\"ab_1\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"cancel_reservation\", \"arguments\": {\"reservation_id\":\"X1\"}}\n</tool_call>"
            )
        );
        assert_eq!(
            sent[3].content.as_deref(),
            Some(
                "<tool_response>\n{\"name\": \"Ann\"}\n</tool_response>\n<tool_response>\nError: not found\n</tool_response>"
            )
        );
        // What the prompt asks for is what the parser reads back.
        let mut r = answer(sent[2].content.as_deref().unwrap());
        normalize(
            "r",
            &mut r,
            ReasoningFormat::Auto,
            ToolCallFormat::Hermes,
            &tools(),
        )
        .unwrap();
        assert_eq!(r.message.tool_calls.len(), 2);
        assert_eq!(
            calls(&r)[1],
            ("cancel_reservation".into(), json!({"reservation_id": "X1"}))
        );
        // Without a system message one is added; without tools nothing is added.
        let bare = tools_in_prompt(&messages[1..2], &tools());
        assert_eq!(bare[0].role, MessageRole::System);
        assert!(bare[0].content.as_deref().unwrap().starts_with("# Tools"));
        assert_eq!(tools_in_prompt(&messages[..2], &[]), messages[..2].to_vec());
    }
}
