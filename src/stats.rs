//! `tracer stats`: the funnel per domain and split (traces -> grounded -> refined ->
//! verified) with rejection reasons, read from the stage artifacts, as Markdown.

use crate::artifact::{self, ArtifactError, RejectRecord, TaskRecord, TraceRecord};
use crate::config::Paths;
use crate::pipeline::stage_dir;
use std::collections::BTreeMap;

fn read_opt<R: artifact::Record>(
    paths: &Paths,
    stage: &str,
    domain: &str,
    file: &str,
) -> Result<Option<Vec<R>>, ArtifactError> {
    let path = stage_dir(&paths.output, stage, domain).join(file);
    if !path.exists() {
        return Ok(None);
    }
    artifact::read_records::<R>(&path).map(|(rows, _)| Some(rows))
}

fn count<T>(rows: &Option<Vec<T>>, split: &str, split_of: impl Fn(&T) -> &str) -> String {
    match rows {
        None => "-".into(),
        Some(r) => r
            .iter()
            .filter(|x| split_of(x) == split)
            .count()
            .to_string(),
    }
}

/// The funnel table for these domains.
pub fn funnel(paths: &Paths, domains: &[&str]) -> Result<String, ArtifactError> {
    let mut out = String::from(
        "| domain | split | traces | grounded | refined | verified | rejected (stage: reason x n) |\n|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let traces = read_opt::<TraceRecord>(paths, "traces", d, "part-00000.parquet")?;
        let grounded = read_opt::<TaskRecord>(paths, "grounded", d, "part-00000.parquet")?;
        let refined = read_opt::<TaskRecord>(paths, "refined", d, "part-00000.parquet")?;
        let tasks = read_opt::<TaskRecord>(paths, "tasks", d, "part-00000.parquet")?;
        let mut rejects: Vec<RejectRecord> = Vec::new();
        for stage in ["grounded", "refined", "tasks"] {
            if let Some(r) = read_opt::<RejectRecord>(paths, stage, d, "rejects.parquet")? {
                rejects.extend(r);
            }
        }
        for split in ["train", "eval"] {
            let mut reasons: BTreeMap<(String, String), usize> = BTreeMap::new();
            for r in rejects.iter().filter(|r| r.split == split) {
                *reasons
                    .entry((r.stage.clone(), r.reason_kind.clone()))
                    .or_default() += 1;
            }
            let reasons: Vec<String> = reasons
                .iter()
                .map(|((s, k), n)| format!("{s}: {k} x {n}"))
                .collect();
            out.push_str(&format!(
                "| {d} | {split} | {} | {} | {} | {} | {} |\n",
                count(&traces, split, |t| &t.split),
                count(&grounded, split, |t| &t.split),
                count(&refined, split, |t| &t.split),
                count(&tasks, split, |t| &t.split),
                if reasons.is_empty() {
                    "none".into()
                } else {
                    reasons.join(", ")
                }
            ));
        }
    }
    Ok(out)
}
