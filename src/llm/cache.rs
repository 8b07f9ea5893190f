//! The persistent response cache: SHA-256 of the full canonical request -> the parsed
//! response, in a redb file whose path the caller gives.
//!
//! Why redb: pure Rust (no C toolchain, a few seconds to build), one file, ACID commits, so
//! a killed run loses at most the answer it was writing and a re-run never pays twice for
//! the rest. SQLite would need a C build; sled is unmaintained; a directory of JSON files
//! would mean one inode per call and no atomic batch.
//!
//! The key covers everything that changes an answer: the request kind (chat or embeddings),
//! the role's cache *namespace* (which server's answers these are: by default its base
//! URLs, see `RoleConfig::cache_namespace`) and the exact JSON body sent (model, messages,
//! tools, tool choice, every resolved sampling parameter, `extra_body`), canonicalised
//! (object keys sorted) and prefixed with a format version. The empty namespace adds
//! nothing to the key, so caches written before namespaces existed keep hitting under
//! `cache_namespace = ""`. The API key is never part of it. Only well-formed answers are
//! stored.
//!
//! A damaged file must not take the run down with a panic: redb panics on some corrupted
//! pages (an `unreachable!` in its B-tree code). Every redb call runs under
//! [`catch_unwind`](std::panic::catch_unwind) with that thread's panic message kept off
//! stderr; a panic or a `Corrupted` error becomes one [`LlmError::Cache`] that names the file
//! and says how to move it aside, and the handle refuses further use.
//!
//! Architecture invariant: the cache stores bytes; it does not know the response types.
//! redb allows one open handle per file per process, so handles are shared through a small
//! registry keyed by the file's absolute path (roles may share one cache file).

use redb::{Database, TableDefinition};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use super::error::LlmError;

const RESPONSES: TableDefinition<&[u8], &[u8]> = TableDefinition::new("responses");

/// Bump when the stored value format or the key derivation changes.
const KEY_VERSION: &str = "tracer-llm-cache/v1";

/// The cache key of a request body of `kind` (`"chat"`, `"embeddings"`) in `namespace`.
pub fn request_key(kind: &str, namespace: &str, body: &Value) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(KEY_VERSION.as_bytes());
    h.update([0]);
    h.update(kind.as_bytes());
    h.update([0]);
    if !namespace.is_empty() {
        h.update(b"namespace\0");
        h.update(namespace.as_bytes());
        h.update([0]);
    }
    h.update(canonical_json(body).as_bytes());
    h.finalize().into()
}

thread_local! {
    /// Set while this thread runs a guarded redb call: its panic is reported, not printed.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static PANIC_MESSAGE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Run a redb call; a panic inside it comes back as `Err(message)` instead of unwinding
/// through the caller (and is not printed). Other threads' panics print as before.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(|g| g.get()) {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic".to_string());
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(format!("{message}{at}")));
            } else {
                previous(info);
            }
        }));
    });
    GUARDED.with(|g| g.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    result.map_err(|_| {
        let message = PANIC_MESSAGE
            .with(|m| m.borrow_mut().take())
            .unwrap_or_else(|| "panic".to_string());
        // Assertion messages span lines; errors are one line.
        message.split_whitespace().collect::<Vec<_>>().join(" ")
    })
}

/// The one-line error for a damaged cache file, with the way out.
fn corrupted(path: &Path, detail: &str) -> LlmError {
    let shown = path.display();
    LlmError::Cache {
        path: shown.to_string(),
        message: format!(
            "the file is damaged ({detail}); move it aside (`mv {shown} {shown}.damaged`) and rerun: finished work is kept, answers not yet in another cache are asked again"
        ),
    }
}

fn is_corruption(e: &impl std::fmt::Display) -> bool {
    let text = e.to_string().to_lowercase();
    text.contains("corrupt") || text.contains("invalid data")
}

/// JSON text with every object's keys sorted, so the key does not depend on map order.
pub fn canonical_json(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // With serde_json's default (sorted) maps this is already canonical; sorting again keeps
    // the key stable even if some dependency turns on `preserve_order`.
    sorted(v).to_string()
}

/// A handle on one cache file.
#[derive(Clone)]
pub struct ResponseCache {
    db: Arc<Database>,
    path: PathBuf,
    /// Set once the file showed damage: every later call fails fast with this error.
    damaged: Arc<Mutex<Option<LlmError>>>,
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("path", &self.path)
            .finish()
    }
}

type Damage = Arc<Mutex<Option<LlmError>>>;
type OpenFiles = Mutex<HashMap<PathBuf, (Weak<Database>, Damage)>>;

fn registry() -> &'static OpenFiles {
    static OPEN: std::sync::OnceLock<OpenFiles> = std::sync::OnceLock::new();
    OPEN.get_or_init(|| Mutex::new(HashMap::new()))
}

impl ResponseCache {
    /// Open (creating parent directories and the file if needed) the cache at `path`.
    pub fn open(path: &Path) -> Result<ResponseCache, LlmError> {
        let err = |message: String| LlmError::Cache {
            path: path.display().to_string(),
            message,
        };
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent)
                .map_err(|e| err(format!("cannot create directory: {e}")))?;
        }
        let abs = std::path::absolute(path).map_err(|e| err(e.to_string()))?;
        let mut open = registry()
            .lock()
            .map_err(|_| err("cache registry poisoned".to_string()))?;
        open.retain(|_, (w, _)| w.strong_count() > 0);
        if let Some((db, damaged)) = open
            .get(&abs)
            .and_then(|(w, d)| Some((w.upgrade()?, Arc::clone(d))))
        {
            return Ok(ResponseCache {
                db,
                path: abs,
                damaged,
            });
        }
        let db = match guarded(|| Database::create(&abs)) {
            Ok(Ok(db)) => Arc::new(db),
            Ok(Err(e)) if is_corruption(&e) => return Err(corrupted(&abs, &e.to_string())),
            Ok(Err(e)) => return Err(err(e.to_string())),
            Err(panic) => return Err(corrupted(&abs, &format!("redb panicked: {panic}"))),
        };
        let damaged: Damage = Arc::new(Mutex::new(None));
        open.insert(abs.clone(), (Arc::downgrade(&db), Arc::clone(&damaged)));
        Ok(ResponseCache {
            db,
            path: abs,
            damaged,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, e: impl std::fmt::Display) -> LlmError {
        LlmError::Cache {
            path: self.path.display().to_string(),
            message: e.to_string(),
        }
    }

    /// Run a redb operation: fail fast once the file showed damage, and turn a panic or a
    /// corruption error into the damaged-file error (remembered for later calls).
    fn checked<T>(&self, op: impl FnOnce() -> Result<T, LlmError>) -> Result<T, LlmError> {
        let seen = |d: &Damage| d.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(e) = seen(&self.damaged) {
            return Err(e);
        }
        let result = match guarded(op) {
            Ok(Err(LlmError::Cache { message, .. })) if is_corruption(&message) => {
                Err(corrupted(&self.path, &message))
            }
            Ok(other) => other,
            Err(panic) => Err(corrupted(&self.path, &format!("redb panicked: {panic}"))),
        };
        if let Err(e @ LlmError::Cache { message, .. }) = &result
            && message.starts_with("the file is damaged")
        {
            *self.damaged.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
        }
        result
    }

    /// The stored answer for `key`, if any (blocking; small and fast).
    pub fn get_blocking(&self, key: &[u8; 32]) -> Result<Option<Vec<u8>>, LlmError> {
        self.checked(|| {
            let txn = self.db.begin_read().map_err(|e| self.error(e))?;
            let table = match txn.open_table(RESPONSES) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(self.error(e)),
            };
            let value = table.get(key.as_slice()).map_err(|e| self.error(e))?;
            Ok(value.map(|v| v.value().to_vec()))
        })
    }

    /// Store an answer (blocking: a durable commit).
    pub fn put_blocking(&self, key: &[u8; 32], value: &[u8]) -> Result<(), LlmError> {
        self.checked(|| {
            let txn = self.db.begin_write().map_err(|e| self.error(e))?;
            {
                let mut table = txn.open_table(RESPONSES).map_err(|e| self.error(e))?;
                table
                    .insert(key.as_slice(), value)
                    .map_err(|e| self.error(e))?;
            }
            txn.commit().map_err(|e| self.error(e))
        })
    }

    /// [`Self::get_blocking`] off the async worker threads.
    pub async fn get(&self, key: [u8; 32]) -> Result<Option<Vec<u8>>, LlmError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.get_blocking(&key))
            .await
            .map_err(|e| self.error(e))?
    }

    /// [`Self::put_blocking`] off the async worker threads (the commit fsyncs).
    pub async fn put(&self, key: [u8; 32], value: Vec<u8>) -> Result<(), LlmError> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.put_blocking(&key, &value))
            .await
            .map_err(|e| self.error(e))?
    }

    /// Number of stored answers.
    pub fn len(&self) -> Result<u64, LlmError> {
        use redb::ReadableTableMetadata;
        self.checked(|| {
            let txn = self.db.begin_read().map_err(|e| self.error(e))?;
            match txn.open_table(RESPONSES) {
                Ok(t) => t.len().map_err(|e| self.error(e)),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
                Err(e) => Err(self.error(e)),
            }
        })
    }

    pub fn is_empty(&self) -> Result<bool, LlmError> {
        Ok(self.len()? == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
