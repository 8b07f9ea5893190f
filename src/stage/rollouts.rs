//! `rollouts` stage: every verified training task rolled out `trials` times — agent x
//! emotion-conditioned user x a fresh fork of the environment — with the reward and its
//! breakdown, the full transcript (tool calls, tool results, reasoning), counts and tokens.
//!
//! Episodes run concurrently on a tokio runtime (bounded by `concurrency`). Each finished
//! episode is appended to a journal outside the output directory; a killed run resumes from
//! it, skipping what is done, and the final artifact is sorted by (task, trial), so it equals
//! an uninterrupted run's. Episodes that ended on endpoint errors are recorded with the cause
//! (and excluded from training data by `trajectories`).
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
use std::io::Write;
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
        cfg.check().map_err(|message| ConfigError::File {
            path: path.display().to_string(),
            message,
        })?;
        Ok(cfg)
    }

    pub fn check(&self) -> Result<(), String> {
        if !["train", "eval"].contains(&self.split.as_str()) {
            return Err(format!(
                "split: must be 'train' or 'eval', not '{}'",
                self.split
            ));
        }
        if self.trials == 0 || self.concurrency == 0 || self.max_steps == 0 {
            return Err("trials, concurrency and max_steps must be at least 1".into());
        }
        Ok(())
    }
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

/// Episodes already in the journal (a partial last line from a kill is ignored).
fn read_journal(path: &Path) -> Vec<RolloutRecord> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Roll out `tasks` x `trials` with the scripted roles, resuming from `journal`.
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

pub fn roll_out(
    base: Arc<dyn Environment>,
    policy: Arc<String>,
    tasks: &[TaskRecord],
    cfg: &RolloutsConfig,
    roles: &EpisodeRoles,
    seed: u64,
    journal: &Path,
) -> Result<Vec<RolloutRecord>, String> {
    let done = read_journal(journal);
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
    if let Some(dir) = journal.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(journal)
        .map_err(|e| format!("{}: {e}", journal.display()))?;
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
                    journal_line(&mut file, &rec)?;
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
            journal_line(&mut file, &rec)?;
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
    results.sort_by_key(|r| {
        (
            order.get(r.task_id.as_str()).copied().unwrap_or(usize::MAX),
            r.trial,
        )
    });
    Ok(results)
}

fn journal_line(file: &mut std::fs::File, rec: &RolloutRecord) -> Result<(), String> {
    let mut line = serde_json::to_string(rec).map_err(|e| e.to_string())?;
    line.push('\n');
    file.write_all(line.as_bytes())
        .map_err(|e| format!("journal: {e}"))
}

/// The reward mix of some rollouts, for summaries.
pub fn reward_mix(rows: &[RolloutRecord]) -> String {
    let n = |r: i32| {
        rows.iter()
            .filter(|x| x.reward == r && x.error.is_none())
            .count()
    };
    let errored = rows.iter().filter(|x| x.error.is_some()).count();
    format!(
        "R=1 {} / R=0 {} / R=-1 {} / errored {}",
        n(1),
        n(0),
        n(-1),
        errored
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
    let journal = ctx.journal_path();
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
    let rows = roll_out(
        base,
        Arc::new(policy),
        &tasks,
        cfg,
        &roles,
        ctx.seed,
        &journal,
    )
    .map_err(|e| ctx.fail(e))?;
    Ok(rows)
}

impl Stage for RolloutsStage {
    fn name(&self) -> &'static str {
        "rollouts"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "tasks"]
    }
    fn source_files(&self, domain: &str) -> Vec<std::path::PathBuf> {
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
        let _ = std::fs::remove_file(ctx.journal_path());
        Ok(format!("{} episodes: {}", rows.len(), reward_mix(&rows)))
    }
}
