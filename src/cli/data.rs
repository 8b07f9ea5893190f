//! `tracer import | export | replay`: moving databases and tasks in and out of tau-bench's
//! formats, and auditing gold actions by replay.

use super::{CliError, resolve_seed};
use crate::artifact::{self, Provenance, json_table::json_rows_to_batch};
use crate::config::Paths;
use crate::domain::{self, Environment, Split};
use crate::replay;
use clap::{Args, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    TauBench,
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Read a tau-bench-format database directory into our types.
    TauBench {
        #[arg(long)]
        domain: String,
        /// Directory holding the domain's JSON files (e.g. users.json, flights.json, reservations.json).
        #[arg(long)]
        from: PathBuf,
        /// Also write it as Parquet tables plus normalised tau-bench JSON into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Rule variant of the domain (e.g. retail: tau-emotion-bench, tau-bench); default:
        /// the one stages/db.toml selects.
        #[arg(long)]
        ruleset: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Write verified tasks as a tau-bench task file (JSON list).
    Tasks {
        #[arg(long)]
        domain: String,
        #[arg(long, value_enum, default_value = "tau-bench")]
        format: Format,
        /// `train`, `eval` or `all`.
        #[arg(long, default_value = "all")]
        split: String,
        /// Output JSON file.
        #[arg(long)]
        out: PathBuf,
    },
    /// Write a database in another format.
    Db {
        #[arg(long)]
        domain: String,
        #[arg(long, value_enum, default_value = "tau-bench")]
        format: Format,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Export this tau-bench-format database instead of the generated one.
        #[arg(long)]
        from: Option<PathBuf>,
        #[arg(long)]
        seed: Option<u64>,
        /// Rule variant of the domain (e.g. retail: tau-emotion-bench, tau-bench); default:
        /// the one stages/db.toml selects.
        #[arg(long)]
        ruleset: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum ReferenceCommand {
    /// Write `<out>/calls.jsonl` (JSON lines of `[{name, kwargs}, ...]`) for the reference
    /// recorder, drawn on the generated evaluation database with the domain's proposals,
    /// and `<out>/meta.json` (domain, seed, the database's state hash), and export that
    /// database in the reference format to `<out>/data/` (not committed: the test
    /// regenerates it from the seed and checks the hash).
    Calls {
        #[arg(long)]
        domain: String,
        #[arg(long)]
        seed: Option<u64>,
        #[arg(long, default_value_t = 150)]
        count: usize,
        #[arg(long)]
        out: PathBuf,
        /// Rule variant of the domain (e.g. retail: tau-emotion-bench, tau-bench); default:
        /// the one stages/db.toml selects.
        #[arg(long)]
        ruleset: Option<String>,
    },
}

pub fn reference(paths: &Paths, cmd: ReferenceCommand) -> Result<(), CliError> {
    let ReferenceCommand::Calls {
        domain,
        seed,
        count,
        out,
        ruleset,
    } = cmd;
    let d = domain::find(&domain)?;
    let seed = resolve_seed(paths, seed)?;
    let env = super::with_ruleset(paths, d, d.generate(seed, Split::Eval), ruleset.as_deref())?;
    let seqs = domain::reference::sample_sequences(env.as_ref(), seed, count);
    let mut text = String::new();
    for s in &seqs {
        text.push_str(&serde_json::to_string(s).unwrap_or_default());
        text.push('\n');
    }
    artifact::write_atomic(&out.join("calls.jsonl"), text.as_bytes())?;
    let meta = serde_json::json!({
        "domain": d.name(),
        "seed": seed,
        "split": "eval",
        "state_hash": env.state_hash().to_hex(),
        "sequences": seqs.len(),
    });
    let mut meta = meta;
    if let Some(r) = env.ruleset() {
        meta["ruleset"] = r.into();
    }
    let meta = serde_json::to_vec_pretty(&meta).unwrap_or_default();
    artifact::write_atomic(&out.join("meta.json"), &meta)?;
    write_tau_bench(env.as_ref(), &out.join("data"))?;
    eprintln!("wrote {} call sequences to {}", seqs.len(), out.display());
    Ok(())
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[arg(long)]
    pub domain: String,
    /// A tau-bench-format database directory (default: the generated database).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// A tau-bench-format task file (JSON list).
    #[arg(long)]
    pub tasks: PathBuf,
    /// Where to write one JSON line per call and per task.
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Rule variant of the domain (e.g. retail: tau-emotion-bench, tau-bench); default: the
    /// one stages/db.toml selects.
    #[arg(long)]
    pub ruleset: Option<String>,
}

/// The environment a command works on: an imported directory, or the generated database,
/// under the ruleset `--ruleset` names (else the configured one).
fn load_env(
    paths: &Paths,
    domain: &dyn domain::Domain,
    db: Option<&Path>,
    seed: Option<u64>,
    ruleset: Option<&str>,
) -> Result<Box<dyn Environment>, CliError> {
    let env = match db {
        Some(dir) => domain.import_tau_bench(dir)?,
        None => domain.generate(resolve_seed(paths, seed)?, Split::Eval),
    };
    super::with_ruleset(paths, domain, env, ruleset)
}

fn write_tau_bench(env: &dyn Environment, dir: &Path) -> Result<(), CliError> {
    for (stem, value) in env.to_tau_bench() {
        let bytes = serde_json::to_vec_pretty(&value).unwrap_or_default();
        artifact::write_atomic(&dir.join(format!("{stem}.json")), &bytes)?;
    }
    Ok(())
}

pub fn import(paths: &Paths, cmd: ImportCommand) -> Result<(), CliError> {
    let ImportCommand::TauBench {
        domain,
        from,
        out,
        ruleset,
    } = cmd;
    let d = domain::find(&domain)?;
    let env = load_env(paths, d, Some(&from), None, ruleset.as_deref())?;
    let sizes: Vec<String> = env
        .tables()
        .iter()
        .map(|(t, rows)| format!("{t} {}", rows.len()))
        .collect();
    let ruleset = env
        .ruleset()
        .map(|r| format!(", ruleset {r}"))
        .unwrap_or_default();
    println!(
        "{}: imported {} ({}{ruleset}); state {}",
        from.display(),
        d.name(),
        sizes.join(", "),
        env.state_hash()
    );
    if let Some(out) = out {
        write_tau_bench(env.as_ref(), &out.join("tau_bench"))?;
        let prov = Provenance {
            version: env!("CARGO_PKG_VERSION").into(),
            stage: "import".into(),
            domain: d.name().into(),
            ..Default::default()
        };
        for (table, rows) in env.tables() {
            artifact::write_parquet(
                &out.join(format!("{table}.parquet")),
                &json_rows_to_batch(&rows),
                &prov,
            )?;
        }
        println!("wrote {}", out.display());
    }
    Ok(())
}

pub fn export(paths: &Paths, cmd: ExportCommand) -> Result<(), CliError> {
    let (domain, out, from, seed, ruleset) = match cmd {
        ExportCommand::Db {
            domain,
            format: Format::TauBench,
            out,
            from,
            seed,
            ruleset,
        } => (domain, out, from, seed, ruleset),
        ExportCommand::Tasks {
            domain,
            format: Format::TauBench,
            split,
            out,
        } => return export_tasks(paths, &domain, &split, &out),
    };
    let d = domain::find(&domain)?;
    let env = load_env(paths, d, from.as_deref(), seed, ruleset.as_deref())?;
    write_tau_bench(env.as_ref(), &out)?;
    println!(
        "wrote {} database to {} (tau-bench format)",
        d.name(),
        out.display()
    );
    Ok(())
}

pub fn replay(paths: &Paths, args: ReplayArgs) -> Result<(), CliError> {
    let d = domain::find(&args.domain)?;
    let tasks = replay::read_task_file(&args.tasks)?;
    let env = load_env(
        paths,
        d,
        args.db.as_deref(),
        args.seed,
        args.ruleset.as_deref(),
    )?;
    let (jsonl, outcomes) = replay::replay_tasks(env.as_ref(), &tasks);
    artifact::write_atomic(&args.out, jsonl.as_bytes())?;
    let ok = outcomes.iter().filter(|o| o.all_succeeded).count();
    let calls: usize = tasks.iter().map(|t| t.actions.len()).sum();
    eprintln!(
        "replayed {} task(s), {calls} call(s): {ok} fully succeeded, {} with a failing call -> {}",
        outcomes.len(),
        outcomes.len() - ok,
        args.out.display()
    );
    for o in outcomes.iter().filter(|o| !o.all_succeeded) {
        if let Some(j) = o.first_failure {
            let name = &tasks[o.task_index].actions[j].name;
            eprintln!(
                "  task {}: first failing call is action {j} ({name})",
                o.task_index
            );
        }
    }
    Ok(())
}

fn export_tasks(paths: &Paths, domain: &str, split: &str, out: &Path) -> Result<(), CliError> {
    let d = domain::find(domain)?;
    if !["train", "eval", "all"].contains(&split) {
        return Err(CliError::Failed(format!(
            "--split must be train, eval or all, not '{split}'"
        )));
    }
    let path =
        crate::pipeline::stage_dir(&paths.output, "tasks", d.name()).join("part-00000.parquet");
    let (rows, _) = artifact::read_records::<artifact::TaskRecord>(&path)?;
    let tasks: Vec<replay::TauTask> = rows
        .iter()
        .filter(|t| split == "all" || t.split == split)
        .map(replay::TauTask::from_record)
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
    let json = serde_json::to_vec_pretty(&tasks).unwrap_or_default();
    artifact::write_atomic(out, &json)?;
    println!(
        "wrote {} {} task(s) to {} (tau-bench format)",
        tasks.len(),
        d.name(),
        out.display()
    );
    Ok(())
}

#[derive(Debug, Args)]
pub struct RolloutArgs {
    #[arg(long)]
    pub domain: String,
    /// A tau-bench-format database directory (default: the generated database).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// A tau-bench-format task file (JSON list).
    #[arg(long)]
    pub tasks: PathBuf,
    /// Trials per task (default: `trials` of the config).
    #[arg(long)]
    pub trials: Option<u32>,
    /// Roles, step limit and concurrency come from this stage config.
    #[arg(long, default_value = "stages/eval.toml")]
    pub config: PathBuf,
    /// Output directory: rollouts.parquet, report.json, report.md (and a resumable journal).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Rule variant of the domain (e.g. retail: tau-emotion-bench, tau-bench); default: the
    /// one stages/db.toml selects.
    #[arg(long)]
    pub ruleset: Option<String>,
}

pub fn rollout(paths: &Paths, args: RolloutArgs) -> Result<(), CliError> {
    use crate::stage::rollouts::{EpisodeRoles, RolloutsConfig, roll_out};
    let d = domain::find(&args.domain)?;
    let seed = resolve_seed(paths, args.seed)?;
    let table = crate::config::read_table(&args.config)?;
    let mut cfg: RolloutsConfig = crate::config::parse_typed(&args.config, &table)?;
    if let Some(k) = args.trials {
        cfg.trials = k;
    }
    cfg.check()
        .map_err(|e| CliError::Failed(format!("{}: {e}", args.config.display())))?;
    crate::stage::roles::preflight_roles(&cfg.roles).map_err(CliError::Failed)?;
    let tau = replay::read_task_file(&args.tasks)?;
    let env = load_env(
        paths,
        d,
        args.db.as_deref(),
        Some(seed),
        args.ruleset.as_deref(),
    )?;
    let tasks = crate::stage::eval::tasks_from_tau_bench(env.as_ref(), d.name(), &tau);
    let cache = crate::stage::roles::cache_path(paths);
    let open = |role| {
        crate::llm::build_role(
            role,
            &cfg.roles.get(&role).cloned().unwrap_or_default(),
            &cache,
        )
    };
    let roles = EpisodeRoles {
        agent: open(crate::llm::Role::Agent).map_err(|e| CliError::Failed(e.to_string()))?,
        user: open(crate::llm::Role::User).map_err(|e| CliError::Failed(e.to_string()))?,
    };
    let policy = crate::stage::db::read_policy(paths, d, env.as_ref()).map_err(CliError::Failed)?;
    let journal = args.out.join(".journal.jsonl");
    let rows = roll_out(
        std::sync::Arc::from(env),
        std::sync::Arc::new(policy),
        &tasks,
        &cfg,
        &roles,
        seed,
        &journal,
    )
    .map_err(CliError::Failed)?;
    let prov = Provenance {
        version: env!("CARGO_PKG_VERSION").into(),
        stage: "rollout".into(),
        domain: d.name().into(),
        seed,
        ..Default::default()
    };
    artifact::write_records(&args.out.join("rollouts.parquet"), &rows, &prov)?;
    let report = crate::stage::eval::report(d.name(), &rows, cfg.trials);
    artifact::write_atomic(
        &args.out.join("report.json"),
        &serde_json::to_vec_pretty(&report).unwrap_or_default(),
    )?;
    let table = crate::stage::eval::report_table(std::slice::from_ref(&report));
    artifact::write_atomic(&args.out.join("report.md"), table.as_bytes())?;
    let _ = std::fs::remove_file(&journal);
    print!("{table}");
    Ok(())
}
