//! Resumable work journals: an append-only JSON-lines file of finished items, whose first
//! line is a *key* — the named parts of everything that decides the items (config, inputs,
//! models, seed, code) — so a journal is only ever resumed by the run that wrote it.
//!
//! Reading is defensive: a partial last line (a kill mid-write) is cut off before appending
//! resumes; each item id counts once, whatever the file holds (two overlapping writers, or a
//! retried item, append the same id twice); items the caller does not consider done (e.g.
//! episodes lost to an endpoint outage) are dropped so they are retried. A journal whose key
//! differs is refused or replaced, as the caller asks, and the error or note names which
//! parts of the key changed.
//!
//! Every item line carries a checksum of the record it holds (`"_sum"`, the first 16 hex
//! digits of the SHA-256 of the record's JSON, appended as the object's last field): a line
//! edited or damaged after it was written does not verify, counts as not done (the item is
//! redone) and is reported, so it never flows into an artifact under a fresh manifest.
//!
//! Architecture invariant: a journal stores opaque records; it knows neither stages nor
//! episodes. Callers say what an item's id is and whether it is done.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The named parts of a journal's key (`"trials" -> "3"`, `"tasks" -> <sha256>`).
pub type JournalKey = BTreeMap<String, String>;

const HEADER_TAG: &str = "tracer_journal";

/// The field an item line ends with: its record's checksum.
const SUM_FIELD: &str = "_sum";

/// The checksum of a record's JSON text.
fn line_sum(record_json: &str) -> String {
    crate::artifact::sha256_hex(record_json.as_bytes())[..16].to_string()
}

/// A record's JSON with its checksum as the object's last field (records are objects).
fn with_sum(record_json: &str) -> String {
    match record_json.strip_suffix('}') {
        Some(body) if body.len() > 1 => {
            format!("{body},\"{SUM_FIELD}\":\"{}\"}}", line_sum(record_json))
        }
        Some(body) => format!("{body}\"{SUM_FIELD}\":\"{}\"}}", line_sum(record_json)),
        None => record_json.to_string(),
    }
}

/// The record JSON of an item line whose checksum verifies; `None` for a line without one
/// or whose content changed after it was written.
fn verified(line: &str) -> Option<String> {
    let tail_len = format!(",\"{SUM_FIELD}\":\"\"}}").len() + 16;
    let cut = line.len().checked_sub(tail_len)?;
    let (body, tail) = (line.get(..cut)?, line.get(cut..)?);
    let sum = tail
        .strip_prefix(&format!(",\"{SUM_FIELD}\":\""))?
        .strip_suffix("\"}")?;
    let record = format!("{body}}}");
    (line_sum(&record) == sum).then_some(record)
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}: journal of a different run ({changed}); {hint}")]
    Mismatch {
        path: String,
        changed: String,
        hint: String,
    },
}

/// What to do with a journal written under another key.
#[derive(Clone, Debug)]
pub enum OnMismatch {
    /// Fail; the hint says how to proceed (e.g. "rerun with --fresh").
    Refuse(String),
    /// Discard it and start an empty one.
    StartFresh,
}

/// An open journal, ready to append.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    /// The stage or command name failpoints see (`journal-appended@<label>`).
    label: String,
}

/// A journal as found on open.
pub struct Resumed<R> {
    pub journal: Journal,
    /// Finished items, first occurrence of each id, in file order.
    pub done: Vec<R>,
    /// Lines for an id already finished (overlapping writers, retries).
    pub duplicates: usize,
    /// Items present but not done; they will be redone.
    pub redo: usize,
    /// Set when a journal of another key was discarded: which parts changed.
    pub discarded: Option<String>,
    /// Item lines whose checksum did not verify (edited or damaged): their items are redone.
    pub damaged: usize,
}

fn describe_change(old: Option<&JournalKey>, new: &JournalKey) -> String {
    let Some(old) = old else {
        return "it has no key: written by an older tracer or not a journal".to_string();
    };
    let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let changed: Vec<&str> = names
        .into_iter()
        .filter(|n| old.get(*n) != new.get(*n))
        .map(|n| n.as_str())
        .collect();
    format!("{} changed", changed.join(", "))
}

impl Journal {
    /// Open (or create) the journal at `path` for `key`. `item_id` names an item; `is_done`
    /// says whether a recorded item counts as finished.
    pub fn open<R: DeserializeOwned>(
        path: &Path,
        key: &JournalKey,
        label: &str,
        on_mismatch: OnMismatch,
        item_id: impl Fn(&R) -> String,
        is_done: impl Fn(&R) -> bool,
    ) -> Result<Resumed<R>, JournalError> {
        let io = |e: std::io::Error| JournalError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = match std::fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io(e)),
        };
        // A kill mid-write leaves a partial last line: cut it so appends start clean.
        let complete = match text.rfind('\n') {
            Some(end) => &text[..=end],
            None => "",
        };
        let mut lines = complete.lines();
        let found_key: Option<JournalKey> = lines.next().and_then(|first| {
            let v: serde_json::Value = serde_json::from_str(first).ok()?;
            serde_json::from_value(v.get(HEADER_TAG)?.get("key")?.clone()).ok()
        });
        let mut discarded = None;
        let mut done = Vec::new();
        let (mut duplicates, mut redo, mut damaged) = (0, 0, 0);
        let fresh = text.is_empty() || found_key.as_ref() != Some(key);
        if fresh && !text.is_empty() {
            let changed = describe_change(found_key.as_ref(), key);
            match on_mismatch {
                OnMismatch::Refuse(hint) => {
                    return Err(JournalError::Mismatch {
                        path: path.display().to_string(),
                        changed,
                        hint,
                    });
                }
                OnMismatch::StartFresh => discarded = Some(changed),
            }
        }
        if !fresh {
            let mut seen = HashSet::new();
            for line in lines {
                let Some(rec) = verified(line).and_then(|r| serde_json::from_str::<R>(&r).ok())
                else {
                    damaged += 1;
                    continue;
                };
                let id = item_id(&rec);
                if seen.contains(&id) {
                    duplicates += 1;
                } else if is_done(&rec) {
                    seen.insert(id);
                    done.push(rec);
                } else {
                    redo += 1;
                }
            }
        }
        let file = if fresh {
            let mut file = File::create(path).map_err(io)?;
            let header = serde_json::json!({ HEADER_TAG: { "version": 1, "key": key } });
            writeln!(file, "{header}").map_err(io)?;
            file
        } else {
            let file = OpenOptions::new().write(true).open(path).map_err(io)?;
            file.set_len(complete.len() as u64).map_err(io)?;
            drop(file);
            OpenOptions::new().append(true).open(path).map_err(io)?
        };
        Ok(Resumed {
            journal: Journal {
                path: path.to_path_buf(),
                file,
                label: label.to_string(),
            },
            done,
            duplicates,
            redo,
            discarded,
            damaged,
        })
    }

    /// Append one finished item (one line, written before the call returns).
    pub fn append<R: Serialize>(&mut self, rec: &R) -> Result<(), JournalError> {
        let json = serde_json::to_string(rec).map_err(|e| JournalError::Io {
            path: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        let mut line = with_sum(&json);
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| JournalError::Io {
                path: self.path.display().to_string(),
                message: e.to_string(),
            })?;
        super::failpoint::hit("journal-appended", &self.label);
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Item {
        id: u32,
        ok: bool,
    }

    fn key(trials: &str) -> JournalKey {
        [("trials".to_string(), trials.to_string())].into()
    }

    fn open(path: &Path, k: &JournalKey, on: OnMismatch) -> Result<Resumed<Item>, JournalError> {
        Journal::open(path, k, "test", on, |i: &Item| i.id.to_string(), |i| i.ok)
    }

    #[test]
    fn resumes_dedups_redoes_and_refuses_another_key() {
        let dir = std::env::temp_dir().join(format!("tracer-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("j.jsonl");
        let mut r = open(&path, &key("3"), OnMismatch::StartFresh).unwrap();
        for item in [(1, true), (2, false), (1, true), (3, true)] {
            r.journal
                .append(&Item {
                    id: item.0,
                    ok: item.1,
                })
                .unwrap();
        }
        drop(r);
        // A kill mid-write: a partial last line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"id\": 4, \"o").unwrap();
        drop(f);
        let r = open(&path, &key("3"), OnMismatch::Refuse("hint".into())).unwrap();
        let ids: Vec<u32> = r.done.iter().map(|i| i.id).collect();
        assert_eq!(ids, [1, 3]);
        assert_eq!((r.duplicates, r.redo), (1, 1));
        drop(r);
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));

        let err = open(
            &path,
            &key("1"),
            OnMismatch::Refuse("rerun with --fresh".into()),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(
            err.contains("(trials changed); rerun with --fresh"),
            "{err}"
        );
        let r = open(&path, &key("1"), OnMismatch::StartFresh).unwrap();
        assert!(r.done.is_empty());
        assert_eq!(r.discarded.as_deref(), Some("trials changed"));
        drop(r);

        // An item line edited after it was written (or with no checksum) is not trusted:
        // its item is redone.
        let mut r = open(&path, &key("1"), OnMismatch::StartFresh).unwrap();
        for (id, ok) in [(1, true), (2, false)] {
            r.journal.append(&Item { id, ok }).unwrap();
        }
        drop(r);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("{\"id\":2,\"ok\":false,\"_sum\":\""),
            "{text}"
        );
        let edited = text.replacen("{\"id\":2,\"ok\":false", "{\"id\":2,\"ok\":true", 1);
        std::fs::write(&path, format!("{edited}{{\"id\":3,\"ok\":true}}\n")).unwrap();
        let r = open(&path, &key("1"), OnMismatch::Refuse("h".into())).unwrap();
        let ids: Vec<u32> = r.done.iter().map(|i| i.id).collect();
        assert_eq!((ids, r.damaged), (vec![1], 2));
        drop(r);

        std::fs::write(&path, "{\"id\": 1, \"ok\": true}\n").unwrap();
        let err = open(&path, &key("1"), OnMismatch::Refuse("h".into()))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("has no key"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
