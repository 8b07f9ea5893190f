//! `traces` stage: random-walk trace sampling over a verified dependency graph.
//!
//! A trace is 1–3 independent intents; an intent is a walk of 2–6 tool calls that starts at
//! a root-eligible node and follows edges. Sample `i` draws from a ChaCha stream derived from
//! (seed, "traces", domain, i), candidates are produced in parallel chunks and deduplicated
//! in index order, so the result never depends on the thread count. The split is a function
//! of the trace's content hash, so train and eval can never share a trace.

use crate::artifact::{self, TraceRecord, sha256_hex};
use crate::config::ConfigError;
use crate::graph::ToolGraph;
use crate::pipeline::{PipelineError, Stage, StageContext};
use crate::seed::derive_rng;
use rand::RngExt;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

pub struct TracesStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracesConfig {
    #[serde(default = "one")]
    pub min_intents: usize,
    #[serde(default = "three")]
    pub max_intents: usize,
    #[serde(default = "two")]
    pub min_length: usize,
    #[serde(default = "six")]
    pub max_length: usize,
    /// Share of unique traces assigned to the evaluation split (by content hash).
    #[serde(default = "tenth")]
    pub eval_fraction: f64,
    /// Give up after `target x attempts_per_trace` samples (the reachable space is smaller).
    #[serde(default = "fifty")]
    pub attempts_per_trace: usize,
    /// Unique traces to keep per domain; domains not listed use `default_target`.
    #[serde(default)]
    pub targets: BTreeMap<String, usize>,
    #[serde(default = "default_target")]
    pub default_target: usize,
}

fn one() -> usize {
    1
}
fn two() -> usize {
    2
}
fn three() -> usize {
    3
}
fn six() -> usize {
    6
}
fn tenth() -> f64 {
    0.1
}
fn fifty() -> usize {
    50
}
fn default_target() -> usize {
    4000
}

impl TracesConfig {
    /// Every field at its default (an empty `stages/traces.toml`).
    pub fn defaults() -> Self {
        TracesConfig {
            min_intents: one(),
            max_intents: three(),
            min_length: two(),
            max_length: six(),
            eval_fraction: tenth(),
            attempts_per_trace: fifty(),
            targets: BTreeMap::new(),
            default_target: default_target(),
        }
    }

    /// Ranges and names (one path for `tracer validate` and `tracer run`). A walk is at
    /// most 50 calls and a trace at most 10 walks; sampling budgets stay countable.
    pub fn check(&self, path: &Path) -> Result<(), ConfigError> {
        use crate::config::{Check, MAX_COUNT};
        let c = Check::new(path);
        c.count("max_intents", self.max_intents, 1, 10)?;
        c.count("min_intents", self.min_intents, 1, self.max_intents)?;
        c.count("max_length", self.max_length, 1, 50)?;
        c.count("min_length", self.min_length, 1, self.max_length)?;
        c.share("eval_fraction", self.eval_fraction)?;
        c.count("attempts_per_trace", self.attempts_per_trace, 1, 10_000)?;
        c.count("default_target", self.default_target, 0, MAX_COUNT)?;
        c.domains("targets", self.targets.keys().map(String::as_str))?;
        for (domain, n) in &self.targets {
            c.count(&format!("targets.{domain}"), *n, 0, MAX_COUNT)?;
        }
        Ok(())
    }

    pub fn target(&self, domain: &str) -> usize {
        self.targets
            .get(domain)
            .copied()
            .unwrap_or(self.default_target)
    }
}

/// How sampling ended.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleReport {
    pub target: usize,
    pub attempts: usize,
    /// True when the attempt budget ran out before the target (the reachable space of
    /// distinct traces is smaller than the target, or nearly so).
    pub exhausted: bool,
}

/// One walk of `len` calls from a random root; `None` when it dead-ends too early.
fn walk(
    graph: &ToolGraph,
    roots: &[&str],
    rng: &mut rand_chacha::ChaCha8Rng,
    cfg: &TracesConfig,
) -> Option<Vec<String>> {
    let len = rng.random_range(cfg.min_length..=cfg.max_length);
    let mut node = roots[rng.random_range(0..roots.len())];
    let mut path = vec![node.to_string()];
    while path.len() < len {
        let next: Vec<&str> = graph.successors(node).collect();
        if next.is_empty() {
            break;
        }
        node = next[rng.random_range(0..next.len())];
        path.push(node.to_string());
    }
    (path.len() >= cfg.min_length).then_some(path)
}

/// The candidate trace of sample `index`.
pub fn sample_one(
    graph: &ToolGraph,
    seed: u64,
    index: usize,
    cfg: &TracesConfig,
) -> Option<Vec<Vec<String>>> {
    let roots: Vec<&str> = graph.roots().map(|n| n.tool.as_str()).collect();
    if roots.is_empty() {
        return None;
    }
    let mut rng = derive_rng(seed, &["traces", &graph.domain, &index.to_string()]);
    let n = rng.random_range(cfg.min_intents..=cfg.max_intents);
    (0..n).map(|_| walk(graph, &roots, &mut rng, cfg)).collect()
}

pub fn trace_id(domain: &str, intents: &[Vec<String>]) -> String {
    let json = serde_json::to_string(intents).unwrap_or_default();
    sha256_hex(format!("{domain}\0{json}").as_bytes())[..16].to_string()
}

fn split_of(trace_id: &str, eval_fraction: f64) -> &'static str {
    let bucket = u64::from_str_radix(&trace_id[..8], 16).unwrap_or(0) % 10_000;
    if (bucket as f64) < eval_fraction * 10_000.0 {
        "eval"
    } else {
        "train"
    }
}

/// Sample unique traces for one domain.
pub fn sample_traces(
    graph: &ToolGraph,
    seed: u64,
    cfg: &TracesConfig,
    target: usize,
) -> (Vec<TraceRecord>, SampleReport) {
    const CHUNK: usize = 8192;
    let budget = target.saturating_mul(cfg.attempts_per_trace).max(CHUNK);
    let mut seen: HashSet<Vec<Vec<String>>> = HashSet::new();
    let mut out = Vec::with_capacity(target);
    let mut attempts = 0;
    let mut start = 0;
    while out.len() < target && start < budget {
        let end = (start + CHUNK).min(budget);
        let indices: Vec<usize> = (start..end).collect();
        let candidates: Vec<(usize, Option<Vec<Vec<String>>>)> =
            crate::parallel::parallel_map(&indices, |&i| (i, sample_one(graph, seed, i, cfg)));
        for (index, cand) in candidates {
            if out.len() >= target {
                break;
            }
            attempts = index + 1;
            let Some(intents) = cand else { continue };
            if seen.contains(&intents) {
                continue;
            }
            let id = trace_id(&graph.domain, &intents);
            out.push(TraceRecord {
                split: split_of(&id, cfg.eval_fraction).to_string(),
                trace_id: id,
                domain: graph.domain.clone(),
                sample_index: index as i32,
                n_intents: intents.len() as i32,
                length: intents.iter().map(Vec::len).sum::<usize>() as i32,
                intents: intents.clone(),
            });
            seen.insert(intents);
        }
        start = end;
    }
    let exhausted = out.len() < target;
    (
        out,
        SampleReport {
            target,
            attempts,
            exhausted,
        },
    )
}

impl Stage for TracesStage {
    fn name(&self) -> &'static str {
        "traces"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["graphs"]
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        let cfg: TracesConfig = crate::config::parse_typed(path, table)?;
        cfg.check(path)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: TracesConfig = ctx.typed_config()?;
        let graph = super::graphs::load_verified(&ctx.input_dir("graphs"), ctx.domain)
            .map_err(|e| ctx.fail(e.to_string()))?;
        let target = cfg.target(ctx.domain.name());
        let (rows, report) = sample_traces(&graph, ctx.seed, &cfg, target);
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        let eval = rows.iter().filter(|r| r.split == "eval").count();
        let ending = if report.exhausted {
            format!(
                "reachable space exhausted below target {target} after {} samples",
                report.attempts
            )
        } else {
            format!("target {target} reached after {} samples", report.attempts)
        };
        Ok(format!(
            "{} unique traces (train {}, eval {}); {ending}",
            rows.len(),
            rows.len() - eval,
            eval
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ToolKind;
    use crate::graph::{Edge, Node};

    fn toy() -> ToolGraph {
        let node = |t: &str, root| Node {
            tool: t.into(),
            kind: ToolKind::Read,
            root,
        };
        let edge = |a: &str, b: &str| Edge {
            from: a.into(),
            to: b.into(),
        };
        ToolGraph {
            domain: "toy".into(),
            nodes: vec![node("a", true), node("b", false), node("c", true)],
            edges: vec![
                edge("a", "b"),
                edge("b", "c"),
                edge("c", "a"),
                edge("a", "c"),
            ],
        }
    }

    fn cfg() -> TracesConfig {
        TracesConfig::defaults()
    }

    #[test]
    fn walks_follow_edges_from_roots_within_bounds() {
        let g = toy();
        let (rows, _) = sample_traces(&g, 7, &cfg(), 200);
        assert!(!rows.is_empty());
        for r in &rows {
            assert!((1..=3).contains(&r.intents.len()));
            for w in &r.intents {
                assert!((2..=6).contains(&w.len()));
                assert!(g.node(&w[0]).unwrap().root);
                for pair in w.windows(2) {
                    assert!(g.has_edge(&pair[0], &pair[1]), "{pair:?}");
                }
            }
        }
        let ids: HashSet<_> = rows.iter().map(|r| &r.trace_id).collect();
        assert_eq!(ids.len(), rows.len());
    }

    #[test]
    fn same_seed_same_traces_other_seed_other_traces() {
        let g = toy();
        let (a, _) = sample_traces(&g, 1, &cfg(), 300);
        let (b, _) = sample_traces(&g, 1, &cfg(), 300);
        let (c, _) = sample_traces(&g, 2, &cfg(), 300);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn a_small_space_is_reported_exhausted() {
        let g = ToolGraph {
            domain: "tiny".into(),
            nodes: vec![
                Node {
                    tool: "a".into(),
                    kind: ToolKind::Read,
                    root: true,
                },
                Node {
                    tool: "b".into(),
                    kind: ToolKind::Read,
                    root: false,
                },
            ],
            edges: vec![Edge {
                from: "a".into(),
                to: "b".into(),
            }],
        };
        let mut c = cfg();
        c.max_intents = 1;
        let (rows, report) = sample_traces(&g, 3, &c, 10);
        assert_eq!(rows.len(), 1, "only a->b exists");
        assert!(report.exhausted);
    }
}
