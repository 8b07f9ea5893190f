//! The single-writer lock of an output directory: an exclusive OS file lock (`flock` on
//! Unix, `LockFileEx` on Windows, through `std::fs::File::try_lock`) on `<dir>/.lock`,
//! held for the life of a writing command.
//!
//! Why a kernel lock rather than a pid file: the lock dies with its process, so a run killed
//! with `kill -9` never leaves a stale lock behind, and there is no pid-reuse guesswork. The
//! file itself stays (deleting it would let two processes lock two different inodes of the
//! same name); while held it names the holder (`pid` and command line) so a refused writer
//! can say who is in the way, and it is emptied again on a clean release so finished output
//! trees stay byte-identical.
//!
//! Shard runs (`tracer run <stage> --shard i/N`) take the same file *shared*, plus an
//! exclusive lock on their own shard's file ([`OutputLock::acquire_file`]). What the root
//! lock protects is the shared state of the output tree: stage directories and their swaps,
//! the crash recovery that removes other runs' leftovers, the response cache (redb allows one
//! writer per file), journals. A shard touches none of that: it reads fresh upstream outputs
//! and writes only its own part directory, journal and cache file. So shards share the root
//! lock with each other (N shards of a Slurm array run at once, never serialised) while an
//! ordinary writer, which holds the root lock exclusively, still excludes all of them, and
//! two processes claiming the same shard exclude each other through the shard's own lock.
//! Shared holders write nothing into the root file (they are many); each names itself in
//! its shard lock file instead.
//!
//! A lock file deleted (or replaced) under a running holder would let a second writer lock
//! a new inode of the same name. That cannot be prevented, but it is detected: every lock
//! this process holds is remembered with the identity (device, inode) of the file it
//! locked, and [`verify_held`] — which the runner calls before every swap into place —
//! fails when the file at the path is no longer that one, so the run stops before it
//! publishes anything.
//!
//! Architecture invariant: this module knows nothing of stages or commands; callers say
//! which directory they write and how to describe themselves.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub const LOCK_FILE: &str = ".lock";

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "{dir}: in use by another tracer ({holder}); wait for it to finish or stop it, then rerun"
    )]
    Held { dir: String, holder: String },
    #[error("{path}: cannot lock: {message}")]
    Io { path: String, message: String },
    #[error(
        "{path}: the lock file was deleted or replaced while this run held it (another writer may have started); stopped before writing anything into place: rerun"
    )]
    Lost { path: String },
}

/// The identity of a file: (device, inode) on Unix; nothing to compare elsewhere.
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

type Held = std::sync::Mutex<Vec<(PathBuf, Option<(u64, u64)>)>>;

/// The locks this process holds: path and the identity of the file locked.
fn held() -> &'static Held {
    static HELD: std::sync::OnceLock<Held> = std::sync::OnceLock::new();
    HELD.get_or_init(|| std::sync::Mutex::new(Vec::new()))
}

/// Check that every lock this process holds over `target` (a lock in a directory that
/// contains it) is still on the file at its path: `Err` names the first whose file was
/// deleted or replaced.
pub fn verify_held(target: &Path) -> Result<(), LockError> {
    let held = held().lock().unwrap_or_else(|p| p.into_inner());
    for (path, id) in held.iter() {
        let Some(id) = id else { continue };
        if !path.parent().is_some_and(|dir| target.starts_with(dir)) {
            continue;
        }
        let now = std::fs::symlink_metadata(path)
            .ok()
            .and_then(|m| identity(&m));
        if now.as_ref() != Some(id) {
            return Err(LockError::Lost {
                path: path.display().to_string(),
            });
        }
    }
    Ok(())
}

/// An exclusive lock on an output directory; released when dropped (or when the process
/// dies, however it dies).
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
    /// The identity of the file locked (see [`verify_held`]).
    id: Option<(u64, u64)>,
    /// Exclusive holders own the file's text (their name) and empty it on release.
    exclusive: bool,
}

impl OutputLock {
    /// Lock `dir` (created if missing) exclusively for a writer described by `command`.
    pub fn acquire(dir: &Path, command: &str) -> Result<OutputLock, LockError> {
        Self::lock_file(&dir.join(LOCK_FILE), dir, command, true)
    }

    /// Share the lock of `dir` with other shard runs: refused while an exclusive writer
    /// holds it, and an exclusive writer is refused while any shared holder lives.
    pub fn acquire_shared(dir: &Path, command: &str) -> Result<OutputLock, LockError> {
        Self::lock_file(&dir.join(LOCK_FILE), dir, command, false)
    }

    /// Lock the file at `path` exclusively (one process per shard).
    pub fn acquire_file(path: &Path, command: &str) -> Result<OutputLock, LockError> {
        Self::lock_file(path, path, command, true)
    }

    fn lock_file(
        path: &Path,
        what: &Path,
        command: &str,
        exclusive: bool,
    ) -> Result<OutputLock, LockError> {
        let io = |e: std::io::Error| LockError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let attempt = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match attempt {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.split_whitespace().collect::<Vec<_>>().join(" ");
                return Err(LockError::Held {
                    dir: what.display().to_string(),
                    holder: if holder.is_empty() {
                        // Shared holders leave the file empty.
                        "shard runs (`tracer run <stage> --shard i/N`; `tracer status` \
                         lists their parts), or a process that is just starting"
                            .to_string()
                    } else {
                        holder
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        if exclusive {
            file.set_len(0).map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            let line = format!("pid {}: {}\n", std::process::id(), command.trim());
            file.write_all(line.as_bytes()).map_err(io)?;
        }
        let id = file.metadata().ok().and_then(|m| identity(&m));
        held()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((path.to_path_buf(), id));
        Ok(OutputLock {
            file,
            path: path.to_path_buf(),
            id,
            exclusive,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Forget the holder before the kernel lock goes with the file handle.
        if self.exclusive {
            let _ = self.file.set_len(0);
        }
        let mut held = held().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = held
            .iter()
            .position(|(p, id)| *p == self.path && *id == self.id)
        {
            held.remove(i);
        }
    }
}

/// How a command describes itself in the lock file: `tracer` and its arguments.
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("tracer {}", args.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_released_on_drop() {
        let dir = std::env::temp_dir().join(format!("tracer-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = OutputLock::acquire(&dir, "tracer run traces").unwrap();
        let err = OutputLock::acquire(&dir, "tracer run db")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("pid {}: tracer run traces", std::process::id())),
            "{err}"
        );
        drop(first);
        assert_eq!(std::fs::read(dir.join(LOCK_FILE)).unwrap(), b"");
        let again = OutputLock::acquire(&dir, "tracer run db");
        assert!(again.is_ok());
        drop(again);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lock_file_deleted_or_replaced_under_its_holder_is_detected() {
        let dir = std::env::temp_dir().join(format!("tracer-lock-lost-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let target = dir.join("traces").join("domain=airline");
        let lock = OutputLock::acquire(&dir, "tracer run traces").unwrap();
        verify_held(&target).unwrap();
        std::fs::remove_file(dir.join(LOCK_FILE)).unwrap();
        let err = verify_held(&target).unwrap_err().to_string();
        assert!(err.contains(".lock: the lock file was deleted"), "{err}");
        // Locks over other directories are not concerned.
        verify_held(&std::env::temp_dir().join("elsewhere")).unwrap();
        // A new file of the same name (what a second writer would lock) is not ours either.
        let other = OutputLock::acquire(&dir, "tracer run db").unwrap();
        drop(other);
        assert!(verify_held(&target).is_err());
        drop(lock);
        verify_held(&target).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn shared_holders_coexist_and_exclude_an_exclusive_writer_both_ways() {
        let dir = std::env::temp_dir().join(format!("tracer-lock-shared-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a = OutputLock::acquire_shared(&dir, "tracer run rollouts --shard 0/2").unwrap();
        let b = OutputLock::acquire_shared(&dir, "tracer run rollouts --shard 1/2").unwrap();
        let err = OutputLock::acquire(&dir, "tracer run db")
            .unwrap_err()
            .to_string();
        assert!(err.contains("shard runs"), "{err}");
        drop((a, b));
        let writer = OutputLock::acquire(&dir, "tracer run db").unwrap();
        let err = OutputLock::acquire_shared(&dir, "tracer run tasks --shard 0/2")
            .unwrap_err()
            .to_string();
        assert!(err.contains("tracer run db"), "{err}");
        drop(writer);
        let shard = dir.join("shard.lock");
        let one = OutputLock::acquire_file(&shard, "tracer run tasks --shard 0/2").unwrap();
        let err = OutputLock::acquire_file(&shard, "tracer run tasks --shard 0/2")
            .unwrap_err()
            .to_string();
        assert!(err.contains("--shard 0/2"), "{err}");
        drop(one);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
