//! The card's provenance: the published stages (what the dataset is made of, in DAG
//! order), the tool version and source hash per domain, the seed, the config hash per stage
//! and the fingerprint of every stage and domain.
//!
//! Architecture invariant: the card reads artifacts and stage configs; it knows no stage
//! module and no domain internals, and writes only `output/README.md`.

use super::CardError;
use crate::artifact;
use crate::pipeline::{Runner, read_manifest, stage_dir};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The published stages and what they were made from, in DAG order; stages downstream of
/// them (the failure analysis) are not part of the dataset.
pub(super) fn published_stages(
    runner: &Runner,
    with_eval: bool,
) -> Result<Vec<&'static str>, CardError> {
    let mut published = runner.dag.plan("trajectories")?;
    if with_eval {
        published.extend(runner.dag.plan("eval")?);
    }
    let mut stages: Vec<&'static str> = runner
        .dag
        .topo_order()
        .iter()
        .map(|s| s.name())
        .filter(|s| published.iter().any(|p| p.name() == *s))
        .collect();
    stages.dedup();
    Ok(stages)
}

/// Code version, seed, config hash per stage, fingerprints per stage and domain.
pub(super) fn provenance(runner: &Runner, with_eval: bool) -> Result<String, CardError> {
    let output = &runner.paths.output;
    let stages = published_stages(runner, with_eval)?;
    let mut seeds = BTreeSet::new();
    let mut versions = BTreeSet::new();
    let mut config_hashes: Vec<(&str, BTreeSet<String>)> = Vec::new();
    let mut fingerprints = String::new();
    for &stage in &stages {
        config_hashes.push((stage, BTreeSet::new()));
        for d in &runner.domains {
            let dir = stage_dir(output, stage, d.name());
            let Some(m) = read_manifest(&dir) else {
                return Err(CardError::Missing {
                    path: dir.display().to_string(),
                    stage: stage.to_string(),
                });
            };
            seeds.insert(m.seed);
            if let Some((_, hashes)) = config_hashes.last_mut() {
                hashes.insert(m.config_hash.clone());
            }
            let _ = writeln!(
                fingerprints,
                "| {stage} | {} | `{}` | {} |",
                d.name(),
                m.fingerprint,
                m.summary.replace('|', "/")
            );
            if let Some(file) = first_parquet(&dir) {
                versions.insert(artifact::parquet_rows(&file)?.1.version);
            }
        }
    }
    let mut out = String::from("\n## Provenance\n\n");
    let join = |s: &BTreeSet<String>| {
        s.iter()
            .map(|v| format!("`{v}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "- Tool: tracer {}; source hash per domain (shared code + the domain's own folder): {}.",
        join(&versions),
        runner
            .domains
            .iter()
            .map(|d| format!(
                "{} `{}`",
                d.name(),
                crate::pipeline::code_hash("", d.name())
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        out,
        "- Seed: {}.",
        seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push_str("- Every stage was fresh when this card was written: each fingerprint below covers the tool version, the source hash, the stage config hash, the seed and the hash of every input. Parquet files carry the same provenance as `tracer.*` key-value metadata, and each stage directory's `_manifest.json` the hash of every file.\n\n");
    out.push_str("| stage | config hash (SHA-256 of the parsed stage TOML) |\n|---|---|\n");
    for (stage, hashes) in &config_hashes {
        let _ = writeln!(out, "| {stage} | {} |", join(hashes));
    }
    out.push_str("\n<details><summary>Fingerprints per stage and domain</summary>\n\n| stage | domain | fingerprint | summary |\n|---|---|---|---|\n");
    out.push_str(&fingerprints);
    out.push_str("\n</details>\n");
    Ok(out)
}

/// The first Parquet file of a stage directory, in name order.
fn first_parquet(dir: &Path) -> Option<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    files.into_iter().next()
}
