//! Differential testing against a domain's public reference environment (the Python tools
//! of tau-bench, tau-emotion-bench or ToolOrchestra), which is the oracle for our tools.
//!
//! Recording (needs the reference sources; see `scripts/reference/README.md`):
//! 1. [`sample_sequences`] draws call sequences on our generated database: per sequence one
//!    customer, 1-5 calls proposed by the domain's grounding hooks on the evolving state
//!    (often on the entity the sequence already touched), some of them corrupted so error
//!    strings and edge cases are compared too, some writes repeated at once.
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

/// A corrupted copy of an argument object, so the reference's error paths and edge cases
/// are compared too. One of:
/// - a string argument, or a string inside a list argument, replaced by an id that exists
///   nowhere (the "not found" messages);
/// - a string argument replaced by another value the conversation revealed for the same
///   key (an entity in the wrong state: a delivered order where a pending one is needed,
///   another customer's payment method);
/// - a list argument shortened or given a repeated entry (mismatched or excess items);
/// - a number argument multiplied by ten or negated (limits, clamps, signs);
/// - an optional argument dropped (defaults, "required for this action" messages).
fn corrupt(
    spec: &super::ToolSpec,
    args: &Value,
    alternatives: impl Fn(&str) -> Vec<String>,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Option<Value> {
    const MISSING: &str = "ZZ_NOT_FOUND_0000";
    let obj = args.as_object()?;
    let required: Vec<&str> = spec.parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let keys = |keep: &dyn Fn(&Value) -> bool| -> Vec<&String> {
        obj.iter()
            .filter(|(_, v)| keep(v))
            .map(|(k, _)| k)
            .collect()
    };
    let strings = keys(&|v| v.is_string());
    let lists = keys(&|v| v.as_array().is_some_and(|a| !a.is_empty()));
    let numbers = keys(&|v| v.is_number());
    let optional: Vec<&String> = obj
        .keys()
        .filter(|k| !required.contains(&k.as_str()))
        .collect();
    let kinds: Vec<u8> = [
        (!strings.is_empty() || !lists.is_empty()).then_some(0),
        (!strings.is_empty()).then_some(1),
        (!lists.is_empty()).then_some(2),
        (!numbers.is_empty()).then_some(3),
        (!optional.is_empty()).then_some(4),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut out = obj.clone();
    match kinds.choose(rng)? {
        0 => {
            let spots: Vec<(&String, Option<usize>)> = obj
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
            let (key, index) = spots.choose(rng)?;
            let missing = Value::String(MISSING.into());
            match (index, out.get_mut(*key)) {
                (Some(i), Some(Value::Array(items))) => items[*i] = missing,
                _ => {
                    out.insert((*key).clone(), missing);
                }
            }
        }
        1 => {
            let key = strings.choose(rng)?;
            let current = obj.get(*key).and_then(Value::as_str);
            let others: Vec<String> = alternatives(key)
                .into_iter()
                .filter(|v| Some(v.as_str()) != current)
                .collect();
            let value = others.choose(rng).map_or(MISSING, |v| v.as_str());
            out.insert((*key).clone(), Value::String(value.to_string()));
        }
        2 => {
            let key = lists.choose(rng)?;
            let mut list = obj.get(*key)?.as_array()?.clone();
            if rng.random_bool(0.5) {
                list.pop();
            } else {
                list.push(list.first()?.clone());
            }
            out.insert((*key).clone(), Value::Array(list));
        }
        3 => {
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
    let specs: Vec<&super::ToolSpec> = env
        .tool_specs()
        .into_iter()
        .filter(|s| !s.terminates)
        .collect();
    let tools: Vec<&str> = specs.iter().map(|s| s.name).collect();
    let customers = env.customers();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let mut rng = derive_rng(seed, &["reference", &i.to_string()]);
        let Some(user) = customers.choose(&mut rng) else {
            break;
        };
        let mut ctx = GroundingContext::for_user(user);
        let mut state = env.fork();
        let len = rng.random_range(1..=5);
        let mut seq = Vec::with_capacity(len);
        let mut attempts = 0;
        while seq.len() < len && attempts < 40 {
            attempts += 1;
            let Some(spec) = specs.choose(&mut rng).copied() else {
                break;
            };
            let tool = spec.name;
            let proposals = state.propose_calls(tool, &ctx, &mut rng);
            // Half the time the most plausible proposal (the entity the sequence already
            // touched), so several calls act on one entity and its state changes matter.
            let pick = if rng.random_bool(0.5) {
                proposals.first()
            } else {
                proposals.choose(&mut rng)
            };
            let Some(args) = pick.cloned() else {
                continue;
            };
            let args = if rng.random_bool(0.3) {
                // Other values for a key: what the conversation revealed, then what any
                // tool's proposals use on this state (e.g. every order of the customer).
                let alternatives = |key: &str| {
                    let mut vals: Vec<String> = ctx.values(key).to_vec();
                    for t in &tools {
                        for p in state.propose_calls(t, &ctx, &mut rng.clone()) {
                            if let Some(v) = p.get(key).and_then(Value::as_str)
                                && !vals.iter().any(|x| x == v)
                            {
                                vals.push(v.to_string());
                            }
                        }
                    }
                    vals
                };
                let mut corrupt_rng = rng.clone();
                let out = corrupt(spec, &args, alternatives, &mut corrupt_rng).unwrap_or(args);
                rng = corrupt_rng;
                out
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

/// A documented departure from a reference environment, as a differential fixture's
/// `departures.json` lists them: it covers a call of `tool` whose reference output contains
/// `reference_contains`, whose output of ours contains `ours_contains` (default: anything)
/// and, when `differs_only_in` names fields, whose two outputs are
/// equal once those fields are dropped. `affects_state` says the sequence's changed rows
/// differ too (only in `differs_only_in`, when it names fields).
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Departure {
    pub tool: String,
    pub reference_contains: String,
    pub why: String,
    #[serde(default)]
    pub affects_state: bool,
    #[serde(default)]
    pub differs_only_in: Vec<String>,
    /// With `affects_state`: the fields (any depth; a table's name drops the table) where the
    /// sequence's changed rows may differ; the rest is still compared. Empty: a state-changing
    /// departure stops the comparison of that sequence's rows.
    #[serde(default)]
    pub state_differs_only_in: Vec<String>,
    #[serde(default)]
    pub ours_contains: String,
}

impl Departure {
    /// Whether this departure explains our output `ours` where the reference said `theirs`.
    pub fn covers(&self, tool: &str, ours: &str, theirs: &str) -> bool {
        let fields_only = || {
            let parse = |t: &str| serde_json::from_str::<Value>(t).ok();
            match (parse(ours), parse(theirs)) {
                (Some(a), Some(b)) => json_equal(
                    &without_keys(&a, &self.differs_only_in),
                    &without_keys(&b, &self.differs_only_in),
                ),
                _ => false,
            }
        };
        self.tool == tool
            && theirs.contains(&self.reference_contains)
            && ours.contains(&self.ours_contains)
            && (self.differs_only_in.is_empty() || fields_only())
    }
}

/// `v` with the `keys` removed from every object at any depth: two values compared up to
/// a documented departure confined to those fields.
pub fn without_keys(v: &Value, keys: &[String]) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !keys.contains(k))
                .map(|(k, x)| (k.clone(), without_keys(x, keys)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|x| without_keys(x, keys)).collect()),
        other => other.clone(),
    }
}

/// The export `before` with `changed` rows (as [`changed_rows`] reports them) applied: the
/// final state a reference recording describes.
pub fn apply_changed_rows(before: &Value, changed: &Value) -> Value {
    let mut out = before.clone();
    for (table, rows) in changed.as_object().into_iter().flatten() {
        let Some(rows) = rows.as_object() else {
            continue;
        };
        if let Some(whole) = rows.get("*") {
            out[table.as_str()] = whole.clone();
            continue;
        }
        let target = out.as_object_mut().map(|o| {
            o.entry(table.clone())
                .or_insert_with(|| Value::Object(Default::default()))
        });
        let Some(Value::Object(target)) = target else {
            continue;
        };
        for (id, row) in rows {
            match row {
                Value::Null => {
                    target.remove(id);
                }
                row => {
                    target.insert(id.clone(), row.clone());
                }
            }
        }
    }
    out
}

/// Whether our final export and the reference's changed rows describe the same state once
/// `keys` are ignored everywhere (for a departure confined to those fields).
pub fn same_state_except(
    initial: &Value,
    ours_after: &Value,
    theirs_changed: &Value,
    keys: &[String],
) -> bool {
    if keys.is_empty() {
        return json_equal(&changed_rows(initial, ours_after), theirs_changed);
    }
    let theirs_after = apply_changed_rows(initial, theirs_changed);
    let start = without_keys(initial, keys);
    json_equal(
        &changed_rows(&start, &without_keys(ours_after, keys)),
        &changed_rows(&start, &without_keys(&theirs_after, keys)),
    )
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
        let changed = changed_rows(&before, &after);
        assert_eq!(apply_changed_rows(&before, &changed), after);
        let keys = ["cabin".to_string()];
        assert_eq!(
            without_keys(&json!({"cabin": 1, "x": [{"cabin": 2, "y": 3}]}), &keys),
            json!({"x": [{"y": 3}]})
        );
        // A departure in the ignored field only is the same state; anything else is not.
        let start = json!({"r": {"a": {"cabin": "economy", "n": 1}}});
        let ours = json!({"r": {"a": {"cabin": "business", "n": 2}}});
        let theirs = json!({"r": {"a": {"cabin": "economy", "n": 2}}});
        assert!(same_state_except(&start, &ours, &theirs, &keys));
        assert!(!same_state_except(&start, &ours, &theirs, &[]));
        let theirs_other = json!({"r": {"a": {"cabin": "economy", "n": 3}}});
        assert!(!same_state_except(&start, &ours, &theirs_other, &keys));
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
