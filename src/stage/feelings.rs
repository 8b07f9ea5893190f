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
}

impl StageConfig for FeelingsConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        crate::llm::config::check_roles(path, &self.roles, &[Role::Feeler])
    }
    fn preflight(&self) -> Result<(), String> {
        crate::llm::preflight::preflight_roles(&self.roles)
    }
}

impl TypedStage for FeelingsStage {
    type Config = FeelingsConfig;
    fn name(&self) -> &'static str {
        "feelings"
    }
    fn inputs(&self) -> &'static [&'static str] {
        // Deliberately no "db": the feeler never sees the database.
        &["refined"]
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
        let feeler = feeler(&model, ctx.seed);
        let feelings = feeler
            .feel(jobs)
            .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        let mut rows = Vec::with_capacity(tasks.len());
        for (task, feeling) in tasks.into_iter().zip(feelings) {
            let feeling = feeling.map_err(|e| {
                ctx.fail(
                    ErrorKind::Endpoint,
                    format!("feeler for task {}: {e}", task.task_id),
                )
            })?;
            rows.push(TaskRecord {
                feeling: Some(feeling),
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
