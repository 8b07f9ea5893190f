//! `tracer serve` (the environments and verified tasks as an RL environment server, see
//! `crate::serve`) and `tracer episode` (one whole episode against an OpenAI-compatible
//! endpoint, printed as JSON).

use super::CliError;
use crate::config::Paths;
use crate::domain::Domain;
use crate::llm::{Role, RoleConfig, RoleModel};
use crate::serve::{DomainData, Server, Settings};
use crate::split::Split;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which run's tasks and how episodes run: shared by `serve` and `episode`.
#[derive(Debug, clap::Args)]
pub struct ServedArgs {
    /// Domains to serve (repeatable); default: every domain with tasks in the output.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// The stage whose tasks are served: `tasks` (verified), `screened` or `reviewed`.
    #[arg(long, default_value = "tasks")]
    pub from: String,
    /// The user simulator (`[roles.user]`), the step limit and the emotion default come from
    /// this stage config.
    #[arg(long, default_value = "stages/rollouts.toml")]
    pub config: PathBuf,
    /// The run seed of an episode whose request names none (default: the pipeline's seed);
    /// also the seed the served stage must be fresh for.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Serve the tasks even when the stage is stale (its inputs, config or code changed
    /// since it ran); a file that does not match its manifest is refused all the same.
    #[arg(long)]
    pub allow_stale: bool,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub served: ServedArgs,
    /// Address to bind. Anything but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// A host name the server answers to besides localhost and IP addresses (repeatable;
    /// `*`: any). A loopback server refuses other names in `Host` (DNS rebinding).
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
    /// Port (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8766)]
    pub port: u16,
    /// A secret every request must carry as `Authorization: Bearer <token>` (also
    /// TRACER_SERVE_TOKEN): at least 16 printable characters, no spaces.
    #[arg(long)]
    pub token: Option<String>,
    /// Open sessions at most.
    #[arg(long, default_value_t = 4096)]
    pub max_sessions: usize,
    /// Seconds without a request after which a session is closed.
    #[arg(long, default_value_t = 900)]
    pub idle_secs: u64,
    /// Connections served at once (a thread each); one more is answered 503.
    #[arg(long, default_value_t = 2048)]
    pub max_connections: usize,
    /// Seconds a client has to send a whole request (head and body), counted from when
    /// the server starts waiting for it; also how long an idle connection stays open.
    #[arg(long, default_value_t = 30)]
    pub request_timeout_secs: u64,
    /// Whole episodes (`POST /episode`) running at once; one more is answered 503.
    #[arg(long, default_value_t = 8)]
    pub max_episodes: usize,
}

#[derive(Debug, clap::Args)]
pub struct EpisodeArgs {
    #[command(flatten)]
    pub served: ServedArgs,
    /// The task to play.
    #[arg(long)]
    pub task: String,
    /// Trial number (distinct trials draw distinct user choices and model samples).
    #[arg(long, default_value_t = 0)]
    pub trial: u32,
    /// Play the no-emotion variant of the task.
    #[arg(long)]
    pub no_emotion: bool,
    /// The agent's OpenAI-compatible endpoint, with its API prefix (e.g. http://127.0.0.1:8000/v1).
    #[arg(long)]
    pub agent_base_url: String,
    /// The model name the endpoint serves.
    #[arg(long)]
    pub agent_model: String,
    /// NAME of the environment variable holding the endpoint's API key.
    #[arg(long)]
    pub agent_api_key_env: Option<String>,
}

const SOURCES: [&str; 3] = ["tasks", "screened", "reviewed"];

fn tasks_file(paths: &Paths, from: &str, domain: &str) -> PathBuf {
    crate::pipeline::stage_dir(&paths.output, from, domain).join("part-00000.parquet")
}

/// Read the served domains: tasks of `--from`, the `db` stage's databases, the policies.
fn load_domains(
    paths: &Paths,
    args: &ServedArgs,
    only: Option<&'static dyn Domain>,
) -> Result<Vec<DomainData>, CliError> {
    if !SOURCES.contains(&args.from.as_str()) {
        return Err(CliError::Failed(format!(
            "--from {}: tasks are served from one of {}",
            args.from,
            SOURCES.join(", ")
        )));
    }
    let named: Vec<&'static dyn Domain> = match only {
        Some(d) => vec![d],
        None if args.domains.is_empty() => crate::domain::registry().to_vec(),
        None => super::resolve_domains(paths, &args.domains)?,
    };
    let explicit = only.is_some() || !args.domains.is_empty();
    // Serve only what the pipeline vouches for: the file as its manifest records it, from a
    // stage that is fresh all the way up (as `tracer export tasks`).
    let runner = crate::pipeline::Runner::new(
        paths,
        crate::stage::registry::dag(),
        super::resolve_seed(paths, args.seed)?,
        &[],
    )?;
    let mut out = Vec::new();
    for d in named {
        let file = tasks_file(paths, &args.from, d.name());
        if file.is_file() {
            runner.checked_output(&args.from, d, "part-00000.parquet", args.allow_stale)?;
        } else {
            if explicit {
                return Err(CliError::Failed(format!(
                    "{}: no {} tasks (run `tracer run {}` first)",
                    file.display(),
                    d.name(),
                    args.from
                )));
            }
            continue;
        }
        let (tasks, _) = crate::artifact::read_records(&file)
            .map_err(|e| CliError::Failed(format!("{}: {e}", file.display())))?;
        let db_dir = crate::pipeline::stage_dir(&paths.output, "db", d.name());
        let load = |split: Split| {
            crate::project::load_db(&db_dir, d, split)
                .map_err(|e| CliError::Failed(format!("{}: {e}", db_dir.display())))
        };
        let data = DomainData::new(d, tasks, load(Split::Eval)?, load(Split::Train)?, |env| {
            crate::project::read_policy(paths, d, env)
        })
        .map_err(|e| CliError::Failed(format!("{}: {e}", file.display())))?;
        out.push(data);
    }
    if out.is_empty() {
        return Err(CliError::Failed(format!(
            "{}: no {} tasks of any domain (run `make tasks` first)",
            paths.output.join(&args.from).display(),
            args.from
        )));
    }
    Ok(out)
}

/// What `--config` says of episodes: the step limit, the emotion default, and the user
/// simulator's table.
fn served_config(args: &ServedArgs) -> Result<(usize, bool, RoleConfig), CliError> {
    use crate::rollout::RolloutsConfig;
    let table = crate::config::read_table(&args.config)?;
    let cfg = RolloutsConfig::load(&args.config, &table)?;
    let mut user = cfg.roles.get(&Role::User).cloned().unwrap_or_default();
    user.concurrency.get_or_insert(64);
    Ok((cfg.max_steps, cfg.emotion, user))
}

/// The user simulator, its endpoint answers cached in `cache`.
fn user_model(args: &ServedArgs, user: &RoleConfig, cache: &Path) -> Result<RoleModel, CliError> {
    crate::llm::build_role(Role::User, user, cache)
        .map_err(|e| CliError::Failed(format!("{}: [roles.user]: {e}", args.config.display())))
}

/// The response cache of `tracer serve`'s endpoint user, beside the run's (which the
/// server leaves to `tracer run`), and the lock that names the server holding it.
pub const SERVE_CACHE: &str = ".serve-cache.redb";
pub const SERVE_CACHE_LOCK: &str = ".serve-cache.lock";

/// `--token` or TRACER_SERVE_TOKEN (unset or empty: none), checked.
fn token(given: Option<String>) -> Result<Option<String>, CliError> {
    let (name, token) = match given {
        Some(t) => ("--token", t),
        None => match std::env::var("TRACER_SERVE_TOKEN") {
            Ok(t) if !t.is_empty() => ("TRACER_SERVE_TOKEN", t),
            _ => return Ok(None),
        },
    };
    crate::serve::check_token(&token)
        .map(Some)
        .map_err(|why| CliError::Failed(format!("{name}: {why}")))
}

pub fn serve(paths: &Paths, args: ServeArgs) -> Result<(), CliError> {
    for (flag, value) in [
        ("--max-sessions", args.max_sessions),
        ("--max-connections", args.max_connections),
        ("--max-episodes", args.max_episodes),
        ("--request-timeout-secs", args.request_timeout_secs as usize),
    ] {
        if value == 0 {
            return Err(CliError::Failed(format!("{flag} must be at least 1")));
        }
    }
    let token = token(args.token)?;
    let (max_steps, emotion, user_cfg) = served_config(&args.served)?;
    // An endpoint user's answers go to the server's own cache file, so a `tracer run` on
    // this output keeps the run's cache to itself; a second server here is told who holds
    // the file.
    let _cache_lock = if user_cfg.provider == crate::llm::Provider::Openai {
        let command = std::iter::once("tracer".to_string())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" ");
        Some(
            crate::pipeline::OutputLock::acquire_file(
                &paths.output.join(SERVE_CACHE_LOCK),
                &command,
            )
            .map_err(|e| CliError::Failed(format!("{e} (the endpoint user's response cache)")))?,
        )
    } else {
        None
    };
    let user = user_model(&args.served, &user_cfg, &paths.output.join(SERVE_CACHE))?;
    let settings = Settings {
        max_steps,
        emotion,
        seed: super::resolve_seed(paths, args.served.seed)?,
        max_sessions: args.max_sessions,
        idle: Duration::from_secs(args.idle_secs.max(1)),
        token,
        max_episodes: args.max_episodes,
        http: crate::http::Limits {
            max_connections: args.max_connections,
            request_timeout: Duration::from_secs(args.request_timeout_secs),
            write_timeout: Duration::from_secs(args.request_timeout_secs),
        },
        hosts: args.allow_hosts,
    };
    let domains = load_domains(paths, &args.served, None)?;
    let server = Server::new(domains, user, settings)
        .map_err(CliError::Failed)?
        .with_user_prompt(
            crate::llm::prompt::project_or_builtin(&paths.root, "prompts", "user")
                .map_err(CliError::Failed)?,
        );
    crate::serve::run(
        server,
        &crate::serve::Options {
            bind: args.bind,
            port: args.port,
        },
    )
    .map_err(CliError::Failed)
}

/// The domain whose `--from` tasks hold `task` (only task ids are read).
fn domain_of(paths: &Paths, from: &str, task: &str) -> Result<&'static dyn Domain, CliError> {
    for d in crate::domain::registry() {
        let file = tasks_file(paths, from, d.name());
        if !file.is_file() {
            continue;
        }
        let (tasks, _) = crate::artifact::read_records::<crate::artifact::TaskRecord>(&file)
            .map_err(|e| CliError::Failed(format!("{}: {e}", file.display())))?;
        if tasks.iter().any(|t| t.task_id == task) {
            return Ok(*d);
        }
    }
    Err(CliError::Failed(format!(
        "--task {task}: no such task under {}",
        Path::new(&paths.output).join(from).display()
    )))
}

pub fn episode(paths: &Paths, args: EpisodeArgs) -> Result<(), CliError> {
    let d = match args.served.domains.as_slice() {
        [] => domain_of(paths, &args.served.from, &args.task)?,
        [one] => crate::domain::find(one)?,
        _ => {
            return Err(CliError::Failed(
                "--domain: give one domain (or none)".into(),
            ));
        }
    };
    let (max_steps, emotion, user_cfg) = served_config(&args.served)?;
    let cache = paths.response_cache();
    let user = user_model(&args.served, &user_cfg, &cache)?;
    let settings = Settings {
        max_steps,
        emotion,
        seed: super::resolve_seed(paths, args.served.seed)?,
        max_sessions: 1,
        idle: Duration::from_secs(3600),
        token: None,
        max_episodes: 1,
        http: crate::http::Limits::default(),
        hosts: Vec::new(),
    };
    let agent_cfg = crate::llm::RoleConfig {
        provider: crate::llm::Provider::Openai,
        base_url: Some(args.agent_base_url.clone()),
        model: Some(args.agent_model.clone()),
        api_key_env: args.agent_api_key_env.clone(),
        ..Default::default()
    };
    let agent = crate::llm::build_role(Role::Agent, &agent_cfg, &cache)
        .map_err(|e| CliError::Failed(format!("--agent-base-url: {e}")))?;
    let domains = load_domains(paths, &args.served, Some(d))?;
    let seed = settings.seed;
    let server = Server::new(domains, user, settings)
        .map_err(CliError::Failed)?
        .with_user_prompt(
            crate::llm::prompt::project_or_builtin(&paths.root, "prompts", "user")
                .map_err(CliError::Failed)?,
        );
    let verdict = server
        .run_episode(
            &args.task,
            agent,
            &crate::serve::Play {
                emotion: !args.no_emotion,
                seed,
                trial: args.trial,
            },
            std::future::pending(),
        )
        .map_err(|e| CliError::Failed(e.message))?;
    println!(
        "{}",
        serde_json::to_string_pretty(&verdict.json()).unwrap_or_default()
    );
    Ok(())
}
