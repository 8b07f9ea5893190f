//! Snapshots of every Parquet schema users read (column names, types, nullability), so a
//! refactor cannot change what datasets look like by accident. Regenerate after an
//! intended change with `UPDATE_EXPECT=1 cargo test --test integration schemas` and review
//! the diff of `tests/snapshots/parquet_schemas.txt`.

use arrow_schema::SchemaRef;
use tracer::artifact::{
    EdgeRecord, FaultRecord, Record, RejectRecord, RolloutRecord, TaskRecord, TraceRecord,
};

fn describe(name: &str, schema: &SchemaRef) -> String {
    let mut out = format!("## {name}\n");
    for f in schema.fields() {
        let null = if f.is_nullable() { "null" } else { "not null" };
        out.push_str(&format!("{}: {} ({null})\n", f.name(), f.data_type()));
    }
    out
}

#[test]
fn parquet_schemas_match_their_snapshot() {
    let text = [
        describe("traces (TraceRecord)", &TraceRecord::schema()),
        describe("graphs edges (EdgeRecord)", &EdgeRecord::schema()),
        describe(
            "grounded / refined / feelings / emotions / tasks (TaskRecord)",
            &TaskRecord::schema(),
        ),
        describe("_rejects (RejectRecord)", &RejectRecord::schema()),
        describe(
            "rollouts / trajectories / eval (RolloutRecord)",
            &RolloutRecord::schema(),
        ),
        describe("analysis (FaultRecord)", &FaultRecord::schema()),
        describe(
            "trajectories _sft.parquet",
            &tracer::artifact::sft::sft_schema(),
        ),
    ]
    .join("\n");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/parquet_schemas.txt");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == text,
        "a Parquet schema changed; if intended, run UPDATE_EXPECT=1 cargo test --test integration schemas\n--- snapshot\n{expected}\n--- now\n{text}"
    );
}
