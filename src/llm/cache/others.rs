//! Other cache files a cache reads: those a shard is told of ([`read_also`]), indexed by
//! their keys when the cache opens and read on a miss, and the shards' files folded into
//! one by whoever holds the output alone ([`fold_into`]).

use super::guard::guarded;
use super::{RESPONSES, ResponseCache, registry};
use crate::llm::error::LlmError;
use redb::Database;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Another cache file a cache reads on a miss, with the keys it held when indexed.
#[derive(Debug)]
pub(super) struct OtherFile {
    pub(super) path: PathBuf,
    pub(super) keys: HashSet<[u8; 32]>,
}

type ReadPlans = Mutex<HashMap<PathBuf, Vec<PathBuf>>>;

pub(super) fn read_plans() -> &'static ReadPlans {
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

/// How long a read of another cache file waits for a process that holds it briefly (another
/// shard reading it the same way) before giving up on it.
const BUSY_WAIT: Duration = Duration::from_secs(60);

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
pub(super) fn keys_of(path: &Path, handle: Option<Arc<Database>>) -> HashSet<[u8; 32]> {
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
pub(super) fn answer_in(path: &Path, key: &[u8; 32]) -> Option<Vec<u8>> {
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
