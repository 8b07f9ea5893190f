//! `tasks` stage: verification. A refined task is kept only when
//! 1. its reference actions replay on a fresh fork, every call succeeding, to the recorded
//!    state hash;
//! 2. every call obeys the domain's machine-checkable policy rules on the state before it;
//! 3. its instruction is sufficient: every argument value is stated in the instruction,
//!    revealed by the customer's own records or an earlier reference call, or (for
//!    internal ids) resolvable through a user fact the instruction states — and no internal
//!    id appears in the instruction;
//! 4. it passes the quality gates (`[gates]`, `verify::Gates`): a coherent composition,
//!    nothing the customer cannot know, no mechanical language error, every read the
//!    customer asks to hear answered by the task's `outputs`, at most `max_actions` actions;
//! 5. where 1–4 are inconclusive (only free-text values missing from the instruction), the
//!    judge role decides; the scripted judge rejects.
//!
//! Rejected tasks go to `_rejects.parquet` with their reason. Verification does not read
//! emotion columns; it carries them through.

use crate::artifact::{self, RejectRecord, TaskRecord};
use crate::config::ConfigError;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::roles::JudgeJob;
use crate::split::Split;
use crate::verify::verify_task_with;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub struct TasksStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TasksConfig {
    /// `[gates]`: the quality gates (coherence, knowable ids, language, answered
    /// questions, `max_actions`), all on by default.
    #[serde(default)]
    pub gates: crate::verify::Gates,
    /// `[roles.judge]`: decides inconclusive tasks. Scripted (the default) rejects them.
    #[serde(default)]
    pub roles: crate::llm::RolesConfig,
    /// The directory of the role prompts: an endpoint judge sends `<prompts>/judge.md`.
    #[serde(default)]
    pub prompts: Option<String>,
    /// Share of judge requests that may fail at the endpoint before the stage fails and
    /// stays stale; failed ones are errored (reason kind `errored`), never rejected.
    #[serde(default)]
    pub max_errored_share: f64,
}

fn read_emotions(ctx: &StageContext) -> Result<Vec<TaskRecord>, PipelineError> {
    Ok(
        artifact::read_records::<TaskRecord>(
            &ctx.input_dir("emotions").join("part-00000.parquet"),
        )?
        .0,
    )
}

/// Write the verified tasks and the rejections; the summary.
fn write_tasks(
    ctx: &StageContext,
    kept: &[TaskRecord],
    rejects: &[RejectRecord],
) -> Result<String, PipelineError> {
    let prov = ctx.provenance();
    artifact::write_records(&ctx.out("part-00000.parquet"), kept, &prov)?;
    artifact::write_records(&ctx.out("_rejects.parquet"), rejects, &prov)?;
    let train = kept.iter().filter(|t| t.split == Split::Train).count();
    Ok(format!(
        "{} verified (train {}, eval {}), {} rejected",
        kept.len(),
        train,
        kept.len() - train,
        rejects.len()
    ))
}

impl StageConfig for TasksConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        crate::config::Check::new(path).count(
            "gates.max_actions",
            self.gates.max_actions,
            1,
            crate::config::MAX_COUNT,
        )?;
        crate::config::Check::new(path).share("max_errored_share", self.max_errored_share)?;
        crate::llm::config::check_roles(path, &self.roles, &[crate::llm::Role::Judge])
    }
    fn preflight(&self, scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        super::roles::preflight(
            scope,
            &self.roles,
            self.prompts.as_deref(),
            &[(crate::llm::Role::Judge, "judge")],
        )
    }
}

impl TypedStage for TasksStage {
    type Config = TasksConfig;
    fn name(&self) -> &'static str {
        "tasks"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "emotions"]
    }
    fn source_files(&self, _domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        super::roles::prompt_sources(config, &[(crate::llm::Role::Judge, "judge")])
    }
    fn run(&self, ctx: &StageContext, cfg: &TasksConfig) -> Result<String, PipelineError> {
        let mut refined = read_emotions(ctx)?;
        refined.retain(|t| ctx.owns(&t.task_id));
        let envs = crate::project::SplitEnvs::load(&ctx.input_dir("db"), ctx.domain)?;
        let verdicts = crate::parallel::parallel_map(&refined, |t| {
            verify_task_with(envs.for_split(t.split), t, &cfg.gates)
        });
        let model = super::roles::open_role(ctx, &cfg.roles, crate::llm::Role::Judge)?;
        let jobs = refined
            .iter()
            .zip(verdicts)
            .map(|(task, verdict)| JudgeJob {
                verdict,
                instruction: task.instruction.clone().unwrap_or_default(),
                actions: crate::artifact::JsonText::to_json(&task.actions),
                seed: crate::seed::derive_seed(ctx.seed, &["judge", &task.task_id]),
            })
            .collect();
        let prompt = super::roles::role_prompt(ctx, &model, cfg.prompts.as_deref(), "judge")?;
        let verdicts = crate::roles::judge::task_judge(&model, prompt)
            .settle(jobs)
            .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        let errored: Vec<(String, String)> = refined
            .iter()
            .zip(&verdicts)
            .filter_map(|(t, v)| match v {
                Err(r) if r.kind == crate::verify::RejectKind::EndpointError => {
                    Some((t.task_id.clone(), r.reason.clone()))
                }
                _ => None,
            })
            .collect();
        super::roles::settle_errored(
            ctx,
            "judge requests",
            &errored,
            refined.len(),
            cfg.max_errored_share,
        )?;
        let mut kept = Vec::new();
        let mut rejects = Vec::new();
        for (task, verdict) in refined.into_iter().zip(verdicts) {
            match verdict {
                Ok(()) => kept.push(task),
                Err(r) => rejects.push(RejectRecord {
                    domain: task.domain.clone(),
                    split: task.split,
                    trace_id: task.trace_id.clone(),
                    task_id: Some(task.task_id.clone()),
                    stage: "tasks".into(),
                    reason_kind: r.kind.as_str().into(),
                    rule: r.rule.map(str::to_string),
                    reason: r.reason,
                }),
            }
        }
        write_tasks(ctx, &kept, &rejects)
    }
    fn shardable(&self) -> bool {
        true
    }
    fn merge(
        &self,
        ctx: &StageContext,
        _cfg: &TasksConfig,
        parts: &[PathBuf],
    ) -> Result<String, PipelineError> {
        let input = read_emotions(ctx)?;
        let order = super::positions(input.iter().map(|t| t.task_id.as_str()));
        let kept = super::merge_rows(ctx, parts, "part-00000.parquet", |t: &TaskRecord| {
            order.get(&t.task_id).copied()
        })?;
        let rejects = super::merge_rows(ctx, parts, "_rejects.parquet", |r: &RejectRecord| {
            order.get(r.task_id.as_deref()?).copied()
        })?;
        write_tasks(ctx, &kept, &rejects)
    }
}
