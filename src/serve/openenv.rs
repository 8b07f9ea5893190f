//! The OpenEnv face of `tracer serve`: what `openenv validate --url` checks (`GET
//! /metadata`, `/schema`, `/openapi.json`, `/health` answering `healthy`, a server-wide
//! `POST /mcp`) and the stateful protocol OpenEnv's `EnvClient` speaks over the WebSocket
//! `/ws`: one connection is one session; the client sends `{"type": "reset" | "step" |
//! "state" | "close", "data": {...}}` and hears `{"type": "observation" | "state" |
//! "error", "data": {...}}`. An episode here is the same [`super::Session`] the HTTP routes
//! drive, so it gives the same transcript, state and reward.
//!
//! A reset's `data` takes the HTTP reset's fields (`task_id`, `seed`, `trial`, `emotion`,
//! `domain`, `agent_model`); without `task_id` it plays the served task at `seed` (modulo
//! the number of tasks; the first without a seed). A step's `data` is the assistant message
//! (`content` and/or `tool_calls`; `role` may be left out), or `{"message": ...}`, with an
//! optional `usage`. The reward comes with the step that ends the episode, with the
//! verdict (breakdown, whose failure, the record, who wrote each message) in `metadata`.
//! Garbage gets an error message and the connection goes on; a protocol violation, a
//! message over the size limit or a client that does not read closes this connection only.

use super::wire::{ServeError, field};
use super::{MAX_ARGUMENTS, MAX_TOOL_CALLS, Server};
use crate::http::ws::Socket;
use serde_json::{Value, json};
use std::sync::Arc;

/// The OpenAPI `info.version` of this HTTP interface (OpenEnv reads `1.x` as its profile).
pub const API_VERSION: &str = "1.0.0";

/// `GET /metadata`.
pub fn metadata(server: &Server) -> Value {
    let tasks: usize = server.domains.iter().map(|d| d.tasks.len()).sum();
    json!({
        "name": "tracer",
        "description": format!(
            "Customer-service episodes with an emotion-conditioned simulated customer ({tasks} verified tasks of {}): the policy talks to the customer and calls the domain's tools; the reward (1 / 0 / -1) comes when the episode ends.",
            server.domains.iter().map(|d| d.domain.name()).collect::<Vec<_>>().join(", ")
        ),
        "version": env!("CARGO_PKG_VERSION"),
        "author": "Tracer (tau-Emotion-Bench)",
        "domains": server.domains.iter().map(|d| d.domain.name()).collect::<Vec<_>>(),
        "tasks": tasks,
        "user_model": server.user_model(),
    })
}

fn message_schema() -> Value {
    json!({
        "type": "object",
        "description": "An OpenAI assistant message: text for the customer, or tool calls.",
        "properties": {
            "role": {"type": "string", "enum": ["assistant"]},
            "content": {"type": ["string", "null"]},
            "tool_calls": {
                "type": "array",
                "maxItems": MAX_TOOL_CALLS,
                "items": {
                    "type": "object",
                    "required": ["id", "type", "function"],
                    "properties": {
                        "id": {"type": "string"},
                        "type": {"type": "string", "enum": ["function"]},
                        "function": {
                            "type": "object",
                            "required": ["name", "arguments"],
                            "properties": {
                                "name": {"type": "string"},
                                "arguments": {"type": "string", "description": format!("JSON text, at most {MAX_ARGUMENTS} bytes")},
                            },
                        },
                    },
                },
            },
        },
    })
}

/// `GET /schema`: the action, observation and state of a `/ws` session.
pub fn schema() -> Value {
    let mut action = message_schema();
    action["properties"]["message"] = message_schema();
    action["properties"]["usage"] = json!({
        "type": "object",
        "properties": {
            "prompt_tokens": {"type": "integer"},
            "cached_prompt_tokens": {"type": "integer"},
            "completion_tokens": {"type": "integer"},
        },
    });
    let messages = json!({"type": "array", "items": {"type": "object"}});
    json!({
        "action": action,
        "observation": {
            "type": "object",
            "properties": {
                "messages": messages,
                "message_sources": {"type": "array", "items": {"type": "string", "enum": ["system", "greeting", "policy", "tool", "customer"]}},
                "tool_errors": {"type": "array", "items": {"type": "boolean"}},
                "steps": {"type": "integer"},
                "termination": {"type": ["string", "null"]},
                "failure": {"type": ["object", "null"]},
            },
        },
        "reset_observation": {
            "type": "object",
            "properties": {
                "task_id": {"type": "string"},
                "domain": {"type": "string"},
                "split": {"type": "string"},
                "emotion": {"type": "boolean"},
                "policy": {"type": "string"},
                "tools": {"type": "array", "items": {"type": "object"}},
                "messages": messages,
                "message_sources": {"type": "array", "items": {"type": "string"}},
            },
        },
        "state": {
            "type": "object",
            "properties": {
                "episode_id": {"type": ["string", "null"]},
                "step_count": {"type": "integer"},
                "task_id": {"type": "string"},
                "done": {"type": "boolean"},
                "termination": {"type": ["string", "null"]},
                "state_hash": {"type": "string"},
                "messages": messages,
            },
        },
    })
}

/// `GET /openapi.json`: every HTTP route (the WebSocket `/ws` is named in the description).
pub fn openapi() -> Value {
    let op =
        |summary: &str| json!({"summary": summary, "responses": {"200": {"description": "JSON"}}});
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "tracer serve",
            "version": API_VERSION,
            "description": "Tracer's environment server. OpenEnv: GET /health, /metadata, /schema; POST /mcp; the stateful protocol on the WebSocket /ws. Tracer's own HTTP routes: /tasks, /reset, /step, /state, /verify, /close, /episode, /mcp/<session>.",
        },
        "paths": {
            "/health": {"get": op("status, open sessions, limits")},
            "/metadata": {"get": op("name, description, domains")},
            "/schema": {"get": op("action, observation and state JSON schemas")},
            "/mcp": {"post": op("MCP JSON-RPC: tools/list, tools/call with params.session_id, openenv/session/create|close")},
            "/ws": {"get": op("WebSocket: the OpenEnv session protocol (reset, step, state, close)")},
            "/tasks": {"get": op("the served tasks")},
            "/tasks/{id}": {"get": op("one task")},
            "/reset": {"post": op("open an episode (Tracer's own: the session travels in the body)")},
            "/step": {"post": op("hand in an assistant message")},
            "/state": {"get": op("an episode's transcript and state")},
            "/verify": {"post": op("an episode's reward and record")},
            "/close": {"post": op("close a session")},
            "/episode": {"post": op("a whole episode against the caller's OpenAI-compatible endpoint")},
            "/mcp/{session}": {"post": op("MCP JSON-RPC on one session")},
        },
    })
}

fn error(e: &ServeError) -> String {
    json!({"type": "error", "data": {"code": e.code, "message": e.message, "status": e.status}})
        .to_string()
}

/// The reset fields of a WebSocket reset: `task_id` filled in from `seed` when absent.
fn reset_body(server: &Server, data: &Value) -> Result<Value, ServeError> {
    let mut body = match data {
        Value::Object(_) => data.clone(),
        Value::Null => json!({}),
        _ => return Err(ServeError::bad("a reset's 'data' must be an object")),
    };
    if field(&body, "task_id").is_none() {
        let seed = super::wire::opt_u64(&body, "seed")?.unwrap_or(0);
        let id = server
            .task_at(seed)
            .ok_or_else(|| ServeError::new(404, "unknown_task", "this server serves no task"))?;
        body["task_id"] = json!(id);
    }
    Ok(body)
}

/// The `/step` body of a WebSocket step's `data`.
fn step_body(session: &str, data: &Value) -> Result<Value, ServeError> {
    let Value::Object(map) = data else {
        return Err(ServeError::bad(
            "a step's 'data' must be an assistant message (an object)",
        ));
    };
    let message = match map.get("message") {
        Some(m) => m.clone(),
        None => {
            let mut m = map.clone();
            m.remove("usage");
            m.entry("role").or_insert(json!("assistant"));
            Value::Object(m)
        }
    };
    Ok(json!({
        "session": session,
        "action": {"message": message},
        "usage": map.get("usage").cloned().unwrap_or(Value::Null),
    }))
}

/// One WebSocket message's answer; `None` when the client closed the session.
fn answer(server: &Server, session: &mut Option<String>, text: &str) -> Option<String> {
    let msg: Value = match serde_json::from_str(text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) | Err(_) => {
            return Some(error(&ServeError::new(
                400,
                "INVALID_JSON",
                "a message must be a JSON object {\"type\": ..., \"data\": {...}}",
            )));
        }
    };
    let data = msg.get("data").cloned().unwrap_or(Value::Null);
    let result = match msg["type"].as_str() {
        Some("reset") => reset_body(server, &data)
            .and_then(|body| server.reset(&body))
            .map(|mut r| {
                let id = r["session"].as_str().unwrap_or_default().to_string();
                if let Some(old) = session.replace(id.clone()) {
                    let _ = server.close_session(&old);
                }
                let sources = super::wire::sources(
                    &serde_json::from_value::<Vec<crate::harness::ChatMessage>>(
                        r["observation"]["messages"].clone(),
                    )
                    .unwrap_or_default(),
                );
                r["observation"]["message_sources"] = json!(sources);
                r["observation"]["session"] = json!(id);
                json!({"type": "observation", "data": {
                    "observation": r["observation"],
                    "reward": Value::Null,
                    "done": r["done"],
                    "metadata": {"session": id, "termination": r["termination"], "failure": r["failure"]},
                }})
            }),
        Some("step") => match session.as_deref() {
            None => Err(ServeError::new(
                409,
                "no_episode",
                "send a reset before the first step",
            )),
            Some(id) => step_body(id, &data)
                .and_then(|body| server.step(&body))
                .and_then(|r| {
                    let mut obs = r["observation"].clone();
                    let added: Vec<crate::harness::ChatMessage> =
                        serde_json::from_value(obs["messages"].clone()).unwrap_or_default();
                    obs["message_sources"] = json!(
                        added
                            .iter()
                            .map(|m| match m.role {
                                crate::harness::MessageRole::User => "customer",
                                crate::harness::MessageRole::Tool => "tool",
                                _ => "policy",
                            })
                            .collect::<Vec<_>>()
                    );
                    for k in ["steps", "termination", "failure"] {
                        obs[k] = r[k].clone();
                    }
                    let done = r["done"].as_bool().unwrap_or(false);
                    let metadata = if done {
                        server.verify(&json!({"session": id}))?.json()
                    } else {
                        json!({})
                    };
                    Ok(json!({"type": "observation", "data": {
                        "observation": obs,
                        "reward": r["reward"],
                        "done": done,
                        "metadata": metadata,
                    }}))
                }),
        },
        Some("state") => match session.as_deref() {
            None => Ok(json!({"type": "state", "data": {"episode_id": Value::Null, "step_count": 0}})),
            Some(id) => server.state(id).map(|mut s| {
                s["episode_id"] = json!(id);
                s["step_count"] = s["steps"].clone();
                json!({"type": "state", "data": s})
            }),
        },
        Some("close") => return None,
        other => Err(ServeError::new(
            400,
            "UNKNOWN_TYPE",
            format!(
                "unknown message type {}; send reset, step, state or close",
                other.map_or("(none)".to_string(), |t| format!("'{t}'"))
            ),
        )),
    };
    Some(match result {
        Ok(v) => v.to_string(),
        Err(e) => error(&e),
    })
}

/// Serve one WebSocket connection: its session lives as long as the connection.
pub fn websocket(server: Arc<Server>, socket: &mut Socket) {
    socket.idle = server.settings.idle;
    let mut session: Option<String> = None;
    while let Ok(text) = socket.recv() {
        let Some(reply) = answer(&server, &mut session, &text) else {
            break;
        };
        if !socket.send(&reply) {
            break;
        }
    }
    if let Some(id) = session {
        let _ = server.close_session(&id);
    }
}
