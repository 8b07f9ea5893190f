//! Tools in the prompt ([`tools_in_prompt`]): for a server that refuses a request's `tools`
//! or ignores them, the tools, earlier calls and their results written as the Hermes text
//! a model trained on that format reads and writes.

use super::{TOOL_CALL_CLOSE, TOOL_CALL_OPEN};
use crate::llm::chat::{ChatMessage, MessageRole, ToolCall};
use serde_json::Value;

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
/// read back by [`normalize`](super::normalize) (`tool_call_format` `auto` or `hermes`).
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
