//! What the server reads from and writes to the wire: request fields, the client's
//! assistant message, tasks as JSON, the JSON error of every refusal, and the verdict.

use super::{MAX_ARGUMENTS, MAX_TOOL_CALLS};
use crate::artifact::{RolloutRecord, TaskRecord};
use crate::harness::reward::RewardBreakdown;
use crate::harness::{ChatMessage, MessageRole, Usage};
use crate::http::{Request, Response};
use serde_json::{Value, json};

/// A request the server refuses: HTTP status, a machine-readable code, a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ServeError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ServeError {
        ServeError {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn bad(message: impl Into<String>) -> ServeError {
        ServeError::new(400, "bad_request", message)
    }
    pub fn response(&self) -> Response {
        error_response(self.status, self.code, &self.message)
    }
}

/// The JSON error every refusal answers with: `{"error": {"code", "message"}}`.
pub fn error_response(status: u16, code: &str, message: &str) -> Response {
    Response::json(
        status,
        &json!({ "error": { "code": code, "message": message } }),
    )
}

/// A request that could not be read at all (too large, malformed head).
pub(super) fn unreadable(status: u16, why: &str) -> Response {
    let code = match status {
        403 => "wrong_host",
        413 => "too_large",
        431 => "head_too_large",
        503 => "unavailable",
        _ => "bad_request",
    };
    error_response(status, code, why)
}

pub(super) fn field<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body.get(name).filter(|v| !v.is_null())
}

pub(super) fn str_field<'a>(body: &'a Value, name: &str) -> Result<&'a str, ServeError> {
    match field(body, name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(_) => Err(ServeError::bad(format!(
            "field '{name}' must be a non-empty string"
        ))),
        None => Err(ServeError::bad(format!("field '{name}' is missing"))),
    }
}

pub(super) fn opt_u64(body: &Value, name: &str) -> Result<Option<u64>, ServeError> {
    match field(body, name) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            ServeError::bad(format!("field '{name}' must be a non-negative integer"))
        }),
    }
}

pub(super) fn opt_bool(body: &Value, name: &str) -> Result<Option<bool>, ServeError> {
    match field(body, name) {
        None => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| ServeError::bad(format!("field '{name}' must be true or false"))),
    }
}

/// The JSON object of a request body.
pub fn json_body(req: &Request) -> Result<Value, ServeError> {
    let body: Value = serde_json::from_slice(&req.body)
        .map_err(|e| ServeError::bad(format!("the request body is not JSON: {e}")))?;
    if !body.is_object() {
        return Err(ServeError::bad("the request body must be a JSON object"));
    }
    Ok(body)
}

/// A task as `GET /tasks/<id>` shows it: its record, the JSON columns as JSON.
pub fn task_json(task: &TaskRecord) -> Value {
    serde_json::to_value(task).unwrap_or(Value::Null)
}

/// A task's line in `GET /tasks`.
pub(super) fn task_summary(task: &TaskRecord) -> Value {
    json!({
        "task_id": task.task_id,
        "domain": task.domain,
        "split": task.split.as_str(),
        "emotion_family": task.emotion_family,
        "emotion": task.emotion,
        "politeness": task.politeness,
        "urgency": task.urgency,
        "trust": task.trust,
        "intents": task.intents.len(),
    })
}

/// Check a client's assistant message: an assistant role, something said or called, tool
/// calls with names and bounded arguments. Whether the tool exists and the arguments parse
/// is the environment's to answer, in the transcript, as in rollouts.
pub fn check_assistant(message: &Value) -> Result<ChatMessage, ServeError> {
    let msg = <ChatMessage as serde::Deserialize>::deserialize(message).map_err(|e| {
        ServeError::new(
            400,
            "bad_message",
            format!("field 'message' is not an OpenAI chat message: {e}"),
        )
    })?;
    if msg.role != MessageRole::Assistant {
        return Err(ServeError::new(
            400,
            "bad_message",
            format!(
                "field 'message': role must be 'assistant', not '{}'",
                message["role"].as_str().unwrap_or("?")
            ),
        ));
    }
    let said = msg.content.as_deref().is_some_and(|c| !c.trim().is_empty());
    if !said && msg.tool_calls.is_empty() {
        return Err(ServeError::new(
            400,
            "bad_message",
            "field 'message': an assistant message needs content or tool_calls",
        ));
    }
    if msg.tool_calls.len() > MAX_TOOL_CALLS {
        return Err(ServeError::new(
            400,
            "too_many_tool_calls",
            format!(
                "field 'message': {} tool calls in one message; the limit is {MAX_TOOL_CALLS}",
                msg.tool_calls.len()
            ),
        ));
    }
    for call in &msg.tool_calls {
        if call.name.is_empty() || call.id.is_empty() {
            return Err(ServeError::new(
                400,
                "bad_message",
                "field 'message': every tool call needs an id and a function name",
            ));
        }
        if call.arguments.len() > MAX_ARGUMENTS {
            return Err(ServeError::new(
                400,
                "arguments_too_large",
                format!(
                    "the arguments of tool call '{}' ({}) are {} bytes; the limit is {MAX_ARGUMENTS}",
                    call.id,
                    call.name,
                    call.arguments.len()
                ),
            ));
        }
    }
    Ok(msg)
}

/// Bytes of text a message adds to a transcript: its content, thinking and tool calls.
pub(super) fn message_bytes(m: &ChatMessage) -> usize {
    let text = |t: &Option<String>| t.as_ref().map_or(0, String::len);
    text(&m.content)
        + text(&m.reasoning_content)
        + text(&m.tool_call_id)
        + text(&m.name)
        + m.tool_calls
            .iter()
            .map(|c| c.id.len() + c.name.len() + c.arguments.len())
            .sum::<usize>()
}

/// Token counts a client reports with a step (optional).
pub(super) fn usage_field(body: &Value) -> Result<Usage, ServeError> {
    let Some(u) = field(body, "usage") else {
        return Ok(Usage::default());
    };
    let count = |name: &str| -> Result<u64, ServeError> { Ok(opt_u64(u, name)?.unwrap_or(0)) };
    Ok(Usage {
        prompt_tokens: count("prompt_tokens")?,
        cached_prompt_tokens: count("cached_prompt_tokens")?,
        completion_tokens: count("completion_tokens")?,
    })
}

/// Who an episode's failure was, and why (`null` for an episode that scored 1): the
/// policy's (`agent`: the customer left, the step limit, a transfer, an agent error, the
/// state or outputs missed) or the infrastructure's (`infrastructure`: an endpoint that
/// failed — never a reward). `frictions` are what cost the customer's patience, in order.
pub fn failure(
    episode: &crate::harness::Episode,
    breakdown: &RewardBreakdown,
    frictions: &[&'static str],
) -> Value {
    use crate::harness::Termination as T;
    // The side that was to speak when an endpoint failed: after an assistant's text (or
    // the greeting) the customer was to answer.
    let customer_turn = episode
        .messages
        .last()
        .is_some_and(|m| m.role == MessageRole::Assistant && m.tool_calls.is_empty());
    let side = if customer_turn {
        "user_simulator"
    } else {
        "agent_endpoint"
    };
    let detail = episode.error.clone();
    match episode.termination {
        T::EndpointError => json!({
            "party": "infrastructure", "cause": "endpoint_error", "side": side, "detail": detail,
        }),
        T::ContextExceeded if customer_turn => json!({
            "party": "infrastructure", "cause": "context_exceeded", "side": side, "detail": detail,
        }),
        T::ContextExceeded => {
            json!({"party": "agent", "cause": "context_exceeded", "detail": detail})
        }
        T::AgentError => json!({"party": "agent", "cause": "agent_error", "detail": detail}),
        T::UserUnsatisfied => {
            let why = if frictions.contains(&"write_without_consent") {
                "the customer left: a change was made without asking its consent first"
            } else if frictions.is_empty() {
                "the customer left unsatisfied"
            } else {
                "the customer left: its patience ran out"
            };
            json!({"party": "agent", "cause": "customer_left", "frictions": frictions, "detail": why})
        }
        _ if breakdown.reward == 1 => Value::Null,
        T::MaxSteps => json!({"party": "agent", "cause": "step_limit", "frictions": frictions}),
        t => {
            let cause = if !breakdown.state_match {
                "state_mismatch"
            } else {
                "outputs_not_told"
            };
            json!({"party": "agent", "cause": cause, "termination": t.as_str(), "frictions": frictions})
        }
    }
}

/// Whether an episode's end was the infrastructure's failure (then it has no reward).
pub fn infrastructure_failed(failure: &Value) -> bool {
    failure["party"] == "infrastructure"
}

/// Who wrote each message of a transcript: `system`, `greeting` (the environment's fixed
/// opening), `policy` (the agent's messages: the only ones to train on), `tool`, `customer`
/// (the simulated user: never policy tokens).
pub fn sources(messages: &[ChatMessage]) -> Vec<&'static str> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| match m.role {
            MessageRole::System => "system",
            MessageRole::Assistant if i == 1 => "greeting",
            MessageRole::Assistant => "policy",
            MessageRole::Tool => "tool",
            MessageRole::User => "customer",
        })
        .collect()
}

/// What a finished (or cut) episode scores: reward, its parts, and its rollout record.
pub struct Verdict {
    pub breakdown: RewardBreakdown,
    pub record: RolloutRecord,
    /// See [`failure`].
    pub failure: Value,
    /// See [`sources`].
    pub sources: Vec<&'static str>,
}

impl Verdict {
    /// Score `episode` of `task` and make its rollout record.
    pub fn of(
        task: &TaskRecord,
        play: &super::Play,
        episode: &crate::harness::Episode,
        agent_model: String,
        user_model: String,
        frictions: &[&'static str],
    ) -> Verdict {
        let breakdown = crate::harness::reward::score(episode, &task.reference_hash, &task.outputs);
        Verdict {
            failure: failure(episode, &breakdown, frictions),
            sources: sources(&episode.messages),
            breakdown,
            record: crate::harness::batch::rollout_record(
                task,
                play.trial,
                episode,
                agent_model,
                user_model,
                play.emotion,
                None,
            ),
        }
    }

    /// The reward, or `None` when the infrastructure failed.
    pub fn reward(&self) -> Option<i32> {
        (!infrastructure_failed(&self.failure)).then_some(self.breakdown.reward)
    }

    pub fn json(&self) -> Value {
        json!({
            "reward": self.reward(),
            "breakdown": self.breakdown,
            "failure": self.failure,
            "termination": self.record.termination,
            "message_sources": self.sources,
            "record": self.record,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assistant_message_is_checked_before_anything_runs() {
        let ok = check_assistant(&json!({"role": "assistant", "content": null, "refusal": null,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "think", "arguments": "{}"}}]}))
        .unwrap();
        assert_eq!(ok.tool_calls[0].name, "think");
        let text = check_assistant(&json!({"role": "assistant", "content": "Hello"})).unwrap();
        assert_eq!(text.content.as_deref(), Some("Hello"));
        for (bad, code) in [
            (json!({"role": "user", "content": "hi"}), "bad_message"),
            (json!({"role": "assistant", "content": " "}), "bad_message"),
            (json!({"role": "assistant"}), "bad_message"),
            (json!(["role", "assistant"]), "bad_message"),
            (
                json!({"role": "assistant", "tool_calls": [{"id": "", "type": "function", "function": {"name": "think", "arguments": "{}"}}]}),
                "bad_message",
            ),
            (
                json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "think", "arguments": "x".repeat(MAX_ARGUMENTS + 1)}}]}),
                "arguments_too_large",
            ),
            (
                json!({"role": "assistant", "tool_calls": (0..=MAX_TOOL_CALLS)
                    .map(|i| json!({"id": format!("c{i}"), "type": "function", "function": {"name": "think", "arguments": "{}"}}))
                    .collect::<Vec<_>>()}),
                "too_many_tool_calls",
            ),
        ] {
            let e = check_assistant(&bad).unwrap_err();
            assert_eq!((e.status, e.code), (400, code), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn a_task_shows_its_json_columns_as_json() {
        let task = TaskRecord {
            task_id: "t1".into(),
            actions: vec![crate::task::Action {
                name: "think".into(),
                kwargs: json!({}),
            }],
            requests: vec![None],
            ..TaskRecord::default()
        };
        let v = task_json(&task);
        assert_eq!(v["actions"][0]["name"], "think");
        assert_eq!(v["requests"], json!([null]));
        assert_eq!(task_summary(&task)["task_id"], "t1");
    }
}
