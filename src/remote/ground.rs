//! The hooks of a remote domain, from its declarations (docs/remote-domains.md): grounding
//! proposals drawn argument by argument from the session's JSON state, the customer's facts
//! and records, request sentences with `{arg}` and `{arg.field}` placeholders, and the
//! policy rules declared as data.
//!
//! Proposals: for each argument of the tool, what the conversation revealed under its name
//! comes first, then the customer's own id (for the customer argument), then each declared
//! draw in a seeded order, then the schema's `enum`; an optional argument with no candidate
//! is left out, a required one leaves the tool with no proposal. The arguments are combined
//! ([`propose::combine`]) and only the calls that obey the declared rules are kept; a read's
//! must also execute on a fork ([`propose::executable`]), a write's is left to the search
//! (its dry run would copy the server's database once more).
//!
//! Architecture invariant: deterministic for a given RNG state; reads the state only.

use super::declare::Draw;
use super::env::RemoteEnv;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use crate::domain::kit::text::join_and;
use crate::domain::{Environment, GroundingContext, Hooks, PolicyViolation, ToolSpec, UserFact};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// At most this many values per argument go into the combination.
const PER_ARG: usize = 6;

/// A JSON value as a customer or a sentence says it: a string as it is, a number or a
/// boolean as printed, a list of those joined with "and"; `None` for anything else.
fn spoken(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(items) => {
            let parts: Option<Vec<String>> = items.iter().map(spoken).collect();
            parts.filter(|p| !p.is_empty()).map(|p| join_and(&p))
        }
        _ => None,
    }
}

fn toml_json(v: &toml::Value) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The customer a grounding context is about: its user, else the first id learnt under
/// the customer argument's name.
fn customer(env: &RemoteEnv, ctx: &GroundingContext) -> Option<String> {
    let key = &env.shared.decl.customers.key;
    ctx.user_id
        .clone()
        .or_else(|| ctx.values(key).first().cloned())
}

/// Whether a row passes a draw's `owner` (for a known customer) and `where` filters.
fn row_fits(draw: &Draw, row: &Value, customer: Option<&str>) -> bool {
    let owned = match (&draw.owner, customer) {
        (Some(field), Some(c)) => row.get(field).and_then(Value::as_str) == Some(c),
        _ => true,
    };
    owned
        && draw.filter.iter().all(|(field, allowed)| {
            let v = row.get(field).unwrap_or(&Value::Null);
            allowed.iter().any(|a| &toml_json(a) == v)
        })
}

/// The values one draw offers.
fn drawn(env: &RemoteEnv, draw: &Draw, customer: Option<&str>) -> Vec<Value> {
    if let Some(values) = &draw.values {
        return values.iter().map(toml_json).collect();
    }
    let Some(table) = &draw.table else {
        return Vec::new();
    };
    env.with_table(table, |rows| {
        rows.iter()
            .filter(|(_, row)| row_fits(draw, row, customer))
            .map(|(key, row)| match &draw.field {
                Some(f) => row.get(f).cloned().unwrap_or(Value::Null),
                None => Value::String(key.to_string()),
            })
            .filter(|v| !v.is_null())
            .collect()
    })
}

/// The draws declared for an argument of a tool.
fn draws_for<'a>(
    env: &'a RemoteEnv,
    tool: &'a str,
    arg: &'a str,
) -> impl Iterator<Item = &'a Draw> {
    env.shared
        .decl
        .draw
        .iter()
        .filter(move |d| d.arg == arg && (d.tools.is_empty() || d.tools.iter().any(|t| t == tool)))
}

/// Candidate values for one argument, most plausible first (see the module docs).
fn candidates(
    env: &RemoteEnv,
    tool: &str,
    arg: &str,
    schema: &Value,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let customer = customer(env, ctx);
    let is_list = schema.get("type") == Some(&Value::String("array".into()))
        || schema
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|t| t.contains(&Value::String("array".into())));
    let mut out: Vec<Value> = Vec::new();
    let push = |v: Value, out: &mut Vec<Value>| {
        if !out.contains(&v) {
            out.push(v);
        }
    };
    for v in ctx.values(arg) {
        push(Value::String(v.clone()), &mut out);
    }
    if arg == env.shared.decl.customers.key
        && let Some(c) = &customer
    {
        push(Value::String(c.clone()), &mut out);
    }
    for draw in draws_for(env, tool, arg) {
        let values = propose::shuffled(drawn(env, draw, customer.as_deref()), rng);
        for v in values {
            push(v, &mut out);
        }
    }
    let enums = schema
        .get("enum")
        .or_else(|| schema.pointer("/items/enum"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for v in enums.into_iter().filter(|v| !v.is_null()) {
        push(v, &mut out);
    }
    out.truncate(PER_ARG);
    if is_list {
        out.into_iter()
            .map(|v| match v {
                Value::Array(_) => v,
                one => Value::Array(vec![one]),
            })
            .collect()
    } else {
        out
    }
}

/// Grounding proposals for `tool` (see the module docs).
pub(super) fn propose(
    env: &RemoteEnv,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let Some(spec) = env.shared.specs.iter().find(|s| s.name == tool) else {
        return Vec::new();
    };
    let empty = Map::new();
    let properties = spec
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = spec
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut params: Vec<(&str, Vec<Value>)> = Vec::new();
    for (arg, schema) in properties {
        let values = candidates(env, tool, arg, schema, ctx, rng);
        if values.is_empty() {
            if required.contains(&arg.as_str()) {
                return Vec::new();
            }
            continue;
        }
        params.push((arg, values));
    }
    let combos = propose::combine(&params, MAX_PROPOSALS * 4, rng);
    if spec.kind == crate::domain::ToolKind::Read {
        propose::executable(env, tool, combos, MAX_PROPOSALS)
    } else {
        // A write's dry run copies the server's database; the search runs each proposal on a
        // fork anyway and passes over those that fail, so only the declared rules filter here.
        combos
            .into_iter()
            .filter(|args| check_policy(env, tool, args).is_ok())
            .take(MAX_PROPOSALS)
            .collect()
    }
}

/// The declared rules a call would break on this state.
pub(super) fn check_policy(
    env: &RemoteEnv,
    tool: &str,
    args: &Value,
) -> Result<(), PolicyViolation> {
    for (rule, name) in env.shared.decl.rule.iter().zip(&env.shared.rule_names) {
        if rule.tool != tool {
            continue;
        }
        let Some(key) = args.get(&rule.arg).and_then(Value::as_str) else {
            continue;
        };
        let Some(value) = env.with_table(&rule.table, |rows| {
            rows.get(key)
                .map(|row| row.get(&rule.field).cloned().unwrap_or(Value::Null))
        }) else {
            continue; // no such row: the tool answers that itself
        };
        let listed = |list: &[toml::Value]| list.iter().any(|v| toml_json(v) == value);
        let broken = if rule.only.is_empty() {
            listed(&rule.not_in)
        } else {
            !listed(&rule.only)
        };
        if broken {
            let detail = fill(&rule.say, |name| args.get(name).and_then(spoken))
                .unwrap_or_else(|| rule.say.clone());
            return Err(PolicyViolation::new(name, detail));
        }
    }
    Ok(())
}

/// `{name}` placeholders filled by `value`; `None` when one has no value.
fn fill(sentence: &str, value: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(sentence.len() + 16);
    let mut rest = sentence;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}')? + open;
        let v = value(&rest[open + 1..close]).filter(|v| !v.is_empty())?;
        out.push_str(&v);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// A fact about a row: its sentence, the values it reveals, the ids it resolves.
fn fact(
    kind: &str,
    say: &str,
    fields: &[String],
    key: &str,
    id_field: &str,
    row: &Value,
) -> Option<UserFact> {
    let value = |name: &str| {
        if name == id_field {
            Some(key.to_string())
        } else {
            row.get(name).and_then(spoken)
        }
    };
    let text = fill(say, value)?;
    let values = fields.iter().filter_map(|f| value(f)).collect();
    Some(UserFact {
        kind: kind.to_string(),
        text,
        values,
        ids: vec![key.to_string()],
    })
}

/// What the customer knows about themself: the declared facts of their row, then one fact
/// per row they own.
pub(super) fn user_facts(env: &RemoteEnv, user_id: &str) -> Vec<UserFact> {
    let c = &env.shared.decl.customers;
    let Some(row) = env.row(&c.table, user_id) else {
        return Vec::new();
    };
    let mut out: Vec<UserFact> = c
        .facts
        .iter()
        .filter_map(|f| fact(&f.kind, &f.say, &f.values, user_id, &c.key, &row))
        .collect();
    for owns in &c.owns {
        env.with_table(&owns.table, |rows| {
            for (key, r) in rows.iter() {
                if r.get(&owns.owner).and_then(Value::as_str) == Some(user_id)
                    && let Some(f) = fact(&owns.kind, &owns.say, &owns.values, key, "", r)
                {
                    out.push(f);
                }
            }
        });
    }
    out
}

/// The request sentence of a call: `requests.toml`'s, with `{arg}` from the call and
/// `{arg.field}` from the row the argument names (the table its draw reads, or the
/// customers' table for the customer argument).
pub(super) fn describe_request(env: &RemoteEnv, tool: &str, args: &Value) -> Option<String> {
    let templates = &env.shared.templates;
    let sentences = templates.sentences(tool);
    if sentences.is_empty() {
        return None;
    }
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    for s in sentences {
        for name in crate::domain::kit::templates::placeholders(s) {
            if let Some(v) = dotted(env, tool, args, name) {
                vars.insert(name, v);
            } else if let Some(v) = args.get(name).and_then(spoken) {
                vars.insert(name, v);
            }
        }
    }
    templates.render(tool, args, &vars)
}

/// `{arg.field}`: the field of the row the argument's value names.
fn dotted(env: &RemoteEnv, tool: &str, args: &Value, name: &str) -> Option<String> {
    let (arg, field) = name.split_once('.')?;
    let key = args.get(arg)?.as_str()?;
    let customers = &env.shared.decl.customers;
    let tables: Vec<&str> = draws_for(env, tool, arg)
        .filter_map(|d| d.table.as_deref())
        .chain((arg == customers.key).then_some(customers.table.as_str()))
        .collect();
    tables
        .into_iter()
        .find_map(|t| env.row(t, key))
        .and_then(|row| row.get(field).and_then(spoken))
}

/// What the declared reads show about the customer, each output once.
pub(super) fn customer_records(env: &RemoteEnv, user_id: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for record in &env.shared.decl.customers.records {
        let keys: Vec<String> = match (&record.table, &record.owner) {
            (Some(table), owner) => env.with_table(table, |rows| {
                rows.iter()
                    .filter(|(_, r)| {
                        owner
                            .as_ref()
                            .is_none_or(|o| r.get(o).and_then(Value::as_str) == Some(user_id))
                    })
                    .map(|(k, _)| k.to_string())
                    .collect()
            }),
            (None, _) => vec![user_id.to_string()],
        };
        for key in keys {
            let mut args = Map::new();
            args.insert(record.arg.clone(), Value::String(key));
            let output = env.fork().invoke(&record.tool, &Value::Object(args));
            if !output.is_error && !out.contains(&output.text) {
                out.push(output.text);
            }
        }
    }
    out
}

/// The hooks of a remote session: its declarations read against its state.
impl Hooks for RemoteEnv {
    fn tool_specs(&self) -> Vec<&'static ToolSpec> {
        self.shared.specs.clone()
    }

    fn customers(&self) -> Vec<String> {
        self.with_table(&self.shared.decl.customers.table, |rows| {
            rows.iter().map(|(k, _)| k.to_string()).collect()
        })
    }

    fn propose_calls(
        &self,
        tool: &str,
        ctx: &GroundingContext,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Value> {
        propose(self, tool, ctx, rng)
    }

    fn check_policy(&self, tool: &str, args: &Value) -> Result<(), PolicyViolation> {
        check_policy(self, tool, args)
    }

    fn user_facts(&self, user_id: &str) -> Vec<UserFact> {
        user_facts(self, user_id)
    }

    fn describe_request(&self, tool: &str, args: &Value, _output: &str) -> Option<String> {
        describe_request(self, tool, args)
    }

    fn customer_records(&self, user_id: &str) -> Vec<String> {
        customer_records(self, user_id)
    }

    fn identifies_customer(&self) -> bool {
        self.shared.decl.identifies_customer
    }
}
