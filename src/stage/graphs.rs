//! `graphs` stage: load the reviewed `graphs/<domain>.json`, check its structure, and
//! demonstrate every edge by execution on the domain's database (its training database when
//! it has a separate one, [`crate::domain::Domain::graph_split`]). Writes the
//! verified graph (`graph.json`), its DOT rendering, its statistics and one Parquet row per
//! edge with the witness that demonstrated it. Fails, listing them, when edges could not be
//! demonstrated (unless the config allows it).

use crate::artifact::{self, EdgeRecord};
use crate::config::ConfigError;
use crate::graph::demonstrate::{EdgeDemo, GraphsConfig, demonstrate_edges};
use crate::graph::{self, ToolGraph};
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use std::path::{Path, PathBuf};

pub struct GraphsStage;

/// One Parquet row per edge.
pub fn edge_records(graph: &ToolGraph, demos: &[EdgeDemo]) -> Vec<EdgeRecord> {
    demos
        .iter()
        .map(|d| {
            let kind = |t: &str| {
                graph
                    .node(t)
                    .map(|n| n.kind.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            EdgeRecord {
                domain: graph.domain.clone(),
                source: d.from.clone(),
                target: d.to.clone(),
                source_kind: kind(&d.from),
                target_kind: kind(&d.to),
                two_way: graph.has_edge(&d.to, &d.from),
                demonstrated: d.witness.is_some(),
                witness: serde_json::to_string(&d.witness).unwrap_or_else(|_| "null".into()),
            }
        })
        .collect()
}

impl StageConfig for GraphsConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let c = crate::config::Check::new(path);
        c.count("customers", self.customers, 1, 100_000)?;
        c.count("proposals", self.proposals, 1, 10_000)
    }
}

impl TypedStage for GraphsStage {
    type Config = GraphsConfig;
    fn name(&self) -> &'static str {
        "graphs"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db"]
    }
    fn validate_sources(
        &self,
        paths: &crate::config::Paths,
        domains: &[&'static dyn crate::domain::Domain],
    ) -> Vec<String> {
        domains
            .iter()
            .filter_map(|d| graph::load(&paths.graph_file(d.name()), *d).err())
            .map(|e| e.to_string())
            .collect()
    }
    fn source_files(&self, domain: &str, _config: &toml::Table) -> Vec<PathBuf> {
        vec![PathBuf::from(format!("graphs/{domain}.json"))]
    }
    fn run(&self, ctx: &StageContext, cfg: &GraphsConfig) -> Result<String, PipelineError> {
        let graph = graph::load(&ctx.paths.graph_file(ctx.domain.name()), ctx.domain)
            .map_err(|e| ctx.fail(ErrorKind::Input, e.to_string()))?;
        let env =
            crate::project::load_db(&ctx.input_dir("db"), ctx.domain, ctx.domain.graph_split())?;
        let demos = demonstrate_edges(&graph, env.as_ref(), ctx.seed, cfg.limits());
        let missing: Vec<String> = demos
            .iter()
            .filter(|d| d.witness.is_none())
            .map(|d| format!("{} -> {}", d.from, d.to))
            .collect();
        if cfg.require_all_demonstrated && !missing.is_empty() {
            return Err(ctx.fail(
                ErrorKind::Environment,
                format!(
                    "{}: {} edge(s) could not be demonstrated by execution: {}",
                    ctx.paths.graph_file(ctx.domain.name()).display(),
                    missing.len(),
                    missing.join(", ")
                ),
            ));
        }
        let prov = ctx.provenance();
        artifact::write_records(
            &ctx.out("part-00000.parquet"),
            &edge_records(&graph, &demos),
            &prov,
        )?;
        artifact::write_atomic(&ctx.out("graph.json"), graph.to_pretty_json().as_bytes())?;
        artifact::write_atomic(&ctx.out("graph.dot"), graph::dot::to_dot(&graph).as_bytes())?;
        let stats = graph::stats(&graph);
        let stats_json = serde_json::to_vec_pretty(&stats).unwrap_or_default();
        artifact::write_atomic(&ctx.out("stats.json"), &stats_json)?;
        Ok(format!(
            "{} tools, {} edges ({} demonstrated), density {:.2}, roots {}",
            stats.tools,
            stats.edges,
            demos.len() - missing.len(),
            stats.density,
            stats.roots
        ))
    }
}
