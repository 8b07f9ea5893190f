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
//! Architecture invariant: the cache stores bytes; it does not know the response types.
//! redb allows one open handle per file per process, so handles are shared through a small
//! registry keyed by the file's absolute path (roles may share one cache file).

use redb::{Database, TableDefinition};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::error::LlmError;

mod group;
use group::{Entry, Group};

const RESPONSES: TableDefinition<&[u8], &[u8]> = TableDefinition::new("responses");

/// Bump when the stored value format or the key derivation changes.
const KEY_VERSION: &str = "tracer-llm-cache/v1";

/// The cache key of a request body of `kind` (`"chat"`, `"embeddings"`) in `namespace`.
/// The body's canonical JSON is streamed into the hash, never built as a string.
pub fn request_key(kind: &str, namespace: &str, body: &Value) -> [u8; 32] {
    let mut h = key_hasher(kind, namespace);
    // Writing into a hasher cannot fail, and a `Value` always serialises.
    let _ = serde_json::to_writer(HashWriter(&mut h), &Canonical(body));
    h.finalize().into()
}

/// [`request_key`] of a body already written as canonical JSON text.
pub fn text_key(kind: &str, namespace: &str, canonical: &str) -> [u8; 32] {
    let mut h = key_hasher(kind, namespace);
    h.update(canonical.as_bytes());
    h.finalize().into()
}

fn key_hasher(kind: &str, namespace: &str) -> Sha256 {
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
    h
}

/// `io::Write` into a running SHA-256.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A JSON value serialised with every object's keys in sorted order (no copy of the tree).
pub(crate) struct Canonical<'a>(pub &'a Value);

impl serde::Serialize for Canonical<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                // With serde_json's default (sorted) maps this is already in order; sorting
                // keeps the key stable even if some dependency turns on `preserve_order`.
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, &Canonical(v))?;
                }
                map.end()
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&Canonical(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
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

/// JSON text with every object's keys sorted (what [`request_key`] hashes, as a string: the
/// tests compare written bodies with it; the key itself is streamed).
#[cfg(test)]
pub(crate) fn canonical_json(v: &Value) -> String {
    serde_json::to_string(&Canonical(v)).unwrap_or_default()
}

/// Another cache file a cache reads on a miss, with the keys it held when indexed.
#[derive(Debug)]
struct OtherFile {
    path: PathBuf,
    keys: HashSet<[u8; 32]>,
}

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

type ReadPlans = Mutex<HashMap<PathBuf, Vec<PathBuf>>>;

fn read_plans() -> &'static ReadPlans {
    static PLANS: std::sync::OnceLock<ReadPlans> = std::sync::OnceLock::new();
    PLANS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Have the cache file at `primary`, when this process next opens it, also read the
/// answers stored in `others` (files that may be missing; none may be another process's
/// live cache, which redb would refuse to open). A shard run calls it before its roles open
/// their cache, naming the output root's cache and earlier shards' files.
pub fn read_also(primary: &Path, others: Vec<PathBuf>) {
    let Ok(abs) = std::path::absolute(primary) else {
        return;
    };
    let others = others
        .into_iter()
        .filter_map(|p| std::path::absolute(p).ok())
        .filter(|p| *p != abs)
        .collect();
    read_plans()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(abs, others);
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

/// How long a read of another cache file waits for a process that holds it briefly (another
/// shard reading it the same way) before giving up on it.
const BUSY_WAIT: Duration = Duration::from_secs(60);

/// How long opening a cache for writing waits for another process reading it.
const PRIMARY_BUSY_WAIT: Duration = Duration::from_secs(10);

/// Run `read` on the database of another cache file: this process's open handle if it has
/// one, else the file opened for the call (redb locks a file to one process; another shard
/// reading it holds it for milliseconds, so a busy file is retried). `Ok(None)`: no file.
fn with_other_file<T>(
    path: &Path,
    open_here: Option<Arc<Database>>,
    read: impl Fn(&Database) -> Result<T, String>,
) -> Result<Option<T>, String> {
    if let Some(db) = open_here {
        return guarded(|| read(&db)).and_then(|r| r).map(Some);
    }
    if !path.exists() {
        return Ok(None);
    }
    let deadline = Instant::now() + BUSY_WAIT;
    let mut pause = Duration::from_millis(5);
    loop {
        match guarded(|| Database::open(path)) {
            Ok(Ok(db)) => return guarded(|| read(&db)).and_then(|r| r).map(Some),
            Ok(Err(redb::DatabaseError::DatabaseAlreadyOpen)) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Ok(Err(e)) => return Err(e.to_string()),
            Err(panic) => return Err(format!("redb panicked: {panic}")),
        }
    }
}

/// This process's open handle on the cache file at `path`, if any.
fn open_here(path: &Path) -> Option<Arc<Database>> {
    registry()
        .lock()
        .ok()
        .and_then(|open| open.get(path).and_then(|(w, ..)| w.upgrade()))
}

/// The keys stored in the cache file at `path` (none when it is missing or unreadable: an
/// unreadable file only means its answers are asked again).
fn keys_of(path: &Path, handle: Option<Arc<Database>>) -> HashSet<[u8; 32]> {
    use redb::{ReadableTable, ReadableTableMetadata};
    let read = |db: &Database| -> Result<HashSet<[u8; 32]>, String> {
        let txn = db.begin_read().map_err(|e| e.to_string())?;
        let table = match txn.open_table(RESPONSES) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(HashSet::new()),
            Err(e) => return Err(e.to_string()),
        };
        let mut keys = HashSet::with_capacity(table.len().unwrap_or(0) as usize);
        for entry in table.iter().map_err(|e| e.to_string())? {
            let (k, _) = entry.map_err(|e| e.to_string())?;
            if let Ok(key) = <[u8; 32]>::try_from(k.value()) {
                keys.insert(key);
            }
        }
        Ok(keys)
    };
    with_other_file(path, handle, read)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// The answer stored under `key` in another cache file, if it can be read.
fn answer_in(path: &Path, key: &[u8; 32]) -> Option<Vec<u8>> {
    let read = |db: &Database| -> Result<Option<Vec<u8>>, String> {
        let txn = db.begin_read().map_err(|e| e.to_string())?;
        let table = txn.open_table(RESPONSES).map_err(|e| e.to_string())?;
        let value = table.get(key.as_slice()).map_err(|e| e.to_string())?;
        Ok(value.map(|v| v.value().to_vec()))
    };
    with_other_file(path, open_here(path), read)
        .ok()
        .flatten()
        .flatten()
}

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

/// Copy into the cache at `target` every answer of the cache files `sources` it lacks, then
/// delete each source folded: one file holds them all. Call it holding the output alone (no
/// other process may have a source open). A source that cannot be read (damaged) is left in
/// place with a note; the result is one line per file, to log.
pub fn fold_into(target: &Path, sources: &[PathBuf]) -> Result<Vec<String>, LlmError> {
    use redb::ReadableTable;
    let sources: Vec<&PathBuf> = sources.iter().filter(|s| s.exists()).collect();
    if sources.is_empty() {
        return Ok(Vec::new());
    }
    let cache = ResponseCache::open(target)?;
    let mut notes = Vec::new();
    for source in sources {
        let copy = |db: &Database| -> Result<u64, String> {
            let txn = db.begin_read().map_err(|e| e.to_string())?;
            let table = match txn.open_table(RESPONSES) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(0),
                Err(e) => return Err(e.to_string()),
            };
            let mut copied = 0;
            let mut batch: Vec<([u8; 32], Vec<u8>)> = Vec::new();
            let flush = |batch: &mut Vec<([u8; 32], Vec<u8>)>| -> Result<u64, String> {
                let n = cache.put_missing(batch).map_err(|e| e.to_string())?;
                batch.clear();
                Ok(n)
            };
            for entry in table.iter().map_err(|e| e.to_string())? {
                let (k, v) = entry.map_err(|e| e.to_string())?;
                if let Ok(key) = <[u8; 32]>::try_from(k.value()) {
                    batch.push((key, v.value().to_vec()));
                }
                if batch.len() >= 1000 {
                    copied += flush(&mut batch)?;
                }
            }
            copied += flush(&mut batch)?;
            Ok(copied)
        };
        match with_other_file(source, open_here(source), copy) {
            Ok(None) => {}
            Ok(Some(copied)) => {
                std::fs::remove_file(source).map_err(|e| LlmError::Cache {
                    path: source.display().to_string(),
                    message: format!("cannot remove after folding it: {e}"),
                })?;
                notes.push(format!(
                    "folded {copied} new answer(s) of {} into {}",
                    source.display(),
                    cache.path().display()
                ));
            }
            Err(why) => notes.push(format!(
                "{}: not folded into {} ({why}); its answers will be asked again",
                source.display(),
                cache.path().display()
            )),
        }
    }
    Ok(notes)
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
    fn the_streamed_key_is_the_key_of_the_sorted_text() {
        // The derivation before keys were streamed: a sorted copy of the tree, as text.
        fn sorted(v: &Value) -> Value {
            match v {
                Value::Object(m) => {
                    Value::Object(m.iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
                }
                Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
                other => other.clone(),
            }
        }
        let body = json!({
            "model": "m", "temperature": 0.7, "seed": 18446744073709551615u64,
            "messages": [{"role": "user", "content": "caf\u{e9} \"quoted\"\n\t\u{1}"},
                         {"role": "tool", "content": null, "tool_call_id": "c1"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters":
                {"type": "object", "properties": {"z": {}, "a": {"type": "number"}}}}}],
            "extra": [1.5e-7, -0.0, true, [], {}]
        });
        let mut h = Sha256::new();
        h.update(KEY_VERSION.as_bytes());
        h.update([0]);
        h.update(b"chat");
        h.update([0]);
        h.update(sorted(&body).to_string().as_bytes());
        let old: [u8; 32] = h.finalize().into();
        assert_eq!(request_key("chat", "", &body), old);
        assert_eq!(canonical_json(&body), sorted(&body).to_string());
    }

    #[test]
    fn an_answer_put_behind_is_read_at_once_and_durable_after_a_sync() {
        let dir = std::env::temp_dir().join(format!("tracer-llm-behind-{}", std::process::id()));
        let path = dir.join("cache.redb");
        let _ = std::fs::remove_dir_all(&dir);
        let cache = ResponseCache::open(&path).unwrap();
        for i in 0..50u8 {
            cache.put_behind([i; 32], vec![i; 3]);
            assert_eq!(cache.get_blocking(&[i; 32]).unwrap(), Some(vec![i; 3]));
        }
        cache.sync_blocking().unwrap();
        assert_eq!(cache.len().unwrap(), 50);
        drop(cache);
        flush_all();
        let reopened = ResponseCache::open(&path).unwrap();
        assert_eq!(reopened.get_blocking(&[49; 32]).unwrap(), Some(vec![49; 3]));
        assert_eq!(reopened.len().unwrap(), 50);
        drop(reopened);
        let _ = std::fs::remove_dir_all(&dir);
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
