//! `feelings` stage: the feeler role writes, per task, a free-text description of the
//! customer's likely feeling from the user context and the requested actions only.
//!
//! Architecture invariant: the feeler cannot see the database. It receives a
//! [`FeelerInput`] — plain strings built from the refined task — and this stage declares no
//! `db` input, so no environment is ever loaded here.
//!
//! The role itself (scripted and endpoint) is [`crate::roles::feeler`]; this stage reads
//! the refined tasks, turns each into the feeler's view (tool names mapped to their
//! domain's intent tags) and writes the feelings beside the tasks.

use crate::artifact::{self, TaskRecord};
use crate::config::ConfigError;
use crate::llm::{Role, RolesConfig};
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::roles::feeler::{FeelJob, feeler, feeler_input};
use serde::Deserialize;
use std::path::Path;

pub struct FeelingsStage;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeelingsConfig {
    /// `[roles.feeler]`: scripted (rules, the default) or an endpoint.
    #[serde(default)]
    pub roles: RolesConfig,
    /// The directory of the role prompts: an endpoint feeler sends `<prompts>/feeler.md`.
    #[serde(default)]
    pub prompts: Option<String>,
}

impl StageConfig for FeelingsConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        crate::llm::config::check_roles(path, &self.roles, &[Role::Feeler])
    }
    fn preflight(&self, scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        super::roles::preflight(
            scope,
            &self.roles,
            self.prompts.as_deref(),
            &[(Role::Feeler, "feeler")],
        )
    }
}

impl TypedStage for FeelingsStage {
    type Config = FeelingsConfig;
    fn name(&self) -> &'static str {
        "feelings"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        // Deliberately no "db": the feeler never sees the database.
        &["refined"]
    }
    fn source_files(&self, _domain: &str, config: &toml::Table) -> Vec<std::path::PathBuf> {
        super::roles::prompt_sources(config, &[(Role::Feeler, "feeler")])
    }
    fn run(&self, ctx: &StageContext, cfg: &FeelingsConfig) -> Result<String, PipelineError> {
        let (mut tasks, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("refined").join("part-00000.parquet"),
        )?;
        tasks.retain(|t| ctx.owns(&t.task_id));
        let jobs: Vec<FeelJob> = tasks
            .iter()
            .map(|t| {
                Ok(FeelJob {
                    input: feeler_input(t)?,
                    domain: t.domain.clone(),
                    task_id: t.task_id.clone(),
                })
            })
            .collect::<Result<_, String>>()
            .map_err(|e| ctx.fail(ErrorKind::Input, e))?;
        let model = super::roles::open_role(ctx, &cfg.roles, Role::Feeler)?;
        let prompt = super::roles::role_prompt(ctx, &model, cfg.prompts.as_deref(), "feeler")?;
        let feeler = feeler(&model, ctx.seed, prompt);
        let feelings = feeler
            .feel(jobs)
            .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        // Every task needs its feeling (the mapper reads it): a request that failed or was
        // answered unusably twice fails the stage, which stays stale; the rerun asks again
        // only for those (the other answers come from the response cache).
        let errored: Vec<(String, String)> = tasks
            .iter()
            .zip(&feelings)
            .filter_map(|(t, f)| f.as_ref().err().map(|e| (t.task_id.clone(), e.clone())))
            .collect();
        super::roles::settle_errored(ctx, "feeler requests", &errored, tasks.len(), 0.0)?;
        let mut rows = Vec::with_capacity(tasks.len());
        for (task, feeling) in tasks.into_iter().zip(feelings) {
            rows.push(TaskRecord {
                feeling: feeling.ok(),
                ..task
            });
        }
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        Ok(feelings_summary(rows.len(), &feeler.model_id()))
    }
    fn shardable(&self) -> bool {
        true
    }
    fn merge(
        &self,
        ctx: &StageContext,
        cfg: &FeelingsConfig,
        parts: &[std::path::PathBuf],
    ) -> Result<String, PipelineError> {
        let (refined, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("refined").join("part-00000.parquet"),
        )?;
        let order = super::positions(refined.iter().map(|t| t.task_id.as_str()));
        let rows = super::merge_rows(ctx, parts, "part-00000.parquet", |t: &TaskRecord| {
            order.get(&t.task_id).copied()
        })?;
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        Ok(feelings_summary(
            rows.len(),
            &crate::llm::configured_model_id(&cfg.roles, Role::Feeler),
        ))
    }
}

fn feelings_summary(rows: usize, feeler: &str) -> String {
    format!("{rows} feelings written by {feeler}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feeler_never_reads_the_database() {
        assert!(
            !FeelingsStage.inputs().contains(&"db"),
            "the feeler must not read the database"
        );
    }
}
