//! `refined` stage: reverse refinement — the grounded task becomes a natural user
//! instruction: second person, the goals of each intent in order with connectives, a
//! feasible preference and some natural ambiguity, the facts the customer needs (payment
//! methods described the way a customer knows them) and, last, how to authenticate. Never an
//! internal id a customer could not know.
//!
//! The scripted refiner is template-based with seeded variation (per task), built from the
//! domain's own request sentences (`describe_request`) and user facts; after the name it
//! says who the customer is (`situations.toml`), and it words the fixed phrases around
//! values one way per task (`wordings.toml`), so a domain's tasks neither open alike nor
//! share their six-word runs. Its output passes the same checks an LLM refiner's would (no
//! forbidden id, every needed fact present), and a task that fails them is rejected with
//! the reason.

use crate::artifact::{self, RejectRecord, TaskRecord};
use crate::config::ConfigError;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::roles::RefineJob;
use crate::roles::refiner::Refined;
use crate::seed::derive_rng;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub struct RefinedStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefinedConfig {
    /// Probability of adding a preference sentence.
    #[serde(default = "half")]
    pub preference_rate: f64,
    /// Probability of asking the user to reveal details gradually (natural ambiguity).
    #[serde(default = "half")]
    pub ambiguity_rate: f64,
    /// Probability of telling who the customer is right after their name ("You are a
    /// busy nurse who books flights for the whole household."; `situations.toml`).
    #[serde(default = "one")]
    pub situation_rate: f64,
    /// `[roles.refiner]`: scripted (templates, the default) or an endpoint that rewrites the
    /// template draft; its output must pass the same checks.
    #[serde(default)]
    pub roles: crate::llm::RolesConfig,
    /// The directory of the role prompts (`prompts/` by default; the roles file may name
    /// another): an endpoint refiner sends `<prompts>/refiner.md`.
    #[serde(default)]
    pub prompts: Option<String>,
    /// What becomes of a task whose model answer was refused twice by the checks: `draft`
    /// (the default) keeps the template draft as its instruction, marked `fallback` in the
    /// `refinement` column; `drop` rejects the task (reason kind `refused`).
    #[serde(default)]
    pub on_refused: OnRefused,
    /// Share of tasks whose refiner request may fail at the endpoint (after its retries)
    /// before the stage fails and stays stale; failed ones are errored, never rejected.
    #[serde(default)]
    pub max_errored_share: f64,
}

/// What a task whose model answers were refused twice becomes (`on_refused`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnRefused {
    #[default]
    Draft,
    Drop,
}

fn half() -> f64 {
    0.5
}

fn one() -> f64 {
    1.0
}

mod draft;

pub use draft::{scripted_instruction, situation, vary_wording};

/// The gates that depend on an instruction's words (the rest, answered requests and the
/// number of actions, are the task's and are checked by verification).
fn instruction_gates() -> crate::verify::Gates {
    crate::verify::Gates {
        answered: false,
        max_actions: usize::MAX,
        ..Default::default()
    }
}

/// The rule or kind a refusal names (`form: preamble: ...` -> `form`).
fn rule_of(reason: &str) -> &str {
    reason.split(':').next().unwrap_or("refused").trim()
}

fn reject_row(task: &TaskRecord, reason: String) -> RejectRecord {
    RejectRecord {
        domain: task.domain.clone(),
        split: task.split,
        trace_id: task.trace_id.clone(),
        task_id: Some(task.task_id.clone()),
        stage: "refined".into(),
        reason_kind: reason.split(':').next().unwrap_or("refinement").to_string(),
        rule: None,
        reason,
    }
}

fn read_grounded(ctx: &StageContext) -> Result<Vec<TaskRecord>, PipelineError> {
    Ok(
        artifact::read_records::<TaskRecord>(
            &ctx.input_dir("grounded").join("part-00000.parquet"),
        )?
        .0,
    )
}

/// Write the refined tasks and the rejections; the summary.
fn write_refined(
    ctx: &StageContext,
    kept: &[TaskRecord],
    rejects: &[RejectRecord],
) -> Result<String, PipelineError> {
    let prov = ctx.provenance();
    artifact::write_records(&ctx.out("part-00000.parquet"), kept, &prov)?;
    artifact::write_records(&ctx.out("_rejects.parquet"), rejects, &prov)?;
    Ok(format!(
        "{} instructions written ({} rejected)",
        kept.len(),
        rejects.len()
    ))
}

impl StageConfig for RefinedConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let c = crate::config::Check::new(path);
        c.share("preference_rate", self.preference_rate)?;
        c.share("ambiguity_rate", self.ambiguity_rate)?;
        c.share("situation_rate", self.situation_rate)?;
        c.share("max_errored_share", self.max_errored_share)?;
        crate::llm::config::check_roles(path, &self.roles, &[crate::llm::Role::Refiner])
    }
    fn preflight(&self, scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        super::roles::preflight(
            scope,
            &self.roles,
            self.prompts.as_deref(),
            &[(crate::llm::Role::Refiner, "refiner")],
        )
    }
}

impl TypedStage for RefinedStage {
    type Config = RefinedConfig;
    fn name(&self) -> &'static str {
        "refined"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "grounded"]
    }
    fn source_files(&self, _domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        super::roles::prompt_sources(config, &[(crate::llm::Role::Refiner, "refiner")])
    }
    fn run(&self, ctx: &StageContext, cfg: &RefinedConfig) -> Result<String, PipelineError> {
        let mut grounded = read_grounded(ctx)?;
        grounded.retain(|t| ctx.owns(&t.task_id));
        let db_dir = ctx.input_dir("db");
        let envs = std::sync::Arc::new(crate::project::SplitEnvs::load(&db_dir, ctx.domain)?);
        let specs = ctx.domain.tool_specs();
        let is_read = |tool: &str| {
            specs
                .iter()
                .any(|s| s.name == tool && s.kind == crate::domain::ToolKind::Read)
        };
        let model = super::roles::open_role(ctx, &cfg.roles, crate::llm::Role::Refiner)?;
        let prompt = super::roles::role_prompt(ctx, &model, cfg.prompts.as_deref(), "refiner")?;
        let refiner = crate::roles::refiner::refiner(&model, prompt);
        let drafts: Vec<Result<String, String>> = grounded
            .iter()
            .map(|task| {
                let mut rng = derive_rng(ctx.seed, &["refined", &task.domain, &task.task_id]);
                scripted_instruction(task, &is_read, &mut rng, cfg)
                    .map_err(|e| format!("no_request: {e}"))
            })
            .collect();
        let grounded = std::sync::Arc::new(grounded);
        let draft_texts: Vec<String> = drafts
            .iter()
            .map(|d| d.as_ref().map_or(String::new(), String::clone))
            .collect();
        let check: std::sync::Arc<crate::roles::refiner::Checker> = {
            let (envs, grounded) = (
                std::sync::Arc::clone(&envs),
                std::sync::Arc::clone(&grounded),
            );
            std::sync::Arc::new(move |i: usize, text: &str| {
                let task = &grounded[i];
                crate::verify::check_instruction(
                    envs.for_split(task.split),
                    task,
                    text,
                    &instruction_gates(),
                    &draft_texts[i],
                )
                .map_err(|r| r.reason)
            })
        };
        let jobs = drafts
            .iter()
            .zip(grounded.iter())
            .map(|(draft, task)| RefineJob {
                draft: draft.clone(),
                facts: task.user_facts.clone(),
                domain: task.domain.clone(),
                seed: crate::seed::derive_seed(ctx.seed, &["refined", &task.task_id]),
            })
            .collect();
        let outcomes = refiner
            .refine(jobs, check)
            .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        let refiner_id = refiner.model_id();
        let scripted = model.is_scripted();
        let mut kept = Vec::new();
        let mut rejects = Vec::new();
        let mut errored: Vec<(String, String)> = Vec::new();
        let grounded = std::sync::Arc::try_unwrap(grounded).unwrap_or_else(|a| (*a).clone());
        for ((task, outcome), draft) in grounded.into_iter().zip(outcomes).zip(drafts) {
            let env = envs.for_split(task.split);
            let (instruction, refinement) = match outcome {
                Refined::Answer { text, retried } => (
                    Ok(text),
                    (!scripted).then(|| if retried { "retried" } else { "first" }.to_string()),
                ),
                Refined::NoDraft(why) => (Err(why), None),
                Refined::Refused(reasons) => {
                    let last = reasons.last().cloned().unwrap_or_default();
                    match (cfg.on_refused, draft) {
                        (OnRefused::Draft, Ok(draft)) => {
                            (Ok(draft), Some(format!("fallback: {}", rule_of(&last))))
                        }
                        _ => (
                            Err(format!("refused: twice by the checks; last: {last}")),
                            None,
                        ),
                    }
                }
                Refined::Errored(why) => {
                    errored.push((task.task_id.clone(), why.clone()));
                    rejects.push(reject_row(&task, format!("errored: {why}")));
                    continue;
                }
            };
            // The checks every instruction meets here (a model's answer has met them all
            // already); a gap only a reader can settle goes on to the judge in `tasks`.
            let checked = instruction.and_then(|instruction| {
                crate::verify::check_no_internal_ids(env, &task, &instruction)
                    .map_err(|e| format!("forbidden_id: {e}"))?;
                match crate::verify::information_gaps(
                    env,
                    &task,
                    &task.user_facts,
                    &instruction,
                    &crate::verify::reference_outputs(env, &task),
                ) {
                    crate::verify::Gaps::Hard(e) => Err(format!("information: {e}")),
                    _ => Ok(instruction),
                }
            });
            match checked {
                Ok(instruction) => kept.push(TaskRecord {
                    instruction: Some(instruction),
                    refiner: Some(refiner_id.clone()),
                    refinement,
                    ..task
                }),
                Err(reason) => rejects.push(reject_row(&task, reason)),
            }
        }
        super::roles::settle_errored(
            ctx,
            "refiner requests",
            &errored,
            kept.len() + rejects.len(),
            cfg.max_errored_share,
        )?;
        write_refined(ctx, &kept, &rejects)
    }
    fn shardable(&self) -> bool {
        true
    }
    fn merge(
        &self,
        ctx: &StageContext,
        _cfg: &RefinedConfig,
        parts: &[PathBuf],
    ) -> Result<String, PipelineError> {
        let grounded = read_grounded(ctx)?;
        let order = super::positions(grounded.iter().map(|t| t.task_id.as_str()));
        let kept = super::merge_rows(ctx, parts, "part-00000.parquet", |t: &TaskRecord| {
            order.get(&t.task_id).copied()
        })?;
        let rejects = super::merge_rows(ctx, parts, "_rejects.parquet", |r: &RejectRecord| {
            order.get(r.task_id.as_deref()?).copied()
        })?;
        write_refined(ctx, &kept, &rejects)
    }
}

#[cfg(test)]
mod tests;
