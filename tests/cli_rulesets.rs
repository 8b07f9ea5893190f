//! Domain rulesets end to end: retail's order lifecycle chosen per run (`--ruleset` on
//! commands, `[rulesets]` in `stages/db.toml` for the pipeline), recorded with the database,
//! and refused with a one-line error naming the file and field when unknown.

use crate::common::*;
use serde_json::Value;

fn replay(ruleset: &str) -> (String, Vec<Value>) {
    let dir = temp_dir("ruleset-replay");
    let out = dir.join("replay.jsonl");
    let db = repo().join("tests/fixtures/tau_bench/retail");
    let tasks = repo().join("tests/fixtures/replay/retail_lifecycle_tasks.json");
    let o = tracer(
        &repo(),
        &dir,
        &[
            "replay",
            "--domain",
            "retail",
            "--db",
            db.to_str().unwrap(),
            "--tasks",
            tasks.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--ruleset",
            ruleset,
        ],
    );
    assert_ok(&o);
    let rows = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (stderr(&o), rows)
}

#[test]
fn replay_follows_the_chosen_order_lifecycle() {
    // The authors' lifecycle: modify-then-cancel and return-then-exchange of one order work.
    let (log, rows) = replay("tau-emotion-bench");
    assert!(
        log.contains("2 fully succeeded, 0 with a failing call"),
        "{log}"
    );
    let statuses: Vec<String> = rows
        .iter()
        .filter(|r| r["type"] == "call")
        .map(|r| {
            serde_json::from_str::<Value>(r["output"].as_str().unwrap()).unwrap()["status"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        statuses,
        [
            "pending",
            "cancelled",
            "delivered (return requested)",
            "delivered (exchange requested)"
        ]
    );
    // tau-bench's: the first write of each task ends what the second one needs.
    let (log, rows) = replay("tau-bench");
    assert!(
        log.contains("0 fully succeeded, 2 with a failing call"),
        "{log}"
    );
    let errors: Vec<&str> = rows
        .iter()
        .filter(|r| r["type"] == "call" && r["is_error"] == true)
        .map(|r| r["output"].as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        [
            "Error: non-pending order cannot be cancelled",
            "Error: non-delivered order cannot be exchanged"
        ]
    );
}

#[test]
fn the_db_stage_records_its_ruleset_and_refuses_unknown_ones() {
    let root = project_copy("rulesets");
    let out = root.join("output");
    assert_ok(&tracer(&root, &out, &["run", "db", "--domain", "retail"]));
    let recorded = |out: &std::path::Path| -> Value {
        let path = out.join("db/domain=retail/ruleset.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    assert_eq!(recorded(&out)["ruleset"], "tau-emotion-bench");
    let manifest = std::fs::read_to_string(out.join("db/domain=retail/_manifest.json")).unwrap();
    assert!(manifest.contains("ruleset.json"), "{manifest}");

    let db_toml = root.join("stages/db.toml");
    let original = std::fs::read_to_string(&db_toml).unwrap();
    std::fs::write(
        &db_toml,
        original.replace("retail = \"tau-emotion-bench\"", "retail = \"tau-bench\""),
    )
    .unwrap();
    let o = tracer(&root, &out, &["run", "db", "--domain", "retail"]);
    assert_ok(&o);
    let log = stdout(&o) + &stderr(&o);
    assert!(log.contains("ruleset tau-bench"), "{log}");
    assert_eq!(recorded(&out)["ruleset"], "tau-bench");

    for (bad, expected) in [
        ("retail = \"nope\"", "unknown ruleset 'nope'"),
        ("airline = \"tau-bench\"", "has no rulesets"),
    ] {
        std::fs::write(
            &db_toml,
            original.replace("retail = \"tau-emotion-bench\"", bad),
        )
        .unwrap();
        let o = tracer(&root, &out, &["run", "db", "--domain", "retail"]);
        assert!(!o.status.success(), "{bad} was accepted");
        let log = stderr(&o);
        let errors: Vec<&str> = log.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{log}");
        let err = errors[0];
        assert!(
            err.contains("db.toml") && err.contains("rulesets.") && err.contains(expected),
            "{err}"
        );
        // The previous database is untouched.
        assert_eq!(recorded(&out)["ruleset"], "tau-bench");
    }
}

#[test]
fn a_non_default_ruleset_has_its_own_policy() {
    let root = project_copy("ruleset-policy");
    let out = root.join("output");
    assert_ok(&tracer(&root, &out, &["validate"]));
    let tau_bench = std::fs::read_to_string(root.join("policies/retail.tau-bench.md")).unwrap();
    let default = std::fs::read_to_string(root.join("policies/retail.md")).unwrap();
    assert!(tau_bench.contains("pending (item modified)") && default.contains("stays `pending`"));
    std::fs::remove_file(root.join("policies/retail.tau-bench.md")).unwrap();
    let o = tracer(&root, &out, &["validate"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("retail.tau-bench.md"), "{}", stderr(&o));
    std::fs::write(root.join("policies/retail.nope.md"), "x").unwrap();
    let o = tracer(&root, &out, &["validate"]);
    assert!(
        stderr(&o).contains("no registered domain 'retail.nope'"),
        "{}",
        stderr(&o)
    );
}
