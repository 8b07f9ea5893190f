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
    /// Read a tau2 `db.json` (ToolOrchestra-style domains) into our types.
    Tau2 {
        #[arg(long)]
        domain: String,
        /// The `db.json` file.
        #[arg(long)]
        from: PathBuf,
        /// Also write it as Parquet tables plus one JSON file per table into this directory.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Rule variant of the domain; default: the one stages/db.toml selects.
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
        /// Export even when the `tasks` stage is stale (its files must still match their
        /// manifest).
        #[arg(long)]
        allow_stale: bool,
        /// The run seed the staleness check assumes (default: stages/pipeline.toml).
        #[arg(long)]
        seed: Option<u64>,
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
        Some(path) => domain::import_reference(domain, path)?,
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
    let (ImportCommand::TauBench {
        domain,
        from,
        out,
        ruleset,
    }
    | ImportCommand::Tau2 {
        domain,
        from,
        out,
        ruleset,
    }) = cmd;
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
            allow_stale,
            seed,
        } => return export_tasks(paths, &domain, &split, &out, allow_stale, seed),
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

fn export_tasks(
    paths: &Paths,
    domain: &str,
    split: &str,
    out: &Path,
    allow_stale: bool,
    seed: Option<u64>,
) -> Result<(), CliError> {
    let d = domain::find(domain)?;
    if !["train", "eval", "all"].contains(&split) {
        return Err(CliError::Failed(format!(
            "--split must be train, eval or all, not '{split}'"
        )));
    }
    // Hand on only what the pipeline vouches for: the file as its manifest records it,
    // from a stage that is fresh all the way up.
    let runner =
        crate::pipeline::Runner::new(paths, crate::stage::dag(), resolve_seed(paths, seed)?, &[])?;
    let path = runner.checked_output("tasks", d, "part-00000.parquet", allow_stale)?;
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
    /// Discard a journal left in --out by a run with other settings instead of refusing.
    #[arg(long)]
    pub fresh: bool,
    /// Also roll out and score tasks whose gold actions fail and change nothing (by default
    /// they are listed in the report and left out: doing nothing would pass them).
    #[arg(long)]
    pub include_broken_gold: bool,
    /// Rule variant of the domain (e.g. retail: tau-emotion-bench, tau-bench); default: the
    /// one stages/db.toml selects.
    #[arg(long)]
    pub ruleset: Option<String>,
}

/// The files `tracer rollout` writes into --out (besides its journal).
const ROLLOUT_OUTPUTS: [&str; 3] = ["rollouts.parquet", "report.json", "report.md"];

pub fn rollout(paths: &Paths, args: RolloutArgs) -> Result<(), CliError> {
    use crate::harness::{batch, metrics};
    use crate::stage::rollouts::{RolloutsConfig, open_journal};
    let d = domain::find(&args.domain)?;
    let seed = resolve_seed(paths, args.seed)?;
    if args.out.exists() && !args.out.is_dir() {
        return Err(CliError::Failed(format!(
            "--out {}: is a file; give a directory (rollouts.parquet, report.json and report.md go there)",
            args.out.display()
        )));
    }
    let mut table = crate::config::read_table(&args.config)?;
    if let Some(k) = args.trials {
        table.insert("trials".into(), toml::Value::Integer(i64::from(k)));
    }
    // The same checks `tracer validate` runs on this config (with --trials applied).
    let cfg = RolloutsConfig::load(&args.config, &table)?;
    let endpoints = cfg
        .roles
        .values()
        .any(|r| r.provider == crate::llm::Provider::Openai);
    // One writer per --out; and per output root when the response cache there is used.
    let _out_lock =
        crate::pipeline::OutputLock::acquire(&args.out, &crate::pipeline::lock::command_line())?;
    let _cache_lock = if endpoints
        && std::path::absolute(&paths.output).ok() != std::path::absolute(&args.out).ok()
    {
        Some(super::lock_output(paths)?)
    } else {
        None
    };
    crate::stage::roles::preflight_roles(&cfg.roles).map_err(CliError::Failed)?;
    let tau = replay::read_task_file(&args.tasks)?;
    let env = load_env(
        paths,
        d,
        args.db.as_deref(),
        Some(seed),
        args.ruleset.as_deref(),
    )?;
    // Replay the gold first: a task whose gold fails and changes nothing scores 100% for an
    // agent that does nothing.
    let broken = replay::broken_gold(env.as_ref(), &tau);
    let all_tasks = replay::tasks_from_tau_bench(env.as_ref(), d.name(), &tau);
    let broken_ids: Vec<String> = all_tasks
        .iter()
        .zip(&broken)
        .filter(|(_, b)| **b)
        .map(|(t, _)| t.task_id.clone())
        .collect();
    let tasks: Vec<_> = all_tasks
        .into_iter()
        .zip(&broken)
        .filter(|(_, b)| args.include_broken_gold || !**b)
        .map(|(t, _)| t)
        .collect();
    // The same role set-up as the rollouts and eval stages (endpoint roles carry as many
    // calls as there are episodes in flight unless their table says otherwise).
    let roles = batch::open_roles(
        &cfg.roles,
        cfg.concurrency,
        &crate::stage::roles::cache_path(paths),
    )
    .map_err(|e| CliError::Failed(e.to_string()))?;
    let policy = crate::stage::db::read_policy(paths, d, env.as_ref()).map_err(CliError::Failed)?;
    if crate::pipeline::validate::policy_is_empty(&policy) {
        return Err(CliError::Failed(format!(
            "the {} policy is empty (the agent's system prompt would say nothing)",
            d.name()
        )));
    }
    // Everything that decides the episodes: a journal of other settings is never merged.
    let tasks_bytes = std::fs::read(&args.tasks)
        .map_err(|e| CliError::Failed(format!("{}: {e}", args.tasks.display())))?;
    let key: crate::pipeline::JournalKey = [
        ("domain", d.name().to_string()),
        ("tasks", artifact::sha256_hex(&tasks_bytes)),
        ("database", env.state_hash().to_hex()),
        ("config", crate::config::config_hash(&table)),
        ("trials", cfg.trials.to_string()),
        ("seed", seed.to_string()),
        ("agent", roles.agent.model_id()),
        ("user", roles.user.model_id()),
        ("policy", artifact::sha256_hex(policy.as_bytes())),
        ("broken_gold", args.include_broken_gold.to_string()),
        ("code", env!("TRACER_CODE_HASH").to_string()),
        ("tool", env!("CARGO_PKG_VERSION").to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let journal_path = args.out.join(".journal.jsonl");
    let on_mismatch = if args.fresh {
        crate::pipeline::OnMismatch::StartFresh
    } else {
        crate::pipeline::OnMismatch::Refuse(
            "rerun with --fresh to discard it, or choose another --out".to_string(),
        )
    };
    let starting = !journal_path.exists();
    let resumed = open_journal(&journal_path, &key, "rollout", on_mismatch)?;
    if let Some(changed) = &resumed.discarded {
        eprintln!(
            "tracer: discarded {} of a run with other settings ({changed})",
            journal_path.display()
        );
    }
    if starting || resumed.discarded.is_some() {
        // Results of an earlier run must not sit beside a journal of this one.
        for file in ROLLOUT_OUTPUTS {
            let _ = std::fs::remove_file(args.out.join(file));
        }
    }
    let crate::pipeline::Resumed {
        mut journal, done, ..
    } = resumed;
    let rows = batch::roll_out(
        std::sync::Arc::from(env),
        std::sync::Arc::new(policy),
        &tasks,
        &cfg.batch(),
        &roles,
        seed,
        done,
        &mut |rec| journal.append(rec).map_err(|e| e.to_string()),
    )
    .map_err(CliError::Failed)?;
    metrics::check_errored(&rows, cfg.max_errored_share).map_err(|e| {
        CliError::Failed(format!(
            "{e}; finished episodes are in {}",
            journal_path.display()
        ))
    })?;
    let prov = Provenance {
        version: env!("CARGO_PKG_VERSION").into(),
        stage: "rollout".into(),
        domain: d.name().into(),
        seed,
        ..Default::default()
    };
    artifact::write_records(&args.out.join("rollouts.parquet"), &rows, &prov)?;
    let mut report = metrics::report(d.name(), &rows, cfg.trials);
    report.broken_gold = broken_ids;
    report.broken_gold_scored = args.include_broken_gold;
    artifact::write_atomic(
        &args.out.join("report.json"),
        &serde_json::to_vec_pretty(&report).unwrap_or_default(),
    )?;
    let table = metrics::report_table(std::slice::from_ref(&report));
    artifact::write_atomic(&args.out.join("report.md"), table.as_bytes())?;
    // Last: until here a kill resumes from the journal.
    std::fs::remove_file(&journal_path)
        .map_err(|e| CliError::Failed(format!("{}: {e}", journal_path.display())))?;
    print!("{table}");
    Ok(())
}
