//! Remote domains (docs/remote-domains.md) through the real binary: the example pharmacy
//! (Python, no Rust) through every stage and `tracer serve`; a tau2-style domain served by
//! the shim as it is; environments that crash, hang or answer nonsense, each a one-line
//! error naming the domain and the call, with nothing partial written; and the Python side's
//! own protocol checks (`scripts/test_remote.py`).

use crate::common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

fn remote(root: &Path, out: &Path, domains: &Path, args: &[&str]) -> Output {
    tracer_command(root, out)
        .env("TRACER_DOMAINS", domains)
        .args(args)
        .output()
        .expect("run tracer")
}

fn rows(out: &Path, stage: &str, domain: &str) -> Vec<Value> {
    let text = python(&format!(
        "import json, glob, pyarrow.parquet as pq\n\
         rows = []\n\
         for f in sorted(glob.glob('{}/{stage}/domain={domain}/*.parquet')):\n\
         \x20   rows += pq.read_table(f).to_pylist()\n\
         print(json.dumps(rows, default=str))",
        out.display()
    ));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_domain_without_rust_runs_every_stage_and_is_served() {
    let root = small_project("remote");
    // A remote domain's fork and state are round trips to a Python process: fewer traces
    // than the built-in domains' small runs keep the test short.
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 40\nmax_eval = 16\nmax_customers = 12\nmax_proposals = 6\nmax_expansions = 200\n",
    )
    .unwrap();
    let out = temp_dir("remote-out");
    let domains = repo().join("examples/domains");
    let listed = remote(root.path(), out.path(), &domains, &["list"]);
    assert_ok(&listed);
    assert!(stdout(&listed).contains("pharmacy"), "{}", stdout(&listed));
    let v = remote(root.path(), out.path(), &domains, &["validate"]);
    assert_ok(&v);
    for target in ["trajectories", "eval"] {
        let o = remote(
            root.path(),
            out.path(),
            &domains,
            &["run", target, "--domain", "pharmacy"],
        );
        assert_ok(&o);
    }
    let tasks = rows(out.path(), "tasks", "pharmacy");
    assert!(tasks.len() >= 10, "{} verified pharmacy tasks", tasks.len());
    let writes: std::collections::BTreeSet<String> = tasks
        .iter()
        .flat_map(|t| {
            let actions: Vec<Value> =
                serde_json::from_str(t["actions"].as_str().unwrap_or("[]")).unwrap_or_default();
            actions
                .into_iter()
                .filter_map(|a| a["name"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .filter(|n| !n.starts_with("get_") && !n.starts_with("find_") && !n.starts_with("list_"))
        .collect();
    assert!(
        writes.len() >= 3,
        "the generic grounder reaches at least three of the four writes: {writes:?}"
    );
    let trajectories = rows(out.path(), "trajectories", "pharmacy");
    assert!(!trajectories.is_empty(), "no pharmacy trajectory kept");
    let eval = rows(out.path(), "eval", "pharmacy");
    assert!(!eval.is_empty(), "no pharmacy eval episode");

    // The same seed and config give the same tasks, byte for byte, in a fresh output.
    let again = temp_dir("remote-again");
    assert_ok(&remote(
        root.path(),
        again.path(),
        &domains,
        &["run", "tasks", "--domain", "pharmacy"],
    ));
    let bytes =
        |o: &Path| std::fs::read(o.join("tasks/domain=pharmacy/part-00000.parquet")).unwrap();
    assert!(
        bytes(out.path()) == bytes(again.path()),
        "tasks differ between two runs"
    );

    // `tracer serve` plays a rollout of the remote domain to the same reward.
    let rollouts = rows(out.path(), "rollouts", "pharmacy");
    let row = rollouts
        .iter()
        .find(|r| r["reward"].as_f64() == Some(1.0))
        .expect("a reward-1 rollout");
    let mut cmd = tracer_command(root.path(), out.path());
    cmd.env("TRACER_DOMAINS", &domains)
        .args(["serve", "--domain", "pharmacy", "--port", "0"]);
    let server = ChildServer::start(cmd);
    let transcript: Vec<Value> = serde_json::from_str(row["messages"].as_str().unwrap()).unwrap();
    let (s, r) = crate::serve::post(
        &server.addr,
        "/reset",
        &json!({"task_id": row["task_id"], "trial": row["trial"], "agent_model": "replay"}),
    );
    assert_eq!(s, 200, "{r}");
    let session = r["session"].as_str().unwrap().to_string();
    let mut at = r["observation"]["messages"].as_array().unwrap().len();
    let mut done = r["done"].as_bool().unwrap();
    let mut reward = Value::Null;
    while !done {
        let said = &transcript[at];
        let (s, step) = crate::serve::step_with(&server.addr, &session, said.clone());
        assert_eq!(s, 200, "{step}");
        at += 1 + step["observation"]["messages"].as_array().unwrap().len();
        done = step["done"].as_bool().unwrap();
        reward = step["reward"].clone();
    }
    assert_eq!(reward, row["reward"], "served reward of {}", row["task_id"]);
}

/// A domain folder for the fault server in `mode`, with `timeout_s` per call.
fn faulty(mode: &str) -> TempDir {
    let fixture = repo().join("tests/fixtures/remote_faulty");
    let dir = temp_dir(&format!("faulty-{mode}"));
    let folder = dir.join("faulty");
    std::fs::create_dir_all(&folder).unwrap();
    for f in ["policy.md", "graph.json"] {
        std::fs::copy(fixture.join(f), folder.join(f)).unwrap();
    }
    let toml = std::fs::read_to_string(fixture.join("domain.toml.in"))
        .unwrap()
        .replace("SERVER", &fixture.join("server.py").display().to_string())
        .replace("MODE", mode);
    std::fs::write(folder.join("domain.toml"), toml).unwrap();
    dir
}

#[test]
fn a_failing_environment_is_a_one_line_error_and_leaves_nothing_partial() {
    let root = small_project("faults");
    for (mode, says) in [
        ("crash", "exited"),
        ("hang", "no answer within 2s"),
        ("garbage", "malformed answer (not JSON"),
        ("wrongid", "malformed answer (id"),
    ] {
        let domains = faulty(mode);
        let out = temp_dir(&format!("faults-{mode}"));
        let started = std::time::Instant::now();
        let o = remote(
            root.path(),
            out.path(),
            domains.path(),
            &["run", "grounded", "--domain", "faulty"],
        );
        let err = stderr(&o);
        assert!(!o.status.success(), "{mode}: the run succeeded: {err}");
        assert!(
            err.contains("domain 'faulty'") && err.contains("tools/call") && err.contains(says),
            "{mode}: {err}"
        );
        assert!(
            !err.contains("panicked"),
            "{mode}: a panic reached the user: {err}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{mode}: took {:?}",
            started.elapsed()
        );
        // What was written before stays; the failed stage wrote nothing, not even a
        // temporary directory.
        assert!(
            out.join("db/domain=faulty/_manifest.json").is_file(),
            "{mode}: db lost"
        );
        for stage in ["graphs", "traces", "grounded"] {
            let dir = out.join(stage);
            let entries: Vec<String> = std::fs::read_dir(&dir)
                .map(|e| {
                    e.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            assert!(
                !entries.iter().any(|e| e.contains("faulty")),
                "{mode}: {stage} holds {entries:?}"
            );
        }
    }
    // A plain MCP server (no control calls) and a command that cannot start are refused
    // when the domains load, naming what is wrong.
    let plain = faulty("plain");
    let out = temp_dir("faults-plain");
    let o = remote(root.path(), out.path(), plain.path(), &["list"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("does not declare Tracer's control calls"),
        "{}",
        stderr(&o)
    );
    let missing = faulty("ok");
    let toml = missing.join("faulty/domain.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "command = [\"python3\"",
        "command = [\"/nonexistent/python3\"",
    );
    std::fs::write(&toml, text).unwrap();
    let o = remote(root.path(), out.path(), missing.path(), &["list"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("could not start"), "{}", stderr(&o));
    // A declaration naming a tool the server does not list is an error naming the file.
    let wrong = faulty("ok");
    let toml = wrong.join("faulty/domain.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str("\n[[rule]]\nname = \"x\"\ntool = \"get_persn\"\narg = \"person_id\"\ntable = \"people\"\nfield = \"city\"\nnot_in = [\"Oslo\"]\nsay = \"no\"\n");
    std::fs::write(&toml, text).unwrap();
    let o = remote(root.path(), out.path(), wrong.path(), &["list"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("domain.toml") && err.contains("get_persn"),
        "{err}"
    );
    // A tool's own failure is no infrastructure failure: it reaches the agent as text.
    let ok = faulty("ok");
    let out = temp_dir("faults-ok");
    assert_ok(&remote(
        root.path(),
        out.path(),
        ok.path(),
        &["run", "graphs", "--domain", "faulty"],
    ));
}

#[test]
fn a_tau2_style_domain_runs_through_the_shim_unchanged() {
    let root = small_project("shim");
    let out = temp_dir("shim-out");
    let fixture = repo().join("tests/fixtures/tau2_mini");
    let dir = temp_dir("shim-domains");
    let folder = dir.join("bikes");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(fixture.join("policy.md"), folder.join("policy.md")).unwrap();
    let shim = repo().join("remote/tau2_shim.py");
    std::fs::write(
        folder.join("domain.toml"),
        format!(
            r#"command = ["python3", "{}", "--domain-dir", "{}", "--db", "{}"]
[customers]
table = "customers"
key = "customer_id"
facts = [{{ kind = "identity", say = "Your email is {{email}}.", values = ["email"] }}]
records = [{{ tool = "find_customer_id_by_email", arg = "email", table = "customers" }}]
[[draw]]
arg = "email"
table = "customers"
field = "email"
owner = "customer_id"
[[draw]]
arg = "rental_id"
table = "rentals"
owner = "customer_id"
where = {{ status = ["active"] }}
"#,
            shim.display(),
            fixture.display(),
            fixture.join("db.json").display()
        ),
    )
    .unwrap();
    std::fs::write(
        folder.join("requests.toml"),
        "[return_bike]\nsay = [\"You are returning the bike of rental {rental_id}.\"]\n",
    )
    .unwrap();
    // The graph of what grounds through the shim: rent_bike takes a payment object, which
    // the generic grounder does not draw (docs/remote-domains.md), so it is left out.
    std::fs::write(
        folder.join("graph.json"),
        json!({"domain": "bikes", "nodes": [
            {"tool": "find_customer_id_by_email", "kind": "read", "root": true},
            {"tool": "list_available_bikes", "kind": "read", "root": true},
            {"tool": "return_bike", "kind": "write", "root": true}],
          "edges": [{"from": "find_customer_id_by_email", "to": "return_bike"}]})
        .to_string(),
    )
    .unwrap();
    assert_ok(&remote(
        root.path(),
        out.path(),
        dir.path(),
        &["graphs", "verify", "--domain", "bikes"],
    ));
    assert_ok(&remote(root.path(), out.path(), dir.path(), &["validate"]));
    let o = remote(
        root.path(),
        out.path(),
        dir.path(),
        &["run", "tasks", "--domain", "bikes"],
    );
    assert_ok(&o);
    // The shim served the fixture's own database and its tools ran: the graph's edge was
    // demonstrated by execution through it. (Grounding finds no return to propose on this
    // two-customer fixture yet — see the closing note of issue 54 — so no task is asserted.)
    let summary = |stage: &str| -> String {
        let text =
            std::fs::read_to_string(out.join(stage).join("domain=bikes/_manifest.json")).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["summary"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(summary("db").contains("rentals 1"), "{}", summary("db"));
    assert!(
        summary("graphs").contains("1 demonstrated"),
        "{}",
        summary("graphs")
    );
    assert!(
        summary("grounded").contains("of 3 traces"),
        "{}",
        summary("grounded")
    );
}

#[test]
fn the_python_servers_pass_their_protocol_checks() {
    let o = std::process::Command::new("python3")
        .arg(repo().join("scripts/test_remote.py"))
        .args(["--only", "pharmacy,tau2_mini", "--calls", "100"])
        .output()
        .expect("python3");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn scaffold_remote_writes_a_domain_that_loads_and_refuses_a_second_time() {
    let root = project_copy("scaffold-remote");
    copy_dir(&repo().join("remote"), &root.join("remote"));
    let out = temp_dir("scaffold-remote-out");
    let o = tracer(
        root.path(),
        out.path(),
        &["scaffold", "domain", "garden", "--remote"],
    );
    assert_ok(&o);
    for f in [
        "server.py",
        "domain.toml",
        "tools.toml",
        "requests.toml",
        "policy.md",
        "graph.json",
    ] {
        let text = std::fs::read_to_string(root.join("domains/garden").join(f)).unwrap();
        assert!(!text.contains("__DOMAIN__"), "{f} keeps the placeholder");
    }
    // The project's domains/ folder is loaded with no variable set: garden joins the ten,
    // its graph passes the checks and is demonstrated by execution.
    let listed = tracer(root.path(), out.path(), &["list"]);
    assert_ok(&listed);
    assert!(stdout(&listed).contains("garden"), "{}", stdout(&listed));
    assert_ok(&tracer(root.path(), out.path(), &["validate"]));
    assert_ok(&tracer(
        root.path(),
        out.path(),
        &["graphs", "verify", "--domain", "garden"],
    ));
    let again = tracer(
        root.path(),
        out.path(),
        &["scaffold", "domain", "garden", "--remote"],
    );
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("taken") || stderr(&again).contains("exists"),
        "{}",
        stderr(&again)
    );
}
