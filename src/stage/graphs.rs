//! `graphs` stage: load the reviewed `graphs/<domain>.json`, leave out the edges reviewers
//! dropped in `tracer review` (`reviews/graphs/<domain>.jsonl`, a declared source, see
//! [`crate::review::edges`]), check its structure, and demonstrate every edge by execution
//! on the domain's database (its training database when it has a separate one,
//! [`crate::domain::Domain::graph_split`]). Writes the
//! verified graph (`graph.json`), its DOT rendering, its statistics and one Parquet row per
//! edge with the witness that demonstrated it. Fails, listing them, when edges could not be
//! demonstrated (unless the config allows it).

use crate::artifact::{self, EdgeRecord};
use crate::config::ConfigError;
use crate::graph::demonstrate::{EdgeDemo, GraphsConfig, demonstrate_edges};
use crate::graph::{self, ToolGraph};
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::review::edges::{EdgeReviews, edge_reviews_path};
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
        c.count("proposals", self.proposals, 1, 10_000)?;
        crate::review::check_reviews_dir(&self.reviews_dir).map_err(|e| c.error("reviews_dir", e))
    }
}

impl TypedStage for GraphsStage {
    type Config = GraphsConfig;
    fn name(&self) -> &'static str {
        "graphs"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db"]
    }
    fn validate_sources(
        &self,
        paths: &crate::config::Paths,
        domains: &[&'static dyn crate::domain::Domain],
    ) -> Vec<String> {
        let table = crate::config::read_table(&paths.stage_config(self.name())).unwrap_or_default();
        let dir = table
            .get("reviews_dir")
            .and_then(|v| v.as_str())
            .unwrap_or("reviews");
        let mut errors: Vec<String> = domains
            .iter()
            .filter_map(|d| graph::load(&paths.graph_file(d.name()), *d).err())
            .map(|e| e.to_string())
            .collect();
        errors.extend(domains.iter().filter_map(|d| {
            EdgeReviews::read(&edge_reviews_path(&paths.root, dir, d.name())).err()
        }));
        errors
    }
    fn source_files(&self, domain: &str, _config: &toml::Table) -> Vec<PathBuf> {
        match crate::domain::find(domain).ok().and_then(|d| d.folder()) {
            Some(dir) => vec![dir.join("graph.json")],
            None => vec![PathBuf::from(format!("graphs/{domain}.json"))],
        }
    }
    fn optional_source_files(&self, domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        let dir = config
            .get("reviews_dir")
            .and_then(|v| v.as_str())
            .unwrap_or("reviews");
        vec![edge_reviews_path(Path::new(""), dir, domain)]
    }
    fn run(&self, ctx: &StageContext, cfg: &GraphsConfig) -> Result<String, PipelineError> {
        let file = graph::load(&ctx.paths.graph_file(ctx.domain.name()), ctx.domain)
            .map_err(|e| ctx.fail(ErrorKind::Input, e.to_string()))?;
        let (graph, dropped, ignored) = reviewed_graph(ctx, cfg, &file)?;
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
        let mut reviewed = String::new();
        if dropped > 0 {
            reviewed = format!(", {dropped} dropped in review");
        }
        if ignored > 0 {
            reviewed.push_str(&format!(
                ", {ignored} drop decision(s) on edges the graph file no longer has"
            ));
        }
        Ok(format!(
            "{} tools, {} edges ({} demonstrated{reviewed}), density {:.2}, roots {}",
            stats.tools,
            stats.edges,
            demos.len() - missing.len(),
            stats.density,
            stats.roots
        ))
    }
}

/// The graph file without the edges reviewers dropped: (graph, edges dropped, drop
/// decisions on edges the file does not have). A drop that leaves a tool unreachable
/// fails the stage, naming the decisions file.
fn reviewed_graph(
    ctx: &StageContext,
    cfg: &GraphsConfig,
    file: &ToolGraph,
) -> Result<(ToolGraph, usize, usize), PipelineError> {
    let path = edge_reviews_path(&ctx.paths.root, &cfg.reviews_dir, ctx.domain.name());
    let decisions = EdgeReviews::read(&path).map_err(|e| ctx.fail(ErrorKind::Input, e))?;
    let dropped = decisions.dropped();
    let (graph, absent) =
        graph::without_edges(file, &dropped, ctx.domain).map_err(|(field, message)| {
            ctx.fail(
                ErrorKind::Input,
                format!(
                    "{}: the dropped edges leave graphs/{}.json invalid: {field}: {message}",
                    path.display(),
                    ctx.domain.name()
                ),
            )
        })?;
    Ok((graph, dropped.len() - absent.len(), absent.len()))
}
