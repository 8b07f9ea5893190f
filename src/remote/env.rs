//! One session of a remote domain as an [`Environment`]: tools run by `tools/call` (after
//! the arguments are validated against the listed schema, as built-in tools are), and the
//! state hash is computed here from `tracer/state`, never taken from the server.
//!
//! What each round trip is spent on:
//! - A fork is free until it writes: forks of one environment share its server session
//!   (reads run on it as they are: a read does not change the state), and the first write
//!   of a shared session asks `tracer/fork` for a session of its own. Most forks the search
//!   and the checks make only read, or are dropped untouched.
//! - The state is read once per version ([`Snapshot`]): a read leaves it valid, a write
//!   makes it stale, and the next look asks for what changed since the version last seen
//!   (`since`, when the server declared `stateSince`), patching the rows and their digests
//!   instead of reading and hashing the whole database again.
//!
//! Architecture invariant: a server session lives as long as an environment uses it (the
//! last one dropped closes it); every infrastructure failure unwinds (see [`super::fail`]).

use super::state::{Snapshot, Table};
use super::{Shared, fail};
use crate::domain::{StateHash, ToolKind, ToolOutput, args};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// A session on the server; closed when the last environment using it is dropped.
struct Session {
    shared: Arc<Shared>,
    id: String,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shared
            .conn
            .notify("tracer/close", json!({"session": self.id}));
    }
}

/// The last state read, and whether it is the session's state now (no write since).
#[derive(Clone, Default)]
struct Cache {
    snapshot: Option<Arc<Snapshot>>,
    fresh: bool,
}

pub struct RemoteEnv {
    pub(super) shared: Arc<Shared>,
    session: Arc<Session>,
    cache: Mutex<Cache>,
}

impl RemoteEnv {
    /// A new session from `method` (`tracer/reset` or `tracer/fork`).
    pub(super) fn open(shared: &Arc<Shared>, method: &str, params: Value) -> Result<Self, String> {
        Ok(RemoteEnv {
            shared: shared.clone(),
            session: Arc::new(new_session(shared, method, params)?),
            cache: Mutex::new(Cache::default()),
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's state now, read once per version (see the module docs).
    pub(super) fn snapshot(&self) -> Arc<Snapshot> {
        let mut cache = self.cache();
        if cache.fresh
            && let Some(s) = &cache.snapshot
        {
            return s.clone();
        }
        let since = cache
            .snapshot
            .as_ref()
            .and_then(|s| s.version)
            .filter(|_| self.shared.state_since);
        let mut params = json!({"session": self.session.id});
        if let Some(v) = since {
            params["since"] = json!(v);
        }
        let result = self
            .shared
            .conn
            .call("tracer/state", params)
            .unwrap_or_else(|e| fail(e));
        let incremental = result.get("since").is_some_and(|s| !s.is_null());
        if incremental {
            self.shared
                .patched_states
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let snapshot = match (&cache.snapshot, incremental) {
            (Some(old), true) if result.get("since").and_then(Value::as_u64) == since => {
                old.patched(result)
            }
            (_, true) => Err(format!(
                "malformed answer (`since` {} answers a question not asked: since {})",
                result["since"],
                since.map_or_else(|| "none".to_string(), |v| v.to_string())
            )),
            (_, false) => Snapshot::whole(result),
        }
        .unwrap_or_else(|why| {
            fail(format!(
                "domain '{}': tracer/state: {why}",
                self.shared.name
            ))
        });
        let snapshot = Arc::new(snapshot);
        *cache = Cache {
            snapshot: Some(snapshot.clone()),
            fresh: true,
        };
        snapshot
    }

    /// Run `f` on one table (an empty one when the state has no such table).
    pub(super) fn with_table<R>(&self, table: &str, f: impl FnOnce(&Table) -> R) -> R {
        let snapshot = self.snapshot();
        match snapshot.table(table) {
            Some(t) => f(t),
            None => f(&Table::default()),
        }
    }

    pub(super) fn row(&self, table: &str, key: &str) -> Option<Value> {
        self.with_table(table, |t| t.get(key).cloned())
    }

    /// The hash of the whole state read afresh (what the incremental path must agree with).
    #[cfg(test)]
    pub(super) fn whole_state_hash(&self) -> StateHash {
        let result = self
            .shared
            .conn
            .call("tracer/state", json!({"session": self.session.id}))
            .unwrap();
        Snapshot::whole(result).unwrap().hash()
    }

    /// A session of this environment's own, forked from the shared one, before a write.
    fn own_session(&mut self) {
        if Arc::strong_count(&self.session) > 1 {
            let session = new_session(
                &self.shared,
                "tracer/fork",
                json!({"session": self.session.id}),
            )
            .unwrap_or_else(|e| fail(e));
            self.session = Arc::new(session);
        }
    }
}

fn new_session(shared: &Arc<Shared>, method: &str, params: Value) -> Result<Session, String> {
    let result = shared.conn.call(method, params)?;
    let id = match result.get("session") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => {
            return Err(format!(
                "domain '{}': {method}: malformed answer (no `session`): {result}",
                shared.name
            ));
        }
    };
    Ok(Session {
        shared: shared.clone(),
        id,
    })
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
        Box::new(RemoteEnv {
            shared: self.shared.clone(),
            session: self.session.clone(),
            cache: Mutex::new(self.cache().clone()),
        })
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
        let write = spec.kind == ToolKind::Write;
        if write {
            self.own_session();
        }
        let result = self
            .shared
            .conn
            .call(
                "tools/call",
                json!({"name": tool, "arguments": args, "_meta": {"tracer/session": self.session.id}}),
            )
            .unwrap_or_else(|e| fail(format!("{e} (tools/call {tool})")));
        let (text, is_error) = call_text(self.shared.name, tool, &result);
        if write {
            self.cache().fresh = false;
        }
        ToolOutput { text, is_error }
    }

    fn state_hash(&self) -> StateHash {
        self.snapshot().hash()
    }

    fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)> {
        let snapshot = self.snapshot();
        snapshot
            .names()
            .map(|name| {
                let rows = snapshot.table(name).map_or_else(Vec::new, |t| {
                    t.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
                });
                (table_name(name), rows)
            })
            .collect()
    }

    fn to_tau_bench(&self) -> BTreeMap<String, Value> {
        self.snapshot().to_values()
    }
}
