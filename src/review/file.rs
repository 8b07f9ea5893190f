//! The decisions files on disk: JSON lines read with their line numbers named in every
//! error, and appended without ever damaging what is there.
//!
//! An append takes an exclusive lock on the file (other processes writing the same file
//! wait), reads what is there and checks every line first: a file that no longer reads
//! (hand-edited, half-merged) is refused with its line named and nothing is written, so
//! a broken file is never made worse. A last line without its newline (an editor or a merge
//! left it so) is terminated before the new lines, instead of being glued to them. The new
//! lines go out as one write, so a reader never sees half of them.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::{Read, Write};
use std::path::Path;

/// Parse a JSON-lines text: each non-blank line as `T`, checked by `check`; errors name
/// `path` and the line.
pub(crate) fn parse_lines<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: T =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        check(&parsed).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        out.push(parsed);
    }
    Ok(out)
}

/// Read a JSON-lines file; a missing file has no lines.
pub(crate) fn read_lines<T: DeserializeOwned>(
    path: &Path,
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<Vec<T>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_lines(path, &text, check),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Append `lines` to a JSON-lines file as one write, creating the file and its directory
/// when missing. The file's present lines must read as `T` and pass `check` (else nothing
/// is written and the error names the line); a last line without a newline is terminated.
pub(crate) fn append_lines<T: Serialize + DeserializeOwned>(
    path: &Path,
    lines: &[T],
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<(), String> {
    let mut text = String::new();
    for l in lines {
        check(l)?;
        text.push_str(&serde_json::to_string(l).map_err(|e| e.to_string())?);
        text.push('\n');
    }
    if lines.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(err)?;
    f.lock().map_err(err)?;
    let mut present = Vec::new();
    f.read_to_end(&mut present).map_err(err)?;
    let present = String::from_utf8(present)
        .map_err(|_| format!("{}: not UTF-8 text; fix the file first", path.display()))?;
    parse_lines(path, &present, &check)
        .map_err(|e| format!("{e} (nothing was saved; fix the file first)"))?;
    if !present.is_empty() && !present.ends_with('\n') {
        text.insert(0, '\n');
    }
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_data())
        .map_err(err)
}

/// Append one decision to a reviews file (see [`append_all`]).
pub fn append(path: &Path, line: &super::ReviewLine) -> Result<(), String> {
    append_all(path, std::slice::from_ref(line))
}

/// Append decisions to a reviews file as one write: every line is checked first, and so is
/// the file as it is (nothing is written to a file that does not read).
pub fn append_all(path: &Path, lines: &[super::ReviewLine]) -> Result<(), String> {
    append_lines(path, lines, super::ReviewLine::check)
}
