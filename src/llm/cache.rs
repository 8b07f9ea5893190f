//! The persistent response cache: SHA-256 of the full canonical request -> the parsed
//! response, in a redb file whose path the caller gives.
//!
//! Why redb: pure Rust (no C toolchain, a few seconds to build), one file, ACID commits, so
//! a killed run loses at most the answer it was writing and a re-run never pays twice for
//! the rest. SQLite would need a C build; sled is unmaintained; a directory of JSON files
//! would mean one inode per call and no atomic batch.
//!
//! The key covers everything that changes an answer: the request kind (chat or embeddings)
//! and the exact JSON body sent (model, messages, tools, tool choice, every resolved
//! sampling parameter, `extra_body`), canonicalised (object keys sorted) and prefixed with a
//! format version. It never covers the base URL (replicas of one model share answers) nor
//! the API key, which is not part of the body. Only well-formed answers are stored.
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

/// The cache key of a request body of `kind` (`"chat"`, `"embeddings"`).
pub fn request_key(kind: &str, body: &Value) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(KEY_VERSION.as_bytes());
    h.update([0]);
    h.update(kind.as_bytes());
    h.update([0]);
    h.update(canonical_json(body).as_bytes());
    h.finalize().into()
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
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("path", &self.path)
            .finish()
    }
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Weak<Database>>> {
    static OPEN: std::sync::OnceLock<Mutex<HashMap<PathBuf, Weak<Database>>>> =
        std::sync::OnceLock::new();
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
        open.retain(|_, w| w.strong_count() > 0);
        if let Some(db) = open.get(&abs).and_then(Weak::upgrade) {
            return Ok(ResponseCache { db, path: abs });
        }
        let db = Arc::new(Database::create(&abs).map_err(|e| err(e.to_string()))?);
        open.insert(abs.clone(), Arc::downgrade(&db));
        Ok(ResponseCache { db, path: abs })
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

    /// The stored answer for `key`, if any (blocking; small and fast).
    pub fn get_blocking(&self, key: &[u8; 32]) -> Result<Option<Vec<u8>>, LlmError> {
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        let table = match txn.open_table(RESPONSES) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(self.error(e)),
        };
        let value = table.get(key.as_slice()).map_err(|e| self.error(e))?;
        Ok(value.map(|v| v.value().to_vec()))
    }

    /// Store an answer (blocking: a durable commit).
    pub fn put_blocking(&self, key: &[u8; 32], value: &[u8]) -> Result<(), LlmError> {
        let txn = self.db.begin_write().map_err(|e| self.error(e))?;
        {
            let mut table = txn.open_table(RESPONSES).map_err(|e| self.error(e))?;
            table
                .insert(key.as_slice(), value)
                .map_err(|e| self.error(e))?;
        }
        txn.commit().map_err(|e| self.error(e))
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
        let txn = self.db.begin_read().map_err(|e| self.error(e))?;
        match txn.open_table(RESPONSES) {
            Ok(t) => t.len().map_err(|e| self.error(e)),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
            Err(e) => Err(self.error(e)),
        }
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
        assert_eq!(request_key("chat", &a), request_key("chat", &b));
        assert_ne!(request_key("chat", &a), request_key("embeddings", &a));
        let c = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 2});
        assert_ne!(request_key("chat", &a), request_key("chat", &c));
    }

    #[test]
    fn store_and_reopen() {
        let dir = std::env::temp_dir().join(format!("tracer-llm-cache-{}", std::process::id()));
        let path = dir.join("nested").join("cache.redb");
        let _ = std::fs::remove_dir_all(&dir);
        let key = request_key("chat", &json!({"x": 1}));
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
