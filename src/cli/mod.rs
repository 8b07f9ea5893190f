//! The command line: clap definitions and dispatch. Each subcommand family lives in its own
//! file with its `Args` and `run`; all of them are thin over the library.
//!
//! Architecture invariant: no pipeline or domain logic here — parse, call, print.

/// `print!` for the commands: a reader that goes away (`tracer status | head -1`: EPIPE)
/// ends the output quietly, and the command goes on and exits as it would have
/// ([`write_stdout`]); `print!` would panic and exit 101.
macro_rules! out {
    ($($t:tt)*) => {
        $crate::cli::write_stdout(format_args!($($t)*))
    };
}

/// `println!` for the commands, quiet on EPIPE as [`out!`].
macro_rules! outln {
    () => {
        $crate::cli::write_stdout(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::cli::write_stdout(format_args!("{}\n", format_args!($($t)*)))
    };
}

pub mod compare;
pub mod data;
pub mod emotion;
pub mod graphs;
pub mod pipeline;
pub mod plan;
pub mod quality;
pub mod review;
pub mod serve;

use clap::{Parser, Subcommand};

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Pipeline(#[from] crate::pipeline::PipelineError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Domain(#[from] crate::domain::DomainError),
    #[error(transparent)]
    Graph(#[from] crate::graph::GraphError),
    #[error(transparent)]
    Scaffold(#[from] crate::scaffold::ScaffoldError),
    #[error(transparent)]
    Artifact(#[from] crate::artifact::ArtifactError),
    #[error(transparent)]
    TaskFile(#[from] crate::replay::TaskFileError),
    #[error(transparent)]
    Lock(#[from] crate::pipeline::LockError),
    #[error(transparent)]
    Journal(#[from] crate::pipeline::JournalError),
    #[error(transparent)]
    Card(#[from] crate::card::CardError),
    #[error(transparent)]
    Compare(#[from] crate::compare::CompareError),
    #[error(transparent)]
    Docs(#[from] crate::docs::DocsError),
    #[error(transparent)]
    Rollout(#[from] crate::rollout::RolloutError),
    #[error(transparent)]
    Project(#[from] crate::project::ProjectError),
    #[error(transparent)]
    Plan(#[from] crate::plan::PlanError),
    /// A check ran and found problems (already printed); exit non-zero.
    #[error("{0}")]
    Failed(String),
}

#[derive(Debug, Parser)]
#[command(
    name = "tracer",
    version,
    about = "Manufacture verified, emotion-conditioned tool-use tasks and agent trajectories as Parquet"
)]
pub struct Cli {
    /// The run's roles file: every model role of the run in one TOML (docs/real-models.md).
    /// Default: $TRACER_ROLES, else roles.toml at the project root when it exists.
    #[arg(long, global = true, value_name = "FILE")]
    pub roles: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a stage and whatever is stale upstream of it.
    Run(pipeline::RunArgs),
    /// Merge the shard parts of an item-parallel stage into its ordinary output.
    Merge(pipeline::MergeArgs),
    /// Write output/README.md, the Hugging Face dataset card of a complete, fresh run.
    Card(pipeline::CardArgs),
    /// Show fresh/stale per stage and domain.
    Status(pipeline::StatusArgs),
    /// Print the stage DAG as DOT.
    Graph,
    /// Check configs, graphs, policies and registries (no LLM calls).
    Validate,
    /// List domains, stages and tools.
    List,
    /// Write the generated blocks of the per-domain reference pages (docs/domains/) from
    /// the tool specs, graphs, generated databases and differential fixtures.
    Docs(pipeline::DocsArgs),
    /// Tool dependency graphs: verify, build, render, stats.
    #[command(subcommand)]
    Graphs(graphs::GraphsCommand),
    /// Start something new from a working skeleton: `scaffold domain <name>`.
    #[command(subcommand)]
    Scaffold(pipeline::ScaffoldCommand),
    /// Import tau-bench-format data.
    #[command(subcommand)]
    Import(data::ImportCommand),
    /// Export data in other formats.
    #[command(subcommand)]
    Export(data::ExportCommand),
    /// Replay a task file's gold actions and audit every call.
    Replay(data::ReplayArgs),
    /// Roll out a tau-bench-format task file k times and score it (Avg@k, Pass^k).
    Rollout(data::RolloutArgs),
    /// Why rollouts fail: run the `analysis` stage (or analyse a `tracer rollout` directory)
    /// and print the fault tables.
    Analyze(data::AnalyzeArgs),
    /// Differential testing against a reference environment: sample call sequences.
    #[command(subcommand, hide = true)]
    Reference(data::ReferenceCommand),
    /// Run the benchmarks and print a Markdown report.
    Bench(pipeline::BenchArgs),
    /// A run's tables as Markdown, per domain: the task funnel (traces -> grounded ->
    /// refined -> verified), manual review, emotion mix, rollouts, evaluation (Avg@k,
    /// Pass^k), cost, faults and data quality; an output with no stage run is an error.
    Stats(pipeline::StatsArgs),
    /// What a run will cost before it runs: requests, tokens and dollars per stage and
    /// role, from the configuration and a measured run (or `--pilot N` on the endpoints).
    Plan(plan::PlanArgs),
    /// Compare two evaluations task by task: Avg@k and Pass^k per domain and overall, the
    /// difference with its 95% interval, a paired p-value, and whether it is within noise.
    Compare(compare::CompareArgs),
    /// Data quality per domain and split: coherence, answered questions, unknowable ids,
    /// length, repetition, language, emotion mix, clean SFT rows.
    Quality(quality::QualityArgs),
    /// Review the evaluation candidates in a local web app (127.0.0.1): accept, reject or
    /// edit; decisions go to reviews/<domain>.jsonl, which the `reviewed` stage applies.
    Review(review::ReviewArgs),
    /// Serve the domains and their verified tasks as an RL environment (127.0.0.1): reset,
    /// step and verify over HTTP, the agent's tools over MCP; see docs/serve.md.
    Serve(serve::ServeArgs),
    /// Play one episode of a task against an OpenAI-compatible endpoint as the agent and
    /// print its reward and rollout record as JSON.
    Episode(serve::EpisodeArgs),
    #[command(flatten)]
    Emotion(emotion::EmotionCommands),
}

/// The command line as clap sees it, with what only the registry knows: `run --help`
/// lists the stages, in the order they run.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let dag = crate::stage::registry::dag();
    let stages: Vec<&str> = dag.topo_order().iter().map(|s| s.name()).collect();
    let listed = format!("Stages, in the order they run: {}", stages.join(", "));
    Cli::command().mut_subcommand("run", |c| c.after_help(listed))
}

/// Write to stdout. A broken pipe (the reader closed it: `| head`) is not an error of the
/// command: the rest of its output is dropped and it finishes as it would have. Any other
/// failure to write stdout panics, as `print!` does.
pub fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => panic!("failed printing to stdout: {e}"),
    }
}

/// Parse the process arguments and run; `Err` carries the one-line error to print.
pub fn main() -> Result<(), CliError> {
    use clap::FromArgMatches;
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
    let mut paths = crate::config::Paths::from_env();
    if let Some(file) = cli.roles.clone() {
        paths = paths.with_roles(file);
    }
    // One check of the roles file for every command (`validate` lists it with the rest): a
    // malformed role there would otherwise surface stage by stage, or not at all.
    if !matches!(cli.command, Command::Validate) {
        let problems = crate::llm::config::roles_file_problems(&paths);
        if let Some(first) = problems.first() {
            return Err(CliError::Failed(match problems.len() {
                1 => first.clone(),
                n => format!(
                    "{first} (and {} more problem(s); `tracer validate` lists them)",
                    n - 1
                ),
            }));
        }
    }
    // One check of TRACER_STAGE_OVERRIDES for every command (`validate` lists it with the
    // rest): a misspelt directory or file would otherwise fall back to stages/ in silence.
    if !matches!(cli.command, Command::Validate)
        && let Some(dir) = &paths.overrides
    {
        let problems = crate::pipeline::validate::override_problems(
            dir,
            crate::stage::registry::dag().stages(),
        );
        if let Some(first) = problems.first() {
            return Err(CliError::Failed(match problems.len() {
                1 => first.clone(),
                n => format!(
                    "{first} (and {} more problem(s); `tracer validate` lists them)",
                    n - 1
                ),
            }));
        }
    }
    // A project's remote domains (`domains/*/domain.toml`) join the registry before any
    // command reads it; their servers are ended on the way out, whatever the outcome.
    crate::remote::load(&paths.root).map_err(|e| CliError::Failed(e.to_string()))?;
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&paths, cli.command)))
            .unwrap_or_else(
                |payload| match crate::domain::environment_failure(payload.as_ref()) {
                    Some(message) => Err(CliError::Failed(message.to_string())),
                    None => std::panic::resume_unwind(payload),
                },
            );
    crate::remote::shutdown();
    // Answers still queued for a response cache's commit are written before the process
    // ends, whatever the command's outcome (a cut-off committer would lose them).
    crate::llm::cache::flush_all();
    result
}

fn run(paths: &crate::config::Paths, command: Command) -> Result<(), CliError> {
    match command {
        Command::Run(a) => pipeline::run(paths, a),
        Command::Merge(a) => pipeline::merge(paths, a),
        Command::Status(a) => pipeline::status(paths, a),
        Command::Card(a) => pipeline::card(paths, a),
        Command::Graph => {
            out!("{}", crate::stage::registry::dag().to_dot());
            Ok(())
        }
        Command::Validate => pipeline::validate(paths),
        Command::List => pipeline::list(),
        Command::Docs(a) => pipeline::docs(paths, a),
        Command::Graphs(c) => graphs::run(paths, c),
        Command::Scaffold(c) => pipeline::scaffold(paths, c),
        Command::Import(c) => data::import(paths, c),
        Command::Export(c) => data::export(paths, c),
        Command::Replay(a) => data::replay(paths, a),
        Command::Rollout(a) => data::rollout(paths, a),
        Command::Analyze(a) => data::analyze(paths, a),
        Command::Reference(c) => data::reference(paths, c),
        Command::Bench(a) => pipeline::bench(paths, a),
        Command::Stats(a) => pipeline::stats(paths, a),
        Command::Plan(a) => plan::plan(paths, a),
        Command::Compare(a) => compare::compare(a),
        Command::Quality(a) => quality::quality(paths, a),
        Command::Review(a) => review::review(paths, a),
        Command::Serve(a) => serve::serve(paths, a),
        Command::Episode(a) => serve::episode(paths, a),
        Command::Emotion(c) => {
            // `emotion map` / `emotion eval` may (re)train and cache the model in the output.
            let _lock = match &c {
                emotion::EmotionCommands::Emotion(_) => Some(lock_output(paths)?),
                emotion::EmotionCommands::Anchors(_) => None,
            };
            emotion::run(paths, c)
        }
    }
}

/// Take the single-writer lock of the output directory for this command; readers
/// (`status`, `stats`, `export`, `validate`) never take it.
pub fn lock_output(paths: &crate::config::Paths) -> Result<crate::pipeline::OutputLock, CliError> {
    Ok(crate::pipeline::OutputLock::acquire(
        &paths.output,
        &crate::pipeline::lock::command_line(),
    )?)
}

/// The run seed: `--seed` wins over `stages/pipeline.toml`.
pub fn resolve_seed(paths: &crate::config::Paths, seed: Option<u64>) -> Result<u64, CliError> {
    Ok(match seed {
        Some(s) => s,
        None => crate::config::PipelineConfig::load(paths)?.seed,
    })
}

/// Domains to work on: `--domain` flags, else `stages/pipeline.toml`, else all.
pub fn resolve_domains(
    paths: &crate::config::Paths,
    flags: &[String],
) -> Result<Vec<&'static dyn crate::domain::Domain>, CliError> {
    let names = if flags.is_empty() {
        crate::config::PipelineConfig::load(paths)?.domains
    } else {
        flags.to_vec()
    };
    if names.is_empty() {
        return Ok(crate::domain::registry().to_vec());
    }
    Ok(names
        .iter()
        .map(|n| crate::domain::find(n))
        .collect::<Result<Vec<_>, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument of every command (and subcommand) says what it is for in `--help`.
    #[test]
    fn every_argument_has_help() {
        fn walk(c: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in c.get_arguments() {
                let id = a.get_id().as_str();
                if id != "help" && id != "version" && a.get_help().is_none() {
                    missing.push(format!("{path} --{}", a.get_long().unwrap_or(id)));
                }
            }
            for sub in c.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&command(), "tracer", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
    }

    /// `tracer run --help` lists every stage of the registry, in the order they run.
    #[test]
    fn run_help_lists_the_stages() {
        let mut cmd = command();
        let help = cmd
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        let dag = crate::stage::registry::dag();
        let names: Vec<&str> = dag.topo_order().iter().map(|s| s.name()).collect();
        assert!(names.len() >= 14, "{names:?}");
        assert!(
            help.contains(&format!(
                "Stages, in the order they run: {}",
                names.join(", ")
            )),
            "{help}"
        );
    }

    /// `stats --help` names every table `tracer stats` prints.
    #[test]
    fn stats_help_names_its_tables() {
        let mut cmd = command();
        let help = cmd
            .find_subcommand_mut("stats")
            .unwrap()
            .render_long_help()
            .to_string();
        for table in [
            "funnel",
            "review",
            "emotion",
            "rollouts",
            "evaluation",
            "cost",
            "faults",
            "quality",
        ] {
            assert!(help.contains(table), "{table}: {help}");
        }
    }
}
