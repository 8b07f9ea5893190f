//! `analysis` stage: why rollouts fail. For every scored episode of `rollouts` and `eval`
//! with reward below 1 (or every scored episode, `scope = "all"`), the deterministic
//! detectors of [`crate::analysis`] label its faults from the transcript, the task's
//! reference actions and a replay on the task's database; the `judge` role (scripted:
//! abstains) adds model labels for what rules cannot decide. One row per (episode, fault)
//! in `part-00000.parquet`; a failed episode nobody explained gets an `unlabelled` row.

use crate::analysis::{self, AnalysisConfig, analyse_source, summary};
use crate::artifact::{self, RolloutRecord, TaskRecord};
use crate::config::ConfigError;
use crate::llm::Role;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::split::Split;
use std::collections::BTreeMap;
use std::path::Path;

pub struct AnalysisStage;

/// The episodes analysed, from each source, in this order.
pub const SOURCES: [&str; 2] = ["rollouts", "eval"];

impl StageConfig for AnalysisConfig {
    fn load(path: &Path, table: &toml::Table) -> Result<Self, ConfigError> {
        AnalysisConfig::load(path, table)
    }
    fn preflight(&self, scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        super::roles::preflight(
            scope,
            &self.roles,
            self.prompts.as_deref(),
            &[(Role::Judge, "analysis_judge")],
        )
    }
}

impl TypedStage for AnalysisStage {
    fn source_files(&self, _domain: &str, config: &toml::Table) -> Vec<std::path::PathBuf> {
        super::roles::prompt_sources(config, &[(Role::Judge, "analysis_judge")])
    }
    type Config = AnalysisConfig;
    fn name(&self) -> &'static str {
        "analysis"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "tasks", "rollouts", "reviewed", "eval"]
    }
    fn run(&self, ctx: &StageContext, cfg: &AnalysisConfig) -> Result<String, PipelineError> {
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
        let envs = crate::project::SplitEnvs::load(&ctx.input_dir("db"), ctx.domain)?;
        let starts = analysis::StartStates {
            train: envs.for_split(Split::Train),
            eval: envs.for_split(Split::Eval),
        };
        let judge = super::roles::open_role(ctx, &cfg.roles, Role::Judge)?;
        let prompt =
            super::roles::role_prompt(ctx, &judge, cfg.prompts.as_deref(), "analysis_judge")?;
        let policy = crate::project::read_policy(ctx.paths, ctx.domain, starts.train)
            .map_err(|e| ctx.fail(ErrorKind::Environment, e))?;
        let judge_ctx = crate::analysis::judge::JudgeContext {
            prompt: &prompt,
            policy: &policy,
        };
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
                &judge_ctx,
                ctx.seed,
            )
            .map_err(|e| {
                let kind = match e {
                    analysis::AnalysisError::Judge(_) => ErrorKind::Endpoint,
                    _ => ErrorKind::Input,
                };
                ctx.fail(kind, format!("{source}: {e}"))
            })?;
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
