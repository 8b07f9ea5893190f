//! The Open Reward Standard face of `tracer serve` (what the `openreward` SDK and TRL's
//! `OpenRewardSpec` speak): each served domain is an ORS environment named by the domain,
//! its tasks the splits `train` and `test` (the evaluation split), each task spec
//! `{"task_id"}`. A session is opened by `POST /create_session` (server-sent events: its id)
//! and `POST /create` (header `X-Session-ID`; the task by spec or by split and index), and
//! is a Tracer session under that id, so it scores like any other.
//!
//! The tools are the domain's plus `reply_to_customer(text)`: ORS loops end when the model
//! stops calling tools, so the customer's turn is itself a tool whose output is the
//! simulated customer's answer. The reward comes in the `ToolOutput` of the call that ends
//! the episode (`finished: true`); no tool gives it earlier. Where ORS has no field for it —
//! the customer leaving on its own, whose failure an episode was, the customer's messages —
//! the output's `metadata` carries Tracer's `termination`, `failure` and the verdict. An
//! endpoint's failure is `reward: null`, `finished: true`, with the cause in `metadata`.

use super::Server;
use super::wire::{ServeError, field, json_body};
use crate::http::{Request, Response};
use crate::split::Split;
use serde_json::{Value, json};

/// The tool that hands the policy's text to the simulated customer.
pub const REPLY_TOOL: &str = "reply_to_customer";

fn sse(events: &[(&str, String)]) -> Response {
    let mut body = String::new();
    for (event, data) in events {
        body.push_str(&format!("event: {event}\n"));
        for line in data.split('\n') {
            body.push_str(&format!("data: {line}\n"));
        }
        body.push('\n');
    }
    Response::new(200, "text/event-stream", body.into_bytes())
}

/// Whether `path` is an ORS route this module answers.
pub fn claims(server: &Server, path: &str) -> bool {
    matches!(
        path,
        "/list_environments"
            | "/version"
            | "/ping"
            | "/create_session"
            | "/delete_session"
            | "/create"
            | "/delete"
    ) || path
        .split_once('/')
        .map(|(_, rest)| rest)
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(env, _)| server.domains.iter().any(|d| d.domain.name() == env))
}

/// Whether an ORS route may be posted without a body (the SDK's `/delete`, `/ping`).
pub fn bodiless(path: &str) -> bool {
    matches!(
        path,
        "/ping" | "/delete" | "/delete_session" | "/create_session"
    )
}

fn split_name(s: Split) -> &'static str {
    if s == Split::Eval { "test" } else { "train" }
}

fn tasks_of<'a>(server: &'a Server, env: &str, split: &str) -> Result<Vec<&'a str>, ServeError> {
    let d = server
        .domains
        .iter()
        .find(|d| d.domain.name() == env)
        .ok_or_else(|| ServeError::new(404, "unknown_domain", format!("no environment '{env}'")))?;
    if split != "train" && split != "test" {
        return Err(ServeError::bad(format!(
            "no split '{split}'; the splits are train and test"
        )));
    }
    Ok(d.tasks
        .iter()
        .filter(|t| split_name(t.split) == split)
        .map(|t| t.task_id.as_str())
        .collect())
}

fn tools(server: &Server, env: &str) -> Result<Value, ServeError> {
    let d = server
        .domains
        .iter()
        .find(|d| d.domain.name() == env)
        .ok_or_else(|| ServeError::new(404, "unknown_domain", format!("no environment '{env}'")))?;
    let mut tools: Vec<Value> = d
        .tools
        .iter()
        .map(|t| {
            let f = &t["function"];
            json!({"name": f["name"], "description": f["description"], "input_schema": f["parameters"]})
        })
        .collect();
    tools.push(json!({
        "name": REPLY_TOOL,
        "description": "Say something to the customer (a question, an answer, a confirmation). Returns the customer's reply. The episode ends when the customer is done.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string", "description": "what you say to the customer"}}, "required": ["text"]},
    }));
    Ok(
        json!({"tools": tools, "terminal_tool": Value::Null, "supports_score_group": false, "message_block_types": ["text"]}),
    )
}

fn sid(req: &Request) -> Result<&str, ServeError> {
    req.header("x-session-id")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ServeError::bad("header 'X-Session-ID' is missing"))
}

/// A session id a client may name: short, and only letters, digits, `-` and `_`.
fn valid_sid(s: &str) -> bool {
    s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// Answer an ORS request (only for paths [`claims`] took).
pub fn handle(server: &Server, req: &Request) -> Result<Response, ServeError> {
    let path = req.path.trim_end_matches('/');
    let ok = |v: Value| Ok(Response::json(200, &v));
    let body = || -> Result<Value, ServeError> {
        if req.body.is_empty() {
            Ok(json!({}))
        } else {
            json_body(req)
        }
    };
    match path {
        "/list_environments" => {
            return ok(json!(
                server
                    .domains
                    .iter()
                    .map(|d| d.domain.name())
                    .collect::<Vec<_>>()
            ));
        }
        "/version" => {
            return ok(json!({"version": env!("CARGO_PKG_VERSION"), "build_sha": Value::Null}));
        }
        "/create_session" => {
            // An id only: the episode opens at /create, when the task is known.
            return Ok(sse(&[
                ("task_id", server.fresh_id()),
                ("end", String::new()),
            ]));
        }
        "/ping" => {
            server.session(sid(req)?)?;
            return ok(json!({"status": "ok"}));
        }
        "/delete" | "/delete_session" => {
            let id = sid(req)?;
            let _ = server.close_session(id);
            return ok(json!({"sid": id}));
        }
        "/create" => {
            let id = sid(req)?;
            if !valid_sid(id) {
                return Err(ServeError::bad(
                    "header 'X-Session-ID': at most 64 letters, digits, '-' or '_'",
                ));
            }
            let b = body()?;
            let task_id = match field(&b, "task_spec") {
                Some(spec) => super::wire::str_field(spec, "task_id")?.to_string(),
                None => {
                    let env = super::wire::str_field(&b, "env_name")?;
                    let split = super::wire::str_field(&b, "split")?;
                    let index = super::wire::opt_u64(&b, "index")?
                        .ok_or_else(|| ServeError::bad("field 'index' is missing"))?;
                    let tasks = tasks_of(server, env, split)?;
                    tasks
                        .get(index as usize)
                        .ok_or_else(|| {
                            ServeError::bad(format!("no task {index} in split {split}"))
                        })?
                        .to_string()
                }
            };
            let mut reset = json!({"task_id": task_id, "agent_model": "ors"});
            if let Some(env) = field(&b, "env_name") {
                reset["domain"] = env.clone();
            }
            server.reset_as(&reset, Some(id.to_string()))?;
            return ok(json!({"sid": id}));
        }
        _ => {}
    }
    let (env, route) = path[1..]
        .split_once('/')
        .ok_or_else(|| ServeError::new(404, "not_found", "no such ORS route"))?;
    match (req.method.as_str(), route) {
        ("GET", "tools" | "task_tools") => ok(tools(server, env)?),
        ("GET", "splits") => {
            tasks_of(server, env, "train")?;
            ok(json!([{"name": "train", "type": "train"}, {"name": "test", "type": "test"}]))
        }
        ("POST", "tasks") => {
            let b = body()?;
            let tasks = tasks_of(server, env, super::wire::str_field(&b, "split")?)?;
            ok(
                json!({"tasks": tasks.iter().map(|t| json!({"task_id": t})).collect::<Vec<_>>(), "env_name": env}),
            )
        }
        ("POST", "num_tasks") => {
            let b = body()?;
            ok(
                json!({"num_tasks": tasks_of(server, env, super::wire::str_field(&b, "split")?)?.len()}),
            )
        }
        ("POST", "task") => {
            let b = body()?;
            let tasks = tasks_of(server, env, super::wire::str_field(&b, "split")?)?;
            let i = super::wire::opt_u64(&b, "index")?.unwrap_or(0) as usize;
            let t = tasks
                .get(i)
                .ok_or_else(|| ServeError::bad(format!("no task {i}")))?;
            ok(json!({"task": {"task_id": t}, "env_name": env}))
        }
        ("POST", "task_range") => {
            let b = body()?;
            let tasks = tasks_of(server, env, super::wire::str_field(&b, "split")?)?;
            let start = super::wire::opt_u64(&b, "start")?.unwrap_or(0) as usize;
            let stop = (super::wire::opt_u64(&b, "stop")?.map_or(tasks.len(), |s| s as usize))
                .min(tasks.len());
            let range = tasks.get(start.min(stop)..stop).unwrap_or_default();
            ok(
                json!({"tasks": range.iter().map(|t| json!({"task_id": t})).collect::<Vec<_>>(), "env_name": env}),
            )
        }
        ("GET", "prompt") => {
            let state = server.state(sid(req)?)?;
            let customer = last_customer(&state["messages"]);
            ok(json!([text(&format!(
                "{}\n\nYou are the agent. Talk to the customer only through the {REPLY_TOOL} tool; the conversation ends when the customer is done.\n\nThe customer says: {customer}",
                state["messages"][0]["content"].as_str().unwrap_or("")
            ))]))
        }
        ("GET", "messages") => {
            let state = server.state(sid(req)?)?;
            let system = state["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let customer = last_customer(&state["messages"]);
            ok(json!([
                {"role": "system", "blocks": [text(&system)]},
                {"role": "user", "blocks": [text(&format!("{customer}\n\n(Answer the customer with the {REPLY_TOOL} tool.)"))]},
            ]))
        }
        ("POST", "call") => {
            let id = sid(req)?;
            let b = body()?;
            let out = call(server, id, &b);
            let run = match out {
                Ok(v) => v,
                Err(e) => {
                    let reason = match e.code {
                        "episode_over" => json!("episode_finished"),
                        "unknown_tool" => json!("not_found"),
                        _ => json!("input_validation"),
                    };
                    if e.status >= 500 || e.code == "unknown_session" || e.code == "expired_session"
                    {
                        return Err(e);
                    }
                    json!({"ok": false, "error": e.message, "reason": reason})
                }
            };
            let call_id = format!("call-{}", server.fresh_id());
            Ok(sse(&[("task_id", call_id), ("end", run.to_string())]))
        }
        _ => Err(ServeError::new(
            404,
            "not_found",
            format!("no ORS route {} {}", req.method, req.path),
        )),
    }
}

fn last_customer(messages: &Value) -> String {
    messages
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// One ORS tool call on session `id`: a domain tool, or the reply to the customer.
fn call(server: &Server, id: &str, body: &Value) -> Result<Value, ServeError> {
    let name = super::wire::str_field(body, "name")?;
    let input = match field(body, "input") {
        None => json!({}),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(ServeError::bad("field 'input' must be an object")),
    };
    let domain = server.session_domain(id)?;
    let message = if name == REPLY_TOOL {
        let said = super::wire::str_field(&input, "text")?;
        json!({"role": "assistant", "content": said})
    } else if domain.tool_specs().iter().any(|s| s.name == name) {
        let n = server.state(id)?["steps"].as_u64().unwrap_or(0);
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("ors_{n}"), "type": "function",
            "function": {"name": name, "arguments": input.to_string()},
        }]})
    } else {
        return Err(ServeError::new(
            400,
            "unknown_tool",
            format!("no tool '{name}'"),
        ));
    };
    let r = server.step(&json!({"session": id, "action": {"message": message}}))?;
    let added = r["observation"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let said: Vec<String> = added
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    let done = r["done"].as_bool().unwrap_or(false);
    let mut metadata =
        json!({"termination": r["termination"], "failure": r["failure"], "steps": r["steps"]});
    if done {
        metadata["verdict"] = server.verify(&json!({"session": id}))?.json();
    }
    Ok(json!({"ok": true, "output": {
        "blocks": [text(&said.join("\n"))],
        "metadata": metadata,
        "reward": if done { r["reward"].clone() } else { Value::Null },
        "finished": done,
    }}))
}
