//! The agent's tools of one session over MCP (streamable HTTP transport, JSON responses):
//! `POST /mcp/<session>` takes JSON-RPC 2.0 messages — `initialize`, `ping`, `tools/list`,
//! `tools/call` and notifications — and answers each request with one JSON body. A tool
//! call runs on the session's database fork and joins its transcript (an assistant message
//! with the call, then the tool's output), so the episode is scored like any other. The
//! server keeps no MCP state of its own: the session in the path is the whole context. A
//! batch holds at most [`MAX_BATCH`] messages, so one request's answer stays small.
//! `GET` (a server-to-client stream) is refused with 405, which clients accept.

use super::{ServeError, Server};
use crate::http::{Request, Response};
use serde_json::{Value, json};

/// Messages in one JSON-RPC batch at most (a larger batch is one error, nothing runs).
pub const MAX_BATCH: usize = 32;

/// Protocol revisions this server speaks; a client asking for another gets the newest.
const VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

fn rpc_error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

fn rpc_result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// Answer an HTTP request on `/mcp/<rest>`.
pub fn handle(server: &Server, rest: &str, req: &Request) -> Response {
    let session = rest.trim_end_matches('/');
    if session.is_empty() || session.contains('/') {
        return super::error_response(
            404,
            "not_found",
            "MCP is served per session at /mcp/<session>",
        );
    }
    match req.method.as_str() {
        "POST" => {}
        "DELETE" => {
            // The client ending its MCP session; the episode stays open until /close.
            return Response::new(200, "application/json", b"{}".to_vec());
        }
        _ => {
            return super::error_response(
                405,
                "method_not_allowed",
                "MCP here takes POST (no server-to-client stream)",
            );
        }
    }
    // The session must exist before any message is read (a wrong URL fails loudly).
    if let Err(e) = server.session(session) {
        return e.response();
    }
    let body: Value = match serde_json::from_slice(&req.body) {
        Ok(v) => v,
        Err(e) => {
            return Response::json(
                400,
                &rpc_error(Value::Null, PARSE_ERROR, format!("not JSON: {e}")),
            );
        }
    };
    if let Value::Array(batch) = &body
        && batch.len() > MAX_BATCH
    {
        return Response::json(
            400,
            &rpc_error(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "a batch of {} messages; the limit is {MAX_BATCH}",
                    batch.len()
                ),
            ),
        );
    }
    let answers: Vec<Value> = match &body {
        Value::Array(batch) => batch
            .iter()
            .filter_map(|m| message(server, Some(session), m))
            .collect(),
        single => message(server, Some(session), single).into_iter().collect(),
    };
    match (body.is_array(), answers.len()) {
        // Notifications and responses only: accepted, nothing to say.
        (_, 0) => Response::new(202, "application/json", Vec::new()),
        (false, _) => Response::json(200, &answers[0]),
        (true, _) => Response::json(200, &Value::Array(answers)),
    }
}

/// Answer `POST /mcp`, the server-wide MCP endpoint OpenEnv names: the session of a tool
/// call is `params.session_id`, opened by `openenv/session/create` (params: a reset's
/// fields, `task_id` at least) and closed by `openenv/session/close`. Every answer is
/// `200` with a JSON-RPC body (an unreadable one is a JSON-RPC error, as OpenEnv's
/// validator expects); a batch holds at most [`MAX_BATCH`] messages.
pub fn handle_global(server: &Server, req: &Request) -> Response {
    if req.method != "POST" {
        return super::error_response(
            405,
            "method_not_allowed",
            "MCP here takes POST (no server-to-client stream)",
        );
    }
    let body: Value = match serde_json::from_slice(&req.body) {
        Ok(v) => v,
        Err(e) => {
            return Response::json(
                200,
                &rpc_error(Value::Null, PARSE_ERROR, format!("not JSON: {e}")),
            );
        }
    };
    let one = |m: &Value| {
        let session = m["params"]["session_id"].as_str().map(str::to_string);
        message(server, session.as_deref(), m)
    };
    let answers: Vec<Value> = match &body {
        Value::Array(batch) if batch.len() > MAX_BATCH => {
            return Response::json(
                200,
                &rpc_error(
                    Value::Null,
                    INVALID_REQUEST,
                    format!(
                        "a batch of {} messages; the limit is {MAX_BATCH}",
                        batch.len()
                    ),
                ),
            );
        }
        Value::Array(batch) => batch.iter().filter_map(one).collect(),
        single => one(single).into_iter().collect(),
    };
    match (body.is_array(), answers.len()) {
        (_, 0) => Response::new(202, "application/json", Vec::new()),
        (false, _) => Response::json(200, &answers[0]),
        (true, _) => Response::json(200, &Value::Array(answers)),
    }
}

/// One JSON-RPC message; `None` for a notification (or a response a client sends).
/// `session`: the session in the path, or the server-wide endpoint's `params.session_id`.
fn message(server: &Server, session: Option<&str>, m: &Value) -> Option<Value> {
    let Some(method) = m.get("method").and_then(Value::as_str) else {
        return if m.get("result").is_some() || m.get("error").is_some() {
            None
        } else {
            Some(rpc_error(
                m.get("id").cloned().unwrap_or(Value::Null),
                INVALID_REQUEST,
                "a JSON-RPC request needs a method",
            ))
        };
    };
    let id = m.get("id").cloned()?;
    let params = m.get("params").cloned().unwrap_or(Value::Null);
    Some(match method {
        "initialize" => {
            let asked = params["protocolVersion"].as_str().unwrap_or("");
            let version = VERSIONS
                .iter()
                .find(|v| **v == asked)
                .unwrap_or(&VERSIONS[0]);
            rpc_result(
                id,
                json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": { "listChanged": false } },
                    "serverInfo": { "name": "tracer", "version": env!("CARGO_PKG_VERSION") },
                    "instructions": "The tools of one Tracer episode; every call runs on the session's own database and joins its transcript.",
                }),
            )
        }
        "ping" => rpc_result(id, json!({})),
        "tools/list" => rpc_result(id, json!({ "tools": tools(server, session) })),
        "tools/call" => match session {
            Some(session) => call(server, session, id, &params),
            None => rpc_error(
                id,
                INVALID_PARAMS,
                "tools/call needs params.session_id (open one with openenv/session/create)",
            ),
        },
        "openenv/session/create" => {
            let body = if params.is_null() { json!({}) } else { params };
            let opened = if body.is_object() {
                server.reset(&body)
            } else {
                Err(ServeError::bad("params must be an object"))
            };
            match opened {
                Ok(r) => rpc_result(
                    id,
                    json!({"session_id": r["session"], "observation": r["observation"], "done": r["done"]}),
                ),
                Err(e) => rpc_error(id, INVALID_PARAMS, e.message),
            }
        }
        "openenv/session/close" => match params["session_id"].as_str() {
            None => rpc_error(id, INVALID_PARAMS, "params.session_id is required"),
            Some(s) => match server.close_session(s) {
                Ok(()) => rpc_result(id, json!({"session_id": s, "closed": true})),
                Err(e) => rpc_error(id, INVALID_PARAMS, e.message),
            },
        },
        other => rpc_error(id, METHOD_NOT_FOUND, format!("no method '{other}'")),
    })
}

/// The session's domain tools in MCP's shape (without a session: every served domain's,
/// each name once).
fn tools(server: &Server, session: Option<&str>) -> Vec<Value> {
    let domains: Vec<&'static dyn crate::domain::Domain> = match session {
        Some(session) => match server.session_domain(session) {
            Ok(d) => vec![d],
            Err(_) => return Vec::new(),
        },
        None => server.domains.iter().map(|d| d.domain).collect(),
    };
    let mut seen = std::collections::HashSet::new();
    domains
        .iter()
        .flat_map(|d| d.tool_specs())
        .filter(|s| seen.insert(s.name.to_string()))
        .map(|s| {
            let f = s.openai();
            let f = &f["function"];
            json!({
                "name": f["name"],
                "description": f["description"],
                "inputSchema": f["parameters"],
            })
        })
        .collect()
}

fn call(server: &Server, session: &str, id: Value, params: &Value) -> Value {
    let Some(name) = params["name"].as_str().filter(|n| !n.is_empty()) else {
        return rpc_error(id, INVALID_PARAMS, "tools/call needs params.name");
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(a @ Value::Object(_)) => a.clone(),
        Some(_) => {
            return rpc_error(id, INVALID_PARAMS, "params.arguments must be an object");
        }
    };
    let known = match server.session_domain(session) {
        Ok(domain) => domain.tool_specs().iter().any(|s| s.name == name),
        Err(e) => return rpc_error(id, INVALID_PARAMS, e.message),
    };
    if !known {
        return rpc_error(id, INVALID_PARAMS, format!("unknown tool '{name}'"));
    }
    match server.mcp_call(session, name, &arguments) {
        Ok((text, is_error)) => rpc_result(
            id,
            json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }),
        ),
        Err(ServeError { message, .. }) => rpc_error(id, INVALID_PARAMS, message),
    }
}
