//! `analysis` stage: why rollouts fail. For every scored episode of `rollouts` and `eval`
//! with reward below 1 (or every scored episode, `scope = "all"`), the deterministic
//! detectors of [`crate::analysis`] label its faults from the transcript, the task's
//! reference actions and a replay on the task's database; the `judge` role (scripted:
//! abstains) adds model labels for what rules cannot decide. One row per (episode, fault)
//! in `part-00000.parquet`; a failed episode nobody explained gets an `unlabelled` row.

use crate::analysis;
use crate::artifact::{self, FaultRecord, RolloutRecord, TaskRecord};
use crate::config::ConfigError;
use crate::llm::Role;
use crate::pipeline::{PipelineError, Stage, StageContext};
use crate::split::Split;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub struct AnalysisStage;

/// The episodes analysed, from each source, in this order.
pub const SOURCES: [&str; 2] = ["rollouts", "eval"];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalysisConfig {
    /// `failed` (reward below 1, the default) or `all` scored episodes.
    #[serde(default = "failed")]
    pub scope: String,
    /// `[roles.judge]`: labels what rules cannot decide. Scripted (the default) abstains.
    #[serde(default)]
    pub roles: crate::llm::RolesConfig,
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
        super::roles::check_roles(path, &cfg.roles, &[Role::Judge])?;
        Ok(cfg)
    }

    pub fn all(&self) -> bool {
        self.scope == "all"
    }
}

/// Analyse one source's rollouts: detectors, then the judge. Returns the rows and how many
/// judge answers were unreadable.
pub fn analyse_source(
    starts: analysis::StartStates<'_>,
    tasks: &BTreeMap<String, TaskRecord>,
    source: &str,
    rollouts: &[RolloutRecord],
    all: bool,
    judge: &crate::llm::RoleModel,
    seed: u64,
) -> Result<(Vec<FaultRecord>, usize), String> {
    let mut analysed =
        analysis::analyse_rollouts(starts, tasks, rollouts, all).map_err(|e| e.to_string())?;
    let unreadable = analysis::add_judge_labels(judge, &mut analysed, seed)?;
    Ok((
        analysis::fault_records(source, rollouts, analysed),
        unreadable,
    ))
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

impl Stage for AnalysisStage {
    fn name(&self) -> &'static str {
        "analysis"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "tasks", "rollouts", "reviewed", "eval"]
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        AnalysisConfig::load(path, table).map(|_| ())
    }
    fn preflight(&self, path: &Path, table: &toml::Table) -> Result<(), String> {
        let cfg = AnalysisConfig::load(path, table).map_err(|e| e.to_string())?;
        super::roles::preflight_roles(&cfg.roles)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: AnalysisConfig = ctx.typed_config()?;
        let (tasks, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("tasks").join("part-00000.parquet"),
        )?;
        // Evaluation tasks as released: a reviewer's edit changes the gold the episodes
        // are measured against.
        let (released, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("reviewed").join("part-00000.parquet"),
        )?;
        let tasks: BTreeMap<String, TaskRecord> = tasks
            .into_iter()
            .chain(released)
            .map(|t| (t.task_id.clone(), t))
            .collect();
        let envs = super::db::SplitEnvs::load(&ctx.input_dir("db"), ctx.domain)?;
        let starts = analysis::StartStates {
            train: envs.for_split(Split::Train),
            eval: envs.for_split(Split::Eval),
        };
        let judge = super::roles::open_role(ctx, &cfg.roles, Role::Judge)?;
        let mut rows = Vec::new();
        let mut unreadable = 0;
        for source in SOURCES {
            let (rollouts, _) = artifact::read_records::<RolloutRecord>(
                &ctx.input_dir(source).join("part-00000.parquet"),
            )?;
            let (r, u) = analyse_source(
                starts,
                &tasks,
                source,
                &rollouts,
                cfg.all(),
                &judge,
                ctx.seed,
            )
            .map_err(|e| ctx.fail(format!("{source}: {e}")))?;
            rows.extend(r);
            unreadable += u;
        }
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        let mut line = summary(&rows);
        if unreadable > 0 {
            line.push_str(&format!("; {unreadable} judge answers unreadable"));
        }
        Ok(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_names_a_bad_scope_and_a_role_the_stage_does_not_use() {
        let path = Path::new("stages/analysis.toml");
        let load = |text: &str| AnalysisConfig::load(path, &text.parse::<toml::Table>().unwrap());
        assert!(load("").unwrap().scope == "failed");
        assert!(load("scope = \"all\"").unwrap().all());
        let e = load("scope = \"some\"").unwrap_err().to_string();
        assert!(
            e.contains("stages/analysis.toml") && e.contains("scope"),
            "{e}"
        );
        let e = load("[roles.agent]\nprovider = \"scripted\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("roles.agent") && e.contains("judge"), "{e}");
    }
}
