//! The wire-neutral conversation types: messages in the OpenAI shape, a chat request with
//! per-call sampling overrides, and the response a role gets back.
//!
//! These types are what stages build and read. They serialise to exactly the OpenAI chat
//! JSON (`tool_calls: [{id, type: "function", function: {name, arguments}}]`), so the
//! provider sends them as they are. Architecture invariant: nothing here knows about HTTP,
//! caching or which provider answered.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

fn no_tools(tools: &Arc<[Value]>) -> bool {
    tools.is_empty()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageRole {
    System,
    User,
    Assistant,
    Tool,
}

/// One tool call of an assistant message. `arguments` is the JSON text as the model wrote
/// it; the provider has checked that it parses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "WireToolCall", from = "WireToolCall")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    /// The arguments as JSON (an object for well-formed calls).
    pub fn arguments_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.arguments)
    }
}

#[derive(Clone, Serialize, Deserialize)]
struct WireToolCall {
    id: String,
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: WireFunction,
}

#[derive(Clone, Serialize, Deserialize)]
struct WireFunction {
    name: String,
    arguments: String,
}

fn function_type() -> String {
    "function".to_string()
}

impl From<ToolCall> for WireToolCall {
    fn from(c: ToolCall) -> WireToolCall {
        WireToolCall {
            id: c.id,
            kind: function_type(),
            function: WireFunction {
                name: c.name,
                arguments: c.arguments,
            },
        }
    }
}

impl From<WireToolCall> for ToolCall {
    fn from(w: WireToolCall) -> ToolCall {
        ToolCall {
            id: w.id,
            name: w.function.name,
            arguments: w.function.arguments,
        }
    }
}

impl MessageRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageRole::System => "system",
            MessageRole::User => "user",
            MessageRole::Assistant => "assistant",
            MessageRole::Tool => "tool",
        }
    }
}

impl std::fmt::Display for MessageRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A chat message in the OpenAI shape: what roles send and receive, and what episode
/// transcripts (rollout `messages` columns) hold, one type for both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: MessageRole,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The reasoning a model returned with this assistant turn. Kept in transcripts, never
    /// sent back: [`ChatMessage::without_reasoning`] is what goes into a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

impl ChatMessage {
    pub fn text(role: MessageRole, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            reasoning_content: None,
        }
    }

    /// The same message carrying the reasoning that produced it.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> ChatMessage {
        self.reasoning_content = Some(reasoning.into());
        self
    }

    /// This message as it is sent to a model: the same, without its reasoning.
    pub fn without_reasoning(&self) -> ChatMessage {
        ChatMessage {
            reasoning_content: None,
            ..self.clone()
        }
    }

    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage::text(MessageRole::System, content)
    }

    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::text(MessageRole::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage::text(MessageRole::Assistant, content)
    }

    /// An assistant turn that calls tools (content may accompany the calls).
    pub fn assistant_tool_calls(content: Option<String>, tool_calls: Vec<ToolCall>) -> ChatMessage {
        ChatMessage {
            role: MessageRole::Assistant,
            content,
            tool_calls,
            tool_call_id: None,
            name: None,
            reasoning_content: None,
        }
    }

    /// The observation of one tool call.
    pub fn tool(
        tool_call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> ChatMessage {
        ChatMessage {
            role: MessageRole::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(tool_call_id.into()),
            name: Some(name.into()),
            reasoning_content: None,
        }
    }
}

/// Sampling parameters. In a [`ChatRequest`] each `Some` overrides the role's config.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Sampling {
    /// `self` where set, otherwise `defaults`.
    pub fn or(&self, defaults: &Sampling) -> Sampling {
        Sampling {
            temperature: self.temperature.or(defaults.temperature),
            top_p: self.top_p.or(defaults.top_p),
            top_k: self.top_k.or(defaults.top_k),
            min_p: self.min_p.or(defaults.min_p),
            max_tokens: self.max_tokens.or(defaults.max_tokens),
            seed: self.seed.or(defaults.seed),
        }
    }
}

/// One chat call. Identical requests (same messages, tools and resolved sampling) are
/// answered from the cache, so a caller that wants different samples of the same prompt
/// varies `sampling.seed` (derived per item, like every other random choice).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    /// OpenAI `tools` entries (`{"type": "function", "function": {...}}`), sent as given.
    /// Shared: a role offers the same list on every call, so a request holds it, not a copy.
    #[serde(default, skip_serializing_if = "no_tools")]
    pub tools: Arc<[Value]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(default)]
    pub sampling: Sampling,
}

impl ChatRequest {
    pub fn new(messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            messages,
            ..ChatRequest::default()
        }
    }

    pub fn with_tools(mut self, tools: impl Into<Arc<[Value]>>) -> ChatRequest {
        self.tools = tools.into();
        self
    }

    pub fn with_seed(mut self, seed: u64) -> ChatRequest {
        self.sampling.seed = Some(seed);
        self
    }

    pub fn with_sampling(mut self, sampling: Sampling) -> ChatRequest {
        self.sampling = sampling;
        self
    }
}

/// The assistant message of a response.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Thinking text, when the server returns it separately (`reasoning_content` in vLLM /
    /// llama.cpp / DeepSeek, `reasoning` in newer vLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

impl AssistantMessage {
    /// The message to append to the conversation (reasoning is not sent back).
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::assistant_tool_calls(self.content.clone(), self.tool_calls.clone())
    }
}

/// Token counts of an answer (prompt, of which served from the server's prompt cache,
/// completion); one type with the cost arithmetic, so cached answers keep theirs.
pub use crate::cost::Usage;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub message: AssistantMessage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    #[serde(default)]
    pub usage: Usage,
    /// The model id the server reported; `scripted:<role>` for scripted roles.
    pub model: String,
    /// True when answered from the response cache without a request.
    #[serde(default)]
    pub from_cache: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_serialise_in_openai_shape() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "get_user_details".into(),
            arguments: "{\"user_id\":\"u1\"}".into(),
        };
        let m = ChatMessage::assistant_tool_calls(None, vec![call.clone()]);
        assert_eq!(
            serde_json::to_value(&m).unwrap(),
            json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_user_details", "arguments": "{\"user_id\":\"u1\"}"}}]})
        );
        let t = ChatMessage::tool("call_1", "get_user_details", "{}");
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"role": "tool", "content": "{}", "tool_call_id": "call_1", "name": "get_user_details"})
        );
        let back: ChatMessage = serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(call.arguments_json().unwrap(), json!({"user_id": "u1"}));
    }

    #[test]
    fn overrides_win_over_defaults() {
        let defaults = Sampling {
            temperature: Some(0.7),
            seed: Some(1),
            ..Sampling::default()
        };
        let over = Sampling {
            seed: Some(9),
            ..Sampling::default()
        };
        let s = over.or(&defaults);
        assert_eq!((s.temperature, s.seed), (Some(0.7), Some(9)));
    }
}
