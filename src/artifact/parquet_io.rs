//! Records and batches as zstd Parquet with their provenance (a table over the batch limit
//! in several row groups), and reads checked against the expected schema, naming the file,
//! the column and the row of the file that is bad.

use super::{ArtifactError, Provenance, Record, write_atomic};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::path::Path;

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
pub(super) fn row_batches<R: Record>(rows: &[R], limit: usize) -> Vec<&[R]> {
    runs_by_bytes(rows, R::encoded_bytes, limit)
}

/// Encode records as Parquet in batches of at most `limit` bytes each.
pub(super) fn encode_records<R: Record>(
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
pub(super) fn shift_row_numbers(message: &str, before: usize) -> String {
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
