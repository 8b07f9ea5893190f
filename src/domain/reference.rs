//! Differential testing against a domain's public reference environment (the Python tools
//! of tau-bench, tau-emotion-bench or ToolOrchestra), which is the oracle for our tools.
//!
//! Recording (needs the reference sources; see `scripts/reference/README.md`):
//! 1. [`sample_sequences`] draws call sequences on our generated database: per sequence one
//!    customer, 1-4 calls proposed by the domain's grounding hooks on the evolving state,
//!    some of them mutated so error strings and edge cases are compared too (an id that
//!    exists nowhere, a number scaled or negated, an optional argument dropped, a write
//!    repeated at once).
//! 2. The reference's Python tools run every sequence on the same database (exported in the
//!    reference's format) and record each output and every row a sequence changed.
//! 3. The recording is committed as a fixture; `tests/reference.rs` replays it on our tools
//!    in every `cargo test`, so CI needs no Python reference.
//!
//! [`json_equal`] compares outputs the way the references' own replay checks do: JSON
//! outputs by value (Python's `1 == 1.0`), anything else as exact text.
//!
//! Architecture invariant: knows domains only through [`Environment`].

use super::{Environment, GroundingContext};
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::IndexedRandom;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One call of a sequence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub name: String,
    pub kwargs: Value,
}

/// A mutated copy of an argument object, one of:
/// - one string argument, or one string inside a list argument, replaced by an id that
///   exists nowhere (the reference's "not found" messages);
/// - one number argument multiplied by ten or negated (limits, clamps, signs);
/// - one optional argument dropped (defaults, "required for this action" messages).
fn mutate(
    spec: &super::ToolSpec,
    args: &Value,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Option<Value> {
    const MISSING: &str = "ZZ_NOT_FOUND_0000";
    let obj = args.as_object()?;
    let required: Vec<&str> = spec.parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Every string spot: (argument, index inside a list argument).
    let strings: Vec<(&String, Option<usize>)> = obj
        .iter()
        .flat_map(|(k, v)| match v {
            Value::String(_) => vec![(k, None)],
            Value::Array(items) => items
                .iter()
                .enumerate()
                .filter(|(_, x)| x.is_string())
                .map(|(i, _)| (k, Some(i)))
                .collect(),
            _ => Vec::new(),
        })
        .collect();
    let numbers: Vec<&String> = obj
        .iter()
        .filter(|(_, v)| v.is_number())
        .map(|(k, _)| k)
        .collect();
    let optional: Vec<&String> = obj
        .keys()
        .filter(|k| !required.contains(&k.as_str()))
        .collect();
    let kinds: Vec<u8> = [
        (!strings.is_empty()).then_some(0),
        (!numbers.is_empty()).then_some(1),
        (!optional.is_empty()).then_some(2),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut out = obj.clone();
    match kinds.choose(rng)? {
        0 => {
            let (key, index) = strings.choose(rng)?;
            let missing = Value::String(MISSING.into());
            match (index, out.get_mut(*key)) {
                (Some(i), Some(Value::Array(items))) => items[*i] = missing,
                _ => {
                    out.insert((*key).clone(), missing);
                }
            }
        }
        1 => {
            let key = numbers.choose(rng)?;
            let x = obj[*key].as_f64()?;
            let y = if rng.random_bool(0.5) { x * 10.0 } else { -x };
            out.insert((*key).clone(), serde_json::json!(y));
        }
        _ => {
            out.remove(*optional.choose(rng)?);
        }
    }
    Some(Value::Object(out))
}

/// `count` call sequences on `env`, deterministic in `seed`. Tools that end the episode
/// are left out (they change nothing and the references skip them on replay).
pub fn sample_sequences(env: &dyn Environment, seed: u64, count: usize) -> Vec<Vec<Call>> {
    let tools: Vec<&super::ToolSpec> = env
        .tool_specs()
        .into_iter()
        .filter(|s| !s.terminates)
        .collect();
    let customers = env.customers();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let mut rng = derive_rng(seed, &["reference", &i.to_string()]);
        let Some(user) = customers.choose(&mut rng) else {
            break;
        };
        let mut ctx = GroundingContext::for_user(user);
        let mut state = env.fork();
        let len = rng.random_range(1..=4);
        let mut seq = Vec::with_capacity(len);
        let mut attempts = 0;
        while seq.len() < len && attempts < 40 {
            attempts += 1;
            let Some(spec) = tools.choose(&mut rng).copied() else {
                break;
            };
            let tool = spec.name;
            let proposals = state.propose_calls(tool, &ctx, &mut rng);
            let Some(args) = proposals.choose(&mut rng).cloned() else {
                continue;
            };
            let args = if rng.random_bool(0.2) {
                mutate(spec, &args, &mut rng).unwrap_or(args)
            } else {
                args
            };
            let result = state.invoke(tool, &args);
            if !result.is_error {
                state.observe(tool, &args, &result.text, &mut ctx);
            }
            seq.push(Call {
                name: tool.to_string(),
                kwargs: args.clone(),
            });
            // A write made twice in a row: "already has", "does not have", idempotence.
            if spec.kind == super::ToolKind::Write
                && !result.is_error
                && seq.len() < len
                && rng.random_bool(0.15)
            {
                state.invoke(tool, &args);
                seq.push(Call {
                    name: tool.to_string(),
                    kwargs: args,
                });
            }
        }
        if !seq.is_empty() {
            out.push(seq);
        }
    }
    out
}

/// Equality of two outputs as the references' replay checks see it: both parse as JSON
/// and are equal as Python values (numbers by value), or both are the same text.
pub fn outputs_equal(ours: &str, theirs: &str) -> bool {
    match (
        serde_json::from_str::<Value>(ours),
        serde_json::from_str::<Value>(theirs),
    ) {
        (Ok(a), Ok(b)) => json_equal(&a, &b),
        _ => ours == theirs,
    }
}

/// Python `==` on JSON values: `1 == 1.0`, floats within a relative 1e-9 (long decimals
/// may parse one ULP apart), objects order-independent.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
            _ => x == y,
        },
        (Value::Bool(x), Value::Number(y)) | (Value::Number(y), Value::Bool(x)) => {
            y.as_f64() == Some(f64::from(u8::from(*x)))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| json_equal(v, w))
        }
        _ => a == b,
    }
}

/// The rows of a reference-format export that differ between `before` and `after`:
/// table -> id -> new row (`null` when deleted). List-shaped tables are compared whole
/// and reported under the id `"*"`.
pub fn changed_rows(before: &Value, after: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let tables = after.as_object().into_iter().flatten();
    for (table, now) in tables {
        let was = before.get(table).unwrap_or(&Value::Null);
        let mut changed = serde_json::Map::new();
        match (was, now) {
            (Value::Object(w), Value::Object(n)) => {
                for (id, row) in n {
                    if w.get(id).is_none_or(|old| !json_equal(old, row)) {
                        changed.insert(id.clone(), row.clone());
                    }
                }
                for id in w.keys().filter(|id| !n.contains_key(*id)) {
                    changed.insert(id.clone(), Value::Null);
                }
            }
            (w, n) if !json_equal(w, n) => {
                changed.insert("*".into(), n.clone());
            }
            _ => {}
        }
        if !changed.is_empty() {
            out.insert(table.clone(), Value::Object(changed));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_equality_and_changed_rows() {
        assert!(outputs_equal(r#"{"a": 1}"#, r#"{"a":1.0}"#));
        assert!(!outputs_equal(r#"{"a": 1}"#, r#"{"a": "1"}"#));
        assert!(outputs_equal("Error: x", "Error: x"));
        assert!(!outputs_equal("Error: x", "Error: y"));
        let before = json!({"t": {"a": {"n": 1}, "b": {"n": 2}}, "l": [1]});
        let after = json!({"t": {"a": {"n": 1}, "c": {"n": 3}}, "l": [1, 2]});
        assert_eq!(
            changed_rows(&before, &after),
            json!({"t": {"c": {"n": 3}, "b": null}, "l": {"*": [1, 2]}})
        );
    }

    #[test]
    fn sequences_are_deterministic() {
        let d = crate::domain::find("retail").unwrap();
        let env = d.generate(1, crate::domain::Split::Eval);
        let a = sample_sequences(env.as_ref(), 5, 20);
        assert_eq!(a, sample_sequences(env.as_ref(), 5, 20));
        assert!(a.len() >= 15, "{}", a.len());
    }
}
