//! `rollouts` stage: every verified training task rolled out `trials` times — agent x
//! emotion-conditioned user x a fresh fork of the environment — with the reward and its
//! breakdown, the full transcript (tool calls, tool results, reasoning), counts and tokens.
//!
//! Episodes run concurrently on a tokio runtime (bounded by `concurrency`). Each finished
//! episode is appended to a keyed journal outside the output directory; a killed run resumes
//! from it, skipping what is done, and the final artifact is sorted by (task, trial), so it
//! equals an uninterrupted run's.
//!
//! Errors are accounted by who caused them. An *infrastructure* failure (endpoint
//! unreachable, 5xx or 429 after the retries, timeouts, the user simulator's endpoint) says
//! nothing about the agent: such episodes are recorded with the cause, never reach training
//! data, are left out of Avg@k / Pass^k, and are retried by the next run. When their share
//! exceeds `max_errored_share` (default 0) the stage fails and stays stale; the journal
//! keeps every other episode, so the rerun redoes exactly the errored ones. An *agent*
//! error (a malformed tool call or answer from the agent's model) is the agent's own
//! failure: it scores 0 and counts in every score.
//!
//! The same machinery serves the `eval` stage (k trials of the evaluation tasks).

use crate::artifact::{self, RolloutRecord, TaskRecord};
use crate::config::{ConfigError, ENV_EPISODE_DELAY_MS};
use crate::domain::Environment;
use crate::harness::agent::{ErrorRates, OracleAgent};
use crate::harness::endpoint::{EndpointAgent, EndpointUser};
use crate::harness::user::ScriptedUser;
use crate::harness::{Agent, Episode, User, reward, run_episode};
use crate::llm::{Role, RoleModel, RolesConfig};
use crate::pipeline::{PipelineError, Stage, StageContext};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

pub struct RolloutsStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutsConfig {
    /// Episodes per task.
    #[serde(default = "one")]
    pub trials: u32,
    /// Which tasks: `train` or `eval`.
    #[serde(default = "train")]
    pub split: String,
    /// Interaction steps (agent or user messages) before an episode is cut.
    #[serde(default = "fifty")]
    pub max_steps: usize,
    /// Episodes in flight at once.
    #[serde(default = "thirty_two")]
    pub concurrency: usize,
    /// Roll out the emotion-conditioned task (false: the no-emotion variant).
    #[serde(default = "yes")]
    pub emotion: bool,
    /// Mistake rates of the scripted oracle agent.
    #[serde(default)]
    pub agent_errors: ErrorRates,
    /// `[roles.agent]` and `[roles.user]`: scripted (default) or an endpoint.
    #[serde(default)]
    pub roles: RolesConfig,
    /// Largest share of episodes that may end on infrastructure failures for the stage to
    /// succeed; above it the stage fails, stays stale, and a rerun retries those episodes.
    #[serde(default)]
    pub max_errored_share: f64,
}

fn one() -> u32 {
    1
}
fn train() -> String {
    "train".into()
}
fn fifty() -> usize {
    50
}
fn thirty_two() -> usize {
    32
}
fn yes() -> bool {
    true
}

impl RolloutsConfig {
    /// Parse and check a rollouts/eval config (errors name the file and field).
    pub fn load(path: &Path, table: &toml::Table) -> Result<RolloutsConfig, ConfigError> {
        let cfg: RolloutsConfig = crate::config::parse_typed(path, table)?;
        cfg.check(path)?;
        Ok(cfg)
    }

    /// Ranges and roles; `path` names the file in errors. Also run on a config whose
    /// `trials` a command line overrode.
    pub fn check(&self, path: &Path) -> Result<(), ConfigError> {
        use crate::config::{Check, MAX_CONCURRENCY, MAX_STEPS, MAX_TRIALS};
        let c = Check::new(path);
        if !["train", "eval"].contains(&self.split.as_str()) {
            return Err(c.error(
                "split",
                format!("must be 'train' or 'eval', not '{}'", self.split),
            ));
        }
        c.count("trials", self.trials as usize, 1, MAX_TRIALS)?;
        c.count("max_steps", self.max_steps, 1, MAX_STEPS)?;
        c.count("concurrency", self.concurrency, 1, MAX_CONCURRENCY)?;
        c.share("max_errored_share", self.max_errored_share)?;
        let rates = &self.agent_errors;
        c.share("agent_errors.skip_confirmation", rates.skip_confirmation)?;
        c.share("agent_errors.redundant_question", rates.redundant_question)?;
        c.share("agent_errors.wrong_argument", rates.wrong_argument)?;
        c.share("agent_errors.premature_transfer", rates.premature_transfer)?;
        super::roles::check_roles(path, &self.roles, &[Role::Agent, Role::User])
    }
}

/// Whether an episode ended on an infrastructure failure (excluded from scores, retried);
/// an agent's own malformed output is not one.
pub fn is_infrastructure_failure(r: &RolloutRecord) -> bool {
    r.termination == crate::harness::Termination::EndpointError.as_str()
}

/// The journal's view of an episode: its id, and whether it is finished for good.
fn episode_id(r: &RolloutRecord) -> String {
    format!("{}\u{0}{}", r.task_id, r.trial)
}

/// Open a rollout journal: finished episodes (infrastructure failures are redone).
pub fn open_journal(
    path: &Path,
    key: &crate::pipeline::JournalKey,
    label: &str,
    on_mismatch: crate::pipeline::OnMismatch,
) -> Result<crate::pipeline::Resumed<RolloutRecord>, crate::pipeline::JournalError> {
    crate::pipeline::Journal::open(path, key, label, on_mismatch, episode_id, |r| {
        !is_infrastructure_failure(r)
    })
}

/// The errored share check: `Err` with a one-line account when infrastructure failures
/// exceed `max_share` of the episodes, naming how many and the first cause.
pub fn check_errored(rows: &[RolloutRecord], max_share: f64) -> Result<(), String> {
    let errored: Vec<&RolloutRecord> = rows
        .iter()
        .filter(|r| is_infrastructure_failure(r))
        .collect();
    if errored.is_empty() || errored.len() as f64 <= max_share * rows.len() as f64 {
        return Ok(());
    }
    let cause = errored[0].error.as_deref().unwrap_or("unknown cause");
    Err(format!(
        "{} of {} episodes errored on infrastructure (first: {cause}); the {} finished ones are kept, rerun to retry the errored ones (max_errored_share = {max_share})",
        errored.len(),
        rows.len(),
        rows.len() - errored.len()
    ))
}

/// The record of one finished episode.
pub fn rollout_record(
    task: &TaskRecord,
    trial: u32,
    ep: &Episode,
    agent_model: String,
    user_model: String,
    emotion: bool,
) -> RolloutRecord {
    let breakdown = reward::score(ep, &task.reference_hash, &task.outputs);
    let count = |role: &str| ep.messages.iter().filter(|m| m.role == role).count() as i32;
    let assistant_texts = ep
        .messages
        .iter()
        .filter(|m| m.role == "assistant" && m.tool_calls.is_empty());
    let follow_ups = assistant_texts
        .filter(|m| {
            m.content
                .as_deref()
                .is_some_and(|c| c.trim_end().ends_with('?'))
        })
        .count() as i32;
    let tool_calls = ep
        .messages
        .iter()
        .map(|m| m.tool_calls.len())
        .sum::<usize>() as i32;
    let reasoning_chars = ep
        .messages
        .iter()
        .filter_map(|m| m.reasoning_content.as_ref())
        .map(|r| r.chars().count() as i64)
        .sum();
    let gold_actions = serde_json::from_str::<Vec<serde_json::Value>>(&task.actions)
        .map(|a| a.len() as i32)
        .unwrap_or(0);
    let labels = |v: &Option<String>| if emotion { v.clone() } else { None };
    RolloutRecord {
        task_id: task.task_id.clone(),
        trial: trial as i32,
        domain: task.domain.clone(),
        split: task.split.clone(),
        emotion_family: labels(&task.emotion_family),
        emotion: labels(&task.emotion),
        politeness: labels(&task.politeness),
        urgency: labels(&task.urgency),
        trust: labels(&task.trust),
        agent_model,
        user_model,
        messages: serde_json::to_string(&ep.messages).unwrap_or_default(),
        reward: breakdown.reward,
        reward_breakdown: serde_json::to_string(&breakdown).unwrap_or_default(),
        termination: ep.termination.as_str().into(),
        user_turns: count("user"),
        // The fixed greeting is the harness's, not the agent's.
        assistant_turns: count("assistant") - 1,
        tool_calls,
        follow_up_questions: follow_ups,
        gold_actions,
        reasoning_chars,
        prompt_tokens: (ep.agent_usage.prompt_tokens + ep.user_usage.prompt_tokens) as i64,
        completion_tokens: (ep.agent_usage.completion_tokens + ep.user_usage.completion_tokens)
            as i64,
        error: ep.error.clone(),
    }
}

/// The two roles of an episode.
#[derive(Clone)]
pub struct EpisodeRoles {
    pub agent: RoleModel,
    pub user: RoleModel,
}

/// Build the agent and user of one episode.
fn episode_roles(
    roles: &EpisodeRoles,
    task: &TaskRecord,
    trial: u32,
    cfg: &RolloutsConfig,
    tools: &[serde_json::Value],
    transfer: Option<String>,
    seed: u64,
) -> (Box<dyn Agent>, Box<dyn User>) {
    let episode_seed =
        crate::seed::derive_seed(seed, &["episode", &task.task_id, &trial.to_string()]);
    let agent: Box<dyn Agent> = match &roles.agent {
        RoleModel::Endpoint(model) => Box::new(EndpointAgent {
            model: Arc::clone(model),
            tools: tools.to_vec(),
            seed: episode_seed,
        }),
        RoleModel::Scripted(_) => Box::new(OracleAgent::new(
            task,
            &cfg.agent_errors,
            transfer,
            seed,
            trial,
        )),
    };
    let user: Box<dyn User> = match &roles.user {
        RoleModel::Endpoint(model) => {
            let emotion = if cfg.emotion {
                task.emotion_instruction.as_deref()
            } else {
                None
            };
            Box::new(EndpointUser::new(
                Arc::clone(model),
                task.instruction.as_deref().unwrap_or_default(),
                emotion,
                episode_seed,
            ))
        }
        RoleModel::Scripted(_) => Box::new(ScriptedUser::new(task, cfg.emotion, seed, trial)),
    };
    (agent, user)
}

/// Roll out `tasks` x `trials`, resuming from the finished episodes of `resumed` (see
/// [`open_journal`]) and appending every new episode to its journal.
pub fn roll_out(
    base: Arc<dyn Environment>,
    policy: Arc<String>,
    tasks: &[TaskRecord],
    cfg: &RolloutsConfig,
    roles: &EpisodeRoles,
    seed: u64,
    resumed: crate::pipeline::Resumed<RolloutRecord>,
) -> Result<Vec<RolloutRecord>, String> {
    let crate::pipeline::Resumed {
        mut journal, done, ..
    } = resumed;
    let finished: HashSet<(String, i32)> =
        done.iter().map(|r| (r.task_id.clone(), r.trial)).collect();
    let mut todo = Vec::new();
    for task in tasks {
        for trial in 0..cfg.trials {
            if !finished.contains(&(task.task_id.clone(), trial as i32)) {
                todo.push((task.clone(), trial));
            }
        }
    }
    let delay_ms: u64 = std::env::var(ENV_EPISODE_DELAY_MS)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let transfer = base
        .tool_specs()
        .iter()
        .find(|s| s.terminates)
        .map(|s| s.name.to_string());
    let tools: Arc<Vec<serde_json::Value>> =
        Arc::new(base.tool_specs().iter().map(|s| s.openai()).collect());
    let total = tasks.len() * cfg.trials as usize;
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_prefix(format!(
        "rollouts {}",
        tasks.first().map(|t| t.domain.as_str()).unwrap_or("")
    ));
    bar.set_position(done.len() as u64);
    let runtime = super::roles::runtime()?;
    let mut results = done;
    let mut mix = BTreeMap::<i32, usize>::new();
    let mut tokens: i64 = results
        .iter()
        .map(|r| r.prompt_tokens + r.completion_tokens)
        .sum();
    for r in &results {
        *mix.entry(r.reward).or_default() += 1;
    }
    runtime.block_on(async {
        let limit = Arc::new(tokio::sync::Semaphore::new(cfg.concurrency));
        let mut set = tokio::task::JoinSet::new();
        for (task, trial) in todo {
            let permit = Arc::clone(&limit)
                .acquire_owned()
                .await
                .map_err(|e| e.to_string())?;
            let (base, policy, ecfg, transfer) = (
                Arc::clone(&base),
                Arc::clone(&policy),
                cfg.clone(),
                transfer.clone(),
            );
            let (roles, tools) = (roles.clone(), Arc::clone(&tools));
            set.spawn(async move {
                let _permit = permit;
                let mut env = base.fork();
                let (mut agent, mut user) =
                    episode_roles(&roles, &task, trial, &ecfg, &tools, transfer, seed);
                let ep = run_episode(
                    env.as_mut(),
                    &policy,
                    agent.as_mut(),
                    user.as_mut(),
                    ecfg.max_steps,
                )
                .await;
                if delay_ms > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
                }
                rollout_record(
                    &task,
                    trial,
                    &ep,
                    agent.model_id(),
                    user.model_id(),
                    ecfg.emotion,
                )
            });
            while set.len() >= cfg.concurrency {
                if let Some(done) = set.join_next().await {
                    let rec = done.map_err(|e| e.to_string())?;
                    journal.append(&rec).map_err(|e| e.to_string())?;
                    *mix.entry(rec.reward).or_default() += 1;
                    tokens += rec.prompt_tokens + rec.completion_tokens;
                    bar.set_message(format!(
                        "R=1 {} R=0 {} R=-1 {} tokens {tokens}",
                        mix.get(&1).unwrap_or(&0),
                        mix.get(&0).unwrap_or(&0),
                        mix.get(&-1).unwrap_or(&0)
                    ));
                    bar.inc(1);
                    results.push(rec);
                }
            }
        }
        while let Some(done) = set.join_next().await {
            let rec = done.map_err(|e| e.to_string())?;
            journal.append(&rec).map_err(|e| e.to_string())?;
            bar.inc(1);
            results.push(rec);
        }
        Ok::<(), String>(())
    })?;
    bar.finish_and_clear();
    let order: BTreeMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.task_id.as_str(), i))
        .collect();
    // Only this run's (task, trial) pairs, whatever a journal held.
    results.retain(|r| order.contains_key(r.task_id.as_str()) && (r.trial as u32) < cfg.trials);
    results.sort_by_key(|r| {
        (
            order.get(r.task_id.as_str()).copied().unwrap_or(usize::MAX),
            r.trial,
        )
    });
    Ok(results)
}

/// The reward mix of some rollouts, for summaries: rewards of the scored episodes (agent
/// errors among them, as failures), then the infrastructure failures left out.
pub fn reward_mix(rows: &[RolloutRecord]) -> String {
    let scored = || rows.iter().filter(|x| !is_infrastructure_failure(x));
    let n = |r: i32| scored().filter(|x| x.reward == r).count();
    let agent_errors = scored().filter(|x| x.error.is_some()).count();
    let infra = rows.len() - scored().count();
    format!(
        "R=1 {} / R=0 {} / R=-1 {} / agent errors {agent_errors} / infrastructure errors {infra}",
        n(1),
        n(0),
        n(-1),
    )
}

/// Run the configured rollouts for one domain (shared by `rollouts` and `eval`).
pub fn run_stage(
    ctx: &StageContext,
    cfg: &RolloutsConfig,
) -> Result<Vec<RolloutRecord>, PipelineError> {
    let (tasks, _) =
        artifact::read_records::<TaskRecord>(&ctx.input_dir("tasks").join("part-00000.parquet"))?;
    let tasks: Vec<TaskRecord> = tasks.into_iter().filter(|t| t.split == cfg.split).collect();
    let split = if cfg.split == "eval" {
        crate::domain::Split::Eval
    } else {
        crate::domain::Split::Train
    };
    let base: Arc<dyn Environment> =
        Arc::from(super::db::load_db(&ctx.input_dir("db"), ctx.domain, split)?);
    let policy =
        super::db::read_policy(ctx.paths, ctx.domain, base.as_ref()).map_err(|e| ctx.fail(e))?;
    // Unless a role sets its own limit, let it carry as many calls as there are episodes in
    // flight (the layer's default of 8 would otherwise throttle a rollout of 32).
    let mut role_cfgs = cfg.roles.clone();
    for r in role_cfgs.values_mut() {
        r.concurrency.get_or_insert(cfg.concurrency);
    }
    let roles = EpisodeRoles {
        agent: super::roles::open_role(ctx, &role_cfgs, Role::Agent)?,
        user: super::roles::open_role(ctx, &role_cfgs, Role::User)?,
    };
    let resumed = open_journal(
        &ctx.journal_path(),
        &ctx.journal_key(),
        ctx.stage,
        crate::pipeline::OnMismatch::StartFresh,
    )?;
    let rows = roll_out(
        base,
        Arc::new(policy),
        &tasks,
        cfg,
        &roles,
        ctx.seed,
        resumed,
    )
    .map_err(|e| ctx.fail(e))?;
    // Over the threshold the stage fails: no output is swapped in, the journal stays.
    check_errored(&rows, cfg.max_errored_share).map_err(|e| ctx.fail(e))?;
    Ok(rows)
}

impl Stage for RolloutsStage {
    fn name(&self) -> &'static str {
        "rollouts"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "tasks"]
    }
    fn source_files(&self, domain: &str, _config: &toml::Table) -> Vec<std::path::PathBuf> {
        super::db::policy_sources(domain)
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        RolloutsConfig::load(path, table).map(|_| ())
    }
    fn preflight(&self, path: &Path, table: &toml::Table) -> Result<(), String> {
        let cfg = RolloutsConfig::load(path, table).map_err(|e| e.to_string())?;
        super::roles::preflight_roles(&cfg.roles)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: RolloutsConfig = ctx.typed_config()?;
        let rows = run_stage(ctx, &cfg)?;
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        Ok(format!("{} episodes: {}", rows.len(), reward_mix(&rows)))
    }
}
