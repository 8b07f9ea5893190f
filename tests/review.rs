//! Screening, manual review and `tracer review` over real HTTP on loopback: an offline run
//! of one domain through `eval`, the app started as a child process, decisions posted the
//! way the page posts them, the reviews file read back, and the release re-run with them.
//! (The same flow in a real browser is `make test-review`.)

use crate::common::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

fn start(root: &Path, output: &Path, extra: &[&str]) -> ChildServer {
    let mut cmd = tracer_command(root, output);
    cmd.args([
        "review",
        "--domain",
        "airline",
        "--port",
        "0",
        "--reviewer",
        "tester",
    ])
    .args(extra);
    ChildServer::start(cmd)
}

fn get(addr: &str, path: &str) -> (u16, String) {
    http(addr, "GET", path, &[], "")
}

fn post(addr: &str, body: &Value) -> (u16, Value) {
    let (status, text) = http(
        addr,
        "POST",
        "/api/decide",
        &[("Content-Type", "application/json")],
        body.to_string(),
    );
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The (task id, content hash) pairs of the decision panels on the first `n` task pages.
fn reviewable(addr: &str, n: usize) -> Vec<(String, String, String)> {
    let (status, list) = get(addr, "/d/airline?split=eval&verified=yes&screen=passed");
    assert_eq!(status, 200);
    let ids: Vec<String> = list
        .split("data-task=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .take(n)
        .collect();
    assert_eq!(ids.len(), n, "not enough screened tasks in the list");
    ids.into_iter()
        .map(|id| {
            let (status, page) = get(addr, &format!("/d/airline/t/{id}"));
            assert_eq!(status, 200, "{page}");
            let content = page
                .split("data-content=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .expect("a decision panel")
                .to_string();
            (id, content, page)
        })
        .collect()
}

/// The `reviewed` stage's counts.
fn review_counts(out: &Path) -> Value {
    let path = out.join("reviewed/domain=airline/review.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn screening_review_and_the_release_that_honours_it() {
    let root = small_project("review");
    let out = root.join("output");
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "eval", "--domain", "airline"],
    ));

    // Screening: the screened tasks are the verified eval tasks some trial solved.
    let counts = python(&format!(
        "import pyarrow.parquet as pq\n\
         t = pq.read_table('{o}/tasks/domain=airline/part-00000.parquet').to_pylist()\n\
         s = pq.read_table('{o}/screened/domain=airline/part-00000.parquet').to_pylist()\n\
         e = pq.read_table('{o}/screened/domain=airline/episodes.parquet').to_pylist()\n\
         r = pq.read_table('{o}/screened/domain=airline/_rejects.parquet').to_pylist()\n\
         ev = [x['task_id'] for x in t if x['split'] == 'eval']\n\
         solved = {{x['task_id'] for x in e if x['reward'] == 1}}\n\
         assert [x['task_id'] for x in s] == [i for i in ev if i in solved]\n\
         assert sorted(x['task_id'] for x in r) == sorted(i for i in ev if i not in solved)\n\
         assert len(e) == 3 * len(ev)\n\
         print(len(ev), len(s))",
        o = out.display()
    ));
    let n: Vec<usize> = counts
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(n[1] >= 6 && n[1] <= n[0], "{counts}");

    let server = start(&root, &out, &[]);
    let addr = server.addr.clone();
    let (status, index) = get(&addr, "/");
    assert_eq!(status, 200);
    assert!(index.contains("/d/airline"), "{index}");

    let tasks = reviewable(&addr, 6);
    let reviews = root.join("reviews/airline.jsonl");
    let lines = || {
        std::fs::read_to_string(&reviews)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let decision = |i: usize, body: Value| {
        let mut b = json!({"domain": "airline", "task_id": tasks[i].0, "content": tasks[i].1});
        b.as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        b
    };

    // Accept, and a reject that must carry a reason.
    let (s, v) = post(&addr, &decision(0, json!({"decision": "accept"})));
    assert_eq!((s, v["state"].as_str()), (200, Some("accepted")), "{v}");
    let (s, v) = post(&addr, &decision(1, json!({"decision": "reject"})));
    assert_eq!(s, 400, "{v}");
    let (s, _) = post(
        &addr,
        &decision(
            1,
            json!({"decision": "reject", "reason": "ambiguous instruction"}),
        ),
    );
    assert_eq!(s, 200);
    assert_eq!(lines().len(), 2);

    // An edit whose replay fails is refused with the reason, and nothing is written.
    let page = &tasks[2].2;
    assert!(
        page.contains("edit-arg"),
        "the edit form lists the arguments"
    );
    let actions: Vec<Value> = {
        let (_, json) = get(&addr, &format!("/d/airline/t/{}", tasks[2].0));
        assert!(json.contains("Gold actions"));
        let t = python(&format!(
            "import pyarrow.parquet as pq, json\n\
             t = [x for x in pq.read_table('{o}/screened/domain=airline/part-00000.parquet').to_pylist() if x['task_id'] == '{id}'][0]\n\
             print(t['actions'])",
            o = out.display(),
            id = tasks[2].0
        ));
        serde_json::from_str(t.trim()).unwrap()
    };
    let mut args: Vec<Value> = actions.iter().map(|a| a["kwargs"].clone()).collect();
    let broken = args
        .iter_mut()
        .find_map(|a| {
            let o = a.as_object_mut()?;
            let k = o.keys().find(|k| k.ends_with("_id"))?.clone();
            o.insert(k, json!("NO_SUCH_ID_123"));
            Some(())
        })
        .is_some();
    assert!(broken, "an action with an id argument to break");
    let (s, v) = post(
        &addr,
        &decision(2, json!({"decision": "edit", "edit": {"arguments": args}})),
    );
    assert_eq!(s, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("edit refused"), "{v}");
    assert_eq!(lines().len(), 2, "a refused edit writes nothing");

    // A valid edit: the emotion instruction rewritten.
    let (s, v) = post(
        &addr,
        &decision(
            2,
            json!({"decision": "edit", "edit": {"emotion_instruction": "You are tired after a long day and want this settled without fuss; you answer briefly and thank the agent when it is done."}}),
        ),
    );
    assert_eq!((s, v["state"].as_str()), (200, Some("edited")), "{v}");

    // Stale content, form posts, other origins, paths and training tasks are refused.
    let (s, _) = post(
        &addr,
        &json!({"domain": "airline", "task_id": tasks[3].0, "content": "0123456789abcdef", "decision": "accept"}),
    );
    assert_eq!(s, 409);
    let (s, _) = http(
        &addr,
        "POST",
        "/api/decide",
        &[("Content-Type", "text/plain")],
        decision(3, json!({"decision": "accept"})).to_string(),
    );
    assert_eq!(s, 400);
    let (s, _) = http(
        &addr,
        "POST",
        "/api/decide",
        &[
            ("Content-Type", "application/json"),
            ("Origin", "http://evil.example"),
        ],
        decision(3, json!({"decision": "accept"})).to_string(),
    );
    assert_eq!(s, 403);
    for path in [
        "/static/../Cargo.toml",
        "/d/..%2F..%2FCargo.toml",
        "/d/airline/t/..%2F..%2F..%2Fetc%2Fpasswd",
        "/d/nosuch",
    ] {
        assert_eq!(get(&addr, path).0, 404, "{path}");
    }
    // A body over the limit is refused from its Content-Length, before it is read.
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(
        s,
        "POST /api/decide HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        2 * 1024 * 1024
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // So is a head over 16 KiB.
    let long = format!("/d/airline?q={}", "x".repeat(20 * 1024));
    assert_eq!(get(&addr, &long).0, 431);

    // Two tabs saving at once: every line lands whole.
    let before = lines().len();
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let addr = addr.clone();
            let body = decision(3 + i % 2, json!({"decision": "accept"}));
            std::thread::spawn(move || post(&addr, &body).0)
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 200);
    }
    let all = lines();
    assert_eq!(
        all.len(),
        before + 16,
        "every concurrent save is one whole line"
    );
    assert!(all.iter().all(|l| l["reviewer"] == "tester"));

    // A run while the app is open: the app reads the domain again (stricter screening
    // leaves more tasks unsolved), and back.
    let failed = |addr: &str| {
        let (_, list) = get(addr, "/d/airline?split=eval&verified=yes&screen=failed");
        list.matches("data-task=\"").count()
    };
    let loose = failed(&addr);
    let config = std::fs::read_to_string(root.join("stages/screened.toml")).unwrap();
    let strict = config.replace("min_successes = 1", "min_successes = 3");
    assert_ne!(strict, config);
    std::fs::write(root.join("stages/screened.toml"), &strict).unwrap();
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "screened", "--domain", "airline"],
    ));
    assert!(failed(&addr) > loose, "the app shows the new screening");
    std::fs::write(root.join("stages/screened.toml"), &config).unwrap();
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "screened", "--domain", "airline"],
    ));
    assert_eq!(failed(&addr), loose);
    drop(server);

    // The release applies the decisions.
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "eval", "--domain", "airline"],
    ));
    let review = review_counts(&out);
    assert_eq!(review["candidates"], n[1]);
    assert_eq!(review["accepted"], 3, "{review}");
    assert_eq!(review["rejected"], 1);
    assert_eq!(review["edited"], 1);
    assert_eq!(review["emotion_edits"], 1);
    assert_eq!(
        review["released"],
        n[1] - 1,
        "unreviewed tasks are kept by default"
    );
    let released = python(&format!(
        "import pyarrow.parquet as pq\n\
         r = pq.read_table('{o}/reviewed/domain=airline/part-00000.parquet').to_pylist()\n\
         e = pq.read_table('{o}/eval/domain=airline/part-00000.parquet').to_pylist()\n\
         ids = {{x['task_id'] for x in r}}\n\
         assert '{rejected}' not in ids and {{x['task_id'] for x in e}} == ids\n\
         edited = [x for x in r if x['task_id'] == '{edited}'][0]\n\
         print(edited['emotion_instruction'])",
        o = out.display(),
        rejected = tasks[1].0,
        edited = tasks[2].0
    ));
    assert!(
        released.starts_with("You are tired after a long day"),
        "{released}"
    );
    let stats = stdout(&tracer(&root, &out, &["stats", "--domain", "airline"]));
    assert!(
        stats.contains("Manual review of the evaluation release"),
        "{stats}"
    );

    // Only decided tasks with `unreviewed = "drop"`.
    std::fs::write(root.join("stages/reviewed.toml"), "unreviewed = \"drop\"\n").unwrap();
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "reviewed", "--domain", "airline"],
    ));
    let review = review_counts(&out);
    assert_eq!(review["released"], 4, "{review}");

    // A broken decisions file stops the stage with its line named.
    std::fs::write(&reviews, "{\"task_id\": \"x\"}\n").unwrap();
    let o = tracer(&root, &out, &["run", "reviewed", "--domain", "airline"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("airline.jsonl:1"), "{}", stderr(&o));
}

#[test]
fn serving_beyond_loopback_needs_a_token_and_a_token_is_checked() {
    let root = project_copy("review-token");
    let out = root.join("output");
    let o = tracer(
        &root,
        &out,
        &[
            "review", "--domain", "airline", "--bind", "0.0.0.0", "--port", "0",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--token"), "{}", stderr(&o));

    let server = start(&root, &out, &["--token", "s3cret"]);
    assert_eq!(get(&server.addr, "/").0, 403);
    let (s, body) = http(
        &server.addr,
        "GET",
        "/",
        &[("X-Tracer-Token", "s3cret")],
        "",
    );
    assert_eq!(s, 200, "{body}");
    assert_eq!(get(&server.addr, "/?token=s3cret").0, 200);
    assert_eq!(
        http(
            &server.addr,
            "GET",
            "/",
            &[("Cookie", "tracer_token=s3cret")],
            ""
        )
        .0,
        200
    );
}
