//! `tracer plan`: what a run will cost before it runs; `--pilot N` runs N tasks per domain
//! and split through every stage on the real endpoints first and extrapolates from them.

use super::{CliError, resolve_domains, resolve_seed};
use crate::config::Paths;
use crate::pipeline::{OutputLock, Runner};
use clap::Args;

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Restrict to these domains (repeatable). Default: stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Run seed (default: `seed` in stages/pipeline.toml); the pilot runs with it.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the plan as JSON instead of Markdown.
    #[arg(long)]
    pub json: bool,
    /// Run N tasks per domain and split through every stage on the real endpoints (into
    /// <output>/.pilot/, its own lock and response cache) and extrapolate the whole run
    /// from what they measured.
    #[arg(long, value_name = "N")]
    pub pilot: Option<usize>,
}

pub fn plan(paths: &Paths, args: PlanArgs) -> Result<(), CliError> {
    let seed = resolve_seed(paths, args.seed)?;
    let domains = resolve_domains(paths, &args.domains)?;
    let mut r = Runner::new(paths, crate::stage::registry::dag(), seed, &[])?;
    r.domains = domains.clone();
    for target in crate::plan::PILOT_TARGETS {
        r.validate(target)?;
    }
    let plan = match args.pilot {
        None => crate::plan::plan(paths, &domains)?,
        Some(0) => {
            return Err(CliError::Failed(
                "--pilot: N is the tasks per domain and split to run, at least 1".into(),
            ));
        }
        Some(n) => {
            let dir = paths.output.join(crate::plan::PILOT_DIR);
            let _lock = OutputLock::acquire(&dir, &crate::pipeline::lock::command_line())?;
            let pilot = crate::plan::pilot_paths(paths, n, &domains)?;
            let mut p = Runner::new(&pilot, crate::stage::registry::dag(), seed, &[])?;
            p.domains = domains.clone();
            for target in crate::plan::PILOT_TARGETS {
                p.validate(target)?;
            }
            for note in p.recover()? {
                eprintln!("tracer: recovered: {note}");
            }
            eprintln!(
                "tracer: pilot of {n} task(s) per domain and split in {} (seed {seed})",
                dir.display()
            );
            for target in crate::plan::PILOT_TARGETS {
                p.run(target, |step| super::pipeline::print_step("pilot ", step))?;
            }
            crate::plan::extrapolate(paths, &pilot, n, &domains)?
        }
    };
    if args.json {
        println!("{}", crate::plan::json(&plan));
    } else {
        print!("{}", crate::plan::markdown(&plan));
    }
    Ok(())
}
