//! A remote session's state as Tracer keeps it: tables of rows keyed by primary key, each
//! row with its digest, and the sum of the digests per table and over all tables (the state
//! hash). Built from a whole `tracer/state` answer, or patched by an incremental one (the
//! rows and tables changed since a version: docs/remote-domains.md, "Incremental state"),
//! so a write costs Tracer the digests of what it changed, not of the whole database.
//!
//! The hash is the same however the snapshot was reached: the sum of
//! [`row_digest`]`(table, key, row)` over every row of every table whose value is an
//! object (a list is keyed by position, `000000`, `000001`, ...; any other value counts for
//! nothing), exactly what a whole answer gives.
//!
//! Architecture invariant: pure data; no I/O, no protocol beyond the answer's shape.

use crate::domain::{StateHash, table::row_digest};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One row: its JSON and its digest.
pub(super) struct Row {
    pub value: Value,
    digest: StateHash,
}

/// One table: its rows (shared between snapshots that did not change them) and their sum;
/// `other` holds a table's value when it is neither an object nor a list.
#[derive(Clone, Default)]
pub(super) struct Table {
    rows: BTreeMap<Arc<str>, Arc<Row>>,
    sum: StateHash,
    other: Option<Value>,
}

impl Table {
    /// A table from its value in an answer (an object keyed by primary key, or a list).
    fn from_value(name: &str, value: Value) -> Table {
        let mut table = Table::default();
        match value {
            Value::Object(rows) => {
                for (key, row) in rows {
                    table.put(name, &key, row);
                }
            }
            Value::Array(items) => {
                for (i, row) in items.into_iter().enumerate() {
                    table.put(name, &format!("{i:06}"), row);
                }
            }
            other => table.other = Some(other),
        }
        table
    }

    fn put(&mut self, name: &str, key: &str, value: Value) {
        let digest = row_digest(name, key, &value);
        self.sum = self.sum.combine(digest);
        if let Some(old) = self
            .rows
            .insert(Arc::from(key), Arc::new(Row { value, digest }))
        {
            self.sum = self.sum.remove(old.digest);
        }
    }

    fn delete(&mut self, key: &str) {
        if let Some(old) = self.rows.remove(key) {
            self.sum = self.sum.remove(old.digest);
        }
    }

    /// The rows in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.rows.iter().map(|(k, r)| (&**k, &r.value))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.rows.get(key).map(|r| &r.value)
    }

    /// The table as an answer would give it (a list comes back keyed by position).
    fn to_value(&self) -> Value {
        match &self.other {
            Some(v) => v.clone(),
            None => Value::Object(
                self.rows
                    .iter()
                    .map(|(k, r)| (k.to_string(), r.value.clone()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }
}

/// The state of a session at one version.
#[derive(Clone, Default)]
pub(super) struct Snapshot {
    /// The server's name for this state, when it gives one (then `since` can name it).
    pub version: Option<u64>,
    tables: BTreeMap<String, Arc<Table>>,
    sum: StateHash,
}

fn malformed(why: &str) -> String {
    format!("malformed answer ({why})")
}

fn version_of(result: &Value) -> Result<Option<u64>, String> {
    match result.get("version") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| malformed("`version` is not an unsigned integer")),
    }
}

impl Snapshot {
    /// The snapshot of a whole answer: `{"tables": {name: table, ...}, "version": n}`.
    pub fn whole(mut result: Value) -> Result<Snapshot, String> {
        let version = version_of(&result)?;
        let Some(Value::Object(tables)) = result.get_mut("tables").map(Value::take) else {
            return Err(malformed("no `tables` object"));
        };
        let mut snap = Snapshot {
            version,
            ..Snapshot::default()
        };
        for (name, table) in tables {
            let table = Table::from_value(&name, table);
            snap.tables.insert(name, Arc::new(table));
        }
        snap.sum = snap.total();
        Ok(snap)
    }

    /// This snapshot patched by an incremental answer to `since` this version:
    /// `{"version": n, "since": v, "tables": {name: table | null}, "rows": {name: {key: row}},
    /// "deleted": {name: [key, ...]}}`. Tables and rows the answer does not name are as they
    /// were (and shared with this snapshot).
    pub fn patched(&self, mut result: Value) -> Result<Snapshot, String> {
        let version = version_of(&result)?;
        let mut tables = self.tables.clone();
        let mut part = |field: &str| match result.get_mut(field).map(Value::take) {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(map)) => Ok(map),
            Some(_) => Err(malformed(&format!("`{field}` is not an object"))),
        };
        let (whole, rows, deleted) = (part("tables")?, part("rows")?, part("deleted")?);
        for (name, table) in whole {
            match table {
                Value::Null => {
                    tables.remove(&name);
                }
                table => {
                    let table = Table::from_value(&name, table);
                    tables.insert(name, Arc::new(table));
                }
            }
        }
        for (name, changed) in rows {
            let Value::Object(changed) = changed else {
                return Err(malformed(&format!("rows of `{name}` are not an object")));
            };
            let table = Arc::make_mut(tables.entry(name.clone()).or_default());
            if table.other.is_some() {
                return Err(malformed(&format!("rows of `{name}`, which has no rows")));
            }
            for (key, row) in changed {
                table.put(&name, &key, row);
            }
        }
        for (name, keys) in deleted {
            let Value::Array(keys) = keys else {
                return Err(malformed(&format!(
                    "deleted keys of `{name}` are not a list"
                )));
            };
            let Some(table) = tables.get_mut(&name) else {
                continue;
            };
            let table = Arc::make_mut(table);
            for key in keys {
                let Value::String(key) = key else {
                    return Err(malformed(&format!(
                        "a deleted key of `{name}` is not a string"
                    )));
                };
                table.delete(&key);
            }
        }
        let mut snap = Snapshot {
            version,
            tables,
            sum: StateHash::default(),
        };
        snap.sum = snap.total();
        Ok(snap)
    }

    fn total(&self) -> StateHash {
        self.tables
            .values()
            .fold(StateHash::default(), |sum, t| sum.combine(t.sum))
    }

    /// The state hash: the sum of every row's digest.
    pub fn hash(&self) -> StateHash {
        self.sum
    }

    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.get(name).map(|t| &**t)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tables.keys().map(String::as_str)
    }

    /// The tables as an answer would give them (lists keyed by position).
    pub fn to_values(&self) -> BTreeMap<String, Value> {
        self.tables
            .iter()
            .map(|(name, t)| (name.clone(), t.to_value()))
            .collect()
    }
}
