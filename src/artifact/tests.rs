//! Artifact tests: byte-identical round trips with provenance, row groups over the batch
//! limit, outputs that refuse links, checked side artifacts, and errors naming the file,
//! column and row.

use super::parquet_io::{encode_records, row_batches, shift_row_numbers};
use super::*;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::fs::File;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tracer-artifact-{}-{name}", std::process::id()));
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
