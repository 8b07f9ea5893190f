//! Differential tests against the reference environments, from recorded fixtures.
//!
//! Each `tests/fixtures/reference/<domain>/` holds call sequences drawn on our generated
//! database (`calls.jsonl`), what the reference's own Python tools answered and changed
//! for each (`expected.jsonl`, recorded by `scripts/reference/record.sh`), the seed and
//! state hash of that database and optionally the domain's ruleset the reference implements
//! (`meta.json`: `domain`, `seed`, `state_hash`, `ruleset`), and optionally the documented
//! departures
//! (`departures.json`: `[{"tool", "reference_contains", "why", "affects_state"}]`). Every
//! call's output and every sequence's changed rows must equal the reference's, except
//! where a departure names the tool and a substring of the reference's output (and, with
//! `ours_contains`, of ours). One with `differs_only_in` (a list of field names) is
//! narrower: it covers a call only when the two outputs are equal once those fields are
//! dropped, and the sequence's changed
//! rows are still compared with those fields dropped (instead of not at all). A
//! state-changing departure whose output differs beyond a few fields may still confine its
//! effect on the database with `state_differs_only_in` (fields or table names).

use serde_json::Value;
use std::path::Path;
use tracer::domain::reference::{Departure, outputs_equal, same_state_except};
use tracer::domain::{self, Environment, Split};

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn check_fixture(dir: &Path) -> (usize, usize, Vec<String>) {
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    let name = meta["domain"].as_str().unwrap();
    // Failures name the fixture (a domain may have one per ruleset).
    let label = dir.file_name().and_then(|n| n.to_str()).unwrap_or(name);
    let d = domain::find(name).unwrap();
    // `ruleset` (optional): the rule variant the reference implements; absent = default.
    let base = domain::apply_ruleset(
        d,
        d.generate(meta["seed"].as_u64().unwrap(), Split::Eval),
        meta["ruleset"].as_str(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert_eq!(
        base.state_hash().to_hex(),
        meta["state_hash"].as_str().unwrap(),
        "{name}: the generator changed since the fixture was recorded; re-record it with \
         scripts/reference/record.sh (needs the reference checkout)"
    );
    let departures = departures_of(dir);
    let calls = lines(&dir.join("calls.jsonl"));
    let expected = lines(&dir.join("expected.jsonl"));
    replay(label, base.as_ref(), &departures, &calls, &expected)
}

/// A domain's documented departures (`departures.json` beside its fixture; none if absent).
fn departures_of(dir: &Path) -> Vec<Departure> {
    let departures: Vec<Departure> = std::fs::read_to_string(dir.join("departures.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_default();
    assert!(
        departures.iter().all(|d| !d.why.is_empty()),
        "{}: a departure needs a reason",
        dir.display()
    );
    departures
}

/// Replay every sequence on a fork of `base`: (calls, departures used, failures).
fn replay(
    label: &str,
    base: &dyn Environment,
    departures: &[Departure],
    calls: &[Value],
    expected: &[Value],
) -> (usize, usize, Vec<String>) {
    let initial: Value = base
        .to_tau_bench()
        .into_iter()
        .collect::<serde_json::Map<_, _>>()
        .into();
    assert_eq!(
        calls.len(),
        expected.len(),
        "{label}: calls and expected differ in length"
    );
    let (mut n_calls, mut departed) = (0, 0);
    let mut failures = Vec::new();
    for (i, (seq, exp)) in calls.iter().zip(expected).enumerate() {
        let mut env = base.fork();
        let mut compare_state = true;
        let mut ignored: Vec<String> = Vec::new();
        for (j, call) in seq.as_array().unwrap().iter().enumerate() {
            n_calls += 1;
            let tool = call["name"].as_str().unwrap();
            let ours = env.invoke(tool, &call["kwargs"]).text;
            let theirs = exp["outputs"][j].as_str().unwrap();
            if outputs_equal(&ours, theirs) {
                continue;
            }
            if !compare_state {
                // An earlier documented departure changed this sequence's state in a way not
                // confined to a few fields: later outputs may follow from it.
                departed += 1;
                continue;
            }
            match departures.iter().find(|d| d.covers(tool, &ours, theirs)) {
                Some(d) => {
                    departed += 1;
                    if d.affects_state && !d.differs_only_in.is_empty() {
                        ignored.extend(d.differs_only_in.iter().cloned());
                    } else if d.affects_state && !d.state_differs_only_in.is_empty() {
                        ignored.extend(d.state_differs_only_in.iter().cloned());
                    } else {
                        compare_state &= !d.affects_state;
                    }
                }
                None => failures.push(format!(
                    "{label} seq {i} call {j} {tool} {}\n  ours:   {ours}\n  theirs: {theirs}",
                    call["kwargs"]
                )),
            }
        }
        if compare_state {
            let after: Value = env
                .to_tau_bench()
                .into_iter()
                .collect::<serde_json::Map<_, _>>()
                .into();
            if !same_state_except(&initial, &after, &exp["changed"], &ignored) {
                let ours = tracer::domain::reference::changed_rows(&initial, &after);
                failures.push(format!(
                    "{label} seq {i}: changed rows differ\n  ours:   {ours}\n  theirs: {}",
                    exp["changed"]
                ));
            }
        }
    }
    (n_calls, departed, failures)
}

/// The reference's tools on the reference's own database, against ours on the same file,
/// for a tau2-style domain (they publish a `db.json` but no tasks):
/// `scripts/reference/own_db.sh <domain> <ToolOrchestra checkout> <dir>`, then
/// `TRACER_OWN_DB_DIR=<dir> cargo test --test integration own_database -- --ignored --nocapture`.
/// The domain comes from `<dir>/meta.json`; its fixture's `departures.json` applies.
#[test]
#[ignore = "needs the reference's db.json and its tools' answers (see doc comment)"]
fn reference_tools_on_their_own_database_answer_like_ours() {
    let dir = std::path::PathBuf::from(
        std::env::var("TRACER_OWN_DB_DIR").expect("set TRACER_OWN_DB_DIR"),
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    let name = meta["domain"].as_str().expect("meta.json: domain");
    let d = domain::find(name).unwrap();
    let base = domain::import_reference(d, &dir.join("db.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let departures = departures_of(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference")
            .join(name),
    );
    let calls = lines(&dir.join("calls.jsonl"));
    let expected = lines(&dir.join("expected.jsonl"));
    let (n, departed, failures) = replay(name, base.as_ref(), &departures, &calls, &expected);
    eprintln!(
        "{name} on its own database: {} sequences, {n} calls, {departed} documented departures, {} mismatches",
        calls.len(),
        failures.len()
    );
    assert!(n > 100, "{}: too few calls to mean anything", dir.display());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn our_tools_answer_and_write_as_the_reference_tools_do() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    assert!(
        !dirs.is_empty(),
        "no reference fixtures under {}",
        root.display()
    );
    let mut all = Vec::new();
    for dir in &dirs {
        let (calls, departed, failures) = check_fixture(dir);
        eprintln!(
            "{}: {calls} calls, {departed} documented departures, {} mismatches",
            dir.display(),
            failures.len()
        );
        assert!(
            calls > 100,
            "{}: too few calls to mean anything",
            dir.display()
        );
        all.extend(failures);
    }
    let mut by_tool = std::collections::BTreeMap::<String, usize>::new();
    for f in &all {
        let key: Vec<&str> = f.split_whitespace().take(5).collect();
        let key = match key.as_slice() {
            [d, "seq", _, "call", _] => {
                format!("{d} {}", f.split_whitespace().nth(5).unwrap_or(""))
            }
            [d, "seq", ..] => format!("{d} changed rows"),
            _ => "other".into(),
        };
        *by_tool.entry(key).or_default() += 1;
    }
    assert!(
        all.is_empty(),
        "{} mismatches by tool: {by_tool:?}\nfirst ones:\n{}",
        all.len(),
        all[..all
            .len()
            .min(if std::env::var_os("TRACER_REFERENCE_ALL").is_some() {
                all.len()
            } else {
                8
            })]
            .join("\n")
    );
}
