//! A loopback OpenAI-compatible server for the LLM layer's tests: HTTP/1.1 on
//! `std::net::TcpListener` (127.0.0.1, a free port), one thread per connection, no
//! dependencies; [`OpenAiServer::start_tls`] serves the same over TLS (rustls, blocking)
//! with a certificate the test made.
//!
//! It serves `GET /v1/models`, `POST /v1/chat/completions` and `POST /v1/embeddings`.
//! Each POST takes the next scripted [`Reply`] (text, tool calls, reasoning, or a fault:
//! an HTTP status with or without `Retry-After`, a delay past the client's timeout, a
//! malformed body, a hang-up without an answer, an error that echoes the request's
//! `Authorization` header, in an error or inside a 200 answer); with the
//! script empty it answers a default (chat: `echo: <last user message>`; embeddings: a
//! small vector derived from each text). Chat usage: 10 prompt tokens per message, all but
//! the newest message's reported as read from a prompt cache
//! (`prompt_tokens_details.cached_tokens`), and 5 completion tokens. It records every
//! request (time, path, body, `Authorization`) and the most requests it ever had in flight
//! at once. [`OpenAiServer::refuse_tools`] makes it answer like llama.cpp's `llama-server`
//! started without `--jinja`: a chat request carrying `tools` gets a 500 and takes nothing
//! from the script. A role's preflight probe (a chat request whose system message opens with
//! `tracer::llm::preflight::PROBE_MARK`) is answered apart from the script and the handler,
//! as [`OpenAiServer::set_probe`] says (a well-configured server by default), and recorded
//! in [`OpenAiServer::probes`], not among the requests.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What the server does with the next POST.
#[derive(Clone, Debug)]
pub enum Reply {
    Text(String),
    /// One assistant message with these (name, arguments text) tool calls.
    ToolCalls(Vec<(String, String)>),
    /// Thinking under `field` (`reasoning_content` or `reasoning`) plus an answer.
    Reasoning {
        field: &'static str,
        reasoning: String,
        content: String,
    },
    Status {
        code: u16,
        retry_after: Option<u32>,
        message: String,
    },
    /// Wait, then give the default answer (to a client that has usually gone).
    Delay(Duration),
    /// 200 with a body that is not JSON.
    MalformedBody,
    /// An error whose message repeats the request's `Authorization` header.
    EchoAuthorization(u16),
    /// A 200 answer that repeats the request's `Authorization` header in its content, its
    /// thinking and a tool call's arguments (a string value, a list item and an object key).
    EchoAuthorizationInAnswer,
    /// Close the connection without answering (a reset mid-request).
    Hangup,
    /// Text cut at the token cap (`finish_reason: "length"`).
    Cut(String),
    /// One assistant message with text and these (name, arguments text) tool calls.
    TextAndCalls(String, Vec<(String, String)>),
}

/// How the server answers a preflight probe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProbeMode {
    /// A tool call in `tool_calls` (as `<tool_call>` text when the tools were in the
    /// prompt), else a word.
    #[default]
    Good,
    /// Text where a tool call was asked for: a chat template that drops `tools`.
    DropsTools,
    /// The tool call written as Hermes text: a server without a tool-call parser.
    CallsAsText,
    /// The answer with its thinking left in the content as `<think>...</think>`: a server
    /// without a reasoning parser.
    ThinkInContent,
}

/// Answers every chat POST the script does not (see [`OpenAiServer::set_handler`]).
pub type Handler = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

#[derive(Clone, Debug)]
pub struct Recorded {
    pub at: Instant,
    pub method: String,
    pub path: String,
    pub body: Value,
    pub authorization: Option<String>,
}

struct State {
    script: VecDeque<Reply>,
    seen: Vec<Recorded>,
    in_flight: usize,
    max_in_flight: usize,
    models: Vec<String>,
    hold: Duration,
    /// `max_model_len` listed with each model (vLLM's field), when set.
    context_window: Option<u64>,
    /// Refuse chat requests that carry `tools` (llama-server without `--jinja`).
    refuse_tools: bool,
    /// Answers chat POSTs when the script is empty.
    handler: Option<Handler>,
    /// Usage from the texts (about four characters a token) instead of the fixed counts.
    text_usage: bool,
    probe: ProbeMode,
    /// The preflight probes seen, in order (kept apart from `seen`).
    probes: Vec<Recorded>,
}

pub struct OpenAiServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    scheme: &'static str,
}

/// What the server answers on: a TCP stream, or TLS over one.
trait Conn: Read + Write + Send + 'static {
    /// Close without answering.
    fn hang_up(&mut self);
}

impl Conn for TcpStream {
    fn hang_up(&mut self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(feature = "tls")]
impl Conn for rustls::StreamOwned<rustls::ServerConnection, TcpStream> {
    fn hang_up(&mut self) {
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }
}

impl OpenAiServer {
    /// Start a server listing `models`.
    pub fn start(models: &[&str]) -> OpenAiServer {
        OpenAiServer::start_with(models, "http", Box::new(|stream| Some(Box::new(stream))))
    }

    /// Start a server listing `models` over TLS with this server configuration (its
    /// certificate chain and key); the handshake happens on the connection's first read.
    #[cfg(feature = "tls")]
    pub fn start_tls(models: &[&str], tls: Arc<rustls::ServerConfig>) -> OpenAiServer {
        OpenAiServer::start_with(
            models,
            "https",
            Box::new(move |stream| {
                let conn = rustls::ServerConnection::new(tls.clone()).ok()?;
                Some(Box::new(rustls::StreamOwned::new(conn, stream)))
            }),
        )
    }

    fn start_with(
        models: &[&str],
        scheme: &'static str,
        wrap: Box<dyn Fn(TcpStream) -> Option<Box<dyn Conn>> + Send>,
    ) -> OpenAiServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            script: VecDeque::new(),
            seen: Vec::new(),
            in_flight: 0,
            max_in_flight: 0,
            models: models.iter().map(|m| m.to_string()).collect(),
            hold: Duration::ZERO,
            context_window: None,
            refuse_tools: false,
            handler: None,
            text_usage: false,
            probe: ProbeMode::Good,
            probes: Vec::new(),
        }));
        let shared = state.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let Some(conn) = wrap(stream) else { continue };
                let state = shared.clone();
                thread::spawn(move || serve_connection(conn, state));
            }
        });
        OpenAiServer {
            addr,
            state,
            scheme,
        }
    }

    /// `http://127.0.0.1:<port>/v1` (`https://` for [`OpenAiServer::start_tls`])
    pub fn base_url(&self) -> String {
        format!("{}://{}/v1", self.scheme, self.addr)
    }

    pub fn push(&self, reply: Reply) {
        self.state.lock().unwrap().script.push_back(reply);
    }

    /// List every model with this `max_model_len`, as vLLM does.
    pub fn report_context_window(&self, tokens: u64) {
        self.state.lock().unwrap().context_window = Some(tokens);
    }

    /// Answer like llama-server without `--jinja`: a chat request whose body carries a
    /// non-empty `tools` (or a `tool_choice` other than `"auto"`) is refused with a 500 and
    /// the server's message; the script is left as it was.
    pub fn refuse_tools(&self) {
        self.state.lock().unwrap().refuse_tools = true;
    }

    /// Answer each chat POST the script leaves open with `handler(body)`, and count tokens
    /// from the texts (prompt: the request's JSON, completion: the answer's, four characters
    /// a token), as a real server's usage grows with what it reads and writes.
    pub fn set_handler(&self, handler: Handler) {
        let mut s = self.state.lock().unwrap();
        s.handler = Some(handler);
        s.text_usage = true;
    }

    /// Answer preflight probes this way from now on.
    pub fn set_probe(&self, mode: ProbeMode) {
        self.state.lock().unwrap().probe = mode;
    }

    /// The preflight probes seen, in order.
    pub fn probes(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().probes.clone()
    }

    /// Every POST waits this long before answering (to overlap requests).
    pub fn hold_each_request(&self, d: Duration) {
        self.state.lock().unwrap().hold = d;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().seen.clone()
    }

    /// The POSTs seen (chat + embeddings), in order: what costs tokens (a role may also
    /// `GET /models` once, for the model's context window).
    pub fn posts(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect()
    }

    /// POSTs seen (chat + embeddings), the requests that cost tokens.
    pub fn post_count(&self) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.method == "POST")
            .count()
    }

    pub fn max_in_flight(&self) -> usize {
        self.state.lock().unwrap().max_in_flight
    }
}

struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
    authorization: Option<String>,
}

fn read_request(reader: &mut BufReader<Box<dyn Conn>>) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        let value = value.trim().to_string();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().ok()?,
            "authorization" => authorization = Some(value),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        body,
        authorization,
    })
}

fn write_response(stream: &mut dyn Conn, code: u16, extra_headers: &str, body: &str) {
    let reason = match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra_headers}\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

fn serve_connection(conn: Box<dyn Conn>, state: Arc<Mutex<State>>) {
    let mut reader = BufReader::new(conn);
    while let Some(req) = read_request(&mut reader) {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let reply = {
            let mut s = state.lock().unwrap();
            let probe = req.path == "/v1/chat/completions" && is_probe(&body);
            let recorded = Recorded {
                at: Instant::now(),
                method: req.method.clone(),
                path: req.path.clone(),
                body: body.clone(),
                authorization: req.authorization.clone(),
            };
            if probe {
                s.probes.push(recorded);
            } else {
                s.seen.push(recorded);
            }
            s.in_flight += 1;
            s.max_in_flight = s.max_in_flight.max(s.in_flight);
            let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty())
                || body.get("tool_choice").is_some_and(|c| c != "auto");
            let reply = if s.refuse_tools && req.path == "/v1/chat/completions" && offers_tools {
                Some(Reply::Status {
                    code: 500,
                    retry_after: None,
                    message: "tools param requires --jinja flag".to_string(),
                })
            } else if probe {
                Some(probe_reply(s.probe, &body))
            } else if req.method == "POST" {
                s.script.pop_front()
            } else {
                None
            };
            let handler = s.handler.clone();
            (
                reply,
                s.hold,
                s.models.clone(),
                s.context_window,
                handler,
                s.text_usage,
            )
        };
        let (reply, hold, models, window, handler, text_usage) = reply;
        let reply = match (reply, handler) {
            (None, Some(h)) if req.method == "POST" && req.path == "/v1/chat/completions" => {
                Some(h(&body))
            }
            (r, _) => r,
        };
        if req.method == "POST" && !hold.is_zero() {
            thread::sleep(hold);
        }
        if matches!(reply, Some(Reply::Hangup)) {
            state.lock().unwrap().in_flight -= 1;
            reader.get_mut().hang_up();
            return;
        }
        let (code, headers, text) = answer(&req, &body, reply, &models, window, text_usage);
        {
            let mut s = state.lock().unwrap();
            s.in_flight -= 1;
        }
        write_response(reader.get_mut().as_mut(), code, &headers, &text);
    }
}

/// Whether a chat request is a role's preflight probe.
fn is_probe(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .is_some_and(|c| c.starts_with(tracer::llm::preflight::PROBE_MARK))
}

/// The answer to a probe under `mode`.
fn probe_reply(mode: ProbeMode, body: &Value) -> Reply {
    let offered = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let in_prompt = body["messages"][0]["content"]
        .as_str()
        .is_some_and(|c| c.contains("<tool_call>"));
    let call = || {
        vec![(
            "get_weather".to_string(),
            "{\"city\":\"Paris\"}".to_string(),
        )]
    };
    let text_call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    if !(offered || in_prompt) {
        return Reply::Text(match mode {
            ProbeMode::ThinkInContent => "<think>Easy.</think>OK".into(),
            _ => "OK".into(),
        });
    }
    match mode {
        ProbeMode::Good if offered => Reply::ToolCalls(call()),
        ProbeMode::Good | ProbeMode::CallsAsText => Reply::Text(text_call.into()),
        ProbeMode::DropsTools => Reply::Text("It is sunny in Paris today.".into()),
        ProbeMode::ThinkInContent => {
            Reply::TextAndCalls("<think>The weather tool fits.</think>".into(), call())
        }
    }
}

fn answer(
    req: &Request,
    body: &Value,
    reply: Option<Reply>,
    models: &[String],
    window: Option<u64>,
    text_usage: bool,
) -> (u16, String, String) {
    if req.method == "GET" && req.path == "/v1/models" {
        let data: Vec<Value> = models
            .iter()
            .map(|m| {
                let mut entry = json!({"id": m, "object": "model", "owned_by": "test"});
                if let Some(w) = window {
                    entry["max_model_len"] = json!(w);
                }
                entry
            })
            .collect();
        return (
            200,
            String::new(),
            json!({"object": "list", "data": data}).to_string(),
        );
    }
    let model = body["model"].as_str().unwrap_or("unknown").to_string();
    let reply = match reply {
        Some(Reply::Status {
            code,
            retry_after,
            message,
        }) => {
            let headers = retry_after
                .map(|s| format!("Retry-After: {s}\r\n"))
                .unwrap_or_default();
            let text = json!({"error": {"message": message, "type": "test_fault"}}).to_string();
            return (code, headers, text);
        }
        Some(Reply::EchoAuthorization(code)) => {
            let message = format!(
                "rejected credentials: {}",
                req.authorization.as_deref().unwrap_or("(none)")
            );
            return (
                code,
                String::new(),
                json!({"error": {"message": message}}).to_string(),
            );
        }
        Some(Reply::MalformedBody) => {
            return (
                200,
                String::new(),
                "{\"choices\": [{\"message\": ".to_string(),
            );
        }
        Some(Reply::Delay(d)) => {
            thread::sleep(d);
            None
        }
        other => other,
    };
    let reply = match reply {
        Some(Reply::EchoAuthorizationInAnswer) => {
            let auth = req.authorization.clone().unwrap_or_default();
            let args = json!({"note": auth, "seen": [format!("header {auth} seen")], (auth.clone()): true});
            let message = json!({
                "role": "assistant",
                "content": format!("You sent {auth}."),
                "reasoning_content": format!("The header was {auth}."),
                "tool_calls": [{"id": "call_0", "type": "function",
                                "function": {"name": "echo", "arguments": args.to_string()}}],
            });
            return (
                200,
                String::new(),
                json!({"id": "chatcmpl-test", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
                .to_string(),
            );
        }
        other => other,
    };
    match req.path.as_str() {
        "/v1/chat/completions" => (
            200,
            String::new(),
            chat_answer(&model, body, reply, text_usage).to_string(),
        ),
        "/v1/embeddings" => (
            200,
            String::new(),
            embeddings_answer(&model, body).to_string(),
        ),
        _ => (
            404,
            String::new(),
            json!({"error": {"message": format!("no route {}", req.path)}}).to_string(),
        ),
    }
}

fn chat_answer(model: &str, body: &Value, reply: Option<Reply>, text_usage: bool) -> Value {
    let last_user = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string();
    let (message, finish) = match reply {
        Some(Reply::Text(t)) => (json!({"role": "assistant", "content": t}), "stop"),
        Some(Reply::ToolCalls(calls)) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("call_{i}"), "type": "function",
                           "function": {"name": name, "arguments": args}})
                })
                .collect();
            (
                json!({"role": "assistant", "content": null, "tool_calls": calls}),
                "tool_calls",
            )
        }
        Some(Reply::Reasoning {
            field,
            reasoning,
            content,
        }) => {
            let mut m = json!({"role": "assistant", "content": content});
            m[field] = json!(reasoning);
            (m, "stop")
        }
        Some(Reply::Cut(t)) => (json!({"role": "assistant", "content": t}), "length"),
        Some(Reply::TextAndCalls(t, calls)) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("call_{i}"), "type": "function",
                           "function": {"name": name, "arguments": args}})
                })
                .collect();
            (
                json!({"role": "assistant", "content": t, "tool_calls": calls}),
                "tool_calls",
            )
        }
        _ => (
            json!({"role": "assistant", "content": format!("echo: {last_user}")}),
            "stop",
        ),
    };
    let messages = body["messages"].as_array().map_or(0, Vec::len);
    let (prompt_tokens, cached_tokens, completion_tokens) = if text_usage {
        let prompt = body.to_string().len() / 4;
        (prompt, 0, message.to_string().len() / 4)
    } else {
        // Like a server with prefix caching: every message but the newest was seen before.
        (messages * 10, messages.saturating_sub(1) * 10, 5)
    };
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": cached_tokens}}
    })
}

/// Each text's vector: [length, first byte / 255, 1.0].
pub fn expected_embedding(text: &str) -> Vec<f32> {
    vec![
        text.len() as f32,
        text.bytes().next().unwrap_or(0) as f32 / 255.0,
        1.0,
    ]
}

fn embeddings_answer(model: &str, body: &Value) -> Value {
    let inputs: Vec<String> = body["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(
            |(i, t)| json!({"object": "embedding", "index": i, "embedding": expected_embedding(t)}),
        )
        .collect();
    json!({"object": "list", "model": model, "data": data,
           "usage": {"prompt_tokens": inputs.len() * 3, "total_tokens": inputs.len() * 3}})
}
