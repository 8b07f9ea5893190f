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
    start_as(root, output, "tester", extra)
}

fn start_as(root: &Path, output: &Path, reviewer: &str, extra: &[&str]) -> ChildServer {
    let mut cmd = tracer_command(root, output);
    cmd.args([
        "review",
        "--domain",
        "airline",
        "--port",
        "0",
        "--reviewer",
        reviewer,
    ])
    .args(extra);
    ChildServer::start(cmd)
}

fn get(addr: &str, path: &str) -> (u16, String) {
    http(addr, "GET", path, &[], "")
}

fn post(addr: &str, body: &Value) -> (u16, Value) {
    post_to(addr, "/api/decide", body)
}

fn post_to(addr: &str, route: &str, body: &Value) -> (u16, Value) {
    let (status, text) = http(
        addr,
        "POST",
        route,
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

/// The (task id, content hash) of every reviewable row of a list page.
fn rows(addr: &str, query: &str) -> Vec<(String, String)> {
    let (status, list) = get(addr, &format!("/d/airline?{query}"));
    assert_eq!(status, 200, "{list}");
    list.split("<tr data-task=\"")
        .skip(1)
        .filter_map(|s| {
            let id = s.split('"').next()?.to_string();
            let rest = s.split('>').next()?;
            let content = rest.split("data-content=\"").nth(1)?.split('"').next()?;
            Some((id, content.to_string()))
        })
        .collect()
}

/// "12 of 146 left" of a page.
fn progress_of(page: &str) -> (usize, usize) {
    let span = page
        .split("id=\"progress\"")
        .nth(1)
        .expect("a progress line");
    let num = |key: &str| -> usize {
        span.split(&format!("data-{key}=\""))
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (num("left"), num("total"))
}

#[test]
fn a_team_reviews_with_progress_undo_bulk_conflicts_and_graph_edges() {
    let root = small_project("review-team");
    let out = root.join("output");
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "reviewed", "--domain", "airline"],
    ));
    let reviews = root.join("reviews/airline.jsonl");
    let text = || std::fs::read_to_string(&reviews).unwrap_or_default();
    let ana = start_as(&root, &out, "ana", &[]);
    let addr = ana.addr.clone();
    let all = rows(&addr, "");
    assert!(all.len() >= 8, "{all:?}");
    let decide = |addr: &str, i: usize, body: Value| {
        let mut b = json!({"domain": "airline", "task_id": all[i].0, "content": all[i].1});
        b.as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        post(addr, &b)
    };

    // A decisions file whose last line lost its newline (a hand edit, a merge): the next
    // decision goes on a line of its own and every page still answers.
    let first =
        json!({"task_id": all[0].0, "content": all[0].1, "decision": "accept", "reviewer": "ana"});
    std::fs::create_dir_all(reviews.parent().unwrap()).unwrap();
    std::fs::write(&reviews, first.to_string()).unwrap();
    let (s, v) = decide(&addr, 1, json!({"decision": "accept"}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(text().lines().count(), 2, "{}", text());
    assert_eq!(get(&addr, "/d/airline").0, 200);
    assert_eq!(get(&addr, &format!("/d/airline/t/{}", all[1].0)).0, 200);

    // Progress of the list, and the next open task after a decision (auto-advance).
    let (_, page) = get(&addr, "/d/airline?review=left");
    let (left, total) = progress_of(&page);
    assert_eq!((left, total), (all.len() - 2, all.len() - 2));
    let (s, v) = decide(
        &addr,
        2,
        json!({"decision": "reject", "reason": "duplicate", "query": "review=left"}),
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["left"], left - 1, "{v}");
    assert!(
        v["next"]
            .as_str()
            .unwrap()
            .contains(&format!("/t/{}?", all[3].0)),
        "the next open task after the decided one: {v}"
    );
    // `previous` from the decided task (no longer in the `left` list) is still its neighbour.
    let (_, page) = get(&addr, &format!("/d/airline/t/{}?review=left", all[2].0));
    assert!(
        page.contains(&format!("id=\"next\" href=\"/d/airline/t/{}?", all[3].0)),
        "{page}"
    );

    // Undo: an appended reversal line; the state before comes back; earlier bytes untouched.
    let (s, _) = decide(&addr, 2, json!({"decision": "accept"}));
    assert_eq!(s, 200);
    let before = text();
    let (s, v) = post_to(&addr, "/api/undo", &json!({"domain": "airline"}));
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["task_id"].as_str(), v["state"].as_str()),
        (Some(all[2].0.as_str()), Some("rejected")),
        "{v}"
    );
    let after = text();
    assert!(after.starts_with(&before) && after.lines().count() == before.lines().count() + 1);
    assert!(after.lines().last().unwrap().contains("\"undo\""));
    let (_, v) = post_to(&addr, "/api/undo", &json!({"domain": "airline"}));
    assert_eq!(v["state"], "pending", "{v}");

    // Bulk: exactly the filtered list, one line per task; a stale list is refused.
    let query = "review=pending&q=You";
    let set = rows(&addr, query);
    assert!(set.len() >= 3, "{set:?}");
    let lines_before = text().lines().count();
    let stale: Vec<&(String, String)> = set.iter().skip(1).collect();
    let (s, v) = post_to(
        &addr,
        "/api/bulk",
        &json!({"domain": "airline", "query": query, "decision": "accept", "tasks": stale}),
    );
    assert_eq!(s, 409, "{v}");
    let (s, v) = post_to(
        &addr,
        "/api/bulk",
        &json!({"domain": "airline", "query": query, "decision": "reject", "tasks": set}),
    );
    assert_eq!(s, 400, "a bulk reject needs a reason: {v}");
    assert_eq!(text().lines().count(), lines_before, "nothing written");
    let (s, v) = post_to(
        &addr,
        "/api/bulk",
        &json!({"domain": "airline", "query": query, "decision": "accept", "tasks": set}),
    );
    assert_eq!(
        (s, v["written"].as_u64()),
        (200, Some(set.len() as u64)),
        "{v}"
    );
    assert_eq!(text().lines().count(), lines_before + set.len());
    assert!(rows(&addr, query).is_empty(), "none of them is pending now");

    // A second reviewer: agreeing on one task, disagreeing on another is a conflict.
    let ben = start_as(&root, &out, "ben", &[]);
    let (s, v) = decide(
        &ben.addr,
        0,
        json!({"decision": "reject", "reason": "unsolvable"}),
    );
    assert_eq!((s, v["state"].as_str()), (200, Some("conflict")), "{v}");
    let (s, v) = decide(&ben.addr, 1, json!({"decision": "accept"}));
    assert_eq!((s, v["state"].as_str()), (200, Some("accepted")), "{v}");
    let (_, page) = get(&addr, &format!("/d/airline/t/{}", all[0].0));
    assert!(
        page.contains("id=\"conflict\"") && page.contains("<b>ben</b>: reject"),
        "{page}"
    );
    assert_eq!(rows(&addr, "review=conflict").len(), 1);
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "reviewed", "--domain", "airline"],
    ));
    let counts = review_counts(&out);
    assert_eq!(counts["conflicts"], 1, "{counts}");
    assert_eq!(counts["agreement"]["accept_accept"], 1, "{counts}");
    assert_eq!(counts["agreement"]["accept_reject"], 1, "{counts}");
    let stats = stdout(&tracer(&root, &out, &["stats", "--domain", "airline"]));
    assert!(
        stats.contains("Agreement between reviewers")
            && stats.contains("| airline | 2 | 1 | 50.0% |"),
        "{stats}"
    );
    // Whoever decides a task in conflict resolves it.
    let (s, v) = decide(&addr, 0, json!({"decision": "accept"}));
    assert_eq!(
        (s, v["state"].as_str(), v["resolved"].as_bool()),
        (200, Some("accepted"), Some(true)),
        "{v}"
    );
    drop(ben);

    // Assignment: round robin over the reviewable tasks, every task doubled; "left for you"
    // is then what is yours and undecided by you.
    std::fs::write(
        root.join("reviews/assignment.toml"),
        "reviewers = [\"ana\", \"ben\"]\nsecond_share = 0.0\n",
    )
    .unwrap();
    let mine = rows(&addr, "assigned=me");
    let bens = rows(&addr, "assigned=ben");
    assert_eq!(
        mine.len() + bens.len(),
        all.len(),
        "each task has one reviewer"
    );
    assert!(
        mine.len() >= all.len() / 2 && bens.len() >= all.len() / 2,
        "{} {}",
        mine.len(),
        bens.len()
    );
    let (_, page) = get(&addr, "/d/airline?review=left");
    assert!(progress_of(&page).0 <= mine.len());
    std::fs::write(root.join("reviews/assignment.toml"), "reviewers = []\n").unwrap();
    let (s, page) = get(&addr, "/d/airline");
    assert_eq!(s, 500, "a broken assignment is named: {page}");
    assert!(page.contains("assignment.toml"), "{page}");
    std::fs::remove_file(root.join("reviews/assignment.toml")).unwrap();

    // Graph edges: drop the edges into one tool until its last is refused (it would be
    // unreachable), then the graphs stage leaves the dropped ones out.
    let graph: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("graphs/airline.json")).unwrap())
            .unwrap();
    let roots: Vec<&str> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["root"] == true)
        .map(|n| n["tool"].as_str().unwrap())
        .collect();
    let edges: Vec<(&str, &str)> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["from"].as_str().unwrap(), e["to"].as_str().unwrap()))
        .collect();
    let into_count = |t: &str| edges.iter().filter(|e| e.1 == t).count();
    let target = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["tool"].as_str().unwrap())
        .filter(|t| !roots.contains(t))
        .min_by_key(|t| into_count(t))
        .unwrap();
    let into: Vec<(&str, &str)> = edges.iter().copied().filter(|e| e.1 == target).collect();
    let edge = |from: &str, to: &str, decision: &str, reason: Option<&str>| {
        let mut b = json!({"domain": "airline", "from": from, "to": to, "decision": decision});
        if let Some(r) = reason {
            b["reason"] = json!(r);
        }
        post_to(&addr, "/api/edge", &b)
    };
    assert_eq!(
        edge(into[0].0, into[0].1, "drop", None).0,
        400,
        "a drop needs a reason"
    );
    assert_eq!(edge("no_such_tool", target, "drop", Some("x")).0, 404);
    // An edge into a root can always go (roots need no way in).
    let to_root = *edges.iter().find(|e| roots.contains(&e.1)).unwrap();
    let (s, v) = edge(to_root.0, to_root.1, "drop", Some("a customer starts here"));
    assert_eq!(s, 200, "{v}");
    let mut dropped = vec![to_root];
    let mut refused = false;
    for (from, to) in &into {
        let (s, v) = edge(from, to, "drop", Some("never needed first"));
        if s == 400 {
            assert!(
                v["error"].as_str().unwrap().contains("not reachable"),
                "{v}"
            );
            refused = true;
            break;
        }
        assert_eq!(s, 200, "{v}");
        dropped.push((*from, *to));
    }
    assert!(refused, "the last way into {target} is refused: {into:?}");
    let (s, page) = get(&addr, "/d/airline/graph");
    assert_eq!(s, 200);
    assert!(
        page.contains("edge dropped") && page.contains("dropped by ana"),
        "shown in review"
    );
    let edge_file = root.join("reviews/graphs/airline.jsonl");
    assert_eq!(
        std::fs::read_to_string(&edge_file).unwrap().lines().count(),
        dropped.len()
    );
    drop(ana);

    let status = stdout(&tracer(&root, &out, &["status", "--domain", "airline"]));
    assert!(status.contains("| graphs | airline | stale"), "{status}");
    let o = tracer(&root, &out, &["run", "graphs", "--domain", "airline"]);
    assert_ok(&o);
    assert!(
        stderr(&o).contains(&format!("{} dropped in review", dropped.len())),
        "{}",
        stderr(&o)
    );
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("graphs/domain=airline/graph.json")).unwrap(),
    )
    .unwrap();
    let kept: Vec<(&str, &str)> = written["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["from"].as_str().unwrap(), e["to"].as_str().unwrap()))
        .collect();
    assert_eq!(kept.len(), edges.len() - dropped.len());
    assert!(dropped.iter().all(|d| !kept.contains(d)));
    let status = stdout(&tracer(&root, &out, &["status", "--domain", "airline"]));
    assert!(
        status.contains("| traces | airline | stale"),
        "downstream goes stale: {status}"
    );

    // A broken edge decisions file stops the stage, its line named.
    std::fs::write(&edge_file, "{\"from\": \"a\"}\n").unwrap();
    let o = tracer(&root, &out, &["run", "graphs", "--domain", "airline"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("airline.jsonl:1"), "{}", stderr(&o));
}
