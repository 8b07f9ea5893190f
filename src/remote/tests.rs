//! The wire against a real server process: the example pharmacy (Python, stdlib only).

use super::client::Connection;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

fn pharmacy() -> Connection {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/domains/pharmacy");
    let cmd: Vec<String> = ["python3", "server.py"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let conn = Connection::spawn("pharmacy", &cmd, &dir, Duration::from_secs(30)).unwrap();
    conn.call("initialize", json!({})).unwrap();
    conn
}

/// Many calls with large answers, from several threads at once, each answered in turn.
#[test]
fn large_answers_from_many_threads_all_arrive() {
    let conn = pharmacy();
    let reset = conn
        .call("tracer/reset", json!({"split": "train", "seed": 7}))
        .unwrap();
    let session = reset["session"].as_str().unwrap().to_string();
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..40 {
                    let fork = conn
                        .call("tracer/fork", json!({"session": session}))
                        .unwrap();
                    let f = fork["session"].as_str().unwrap();
                    let state = conn.call("tracer/state", json!({"session": f})).unwrap();
                    assert!(state["tables"]["patients"].as_object().unwrap().len() > 10);
                    conn.notify("tracer/close", json!({"session": f}));
                }
            });
        }
    });
    let listed = conn.call("tools/list", json!({})).unwrap();
    assert!(
        listed["tools"]
            .as_array()
            .is_some_and(|t: &Vec<Value>| !t.is_empty())
    );
}

fn snapshot(tables: Value) -> super::state::Snapshot {
    super::state::Snapshot::whole(json!({"version": 1, "tables": tables})).unwrap()
}

/// A patch gives the hash of the whole state it patches to, and a patch that leaves out a
/// changed table does not.
#[test]
fn a_patched_snapshot_hashes_as_the_whole_state_it_reaches() {
    let before = snapshot(json!({
        "orders": {"O1": {"status": "open", "amount": 4.5}, "O2": {"status": "open"}},
        "people": {"P1": {"name": "Ana", "cards": ["c1"]}, "P2": {"name": "Ben"}},
        "log": ["reset"],
        "branches": {"B1": {"city": "Oslo"}},
    }));
    let after = snapshot(json!({
        "orders": {"O1": {"status": "cancelled", "amount": 4.5}, "O3": {"status": "open"}},
        "people": {"P1": {"name": "Ana", "cards": ["c1", "c2"]}, "P2": {"name": "Ben"}},
        "log": ["reset", "cancel O1"],
        "shelves": {"S1": {"books": 3}},
    }));
    let delta = json!({"version": 2, "since": 1,
        "rows": {"orders": {"O1": {"status": "cancelled", "amount": 4.5}, "O3": {"status": "open"}},
                 "people": {"P1": {"name": "Ana", "cards": ["c1", "c2"]}}},
        "deleted": {"orders": ["O2"]},
        "tables": {"log": ["reset", "cancel O1"], "branches": null, "shelves": {"S1": {"books": 3}}}});
    let patched = before.patched(delta.clone()).unwrap();
    assert_eq!(patched.hash(), after.hash());
    assert_eq!(patched.version, Some(2));
    assert_eq!(patched.to_values(), after.to_values());
    assert_ne!(before.hash(), after.hash());
    // Every part of the answer counts: without any one of them the hash is another.
    for (part, name) in [
        ("rows", "orders"),
        ("rows", "people"),
        ("deleted", "orders"),
        ("tables", "log"),
        ("tables", "branches"),
    ] {
        let mut missing = delta.clone();
        missing[part].as_object_mut().unwrap().remove(name);
        let patched = before.patched(missing).unwrap();
        assert_ne!(patched.hash(), after.hash(), "{part}.{name} left out");
    }
    // A malformed answer is refused, naming what is wrong.
    let err = before
        .patched(json!({"version": 2, "since": 1, "rows": {"orders": ["O1"]}}))
        .err()
        .unwrap();
    assert!(err.contains("rows of `orders`"), "{err}");
}

/// The example pharmacy, opened as Tracer opens a remote domain.
fn pharmacy_domain() -> super::RemoteDomain {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    super::RemoteDomain::open(&root.join("examples/domains/pharmacy"), root).unwrap()
}

fn text_field(text: &str, field: &str) -> String {
    let v: Value = serde_json::from_str(text).unwrap();
    v[field].as_str().unwrap().to_string()
}

/// Through the example pharmacy: after each write of a sequence (each changing rows of one
/// to three tables), the hash patched from the answers `since` the last version equals the
/// hash of the whole state read afresh; forks share a session until they write, and never
/// see each other's writes.
#[test]
fn the_incremental_state_hashes_as_the_whole_state_after_each_write() {
    use crate::domain::Environment;
    let domain = pharmacy_domain();
    assert!(domain.shared.state_since, "pharmacy declares stateSince");
    let mut env = super::env::RemoteEnv::open(
        &domain.shared,
        "tracer/reset",
        json!({"split": "train", "seed": 7}),
    )
    .unwrap();
    let base = env.state_hash();
    assert_eq!(base, env.whole_state_hash());
    // A refillable prescription without an open order, and its patient's card.
    let tables = env.to_tau_bench();
    let open: Vec<&str> = tables["refill_orders"]
        .as_object()
        .unwrap()
        .values()
        .filter(|o| o["status"] == "processing" || o["status"] == "ready_for_pickup")
        .map(|o| o["prescription_id"].as_str().unwrap())
        .collect();
    let rxs: Vec<&Value> = tables["prescriptions"]
        .as_object()
        .unwrap()
        .values()
        .filter(|r| {
            r["status"] == "active"
                && r["refills_left"].as_u64() > Some(0)
                && r["expires_on"].as_str() > Some("2025-06-02")
                && !open.contains(&r["prescription_id"].as_str().unwrap())
        })
        .collect();
    let (rx, other_rx) = (rxs[0], rxs[1]);
    let rx_id = rx["prescription_id"].as_str().unwrap();
    let patient = rx["patient_id"].as_str().unwrap();
    let card = tables["payment_methods"]
        .as_object()
        .unwrap()
        .values()
        .find(|m| m["patient_id"] == patient)
        .unwrap()["payment_method_id"]
        .as_str()
        .unwrap()
        .to_string();
    let elsewhere = if other_rx["pharmacy_id"] == "PH-01" {
        "PH-02"
    } else {
        "PH-01"
    };

    let patched_before = domain
        .shared
        .patched_states
        .load(std::sync::atomic::Ordering::Relaxed);
    let mut hashes = vec![base];
    let mut step = |env: &mut super::env::RemoteEnv, tool: &str, args: Value| -> String {
        let out = env.invoke(tool, &args);
        assert!(!out.is_error, "{tool}: {}", out.text);
        let h = env.state_hash();
        assert_eq!(h, env.whole_state_hash(), "after {tool}");
        assert!(!hashes.contains(&h), "{tool} changed nothing");
        hashes.push(h);
        out.text
    };
    // refill: a new order row and the prescription's refills_left
    let order = step(
        &mut env,
        "refill_prescription",
        json!({"prescription_id": rx_id, "payment_method_id": card}),
    );
    let order_id = text_field(&order, "order_id");
    // cancel: the order's status and the prescription's refills_left again
    step(
        &mut env,
        "cancel_refill_order",
        json!({"order_id": order_id, "reason": "no longer needed"}),
    );
    step(
        &mut env,
        "update_patient_address",
        json!({"patient_id": patient, "line1": "7 Quarry Road", "line2": "Unit 12",
               "city": "Durham", "state": "NC", "zip": "27705"}),
    );
    // A fork shares the session until it writes; its write leaves the original as it was.
    let now = env.state_hash();
    let mut fork = env.fork();
    let out = fork.invoke(
        "transfer_prescription",
        &json!({"prescription_id": other_rx["prescription_id"], "pharmacy_id": elsewhere}),
    );
    assert!(!out.is_error, "{}", out.text);
    assert_ne!(fork.state_hash(), now);
    assert_eq!(env.state_hash(), now);
    assert_eq!(env.whole_state_hash(), now);
    // The original writing while a fork still shares its session leaves the fork as it was
    // (the fork's reads run on the session they shared).
    let mut reader = env.fork();
    let show = json!({"prescription_id": rx_id});
    let shown = reader.invoke("get_prescription_details", &show).text;
    step(
        &mut env,
        "refill_prescription",
        json!({"prescription_id": rx_id, "payment_method_id": card}),
    );
    assert_eq!(reader.invoke("get_prescription_details", &show).text, shown);
    assert_ne!(env.invoke("get_prescription_details", &show).text, shown);
    assert_eq!(reader.state_hash(), now);
    let patched = domain
        .shared
        .patched_states
        .load(std::sync::atomic::Ordering::Relaxed)
        - patched_before;
    assert!(
        patched >= 4,
        "the hashes were patched from incremental answers ({patched} were)"
    );
}

/// The tau2 shim dumps its model itself: what changed since a version comes from comparing
/// dumps, and patches to the same hash as the whole state.
#[test]
fn the_shim_answers_since_a_version_by_comparing_dumps() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join("tests/fixtures/tau2_mini");
    let cmd: Vec<String> = [
        "python3".to_string(),
        root.join("remote/tau2_shim.py").display().to_string(),
        "--domain-dir".to_string(),
        fixture.display().to_string(),
        "--db".to_string(),
        fixture.join("db.json").display().to_string(),
    ]
    .to_vec();
    let conn = Connection::spawn("tau2_mini", &cmd, root, Duration::from_secs(30)).unwrap();
    let init = conn.call("initialize", json!({})).unwrap();
    assert_eq!(
        init.pointer("/capabilities/experimental/tracer/stateSince"),
        Some(&json!(true))
    );
    let s = conn
        .call("tracer/reset", json!({"split": "eval", "seed": 1}))
        .unwrap()["session"]
        .clone();
    let seen =
        super::state::Snapshot::whole(conn.call("tracer/state", json!({"session": s})).unwrap())
            .unwrap();
    let out = conn
        .call(
            "tools/call",
            json!({"name": "return_bike", "arguments": {"rental_id": "R001"},
                   "_meta": {"tracer/session": s}}),
        )
        .unwrap();
    assert_eq!(out["isError"], json!(false), "{out}");
    let since = conn
        .call(
            "tracer/state",
            json!({"session": s, "since": seen.version.unwrap()}),
        )
        .unwrap();
    assert_eq!(since["since"], json!(seen.version.unwrap()), "{since}");
    let rows = since["rows"].as_object().unwrap();
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        ["bikes", "rentals"],
        "{since}"
    );
    let patched = seen.patched(since).unwrap();
    let whole =
        super::state::Snapshot::whole(conn.call("tracer/state", json!({"session": s})).unwrap())
            .unwrap();
    assert_eq!(patched.hash(), whole.hash());
    assert_ne!(patched.hash(), seen.hash());
}
