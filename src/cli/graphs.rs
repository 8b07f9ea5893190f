//! `tracer graphs verify | build | render | stats`.

use super::{CliError, resolve_domains, resolve_seed};
use crate::config::{self, Paths};
use crate::domain::Domain;
use crate::graph::demonstrate::GraphsConfig;
use crate::graph::{self, demonstrate, dot};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum GraphsCommand {
    /// Check structure and demonstrate every edge by execution on the generated database.
    Verify {
        /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
        #[arg(long = "domain")]
        domains: Vec<String>,
        /// Verify this file instead of graphs/<domain>.json (needs exactly one --domain).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Run seed (default: `seed` in stages/pipeline.toml).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Propose candidate edges from tool data flow and policy ordering, for review.
    Build {
        /// The domain (see `tracer list`).
        #[arg(long)]
        domain: String,
        /// Write the candidate graph JSON here (default: stdout).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Consider every tool of the domain, not only the current graph's nodes.
        #[arg(long)]
        all_tools: bool,
        /// Run seed (default: `seed` in stages/pipeline.toml).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Write DOT (and SVG where graphviz `dot` is installed).
    Render {
        /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
        #[arg(long = "domain")]
        domains: Vec<String>,
        /// Where the `.dot` and `.svg` files go.
        #[arg(long, default_value = "output/graphs_render")]
        out_dir: PathBuf,
    },
    /// Per-domain statistics as a Markdown table.
    Stats {
        /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
        #[arg(long = "domain")]
        domains: Vec<String>,
    },
}

fn graphs_config(paths: &Paths) -> Result<GraphsConfig, CliError> {
    let (path, table) = paths.stage_table("graphs")?;
    Ok(config::parse_typed(&path, &table)?)
}

fn verify_one(
    paths: &Paths,
    d: &'static dyn Domain,
    file: PathBuf,
    seed: u64,
    cfg: &GraphsConfig,
) -> Result<usize, CliError> {
    let g = graph::load(&file, d)?;
    let env = crate::project::with_ruleset(paths, d, d.generate(seed, d.graph_split()), None)?;
    let demos = demonstrate::demonstrate_edges(&g, env.as_ref(), seed, cfg.limits());
    let failed: Vec<_> = demos.iter().filter(|x| x.witness.is_none()).collect();
    let s = graph::stats(&g);
    outln!(
        "{}: {} tools, {} edges, {} demonstrated by execution, density {:.2}, two-way {:.0}%, roots {} ({} read / {} write)",
        file.display(),
        s.tools,
        s.edges,
        demos.len() - failed.len(),
        s.density,
        s.two_way_share * 100.0,
        s.roots,
        s.roots_read,
        s.roots_write
    );
    for f in &failed {
        outln!("  not demonstrated: {} -> {}", f.from, f.to);
    }
    Ok(failed.len())
}

pub fn run(paths: &Paths, cmd: GraphsCommand) -> Result<(), CliError> {
    match cmd {
        GraphsCommand::Verify {
            domains,
            file,
            seed,
        } => {
            let seed = resolve_seed(paths, seed)?;
            let cfg = graphs_config(paths)?;
            let domains = resolve_domains(paths, &domains)?;
            if file.is_some() && domains.len() != 1 {
                return Err(CliError::Failed("--file needs exactly one --domain".into()));
            }
            let mut failed = 0;
            for d in domains {
                let f = file.clone().unwrap_or_else(|| paths.graph_file(d.name()));
                failed += verify_one(paths, d, f, seed, &cfg)?;
            }
            if failed > 0 {
                return Err(CliError::Failed(format!(
                    "{failed} edge(s) could not be demonstrated"
                )));
            }
            Ok(())
        }
        GraphsCommand::Build {
            domain,
            out,
            all_tools,
            seed,
        } => {
            if let Some(path) = &out {
                crate::artifact::check_output_file(path)?;
            }
            let seed = resolve_seed(paths, seed)?;
            let d = crate::domain::find(&domain)?;
            let cfg = graphs_config(paths)?;
            let specs = d.tool_specs();
            let current = graph::load(&paths.graph_file(d.name()), d).ok();
            let tools: Vec<_> = specs
                .into_iter()
                .filter(|s| !s.terminates)
                .filter(|s| all_tools || current.as_ref().is_none_or(|g| g.node(s.name).is_some()))
                .collect();
            let env =
                crate::project::with_ruleset(paths, d, d.generate(seed, d.graph_split()), None)?;
            let (g, candidates) =
                graph::build::build_candidates(env.as_ref(), d.name(), &tools, seed, cfg.limits());
            for c in &candidates {
                let mark = if c.demonstrated { "kept   " } else { "dropped" };
                eprintln!("{mark} {} -> {}: {}", c.from, c.to, c.reasons.join("; "));
            }
            eprintln!(
                "{} candidates, {} demonstrated; review before replacing {}",
                candidates.len(),
                g.edges.len(),
                paths.graph_file(d.name()).display()
            );
            match out {
                Some(path) => crate::artifact::write_atomic(&path, g.to_pretty_json().as_bytes())?,
                None => out!("{}", g.to_pretty_json()),
            }
            Ok(())
        }
        GraphsCommand::Render { domains, out_dir } => {
            crate::artifact::check_output_dir(&out_dir)?;
            for d in resolve_domains(paths, &domains)? {
                let g = graph::load(&paths.graph_file(d.name()), d)?;
                let dot_path = out_dir.join(format!("{}.dot", d.name()));
                crate::artifact::write_atomic(&dot_path, dot::to_dot(&g).as_bytes())?;
                let svg_path = out_dir.join(format!("{}.svg", d.name()));
                let svg = std::process::Command::new("dot")
                    .arg("-Tsvg")
                    .arg(&dot_path)
                    .arg("-o")
                    .arg(&svg_path)
                    .status();
                match svg {
                    Ok(s) if s.success() => {
                        outln!("{} and {}", dot_path.display(), svg_path.display())
                    }
                    _ => outln!("{} (install graphviz for SVG)", dot_path.display()),
                }
            }
            Ok(())
        }
        GraphsCommand::Stats { domains } => {
            let mut rows = Vec::new();
            for d in resolve_domains(paths, &domains)? {
                rows.push(graph::stats(&graph::load(&paths.graph_file(d.name()), d)?));
            }
            out!("{}", graph::stats_table(&rows));
            Ok(())
        }
    }
}
