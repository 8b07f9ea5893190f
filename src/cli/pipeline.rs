//! `tracer run | merge | status | card | validate | list | bench`.

use super::{CliError, resolve_domains, resolve_seed};
use crate::config::Paths;
use crate::domain::{self, ToolKind};
use crate::pipeline::{Freshness, OutputLock, Runner, Shard, StepReport, shard};
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
    /// Run only shard i of N of an item-parallel stage (grounded, refined, feelings, tasks,
    /// rollouts, eval): the items whose id hashes to i mod N, written as a part under
    /// output/.shards/; its inputs must be fresh. `tracer merge` joins the parts.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Bring only what the stage reads up to date, not the stage itself (the step before
    /// the shards of a cluster run).
    #[arg(long, conflicts_with = "shard")]
    pub upstream: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The item-parallel stage whose shard parts to merge.
    pub stage: String,
    /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Run seed (default: `seed` in stages/pipeline.toml).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Run seed (default: `seed` in stages/pipeline.toml).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Args)]
pub struct CardArgs {
    /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Run seed (default: `seed` in stages/pipeline.toml).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// `tracer card`: write `output/README.md` from a complete, fresh run.
pub fn card(paths: &Paths, args: CardArgs) -> Result<(), CliError> {
    let r = runner(paths, &args.domains, args.seed)?;
    // Exclusive: a stage swapping its directory while the card reads it would mix runs.
    let _lock = super::lock_output(paths)?;
    let names: Vec<&str> = r.domains.iter().map(|d| d.name()).collect();
    let quality = || super::quality::report(paths, &names).map_err(|e| e.to_string());
    let resamples = crate::rollout::eval_resamples(paths)?;
    let path = crate::card::write_card(&r, &quality, resamples)?;
    outln!("wrote {}", path.display());
    Ok(())
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
}

pub fn stats(paths: &Paths, args: StatsArgs) -> Result<(), CliError> {
    let names: Vec<&str> = resolve_domains(paths, &args.domains)?
        .iter()
        .map(|d| d.name())
        .collect();
    // Tables of dashes say nothing: an output tree where no stage ran for these domains
    // (a new directory, a wrong TRACER_OUTPUT) is refused with where it looked.
    let dag = crate::stage::registry::dag();
    let ran = dag.stages().iter().any(|s| {
        names
            .iter()
            .any(|d| crate::pipeline::stage_dir(&paths.output, s.name(), d).is_dir())
    });
    if !ran {
        return Err(CliError::Failed(format!(
            "{}: nothing to report: no stage has run here for {} (run e.g. `tracer run tasks` first, or set TRACER_OUTPUT to a run's output)",
            paths.output.display(),
            names.join(", ")
        )));
    }
    outln!("## Task funnel\n");
    out!("{}", crate::stats::funnel(paths, &names)?);
    if let Some(review) = crate::stats::review_table(paths, &names) {
        outln!("\n## Manual review of the evaluation release\n");
        out!("{review}");
    }
    let emotions = crate::stats::emotion_table(paths, &names)?;
    if emotions.lines().count() > 2 {
        outln!("\n## Emotion conditions of verified tasks\n");
        out!("{emotions}");
    }
    let rollouts = crate::stats::rollout_table(paths, &names)?;
    if rollouts.lines().count() > 2 {
        outln!("\n## Rollouts (training)\n");
        out!("{rollouts}");
    }
    let resamples = crate::rollout::eval_resamples(paths)?;
    if let Some(eval) = crate::stats::eval_table(paths, &names, resamples)? {
        outln!("\n## Evaluation\n");
        out!("{eval}");
    }
    let scope =
        crate::stats::CostScope::new(&dag, dag.topo_order().iter().map(|s| s.name()).collect())?;
    if let Some(cost) = crate::stats::cost_report(paths, &scope, &names)? {
        outln!("\n## Cost\n\n{}\n", crate::stats::COST_NOTE);
        out!("{cost}");
    }
    out!(
        "{}",
        crate::stats::fault_report(&crate::stats::read_faults(paths, &names)?)
    );
    if let Some(q) = super::quality::report(paths, &names)? {
        outln!("\n## Quality of verified tasks\n");
        out!("{q}");
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Run seed (default: `seed` in stages/pipeline.toml).
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
    /// Load a running `tracer serve` at this host:port instead (scripts/bench_serve.sh):
    /// gold-replaying episodes at each --concurrency, then sessions held open.
    #[arg(long, value_name = "ADDR")]
    pub serve_load: Option<String>,
    /// With --serve-load: the server's process id (its CPU time and memory).
    #[arg(long, requires = "serve_load")]
    pub server_pid: Option<u32>,
    /// With --serve-load: concurrent sessions, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 64, 1024])]
    pub concurrency: Vec<usize>,
    /// With --serve-load: episodes per concurrency level (at least that level).
    #[arg(long, default_value_t = 400)]
    pub episodes: usize,
    /// With --serve-load: sessions held open for the memory figure.
    #[arg(long, default_value_t = 1024)]
    pub held: usize,
}

fn runner<'a>(
    paths: &'a Paths,
    domains: &[String],
    seed: Option<u64>,
) -> Result<Runner<'a>, CliError> {
    let seed = resolve_seed(paths, seed)?;
    let domains = resolve_domains(paths, domains)?;
    let mut r = Runner::new(paths, crate::stage::registry::dag(), seed, &[])?;
    r.domains = domains;
    Ok(r)
}

pub(super) fn print_step(prefix: &str, step: &StepReport) {
    for note in &step.notes {
        eprintln!("tracer{prefix}: {note}");
    }
    let verb = if step.ran { "ran  " } else { "fresh" };
    eprintln!(
        "  {prefix}{verb} {:<8} {:<10} {}",
        step.stage, step.domain, step.summary
    );
}

pub fn run(paths: &Paths, args: RunArgs) -> Result<(), CliError> {
    let mut r = runner(paths, &args.domains, args.seed)?;
    r.force = args.force;
    if let Some(text) = &args.shard {
        let shard: Shard = text.parse().map_err(CliError::Failed)?;
        return run_shard(paths, &r, &args.stage, shard);
    }
    // Check before touching the output, then hold it for the whole run.
    r.validate(&args.stage)?;
    let _lock = super::lock_output(paths)?;
    for note in r.recover()? {
        eprintln!("tracer: recovered: {note}");
    }
    fold_shard_caches(paths)?;
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
    if args.upstream {
        let stage = r.dag.find(&args.stage)?;
        for input in stage.inputs() {
            r.run(input, |step| print_step("", step))?;
        }
        return Ok(());
    }
    r.run(&args.stage, |step| print_step("", step))?;
    Ok(())
}

/// One shard of a stage: the output root shared with the other shards, this shard's own
/// lock held exclusively (see `pipeline::lock` for why that is enough).
fn run_shard(paths: &Paths, r: &Runner, stage: &str, shard: Shard) -> Result<(), CliError> {
    r.shardable_stage(stage, "shards")?;
    r.validate(stage)?;
    let command = crate::pipeline::lock::command_line();
    let _shared = OutputLock::acquire_shared(&paths.output, &command)?;
    let _own = OutputLock::acquire_file(&shard::lock_path(&paths.output, stage, shard), &command)?;
    crate::project::share_answers_with_shard(paths, stage, shard);
    let prefix = format!("[shard {shard}] ");
    eprintln!(
        "tracer {prefix}running '{stage}' on the items of shard {shard} (seed {}, domains {})",
        r.seed,
        r.domains
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    r.run_shard(stage, shard, |step| print_step(&prefix, step))?;
    eprintln!(
        "tracer {prefix}done; when every shard of {} is, `tracer merge {stage}` (or `tracer run {stage}`) writes the output",
        shard.count
    );
    Ok(())
}

/// `tracer merge <stage>`: check the shard parts and write the stage's ordinary output.
pub fn merge(paths: &Paths, args: MergeArgs) -> Result<(), CliError> {
    let r = runner(paths, &args.domains, args.seed)?;
    r.shardable_stage(&args.stage, "shard parts")?;
    r.validate(&args.stage)?;
    let _lock = super::lock_output(paths)?;
    for note in r.recover()? {
        eprintln!("tracer: recovered: {note}");
    }
    fold_shard_caches(paths)?;
    r.merge(&args.stage, |step| print_step("", step))?;
    Ok(())
}

/// One response cache: with the output held alone, the shards' caches are folded into the
/// output root's before anything runs (answers already paid for are never asked again).
fn fold_shard_caches(paths: &Paths) -> Result<(), CliError> {
    let notes =
        crate::project::fold_shard_caches(paths).map_err(|e| CliError::Failed(e.to_string()))?;
    for note in notes {
        eprintln!("tracer: {note}");
    }
    Ok(())
}

pub fn status(paths: &Paths, args: StatusArgs) -> Result<(), CliError> {
    let r = runner(paths, &args.domains, args.seed)?;
    outln!("| stage | domain | status |\n|---|---|---|");
    for (stage, domain, state) in r.status(&r.dag.topo_order())? {
        let state = match state {
            Freshness::Fresh => "fresh".to_string(),
            Freshness::Stale(why) => format!("stale ({why})"),
        };
        outln!("| {stage} | {domain} | {state} |");
    }
    // Shard parts waiting for a merge (or half of a cluster run), per stage and domain.
    let mut shards = Vec::new();
    for stage in r.dag.topo_order() {
        for &domain in &r.domains {
            if let Some(line) = r.shard_status(stage, domain)? {
                shards.push(format!("| {} | {} | {line} |", stage.name(), domain.name()));
            }
        }
    }
    if !shards.is_empty() {
        outln!("\n| stage | domain | shard parts |\n|---|---|---|");
        for line in shards {
            outln!("{line}");
        }
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub struct DocsArgs {
    /// Write nothing; fail, naming each stale block, when a page differs from what would
    /// be written.
    #[arg(long)]
    pub check: bool,
}

pub fn docs(paths: &Paths, a: DocsArgs) -> Result<(), CliError> {
    let seed = crate::config::PipelineConfig::load(paths)?.seed;
    let pages = crate::docs::pages(&paths.root, seed)?;
    let stale = crate::docs::stale(&pages);
    if a.check {
        if stale.is_empty() {
            outln!("ok: {} generated pages are current", pages.len());
            return Ok(());
        }
        for s in &stale {
            eprintln!("{s}");
        }
        return Err(CliError::Failed(format!(
            "{} page(s) out of date with the code; run `tracer docs` and commit them",
            stale.len()
        )));
    }
    for (path, text) in &pages {
        crate::artifact::write_atomic(path, text.as_bytes())?;
    }
    outln!("wrote {} pages ({} had changed)", pages.len(), stale.len());
    Ok(())
}

pub fn list() -> Result<(), CliError> {
    outln!("stages (dependency order):");
    for s in crate::stage::registry::dag().topo_order() {
        outln!("  {:<10} <- {}", s.name(), s.inputs().join(", "));
    }
    outln!("domains:");
    for d in domain::registry() {
        let specs = d.tool_specs();
        let reads = specs.iter().filter(|s| s.kind == ToolKind::Read).count();
        outln!(
            "  {} ({} tools: {} read, {} write)",
            d.name(),
            specs.len(),
            reads,
            specs.len() - reads
        );
        for (i, r) in d.rulesets().iter().enumerate() {
            let default = if i == 0 { " (default)" } else { "" };
            outln!("    ruleset {}{default}: {}", r.name, r.description);
        }
        for s in specs {
            let end = if s.terminates { ", ends episode" } else { "" };
            outln!("    {:<34} {}{end}", s.name, s.kind.as_str());
        }
    }
    Ok(())
}

/// Every check of `tracer validate`, as a list of problems (empty = valid): the shared
/// validation path over every stage and every registered domain.
pub fn validation_problems(paths: &Paths) -> Vec<String> {
    let dag = crate::stage::registry::dag();
    // The roles file first; a stage's config problem that only echoes one of its problems
    // (the stage reads the file's role tables) is left out, so each is named once, at the
    // file that holds it.
    let mut problems = crate::llm::config::roles_file_problems(paths);
    let detail = |p: &str| p.splitn(3, ": ").nth(2).map(str::to_string);
    let echoed: Vec<String> = problems.iter().filter_map(|p| detail(p)).collect();
    problems.extend(
        crate::pipeline::validate::problems(
            paths,
            &crate::pipeline::validate::Scope {
                stages: dag.stages(),
                registry: dag.stages(),
                domains: domain::registry(),
            },
        )
        .into_iter()
        .filter(|p| detail(p).is_none_or(|d| !echoed.contains(&d))),
    );
    problems
}

#[derive(Debug, clap::Subcommand)]
pub enum ScaffoldCommand {
    /// A new domain in every place a domain lives (src/domain/<name>/, the registry, its
    /// policy, graph and reference page), from the kit's skeleton: a small library domain
    /// that compiles, passes the conformance suite and grounds into verified tasks.
    Domain {
        /// The domain's key: lower-case letters, digits and underscores ("car_rental").
        name: String,
        /// A remote domain instead (domains/<name>/: a Python server and its declarations,
        /// docs/remote-domains.md): no Rust, no rebuild.
        #[arg(long)]
        remote: bool,
    },
}

pub fn scaffold(paths: &Paths, command: ScaffoldCommand) -> Result<(), CliError> {
    let ScaffoldCommand::Domain { name, remote } = command;
    if remote {
        let done = crate::scaffold::scaffold_remote(&paths.root, &name)?;
        for path in &done.written {
            let rel = path.strip_prefix(&paths.root).unwrap_or(path);
            outln!("wrote  {}", rel.display());
        }
        outln!("{}", crate::scaffold::next_steps_remote(&name));
        return Ok(());
    }
    let done = crate::scaffold::scaffold_domain(&paths.root, &name)?;
    for path in &done.written {
        let rel = path.strip_prefix(&paths.root).unwrap_or(path);
        outln!("wrote  {}", rel.display());
    }
    let rel = done
        .edited
        .strip_prefix(&paths.root)
        .unwrap_or(&done.edited);
    outln!(
        "edited {} (pub mod {name}; and its registry line)",
        rel.display()
    );
    outln!("{}", crate::scaffold::next_steps(&name));
    Ok(())
}

pub fn validate(paths: &Paths) -> Result<(), CliError> {
    let problems = validation_problems(paths);
    if problems.is_empty() {
        let roles = match &paths.roles {
            Some(file) => format!("; roles from {}", file.display()),
            None => String::new(),
        };
        outln!(
            "ok: {} stage configs, {} domains (graphs, policies, tools) are valid{roles}",
            crate::stage::registry::dag().stages().len(),
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
    if let Some(addr) = &args.serve_load {
        let pid = args
            .server_pid
            .ok_or_else(|| CliError::Failed("--serve-load needs --server-pid".into()))?;
        let report = crate::bench::serve_load::run(&crate::bench::serve_load::LoadOptions {
            addr: addr.clone(),
            server_pid: pid,
            concurrency: args.concurrency.clone(),
            episodes: args.episodes,
            held: args.held,
        })
        .map_err(CliError::Failed)?;
        out!("{report}");
        return Ok(());
    }
    let seed = resolve_seed(paths, args.seed)?;
    let opts = crate::bench::BenchOptions {
        quick: args.quick,
        harness_only: args.harness_only,
        // The loopback server runs as a child process of this binary, so this process's
        // CPU time and memory are the harness's own.
        server_exe: std::env::current_exe().ok(),
    };
    out!("{}", crate::bench::run_benchmarks(paths, seed, &opts));
    Ok(())
}
