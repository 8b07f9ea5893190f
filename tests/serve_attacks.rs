//! `tracer serve` (and, through the shared HTTP server, `tracer review`) under attack and
//! misuse, over real HTTP on loopback: a client that wants the server's secrets, that
//! would crash it with connections, grow its memory or poison the response cache; a run on
//! the same output; a page that rebinds its name to loopback; clients that leave, and
//! tokens that guard nothing. Each attack also checks that a bystander session is
//! untouched and that the server's threads and memory (`/proc/<pid>/status`) stay bounded.

use crate::common::*;
use crate::openai_server::{OpenAiServer, Reply};
use crate::serve::{
    JSON, TOKEN, base, get, json_of, own_output, post, rollouts, serve, step_with,
    task_with_a_write,
};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

/// Threads and resident memory (KiB) of a process.
fn threads_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {status}"))
    };
    (field("Threads:"), field("VmRSS:"))
}

/// The bytes of one raw request's answer (empty when the server closed without one).
fn raw(addr: &str, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    let _ = s.write_all(request.as_bytes());
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).to_string()
}

/// Wait (up to a minute) for `cond`; whether it came.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..600 {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

fn code(r: &Value) -> &str {
    r["error"]["code"].as_str().unwrap_or("")
}

/// A session that plays along while the attacks run, and its state now.
struct Bystander {
    session: String,
    before: Value,
}

impl Bystander {
    fn open(addr: &str, task: &str) -> Bystander {
        let (s, r) = post(addr, "/reset", &json!({"task_id": task}));
        assert_eq!(s, 200, "{r}");
        let session = r["session"].as_str().unwrap().to_string();
        let (_, before) = get(addr, &format!("/state?session={session}"));
        Bystander { session, before }
    }

    /// Same transcript and database state as before, and it still plays; and the server
    /// (`pid`) is back to a few dozen threads and a few hundred MiB at most.
    fn untouched(&self, addr: &str, pid: u32) {
        let (s, after) = get(addr, &format!("/state?session={}", self.session));
        assert_eq!(s, 200, "{after}");
        assert_eq!(after["messages"], self.before["messages"]);
        assert_eq!(after["state_hash"], self.before["state_hash"]);
        let (s, r) = step_with(
            addr,
            &self.session,
            json!({"role": "assistant", "content": "Could you give me your user id?"}),
        );
        assert_eq!(s, 200, "{r}");
        assert_eq!(r["observation"]["messages"][0]["role"], "user", "{r}");
        assert!(
            eventually(|| threads_and_rss(pid).0 < 64),
            "{} threads",
            threads_and_rss(pid).0
        );
        let (_, rss) = threads_and_rss(pid);
        assert!(rss < 512 * 1024, "{rss} KiB");
    }
}

fn first_task(out: &Path) -> String {
    rollouts(out)[0]["task_id"].as_str().unwrap().to_string()
}

#[test]
fn h1_a_client_cannot_have_the_server_send_its_secrets() {
    let (root, out) = base();
    let mut cmd = tracer_command(root.path(), out.path());
    cmd.args(["serve", "--domain", "airline", "--port", "0"])
        .env("TRACER_TEST_SECRET", "sk-server-secret-0123456789");
    let server = ChildServer::start(cmd);
    let addr = &server.addr;
    let task = first_task(out.path());
    let bystander = Bystander::open(addr, &task);
    let logger = OpenAiServer::start(&["m"]);
    let agent = |key_env: &str| json!({"task_id": task, "agent": {"base_url": logger.base_url(), "model": "m", "api_key_env": key_env}});
    // Any variable name is refused, set or not, with the same answer.
    let (s1, set) = post(addr, "/episode", &agent("TRACER_TEST_SECRET"));
    let (s2, unset) = post(addr, "/episode", &agent("TRACER_NO_SUCH_VARIABLE"));
    assert_eq!((s1, code(&set)), (403, "key_env_refused"), "{set}");
    assert_eq!(
        (s1, &set),
        (s2, &unset),
        "the answer tells nothing of the environment"
    );
    // A web page's request: a text/plain body (no preflight), or any with its Origin.
    let body = agent("TRACER_TEST_SECRET").to_string();
    let (s, t) = http(
        addr,
        "POST",
        "/episode",
        &[("Content-Type", "text/plain")],
        &body,
    );
    assert_eq!((s, code(&json_of(s, t).1)), (415, "unsupported_media_type"));
    let (s, t) = http(addr, "POST", "/episode", &[], &body);
    assert_eq!(s, 415, "{t}");
    let (s, t) = http(
        addr,
        "POST",
        "/reset",
        &[JSON, ("Origin", "http://evil.example")],
        json!({"task_id": task}).to_string(),
    );
    assert_eq!((s, code(&json_of(s, t).1)), (403, "cross_origin"));
    assert!(
        logger.requests().is_empty(),
        "the endpoint heard from the server: {:?}",
        logger.requests()
    );
    // The client's own key goes to the client's endpoint, and nothing else does.
    let (s, r) = post(
        addr,
        "/episode",
        &json!({"task_id": task, "agent": {"base_url": logger.base_url(), "model": "m", "api_key": "client-own-key", "max_retries": 0}}),
    );
    assert_eq!(s, 200, "{r}");
    let seen = logger.requests();
    assert!(!seen.is_empty());
    for r in &seen {
        assert_eq!(r.authorization.as_deref(), Some("Bearer client-own-key"));
        assert!(!r.body.to_string().contains("sk-server-secret"));
    }
    bystander.untouched(addr, server.child.id());
}

#[test]
fn h2_connections_are_capped_and_every_request_has_a_deadline() {
    let (root, out) = base();
    let server = serve(
        root.path(),
        out.path(),
        &["--max-connections", "8", "--request-timeout-secs", "2"],
    );
    let addr = &server.addr;
    let pid = server.child.id();
    let bystander = Bystander::open(addr, &first_task(out.path()));
    let (idle_threads, _) = threads_and_rss(pid);
    // Eight clients that trickle their heads, a byte at a time, hold every place ...
    let mut tricklers: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            write!(s, "POST /reset HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").unwrap();
            s
        })
        .collect();
    assert!(eventually(|| threads_and_rss(pid).0 >= idle_threads + 8));
    // ... so the next hundred are refused at once, and no thread is started for them.
    let refused = (0..100)
        .filter(|_| {
            let a = raw(
                addr,
                &format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
            );
            a.is_empty() || a.starts_with("HTTP/1.1 503")
        })
        .count();
    assert_eq!(refused, 100);
    let (threads, _) = threads_and_rss(pid);
    assert!(threads <= idle_threads + 8, "{threads} threads");
    // The tricklers are cut at their deadline, however steadily they send.
    let mut cut = 0;
    for _ in 0..1200 {
        tricklers.retain_mut(|s| {
            let alive = s.write_all(b"a").is_ok() && {
                s.set_nonblocking(true).unwrap();
                let mut b = [0u8; 1];
                let r = s.read(&mut b);
                s.set_nonblocking(false).unwrap();
                matches!(r, Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock)
            };
            cut += usize::from(!alive);
            alive
        });
        if tricklers.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(cut, 8, "trickling connections outlived their deadline");
    assert!(eventually(|| threads_and_rss(pid).0 <= idle_threads));
    bystander.untouched(addr, pid);
}

#[test]
fn h2_running_out_of_file_descriptors_is_a_503_not_a_crash() {
    let (root, out) = base();
    let mut cmd = std::process::Command::new("sh");
    let inner = tracer_command(root.path(), out.path());
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.current_dir(root.path())
        .args(["-c", "ulimit -n 96 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_tracer"))
        .args(["serve", "--domain", "airline", "--port", "0"]);
    let server = ChildServer::start(cmd);
    let addr = &server.addr;
    let pid = server.child.id();
    let bystander = Bystander::open(addr, &first_task(out.path()));
    // Idle connections until the server has no descriptor left: later ones are answered 503.
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..200 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        // A held connection hears nothing (it sends no request); a refused one its answer.
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        if answer.is_empty() {
            held.push(s);
            continue;
        }
        let answer = String::from_utf8_lossy(&answer).to_string();
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("file descriptors"), "{answer}");
        refused += 1;
        if refused == 5 {
            break;
        }
    }
    assert_eq!(refused, 5, "{} connections held, none refused", held.len());
    let (threads, _) = threads_and_rss(pid);
    assert!(threads < 160, "{threads} threads");
    drop(held);
    assert!(eventually(|| get(addr, "/health").0 == 200));
    bystander.untouched(addr, pid);
}

#[test]
fn h3_a_client_cannot_grow_the_server_memory() {
    let (root, out) = base();
    let server = serve(root.path(), out.path(), &[]);
    let addr = &server.addr;
    let pid = server.child.id();
    let task = first_task(out.path());
    let bystander = Bystander::open(addr, &task);
    let (_, health) = get(addr, "/health");
    let limits = health["limits"].clone();
    let (_, rss_before) = threads_and_rss(pid);
    // 1 MiB of `tools/list` in one MCP batch: one error, nothing answered.
    let (s, r) = post(addr, "/reset", &json!({"task_id": task}));
    assert_eq!(s, 200, "{r}");
    let victim = r["session"].as_str().unwrap().to_string();
    let one = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let batch = format!(
        "[{}]",
        vec![one.as_str(); 1_000_000 / (one.len() + 1)].join(",")
    );
    let (s, t) = http(addr, "POST", &format!("/mcp/{victim}"), &[JSON], &batch);
    assert!(t.len() < 4096, "{} bytes of answer", t.len());
    let (_, v) = json_of(s, t);
    assert_eq!((s, v["error"]["code"].as_i64()), (400, Some(-32600)), "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("the limit is {}", limits["max_mcp_batch"])),
        "{v}"
    );
    // A message with more tool calls than the limit: refused, nothing runs.
    let most = limits["max_tool_calls"].as_u64().unwrap() as usize;
    let calls = |n: usize, arguments: &str| {
        json!({"role": "assistant", "content": null, "tool_calls": (0..n).map(|i| json!(
            {"id": format!("c{i}"), "type": "function", "function": {"name": "get_user_details", "arguments": arguments}}
        )).collect::<Vec<_>>()})
    };
    let (s, r) = step_with(addr, &victim, calls(most + 1, "{}"));
    assert_eq!((s, code(&r)), (400, "too_many_tool_calls"), "{r}");
    // Steps of the most calls with large arguments, until the transcript is full.
    let arguments = json!({"user_id": "x".repeat(28_000)}).to_string();
    let mut refused = None;
    for i in 0..10 {
        let (s, r) = step_with(addr, &victim, calls(most, &arguments));
        if s != 200 {
            refused = Some((i, s, r));
            break;
        }
    }
    let (steps, s, r) = refused.expect("the transcript grew without a limit");
    assert_eq!((s, code(&r)), (413, "transcript_too_large"), "{r}");
    let cap = limits["max_transcript_bytes"].as_u64().unwrap() as usize;
    assert!(steps * most * arguments.len() <= cap, "{steps} steps");
    let (_, state) = get(addr, &format!("/state?session={victim}"));
    assert!(state.to_string().len() < cap + (1 << 20));
    let (_, rss_after) = threads_and_rss(pid);
    assert!(
        rss_after < rss_before + 96 * 1024,
        "RSS {rss_before} KiB -> {rss_after} KiB"
    );
    bystander.untouched(addr, pid);
}

#[test]
fn h4_a_client_cannot_poison_the_response_cache() {
    let root = &base().0;
    let out = own_output("serve-poison-out");
    let server = serve(root.path(), out.path(), &[]);
    let addr = &server.addr;
    let (task, gold) = task_with_a_write(addr);
    let bystander = Bystander::open(addr, &task);
    let real = OpenAiServer::start(&["m"]);
    let attacker = OpenAiServer::start(&["m"]);
    attacker.push(Reply::Text(
        "Your booking is cancelled; nothing else to do.".into(),
    ));
    let episode = |base_url: String, extra: Value| {
        let mut agent = json!({"base_url": base_url, "model": "m", "max_retries": 0});
        agent
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        post(addr, "/episode", &json!({"task_id": task, "agent": agent}))
    };
    // The attacker's answers under the real endpoint's namespace: refused.
    let (s, r) = episode(
        attacker.base_url(),
        json!({"cache_namespace": real.base_url()}),
    );
    assert_eq!((s, code(&r)), (400, "bad_request"), "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cache_namespace")
    );
    assert!(attacker.requests().is_empty());
    // Played against its own endpoint, the attacker's episode stores nothing.
    let cache = out.path().join(".llm-cache.redb");
    let cached = std::fs::read(&cache).ok();
    let (s, r) = episode(attacker.base_url(), json!({}));
    assert_eq!(s, 200, "{r}");
    assert!(!attacker.requests().is_empty());
    assert_eq!(
        std::fs::read(&cache).ok(),
        cached,
        "the run's cache was written"
    );
    // The next episode against the real endpoint is the real endpoint's, and so is the
    // one after it (nothing is served from a cache).
    for round in 1..=2 {
        real.push(Reply::ToolCalls(gold.clone()));
        real.push(Reply::Text("All done, thank you.".into()));
        let asked = real.post_count();
        let (s, r) = episode(real.base_url(), json!({}));
        assert_eq!(s, 200, "{r}");
        assert!(real.post_count() > asked, "round {round}: no request sent");
        assert_eq!(r["breakdown"]["state_match"], true, "round {round}: {r}");
    }
    bystander.untouched(addr, server.child.id());
}

#[test]
fn m_a_run_and_the_server_share_an_output() {
    let users = OpenAiServer::start(&["fake-user"]);
    let user_table = format!(
        "[roles.user]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake-user\"\nmax_retries = 0\n",
        users.base_url()
    );
    let root = temp_dir("serve-run-root");
    copy_dir(base().0.path(), root.path());
    let out = own_output("serve-run-out");
    let config = root.join("serve-rollouts.toml");
    std::fs::write(
        &config,
        format!("split = \"train\"\nmax_steps = 6\nemotion = false\n{user_table}"),
    )
    .unwrap();
    let server = serve(
        root.path(),
        out.path(),
        &["--config", config.to_str().unwrap()],
    );
    let addr = &server.addr;
    let task = first_task(out.path());
    let bystander = Bystander::open(addr, &task);
    // The server's endpoint user caches in a file of its own; the run's cache stays free:
    // a process that opens it (as a run does) gets it at once, and an /episode meanwhile
    // needs no cache.
    assert!(out.path().join(".serve-cache.redb").exists());
    {
        let held = tracer::llm::cache::ResponseCache::open(&out.path().join(".llm-cache.redb"))
            .expect("the run's cache is free");
        let policy = OpenAiServer::start(&["m"]);
        let (s, r) = post(
            addr,
            "/episode",
            &json!({"task_id": task, "agent": {"base_url": policy.base_url(), "model": "m"}}),
        );
        assert_eq!(s, 200, "{r}");
        assert!(policy.post_count() > 0);
        drop(held);
    }
    // An endpoint-using run on the same output while the server runs.
    let stage = root.join("stages/rollouts.toml");
    let text = std::fs::read_to_string(&stage)
        .unwrap()
        .replace("max_steps = 50", "max_steps = 4");
    std::fs::write(&stage, format!("{text}\n{user_table}")).unwrap();
    let o = tracer(
        root.path(),
        out.path(),
        &["run", "rollouts", "--domain", "airline"],
    );
    assert_ok(&o);
    assert!(out.path().join(".llm-cache.redb").exists());
    // A second server with an endpoint user on this output is told who holds its cache.
    let o = tracer(
        root.path(),
        out.path(),
        &[
            "serve",
            "--domain",
            "airline",
            "--port",
            "0",
            "--config",
            config.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(".serve-cache.lock")
            && err.contains(&format!("pid {}", server.child.id()))
            && err.contains("tracer serve"),
        "{err}"
    );
    bystander.untouched(addr, server.child.id());
}

#[test]
fn m_a_page_that_rebinds_its_name_to_loopback_is_refused() {
    let (root, out) = base();
    let ask = |addr: &str, host: &str| {
        raw(
            addr,
            &format!("GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
    };
    let server = serve(root.path(), out.path(), &["--allow-host", "box.lan"]);
    let addr = &server.addr;
    let port = addr.rsplit(':').next().unwrap();
    let bystander = Bystander::open(addr, &first_task(out.path()));
    let rebound = ask(addr, &format!("rebind.evil.example:{port}"));
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    assert!(rebound.contains("wrong_host"), "{rebound}");
    for host in [
        format!("localhost:{port}"),
        addr.to_string(),
        format!("box.lan:{port}"),
    ] {
        assert!(ask(addr, &host).starts_with("HTTP/1.1 200"), "{host}");
    }
    bystander.untouched(addr, server.child.id());
    // The review app answers through the same server.
    let project = project_copy("review-rebind");
    let mut cmd = tracer_command(&project, &project.join("output"));
    cmd.args(["review", "--domain", "airline", "--port", "0"]);
    let review = ChildServer::start(cmd);
    let port = review.addr.rsplit(':').next().unwrap();
    let page = |host: &str| {
        raw(
            &review.addr,
            &format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
    };
    assert!(page(&format!("rebind.evil.example:{port}")).starts_with("HTTP/1.1 403"));
    assert!(page(&format!("localhost:{port}")).starts_with("HTTP/1.1 200"));
}

#[test]
fn l_an_episode_stops_with_its_client_and_episodes_are_capped() {
    let root = &base().0;
    let out = own_output("serve-gone-out");
    let server = serve(root.path(), out.path(), &["--max-episodes", "1"]);
    let addr = server.addr.clone();
    let task = first_task(out.path());
    let bystander = Bystander::open(&addr, &task);
    // An endpoint that takes ten minutes to answer.
    let slow = OpenAiServer::start(&["m"]);
    slow.push(Reply::Delay(Duration::from_secs(600)));
    let body = json!({"task_id": task, "agent": {"base_url": slow.base_url(), "model": "m", "max_retries": 0, "timeout_secs": 900}}).to_string();
    let mut client = TcpStream::connect(&addr).unwrap();
    write!(
        client,
        "POST /episode HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    assert!(eventually(|| slow.post_count() == 1));
    assert_eq!(get(&addr, "/health").1["episodes"], 1);
    // One episode runs, the most: another is refused as the server's condition.
    let (s, r) = post(&addr, "/episode", &serde_json::from_str(&body).unwrap());
    assert_eq!((s, code(&r)), (503, "too_many_episodes"), "{r}");
    // The client goes: its episode stops, long before the endpoint would have answered.
    drop(client);
    assert!(
        eventually(|| get(&addr, "/health").1["episodes"] == 0),
        "the episode outlived its client"
    );
    let fast = OpenAiServer::start(&["m"]);
    let (s, r) = post(
        &addr,
        "/episode",
        &json!({"task_id": task, "agent": {"base_url": fast.base_url(), "model": "m"}}),
    );
    assert_eq!(s, 200, "its place came back: {r}");
    bystander.untouched(&addr, server.child.id());
}

#[test]
fn l_a_token_must_guard_something_and_bearer_is_any_case() {
    let (root, out) = base();
    for (token, why) in [
        ("", "empty"),
        ("   ", "empty"),
        ("x", "at least 16"),
        ("0123456789 abcdef", "printable ASCII without spaces"),
    ] {
        let o = tracer(
            root.path(),
            out.path(),
            &[
                "serve", "--domain", "airline", "--port", "0", "--token", token,
            ],
        );
        assert!(!o.status.success(), "--token {token:?} accepted");
        assert!(
            stderr(&o).contains("--token") && stderr(&o).contains(why),
            "{token:?}: {}",
            stderr(&o)
        );
    }
    let padded = format!("  {TOKEN}\n");
    let server = serve(root.path(), out.path(), &["--token", &padded]);
    for header in [
        format!("Bearer {TOKEN}"),
        format!("bearer {TOKEN}"),
        format!("BEARER   {TOKEN} "),
    ] {
        let (s, t) = http(
            &server.addr,
            "GET",
            "/health",
            &[("Authorization", &header)],
            "",
        );
        assert_eq!(s, 200, "{header}: {t}");
    }
    for header in [
        format!("Basic {TOKEN}"),
        format!("Bearer{TOKEN}"),
        "Bearer ".to_string(),
    ] {
        let (s, _) = http(
            &server.addr,
            "GET",
            "/health",
            &[("Authorization", &header)],
            "",
        );
        assert_eq!(s, 401, "{header}");
    }
}
