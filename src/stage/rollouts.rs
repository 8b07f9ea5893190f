//! `rollouts` and `eval`: one stage, two registry entries. `rollouts` rolls every verified
//! training task out `trials` times (the paper: once, at most 50 steps); `eval` runs k
//! trials per evaluation task (default 3, at most 200 steps) and also writes the scores as
//! `report.json` and `report.md`. The episodes themselves run in [`crate::harness::batch`]
//! and are scored by [`crate::harness::metrics`].
//!
//! Each finished episode is appended to a keyed journal outside the output directory; a
//! killed run resumes from it, skipping what is done, and the final artifact equals an
//! uninterrupted run's. Errors are accounted by who caused them: an infrastructure failure
//! (endpoint unreachable, 5xx or 429 after the retries, timeouts, the user simulator's
//! endpoint) says nothing about the agent, never reaches training data, is left out of the
//! scores; when their share exceeds `max_errored_share` (default 0) the stage fails and
//! stays stale, and the rerun redoes exactly those. Failures under the share are tolerated:
//! the stage succeeds with them as errored rows and warns that only `--force` retries them. An
//! agent error (a malformed tool call or answer) scores 0 and counts in every score.

use crate::artifact::{self, RolloutRecord, TaskRecord};
use crate::config::ConfigError;
use crate::domain::Environment;
use crate::harness::batch::{self, BatchConfig};
use crate::harness::metrics::{self, percent_with_interval, report, report_table, reward_mix};
use crate::llm::Role;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::rollout::{self, RolloutsConfig};
use std::path::Path;
use std::sync::Arc;

/// The rollout stage, parameterised: which stage name it runs as, which stage's tasks it
/// rolls out, and what it writes besides the episodes.
pub struct RolloutsStage {
    name: &'static str,
    /// The stage whose `part-00000.parquet` holds the tasks (a `TaskRecord` artifact).
    tasks_from: &'static str,
    inputs: &'static [&'static str],
    output: Output,
}

/// What a rollout stage writes besides its episodes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    /// The episodes only (`part-00000.parquet`).
    Episodes,
    /// The episodes and the scores (`report.json`, `report.md`).
    Scores,
    /// Screening: the tasks solved at least `min_successes` times as `part-00000.parquet`
    /// (the artifact downstream stages read), the others in `_rejects.parquet`, the
    /// episodes in `episodes.parquet`.
    Screen,
}

/// Training rollouts (the `trajectories` stage keeps their reward-1 episodes).
pub const ROLLOUTS: RolloutsStage = RolloutsStage {
    name: "rollouts",
    tasks_from: "tasks",
    inputs: &["db", "tasks"],
    output: Output::Episodes,
};

/// Screening of the evaluation candidates by a model rollout (the paper's 2,266 -> 884
/// step): k trials per verified evaluation task; a task no trial solves is dropped.
pub const SCREENED: RolloutsStage = RolloutsStage {
    name: "screened",
    tasks_from: "tasks",
    inputs: &["db", "tasks"],
    output: Output::Screen,
};

/// Evaluation: k trials per task of the evaluation release (screened, then reviewed),
/// scored.
pub const EVAL: RolloutsStage = RolloutsStage {
    name: rollout::EVAL_STAGE,
    tasks_from: "reviewed",
    inputs: &["db", "reviewed"],
    output: Output::Scores,
};

/// The episodes file of each rollout stage.
pub fn episodes_file(stage: &str) -> &'static str {
    if stage == SCREENED.name {
        "episodes.parquet"
    } else {
        "part-00000.parquet"
    }
}

/// The tasks of the configured split, in the order their episodes are written.
fn read_tasks(
    ctx: &StageContext,
    from: &str,
    cfg: &RolloutsConfig,
) -> Result<Vec<TaskRecord>, PipelineError> {
    let (tasks, _) =
        artifact::read_records::<TaskRecord>(&ctx.input_dir(from).join("part-00000.parquet"))?;
    Ok(tasks.into_iter().filter(|t| t.split == cfg.split).collect())
}

/// Run the configured rollouts for one domain (the tasks of stage `from` that `ctx` owns);
/// the tasks and their episodes.
pub fn run_stage(
    ctx: &StageContext,
    from: &str,
    cfg: &RolloutsConfig,
) -> Result<(Vec<TaskRecord>, Vec<RolloutRecord>), PipelineError> {
    let tasks: Vec<TaskRecord> = read_tasks(ctx, from, cfg)?
        .into_iter()
        .filter(|t| ctx.owns(&t.task_id))
        .collect();
    let split = cfg.split;
    let base: Arc<dyn Environment> = Arc::from(crate::project::load_db(
        &ctx.input_dir("db"),
        ctx.domain,
        split,
    )?);
    let policy = crate::project::read_policy(ctx.paths, ctx.domain, base.as_ref())
        .map_err(|e| ctx.fail(ErrorKind::Environment, e))?;
    let user_prompt =
        rollout::user_prompt(ctx.paths, cfg).map_err(|e| ctx.fail(ErrorKind::Config, e))?;
    let roles = batch::open_roles(
        &cfg.roles,
        cfg.concurrency,
        &ctx.response_cache(),
        user_prompt,
    )
    .map_err(|e| ctx.fail(ErrorKind::Endpoint, e.to_string()))?;
    let resumed = rollout::open_journal(
        &ctx.journal_path(),
        &ctx.journal_key(),
        ctx.stage,
        crate::pipeline::OnMismatch::StartFresh,
    )?;
    let episodes = rollout::Episodes {
        env: base,
        policy: Arc::new(policy),
        tasks: &tasks,
        batch: BatchConfig {
            label: format!(
                "{} {}{}",
                ctx.stage,
                ctx.domain.name(),
                ctx.shard.map_or(String::new(), |s| format!(" [shard {s}]"))
            ),
            ..cfg.batch()
        },
        roles: &roles,
        seed: ctx.seed,
    };
    let (who, retry) = voice_parts(ctx);
    // Over the threshold the stage fails: no output is swapped in, the journal stays.
    let rows = rollout::roll_out_journaled(
        episodes,
        resumed,
        cfg.max_errored_share,
        &rollout::Voice {
            who: &who,
            retry: &retry,
        },
    )
    .map_err(|e| ctx.fail(e.kind(), e.to_string()))?;
    // The cost of the episodes written, journaled ones included: from the rows, not from
    // the endpoints' counters (a resumed run never asks again for what the journal holds).
    let (agent, user) = batch::episode_usage(&rows);
    for (role, model, tokens) in [
        (Role::Agent, &roles.agent, agent),
        (Role::User, &roles.user, user),
    ] {
        let cfg = cfg.roles.get(&role).cloned().unwrap_or_default();
        let entry = crate::llm::usage_record(role, &cfg, model.model_id(), tokens);
        ctx.track_usage(move || entry.clone());
    }
    Ok((tasks, rows))
}

impl StageConfig for RolloutsConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        RolloutsConfig::check(self, path)
    }
    fn preflight(&self, scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        super::roles::preflight(
            scope,
            &self.roles,
            self.prompts.as_deref(),
            &[(Role::User, "user")],
        )
    }
}

impl TypedStage for RolloutsStage {
    type Config = RolloutsConfig;
    fn name(&self) -> &'static str {
        self.name
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        self.inputs
    }
    fn source_files(&self, domain: &str, config: &toml::Table) -> Vec<std::path::PathBuf> {
        let mut files = crate::project::policy_sources(domain);
        files.extend(super::roles::prompt_sources(
            config,
            &[(Role::User, "user")],
        ));
        files
    }
    fn run(&self, ctx: &StageContext, cfg: &RolloutsConfig) -> Result<String, PipelineError> {
        let (tasks, rows) = run_stage(ctx, self.tasks_from, cfg)?;
        self.write_outputs(ctx, cfg, &tasks, &rows)
    }
    fn shardable(&self) -> bool {
        true
    }
    fn merge(
        &self,
        ctx: &StageContext,
        cfg: &RolloutsConfig,
        parts: &[std::path::PathBuf],
    ) -> Result<String, PipelineError> {
        let tasks = read_tasks(ctx, self.tasks_from, cfg)?;
        let order = super::positions(tasks.iter().map(|t| t.task_id.as_str()));
        // The order `batch::roll_out` returns: task order, then trial.
        let rows = super::merge_rows(ctx, parts, episodes_file(self.name), |r: &RolloutRecord| {
            Some((*order.get(&r.task_id)?, r.trial))
        })?;
        metrics::check_errored(&rows, cfg.max_errored_share)
            .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        let (who, retry) = voice_parts(ctx);
        rollout::warn_tolerated(
            &rows,
            cfg.max_errored_share,
            &rollout::Voice {
                who: &who,
                retry: &retry,
            },
        );
        self.write_outputs(ctx, cfg, &tasks, &rows)
    }
}

/// How the stage's warnings speak: of this stage and domain, retried by `--force`.
fn voice_parts(ctx: &StageContext) -> (String, String) {
    (
        format!("stage '{}', domain '{}': ", ctx.stage, ctx.domain.name()),
        format!("`tracer run {} --force` retries them", ctx.stage),
    )
}

impl RolloutsStage {
    /// Screening: keep the tasks solved at least `min_successes` times, in input order;
    /// the others are rejected with their trials' terminations.
    fn write_screened(
        &self,
        ctx: &StageContext,
        cfg: &RolloutsConfig,
        tasks: &[TaskRecord],
        rows: &[RolloutRecord],
    ) -> Result<String, PipelineError> {
        let (kept, rejects) = screen(tasks, rows, cfg.min_successes);
        let prov = ctx.provenance();
        artifact::write_records(&ctx.out("part-00000.parquet"), &kept, &prov)?;
        artifact::write_records(&ctx.out("_rejects.parquet"), &rejects, &prov)?;
        Ok(format!(
            "{} of {} tasks solved at least {} time(s) in {} trials ({} episodes: {})",
            kept.len(),
            tasks.len(),
            cfg.min_successes,
            cfg.trials,
            rows.len(),
            reward_mix(rows)
        ))
    }

    /// The episodes of `tasks`, and for `eval` the scores, for `screened` the kept tasks;
    /// the summary.
    fn write_outputs(
        &self,
        ctx: &StageContext,
        cfg: &RolloutsConfig,
        tasks: &[TaskRecord],
        rows: &[RolloutRecord],
    ) -> Result<String, PipelineError> {
        let prov = ctx.provenance();
        artifact::write_records(&ctx.out(episodes_file(self.name)), rows, &prov)?;
        match self.output {
            Output::Episodes => {
                return Ok(format!("{} episodes: {}", rows.len(), reward_mix(rows)));
            }
            Output::Screen => return self.write_screened(ctx, cfg, tasks, rows),
            Output::Scores => {}
        }
        let bootstrap = metrics::Bootstrap {
            resamples: cfg.bootstrap_resamples,
            seed: ctx.seed,
        };
        let rep = report(ctx.domain.name(), rows, cfg.trials, &bootstrap);
        let json = serde_json::to_vec_pretty(&rep).unwrap_or_default();
        artifact::write_atomic(&ctx.out("report.json"), &json)?;
        artifact::write_atomic(
            &ctx.out("report.md"),
            report_table(std::slice::from_ref(&rep)).as_bytes(),
        )?;
        Ok(format!(
            "{} tasks x {} trials: Avg@{} {}, Pass^{} {} ({})",
            rep.tasks,
            cfg.trials,
            cfg.trials,
            percent_with_interval(rep.avg_at_k, rep.avg_at_k_ci),
            cfg.trials,
            percent_with_interval(
                rep.pass_hat.last().copied().flatten(),
                rep.pass_hat_ci.last().copied().flatten()
            ),
            reward_mix(rows)
        ))
    }
}

/// Split `tasks` by their screening episodes: kept (at least `min_successes` reward-1
/// trials) and rejected (`reason_kind` "screening"). Episodes lost to the infrastructure
/// never get here: above `max_errored_share` the stage fails first.
pub fn screen(
    tasks: &[TaskRecord],
    rows: &[RolloutRecord],
    min_successes: u32,
) -> (Vec<TaskRecord>, Vec<artifact::RejectRecord>) {
    let mut by_task: std::collections::HashMap<&str, Vec<&RolloutRecord>> = Default::default();
    for r in rows {
        by_task.entry(r.task_id.as_str()).or_default().push(r);
    }
    let mut kept = Vec::new();
    let mut rejects = Vec::new();
    for t in tasks {
        let trials = by_task
            .get(t.task_id.as_str())
            .map_or(&[][..], Vec::as_slice);
        let solved = trials.iter().filter(|r| r.reward == 1).count();
        if solved >= min_successes as usize {
            kept.push(t.clone());
            continue;
        }
        let mut ends: Vec<String> = trials
            .iter()
            .map(|r| format!("reward {} ({})", r.reward, r.termination))
            .collect();
        ends.sort();
        ends.dedup();
        rejects.push(artifact::RejectRecord {
            domain: t.domain.clone(),
            split: t.split,
            trace_id: t.trace_id.clone(),
            task_id: Some(t.task_id.clone()),
            stage: "screened".into(),
            reason_kind: "screening".into(),
            rule: None,
            reason: format!(
                "solved {solved} of {} trials (needs {min_successes}): {}",
                trials.len(),
                ends.join(", ")
            ),
        });
    }
    (kept, rejects)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode(task: &str, trial: i32, reward: i32) -> RolloutRecord {
        RolloutRecord {
            task_id: task.into(),
            trial,
            reward,
            termination: if reward == 1 {
                "user_stop"
            } else {
                "max_steps"
            }
            .into(),
            ..Default::default()
        }
    }

    #[test]
    fn screening_keeps_tasks_solved_often_enough_in_input_order() {
        let tasks: Vec<TaskRecord> = ["a", "b", "c"]
            .iter()
            .map(|id| TaskRecord {
                task_id: id.to_string(),
                ..Default::default()
            })
            .collect();
        let rows = vec![
            episode("a", 0, 0),
            episode("a", 1, 1),
            episode("b", 0, 0),
            episode("b", 1, 0),
            episode("c", 0, 1),
            episode("c", 1, 1),
        ];
        let (kept, rejects) = screen(&tasks, &rows, 1);
        let ids: Vec<&str> = kept.iter().map(|t| t.task_id.as_str()).collect();
        assert_eq!(ids, ["a", "c"]);
        assert_eq!(rejects.len(), 1);
        assert_eq!(rejects[0].task_id.as_deref(), Some("b"));
        assert_eq!(rejects[0].reason_kind, "screening");
        assert!(
            rejects[0].reason.contains("solved 0 of 2"),
            "{}",
            rejects[0].reason
        );
        let (kept, _) = screen(&tasks, &rows, 2);
        assert_eq!(kept.len(), 1, "only c is solved twice");
    }

    #[test]
    fn the_split_is_parsed_as_a_split_and_a_bad_one_names_file_and_field() {
        let path = Path::new("stages/eval.toml");
        let table: toml::Table = "split = \"eval\"".parse().unwrap();
        assert_eq!(
            RolloutsConfig::load(path, &table).unwrap().split,
            crate::split::Split::Eval
        );
        let table: toml::Table = "split = \"test\"".parse().unwrap();
        let e = RolloutsConfig::load(path, &table).unwrap_err().to_string();
        assert_eq!(
            e,
            "stages/eval.toml: split: unknown variant `test`, expected `train` or `eval`"
        );
    }

    #[test]
    fn min_successes_cannot_exceed_the_trials() {
        let path = Path::new("stages/screened.toml");
        let table: toml::Table = "trials = 2\nmin_successes = 3\nsplit = \"eval\""
            .parse()
            .unwrap();
        let e = RolloutsConfig::load(path, &table).unwrap_err().to_string();
        assert!(
            e.contains("screened.toml") && e.contains("min_successes"),
            "{e}"
        );
    }
}
