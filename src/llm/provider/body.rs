//! A chat request's body, written once as the text that is both sent and keyed: canonical
//! JSON (every object's keys in sorted order), straight from the typed request.
//!
//! Why not a JSON tree: building the body as a `serde_json::Value` copied the whole
//! conversation and the tool list into a tree of maps on every call, then a sorted copy of
//! that tree for the cache key, then the text to send — at hundreds of episodes in flight
//! this allocation was most of the harness's CPU. Here the messages and tools are serialised
//! once, in key order, into one string; the cache key hashes that string and the same bytes
//! go on the wire.
//!
//! Invariant: the text equals the canonical JSON of the tree the body used to be
//! ([`super::openai::OpenAiModel::chat_body`] in the tests), so every cache key written
//! before stays the key of the same request. The tests compare the two on requests with
//! every kind of field.

use crate::llm::cache::Canonical;
use crate::llm::chat::{ChatMessage, MessageRole, ToolCall};
use crate::llm::config::SendReasoning;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

/// One top-level field of a body, before it is written.
pub enum Part<'a> {
    /// Any JSON (an `extra_body` entry, `tool_choice`, a sampling value).
    Json(Cow<'a, Value>),
    Str(&'a str),
    /// The conversation, with the reasoning each message keeps under the role's policy.
    Messages(Cow<'a, [ChatMessage]>, SendReasoning),
    /// JSON already written in canonical form (a role's tool list, [`tools_text`]).
    Written(std::sync::Arc<str>),
}

/// A written body.
pub struct ChatBody {
    json: Box<RawValue>,
    /// Where the values of `messages` and `tools` are in the text.
    messages: Option<Range<usize>>,
    tools: Option<Range<usize>>,
    message_count: usize,
    max_tokens: Option<u64>,
}

impl ChatBody {
    /// Write `parts` (later entries of one name replace earlier ones, as the map they go
    /// into does) as one canonical JSON object.
    pub fn write(parts: BTreeMap<&str, Part<'_>>) -> ChatBody {
        let mut out: Vec<u8> = Vec::with_capacity(4096);
        let (mut messages, mut tools, mut message_count, mut max_tokens) = (None, None, 0, None);
        out.push(b'{');
        for (i, (name, part)) in parts.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_json(&mut out, name);
            out.push(b':');
            let start = out.len();
            match part {
                Part::Json(v) => write_json(&mut out, &Canonical(v)),
                Part::Str(s) => write_json(&mut out, s),
                Part::Messages(list, policy) => {
                    let last_user = list.iter().rposition(|m| m.role == MessageRole::User);
                    out.push(b'[');
                    for (j, m) in list.iter().enumerate() {
                        if j > 0 {
                            out.push(b',');
                        }
                        let keep = keeps_reasoning(*policy, last_user, j);
                        write_json(&mut out, &Message(m, keep));
                    }
                    out.push(b']');
                }
                Part::Written(text) => out.extend_from_slice(text.as_bytes()),
            }
            let range = Some(start..out.len());
            match *name {
                "messages" => {
                    messages = range;
                    message_count = match part {
                        Part::Messages(list, _) => list.len(),
                        Part::Json(v) => v.as_array().map_or(0, Vec::len),
                        _ => 0,
                    };
                }
                "tools" => tools = range,
                "max_tokens" | "max_completion_tokens" => {
                    if let Part::Json(v) = part {
                        max_tokens = v.as_u64();
                    }
                }
                _ => {}
            }
        }
        out.push(b'}');
        // Serialising typed values and JSON trees always gives UTF-8 JSON.
        let text = String::from_utf8(out).unwrap_or_default();
        let json = RawValue::from_string(text)
            .unwrap_or_else(|_| RawValue::from_string("{}".into()).expect("valid JSON"));
        ChatBody {
            json,
            messages,
            tools,
            message_count,
            max_tokens,
        }
    }

    /// The JSON text (what the cache key hashes).
    pub fn text(&self) -> &str {
        self.json.get()
    }

    /// The body to send as it is.
    pub fn raw(&self) -> &RawValue {
        &self.json
    }

    /// The token cap (`max_tokens` or `max_completion_tokens`), when the body sets it.
    pub fn max_tokens(&self) -> Option<u64> {
        self.max_tokens
    }

    /// A rough prompt size: the JSON of the messages and tools at four characters a token,
    /// plus four per message (as the test helper `estimate_prompt_tokens` of `openai/tests.rs`
    /// counts a tree).
    pub fn estimate_prompt_tokens(&self) -> u64 {
        let chars = |r: &Option<Range<usize>>| {
            r.as_ref()
                .map_or(0, |r| self.text()[r.clone()].chars().count() as u64)
        };
        (chars(&self.messages) + chars(&self.tools)).div_ceil(4) + 4 * self.message_count as u64
    }
}

/// The layer's prompt-size estimate ([`ChatBody::estimate_prompt_tokens`]) of a conversation
/// kept as it grows, one message at a time: what `tracer plan` prices each turn of an
/// episode with, and the preflight probe holds a role's largest prompt against the model's
/// context window. Messages are counted without their reasoning (as a role that sends none
/// back writes them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PromptEstimate {
    /// Characters of the messages' JSON, without the list's brackets and commas.
    message_chars: u64,
    messages: u64,
    /// Characters of the `tools` list's JSON (0 when none is offered).
    tools_chars: u64,
}

impl PromptEstimate {
    /// An empty conversation offering `tools`.
    pub fn new(tools: &[Value]) -> PromptEstimate {
        let tools_chars = if tools.is_empty() {
            0
        } else {
            tools_text(tools).chars().count() as u64
        };
        PromptEstimate {
            tools_chars,
            ..PromptEstimate::default()
        }
    }

    /// The conversation with `m` appended.
    pub fn push(&mut self, m: &ChatMessage) {
        let mut out = Vec::with_capacity(256);
        write_json(&mut out, &Message(m, false));
        self.message_chars += String::from_utf8_lossy(&out).chars().count() as u64;
        self.messages += 1;
    }

    /// Estimated prompt tokens: the JSON of the messages and tools at four characters a
    /// token, plus four per message.
    pub fn tokens(&self) -> u64 {
        let list = 2 + self.message_chars + self.messages.saturating_sub(1);
        (list + self.tools_chars).div_ceil(4) + 4 * self.messages
    }
}

/// [`PromptEstimate`] of `messages` offering `tools`.
pub fn estimate_prompt_tokens(messages: &[ChatMessage], tools: &[Value]) -> u64 {
    let mut e = PromptEstimate::new(tools);
    for m in messages {
        e.push(m);
    }
    e.tokens()
}

/// The canonical JSON of OpenAI `tools` entries (a list).
pub fn tools_text(tools: &[Value]) -> String {
    let mut out = Vec::with_capacity(1024);
    out.push(b'[');
    for (j, t) in tools.iter().enumerate() {
        if j > 0 {
            out.push(b',');
        }
        write_json(&mut out, &Canonical(t));
    }
    out.push(b']');
    String::from_utf8(out).unwrap_or_default()
}

/// Whether message `i` keeps its reasoning under `policy` (`last_user`: the index of the
/// last user message): `never` strips every message's thinking, `within_turn` keeps it on
/// the messages after the last user message (the tool-call loop of the current turn), `all`
/// keeps it everywhere.
pub fn keeps_reasoning(policy: SendReasoning, last_user: Option<usize>, i: usize) -> bool {
    match policy {
        SendReasoning::Never => false,
        SendReasoning::All => true,
        SendReasoning::WithinTurn => last_user.is_none_or(|u| i > u),
    }
}

fn write_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Into a Vec, of values that always serialise: cannot fail.
    let _ = serde_json::to_writer(out, value);
}

/// A message in the OpenAI shape with its fields in key order; its reasoning only when
/// kept.
struct Message<'a>(&'a ChatMessage, bool);

impl Serialize for Message<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut map = s.serialize_map(None)?;
        if let Some(c) = &m.content {
            map.serialize_entry("content", c)?;
        }
        if let Some(n) = &m.name {
            map.serialize_entry("name", n)?;
        }
        if let (Some(r), true) = (&m.reasoning_content, self.1) {
            map.serialize_entry("reasoning_content", r)?;
        }
        map.serialize_entry("role", m.role.as_str())?;
        if let Some(id) = &m.tool_call_id {
            map.serialize_entry("tool_call_id", id)?;
        }
        if !m.tool_calls.is_empty() {
            map.serialize_entry("tool_calls", &Calls(&m.tool_calls))?;
        }
        map.end()
    }
}

struct Calls<'a>(&'a [ToolCall]);

impl Serialize for Calls<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for c in self.0 {
            seq.serialize_element(&Call(c))?;
        }
        seq.end()
    }
}

/// `{"function": {"arguments", "name"}, "id", "type": "function"}`.
struct Call<'a>(&'a ToolCall);

impl Serialize for Call<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Function<'a>(&'a ToolCall);
        impl Serialize for Function<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry("arguments", &self.0.arguments)?;
                map.serialize_entry("name", &self.0.name)?;
                map.end()
            }
        }
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("function", &Function(self.0))?;
        map.serialize_entry("id", &self.0.id)?;
        map.serialize_entry("type", "function")?;
        map.end()
    }
}
