//! `tracer run | status | validate | list | bench`.

use super::{CliError, resolve_domains, resolve_seed};
use crate::config::{self, Paths, PipelineConfig};
use crate::domain::{self, ToolKind};
use crate::pipeline::{Dag, Freshness, Runner};
use clap::Args;
use std::collections::BTreeSet;

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
    let mut r = Runner::new(paths, seed, &[])?;
    r.domains = domains;
    Ok(r)
}

pub fn run(paths: &Paths, args: RunArgs) -> Result<(), CliError> {
    let mut r = runner(paths, &args.domains, args.seed)?;
    r.force = args.force;
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
    for stage in r.dag.topo_order() {
        for &d in &r.domains {
            let state = match r.freshness(stage, d)? {
                Freshness::Fresh => "fresh".to_string(),
                Freshness::Stale(why) => format!("stale ({why})"),
            };
            println!("| {} | {} | {state} |", stage.name(), d.name());
        }
    }
    Ok(())
}

pub fn list() -> Result<(), CliError> {
    println!("stages (dependency order):");
    for s in Dag::default().topo_order() {
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
        for s in specs {
            let end = if s.terminates { ", ends episode" } else { "" };
            println!("    {:<34} {}{end}", s.name, s.kind.as_str());
        }
    }
    Ok(())
}

const READ_PREFIXES: &[&str] = &["get_", "list_", "search_", "check_", "find_"];

/// Every check of `tracer validate`, as a list of problems (empty = valid).
pub fn validation_problems(paths: &Paths) -> Vec<String> {
    let mut problems = Vec::new();
    let dag = Dag::default();
    problems.extend(crate::emotion::validation_problems(&paths.root));
    match PipelineConfig::load(paths) {
        Ok(p) => {
            for d in &p.domains {
                if let Err(e) = domain::find(d) {
                    problems.push(format!(
                        "{}: domains: {e}",
                        paths.stage_config("pipeline").display()
                    ));
                }
            }
        }
        Err(e) => problems.push(e.to_string()),
    }
    for stage in dag.stages() {
        let path = paths.stage_config(stage.name());
        let checked = config::read_table(&path).and_then(|t| stage.validate_config(&path, &t));
        if let Err(e) = checked {
            problems.push(e.to_string());
        }
    }
    let names: BTreeSet<&str> = domain::registry().iter().map(|d| d.name()).collect();
    for d in domain::registry() {
        let specs = d.tool_specs();
        let mut seen = BTreeSet::new();
        for s in &specs {
            if !seen.insert(s.name) {
                problems.push(format!("domain {}: duplicate tool '{}'", d.name(), s.name));
            }
            if s.parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
                problems.push(format!(
                    "domain {}: tool '{}': parameters schema must be an object",
                    d.name(),
                    s.name
                ));
            }
            if READ_PREFIXES.iter().any(|p| s.name.starts_with(p)) && s.kind != ToolKind::Read {
                problems.push(format!(
                    "domain {}: tool '{}' is named like a read tool but declared write",
                    d.name(),
                    s.name
                ));
            }
        }
        let policy = paths.policy_file(d.name());
        match std::fs::read_to_string(&policy) {
            Ok(text) if text.trim().is_empty() => {
                problems.push(format!("{}: policy is empty", policy.display()))
            }
            Ok(_) => {}
            Err(e) => problems.push(format!("{}: {e}", policy.display())),
        }
        if let Err(e) = crate::graph::load(&paths.graph_file(d.name()), *d) {
            problems.push(e.to_string());
        }
    }
    // One name everywhere: files and modules must name registered domains, both ways.
    for (dir, ext) in [("graphs", "json"), ("policies", "md")] {
        if let Ok(entries) = std::fs::read_dir(paths.root.join(dir)) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().and_then(|x| x.to_str()) == Some(ext) {
                    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                    if !names.contains(stem) {
                        problems.push(format!("{}: no registered domain '{stem}'", p.display()));
                    }
                }
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(paths.root.join("src/domain")) {
        for e in entries.flatten() {
            if e.path().is_dir() {
                let name = e.file_name().to_string_lossy().to_string();
                // `kit/` holds what domains share; it is not a domain.
                if name != "kit" && !names.contains(name.as_str()) {
                    problems.push(format!(
                        "src/domain/{name}/: module is not in the domain registry"
                    ));
                }
            }
        }
    }
    problems
}

pub fn validate(paths: &Paths) -> Result<(), CliError> {
    let problems = validation_problems(paths);
    if problems.is_empty() {
        println!(
            "ok: {} stage configs, {} domains (graphs, policies, tools) are valid",
            Dag::default().stages().len(),
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
