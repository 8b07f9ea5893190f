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
