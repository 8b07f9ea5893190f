//! A batch of episodes: agent x emotion-conditioned user x a fresh fork of the environment
//! per (task, trial), run concurrently on a tokio runtime (bounded by `concurrency`), each
//! finished episode handed to the caller's journal at once, each scored into a rollout
//! record (reward and breakdown, the full transcript with tool calls, tool results and
//! reasoning, counts and tokens). The `rollouts` and `eval` stages and `tracer rollout`
//! all run their episodes here.
//!
//! Architecture invariant: knows domains through `Environment`, models through the role
//! layer, tasks and episodes through their records; nothing of stages, journals or files.

use super::MessageRole;
use super::agent::{ErrorRates, OracleAgent};
use super::endpoint::{EndpointAgent, EndpointUser};
use super::user::ScriptedUser;
use super::{Agent, Episode, User, reward, run_episode};
use crate::artifact::{RolloutRecord, TaskRecord};
use crate::config::ENV_EPISODE_DELAY_MS;
use crate::domain::Environment;
use crate::llm::{Role, RoleModel, RolesConfig};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

/// What shapes a batch of episodes.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchConfig {
    /// Episodes per task.
    pub trials: u32,
    /// Interaction steps (agent or user messages) before an episode is cut.
    pub max_steps: usize,
    /// Episodes in flight at once.
    pub concurrency: usize,
    /// Roll out the emotion-conditioned task (false: the no-emotion variant).
    pub emotion: bool,
    /// Mistake rates of the scripted oracle agent.
    pub agent_errors: ErrorRates,
    /// How progress lines name this batch (e.g. `rollouts airline [shard 1/3]`); empty:
    /// `rollouts <domain>`. Never part of any result.
    pub label: String,
}

/// The record of one finished episode.
pub fn rollout_record(
    task: &TaskRecord,
    trial: u32,
    ep: &Episode,
    agent_model: String,
    user_model: String,
    emotion: bool,
    injected_mistakes: Option<Vec<String>>,
) -> RolloutRecord {
    let breakdown = reward::score(ep, &task.reference_hash, &task.outputs);
    let count = |role: MessageRole| ep.messages.iter().filter(|m| m.role == role).count() as i32;
    let assistant_texts = ep
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::Assistant && m.tool_calls.is_empty());
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
    let gold_actions = task.actions.len() as i32;
    let labels = |v: &Option<String>| if emotion { v.clone() } else { None };
    RolloutRecord {
        task_id: task.task_id.clone(),
        trial: trial as i32,
        domain: task.domain.clone(),
        split: task.split,
        emotion_family: labels(&task.emotion_family),
        emotion: labels(&task.emotion),
        politeness: labels(&task.politeness),
        urgency: labels(&task.urgency),
        trust: labels(&task.trust),
        agent_model,
        user_model,
        messages: ep.messages.clone(),
        reward: breakdown.reward,
        reward_breakdown: serde_json::to_string(&breakdown).unwrap_or_default(),
        termination: ep.termination.as_str().into(),
        user_turns: count(MessageRole::User),
        // The fixed greeting is the harness's, not the agent's.
        assistant_turns: count(MessageRole::Assistant) - 1,
        tool_calls,
        follow_up_questions: follow_ups,
        gold_actions,
        reasoning_chars,
        prompt_tokens: (ep.agent_usage.prompt_tokens + ep.user_usage.prompt_tokens) as i64,
        completion_tokens: (ep.agent_usage.completion_tokens + ep.user_usage.completion_tokens)
            as i64,
        agent_prompt_tokens: ep.agent_usage.prompt_tokens as i64,
        agent_cached_prompt_tokens: ep.agent_usage.cached_prompt_tokens as i64,
        agent_completion_tokens: ep.agent_usage.completion_tokens as i64,
        user_prompt_tokens: ep.user_usage.prompt_tokens as i64,
        user_cached_prompt_tokens: ep.user_usage.cached_prompt_tokens as i64,
        user_completion_tokens: ep.user_usage.completion_tokens as i64,
        error: ep.error.clone(),
        injected_mistakes,
    }
}

/// The tokens of the agent and of the user simulator over these episodes, from their
/// records (so a resumed batch counts the journaled episodes too).
pub fn episode_usage(rows: &[RolloutRecord]) -> (crate::llm::Usage, crate::llm::Usage) {
    let tokens = |n: i64| u64::try_from(n).unwrap_or(0);
    let mut agent = crate::llm::Usage::default();
    let mut user = crate::llm::Usage::default();
    for r in rows {
        agent += crate::llm::Usage {
            prompt_tokens: tokens(r.agent_prompt_tokens),
            cached_prompt_tokens: tokens(r.agent_cached_prompt_tokens),
            completion_tokens: tokens(r.agent_completion_tokens),
        };
        user += crate::llm::Usage {
            prompt_tokens: tokens(r.user_prompt_tokens),
            cached_prompt_tokens: tokens(r.user_cached_prompt_tokens),
            completion_tokens: tokens(r.user_completion_tokens),
        };
    }
    (agent, user)
}

/// The two roles of an episode.
#[derive(Clone)]
pub struct EpisodeRoles {
    pub agent: RoleModel,
    pub user: RoleModel,
    /// The user simulator's rules (`prompts/user.md`), when the user is an endpoint.
    pub user_prompt: Arc<crate::llm::Prompt>,
}

impl EpisodeRoles {
    /// Wait until both roles' answers so far are in their response cache for good: an
    /// episode is written to its journal only after its answers are, so resuming never finds
    /// a finished episode whose answers a crash took. `Err` once a cache commit has failed.
    pub async fn sync(&self) -> Result<(), crate::llm::LlmError> {
        self.agent.sync().await?;
        self.user.sync().await
    }
}

/// Open the two roles of a batch from their `[roles.*]` tables (scripted when absent).
/// An endpoint role that sets no `concurrency` of its own carries as many calls as there
/// are episodes in flight (the layer's default of 8 would throttle a batch of 32): the
/// `rollouts` and `eval` stages and `tracer rollout` all open their roles here.
pub fn open_roles(
    roles: &RolesConfig,
    concurrency: usize,
    cache: &std::path::Path,
    user_prompt: Arc<crate::llm::Prompt>,
) -> Result<EpisodeRoles, crate::llm::LlmError> {
    let open = |role: Role| {
        let mut cfg = roles.get(&role).cloned().unwrap_or_default();
        cfg.concurrency.get_or_insert(concurrency);
        crate::llm::build_role(role, &cfg, cache)
    };
    Ok(EpisodeRoles {
        agent: open(Role::Agent)?,
        user: open(Role::User)?,
        user_prompt,
    })
}

/// Build the agent and user of one episode.
#[allow(clippy::too_many_arguments)]
fn episode_players(
    roles: &EpisodeRoles,
    task: &TaskRecord,
    trial: u32,
    cfg: &BatchConfig,
    tools: &Arc<[serde_json::Value]>,
    transfer: Option<String>,
    env: &dyn crate::domain::Environment,
    seed: u64,
) -> (Box<dyn Agent>, Box<dyn User>) {
    let episode_seed =
        crate::seed::derive_seed(seed, &["episode", &task.task_id, &trial.to_string()]);
    let agent: Box<dyn Agent> = match &roles.agent {
        RoleModel::Endpoint(model) => Box::new(EndpointAgent {
            model: Arc::clone(model),
            tools: Arc::clone(tools),
            seed: episode_seed,
        }),
        RoleModel::Scripted(_) => {
            let identify = super::discovery::identify_call(env, task);
            Box::new(OracleAgent::new(
                task,
                &cfg.agent_errors,
                transfer,
                identify.clone(),
                super::discovery::discovery_plan(env, task, identify.as_ref()),
                seed,
                trial,
            ))
        }
    };
    let user = episode_user(
        &roles.user,
        &roles.user_prompt,
        task,
        trial,
        cfg.emotion,
        seed,
    );
    (agent, user)
}

/// The user simulator of one episode of `task` (trial `trial` of a run seeded `seed`): the
/// scripted user, or an endpoint model given the instruction and, with `emotion`, the
/// emotion instruction.
pub fn episode_user(
    model: &RoleModel,
    rules: &crate::llm::Prompt,
    task: &TaskRecord,
    trial: u32,
    emotion: bool,
    seed: u64,
) -> Box<dyn User> {
    match model {
        RoleModel::Endpoint(model) => {
            let episode_seed =
                crate::seed::derive_seed(seed, &["episode", &task.task_id, &trial.to_string()]);
            let feeling = if emotion {
                task.emotion_instruction.as_deref()
            } else {
                None
            };
            Box::new(EndpointUser::new(
                Arc::clone(model),
                rules,
                task.instruction.as_deref().unwrap_or_default(),
                feeling,
                episode_seed,
            ))
        }
        RoleModel::Scripted(_) => Box::new(ScriptedUser::new(task, emotion, seed, trial)),
    }
}

/// Roll out `tasks` x `trials`, skipping the episodes already in `done` (a resumed
/// journal's) and handing every new episode to `finished` (which journals it) as soon as it
/// ends. The result holds exactly this batch's (task, trial) pairs, sorted by (task order,
/// trial), so a resumed batch equals an uninterrupted one.
#[allow(clippy::too_many_arguments)]
pub fn roll_out(
    base: Arc<dyn Environment>,
    policy: Arc<String>,
    tasks: &[TaskRecord],
    cfg: &BatchConfig,
    roles: &EpisodeRoles,
    seed: u64,
    done: Vec<RolloutRecord>,
    finished_episode: &mut dyn FnMut(&RolloutRecord) -> Result<(), String>,
) -> Result<Vec<RolloutRecord>, String> {
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
    let tools: Arc<[serde_json::Value]> = base.tool_specs().iter().map(|s| s.openai()).collect();
    let total = tasks.len() * cfg.trials as usize;
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} {per_sec} eta {eta} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let label = if cfg.label.is_empty() {
        format!(
            "rollouts {}",
            tasks.first().map(|t| t.domain.as_str()).unwrap_or("")
        )
    } else {
        cfg.label.clone()
    };
    bar.set_prefix(label.clone());
    bar.set_position(done.len() as u64);
    // The bar draws only on a terminal; in a batch job's log (a Slurm shard) a plain line
    // every tenth of the way shows progress instead.
    let plain = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut next_line = 0usize;
    let mut log_line = |pos: usize, mix: &BTreeMap<i32, usize>| {
        if plain && total > 0 && pos >= next_line {
            eprintln!(
                "{label}: {pos}/{total} episodes (R=1 {} R=0 {} R=-1 {})",
                mix.get(&1).unwrap_or(&0),
                mix.get(&0).unwrap_or(&0),
                mix.get(&-1).unwrap_or(&0)
            );
            next_line = pos + total.div_ceil(10).max(1);
        }
    };
    let runtime = crate::llm::runtime()?;
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
                let (mut agent, mut user) = episode_players(
                    &roles,
                    &task,
                    trial,
                    &ecfg,
                    &tools,
                    transfer,
                    base.as_ref(),
                    seed,
                );
                let mut ep = run_episode(
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
                if let Err(e) = roles.sync().await {
                    // Its answers may not be stored: not done, so a rerun plays it again.
                    ep.termination = crate::harness::Termination::EndpointError;
                    ep.error = Some(e.to_string());
                }
                rollout_record(
                    &task,
                    trial,
                    &ep,
                    agent.model_id(),
                    user.model_id(),
                    ecfg.emotion,
                    agent.injected_mistakes(),
                )
            });
            while set.len() >= cfg.concurrency {
                if let Some(done) = set.join_next().await {
                    let rec = done.map_err(|e| e.to_string())?;
                    finished_episode(&rec)?;
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
                    log_line(results.len(), &mix);
                }
            }
        }
        while let Some(done) = set.join_next().await {
            let rec = done.map_err(|e| e.to_string())?;
            finished_episode(&rec)?;
            *mix.entry(rec.reward).or_default() += 1;
            bar.inc(1);
            results.push(rec);
            log_line(results.len(), &mix);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `trials` episodes of `task` on airline's evaluation database, all in flight at once,
    /// with `agent` and the scripted user; each finished episode is pushed to `journal`.
    fn airline_batch(
        task: TaskRecord,
        trials: u32,
        agent: RoleModel,
        journal: &mut Vec<RolloutRecord>,
    ) -> Result<Vec<RolloutRecord>, String> {
        let env: Arc<dyn Environment> = Arc::from(
            crate::domain::find("airline")
                .unwrap()
                .generate(3, crate::domain::Split::Eval),
        );
        let cfg = BatchConfig {
            trials,
            max_steps: 4,
            concurrency: trials as usize,
            emotion: false,
            agent_errors: ErrorRates::default(),
            label: String::new(),
        };
        let roles = EpisodeRoles {
            agent,
            user: RoleModel::Scripted(Role::User),
            user_prompt: Arc::new(crate::llm::prompt::builtin("user").unwrap()),
        };
        roll_out(
            env,
            Arc::new(String::new()),
            &[task],
            &cfg,
            &roles,
            7,
            Vec::new(),
            &mut |r| {
                journal.push(r.clone());
                Ok(())
            },
        )
    }

    /// An agent endpoint that answers every call with a short text and whose response
    /// cache cannot commit (a full disk).
    struct UnstorableAgent;

    impl crate::llm::ChatModel for UnstorableAgent {
        fn chat(
            &self,
            _req: crate::llm::ChatRequest,
        ) -> crate::llm::BoxFuture<'_, Result<crate::llm::ChatResponse, crate::llm::LlmError>>
        {
            Box::pin(async {
                Ok(crate::llm::ChatResponse {
                    message: crate::llm::AssistantMessage {
                        content: Some("Done. Anything else?".into()),
                        tool_calls: Vec::new(),
                        reasoning_content: None,
                    },
                    finish_reason: Some("stop".into()),
                    usage: Default::default(),
                    model: "unstorable".into(),
                    from_cache: false,
                })
            })
        }
        fn model_id(&self) -> &str {
            "unstorable"
        }
        fn stats(&self) -> crate::llm::StatsSnapshot {
            crate::llm::StatsSnapshot::default()
        }
        fn sync(&self) -> crate::llm::BoxFuture<'_, Result<(), crate::llm::LlmError>> {
            Box::pin(async {
                Err(crate::llm::LlmError::Cache {
                    path: "out/.llm-cache.redb".into(),
                    message: "File too large (os error 27)".into(),
                })
            })
        }
    }

    #[test]
    fn an_episode_whose_answers_were_not_stored_is_errored_so_a_rerun_plays_it_again() {
        let task = TaskRecord {
            task_id: "t1".into(),
            domain: "airline".into(),
            instruction: Some("You want to know your reservations.".into()),
            ..TaskRecord::default()
        };
        let agent = RoleModel::Endpoint(Arc::new(UnstorableAgent));
        let mut journaled = Vec::new();
        let rows = airline_batch(task, 2, agent, &mut journaled).unwrap();
        assert_eq!(rows.len(), 2);
        for r in rows.iter().chain(&journaled) {
            assert!(super::super::metrics::is_infrastructure_failure(r), "{r:?}");
            assert!(
                r.error.as_deref().unwrap_or("").contains("File too large"),
                "{:?}",
                r.error
            );
        }
    }
}
