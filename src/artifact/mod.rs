//! Artifacts: record types <-> Arrow `RecordBatch` <-> Parquet (zstd), provenance, atomic
//! writes, and schema-checked reads.
//!
//! Every Parquet file carries its provenance in the key-value metadata (`tracer.*` keys:
//! tool version, stage, config hash, seed, input hashes) and nothing time-dependent, so the
//! same inputs give byte-identical files. Writes go to `<file>.tmp` and are renamed into
//! place; a reader checks the schema and names the file and column that do not match.
//!
//! Architecture invariant: this is the only module that encodes or decodes artifact files;
//! it knows record types, not stages or domains' internals.

mod json_column;
pub mod json_table;
pub mod records;
pub mod sft;

pub use json_column::JsonText;
pub use records::{
    EdgeRecord, FaultRecord, Record, RejectRecord, RolloutRecord, TaskRecord, TraceRecord,
};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
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

/// Encode one batch as zstd Parquet with provenance metadata.
pub fn encode_parquet(batch: &RecordBatch, prov: &Provenance) -> Result<Vec<u8>, ArtifactError> {
    encode_batches(batch.schema(), std::slice::from_ref(batch), prov)
}

/// Encode batches of one schema as one zstd Parquet table with provenance metadata, each
/// batch its own row group (one batch: the same bytes as [`encode_parquet`] always wrote).
fn encode_batches(
    schema: SchemaRef,
    batches: &[RecordBatch],
    prov: &Provenance,
) -> Result<Vec<u8>, ArtifactError> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap_or_default()))
        .set_created_by(format!("tracer {}", prov.version))
        .set_key_value_metadata(Some(prov.to_key_values()))
        .build();
    let mut buf = Vec::new();
    let to_err = |e: parquet::errors::ParquetError| ArtifactError::Io {
        path: "<parquet encoder>".into(),
        message: e.to_string(),
    };
    let mut writer = ArrowWriter::try_new(&mut buf, schema, Some(props)).map_err(to_err)?;
    for (i, batch) in batches.iter().enumerate() {
        if i > 0 {
            writer.flush().map_err(to_err)?;
        }
        writer.write(batch).map_err(to_err)?;
    }
    writer.close().map_err(to_err)?;
    Ok(buf)
}

/// Most bytes of row data put in one Arrow batch when writing records. A string or list
/// array addresses its data with i32 offsets (2 GiB); a table larger than that is written
/// as several batches (row groups) well under it, and reads back as one table.
pub(crate) const BATCH_BYTES: usize = 256 << 20;

/// Consecutive runs of rows, in order, each holding at most `limit` bytes by `size`; a row
/// larger than `limit` is a run of its own. No rows give one empty run, so an empty table
/// still has its schema.
pub(crate) fn runs_by_bytes<T>(rows: &[T], size: impl Fn(&T) -> usize, limit: usize) -> Vec<&[T]> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0usize);
    for (i, row) in rows.iter().enumerate() {
        let row_bytes = size(row);
        if i > start && bytes.saturating_add(row_bytes) > limit {
            runs.push(&rows[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes = bytes.saturating_add(row_bytes);
    }
    if start < rows.len() || runs.is_empty() {
        runs.push(&rows[start..]);
    }
    runs
}

/// [`runs_by_bytes`] of records, sized by [`Record::encoded_bytes`].
fn row_batches<R: Record>(rows: &[R], limit: usize) -> Vec<&[R]> {
    runs_by_bytes(rows, R::encoded_bytes, limit)
}

/// Encode records as Parquet in batches of at most `limit` bytes each.
fn encode_records<R: Record>(
    rows: &[R],
    prov: &Provenance,
    limit: usize,
) -> Result<Vec<u8>, ArtifactError> {
    let batches: Vec<RecordBatch> = row_batches(rows, limit)
        .into_iter()
        .map(R::to_batch)
        .collect();
    encode_batches(R::schema(), &batches, prov)
}

/// Write a batch to `path` atomically.
pub fn write_parquet(
    path: &Path,
    batch: &RecordBatch,
    prov: &Provenance,
) -> Result<(), ArtifactError> {
    let bytes = encode_parquet(batch, prov)?;
    write_atomic(path, &bytes)
}

/// Write batches of one schema to `path` atomically, one row group each.
pub fn write_batches(
    path: &Path,
    schema: SchemaRef,
    batches: &[RecordBatch],
    prov: &Provenance,
) -> Result<(), ArtifactError> {
    let bytes = encode_batches(schema, batches, prov)?;
    write_atomic(path, &bytes)
}

/// Read a Parquet file as one batch; when `expected` is given, the file's schema must
/// match it field by field (name and type).
pub fn read_parquet(
    path: &Path,
    expected: Option<&SchemaRef>,
) -> Result<(RecordBatch, Provenance), ArtifactError> {
    let (batches, prov) = read_batches(path, expected)?;
    let schema = match batches.first() {
        Some(b) => b.schema(),
        None => parquet_schema(path)?,
    };
    let batch = arrow_select::concat::concat_batches(&schema, &batches).map_err(|e| {
        ArtifactError::Corrupt {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    })?;
    Ok((batch, prov))
}

/// The Arrow schema of a Parquet file, from its footer.
fn parquet_schema(path: &Path) -> Result<SchemaRef, ArtifactError> {
    let file = File::open(path).map_err(|e| ArtifactError::io(path, e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| ArtifactError::Corrupt {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    Ok(builder.schema().clone())
}

/// Read a Parquet file as the reader's batches, in order, schema-checked like
/// [`read_parquet`].
fn read_batches(
    path: &Path,
    expected: Option<&SchemaRef>,
) -> Result<(Vec<RecordBatch>, Provenance), ArtifactError> {
    let file = File::open(path).map_err(|e| ArtifactError::io(path, e))?;
    let corrupt = |e: &dyn std::fmt::Display| ArtifactError::Corrupt {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| corrupt(&e))?;
    let prov = Provenance::from_key_values(
        builder
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    );
    let schema = builder.schema().clone();
    if let Some(expected) = expected {
        check_schema(path, expected, &schema)?;
    }
    let reader = builder.build().map_err(|e| corrupt(&e))?;
    let mut batches = Vec::new();
    for batch in reader {
        batches.push(batch.map_err(|e| corrupt(&e))?);
    }
    Ok((batches, prov))
}

fn check_schema(
    path: &Path,
    expected: &SchemaRef,
    actual: &SchemaRef,
) -> Result<(), ArtifactError> {
    let mismatch = |message: String| ArtifactError::Schema {
        path: path.display().to_string(),
        message,
    };
    for field in expected.fields() {
        match actual.field_with_name(field.name()) {
            Err(_) => return Err(mismatch(format!("missing column '{}'", field.name()))),
            Ok(found) if !types_match(found.data_type(), field.data_type()) => {
                return Err(mismatch(format!(
                    "column '{}' has type {}, expected {}",
                    field.name(),
                    found.data_type(),
                    field.data_type()
                )));
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// List field names (`item` vs `element`) differ between writers; compare shapes only.
fn types_match(a: &arrow_schema::DataType, b: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType::*;
    match (a, b) {
        (List(x), List(y)) | (LargeList(x), LargeList(y)) => {
            types_match(x.data_type(), y.data_type())
        }
        _ => a == b,
    }
}

/// The row count and provenance of a Parquet file, from its footer alone (no data read).
pub fn parquet_rows(path: &Path) -> Result<(u64, Provenance), ArtifactError> {
    let file = File::open(path).map_err(|e| ArtifactError::io(path, e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| ArtifactError::Corrupt {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    let meta = builder.metadata().file_metadata();
    let prov =
        Provenance::from_key_values(meta.key_value_metadata().map(Vec::as_slice).unwrap_or(&[]));
    Ok((u64::try_from(meta.num_rows()).unwrap_or(0), prov))
}

/// Read a typed artifact, decoding batch by batch (a table over 2 GiB of text does not fit
/// one Arrow batch, so it is never concatenated into one).
pub fn read_records<R: Record>(path: &Path) -> Result<(Vec<R>, Provenance), ArtifactError> {
    let (batches, prov) = read_batches(path, Some(&R::schema()))?;
    let mut rows = Vec::new();
    let mut before = 0;
    for batch in &batches {
        let decoded = R::from_batch(batch).map_err(|(column, message)| ArtifactError::Column {
            path: path.display().to_string(),
            column,
            // Rows are counted within a batch; say which row of the file it was.
            message: shift_row_numbers(&message, before),
        })?;
        before += batch.num_rows();
        rows.extend(decoded);
    }
    Ok((rows, prov))
}

/// A decoding message's `row N` counted from the start of the file rather than of its batch.
fn shift_row_numbers(message: &str, before: usize) -> String {
    if before == 0 {
        return message.to_string();
    }
    match message.strip_prefix("row ").and_then(|rest| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: usize = rest[..digits].parse().ok()?;
        Some(format!("row {}{}", n + before, &rest[digits..]))
    }) {
        Some(shifted) => shifted,
        None => message.to_string(),
    }
}

/// Write a typed artifact atomically, in batches that keep every array under Arrow's
/// 2 GiB offset limit ([`BATCH_BYTES`]).
pub fn write_records<R: Record>(
    path: &Path,
    rows: &[R],
    prov: &Provenance,
) -> Result<(), ArtifactError> {
    let bytes = encode_records(rows, prov, BATCH_BYTES)?;
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tracer-artifact-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn rows() -> Vec<TraceRecord> {
        vec![TraceRecord {
            trace_id: "abc".into(),
            domain: "airline".into(),
            split: crate::split::Split::Train,
            sample_index: 4,
            n_intents: 1,
            intents: vec![vec!["a".into(), "b".into()]],
            length: 2,
        }]
    }

    #[test]
    fn records_and_provenance_round_trip_byte_identically() {
        let dir = scratch("roundtrip");
        let prov = Provenance {
            version: "0.1.0".into(),
            stage: "traces".into(),
            domain: "airline".into(),
            config_hash: "c0ffee".into(),
            seed: 9,
            inputs: [("graphs/x".to_string(), "h".to_string())]
                .into_iter()
                .collect(),
        };
        let path = dir.join("part-00000.parquet");
        write_records(&path, &rows(), &prov).unwrap();
        let first = std::fs::read(&path).unwrap();
        write_records(&path, &rows(), &prov).unwrap();
        assert_eq!(
            first,
            std::fs::read(&path).unwrap(),
            "same rows, same bytes"
        );
        assert!(!dir.join("part-00000.parquet.tmp").exists());
        let (back, p) = read_records::<TraceRecord>(&path).unwrap();
        assert_eq!(back, rows());
        assert_eq!(p, prov);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn traces(n: usize) -> Vec<TraceRecord> {
        (0..n)
            .map(|i| TraceRecord {
                trace_id: format!("trace-{i:03}"),
                domain: "airline".into(),
                split: crate::split::Split::Train,
                sample_index: i32::try_from(i).unwrap(),
                n_intents: 1,
                // Rows of different sizes, so runs end at different counts.
                intents: vec![vec!["x".repeat(10 + 7 * (i % 5))]],
                length: 1,
            })
            .collect()
    }

    #[test]
    fn a_table_over_the_batch_limit_is_written_in_row_groups_and_reads_back_whole() {
        let rows = traces(40);
        let sizes: Vec<usize> = rows.iter().map(Record::encoded_bytes).collect();
        let limit = 400;
        let runs = row_batches(&rows, limit);
        assert!(runs.len() > 3, "{} runs", runs.len());
        // In order, nothing lost, each run within the limit.
        let mut next = 0;
        for run in &runs {
            let bytes: usize = sizes[next..next + run.len()].iter().sum();
            assert!(bytes <= limit, "run of {bytes} bytes");
            next += run.len();
        }
        assert_eq!(next, rows.len());
        // A row over the limit on its own; no rows: one empty run (the schema survives).
        assert_eq!(row_batches(&rows[..3], 1).len(), 3);
        assert_eq!(row_batches::<TraceRecord>(&[], 1).len(), 1);

        let dir = scratch("batches");
        let path = dir.join("part-00000.parquet");
        let prov = Provenance {
            stage: "traces".into(),
            ..Provenance::default()
        };
        std::fs::write(&path, encode_records(&rows, &prov, limit).unwrap()).unwrap();
        let file = File::open(&path).unwrap();
        let groups = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .metadata()
            .num_row_groups();
        assert_eq!(groups, runs.len(), "one row group per batch");
        let (back, p) = read_records::<TraceRecord>(&path).unwrap();
        assert_eq!(back, rows, "one table, rows in order");
        assert_eq!(p, prov);
        let (table, _) = read_parquet(&path, Some(&TraceRecord::schema())).unwrap();
        assert_eq!(table.num_rows(), rows.len());
        // Under the real limit a small table stays one batch: the bytes are as before.
        assert_eq!(
            encode_records(&rows, &prov, BATCH_BYTES).unwrap(),
            encode_parquet(&TraceRecord::to_batch(&rows), &prov).unwrap()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_cell_is_named_by_its_row_in_the_file_not_in_its_batch() {
        assert_eq!(shift_row_numbers("row 3: null", 1024), "row 1027: null");
        assert_eq!(
            shift_row_numbers("row 3, item 1: null", 10),
            "row 13, item 1: null"
        );
        assert_eq!(shift_row_numbers("expected Utf8", 10), "expected Utf8");
    }

    #[test]
    fn outputs_refuse_links_fifos_and_directories() {
        let dir = scratch("special");
        let target = dir.join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = write_atomic(&link, b"new").unwrap_err().to_string();
        assert!(err.contains("link: is a symlink"), "{err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        let err = write_atomic(&dir, b"new").unwrap_err().to_string();
        assert!(err.contains("is a directory"), "{err}");
        assert!(check_output_dir(&link).is_err());
        assert!(check_output_dir(&dir).is_ok());
        assert!(check_output_dir(&dir.join("new")).is_ok());
        // A stale temp file that is a link is replaced, not written through.
        let out = dir.join("out.json");
        std::os::unix::fs::symlink(&target, tmp_path(&out)).unwrap();
        write_atomic(&out, b"fresh").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"fresh");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cached_side_artifacts_are_checked_against_their_checksums() {
        let dir = scratch("cached");
        let path = dir.join("model.bin");
        assert!(read_cached(&path).unwrap().is_none());
        write_cached(&path, b"weights").unwrap();
        assert_eq!(read_cached(&path).unwrap().unwrap(), b"weights");
        std::fs::write(&path, b"weightz").unwrap();
        let err = read_cached(&path).unwrap_err().to_string();
        assert!(
            err.contains("model.bin: does not match its checksum"),
            "{err}"
        );
        // A file written without a checksum is not trusted either.
        std::fs::write(dir.join("other.bin"), b"x").unwrap();
        assert!(read_cached(&dir.join("other.bin")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_split_column_holds_only_split_names() {
        use arrow_array::{ArrayRef, StringArray};
        let batch = TraceRecord::to_batch(&rows());
        let i = batch.schema().index_of("split").unwrap();
        let mut columns = batch.columns().to_vec();
        columns[i] = std::sync::Arc::new(StringArray::from(vec!["test"])) as ArrayRef;
        let bad = arrow_array::RecordBatch::try_new(batch.schema(), columns).unwrap();
        let (column, message) = TraceRecord::from_batch(&bad).unwrap_err();
        assert_eq!(column, "split");
        assert!(
            message.contains("row 0") && message.contains("'test'"),
            "{message}"
        );
    }

    #[test]
    fn corrupt_files_and_wrong_schemas_name_the_file_and_column() {
        let dir = scratch("corrupt");
        let bad = dir.join("bad.parquet");
        std::fs::write(&bad, b"PAR1 this is not parquet").unwrap();
        let err = read_records::<TraceRecord>(&bad).unwrap_err().to_string();
        assert!(
            err.contains("bad.parquet: not a readable Parquet file"),
            "{err}"
        );

        let edges = dir.join("edges.parquet");
        write_records::<EdgeRecord>(&edges, &[], &Provenance::default()).unwrap();
        let err = read_records::<TraceRecord>(&edges).unwrap_err().to_string();
        assert!(
            err.contains("edges.parquet: schema mismatch: missing column 'trace_id'"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
