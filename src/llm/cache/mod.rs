//! The persistent response cache: SHA-256 of the full canonical request -> the parsed
//! response, in a redb file whose path the caller gives.
//!
//! Why redb: pure Rust (no C toolchain, a few seconds to build), one file, ACID commits, so
//! a killed run loses at most the answers not yet committed and a re-run never pays twice
//! for the rest. Answers are committed in groups behind the calls that store them
//! ([`group`]); the harness waits for them before it writes an episode to its journal, so a
//! finished episode's answers are never among those lost. SQLite would need a C build; sled is unmaintained; a directory of JSON files
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
//! One cache for every process: a shard writes its own file (redb takes one writer per
//! file, and shards run side by side), but it *reads* other files too ([`read_also`]): on
//! a miss it looks the key up in the files it was told of (an index of their keys is read
//! once when it opens) and copies a found answer into its own file. Whoever holds the
//! output alone folds the shards' files into one ([`fold_into`]). So an answered request
//! is never asked again, whichever shard count or process asks next.
//!
//! Creation is atomic: a new file is made under a temporary name and renamed into place
//! once redb has written its header, so a failed creation (disk full) leaves no file rather
//! than a half-written one every later run refuses.
//!
//! Here are the handle and its file; the key is `key.rs`, the panic guard and the
//! damaged-file error `guard.rs`, reading and folding other files `others.rs`, the group
//! commit `group.rs`.
//!
//! Architecture invariant: the cache stores bytes; it does not know the response types.
//! redb allows one open handle per file per process, so handles are shared through a small
//! registry keyed by the file's absolute path (roles may share one cache file).

use redb::{Database, TableDefinition};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::error::LlmError;

mod group;
mod guard;
mod key;
mod others;
use group::{Entry, Group};
use guard::{corrupted, guarded, is_corruption};
use others::{OtherFile, answer_in, keys_of, read_plans};

pub(crate) use key::Canonical;
#[cfg(test)]
pub(crate) use key::canonical_json;
pub use key::{request_key, text_key};
pub use others::{fold_into, read_also};

const RESPONSES: TableDefinition<&[u8], &[u8]> = TableDefinition::new("responses");

/// A handle on one cache file.
#[derive(Clone)]
pub struct ResponseCache {
    db: Arc<Database>,
    path: PathBuf,
    /// Set once the file showed damage: every later call fails fast with this error.
    damaged: Arc<Mutex<Option<LlmError>>>,
    /// Files read on a miss (see [`read_also`]).
    others: Arc<Vec<OtherFile>>,
    /// Shared by every handle on the file.
    group: Arc<Group>,
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("path", &self.path)
            .finish()
    }
}

type Damage = Arc<Mutex<Option<LlmError>>>;
type OpenFiles = Mutex<HashMap<PathBuf, (Weak<Database>, Damage, Arc<Vec<OtherFile>>, Arc<Group>)>>;

fn registry() -> &'static OpenFiles {
    static OPEN: std::sync::OnceLock<OpenFiles> = std::sync::OnceLock::new();
    OPEN.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Wait until every answer this process stored is durable, in every cache file it has
/// open (the binary calls it before it exits: a committer thread still writing would
/// otherwise be cut off with the process).
pub fn flush_all() {
    let groups: Vec<Arc<Group>> = registry()
        .lock()
        .map(|open| open.values().map(|(.., g)| Arc::clone(g)).collect())
        .unwrap_or_default();
    for group in groups {
        let _ = group.settle();
    }
}

/// How long opening a cache for writing waits for another process reading it.
const PRIMARY_BUSY_WAIT: Duration = Duration::from_secs(10);

/// Create a new cache file atomically: redb writes its header into a temporary sibling,
/// which is renamed into place only when that succeeded.
fn create_new(path: &Path) -> Result<(), String> {
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default(),
        std::process::id()
    ));
    let made = match guarded(|| Database::create(&tmp)) {
        Ok(Ok(db)) => {
            drop(db);
            std::fs::File::open(&tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| e.to_string())
        }
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(format!("redb panicked: {panic}")),
    };
    let made = made.and_then(|()| std::fs::rename(&tmp, path).map_err(|e| e.to_string()));
    if made.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    made
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
        open.retain(|_, (w, ..)| w.strong_count() > 0);
        if let Some((db, damaged, others, group)) = open.get(&abs).and_then(|(w, d, o, g)| {
            Some((w.upgrade()?, Arc::clone(d), Arc::clone(o), Arc::clone(g)))
        }) {
            return Ok(ResponseCache {
                db,
                path: abs,
                damaged,
                others,
                group,
            });
        }
        if !abs.exists() {
            create_new(&abs).map_err(|e| err(format!("cannot create: {e}")))?;
        }
        // Another process may hold the file for a moment (a shard reading it, see
        // `read_also`): wait for it briefly rather than fail.
        let deadline = Instant::now() + PRIMARY_BUSY_WAIT;
        let opened = loop {
            match guarded(|| Database::create(&abs)) {
                Ok(Err(redb::DatabaseError::DatabaseAlreadyOpen)) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => break other,
            }
        };
        let db = match opened {
            Ok(Ok(db)) => Arc::new(db),
            Ok(Err(e)) if is_corruption(&e) => return Err(corrupted(&abs, &e.to_string())),
            Ok(Err(e)) => return Err(err(e.to_string())),
            Err(panic) => return Err(corrupted(&abs, &format!("redb panicked: {panic}"))),
        };
        let damaged: Damage = Arc::new(Mutex::new(None));
        let plan = read_plans()
            .lock()
            .ok()
            .and_then(|plans| plans.get(&abs).cloned())
            .unwrap_or_default();
        let others: Arc<Vec<OtherFile>> = Arc::new(
            plan.into_iter()
                .map(|path| {
                    let handle = open.get(&path).and_then(|(w, ..)| w.upgrade());
                    OtherFile {
                        keys: keys_of(&path, handle),
                        path,
                    }
                })
                .filter(|o| !o.keys.is_empty())
                .collect(),
        );
        let group = Arc::new(Group::default());
        open.insert(
            abs.clone(),
            (
                Arc::downgrade(&db),
                Arc::clone(&damaged),
                Arc::clone(&others),
                Arc::clone(&group),
            ),
        );
        Ok(ResponseCache {
            db,
            path: abs,
            damaged,
            others,
            group,
        })
    }

    /// A cache held in memory only, for the life of its handles: no file, nothing shared
    /// with other handles or processes. For endpoints a server's clients name (`tracer
    /// serve`'s `/episode`), whose answers must neither be served to anyone else nor
    /// outlive the call.
    pub fn in_memory() -> Result<ResponseCache, LlmError> {
        let path = PathBuf::from("(in memory)");
        let db = guarded(|| {
            Database::builder().create_with_backend(redb::backends::InMemoryBackend::new())
        });
        let db = match db {
            Ok(Ok(db)) => db,
            Ok(Err(e)) => {
                return Err(LlmError::Cache {
                    path: path.display().to_string(),
                    message: e.to_string(),
                });
            }
            Err(panic) => {
                return Err(LlmError::Cache {
                    path: path.display().to_string(),
                    message: format!("redb panicked: {panic}"),
                });
            }
        };
        Ok(ResponseCache {
            db: Arc::new(db),
            path,
            damaged: Arc::new(Mutex::new(None)),
            others: Arc::new(Vec::new()),
            group: Arc::new(Group::default()),
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

    /// The stored answer for `key`, if any (blocking; small and fast): one still queued for
    /// its commit, else this file's, else
    /// that of another file it reads ([`read_also`]), copied into this one.
    pub fn get_blocking(&self, key: &[u8; 32]) -> Result<Option<Vec<u8>>, LlmError> {
        if let Some(found) = self.group.pending(key) {
            return Ok(Some(found));
        }
        if let Some(found) = self.get_own(key)? {
            return Ok(Some(found));
        }
        for other in self.others.iter().filter(|o| o.keys.contains(key)) {
            if let Some(found) = answer_in(&other.path, key) {
                self.put_blocking(key, &found)?;
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    fn get_own(&self, key: &[u8; 32]) -> Result<Option<Vec<u8>>, LlmError> {
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

    /// Store an answer without waiting for it to be durable: it is queued and committed
    /// together with the answers stored around the same time ([`group`]); until then it is
    /// read back from the queue. [`Self::sync`] waits for it.
    pub fn put_behind(&self, key: [u8; 32], value: Vec<u8>) {
        let (_, start) = self.group.queue((key, value));
        if start {
            self.start_committer();
        }
    }

    /// Store an answer (blocking): returns once it is durable.
    pub fn put_blocking(&self, key: &[u8; 32], value: &[u8]) -> Result<(), LlmError> {
        let (batch, start) = self.group.queue((*key, value.to_vec()));
        if start {
            self.start_committer();
        }
        self.group.wait_for(batch)
    }

    /// Run the committer on a thread of its own (it ends when the queue is empty); where no
    /// thread can be started, here.
    fn start_committer(&self) {
        let this = self.clone();
        let spawned = std::thread::Builder::new()
            .name("tracer-cache".into())
            .spawn(move || this.group.commit_queued(|batch| this.commit_all(batch)));
        if spawned.is_err() {
            self.group.commit_queued(|batch| self.commit_all(batch));
        }
    }

    /// Wait until every answer stored so far is durable; the first failed commit since the
    /// last sync, if any.
    pub fn sync_blocking(&self) -> Result<(), LlmError> {
        self.group.settle()
    }

    /// [`Self::sync_blocking`] off the async worker threads (it waits for an fsync); at once
    /// when nothing is pending.
    pub async fn sync(&self) -> Result<(), LlmError> {
        if self.group.is_settled() {
            return Ok(());
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.sync_blocking())
            .await
            .map_err(|e| self.error(e))?
    }

    /// One durable commit of `entries`.
    fn commit_all(&self, entries: &[Entry]) -> Result<(), LlmError> {
        self.checked(|| {
            let txn = self.db.begin_write().map_err(|e| self.error(e))?;
            {
                let mut table = txn.open_table(RESPONSES).map_err(|e| self.error(e))?;
                for (key, value) in entries {
                    table
                        .insert(key.as_slice(), value.as_slice())
                        .map_err(|e| self.error(e))?;
                }
            }
            txn.commit().map_err(|e| self.error(e))
        })
    }

    /// Store the answers of `entries` this file lacks, in one commit; how many were new.
    fn put_missing(&self, entries: &[([u8; 32], Vec<u8>)]) -> Result<u64, LlmError> {
        use redb::ReadableTable;
        if entries.is_empty() {
            return Ok(0);
        }
        self.checked(|| {
            let txn = self.db.begin_write().map_err(|e| self.error(e))?;
            let mut new = 0;
            {
                let mut table = txn.open_table(RESPONSES).map_err(|e| self.error(e))?;
                for (key, value) in entries {
                    if table
                        .get(key.as_slice())
                        .map_err(|e| self.error(e))?
                        .is_none()
                    {
                        table
                            .insert(key.as_slice(), value.as_slice())
                            .map_err(|e| self.error(e))?;
                        new += 1;
                    }
                }
            }
            txn.commit().map_err(|e| self.error(e))?;
            Ok(new)
        })
    }

    /// [`Self::get_blocking`]: here when only this file is read (a read transaction never
    /// waits for a writer, and the pages are in memory or the page cache), off the async
    /// worker threads when other files may be opened and waited for.
    pub async fn get(&self, key: [u8; 32]) -> Result<Option<Vec<u8>>, LlmError> {
        if self.others.is_empty() {
            return self.get_blocking(&key);
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.get_blocking(&key))
            .await
            .map_err(|e| self.error(e))?
    }

    /// Number of stored answers (once those queued are committed).
    pub fn len(&self) -> Result<u64, LlmError> {
        use redb::ReadableTableMetadata;
        self.group.drain();
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
mod tests;
