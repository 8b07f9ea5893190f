//! The stages, one module each, and their registry (in dependency order).
//!
//! Architecture invariant: a stage reads only artifacts (through `crate::artifact` and its
//! `StageContext`) and project source files it declares; it writes only into its own output
//! directory. It never rewrites another stage's artifact.

pub mod analysis;
pub mod db;
pub mod emotions;
pub mod feelings;
pub mod graphs;
pub mod grounded;
pub mod refined;
pub mod registry;
pub mod reviewed;
pub mod roles;
pub mod rollouts;
pub mod tasks;
pub mod traces;
pub mod trajectories;

use crate::artifact::Record;
use crate::pipeline::{PipelineError, StageContext};
use std::collections::HashMap;
use std::path::PathBuf;

/// Position of each id in an input list: the order a single process writes its rows in.
fn positions<'a>(ids: impl IntoIterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for (i, id) in ids.into_iter().enumerate() {
        out.entry(id.to_string()).or_insert(i);
    }
    out
}

/// The rows of `file` from every shard part, in the order a single process writes them:
/// sorted by `key` (stably, so rows with equal keys keep their part's order). A row whose
/// key is `None` belongs to no item of this run's input: the part is foreign.
fn merge_rows<R: Record, K: Ord>(
    ctx: &StageContext,
    parts: &[PathBuf],
    file: &str,
    key: impl Fn(&R) -> Option<K>,
) -> Result<Vec<R>, PipelineError> {
    let mut keyed = Vec::new();
    for part in parts {
        let path = part.join(file);
        let (rows, _) = crate::artifact::read_records::<R>(&path)?;
        for row in rows {
            let k = key(&row).ok_or_else(|| {
                ctx.fail(
                    crate::pipeline::ErrorKind::Input,
                    format!(
                        "{}: a row for an item this run's input does not have (a foreign part)",
                        path.display()
                    ),
                )
            })?;
            keyed.push((k, row));
        }
    }
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(keyed.into_iter().map(|(_, r)| r).collect())
}
