//! `tracer run | status | validate | list | bench`.

use super::{CliError, resolve_domains, resolve_seed};
use crate::config::Paths;
use crate::domain::{self, ToolKind};
use crate::pipeline::{Freshness, Runner};
use clap::Args;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The stage to bring up to date (e.g. `traces`).
    pub stage: String,
    /// Restrict to these domains (repeatable). Default: stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Run seed (default: `seed` in stages/pipeline.toml).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Re-run the planned stages even when fresh.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[arg(long = "domain")]
    pub domains: Vec<String>,
}

pub fn stats(paths: &Paths, args: StatsArgs) -> Result<(), CliError> {
    let names: Vec<&str> = resolve_domains(paths, &args.domains)?
        .iter()
        .map(|d| d.name())
        .collect();
    println!("## Task funnel\n");
    print!("{}", crate::stats::funnel(paths, &names)?);
    let emotions = crate::stats::emotion_table(paths, &names)?;
    if emotions.lines().count() > 2 {
        println!("\n## Emotion conditions of verified tasks\n");
        print!("{emotions}");
    }
    let rollouts = crate::stats::rollout_table(paths, &names)?;
    if rollouts.lines().count() > 2 {
        println!("\n## Rollouts (training)\n");
        print!("{rollouts}");
    }
    if let Some(eval) = crate::stats::eval_table(paths, &names)? {
        println!("\n## Evaluation\n");
        print!("{eval}");
    }
    print!(
        "{}",
        crate::stats::fault_report(&crate::stats::read_faults(paths, &names)?)
    );
    Ok(())
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[arg(long)]
    pub seed: Option<u64>,
    /// Shorter runs of every benchmark (a smoke check, noisier figures).
    #[arg(long)]
    pub quick: bool,
    /// Only the harness benchmarks (episodes against the loopback server).
    #[arg(long)]
    pub harness_only: bool,
    /// Internal: serve the scripted loopback server for the harness benchmarks (the
    /// script as JSON) until stdin closes.
    #[arg(long, hide = true, value_name = "SCRIPT")]
    pub loopback_server: Option<String>,
}

fn runner<'a>(
    paths: &'a Paths,
    domains: &[String],
    seed: Option<u64>,
) -> Result<Runner<'a>, CliError> {
    let seed = resolve_seed(paths, seed)?;
    let domains = resolve_domains(paths, domains)?;
    let mut r = Runner::new(paths, crate::stage::dag(), seed, &[])?;
    r.domains = domains;
    Ok(r)
}

pub fn run(paths: &Paths, args: RunArgs) -> Result<(), CliError> {
    let mut r = runner(paths, &args.domains, args.seed)?;
    r.force = args.force;
    // Check before touching the output, then hold it for the whole run.
    r.validate(&args.stage)?;
    let _lock = super::lock_output(paths)?;
    for note in r.recover()? {
        eprintln!("tracer: recovered: {note}");
    }
    eprintln!(
        "tracer: running '{}' (seed {}, domains {})",
        args.stage,
        r.seed,
        r.domains
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    r.run(&args.stage, |step| {
        for note in &step.notes {
            eprintln!("tracer: {note}");
        }
        let verb = if step.ran { "ran  " } else { "fresh" };
        eprintln!(
            "  {verb} {:<8} {:<10} {}",
            step.stage, step.domain, step.summary
        );
    })?;
    Ok(())
}

pub fn status(paths: &Paths, args: StatusArgs) -> Result<(), CliError> {
    let r = runner(paths, &args.domains, args.seed)?;
    println!("| stage | domain | status |\n|---|---|---|");
    for (stage, domain, state) in r.status(&r.dag.topo_order())? {
        let state = match state {
            Freshness::Fresh => "fresh".to_string(),
            Freshness::Stale(why) => format!("stale ({why})"),
        };
        println!("| {stage} | {domain} | {state} |");
    }
    Ok(())
}

pub fn list() -> Result<(), CliError> {
    println!("stages (dependency order):");
    for s in crate::stage::dag().topo_order() {
        println!("  {:<10} <- {}", s.name(), s.inputs().join(", "));
    }
    println!("domains:");
    for d in domain::registry() {
        let specs = d.tool_specs();
        let reads = specs.iter().filter(|s| s.kind == ToolKind::Read).count();
        println!(
            "  {} ({} tools: {} read, {} write)",
            d.name(),
            specs.len(),
            reads,
            specs.len() - reads
        );
        for (i, r) in d.rulesets().iter().enumerate() {
            let default = if i == 0 { " (default)" } else { "" };
            println!("    ruleset {}{default}: {}", r.name, r.description);
        }
        for s in specs {
            let end = if s.terminates { ", ends episode" } else { "" };
            println!("    {:<34} {}{end}", s.name, s.kind.as_str());
        }
    }
    Ok(())
}

/// Every check of `tracer validate`, as a list of problems (empty = valid): the shared
/// validation path over every stage and every registered domain.
pub fn validation_problems(paths: &Paths) -> Vec<String> {
    let dag = crate::stage::dag();
    crate::pipeline::validate::problems(
        paths,
        &crate::pipeline::validate::Scope {
            stages: dag.stages(),
            domains: domain::registry(),
        },
    )
}

pub fn validate(paths: &Paths) -> Result<(), CliError> {
    let problems = validation_problems(paths);
    if problems.is_empty() {
        println!(
            "ok: {} stage configs, {} domains (graphs, policies, tools) are valid",
            crate::stage::dag().stages().len(),
            domain::registry().len()
        );
        Ok(())
    } else {
        for p in &problems {
            eprintln!("{p}");
        }
        Err(CliError::Failed(format!(
            "validation found {} problem(s)",
            problems.len()
        )))
    }
}

pub fn bench(paths: &Paths, args: BenchArgs) -> Result<(), CliError> {
    if let Some(script) = &args.loopback_server {
        return crate::bench::server::run_child(script).map_err(CliError::Failed);
    }
    let seed = resolve_seed(paths, args.seed)?;
    let opts = crate::bench::BenchOptions {
        quick: args.quick,
        harness_only: args.harness_only,
        // The loopback server runs as a child process of this binary, so this process's
        // CPU time and memory are the harness's own.
        server_exe: std::env::current_exe().ok(),
    };
    print!("{}", crate::bench::run_benchmarks(paths, seed, &opts));
    Ok(())
}
