//! Artifacts: record types <-> Arrow `RecordBatch` <-> Parquet (zstd), provenance, atomic
//! writes, and schema-checked reads.
//!
//! Every Parquet file carries its provenance in the key-value metadata (`tracer.*` keys:
//! tool version, stage, config hash, seed, input hashes) and nothing time-dependent, so the
//! same inputs give byte-identical files. Writes go to `<file>.tmp` and are renamed into
//! place; a reader checks the schema and names the file and column that do not match.
//!
//! Errors, provenance, hashes, atomic writes and checked side artifacts are here; Parquet
//! encoding and schema-checked reads are `parquet_io.rs`.
//!
//! Architecture invariant: this is the only module that encodes or decodes artifact files;
//! it knows record types, not stages or domains' internals.

mod json_column;
pub mod json_table;
mod parquet_io;
pub mod records;
pub mod sft;

pub use json_column::JsonText;
pub(crate) use parquet_io::{BATCH_BYTES, runs_by_bytes};
pub use parquet_io::{
    encode_parquet, parquet_rows, read_parquet, read_records, write_batches, write_parquet,
    write_records,
};
pub use records::{
    EdgeRecord, FaultRecord, Record, RejectRecord, RolloutRecord, TaskRecord, TraceRecord,
};

use parquet::file::metadata::KeyValue;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}: not a readable Parquet file ({message})")]
    Corrupt { path: String, message: String },
    #[error("{path}: schema mismatch: {message}")]
    Schema { path: String, message: String },
    #[error("{path}: column '{column}': {message}")]
    Column {
        path: String,
        column: String,
        message: String,
    },
}

impl ArtifactError {
    pub fn io(path: &Path, err: impl std::fmt::Display) -> Self {
        ArtifactError::Io {
            path: path.display().to_string(),
            message: err.to_string(),
        }
    }
}

/// Where an artifact came from. Stored as `tracer.*` Parquet key-value metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub version: String,
    pub stage: String,
    pub domain: String,
    pub config_hash: String,
    pub seed: u64,
    /// Input artifact path (relative to the output root) -> SHA-256 of its bytes.
    pub inputs: BTreeMap<String, String>,
}

impl Provenance {
    fn to_key_values(&self) -> Vec<KeyValue> {
        let inputs = serde_json::to_string(&self.inputs).unwrap_or_default();
        [
            ("tracer.version", self.version.clone()),
            ("tracer.stage", self.stage.clone()),
            ("tracer.domain", self.domain.clone()),
            ("tracer.config_hash", self.config_hash.clone()),
            ("tracer.seed", self.seed.to_string()),
            ("tracer.inputs", inputs),
        ]
        .into_iter()
        .map(|(k, v)| KeyValue::new(k.to_string(), v))
        .collect()
    }

    fn from_key_values(kvs: &[KeyValue]) -> Self {
        let get = |key: &str| {
            kvs.iter()
                .find(|kv| kv.key == key)
                .and_then(|kv| kv.value.clone())
                .unwrap_or_default()
        };
        Provenance {
            version: get("tracer.version"),
            stage: get("tracer.stage"),
            domain: get("tracer.domain"),
            config_hash: get("tracer.config_hash"),
            seed: get("tracer.seed").parse().unwrap_or_default(),
            inputs: serde_json::from_str(&get("tracer.inputs")).unwrap_or_default(),
        }
    }
}

/// SHA-256 of a file's bytes, lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String, ArtifactError> {
    let bytes = std::fs::read(path).map_err(|e| ArtifactError::io(path, e))?;
    Ok(sha256_hex(&bytes))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// What a directory entry is, in the words an error message uses; read without following
/// a symlink, so a link is reported as a link and not as what it points to.
fn entry_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_symlink() {
        return "a symlink";
    }
    if t.is_dir() {
        return "a directory";
    }
    if t.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
    }
    "a special file"
}

/// Refuse an output file path that exists and is anything but a regular file (a symlink,
/// FIFO, directory or device node): the atomic rename would replace a link or a FIFO
/// silently, and an earlier non-atomic writer would have written through it.
pub fn check_output_file(path: &Path) -> Result<(), ArtifactError> {
    check_output_kind(
        path,
        std::fs::FileType::is_file,
        "an output must be a regular file",
    )
}

/// Refuse an output directory path that exists and is anything but a directory (a
/// symlink is not followed: files would land wherever it points).
pub fn check_output_dir(path: &Path) -> Result<(), ArtifactError> {
    check_output_kind(
        path,
        std::fs::FileType::is_dir,
        "an output directory must be a directory",
    )
}

/// `path` is new or, not following links, of the kind `ok` accepts; else `is <kind>; <what>
/// or a new path`.
fn check_output_kind(
    path: &Path,
    ok: fn(&std::fs::FileType) -> bool,
    what: &str,
) -> Result<(), ArtifactError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if ok(&meta.file_type()) => Ok(()),
        Ok(meta) => Err(ArtifactError::io(
            path,
            format!("is {}; {what} or a new path", entry_kind(&meta)),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ArtifactError::io(path, e)),
    }
}

/// Write bytes atomically: temp file in the same directory, then rename. The target must
/// be a regular file or not exist ([`check_output_file`]); the temp file is created anew
/// (a stale one, even a link, is removed first, never written through).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ArtifactError> {
    use std::io::Write;
    check_output_file(path)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| ArtifactError::io(dir, e))?;
    }
    let tmp = tmp_path(path);
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(ArtifactError::io(&tmp, e));
        }
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| ArtifactError::io(&tmp, e))?;
    file.write_all(bytes)
        .map_err(|e| ArtifactError::io(&tmp, e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| ArtifactError::io(path, e))
}

/// The checksum manifest beside cached side artifacts (files a stage reads that no stage
/// manifest covers, such as the emotion model): file name -> SHA-256.
pub const CHECKSUMS: &str = "_checksums.json";

/// Why a cached side artifact cannot be trusted.
#[derive(Debug, thiserror::Error)]
pub enum CachedError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}: does not match its checksum in {manifest} (corrupted or edited)")]
    Mismatch { path: String, manifest: String },
}

fn read_checksums(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(dir.join(CHECKSUMS))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Write a cached side artifact atomically and record its hash in the directory's
/// checksum manifest (after the file: a kill in between leaves a mismatch, which only
/// costs a rebuild).
pub fn write_cached(path: &Path, bytes: &[u8]) -> Result<(), ArtifactError> {
    write_atomic(path, bytes)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let mut sums = read_checksums(dir);
    sums.insert(name, sha256_hex(bytes));
    let json = serde_json::to_vec_pretty(&sums).unwrap_or_default();
    write_atomic(&dir.join(CHECKSUMS), &json)
}

/// Read a cached side artifact: `Ok(None)` when it does not exist, an error when its bytes
/// differ from the recorded hash or no hash was recorded.
pub fn read_cached(path: &Path) -> Result<Option<Vec<u8>>, CachedError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(CachedError::Io {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    if read_checksums(dir).get(&name) != Some(&sha256_hex(&bytes)) {
        return Err(CachedError::Mismatch {
            path: path.display().to_string(),
            manifest: dir.join(CHECKSUMS).display().to_string(),
        });
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests;
