//! One session of a remote domain as an [`Environment`]: forks are `tracer/fork`, tools run
//! by `tools/call` (after the arguments are validated against the listed schema, as built-in
//! tools are), and the state hash is computed here from `tracer/state`, never taken from the
//! server. The state is read once per version: a read leaves the cached tables valid, a
//! write drops them.
//!
//! Architecture invariant: the session's lifetime is the value's (dropping it closes the
//! session); every infrastructure failure unwinds (see [`super::fail`]).

use super::{Shared, fail};
use crate::domain::{StateHash, ToolKind, ToolOutput, args, table::row_digest};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

pub struct RemoteEnv {
    pub(super) shared: Arc<Shared>,
    session: String,
    state: Mutex<Option<Arc<BTreeMap<String, Value>>>>,
}

impl RemoteEnv {
    /// A new session from `method` (`tracer/reset` or `tracer/fork`).
    pub(super) fn open(shared: &Arc<Shared>, method: &str, params: Value) -> Result<Self, String> {
        let result = shared.conn.call(method, params)?;
        let session = session_of(shared.name, method, &result)?;
        Ok(RemoteEnv {
            shared: shared.clone(),
            session,
            state: Mutex::new(None),
        })
    }

    /// The session's tables (table -> rows keyed by primary key), read once per version.
    pub(super) fn state(&self) -> Arc<BTreeMap<String, Value>> {
        let mut cached = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = &*cached {
            return s.clone();
        }
        let result = self
            .shared
            .conn
            .call("tracer/state", json!({"session": self.session}))
            .unwrap_or_else(|e| fail(e));
        let tables = match result.get("tables") {
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| (k.clone(), keyed(v)))
                .collect::<BTreeMap<_, _>>(),
            _ => fail(format!(
                "domain '{}': tracer/state: malformed answer (no `tables` object)",
                self.shared.name
            )),
        };
        let tables = Arc::new(tables);
        *cached = Some(tables.clone());
        tables
    }

    /// The rows of one table (empty when the state has no such table).
    pub(super) fn rows(&self, table: &str) -> Vec<(String, Value)> {
        match self.state().get(table) {
            Some(Value::Object(rows)) => rows.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => Vec::new(),
        }
    }

    pub(super) fn row(&self, table: &str, key: &str) -> Option<Value> {
        self.state().get(table)?.get(key).cloned()
    }
}

/// A table as rows keyed by primary key: an object as it is, a list keyed by position.
fn keyed(table: &Value) -> Value {
    match table {
        Value::Array(items) => Value::Object(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("{i:06}"), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn session_of(domain: &str, method: &str, result: &Value) -> Result<String, String> {
    match result.get("session") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        _ => Err(format!(
            "domain '{domain}': {method}: malformed answer (no `session`): {result}"
        )),
    }
}

impl Drop for RemoteEnv {
    fn drop(&mut self) {
        self.shared
            .conn
            .notify("tracer/close", json!({"session": self.session}));
    }
}

/// Table names live as long as the process (`Environment::tables` names them `'static`);
/// each distinct name is leaked once.
fn table_name(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(n) = names.get(name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// The text of a `tools/call` result: its `content` texts joined.
fn call_text(domain: &str, tool: &str, result: &Value) -> (String, bool) {
    let Some(content) = result.get("content").and_then(Value::as_array) else {
        fail(format!(
            "domain '{domain}': tools/call {tool}: malformed answer (no `content` list)"
        ))
    };
    let text: String = content
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    (text, is_error)
}

impl crate::domain::Environment for RemoteEnv {
    fn fork(&self) -> Box<dyn crate::domain::Environment> {
        let env = RemoteEnv::open(
            &self.shared,
            "tracer/fork",
            json!({"session": self.session}),
        )
        .unwrap_or_else(|e| fail(e));
        *env.state.lock().unwrap_or_else(|p| p.into_inner()) =
            self.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        Box::new(env)
    }

    fn invoke(&mut self, tool: &str, args: &Value) -> ToolOutput {
        let Some(spec) = self.shared.specs.iter().find(|s| s.name == tool) else {
            return ToolOutput {
                text: format!("Unknown action {tool}"),
                is_error: true,
            };
        };
        if let Err(msg) = args::validate(&spec.parameters, args) {
            return ToolOutput {
                text: format!("Error: {msg}"),
                is_error: true,
            };
        }
        let result = self
            .shared
            .conn
            .call(
                "tools/call",
                json!({"name": tool, "arguments": args, "_meta": {"tracer/session": self.session}}),
            )
            .unwrap_or_else(|e| fail(format!("{e} (tools/call {tool})")));
        let (text, is_error) = call_text(self.shared.name, tool, &result);
        if spec.kind == ToolKind::Write {
            *self.state.lock().unwrap_or_else(|p| p.into_inner()) = None;
        }
        ToolOutput { text, is_error }
    }

    fn state_hash(&self) -> StateHash {
        let mut sum = StateHash::default();
        for (table, rows) in self.state().iter() {
            if let Value::Object(rows) = rows {
                for (key, row) in rows {
                    sum = sum.combine(row_digest(table, key, row));
                }
            }
        }
        sum
    }

    fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)> {
        self.state()
            .keys()
            .map(|t| (table_name(t), self.rows(t)))
            .collect()
    }

    fn to_tau_bench(&self) -> BTreeMap<String, Value> {
        (*self.state()).clone()
    }
}
