//! The analysis of a set of rollouts as one call: its config (`stages/analysis.toml`), the
//! detectors then the judge over one source's episodes, and a one-line account of the
//! fault rows. The `analysis` stage and `tracer analyze --rollouts` both run it.

use crate::artifact::{FaultRecord, RolloutRecord, TaskRecord};
use crate::config::ConfigError;
use crate::llm::Role;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalysisConfig {
    /// `failed` (reward below 1, the default) or `all` scored episodes.
    #[serde(default = "failed")]
    pub scope: String,
    /// `[roles.judge]`: labels what rules cannot decide. Scripted (the default) abstains.
    #[serde(default)]
    pub roles: crate::llm::RolesConfig,
    /// The directory of the role prompts: an endpoint judge sends
    /// `<prompts>/analysis_judge.md`.
    #[serde(default)]
    pub prompts: Option<String>,
}

fn failed() -> String {
    "failed".into()
}

impl AnalysisConfig {
    pub fn load(path: &Path, table: &toml::Table) -> Result<AnalysisConfig, ConfigError> {
        let cfg: AnalysisConfig = crate::config::parse_typed(path, table)?;
        if !["failed", "all"].contains(&cfg.scope.as_str()) {
            return Err(crate::config::Check::new(path).error(
                "scope",
                format!("must be 'failed' or 'all', not '{}'", cfg.scope),
            ));
        }
        crate::llm::config::check_roles(path, &cfg.roles, &[Role::Judge])?;
        Ok(cfg)
    }

    pub fn all(&self) -> bool {
        self.scope == "all"
    }
}

/// Analyse one source's rollouts: detectors, then the judge. Returns the rows and how many
/// judge answers were unreadable.
#[allow(clippy::too_many_arguments)] // the stage's and `tracer analyze`'s inputs, each named
pub fn analyse_source(
    starts: super::StartStates<'_>,
    tasks: &BTreeMap<String, TaskRecord>,
    source: &str,
    rollouts: &[RolloutRecord],
    all: bool,
    judge: &crate::llm::RoleModel,
    ctx: &super::judge::JudgeContext,
    seed: u64,
) -> Result<(Vec<FaultRecord>, usize), super::AnalysisError> {
    let mut analysed = super::analyse_rollouts(starts, tasks, rollouts, all)?;
    let unreadable = super::add_judge_labels(judge, ctx, &mut analysed, seed)
        .map_err(super::AnalysisError::Judge)?;
    Ok((super::fault_records(source, rollouts, analysed), unreadable))
}

/// A one-line account of some fault rows: episodes analysed and the most frequent faults.
pub fn summary(rows: &[FaultRecord]) -> String {
    let episodes: BTreeSet<(&str, &str, i32)> = rows
        .iter()
        .map(|r| (r.source.as_str(), r.task_id.as_str(), r.trial))
        .collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        *counts.entry(r.fault.as_str()).or_default() += 1;
    }
    let mut top: Vec<(&str, usize)> = counts.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = top
        .iter()
        .take(4)
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    format!(
        "{} episodes with faults, {} fault rows ({})",
        episodes.len(),
        rows.len(),
        if top.is_empty() {
            "none".into()
        } else {
            top.join(", ")
        }
    )
}
