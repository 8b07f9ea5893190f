//! What a grounding search knows at one point of a trace ([`GroundingContext`]): the
//! customer and the ids earlier calls revealed, which proposals rank first.
//!
//! Architecture invariant: plain data and its learning rules; knows no domain.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What a grounding search knows at one point of a trace: who the customer is and which
/// entity ids earlier calls revealed (or the customer owns). Keys are argument names
/// ("reservation_id", "order_id", ...), values in the order they were learnt.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroundingContext {
    pub user_id: Option<String>,
    pub known: BTreeMap<String, Vec<String>>,
}

impl GroundingContext {
    pub fn for_user(user_id: &str) -> Self {
        GroundingContext {
            user_id: Some(user_id.to_string()),
            known: BTreeMap::new(),
        }
    }

    pub fn learn(&mut self, key: &str, value: &str) {
        let list = self.known.entry(key.to_string()).or_default();
        if !list.iter().any(|v| v == value) {
            list.push(value.to_string());
        }
    }

    pub fn values(&self, key: &str) -> &[String] {
        self.known.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Learn, as `key`, each id string of the list at `field` of a JSON output: the ids a
    /// record lists under a plural name (a profile's `orders`, `reservations`), which
    /// [`Self::learn_from_json`] does not take for `*_id` values.
    pub fn learn_listed(&mut self, output: &Value, field: &str, key: &str) {
        let listed = output.get(field).and_then(Value::as_array);
        for id in listed.into_iter().flatten().filter_map(Value::as_str) {
            self.learn(key, id);
        }
    }

    /// Learn, as `key`, each key of the object at `field` of a JSON output (saved payment
    /// methods keyed by their id).
    pub fn learn_keys(&mut self, output: &Value, field: &str, key: &str) {
        let map = output.get(field).and_then(Value::as_object);
        for id in map.into_iter().flat_map(|m| m.keys()) {
            self.learn(key, id);
        }
    }

    /// Learn every `*_id` string (and the listed extra keys) found anywhere in a JSON output.
    pub fn learn_from_json(&mut self, output: &Value, extra_keys: &[&str]) {
        match output {
            Value::Object(map) => {
                for (k, v) in map {
                    if let Value::String(s) = v
                        && (k.ends_with("_id") || extra_keys.contains(&k.as_str()))
                    {
                        self.learn(k, s);
                    }
                    self.learn_from_json(v, extra_keys);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.learn_from_json(item, extra_keys);
                }
            }
            _ => {}
        }
    }
}
