//! `tracer import | export | replay`: moving databases and tasks in and out of tau-bench's
//! formats, and auditing gold actions by replay.

use super::{CliError, resolve_seed};
use crate::artifact::{self, Provenance, json_table::json_rows_to_batch};
use crate::config::Paths;
use crate::domain::{self, Environment};
use crate::harness::metrics;
use crate::replay;
use crate::rollout;
use crate::split::Split;
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
        /// The domain (see `tracer list`).
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
        /// The domain (see `tracer list`).
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
        /// The domain (see `tracer list`).
        #[arg(long)]
        domain: String,
        /// The file format (tau-bench's JSON).
        #[arg(long, value_enum, default_value = "tau-bench")]
        format: Format,
        /// `train`, `eval` or `all`.
        #[arg(long, default_value = "all")]
        split: Splits,
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
        /// The domain (see `tracer list`).
        #[arg(long)]
        domain: String,
        /// The file format (tau-bench's JSON).
        #[arg(long, value_enum, default_value = "tau-bench")]
        format: Format,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Export this tau-bench-format database instead of the generated one.
        #[arg(long)]
        from: Option<PathBuf>,
        /// Run seed (default: `seed` in stages/pipeline.toml).
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
        /// The domain (see `tracer list`).
        #[arg(long)]
        domain: String,
        /// Run seed (default: `seed` in stages/pipeline.toml).
        #[arg(long)]
        seed: Option<u64>,
        /// How many call sequences to draw.
        #[arg(long, default_value_t = 150)]
        count: usize,
        /// The directory to write calls.jsonl, meta.json and data/ into.
        #[arg(long)]
        out: PathBuf,
        /// Rule variant of the domain (e.g. retail: tau-emotion-bench, tau-bench); default:
        /// the one stages/db.toml selects.
        #[arg(long)]
        ruleset: Option<String>,
        /// Draw the sequences on a reference database instead (a tau-bench directory or a
        /// tau2 `db.json`), to compare both tool sets on the reference's own data; the
        /// meta's `db` then names the file.
        #[arg(long)]
        db: Option<PathBuf>,
    },
}

pub fn reference(paths: &Paths, cmd: ReferenceCommand) -> Result<(), CliError> {
    let ReferenceCommand::Calls {
        domain,
        seed,
        count,
        out,
        ruleset,
        db,
    } = cmd;
    artifact::check_output_dir(&out)?;
    let d = domain::find(&domain)?;
    let seed = resolve_seed(paths, seed)?;
    let env = load_env(paths, d, db.as_deref(), Some(seed), ruleset.as_deref())?;
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
    if let Some(path) = &db {
        meta["db"] = path.display().to_string().into();
    }
    let meta = serde_json::to_vec_pretty(&meta).unwrap_or_default();
    artifact::write_atomic(&out.join("meta.json"), &meta)?;
    write_tau_bench(env.as_ref(), &out.join("data"))?;
    eprintln!("wrote {} call sequences to {}", seqs.len(), out.display());
    Ok(())
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The domain (see `tracer list`).
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
    /// Run seed (default: `seed` in stages/pipeline.toml).
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
    // The seed draws the generated database only (an imported one ignores it), so it is
    // resolved only then: `--seed` or stages/pipeline.toml.
    let seed = match db {
        Some(_) => 0,
        None => resolve_seed(paths, seed)?,
    };
    Ok(crate::project::command_database(
        paths, domain, db, seed, ruleset,
    )?)
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
    if let Some(out) = &out {
        artifact::check_output_dir(out)?;
    }
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
    outln!(
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
        outln!("wrote {}", out.display());
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
        } => return export_tasks(paths, &domain, split, &out, allow_stale, seed),
    };
    artifact::check_output_dir(&out)?;
    let d = domain::find(&domain)?;
    let env = load_env(paths, d, from.as_deref(), seed, ruleset.as_deref())?;
    write_tau_bench(env.as_ref(), &out)?;
    outln!(
        "wrote {} database to {} (tau-bench format)",
        d.name(),
        out.display()
    );
    Ok(())
}

/// Read a task file and check the emotion labels its tasks carry against the taxonomy
/// (`emotion_anchors/taxonomy.json`): an unknown label is one line naming the task. A task
/// whose `emotion_leaf` belongs to another family than its `emotion_family` is read with
/// both labels as given, and a warning naming it goes to stderr: the authors' own test
/// tasks carry such pairs (airline: 10 of 70), and their scores are grouped by the family
/// they give.
fn read_checked_tasks(paths: &Paths, file: &Path) -> Result<Vec<replay::TauTask>, CliError> {
    let tasks = replay::read_task_file(file)?;
    if !tasks.iter().any(|t| {
        t.emotion_family.is_some()
            || t.emotion_leaf.is_some()
            || t.dimension_politeness.is_some()
            || t.dimension_urgency.is_some()
            || t.dimension_trust_in_agent.is_some()
    }) {
        return Ok(tasks);
    }
    let taxonomy =
        crate::emotion::taxonomy::Taxonomy::load(&crate::emotion::taxonomy_path(&paths.root))
            .map_err(|e| CliError::Failed(e.to_string()))?;
    for (i, t) in tasks.iter().enumerate() {
        taxonomy
            .check_labels(
                t.emotion_family.as_deref(),
                t.emotion_leaf.as_deref(),
                t.dimension_politeness.as_deref(),
                t.dimension_urgency.as_deref(),
                t.dimension_trust_in_agent.as_deref(),
            )
            .map_err(|message| replay::TaskFileError {
                path: file.display().to_string(),
                message: format!("task [{i}]: {message}"),
            })?;
        if let Some(what) =
            taxonomy.family_disagreement(t.emotion_family.as_deref(), t.emotion_leaf.as_deref())
        {
            eprintln!(
                "warning: {}: task [{i}] (user {}): {what}; both labels kept as given",
                file.display(),
                t.user_id
            );
        }
    }
    Ok(tasks)
}

pub fn replay(paths: &Paths, args: ReplayArgs) -> Result<(), CliError> {
    artifact::check_output_file(&args.out)?;
    let d = domain::find(&args.domain)?;
    let tasks = read_checked_tasks(paths, &args.tasks)?;
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

/// `--split`: one split's tasks, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Splits {
    Only(Split),
    All,
}

impl std::str::FromStr for Splits {
    type Err = String;
    fn from_str(s: &str) -> Result<Splits, String> {
        match s {
            "all" => Ok(Splits::All),
            s => s
                .parse()
                .map(Splits::Only)
                .map_err(|e| format!("{e} (or 'all')")),
        }
    }
}

fn export_tasks(
    paths: &Paths,
    domain: &str,
    split: Splits,
    out: &Path,
    allow_stale: bool,
    seed: Option<u64>,
) -> Result<(), CliError> {
    artifact::check_output_file(out)?;
    let d = domain::find(domain)?;
    // Hand on only what the pipeline vouches for: the file as its manifest records it,
    // from a stage that is fresh all the way up.
    let runner = crate::pipeline::Runner::new(
        paths,
        crate::stage::registry::dag(),
        resolve_seed(paths, seed)?,
        &[],
    )?;
    let path = runner.checked_output("tasks", d, "part-00000.parquet", allow_stale)?;
    let (rows, _) = artifact::read_records::<artifact::TaskRecord>(&path)?;
    let tasks: Vec<replay::TauTask> = rows
        .iter()
        .filter(|t| split == Splits::All || split == Splits::Only(t.split))
        .map(replay::TauTask::from_record)
        .collect();
    let json = serde_json::to_vec_pretty(&tasks).unwrap_or_default();
    artifact::write_atomic(out, &json)?;
    outln!(
        "wrote {} {} task(s) to {} (tau-bench format)",
        tasks.len(),
        d.name(),
        out.display()
    );
    Ok(())
}

#[derive(Debug, Args)]
pub struct RolloutArgs {
    /// The domain (see `tracer list`).
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
    /// Run seed (default: `seed` in stages/pipeline.toml).
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

pub fn rollout(paths: &Paths, args: RolloutArgs) -> Result<(), CliError> {
    let d = domain::find(&args.domain)?;
    let seed = resolve_seed(paths, args.seed)?;
    // A directory: rollouts.parquet, report.json and report.md go there.
    artifact::check_output_dir(&args.out).map_err(|e| CliError::Failed(format!("--out {e}")))?;
    let mut table = crate::config::read_table(&args.config)?;
    if let Some(k) = args.trials {
        table.insert("trials".into(), toml::Value::Integer(i64::from(k)));
    }
    // The same checks `tracer validate` runs on this config (with --trials applied).
    let config = rollout::RolloutsConfig::load(&args.config, &table)?;
    // The task file too, before anything is locked or written.
    let tasks = read_checked_tasks(paths, &args.tasks)?;
    let tasks_bytes = std::fs::read(&args.tasks)
        .map_err(|e| CliError::Failed(format!("{}: {e}", args.tasks.display())))?;
    let env = load_env(
        paths,
        d,
        args.db.as_deref(),
        Some(seed),
        args.ruleset.as_deref(),
    )?;
    let run = rollout::TaskFileRun {
        domain: d,
        tasks: &tasks,
        tasks_sha256: artifact::sha256_hex(&tasks_bytes),
        env,
        config: &config,
        config_hash: crate::config::config_hash(&table),
        seed,
        out: &args.out,
        fresh: args.fresh,
        include_broken_gold: args.include_broken_gold,
    };
    let report = rollout::run_task_file(paths, run)?;
    out!("{}", metrics::report_table(std::slice::from_ref(&report)));
    Ok(())
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Restrict to these domains (repeatable). Default: stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Run seed (default: `seed` in stages/pipeline.toml).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Re-run the analysis (and whatever it plans) even when fresh.
    #[arg(long)]
    pub force: bool,
    /// Analyse a `tracer rollout` output directory (imported tasks) instead of the
    /// pipeline's rollouts and eval; writes DIR/analysis.parquet.
    #[arg(long, value_name = "DIR")]
    pub rollouts: Option<PathBuf>,
    /// With --rollouts: the database the rollouts ran on (default: the generated one, as
    /// `tracer rollout` defaults).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// With --rollouts: the rule variant the rollouts ran under.
    #[arg(long)]
    pub ruleset: Option<String>,
    /// With --rollouts: scope and judge role come from this config.
    #[arg(long, default_value = "stages/analysis.toml")]
    pub config: PathBuf,
}

/// `tracer analyze`: the `analysis` stage (and what is stale upstream), then the fault
/// tables; or, with `--rollouts DIR`, the same analysis of a `tracer rollout` directory.
pub fn analyze(paths: &Paths, args: AnalyzeArgs) -> Result<(), CliError> {
    let Some(dir) = args.rollouts.clone() else {
        let names: Vec<String> = super::resolve_domains(paths, &args.domains)?
            .iter()
            .map(|d| d.name().to_string())
            .collect();
        super::pipeline::run(
            paths,
            super::pipeline::RunArgs {
                stage: "analysis".into(),
                domains: args.domains,
                seed: args.seed,
                force: args.force,
                shard: None,
                upstream: false,
            },
        )?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let rows = crate::stats::read_faults(paths, &names)?;
        out!("{}", crate::stats::fault_report(&rows));
        return Ok(());
    };
    analyze_rollout_dir(paths, &args, &dir)
}

fn analyze_rollout_dir(paths: &Paths, args: &AnalyzeArgs, dir: &Path) -> Result<(), CliError> {
    let table = crate::config::read_table(&args.config)?;
    let config = crate::analysis::AnalysisConfig::load(&args.config, &table)?;
    let analysed = rollout::analyze_run_dir(
        paths,
        rollout::RunDirAnalysis {
            dir,
            config: &config,
            config_hash: crate::config::config_hash(&table),
            domains: &args.domains,
            seed: args.seed,
            db: args.db.as_deref(),
            ruleset: args.ruleset.as_deref(),
        },
    )?;
    eprintln!("tracer: {}", crate::analysis::summary(&analysed.rows));
    if analysed.unreadable > 0 {
        eprintln!(
            "tracer: {} judge answers unreadable (those episodes keep the detectors' labels)",
            analysed.unreadable
        );
    }
    out!("{}", crate::stats::fault_report(&analysed.rows));
    Ok(())
}
