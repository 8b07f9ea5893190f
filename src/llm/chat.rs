//! The wire-neutral conversation types: messages in the OpenAI shape (`crate::message`,
//! re-exported here), a chat request with per-call sampling overrides, and the response a
//! role gets back.
//!
//! These types are what stages build and read. They serialise to exactly the OpenAI chat
//! JSON, so the provider sends them as they are. Architecture invariant: nothing here knows
//! about HTTP, caching or which provider answered.

pub use crate::message::{ChatMessage, MessageRole, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

fn no_tools(tools: &Arc<[Value]>) -> bool {
    tools.is_empty()
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

impl ChatResponse {
    /// Why this answer cannot be used as it is, when it cannot: it was cut at the token cap
    /// (`finish_reason` "length"), or it says nothing (no text, no tool call). Thinking alone
    /// is not an answer. Every role asks once more on such an answer, then errors with the
    /// reason (never passes it on as an empty turn or a half sentence).
    pub fn incomplete(&self) -> Option<String> {
        if self.finish_reason.as_deref() == Some("length") {
            return Some(format!(
                "the answer was cut at the token cap (finish_reason \"length\"{})",
                if self.message.reasoning_content.is_some() {
                    ", most of it thinking"
                } else {
                    ""
                }
            ));
        }
        let said = self
            .message
            .content
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty());
        if !said && self.message.tool_calls.is_empty() {
            return Some("the answer is empty (no text and no tool call)".to_string());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_cut_answer_is_incomplete() {
        let answer = |content: Option<&str>, finish: Option<&str>| ChatResponse {
            message: AssistantMessage {
                content: content.map(str::to_string),
                tool_calls: Vec::new(),
                reasoning_content: Some("hmm".into()),
            },
            finish_reason: finish.map(str::to_string),
            usage: Usage::default(),
            model: "m".into(),
            from_cache: false,
        };
        assert_eq!(answer(Some("Sure."), Some("stop")).incomplete(), None);
        assert!(
            answer(Some(" \n"), Some("stop"))
                .incomplete()
                .unwrap()
                .contains("empty")
        );
        assert!(answer(None, None).incomplete().unwrap().contains("empty"));
        let cut = answer(Some("You want to can"), Some("length"))
            .incomplete()
            .unwrap();
        assert!(
            cut.contains("token cap") && cut.contains("thinking"),
            "{cut}"
        );
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
