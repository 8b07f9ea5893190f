//! The chat message in the OpenAI shape: what LLM roles send and receive, and what an
//! episode's transcript (the rollout `messages` column) holds, one type for both. It
//! serialises to exactly the OpenAI chat JSON (`tool_calls: [{id, type: "function",
//! function: {name, arguments}}]`), so a provider sends it as it is and the column stores it
//! as it was said.
//!
//! Architecture invariant: a leaf: depends on nothing in the crate, so the LLM layer, the
//! harness and `artifact` (which encodes transcripts) share it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
}
