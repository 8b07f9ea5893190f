//! `tracer serve` as an OpenEnv environment, checked by OpenEnv's own validator and client
//! from PyPI (`openenv`, installed by `make test-deps` into `.venv-serve`), plus the
//! server-wide `/mcp`, infrastructure failures (no reward) and WebSocket faults that must
//! stay inside their connection.

use crate::common::*;
use crate::serve::{base, get, json_of, post, rollouts, serve};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

/// The Python of `.venv-serve` (OpenEnv's and ORS's clients), made by `make test-deps`.
pub(crate) fn serve_python() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-serve/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run `make test-deps` (it installs openenv and openreward there)",
        p.display()
    );
    p
}

/// Run a Python script of tests/ with the venv's Python; its stdout.
pub(crate) fn run_script(script: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(serve_python())
        .arg(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(script),
        )
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{script} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn openenv_validate_passes_and_its_client_plays_episodes() {
    let (root, out) = base();
    let rows = rollouts(out.path());
    let mut chosen: Vec<&Value> = rows.iter().filter(|r| r["reward"] == 1).take(3).collect();
    assert!(!chosen.is_empty(), "no rollout scored 1");
    chosen.extend(rows.iter().filter(|r| r["reward"] != 1).take(1));
    let file = temp_dir("openenv-episodes");
    let path = file.path().join("episodes.json");
    std::fs::write(&path, serde_json::to_string(&chosen).unwrap()).unwrap();
    let server = serve(root.path(), out.path(), &[]);
    let said = run_script("openenv_client.py", &[&server.addr, path.to_str().unwrap()]);
    let v: Value = serde_json::from_str(said.trim()).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert_eq!(v["validate_passed"], true, "{v}");
    assert_eq!(v["validate_rc"], 0, "{v}");
    let played = v["played"].as_array().unwrap();
    assert_eq!(played.len(), chosen.len());
    for p in played {
        assert_eq!(p["reward"], p["want"], "{p}");
        assert_eq!(p["record_reward"], p["want"], "{p}");
        assert_eq!(p["same_transcript"], true, "{p}");
        assert_eq!(p["customer_marked"], true, "{p}");
        assert!(p["state_steps"].as_u64().unwrap() > 0, "{p}");
        if p["want"] == 1 {
            assert_eq!(p["failure"], Value::Null, "{p}");
        } else {
            assert_eq!(p["failure"]["party"], "agent", "{p}");
        }
    }
    assert!(played.iter().any(|p| p["reward"] == 1), "{v}");
    let failing = &v["failing"];
    assert!(
        failing["reward"] == 0 || failing["reward"] == -1,
        "{failing}"
    );
    assert_eq!(failing["failure"]["party"], "agent", "{failing}");
    assert!(
        v["bad_step"].as_str().unwrap().contains("bad_message"),
        "{v}"
    );
    // Every session the client opened was closed with its connection.
    std::thread::sleep(Duration::from_millis(300));
    let (_, h) = get(&server.addr, "/health");
    assert_eq!(h["status"], "healthy");
    assert_eq!(h["sessions"], 0, "{h}");
}

#[test]
fn the_server_wide_mcp_opens_calls_and_closes_sessions() {
    let (root, out) = base();
    let task = &rollouts(out.path())[0];
    let id = task["task_id"].as_str().unwrap();
    let server = serve(root.path(), out.path(), &[]);
    let addr = &server.addr;
    let rpc = |method: &str, params: Value| {
        post(
            addr,
            "/mcp",
            &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        )
    };
    // What OpenEnv's validator sends: an empty object is a JSON-RPC error, answered 200.
    let (s, v) = post(addr, "/mcp", &json!({}));
    assert_eq!((s, &v["jsonrpc"]), (200, &json!("2.0")), "{v}");
    assert!(v["error"].is_object(), "{v}");
    let (_, list) = rpc("tools/list", json!({}));
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        14,
        "{list}"
    );
    let (_, no_session) = rpc("tools/call", json!({"name": "get_user_details"}));
    assert!(
        no_session["error"]["message"]
            .as_str()
            .unwrap()
            .contains("session_id"),
        "{no_session}"
    );
    let (_, created) = rpc("openenv/session/create", json!({"task_id": id}));
    let session = created["result"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, t) = get(addr, &format!("/tasks/{id}"));
    let (_, called) = rpc(
        "tools/call",
        json!({"session_id": session, "name": "get_user_details", "arguments": {"user_id": t["user_id"]}}),
    );
    assert_eq!(called["result"]["isError"], false, "{called}");
    let (_, closed) = rpc("openenv/session/close", json!({"session_id": session}));
    assert_eq!(closed["result"]["closed"], true, "{closed}");
    let (_, again) = rpc("openenv/session/close", json!({"session_id": session}));
    assert!(again["error"].is_object(), "{again}");
    let (_, unknown) = rpc("openenv/session/create", json!({"task_id": "nope"}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no task 'nope'"),
        "{unknown}"
    );
    // The OpenEnv documents.
    let (s, meta) = get(addr, "/metadata");
    assert_eq!(s, 200);
    assert!(meta["name"].is_string() && meta["description"].is_string());
    let (_, schema) = get(addr, "/schema");
    for k in ["action", "observation", "state"] {
        assert!(schema[k].is_object(), "{k}: {schema}");
    }
    let (_, api) = get(addr, "/openapi.json");
    assert!(api["info"]["version"].as_str().unwrap().starts_with("1."));
    for p in ["/reset", "/step", "/state", "/ws", "/mcp"] {
        assert!(api["paths"][p].is_object(), "{p}");
    }
}

/// A raw WebSocket client: the handshake, then frames as given.
fn ws_open(addr: &str, extra: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && s.read(&mut b).unwrap_or(0) == 1 {
        head.push(b[0]);
    }
    (s, String::from_utf8_lossy(&head).to_string())
}

/// A masked client frame.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x80 | opcode];
    let mask = [1u8, 2, 3, 4];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= 0xffff => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// The next server frame: opcode and payload.
fn read_frame(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).ok()?;
    let len = match h[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).ok()?;
            u16::from_be_bytes(b) as usize
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).ok()?;
            u64::from_be_bytes(b) as usize
        }
        n => n as usize,
    };
    let mut p = vec![0u8; len];
    s.read_exact(&mut p).ok()?;
    Some((h[0] & 0x0f, p))
}

fn ws_ask(s: &mut TcpStream, msg: &Value) -> Value {
    s.write_all(&frame(1, msg.to_string().as_bytes())).unwrap();
    let (op, p) = read_frame(s).expect("an answer");
    assert_eq!(op, 1);
    serde_json::from_slice(&p).unwrap()
}

#[test]
fn websocket_faults_stay_inside_their_connection() {
    let (root, out) = base();
    let task = rollouts(out.path())[0]["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let server = serve(root.path(), out.path(), &["--token", crate::serve::TOKEN]);
    let addr = &server.addr;
    let auth = format!("Authorization: Bearer {}\r\n", crate::serve::TOKEN);
    // No token: refused before the upgrade.
    let (_, head) = ws_open(addr, "");
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    // A web page: refused.
    let (_, head) = ws_open(addr, &format!("{auth}Origin: http://evil.example\r\n"));
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    // The bystander: a session with a step done.
    let (mut by, head) = ws_open(addr, &auth);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let r = ws_ask(
        &mut by,
        &json!({"type": "reset", "data": {"task_id": task}}),
    );
    assert_eq!(r["type"], "observation", "{r}");
    let r = ws_ask(
        &mut by,
        &json!({"type": "step", "data": {"content": "Could you give me your user id?"}}),
    );
    assert_eq!(r["data"]["done"], false, "{r}");
    let before = ws_ask(&mut by, &json!({"type": "state"}));
    // Garbage: an error message, the connection goes on.
    let (mut g, _) = ws_open(addr, &auth);
    for bad in [
        "not json".to_string(),
        "[1,2]".to_string(),
        json!({"type": "launch"}).to_string(),
        json!({"type": "step", "data": {"content": "hi"}}).to_string(),
        json!({"type": "reset", "data": {"task_id": "nope"}}).to_string(),
    ] {
        g.write_all(&frame(1, bad.as_bytes())).unwrap();
        let (_, p) = read_frame(&mut g).unwrap();
        let v: Value = serde_json::from_slice(&p).unwrap();
        assert_eq!(v["type"], "error", "{bad}: {v}");
        assert!(v["data"]["message"].is_string(), "{v}");
    }
    let r = ws_ask(&mut g, &json!({"type": "state"}));
    assert_eq!(r["type"], "state", "{r}");
    // A ping is answered with a pong carrying its payload.
    g.write_all(&frame(9, b"hi")).unwrap();
    assert_eq!(read_frame(&mut g), Some((0xA, b"hi".to_vec())));
    // An unmasked frame is a protocol violation: closed with 1002.
    g.write_all(&[0x81, 2, b'h', b'i']).unwrap();
    let (op, p) = read_frame(&mut g).unwrap();
    assert_eq!((op, &p[..2]), (8, &1002u16.to_be_bytes()[..]));
    // A message over the limit: closed with 1009, before it is read.
    let (mut big, _) = ws_open(addr, &auth);
    let mut head = vec![0x81, 0x80 | 127];
    head.extend_from_slice(&(2u64 << 20).to_be_bytes());
    big.write_all(&head).unwrap();
    let (op, p) = read_frame(&mut big).unwrap();
    assert_eq!((op, &p[..2]), (8, &1009u16.to_be_bytes()[..]));
    // A flood that never reads: many resets sent, none read; its sessions stay one.
    let (mut flood, _) = ws_open(addr, &auth);
    let reset = frame(
        1,
        json!({"type": "reset", "data": {"task_id": task}})
            .to_string()
            .as_bytes(),
    );
    flood
        .set_write_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    for _ in 0..200 {
        if flood.write_all(&reset).is_err() {
            break;
        }
    }
    // The bystander is untouched and goes on.
    let after = ws_ask(&mut by, &json!({"type": "state"}));
    assert_eq!(before["data"]["state_hash"], after["data"]["state_hash"]);
    assert_eq!(before["data"]["messages"], after["data"]["messages"]);
    let r = ws_ask(
        &mut by,
        &json!({"type": "step", "data": {"content": "Thank you. Anything else?"}}),
    );
    assert_eq!(r["type"], "observation", "{r}");
    drop(flood);
    drop(g);
    drop(big);
    // Closing the connection closes its session.
    by.write_all(&frame(1, json!({"type": "close"}).to_string().as_bytes()))
        .unwrap();
    let bearer = format!("Bearer {}", crate::serve::TOKEN);
    let mut h = Value::Null;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        let (s, t) = http(addr, "GET", "/health", &[("Authorization", &bearer)], "");
        h = json_of(s, t).1;
        if h["sessions"] == 0 {
            break;
        }
    }
    assert_eq!(h["sessions"], 0, "{h}");
}

#[test]
fn an_endpoint_failure_is_no_reward_and_says_whose_it_was() {
    use crate::openai_server::{OpenAiServer, Reply};
    let (root, out) = base();
    let task = rollouts(out.path())[0]["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let server = serve(root.path(), out.path(), &[]);
    let policy = OpenAiServer::start(&["broken-policy"]);
    for _ in 0..8 {
        policy.push(Reply::Status {
            code: 401,
            retry_after: None,
            message: "no such key".into(),
        });
    }
    let (s, v) = post(
        &server.addr,
        "/episode",
        &json!({"task_id": task, "agent": {"base_url": policy.base_url(), "model": "broken-policy"}}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["termination"], "endpoint_error", "{v}");
    assert_eq!(
        v["reward"],
        Value::Null,
        "an endpoint's failure is no reward: {v}"
    );
    assert_eq!(v["failure"]["party"], "infrastructure", "{v}");
    assert_eq!(v["failure"]["side"], "agent_endpoint", "{v}");
    assert!(
        v["failure"]["detail"].as_str().unwrap().contains("401"),
        "{v}"
    );
    // The customer's messages are marked, and are never the policy's.
    let sources = v["message_sources"].as_array().unwrap();
    assert_eq!(sources[0], "system");
    assert_eq!(sources[1], "greeting");
    assert_eq!(sources[2], "customer", "{v}");
}

#[test]
fn the_trainer_examples_run() {
    use crate::openai_server::{OpenAiServer, Reply};
    let (root, out) = base();
    let task = rollouts(out.path())[0]["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = crate::serve::own_output("serve-examples-out");
    let server = serve(root.path(), out.path(), &[]);
    let env = format!("http://{}", server.addr);
    // OpenEnv's client with an OpenAI-compatible policy.
    let policy = OpenAiServer::start(&["fake-policy"]);
    policy.push(Reply::Text(
        "Could you give me your user id, please?".into(),
    ));
    let o = std::process::Command::new(serve_python())
        .arg(repo().join("examples/openenv_policy.py"))
        .args(["--env", &env, "--task", &task])
        .args(["--model-url", &policy.base_url(), "--model", "fake-policy"])
        .args(["--max-turns", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(v["task_id"], task.as_str(), "{v}");
    assert_eq!(v["policy_messages"], 3, "{v}");
    let posts = policy.posts();
    assert_eq!(posts[0].body["tools"].as_array().unwrap().len(), 14);
    assert_eq!(posts[0].body["messages"][2]["role"], "user");
    // The trainer-owned endpoint shape: whole episodes over /episode.
    let policy = OpenAiServer::start(&["fake-policy"]);
    let o = std::process::Command::new("python3")
        .arg(repo().join("examples/trainer_endpoint.py"))
        .args(["--env", &env, "--tasks", "2"])
        .args(["--model-url", &policy.base_url(), "--model", "fake-policy"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
    assert_eq!(v["episodes"], 2, "{v}");
    assert!(v["masked_customer_turns"].as_u64().unwrap() >= 2, "{v}");
    for r in v["rewards"].as_array().unwrap() {
        assert!([-1, 0, 1].contains(&r.as_i64().unwrap()), "{v}");
    }
    assert_eq!(get(&server.addr, "/health").1["sessions"], 0);
}

#[test]
fn the_ors_client_plays_episodes_with_the_reward_only_at_the_end() {
    let (root, out) = base();
    let rows = rollouts(out.path());
    let mut chosen: Vec<&Value> = rows.iter().filter(|r| r["reward"] == 1).take(2).collect();
    chosen.extend(rows.iter().filter(|r| r["reward"] != 1).take(1));
    let file = temp_dir("ors-episodes");
    let path = file.path().join("episodes.json");
    std::fs::write(&path, serde_json::to_string(&chosen).unwrap()).unwrap();
    let server = serve(root.path(), out.path(), &[]);
    let said = run_script("ors_client.py", &[&server.addr, path.to_str().unwrap()]);
    let v: Value = serde_json::from_str(said.trim()).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert!(v["error"].is_null(), "{v}");
    assert_eq!(v["splits"].as_array().unwrap().len(), 2, "{v}");
    assert!(v["train_tasks"].as_u64().unwrap() > 0, "{v}");
    let tools = v["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 15, "{v}");
    assert!(tools.contains(&json!("reply_to_customer")), "{v}");
    let played = v["played"].as_array().unwrap();
    assert_eq!(played.len(), chosen.len());
    for p in played {
        assert_eq!(p["finished"], true, "{p}");
        assert_eq!(p["reward"].as_f64(), p["want"].as_f64(), "{p}");
        assert_eq!(p["early_reward"], false, "no reward before the end: {p}");
        assert_eq!(p["prompt_has_customer"], true, "{p}");
    }
    assert!(played.iter().any(|p| p["reward"] == 1.0), "{v}");
    assert_eq!(v["after_end"], "episode_finished", "{v}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(get(&server.addr, "/health").1["sessions"], 0);
}

#[test]
fn ors_routes_refuse_bad_input_and_keep_the_server_rules() {
    let (root, out) = base();
    let task = rollouts(out.path())[0]["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let server = serve(root.path(), out.path(), &["--token", crate::serve::TOKEN]);
    let addr = &server.addr;
    let bearer = format!("Bearer {}", crate::serve::TOKEN);
    let auth = ("Authorization", bearer.as_str());
    let json_h = ("Content-Type", "application/json");
    // The token guards the ORS routes too.
    let (s, _) = http(addr, "GET", "/airline/tools", &[], "");
    assert_eq!(s, 401);
    let (s, t) = http(addr, "GET", "/airline/tools", &[auth], "");
    assert_eq!(s, 200, "{t}");
    // A session id that is not an id, a task that is not served, a tool call without a
    // session: one-line JSON errors, nothing opened.
    let create = |sid: &str, body: &str| {
        json_of_pair(http(
            addr,
            "POST",
            "/create",
            &[auth, json_h, ("X-Session-ID", sid)],
            body,
        ))
    };
    let (s, v) = create(
        "../../etc",
        &json!({"task_spec": {"task_id": task}}).to_string(),
    );
    assert_eq!(s, 400, "{v}");
    let (s, v) = create(
        "ors-1",
        &json!({"task_spec": {"task_id": "nope"}}).to_string(),
    );
    assert_eq!(s, 404, "{v}");
    let (s, v) = create("ors-1", "{}");
    assert_eq!(s, 400, "{v}");
    let (s, v) = json_of_pair(http(
        addr,
        "POST",
        "/airline/call",
        &[auth, json_h, ("X-Session-ID", "ors-9")],
        json!({"name": "reply_to_customer", "input": {"text": "hi"}}).to_string(),
    ));
    assert_eq!(s, 404, "{v}");
    // A session opened, then the same id again: refused, the first untouched.
    let (s, v) = create(
        "ors-1",
        &json!({"task_spec": {"task_id": task}}).to_string(),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = create(
        "ors-1",
        &json!({"task_spec": {"task_id": task}}).to_string(),
    );
    assert_eq!(s, 409, "{v}");
    // An unknown tool is a refused call (not_found), inside the event stream.
    let (s, t) = http(
        addr,
        "POST",
        "/airline/call",
        &[auth, json_h, ("X-Session-ID", "ors-1")],
        json!({"name": "launch_rocket", "input": {}}).to_string(),
    );
    assert_eq!(s, 200, "{t}");
    assert!(t.contains("\"reason\":\"not_found\""), "{t}");
    let (_, h) = json_of_pair(http(addr, "GET", "/health", &[auth], ""));
    assert_eq!(h["sessions"], 1, "{h}");
    let (s, _) = http(
        addr,
        "POST",
        "/delete",
        &[auth, ("X-Session-ID", "ors-1")],
        "",
    );
    assert_eq!(s, 200);
    let (_, h) = json_of_pair(http(addr, "GET", "/health", &[auth], ""));
    assert_eq!(h["sessions"], 0, "{h}");
    // A body without JSON's content type is still refused where a body is expected.
    let (s, _) = http(
        addr,
        "POST",
        "/airline/tasks",
        &[auth, ("Content-Type", "text/plain")],
        "{\"split\": \"train\"}",
    );
    assert_eq!(s, 415);
}

fn json_of_pair((s, t): (u16, String)) -> (u16, Value) {
    json_of(s, t)
}
