//! Reading the run a card describes: the check that every stage the card needs is there
//! and fresh (a one-line error naming the stage to run otherwise), and the row counts and
//! records the card's tables are made from.
//!
//! Architecture invariant: the card reads artifacts and stage configs; it knows no stage
//! module and no domain internals, and writes only `output/README.md`.

use super::{CardError, REQUIRED};
use crate::artifact;
use crate::config::Paths;
use crate::pipeline::{Freshness, Runner, stage_dir};

/// Check the run is complete and fresh; true when the `eval` stage is part of it.
pub(super) fn check_artifacts(runner: &Runner) -> Result<bool, CardError> {
    let output = &runner.paths.output;
    let domains: Vec<&str> = runner.domains.iter().map(|d| d.name()).collect();
    let has = |stage: &str, d: &str| stage_dir(output, stage, d).join("_manifest.json").is_file();
    let with_eval = domains.iter().any(|d| has("eval", d));
    let mut needed: Vec<&str> = REQUIRED.to_vec();
    if with_eval {
        needed.push("eval");
    }
    for &stage in &needed {
        for &d in &domains {
            if !has(stage, d) {
                return Err(CardError::Missing {
                    path: stage_dir(output, stage, d).display().to_string(),
                    stage: stage.to_string(),
                });
            }
        }
    }
    let stages: Vec<_> = runner
        .dag
        .topo_order()
        .into_iter()
        .filter(|s| needed.contains(&s.name()))
        .collect();
    // Upstream of the needed stages too (db, graphs): status makes staleness transitive.
    let all = runner.dag.topo_order();
    for (stage, domain, state) in runner.status(&all)? {
        if !stages.iter().any(|s| s.name() == stage) {
            continue;
        }
        if let Freshness::Stale(why) = state {
            // Rerunning the last stage brings everything stale upstream of it up to date.
            let target = if stage == "eval" {
                "eval"
            } else {
                "trajectories"
            };
            return Err(CardError::Stale {
                path: stage_dir(output, stage, domain).display().to_string(),
                stage: target.to_string(),
                why,
            });
        }
    }
    Ok(with_eval)
}

pub(super) fn rows_of(
    paths: &Paths,
    stage: &str,
    domain: &str,
    file: &str,
) -> Result<u64, CardError> {
    let path = stage_dir(&paths.output, stage, domain).join(file);
    if !path.is_file() {
        return Err(CardError::Missing {
            path: path.display().to_string(),
            stage: stage.to_string(),
        });
    }
    Ok(artifact::parquet_rows(&path)?.0)
}

/// The Low set's rows of a domain, or "—" for a domain outside the Low set: the trajectories
/// stage writes `_low.parquet` only for `low_domains`, and the stage itself was checked
/// fresh (its `part-00000.parquet` is read first), so a missing file is not a missing stage.
pub(super) fn low_rows(paths: &Paths, domain: &str) -> Result<String, CardError> {
    if !low_exists(paths, domain) {
        return Ok("—".to_string());
    }
    Ok(rows_of(paths, "trajectories", domain, "_low.parquet")?.to_string())
}

pub(super) fn low_exists(paths: &Paths, domain: &str) -> bool {
    stage_dir(&paths.output, "trajectories", domain)
        .join("_low.parquet")
        .is_file()
}

pub(super) fn read<R: artifact::Record>(
    paths: &Paths,
    stage: &str,
    domain: &str,
) -> Result<Vec<R>, CardError> {
    let path = stage_dir(&paths.output, stage, domain).join("part-00000.parquet");
    if !path.is_file() {
        return Err(CardError::Missing {
            path: path.display().to_string(),
            stage: stage.to_string(),
        });
    }
    Ok(artifact::read_records::<R>(&path)?.0)
}
