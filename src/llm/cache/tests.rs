//! Response cache tests: keys (order independence, namespaces, the streamed key), answers
//! put behind and synced, a store reopened.

use super::key::KEY_VERSION;
use super::*;
use serde_json::Value;
use serde_json::json;
use sha2::{Digest, Sha256};

#[test]
fn key_is_order_independent_and_covers_everything() {
    let a = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 1});
    let b = json!({"seed": 1, "messages": [{"content": "hi", "role": "user"}], "model": "m"});
    assert_eq!(request_key("chat", "", &a), request_key("chat", "", &b));
    assert_ne!(
        request_key("chat", "", &a),
        request_key("embeddings", "", &a)
    );
    let c = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 2});
    assert_ne!(request_key("chat", "", &a), request_key("chat", "", &c));
    // Another server's answers are another namespace.
    assert_ne!(
        request_key("chat", "http://a/v1", &a),
        request_key("chat", "http://b/v1", &a)
    );
}

#[test]
fn the_empty_namespace_is_the_key_of_older_caches() {
    // The key derivation before namespaces existed, spelled out.
    let body = json!({"model": "m"});
    let mut h = Sha256::new();
    h.update(KEY_VERSION.as_bytes());
    h.update([0]);
    h.update(b"chat");
    h.update([0]);
    h.update(canonical_json(&body).as_bytes());
    let old: [u8; 32] = h.finalize().into();
    assert_eq!(request_key("chat", "", &body), old);
}

#[test]
fn the_streamed_key_is_the_key_of_the_sorted_text() {
    // The derivation before keys were streamed: a sorted copy of the tree, as text.
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let body = json!({
        "model": "m", "temperature": 0.7, "seed": 18446744073709551615u64,
        "messages": [{"role": "user", "content": "caf\u{e9} \"quoted\"\n\t\u{1}"},
                     {"role": "tool", "content": null, "tool_call_id": "c1"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters":
            {"type": "object", "properties": {"z": {}, "a": {"type": "number"}}}}}],
        "extra": [1.5e-7, -0.0, true, [], {}]
    });
    let mut h = Sha256::new();
    h.update(KEY_VERSION.as_bytes());
    h.update([0]);
    h.update(b"chat");
    h.update([0]);
    h.update(sorted(&body).to_string().as_bytes());
    let old: [u8; 32] = h.finalize().into();
    assert_eq!(request_key("chat", "", &body), old);
    assert_eq!(canonical_json(&body), sorted(&body).to_string());
}

#[test]
fn an_answer_put_behind_is_read_at_once_and_durable_after_a_sync() {
    let dir = std::env::temp_dir().join(format!("tracer-llm-behind-{}", std::process::id()));
    let path = dir.join("cache.redb");
    let _ = std::fs::remove_dir_all(&dir);
    let cache = ResponseCache::open(&path).unwrap();
    for i in 0..50u8 {
        cache.put_behind([i; 32], vec![i; 3]);
        assert_eq!(cache.get_blocking(&[i; 32]).unwrap(), Some(vec![i; 3]));
    }
    cache.sync_blocking().unwrap();
    assert_eq!(cache.len().unwrap(), 50);
    drop(cache);
    flush_all();
    let reopened = ResponseCache::open(&path).unwrap();
    assert_eq!(reopened.get_blocking(&[49; 32]).unwrap(), Some(vec![49; 3]));
    assert_eq!(reopened.len().unwrap(), 50);
    drop(reopened);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn store_and_reopen() {
    let dir = std::env::temp_dir().join(format!("tracer-llm-cache-{}", std::process::id()));
    let path = dir.join("nested").join("cache.redb");
    let _ = std::fs::remove_dir_all(&dir);
    let key = request_key("chat", "", &json!({"x": 1}));
    {
        let cache = ResponseCache::open(&path).unwrap();
        assert_eq!(cache.get_blocking(&key).unwrap(), None);
        cache.put_blocking(&key, b"answer").unwrap();
        // A second handle on the same file shares the open database.
        let again = ResponseCache::open(&path).unwrap();
        assert_eq!(again.get_blocking(&key).unwrap().unwrap(), b"answer");
    }
    let reopened = ResponseCache::open(&path).unwrap();
    assert_eq!(reopened.get_blocking(&key).unwrap().unwrap(), b"answer");
    assert_eq!(reopened.len().unwrap(), 1);
    drop(reopened);
    let _ = std::fs::remove_dir_all(&dir);
}
