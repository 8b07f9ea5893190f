//! A loopback OpenAI-compatible server for the harness benchmarks: plain HTTP/1.1 on
//! `std::net` (127.0.0.1, a free port), one small-stack thread per connection, keep-alive, no
//! dependencies beyond `serde_json`.
//!
//! It answers `POST /v1/chat/completions` with a scripted behaviour that drives episodes:
//! - **agent** requests (those carrying `tools`): after a tool result it answers with text;
//!   otherwise with one tool call, the k-th taken from [`Script::calls`] in turn (k = tool
//!   calls already in the transcript);
//! - **user** requests (no `tools`): `###STOP###` on its `user_turns`-th reply, an ordinary
//!   customer message before that.
//!
//! So an episode with `user_turns = N` makes `N + 2 (N - 1)` calls. Each request waits for the
//! latency named by its model id (`bench@100ms`; `bench@0ms` or any other id: none) before
//! answering, so one server serves runs with and without latency. `GET /v1/models` lists
//! `bench@0ms` and `bench@100ms` (what endpoint roles' preflight checks for the shard bench).
//!
//! `tracer bench` runs it in a child process (`tracer bench --loopback-server <script JSON>`,
//! the address on the first stdout line, exit when stdin closes), so the harness process's
//! CPU time and memory are its own; tests run it in-process with [`LoopbackServer::start`].

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What the scripted agent and user do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// The user's reply number `user_turns` carries `###STOP###`.
    pub user_turns: usize,
    /// Tool calls (name, JSON arguments text) the agent makes, one per user turn, in turn.
    pub calls: Vec<(String, String)>,
}

impl Script {
    /// Chat calls one episode makes under this script.
    pub fn calls_per_episode(&self) -> usize {
        let n = self.user_turns.max(1);
        if self.calls.is_empty() {
            2 * n - 1
        } else {
            3 * n - 2
        }
    }
}

/// The latency a model id asks for: `bench@250ms` -> 250 ms.
pub fn latency_of(model: &str) -> Duration {
    model
        .rsplit_once('@')
        .and_then(|(_, l)| l.strip_suffix("ms"))
        .and_then(|ms| ms.parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or_default()
}

/// The model id of a latency.
pub fn model_for(latency: Duration) -> String {
    format!("bench@{}ms", latency.as_millis())
}

/// An in-process server (tests; `tracer bench` uses a child process).
pub struct LoopbackServer {
    addr: SocketAddr,
    posts: Arc<AtomicU64>,
}

impl LoopbackServer {
    pub fn start(script: Script) -> std::io::Result<LoopbackServer> {
        let listener = crate::http::bind(loopback())?;
        let addr = listener.local_addr()?;
        let posts = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&posts);
        std::thread::Builder::new()
            .name("bench-server".into())
            .spawn(move || serve(listener, Arc::new(script), counter))?;
        Ok(LoopbackServer { addr, posts })
    }

    /// `http://127.0.0.1:<port>/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// POST requests answered so far.
    pub fn posts(&self) -> u64 {
        self.posts.load(Ordering::Relaxed)
    }
}

/// 127.0.0.1 on a free port. Bound through [`crate::http::bind`], whose backlog holds the
/// 2,048 connections a run of 1,024 episodes opens at once: std's `TcpListener::bind`
/// listens with 128, the rest of such a burst overflowed, and each dropped connection
/// waited a second for its retry (the ramp of the C = 1,024 rows).
fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// Accept forever, one thread per connection.
pub fn serve(listener: TcpListener, script: Arc<Script>, posts: Arc<AtomicU64>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        let (script, posts) = (Arc::clone(&script), Arc::clone(&posts));
        // Small stacks: a run with 1,024 episodes in flight has ~2,048 connections open.
        let _ = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(move || serve_connection(stream, &script, &posts));
    }
}

/// The child-process entry (`tracer bench --loopback-server <script JSON>`): print
/// `listening <addr>`, serve until stdin reaches end of file (the parent exited or dropped
/// its handle), then exit.
pub fn run_child(script_json: &str) -> Result<(), String> {
    let script: Script =
        serde_json::from_str(script_json).map_err(|e| format!("--loopback-server: {e}"))?;
    let listener = crate::http::bind(loopback()).map_err(|e| format!("bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    std::thread::spawn(move || serve(listener, Arc::new(script), Arc::new(AtomicU64::new(0))));
    println!("listening {addr}");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    Ok(())
}

struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { method, path, body })
}

fn serve_connection(stream: TcpStream, script: &Script, posts: &AtomicU64) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some(req) = read_request(&mut reader) {
        let (code, body) = match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/v1/models") => (
                200,
                json!({"object": "list", "data": [
                    {"id": model_for(Duration::ZERO), "object": "model", "owned_by": "tracer-bench"},
                    {"id": model_for(Duration::from_millis(100)), "object": "model", "owned_by": "tracer-bench"}]}),
            ),
            ("POST", "/v1/chat/completions") => {
                posts.fetch_add(1, Ordering::Relaxed);
                match serde_json::from_slice::<ChatIn>(&req.body) {
                    Ok(body) => {
                        let latency = latency_of(&body.model);
                        if !latency.is_zero() {
                            std::thread::sleep(latency);
                        }
                        if is_probe(&req.body) {
                            (200, probe_answer(&body))
                        } else {
                            (200, chat_answer(script, &body, req.body.len()))
                        }
                    }
                    Err(e) => (400, json!({"error": {"message": format!("bad JSON: {e}")}})),
                }
            }
            _ => (
                404,
                json!({"error": {"message": format!("no route {} {}", req.method, req.path)}}),
            ),
        };
        let text = body.to_string();
        let reason = if code == 200 { "OK" } else { "Error" };
        let head = format!(
            "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            text.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(text.as_bytes()).is_err()
            || writer.flush().is_err()
        {
            return;
        }
    }
}

/// What the server reads of a chat request: the model, each message's role and number of
/// tool calls, and whether tools are offered. Everything else (the texts, the schemas) is
/// skipped unread, so the server's CPU per call is small beside the harness's.
#[derive(Deserialize)]
pub struct ChatIn<'a> {
    #[serde(borrow, default)]
    model: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    messages: Vec<MessageIn<'a>>,
    #[serde(default)]
    tools: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize)]
struct MessageIn<'a> {
    #[serde(borrow, default)]
    role: std::borrow::Cow<'a, str>,
    #[serde(default)]
    tool_calls: Option<Vec<serde::de::IgnoredAny>>,
}

/// Whether a chat request is a role's preflight probe (its system message opens with
/// [`crate::llm::preflight::PROBE_MARK`]).
fn is_probe(body: &[u8]) -> bool {
    std::str::from_utf8(body).is_ok_and(|t| t.contains(crate::llm::preflight::PROBE_MARK))
}

/// A well-configured server's answer to a preflight probe: a call of the first offered tool,
/// or a word. Probes are not part of any episode's script.
fn probe_answer(body: &ChatIn) -> Value {
    let message = if body.tools.as_ref().is_some_and(|t| !t.is_empty()) {
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_probe",
            "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]})
    } else {
        json!({"role": "assistant", "content": "OK"})
    };
    json!({"id": "chatcmpl-bench", "object": "chat.completion", "model": body.model,
           "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22}})
}

/// The scripted answer to one chat request.
pub fn chat_answer(script: &Script, body: &ChatIn, request_bytes: usize) -> Value {
    let messages = &body.messages;
    let is_agent = body.tools.as_ref().is_some_and(|t| !t.is_empty());
    let (message, finish) = if is_agent {
        let after_tool = messages.last().is_some_and(|m| m.role == "tool");
        let made: usize = messages
            .iter()
            .filter_map(|m| m.tool_calls.as_ref())
            .map(Vec::len)
            .sum();
        if after_tool || script.calls.is_empty() {
            (
                json!({"role": "assistant",
                       "content": "I have looked that up and taken care of it. Anything else?"}),
                "stop",
            )
        } else {
            let (name, args) = &script.calls[made % script.calls.len()];
            (
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "id": format!("call_{made}"), "type": "function",
                    "function": {"name": name, "arguments": args}}]}),
                "tool_calls",
            )
        }
    } else {
        // The simulator's own earlier replies are the assistant turns of its conversation.
        let replied = messages.iter().filter(|m| m.role == "assistant").count();
        let text = if replied + 1 >= script.user_turns {
            "Thank you, that is everything.###STOP###".to_string()
        } else {
            format!("Thanks. There is one more thing I need help with (request {replied}).")
        };
        (json!({"role": "assistant", "content": text}), "stop")
    };
    let prompt_tokens = request_bytes / 4;
    json!({
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": body.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 12,
                  "total_tokens": prompt_tokens + 12}
    })
}
