//! Copy-on-write tables: the storage every domain database is built from.
//!
//! A `Table<T>` is an immutable, shared base map (behind an `Arc`) plus a small per-fork
//! overlay of changed rows. Forking a database therefore costs one `Arc` clone per table and
//! an empty overlay — no row is copied until a tool writes it. The canonical state hash is
//! an additive multiset hash (sum of per-row SHA-256 digests, 128-bit wrapping), so it is
//! independent of iteration order, stable across platforms, and updated in O(changed rows):
//! the base sum is computed once per base and shared by all forks.
//!
//! Architecture invariant: this module knows nothing about any domain, tool or artifact.

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A 128-bit order-independent digest of a database state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct StateHash(pub u128);

impl StateHash {
    pub fn combine(self, other: StateHash) -> StateHash {
        StateHash(self.0.wrapping_add(other.0))
    }
    pub fn remove(self, other: StateHash) -> StateHash {
        StateHash(self.0.wrapping_sub(other.0))
    }
    /// Lower-case hex, 32 characters: the form stored in artifacts.
    pub fn to_hex(self) -> String {
        format!("{:032x}", self.0)
    }
}

impl fmt::Debug for StateHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateHash({})", self.to_hex())
    }
}

impl fmt::Display for StateHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Digest of one row: SHA-256 over `table \0 key \0 canonical-json(row)`, first 16 bytes.
/// Rows are serde structs (fields in declaration order) whose maps are `BTreeMap`s, so
/// their JSON is canonical.
pub fn row_digest<T: Serialize>(table: &str, key: &str, row: &T) -> StateHash {
    let mut hasher = Sha256::new();
    hasher.update(table.as_bytes());
    hasher.update([0u8]);
    hasher.update(key.as_bytes());
    hasher.update([0u8]);
    // Serialising our own row types into a Vec cannot fail (no non-string map keys).
    let json = serde_json::to_vec(row).unwrap_or_default();
    hasher.update(&json);
    let out = hasher.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&out[..16]);
    StateHash(u128::from_le_bytes(bytes))
}

struct Base<T> {
    name: &'static str,
    rows: BTreeMap<String, T>,
    sum: OnceLock<StateHash>,
}

/// A keyed table with a shared immutable base and a private overlay of edits.
pub struct Table<T> {
    base: Arc<Base<T>>,
    /// `Some(row)` = inserted or updated, `None` = deleted.
    overlay: BTreeMap<String, Option<T>>,
    /// The base's ids in the order a source document listed them ([`Table::set_order`]);
    /// `None`: id order.
    order: Option<Arc<[String]>>,
}

impl<T: Clone> Clone for Table<T> {
    /// Cheap when the overlay is empty (the usual case: forking a freshly loaded database).
    fn clone(&self) -> Self {
        Table {
            base: Arc::clone(&self.base),
            overlay: self.overlay.clone(),
            order: self.order.clone(),
        }
    }
}

impl<T: Clone + Serialize> Table<T> {
    pub fn new(name: &'static str, rows: BTreeMap<String, T>) -> Self {
        Table {
            base: Arc::new(Base {
                name,
                rows,
                sum: OnceLock::new(),
            }),
            overlay: BTreeMap::new(),
            order: None,
        }
    }

    /// List the base rows in `order` in [`Table::in_order`] (the ids as a reference's file
    /// lists them: Python keeps that order, the sorted base has lost it). `order` names the
    /// base's ids; one it does not name is not listed.
    pub fn set_order(&mut self, order: Vec<String>) {
        self.order = Some(order.into());
    }

    /// Rows in listing order (see [`Table::set_order`]; id order when none was given),
    /// edits applied, then the rows added since in id order.
    pub fn in_order(&self) -> impl Iterator<Item = &T> {
        let listed: Box<dyn Iterator<Item = &String>> = match &self.order {
            Some(order) => Box::new(order.iter()),
            None => Box::new(self.base.rows.keys()),
        };
        let added = self
            .overlay
            .iter()
            .filter(|(k, _)| !self.base.rows.contains_key(*k))
            .filter_map(|(_, slot)| slot.as_ref());
        listed.filter_map(|id| self.get(id)).chain(added)
    }

    pub fn name(&self) -> &'static str {
        self.base.name
    }

    pub fn get(&self, key: &str) -> Option<&T> {
        match self.overlay.get(key) {
            Some(slot) => slot.as_ref(),
            None => self.base.rows.get(key),
        }
    }

    /// The row, or `missing` as the error (a tool's "... not found").
    pub fn get_or(&self, key: &str, missing: &str) -> Result<&T, String> {
        self.get(key).ok_or_else(|| missing.to_string())
    }

    /// The row, or "`{noun} {key} not found`" as the error (the tau2 domains' tools').
    pub fn get_named(&self, key: &str, noun: &str) -> Result<&T, String> {
        self.get(key)
            .ok_or_else(|| format!("{noun} {key} not found"))
    }

    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Mutable access; copies the row from the base into the overlay on first write.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        if !self.overlay.contains_key(key) {
            let row = self.base.rows.get(key)?.clone();
            self.overlay.insert(key.to_string(), Some(row));
        }
        self.overlay.get_mut(key).and_then(|slot| slot.as_mut())
    }

    pub fn insert(&mut self, key: String, row: T) {
        self.overlay.insert(key, Some(row));
    }

    pub fn remove(&mut self, key: &str) {
        if self.get(key).is_some() {
            self.overlay.insert(key.to_string(), None);
        }
    }

    /// Rows in key order, edits applied.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        let mut base = self.base.rows.iter().peekable();
        let mut over = self.overlay.iter().peekable();
        std::iter::from_fn(move || {
            loop {
                let next_is_base = match (base.peek(), over.peek()) {
                    (None, None) => return None,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (Some((bk, _)), Some((ok, _))) => bk < ok,
                };
                if next_is_base {
                    let (k, v) = base.next()?;
                    return Some((k.as_str(), v));
                }
                let (k, slot) = over.next()?;
                if base.peek().map(|(bk, _)| *bk == k).unwrap_or(false) {
                    base.next();
                }
                if let Some(v) = slot {
                    return Some((k.as_str(), v));
                }
            }
        })
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(k, _)| k)
    }

    pub fn len(&self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of rows this fork has touched (a cost measure for benchmarks).
    pub fn overlay_len(&self) -> usize {
        self.overlay.len()
    }

    fn base_sum(&self) -> StateHash {
        *self.base.sum.get_or_init(|| {
            self.base
                .rows
                .iter()
                .fold(StateHash::default(), |acc, (k, v)| {
                    acc.combine(row_digest(self.base.name, k, v))
                })
        })
    }

    /// Canonical hash of the table's current contents.
    pub fn state_hash(&self) -> StateHash {
        let mut sum = self.base_sum();
        for (key, slot) in &self.overlay {
            if let Some(old) = self.base.rows.get(key) {
                sum = sum.remove(row_digest(self.base.name, key, old));
            }
            if let Some(new) = slot {
                sum = sum.combine(row_digest(self.base.name, key, new));
            }
        }
        sum
    }

    /// Fold the overlay into a new base (used after bulk generation or import).
    pub fn compact(&self) -> Self {
        let rows = self
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        Table::new(self.base.name, rows)
    }

    /// All rows as an ordered map (export paths only; allocates).
    pub fn to_map(&self) -> BTreeMap<String, T> {
        self.iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }
}

impl<T: Clone + Serialize + DeserializeOwned> Table<T> {
    /// Rows as JSON values (for Parquet export and tau-bench export).
    pub fn to_json_rows(&self) -> Vec<(String, serde_json::Value)> {
        self.iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table<u32> {
        Table::new(
            "t",
            [("a".to_string(), 1), ("c".to_string(), 3)]
                .into_iter()
                .collect(),
        )
    }

    #[test]
    fn fork_edits_do_not_leak_into_the_base() {
        let base = table();
        let mut fork = base.clone();
        *fork.get_mut("a").unwrap() = 10;
        fork.insert("b".into(), 2);
        fork.remove("c");
        assert_eq!(base.get("a"), Some(&1));
        assert_eq!(base.len(), 2);
        let rows: Vec<_> = fork.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(rows, vec![("a".into(), 10), ("b".into(), 2)]);
    }

    #[test]
    fn named_lookups_say_what_was_not_found() {
        assert_eq!(table().get_named("a", "Row"), Ok(&1));
        assert_eq!(
            table().get_named("b", "Row").unwrap_err(),
            "Row b not found"
        );
    }

    #[test]
    fn rows_list_in_the_given_order_then_the_added_ones() {
        let mut t = table();
        assert_eq!(t.in_order().copied().collect::<Vec<_>>(), [1, 3]);
        t.set_order(vec!["c".into(), "a".into()]);
        t.insert("b".into(), 2);
        t.remove("c");
        t.insert("0".into(), 0);
        *t.get_mut("a").unwrap() = 10;
        assert_eq!(t.in_order().copied().collect::<Vec<_>>(), [10, 0, 2]);
    }

    #[test]
    fn hash_depends_on_content_not_history() {
        let base = table();
        let mut fork = base.clone();
        assert_eq!(fork.state_hash(), base.state_hash());
        *fork.get_mut("a").unwrap() = 7;
        assert_ne!(fork.state_hash(), base.state_hash());
        *fork.get_mut("a").unwrap() = 1;
        assert_eq!(fork.state_hash(), base.state_hash());
        fork.insert("z".into(), 9);
        let mut other = base.clone();
        other.insert("z".into(), 9);
        assert_eq!(fork.state_hash(), other.state_hash());
        assert_eq!(fork.compact().state_hash(), fork.state_hash());
    }
}
