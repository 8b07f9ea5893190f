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
//!
//! For a server that refuses or ignores a request's `tools`, `prompt.rs` goes the other way:
//! it writes the tools and earlier calls into the prompt as the Hermes text the answer is
//! read back from.
//!
//! Architecture invariant: nothing here knows which role or stage asked.

mod prompt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::chat::{ChatResponse, ToolCall};
use crate::llm::error::LlmError;

pub use prompt::{hermes_tools_block, tools_in_prompt};

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

#[cfg(test)]
mod tests;
