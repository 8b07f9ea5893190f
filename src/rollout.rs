//! Rolling tasks out under a journal: the one run path behind the `rollouts`, `screened`
//! and `eval` stages and `tracer rollout`. The config ([`RolloutsConfig`]), the journal of
//! finished episodes ([`open_journal`]: a killed run resumes from it, and the result equals
//! an uninterrupted run's), the episodes with their error accounting ([`roll_out_journaled`])
//! and, for a task file outside the pipeline, everything around them ([`run_task_file`]:
//! the journal key, resume or refusal, cleanup of an earlier run's results, provenance and
//! the scores). The episodes themselves run in [`crate::harness::batch`].

use crate::artifact::{self, Provenance, RolloutRecord, TaskRecord};
use crate::config::{ConfigError, Paths};
use crate::domain::{Domain, Environment};
use crate::harness::agent::ErrorRates;
use crate::harness::batch::{self, BatchConfig, EpisodeRoles};
use crate::harness::metrics::{self, EvalReport};
use crate::llm::{Role, RolesConfig};
use crate::pipeline::{Journal, JournalError, JournalKey, OnMismatch, Resumed};
use crate::split::Split;
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// The evaluation stage's name (its config holds the bootstrap resamples of every report).
pub const EVAL_STAGE: &str = "eval";

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RolloutsConfig {
    /// Episodes per task.
    pub trials: u32,
    /// Which tasks: `train` or `eval`.
    pub split: Split,
    /// Interaction steps (agent or user messages) before an episode is cut.
    pub max_steps: usize,
    /// Episodes in flight at once.
    pub concurrency: usize,
    /// Roll out the emotion-conditioned task (false: the no-emotion variant).
    pub emotion: bool,
    /// Mistake rates of the scripted oracle agent.
    pub agent_errors: ErrorRates,
    /// `[roles.agent]` and `[roles.user]`: scripted (default) or an endpoint.
    pub roles: RolesConfig,
    /// The directory of the role prompts: an endpoint user sends `<prompts>/user.md`.
    pub prompts: Option<String>,
    /// Largest share of episodes that may end on infrastructure failures for the stage to
    /// succeed; above it the stage fails, stays stale, and a rerun retries those episodes.
    pub max_errored_share: f64,
    /// `eval`: bootstrap resamples behind the 95% intervals of Avg@k and Pass^k (the
    /// reports, `tracer stats`, the dataset card).
    pub bootstrap_resamples: usize,
    /// `screened`: reward-1 trials a task needs to be kept.
    pub min_successes: u32,
}

impl Default for RolloutsConfig {
    fn default() -> Self {
        RolloutsConfig {
            trials: 1,
            split: Split::Train,
            max_steps: 50,
            concurrency: 32,
            emotion: true,
            agent_errors: ErrorRates::default(),
            roles: RolesConfig::default(),
            prompts: None,
            max_errored_share: 0.0,
            bootstrap_resamples: metrics::DEFAULT_RESAMPLES,
            min_successes: 1,
        }
    }
}

impl RolloutsConfig {
    /// The batch this config runs.
    pub fn batch(&self) -> BatchConfig {
        BatchConfig {
            trials: self.trials,
            max_steps: self.max_steps,
            concurrency: self.concurrency,
            emotion: self.emotion,
            agent_errors: self.agent_errors.clone(),
            label: String::new(),
        }
    }

    /// Parse and check a rollouts/eval config (errors name the file and field).
    pub fn load(path: &Path, table: &toml::Table) -> Result<RolloutsConfig, ConfigError> {
        let cfg: RolloutsConfig = crate::config::parse_typed(path, table)?;
        cfg.check(path)?;
        Ok(cfg)
    }

    /// Ranges and roles; `path` names the file in errors. Also run on a config whose
    /// `trials` a command line overrode.
    pub fn check(&self, path: &Path) -> Result<(), ConfigError> {
        use crate::config::{Check, MAX_CONCURRENCY, MAX_RESAMPLES, MAX_STEPS, MAX_TRIALS};
        let c = Check::new(path);
        c.count("trials", self.trials as usize, 1, MAX_TRIALS)?;
        c.count("max_steps", self.max_steps, 1, MAX_STEPS)?;
        c.count("concurrency", self.concurrency, 1, MAX_CONCURRENCY)?;
        c.share("max_errored_share", self.max_errored_share)?;
        c.count(
            "min_successes",
            self.min_successes as usize,
            1,
            self.trials as usize,
        )?;
        c.count(
            "bootstrap_resamples",
            self.bootstrap_resamples,
            1,
            MAX_RESAMPLES,
        )?;
        let rates = &self.agent_errors;
        c.share("agent_errors.skip_confirmation", rates.skip_confirmation)?;
        c.share("agent_errors.redundant_question", rates.redundant_question)?;
        c.share("agent_errors.wrong_argument", rates.wrong_argument)?;
        c.share("agent_errors.premature_transfer", rates.premature_transfer)?;
        crate::llm::config::check_roles(path, &self.roles, &[Role::Agent, Role::User])
    }
}

/// The bootstrap resamples of the eval intervals: `bootstrap_resamples` of the eval
/// stage's config (its override when one is set), the default when there is no file.
pub fn eval_resamples(paths: &crate::config::Paths) -> Result<usize, ConfigError> {
    let (path, table) = paths.stage_table(EVAL_STAGE)?;
    if table.is_empty() {
        return Ok(metrics::DEFAULT_RESAMPLES);
    }
    Ok(RolloutsConfig::load(&path, &table)?.bootstrap_resamples)
}

/// The user simulator's rules a run of `cfg` sends: the project's `<prompts>/user.md`
/// when the user is an endpoint (an error names a missing or malformed file), the shipped
/// text otherwise (the scripted user reads none).
pub fn user_prompt(
    paths: &crate::config::Paths,
    cfg: &RolloutsConfig,
) -> Result<std::sync::Arc<crate::llm::Prompt>, String> {
    let endpoint = cfg
        .roles
        .get(&Role::User)
        .is_some_and(|c| c.provider == crate::llm::Provider::Openai);
    let prompt = if endpoint {
        let dir = cfg.prompts.as_deref().unwrap_or("prompts");
        crate::llm::Prompt::load(&paths.root.join(dir).join("user.md"))?
    } else {
        crate::llm::prompt::builtin("user").ok_or("no shipped user prompt")?
    };
    Ok(std::sync::Arc::new(prompt))
}

/// The preflight probe's bounds for the episode roles of one domain: the agent's policy and
/// tools, the user simulator's prompt file.
fn episode_fits(
    paths: &Paths,
    cfg: &RolloutsConfig,
    domain: &'static dyn Domain,
) -> crate::llm::preflight::Fits {
    let mut fits = crate::llm::preflight::Fits::new();
    fits.insert(Role::Agent, crate::project::agent_fit(paths, &[domain]));
    let dir = cfg.prompts.as_deref().unwrap_or("prompts");
    if let Some(fit) = crate::project::prompt_fit(paths, &Path::new(dir).join("user.md"), &[domain])
    {
        fits.insert(Role::User, fit);
    }
    fits
}

/// The journal's view of an episode: its id, and whether it is finished for good.
fn episode_id(r: &RolloutRecord) -> String {
    format!("{}\u{0}{}", r.task_id, r.trial)
}

/// Open a rollout journal: finished episodes (infrastructure failures are redone).
pub fn open_journal(
    path: &Path,
    key: &JournalKey,
    label: &str,
    on_mismatch: OnMismatch,
) -> Result<Resumed<RolloutRecord>, JournalError> {
    Journal::open(path, key, label, on_mismatch, episode_id, |r| {
        !metrics::is_infrastructure_failure(r)
    })
}

/// One domain's episodes: the database they fork, the agent's policy, the tasks, and how
/// they run.
pub struct Episodes<'a> {
    pub env: Arc<dyn Environment>,
    pub policy: Arc<String>,
    pub tasks: &'a [TaskRecord],
    pub batch: BatchConfig,
    pub roles: &'a EpisodeRoles,
    pub seed: u64,
}

/// How a run's warnings speak: whose episodes (`stage 'eval', domain 'bank': `, or empty)
/// and how a user retries tolerated failures.
pub struct Voice<'a> {
    pub who: &'a str,
    pub retry: &'a str,
}

/// Run `episodes` on from a resumed journal (finished episodes are not run again; each new
/// one is appended as it finishes). Infrastructure failures above `max_errored_share` fail
/// the run (the journal keeps what finished); below it they are kept as errored rows, with
/// a warning. The rows in task order, then trial.
pub fn roll_out_journaled(
    episodes: Episodes<'_>,
    resumed: Resumed<RolloutRecord>,
    max_errored_share: f64,
    voice: &Voice<'_>,
) -> Result<Vec<RolloutRecord>, EpisodesError> {
    let Resumed {
        mut journal,
        done,
        damaged,
        ..
    } = resumed;
    let who = voice.who;
    if damaged > 0 {
        eprintln!(
            "tracer: warning: {who}{damaged} line(s) of {} fail their checksum (edited or damaged); their episodes are run again",
            journal.path().display()
        );
    }
    let journal_path = journal.path().to_path_buf();
    let rows = batch::roll_out(
        episodes.env,
        episodes.policy,
        episodes.tasks,
        &episodes.batch,
        episodes.roles,
        episodes.seed,
        done,
        &mut |rec| journal.append(rec).map_err(|e| e.to_string()),
    )
    .map_err(EpisodesError::Failed)?;
    metrics::check_errored(&rows, max_errored_share).map_err(|e| {
        EpisodesError::TooManyErrored(format!(
            "{e}; finished episodes are in {}",
            journal_path.display()
        ))
    })?;
    warn_tolerated(&rows, max_errored_share, voice);
    Ok(rows)
}

/// Say so when a run succeeds with infrastructure failures it tolerated, and how to retry
/// them (the answers already given come from the response cache).
pub fn warn_tolerated(rows: &[RolloutRecord], max_errored_share: f64, voice: &Voice<'_>) {
    if let Some(w) = metrics::tolerated_errors(rows, max_errored_share) {
        eprintln!(
            "tracer: warning: {}{w}; {} (finished episodes are replayed from the response cache)",
            voice.who, voice.retry
        );
    }
}

/// Why a batch of episodes failed ([`roll_out_journaled`]).
#[derive(Debug, thiserror::Error)]
pub enum EpisodesError {
    /// More episodes ended on infrastructure failures (endpoints) than the config tolerates.
    #[error("{0}")]
    TooManyErrored(String),
    /// The batch could not run or journal its episodes.
    #[error("{0}")]
    Failed(String),
}

impl EpisodesError {
    /// Whose failure it is: the endpoints', or this machine's.
    pub fn kind(&self) -> crate::pipeline::ErrorKind {
        match self {
            EpisodesError::TooManyErrored(_) => crate::pipeline::ErrorKind::Endpoint,
            EpisodesError::Failed(_) => crate::pipeline::ErrorKind::Environment,
        }
    }
}

/// Why a task-file rollout stopped.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    #[error(transparent)]
    Artifact(#[from] artifact::ArtifactError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Lock(#[from] crate::pipeline::LockError),
    #[error(transparent)]
    Project(#[from] crate::project::ProjectError),
    #[error(transparent)]
    Domain(#[from] crate::domain::DomainError),
    #[error("{0}")]
    Failed(String),
}

/// A task file rolled out against one database, outside the pipeline (`tracer rollout`).
pub struct TaskFileRun<'a> {
    pub domain: &'static dyn Domain,
    /// The tasks as imported (tau-bench shape), and the SHA-256 of the file they came from.
    pub tasks: &'a [crate::replay::TauTask],
    pub tasks_sha256: String,
    /// The database the episodes fork (a generated or imported one, under its ruleset).
    pub env: Box<dyn Environment>,
    pub config: &'a RolloutsConfig,
    /// The hash of the config table the run used (overrides applied).
    pub config_hash: String,
    pub seed: u64,
    /// The directory the results go to (its journal too).
    pub out: &'a Path,
    /// Discard a journal of other settings instead of refusing it.
    pub fresh: bool,
    /// Also run tasks whose gold actions fail and change nothing.
    pub include_broken_gold: bool,
}

/// The files [`run_task_file`] writes into its directory (besides its journal);
/// `tasks.parquet` holds the rolled-out tasks as imported, so `tracer analyze --rollouts`
/// can read them.
pub const TASK_FILE_OUTPUTS: [&str; 5] = [
    "rollouts.parquet",
    "tasks.parquet",
    "report.json",
    "report.md",
    "analysis.parquet",
];

/// The provenance input under which [`run_task_file`] records the state hash of the
/// database it ran on (`tracer analyze --rollouts` checks it).
pub const DATABASE_INPUT: &str = "database";

/// Roll a task file out into `run.out`: `rollouts.parquet`, `tasks.parquet`, `report.json`
/// and `report.md`. Resumable: each finished episode is journaled in `run.out`, a killed run
/// picks up where it stopped, and a journal of other settings is refused (or discarded with
/// `fresh`, together with the results beside it). Tasks whose gold fails and changes nothing
/// are left out (an agent doing nothing would pass them) unless `include_broken_gold`. Takes
/// the output lock of `run.out`, and of the output root when endpoint roles use its
/// response cache. The scores.
pub fn run_task_file(paths: &Paths, run: TaskFileRun<'_>) -> Result<EvalReport, RolloutError> {
    let cfg = run.config;
    let failed = RolloutError::Failed;
    let _locks = lock_run_dir(paths, run.out, &cfg.roles)?;
    crate::llm::preflight::preflight_roles(&cfg.roles, &episode_fits(paths, cfg, run.domain))
        .map_err(failed)?;
    let name = run.domain.name();
    // Replay the gold first: a task whose gold fails and changes nothing scores 100% for an
    // agent that does nothing.
    let broken = crate::replay::broken_gold(run.env.as_ref(), run.tasks);
    let all_tasks = crate::replay::tasks_from_tau_bench(run.env.as_ref(), name, run.tasks);
    let (tasks, broken_ids) = keep_runnable(all_tasks, &broken, run.include_broken_gold);
    let user_prompt = user_prompt(paths, cfg).map_err(failed)?;
    let roles = batch::open_roles(
        &cfg.roles,
        cfg.concurrency,
        &paths.response_cache(),
        user_prompt,
    )
    .map_err(|e| failed(e.to_string()))?;
    let policy =
        crate::project::read_policy(paths, run.domain, run.env.as_ref()).map_err(failed)?;
    if crate::pipeline::validate::policy_is_empty(&policy) {
        return Err(failed(format!(
            "the {name} policy is empty (the agent's system prompt would say nothing)"
        )));
    }
    let database_hash = run.env.state_hash().to_hex();
    // Everything that decides the episodes: a journal of other settings is never merged.
    let key: JournalKey = [
        ("domain", name.to_string()),
        ("tasks", run.tasks_sha256),
        ("database", database_hash.clone()),
        ("config", run.config_hash),
        ("trials", cfg.trials.to_string()),
        ("seed", run.seed.to_string()),
        ("agent", roles.agent.model_id()),
        ("user", roles.user.model_id()),
        ("policy", artifact::sha256_hex(policy.as_bytes())),
        ("broken_gold", run.include_broken_gold.to_string()),
        ("code", crate::pipeline::code_hash(file!(), name)),
        ("tool", env!("CARGO_PKG_VERSION").to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let journal_path = run.out.join(".journal.jsonl");
    let resumed = open_resumable(&journal_path, &key, run.out, run.fresh)?;
    let episodes = Episodes {
        env: Arc::from(run.env),
        policy: Arc::new(policy),
        tasks: &tasks,
        batch: cfg.batch(),
        roles: &roles,
        seed: run.seed,
    };
    let voice = Voice {
        who: "",
        retry: "rerun with --fresh to retry them",
    };
    let rows = roll_out_journaled(episodes, resumed, cfg.max_errored_share, &voice)
        .map_err(|e| failed(e.to_string()))?;
    // The lock must still be the file this run locked (not deleted or replaced under it,
    // letting a second writer in) before anything is written into place.
    crate::pipeline::lock::verify_held(run.out)?;
    let prov = Provenance {
        version: env!("CARGO_PKG_VERSION").into(),
        stage: "rollout".into(),
        domain: name.into(),
        seed: run.seed,
        inputs: [(DATABASE_INPUT.to_string(), database_hash)].into(),
        ..Default::default()
    };
    artifact::write_records(&run.out.join("tasks.parquet"), &tasks, &prov)?;
    artifact::write_records(&run.out.join("rollouts.parquet"), &rows, &prov)?;
    let bootstrap = metrics::Bootstrap {
        resamples: cfg.bootstrap_resamples,
        seed: run.seed,
    };
    let mut report = metrics::report(name, &rows, cfg.trials, &bootstrap);
    report.broken_gold = broken_ids;
    report.broken_gold_scored = run.include_broken_gold;
    artifact::write_atomic(
        &run.out.join("report.json"),
        &serde_json::to_vec_pretty(&report).unwrap_or_default(),
    )?;
    let table = metrics::report_table(std::slice::from_ref(&report));
    artifact::write_atomic(&run.out.join("report.md"), table.as_bytes())?;
    // Last: until here a kill resumes from the journal.
    std::fs::remove_file(&journal_path)
        .map_err(|e| failed(format!("{}: {e}", journal_path.display())))?;
    Ok(report)
}

/// The tasks to run (those whose gold works, or all with `include_broken`), and the ids of
/// the broken ones.
fn keep_runnable(
    all: Vec<TaskRecord>,
    broken: &[bool],
    include_broken: bool,
) -> (Vec<TaskRecord>, Vec<String>) {
    let broken_ids = all
        .iter()
        .zip(broken)
        .filter(|(_, b)| **b)
        .map(|(t, _)| t.task_id.clone())
        .collect();
    let tasks = all
        .into_iter()
        .zip(broken)
        .filter(|(_, b)| include_broken || !**b)
        .map(|(t, _)| t)
        .collect();
    (tasks, broken_ids)
}

/// Open a task-file run's journal: a journal of other settings is refused, or with `fresh`
/// discarded together with the results beside it (an earlier run's results never sit
/// beside a journal of this one).
fn open_resumable(
    journal_path: &Path,
    key: &JournalKey,
    out: &Path,
    fresh: bool,
) -> Result<Resumed<RolloutRecord>, JournalError> {
    let on_mismatch = if fresh {
        OnMismatch::StartFresh
    } else {
        OnMismatch::Refuse("rerun with --fresh to discard it, or choose another --out".to_string())
    };
    let starting = !journal_path.exists();
    let resumed = open_journal(journal_path, key, "rollout", on_mismatch)?;
    if let Some(changed) = &resumed.discarded {
        eprintln!(
            "tracer: discarded {} of a run with other settings ({changed})",
            journal_path.display()
        );
    }
    if starting || resumed.discarded.is_some() {
        for file in TASK_FILE_OUTPUTS {
            let _ = std::fs::remove_file(out.join(file));
        }
    }
    Ok(resumed)
}

/// `tracer analyze --rollouts`: the analysis of a [`run_task_file`] directory.
pub struct RunDirAnalysis<'a> {
    pub dir: &'a Path,
    pub config: &'a crate::analysis::AnalysisConfig,
    /// The hash of the analysis config's table (recorded in the output's provenance).
    pub config_hash: String,
    /// When not empty, the domains the rollouts must be of.
    pub domains: &'a [String],
    /// The seed of the database and the judge (default: the rollouts').
    pub seed: Option<u64>,
    /// The database and ruleset the rollouts ran on (as [`crate::project::command_database`]).
    pub db: Option<&'a Path>,
    pub ruleset: Option<&'a str>,
}

/// What [`analyze_run_dir`] found: the fault rows (also written to `analysis.parquet`), and
/// how many judge answers were unreadable.
pub struct Analysed {
    pub rows: Vec<crate::artifact::FaultRecord>,
    pub unreadable: usize,
}

/// Analyse the episodes of a [`run_task_file`] directory against the database they ran on
/// (refused when its state differs from the one the rollouts recorded); writes
/// `analysis.parquet` there. Takes the directory's output lock, and the output root's when
/// an endpoint judge uses its response cache.
pub fn analyze_run_dir(paths: &Paths, a: RunDirAnalysis<'_>) -> Result<Analysed, RolloutError> {
    let failed = RolloutError::Failed;
    let rollouts_path = a.dir.join("rollouts.parquet");
    let tasks_path = a.dir.join("tasks.parquet");
    if !rollouts_path.is_file() {
        return Err(failed(format!(
            "{}: missing; --rollouts takes a `tracer rollout --out` directory",
            rollouts_path.display()
        )));
    }
    if !tasks_path.is_file() {
        return Err(failed(format!(
            "{}: missing; it is written by `tracer rollout` since the analysis exists: rerun it",
            tasks_path.display()
        )));
    }
    let (rollouts, prov) = artifact::read_records::<RolloutRecord>(&rollouts_path)?;
    let (tasks, _) = artifact::read_records::<TaskRecord>(&tasks_path)?;
    let d = crate::domain::find(&prov.domain)?;
    if !a.domains.is_empty() && !a.domains.iter().any(|n| n == d.name()) {
        return Err(failed(format!(
            "{}: rolled out on domain '{}', not {}",
            rollouts_path.display(),
            d.name(),
            a.domains.join(", ")
        )));
    }
    let seed = a.seed.unwrap_or(prov.seed);
    let env = crate::project::command_database(paths, d, a.db, seed, a.ruleset)?;
    if let Some(recorded) = prov.inputs.get(DATABASE_INPUT)
        && *recorded != env.state_hash().to_hex()
    {
        return Err(failed(format!(
            "{}: rolled out on another database (state {recorded}); pass the same --db, --ruleset and --seed as the rollout",
            rollouts_path.display()
        )));
    }
    let roles = &a.config.roles;
    let _locks = lock_run_dir(paths, a.dir, roles)?;
    let mut fits = crate::llm::preflight::Fits::new();
    let dir = a.config.prompts.as_deref().unwrap_or("prompts");
    if let Some(fit) =
        crate::project::prompt_fit(paths, &Path::new(dir).join("analysis_judge.md"), &[d])
    {
        fits.insert(Role::Judge, fit);
    }
    crate::llm::preflight::preflight_roles(roles, &fits).map_err(failed)?;
    let judge_cfg = roles.get(&Role::Judge).cloned().unwrap_or_default();
    let judge = crate::llm::build_role(Role::Judge, &judge_cfg, &paths.response_cache())
        .map_err(|e| failed(e.to_string()))?;
    let prompt = if judge.is_scripted() {
        crate::llm::prompt::builtin("analysis_judge")
            .ok_or_else(|| failed("no shipped analysis_judge prompt".into()))?
    } else {
        let dir = a.config.prompts.as_deref().unwrap_or("prompts");
        crate::llm::Prompt::load(&paths.root.join(dir).join("analysis_judge.md")).map_err(failed)?
    };
    let tasks: std::collections::BTreeMap<String, TaskRecord> =
        tasks.into_iter().map(|t| (t.task_id.clone(), t)).collect();
    let (rows, unreadable) = crate::analysis::analyse_source(
        crate::analysis::StartStates::single(env.as_ref()),
        &tasks,
        "rollout",
        &rollouts,
        a.config.all(),
        &judge,
        &crate::analysis::judge::JudgeContext {
            prompt: &prompt,
            policy: &crate::project::read_policy(paths, d, env.as_ref()).map_err(failed)?,
        },
        seed,
    )
    .map_err(|e| failed(format!("{}: {e}", rollouts_path.display())))?;
    let out_prov = Provenance {
        version: env!("CARGO_PKG_VERSION").into(),
        stage: "analyze".into(),
        domain: d.name().into(),
        config_hash: a.config_hash,
        seed,
        inputs: [
            (
                "rollouts.parquet".to_string(),
                artifact::sha256_file(&rollouts_path)?,
            ),
            (
                "tasks.parquet".to_string(),
                artifact::sha256_file(&tasks_path)?,
            ),
        ]
        .into(),
    };
    crate::pipeline::lock::verify_held(a.dir)?;
    artifact::write_records(&a.dir.join("analysis.parquet"), &rows, &out_prov)?;
    Ok(Analysed { rows, unreadable })
}

/// The locks of a run directory's writer: the directory's, and the output root's too when
/// an endpoint role writes the response cache there.
fn lock_run_dir(
    paths: &Paths,
    dir: &Path,
    roles: &RolesConfig,
) -> Result<Vec<crate::pipeline::OutputLock>, crate::pipeline::LockError> {
    let command = crate::pipeline::lock::command_line();
    let mut locks = vec![crate::pipeline::OutputLock::acquire(dir, &command)?];
    let endpoints = roles
        .values()
        .any(|r| r.provider == crate::llm::Provider::Openai);
    if endpoints && std::path::absolute(&paths.output).ok() != std::path::absolute(dir).ok() {
        locks.push(crate::pipeline::OutputLock::acquire(
            &paths.output,
            &command,
        )?);
    }
    Ok(locks)
}
