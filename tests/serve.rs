//! `tracer serve` over real HTTP on loopback: an offline run of one domain through
//! `rollouts`, the server started as a child process, episodes replayed against the
//! rollouts artifact, faults that must stay inside their session, the tools over MCP with
//! the reference Python client, the example client with a fake policy, and `tracer episode`.

use crate::common::*;
use crate::openai_server::{OpenAiServer, Reply};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::OnceLock;

/// A project with a small airline run through `rollouts` (scripted agent and user), built
/// once per test binary; tests only read it (those with endpoint roles use a copy).
pub(crate) fn base() -> &'static (TempDir, TempDir) {
    static BASE: OnceLock<(TempDir, TempDir)> = OnceLock::new();
    BASE.get_or_init(|| {
        let root = project_copy("serve-base");
        std::fs::write(
            root.join("stages/grounded.toml"),
            "max_train = 10\nmax_eval = 4\nmax_customers = 24\n",
        )
        .unwrap();
        let out = temp_dir("serve-base-out");
        assert_ok(&tracer(
            &root,
            &out,
            &["run", "rollouts", "--domain", "airline"],
        ));
        (root, out)
    })
}

/// A copy of the base output for a test whose endpoint roles write the response cache
/// there (two processes cannot hold one cache file open at once).
pub(crate) fn own_output(label: &str) -> TempDir {
    let copy = temp_dir(label);
    copy_dir(base().1.path(), copy.path());
    copy
}

pub(crate) fn serve(root: &Path, out: &Path, extra: &[&str]) -> ChildServer {
    let mut cmd = tracer_command(root, out);
    cmd.args(["serve", "--domain", "airline", "--port", "0"])
        .args(extra);
    ChildServer::start(cmd)
}

/// A token long enough for `--token`.
pub(crate) const TOKEN: &str = "0123456789abcdef-s3cret";

/// A JSON body's header.
pub(crate) const JSON: (&str, &str) = ("Content-Type", "application/json");

pub(crate) fn json_of(status: u16, text: String) -> (u16, Value) {
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status}: {e}: {text}"));
    (status, v)
}

pub(crate) fn post(addr: &str, path: &str, body: &Value) -> (u16, Value) {
    let (s, t) = http(addr, "POST", path, &[JSON], body.to_string());
    json_of(s, t)
}

pub(crate) fn get(addr: &str, path: &str) -> (u16, Value) {
    let (s, t) = http(addr, "GET", path, &[], "");
    json_of(s, t)
}

/// The rollouts artifact, as pyarrow reads it.
pub(crate) fn rollouts(out: &Path) -> Vec<Value> {
    let text = python(&format!(
        "import json, pyarrow.parquet as pq\n\
         rows = pq.read_table('{}/rollouts/domain=airline/part-00000.parquet').to_pylist()\n\
         print(json.dumps([{{k: r[k] for k in ('task_id', 'trial', 'messages', 'reward', 'reward_breakdown', 'termination', 'user_model', 'user_turns', 'tool_calls')}} for r in rows]))",
        out.display()
    ));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn served_episodes_are_the_rollouts_episodes_byte_for_byte() {
    let (root, out) = base();
    let rows = rollouts(out.path());
    assert!(rows.len() >= 8, "{} rollouts", rows.len());
    let rewards: std::collections::BTreeSet<i64> =
        rows.iter().map(|r| r["reward"].as_i64().unwrap()).collect();
    let server = serve(root.path(), out.path(), &[]);
    let addr = &server.addr;
    for row in &rows {
        let task = row["task_id"].as_str().unwrap();
        let transcript: Vec<Value> =
            serde_json::from_str(row["messages"].as_str().unwrap()).unwrap();
        let (s, r) = post(
            addr,
            "/reset",
            &json!({"task_id": task, "trial": row["trial"], "agent_model": "replay"}),
        );
        assert_eq!(s, 200, "{r}");
        let opened = r["observation"]["messages"].as_array().unwrap();
        assert_eq!(
            opened[..],
            transcript[..opened.len()],
            "{task}: the opening"
        );
        assert_eq!(r["observation"]["tools"].as_array().unwrap().len(), 14);
        let session = r["session"].as_str().unwrap().to_string();
        let mut at = opened.len();
        let mut done = r["done"].as_bool().unwrap();
        while !done {
            let said = &transcript[at];
            assert_eq!(said["role"], "assistant", "{task}: message {at}");
            let (s, step) = post(
                addr,
                "/step",
                &json!({"session": session, "action": {"message": said}}),
            );
            assert_eq!(s, 200, "{step}");
            let added = step["observation"]["messages"].as_array().unwrap();
            assert_eq!(
                added[..],
                transcript[at + 1..at + 1 + added.len()],
                "{task}: after message {at}"
            );
            at += 1 + added.len();
            done = step["done"].as_bool().unwrap();
            if done {
                assert_eq!(step["reward"], row["reward"], "{task}");
            }
        }
        assert_eq!(
            at,
            transcript.len(),
            "{task}: the episode ends where it ended"
        );
        let (s, v) = post(addr, "/verify", &json!({"session": session}));
        assert_eq!(s, 200, "{v}");
        let record = &v["record"];
        for column in [
            "messages",
            "reward",
            "reward_breakdown",
            "termination",
            "user_model",
            "user_turns",
            "tool_calls",
        ] {
            assert_eq!(record[column], row[column], "{task}: column {column}");
        }
        assert_eq!(record["agent_model"], "replay");
        let (s, _) = post(addr, "/close", &json!({"session": session}));
        assert_eq!(s, 200);
    }
    // Episodes of every outcome were replayed, not only the successes.
    assert!(rewards.len() >= 2, "rewards {rewards:?}");
    let (_, health) = get(addr, "/health");
    assert_eq!(health["sessions"], 0, "{health}");
}

pub(crate) fn step_with(addr: &str, session: &str, message: Value) -> (u16, Value) {
    post(
        addr,
        "/step",
        &json!({"session": session, "action": {"message": message}}),
    )
}

pub(crate) fn call(name: &str, arguments: &str) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}
    ]})
}

#[test]
fn every_fault_is_a_json_error_inside_its_own_session() {
    let (root, out) = base();
    let task = rollouts(out.path())[0]["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let server = serve(
        root.path(),
        out.path(),
        &["--max-sessions", "3", "--idle-secs", "5"],
    );
    let addr = &server.addr;
    let open = || {
        let (s, r) = post(addr, "/reset", &json!({"task_id": task}));
        assert_eq!(s, 200, "{r}");
        r["session"].as_str().unwrap().to_string()
    };
    let bystander = open();
    let (_, before) = get(addr, &format!("/state?session={bystander}"));
    let s = open();
    let code = |r: &Value| r["error"]["code"].as_str().unwrap_or("").to_string();

    // Messages that are not an assistant's, or say nothing.
    let (st, r) = step_with(addr, &s, json!({"role": "user", "content": "hi"}));
    assert_eq!((st, code(&r).as_str()), (400, "bad_message"), "{r}");
    let (st, r) = step_with(addr, &s, json!({"role": "assistant", "content": "  "}));
    assert_eq!((st, code(&r).as_str()), (400, "bad_message"), "{r}");
    let (st, r) = step_with(addr, &s, json!("just text"));
    assert_eq!((st, code(&r).as_str()), (400, "bad_message"), "{r}");
    let (st, r) = post(addr, "/step", &json!({"session": s}));
    assert_eq!(st, 400, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("message"),
        "{r}"
    );
    let (st, t) = http(addr, "POST", "/step", &[JSON], "{not json");
    assert_eq!(json_of(st, t).1["error"]["code"], "bad_request");
    // An unknown tool and arguments that are not JSON are the environment's to answer, in
    // the transcript, as in rollouts; the step says which calls failed.
    let (st, r) = step_with(addr, &s, call("launch_rocket", "{}"));
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["observation"]["tool_errors"], json!([true]), "{r}");
    assert!(
        r["observation"]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("launch_rocket"),
        "{r}"
    );
    let (st, r) = step_with(addr, &s, call("get_user_details", "{\"user_id\": "));
    assert_eq!(
        (st, &r["observation"]["tool_errors"]),
        (200, &json!([true])),
        "{r}"
    );
    // 1 MB of arguments: refused before anything runs; a body over 1 MiB: refused unread.
    let big = format!("{{\"user_id\": \"{}\"}}", "x".repeat(1_000_000));
    let (st, r) = step_with(addr, &s, call("get_user_details", &big));
    assert_eq!((st, code(&r).as_str()), (400, "arguments_too_large"), "{r}");
    let huge =
        json!({"session": s, "message": {"role": "assistant", "content": "x".repeat(2 << 20)}});
    let (st, r) = post(addr, "/step", &huge);
    assert_eq!((st, code(&r).as_str()), (413, "too_large"), "{r}");
    // Unknown sessions, tasks, routes and methods; nothing a client names is a file.
    let (st, r) = step_with(
        addr,
        "s999-000000000000",
        json!({"role": "assistant", "content": "x"}),
    );
    assert_eq!((st, code(&r).as_str()), (404, "unknown_session"), "{r}");
    for path in ["/tasks/..%2F..%2FCargo.toml", "/tasks/../../etc/passwd"] {
        let (st, r) = get(addr, path);
        assert_eq!(st, 404, "{path}: {r}");
    }
    let (st, r) = post(addr, "/reset", &json!({"task_id": "../../Cargo.toml"}));
    assert_eq!((st, code(&r).as_str()), (404, "unknown_task"), "{r}");
    let (st, r) = get(addr, "/reset");
    assert_eq!((st, code(&r).as_str()), (405, "method_not_allowed"), "{r}");
    // The cap on open sessions.
    let _third = open();
    let (st, r) = post(addr, "/reset", &json!({"task_id": task}));
    assert_eq!((st, code(&r).as_str()), (429, "too_many_sessions"), "{r}");

    // None of it reached the bystander: same transcript, same database state; it plays on.
    let (_, after) = get(addr, &format!("/state?session={bystander}"));
    assert_eq!(after["messages"], before["messages"]);
    assert_eq!(after["state_hash"], before["state_hash"]);
    let (st, r) = step_with(
        addr,
        &bystander,
        json!({"role": "assistant", "content": "Could you give me your user id?"}),
    );
    assert_eq!(st, 200, "{r}");
    assert_eq!(r["observation"]["messages"][0]["role"], "user", "{r}");

    // Idle sessions close; a late step hears why.
    std::thread::sleep(std::time::Duration::from_millis(5500));
    let (st, r) = step_with(
        addr,
        &s,
        json!({"role": "assistant", "content": "Still there?"}),
    );
    assert_eq!((st, code(&r).as_str()), (410, "expired_session"), "{r}");
    let (st, r) = post(addr, "/reset", &json!({"task_id": task}));
    assert_eq!(st, 200, "expired sessions free their places: {r}");
}

#[test]
fn a_token_guards_the_server_and_is_required_beyond_loopback() {
    let (root, out) = base();
    let o = tracer(
        root.path(),
        out.path(),
        &[
            "serve", "--domain", "airline", "--bind", "0.0.0.0", "--port", "0",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--token"), "{}", stderr(&o));
    let o = tracer(
        root.path(),
        out.path(),
        &["serve", "--domain", "bank", "--port", "0"],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("domain=bank"), "{}", stderr(&o));

    // Only what the pipeline vouches for is served: a tasks file edited since its run is not.
    let edited = own_output("serve-edited-out");
    let tasks = edited
        .path()
        .join("tasks/domain=airline/part-00000.parquet");
    let mut bytes = std::fs::read(&tasks).unwrap();
    bytes.push(0);
    std::fs::write(&tasks, bytes).unwrap();
    let o = tracer(
        root.path(),
        edited.path(),
        &["serve", "--domain", "airline", "--port", "0"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("does not match its manifest"),
        "{}",
        stderr(&o)
    );

    let server = serve(root.path(), out.path(), &["--token", TOKEN]);
    // Two requests on one kept connection, the second asking to close it.
    {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(&server.addr).unwrap();
        let ask = |close: bool| {
            format!(
                "GET /health HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n{}\r\n",
                if close { "Connection: close\r\n" } else { "" }
            )
        };
        conn.write_all(ask(false).as_bytes()).unwrap();
        conn.write_all(ask(true).as_bytes()).unwrap();
        let mut both = String::new();
        conn.read_to_string(&mut both).unwrap();
        assert_eq!(both.matches("HTTP/1.1 200 OK").count(), 2, "{both}");
        assert!(both.contains("Connection: keep-alive") && both.contains("Connection: close"));
    }
    let (st, r) = get(&server.addr, "/health");
    assert_eq!(
        (st, &r["error"]["code"]),
        (401, &json!("unauthorized")),
        "{r}"
    );
    let (st, t) = http(
        &server.addr,
        "GET",
        "/health",
        &[("Authorization", "Bearer wrong")],
        "",
    );
    assert_eq!(st, 401, "{t}");
    let (st, t) = http(
        &server.addr,
        "GET",
        "/tasks?split=eval",
        &[("Authorization", &format!("Bearer {TOKEN}"))],
        "",
    );
    let (_, list) = json_of(st, t);
    assert_eq!(st, 200);
    let tasks = list["tasks"].as_array().unwrap();
    assert!(
        !tasks.is_empty() && tasks.iter().all(|t| t["split"] == "eval"),
        "{list}"
    );
}

#[test]
fn the_tools_over_mcp_with_the_reference_client() {
    let (root, out) = base();
    let task = &rollouts(out.path())[0];
    let id = task["task_id"].as_str().unwrap();
    let server = serve(root.path(), out.path(), &[]);
    let (_, t) = get(&server.addr, &format!("/tasks/{id}"));
    let user = t["user_id"].as_str().unwrap().to_string();
    let (_, r) = post(&server.addr, "/reset", &json!({"task_id": id}));
    let session = r["session"].as_str().unwrap().to_string();
    let said = python(&format!(
        r#"
import asyncio, json
from mcp import ClientSession
try:
    from mcp.client.streamable_http import streamable_http_client as connect
except ImportError:
    from mcp.client.streamable_http import streamablehttp_client as connect

async def main():
    async with connect("http://{addr}/mcp/{session}") as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            got = await s.call_tool("get_user_details", {{"user_id": "{user}"}})
            bad = await s.call_tool("get_user_details", {{"user_id": "nobody_0"}})
            try:
                await s.call_tool("launch_rocket", {{}})
                unknown = "answered"
            except Exception as e:
                unknown = str(e)
            flag = lambda r: getattr(r, "is_error", getattr(r, "isError", None))
            print(json.dumps({{"tools": sorted(t.name for t in tools),
                "schema": tools[0].model_dump(by_alias=True).get("inputSchema"),
                "got": got.content[0].text, "got_error": flag(got),
                "bad": bad.content[0].text, "bad_error": flag(bad), "unknown": unknown}}))

asyncio.run(main())
"#,
        addr = server.addr,
    ));
    let v: Value = serde_json::from_str(said.trim()).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert_eq!(v["tools"].as_array().unwrap().len(), 14, "{v}");
    assert!(
        v["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("cancel_reservation"))
    );
    assert_eq!(v["schema"]["type"], "object", "{v}");
    assert_eq!(v["got_error"], false, "{v}");
    let profile: Value = serde_json::from_str(v["got"].as_str().unwrap()).unwrap();
    assert!(profile["reservations"].is_array(), "{v}");
    assert_eq!(v["bad_error"], true, "{v}");
    assert!(
        v["unknown"].as_str().unwrap().contains("unknown tool"),
        "{v}"
    );
    // The calls joined the episode's transcript like any agent's.
    let (_, state) = get(&server.addr, &format!("/state?session={session}"));
    let messages = state["messages"].as_array().unwrap();
    let calls: Vec<&Value> = messages
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .collect();
    assert_eq!(calls.len(), 2, "{state}");
    assert_eq!(calls[0]["function"]["name"], "get_user_details");
    assert_eq!(messages.last().unwrap()["role"], "tool");
    // A session that does not exist is refused before any message is read.
    let (st, t) = http(&server.addr, "POST", "/mcp/s999-0", &[JSON], "{}");
    assert_eq!(st, 404, "{t}");
}

/// A task with a write among its gold actions, and those actions as tool calls.
pub(crate) fn task_with_a_write(addr: &str) -> (String, Vec<(String, String)>) {
    let (_, list) = get(addr, "/tasks?limit=1000");
    for t in list["tasks"].as_array().unwrap() {
        let id = t["task_id"].as_str().unwrap();
        let (_, task) = get(addr, &format!("/tasks/{id}"));
        let actions: Vec<(String, String)> = task["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["name"].as_str().unwrap().to_string(),
                    a["kwargs"].to_string(),
                )
            })
            .collect();
        let writes = [
            "cancel_reservation",
            "update_reservation",
            "book_reservation",
            "send_certificate",
        ];
        if actions
            .iter()
            .any(|(n, _)| writes.iter().any(|w| n.starts_with(w)))
        {
            return (id.to_string(), actions);
        }
    }
    panic!("no task with a write in {list}");
}

#[test]
fn the_example_client_and_tracer_episode_play_a_fake_policy() {
    let root = &base().0;
    let out = &own_output("serve-episode-out");
    let server = serve(root.path(), out.path(), &[]);
    let (task, gold) = task_with_a_write(&server.addr);
    let policy = OpenAiServer::start(&["fake-policy"]);
    policy.push(Reply::ToolCalls(gold.clone()));
    policy.push(Reply::Text("All done, thank you for your patience.".into()));
    let example = repo().join("examples/serve_episode.py");
    let o = std::process::Command::new("python3")
        .arg(&example)
        .args(["--env", &format!("http://{}", server.addr), "--task", &task])
        .args(["--model-url", &policy.base_url(), "--model", "fake-policy"])
        .args(["--max-turns", "4"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = String::from_utf8_lossy(&o.stdout).to_string();
    let v: Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(v["task_id"], task.as_str());
    assert_eq!(
        v["breakdown"]["state_match"], true,
        "the gold writes reached the fork: {v}"
    );
    let posts = policy.posts();
    assert!(!posts.is_empty());
    let first = &posts[0].body;
    assert_eq!(first["tools"].as_array().unwrap().len(), 14);
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(first["messages"][2]["role"], "user");
    // The example closed its session.
    assert_eq!(get(&server.addr, "/health").1["sessions"], 0);

    // The same policy through `tracer episode`, and through the server's /episode.
    let policy = OpenAiServer::start(&["fake-policy"]);
    policy.push(Reply::ToolCalls(gold.clone()));
    policy.push(Reply::Text("All done, thank you for your patience.".into()));
    let o = tracer(
        root.path(),
        out.path(),
        &[
            "episode",
            "--task",
            &task,
            "--agent-base-url",
            &policy.base_url(),
            "--agent-model",
            "fake-policy",
        ],
    );
    assert_ok(&o);
    let cli: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(cli["breakdown"]["state_match"], true, "{cli}");
    assert_eq!(cli["record"]["task_id"], task.as_str());
    assert!(
        cli["record"]["agent_model"]
            .as_str()
            .unwrap()
            .contains("fake-policy"),
        "{cli}"
    );
    // The first server is still up; its /episode runs the same episode. Its answers are
    // not cached (the endpoint is the client's), so the policy answers again.
    let served = server;
    let asked = policy.post_count();
    policy.push(Reply::ToolCalls(gold.clone()));
    policy.push(Reply::Text("All done, thank you for your patience.".into()));
    let (st, http_ep) = post(
        &served.addr,
        "/episode",
        &json!({"task_id": task, "agent": {"base_url": policy.base_url(), "model": "fake-policy"}}),
    );
    assert_eq!(st, 200, "{http_ep}");
    assert_eq!(
        http_ep["record"], cli["record"],
        "same task, seed and answers: same record"
    );
    assert_eq!(
        policy.post_count(),
        2 * asked,
        "the endpoint was asked again"
    );
    let o = tracer(
        root.path(),
        out.path(),
        &[
            "episode",
            "--task",
            "nope",
            "--agent-base-url",
            &policy.base_url(),
            "--agent-model",
            "m",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--task nope"), "{}", stderr(&o));
}

#[test]
fn the_user_simulator_can_be_an_endpoint_model_from_the_config() {
    let root = &base().0;
    let out = &own_output("serve-user-out");
    let users = OpenAiServer::start(&["fake-user"]);
    let dir = temp_dir("serve-user-config");
    let config = dir.join("rollouts.toml");
    std::fs::write(
        &config,
        format!(
            "split = \"train\"\nmax_steps = 6\nemotion = false\n[roles.user]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake-user\"\nmax_retries = 0\n",
            users.base_url()
        ),
    )
    .unwrap();
    let server = serve(
        root.path(),
        out.path(),
        &["--config", config.to_str().unwrap()],
    );
    let (_, health) = get(&server.addr, "/health");
    assert!(
        health["user_model"].as_str().unwrap().contains("fake-user"),
        "{health}"
    );
    let task = rollouts(out.path())[0]["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (s, r) = post(&server.addr, "/reset", &json!({"task_id": task}));
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["observation"]["emotion"], false, "the config's default");
    let opening = r["observation"]["messages"][2]["content"].as_str().unwrap();
    assert_eq!(opening, "echo: Hi! How can I help you today?");
    let session = r["session"].as_str().unwrap();
    let (_, step) = step_with(
        &server.addr,
        session,
        json!({"role": "assistant", "content": "What can I do for you?"}),
    );
    assert_eq!(
        step["observation"]["messages"][0]["content"],
        "echo: What can I do for you?"
    );
    // The user model got the task's instruction and no emotion instruction.
    let prompt = &users.posts()[0].body["messages"][0]["content"];
    let instruction = get(&server.addr, &format!("/tasks/{task}")).1["instruction"].clone();
    assert!(
        prompt
            .as_str()
            .unwrap()
            .contains(instruction.as_str().unwrap()),
        "{prompt}"
    );
    // The step limit of the config: 6 steps, then the episode is over.
    let mut done = false;
    for _ in 0..4 {
        let (_, step) = step_with(
            &server.addr,
            session,
            json!({"role": "assistant", "content": "Anything else?"}),
        );
        done = step["done"].as_bool().unwrap();
        if done {
            assert_eq!(step["termination"], "max_steps", "{step}");
            break;
        }
    }
    assert!(done);
}
