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
}

/// An exclusive lock on an output directory; released when dropped (or when the process
/// dies, however it dies).
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
}

impl OutputLock {
    /// Lock `dir` (created if missing) for a writer described by `command`.
    pub fn acquire(dir: &Path, command: &str) -> Result<OutputLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |e: std::io::Error| LockError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.split_whitespace().collect::<Vec<_>>().join(" ");
                return Err(LockError::Held {
                    dir: dir.display().to_string(),
                    holder: if holder.is_empty() {
                        "a process that is just starting".to_string()
                    } else {
                        holder
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let line = format!("pid {}: {}\n", std::process::id(), command.trim());
        file.write_all(line.as_bytes()).map_err(io)?;
        Ok(OutputLock { file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Forget the holder before the kernel lock goes with the file handle.
        let _ = self.file.set_len(0);
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
}
