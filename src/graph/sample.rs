//! Random-walk trace sampling over a dependency graph (the paper's stage 2).
//!
//! A trace is 1–3 independent intents; an intent is a walk of 2–6 tool calls that starts at
//! a root-eligible node and follows edges. Sample `i` draws from a ChaCha stream derived from
//! (seed, "traces", domain, i), candidates are produced in parallel chunks and deduplicated
//! in index order, so the result never depends on the thread count. The split is a function
//! of the trace's content hash, so train and eval can never share a trace.
//!
//! Architecture invariant: pure and seeded; knows graphs, not artifacts or stages.

use super::ToolGraph;
use crate::domain::Split;
use crate::seed::derive_rng;
use rand::RngExt;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};

/// The shape of a trace: how many intents, how long each walk, and the sampling budget.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleParams {
    pub min_intents: usize,
    pub max_intents: usize,
    pub min_length: usize,
    pub max_length: usize,
    /// Share of unique traces assigned to the evaluation split (by content hash).
    pub eval_fraction: f64,
    /// Give up after `target x attempts_per_trace` samples (the reachable space is smaller).
    pub attempts_per_trace: usize,
}

impl Default for SampleParams {
    /// The paper's shape: 1–3 intents of 2–6 calls, a tenth for evaluation.
    fn default() -> Self {
        SampleParams {
            min_intents: 1,
            max_intents: 3,
            min_length: 2,
            max_length: 6,
            eval_fraction: 0.1,
            attempts_per_trace: 50,
        }
    }
}

impl SampleParams {
    pub fn check(&self) -> Result<(), String> {
        if self.min_intents == 0 || self.min_intents > self.max_intents {
            return Err("min_intents must be >= 1 and <= max_intents".into());
        }
        if self.min_length == 0 || self.min_length > self.max_length {
            return Err("min_length must be >= 1 and <= max_length".into());
        }
        if !(0.0..=1.0).contains(&self.eval_fraction) {
            return Err("eval_fraction must be within [0, 1]".into());
        }
        Ok(())
    }
}

/// A release's sampling recipe (`stages/traces.toml`): the trace shape and how many unique
/// traces each domain gets.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SamplingRecipe {
    pub min_intents: usize,
    pub max_intents: usize,
    pub min_length: usize,
    pub max_length: usize,
    pub eval_fraction: f64,
    pub attempts_per_trace: usize,
    /// Unique traces to keep per domain; domains not listed use `default_target`.
    pub targets: BTreeMap<String, usize>,
    pub default_target: usize,
}

impl Default for SamplingRecipe {
    fn default() -> Self {
        let p = SampleParams::default();
        SamplingRecipe {
            min_intents: p.min_intents,
            max_intents: p.max_intents,
            min_length: p.min_length,
            max_length: p.max_length,
            eval_fraction: p.eval_fraction,
            attempts_per_trace: p.attempts_per_trace,
            targets: BTreeMap::new(),
            default_target: DEFAULT_TARGET,
        }
    }
}

/// Unique traces for a domain the recipe does not list.
pub const DEFAULT_TARGET: usize = 4000;

impl SamplingRecipe {
    pub fn target(&self, domain: &str) -> usize {
        self.targets
            .get(domain)
            .copied()
            .unwrap_or(self.default_target)
    }

    /// The trace shape of this recipe.
    pub fn sample(&self) -> SampleParams {
        SampleParams {
            min_intents: self.min_intents,
            max_intents: self.max_intents,
            min_length: self.min_length,
            max_length: self.max_length,
            eval_fraction: self.eval_fraction,
            attempts_per_trace: self.attempts_per_trace,
        }
    }
}

/// One unique sampled trace.
#[derive(Clone, Debug, PartialEq)]
pub struct SampledTrace {
    pub trace_id: String,
    /// Train or eval, from the content hash.
    pub split: Split,
    /// The sample index that first produced it.
    pub sample_index: usize,
    pub intents: Vec<Vec<String>>,
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
    cfg: &SampleParams,
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
    cfg: &SampleParams,
) -> Option<Vec<Vec<String>>> {
    let roots: Vec<&str> = graph.roots().map(|n| n.tool.as_str()).collect();
    if roots.is_empty() {
        return None;
    }
    let mut rng = derive_rng(seed, &["traces", &graph.domain, &index.to_string()]);
    let n = rng.random_range(cfg.min_intents..=cfg.max_intents);
    (0..n).map(|_| walk(graph, &roots, &mut rng, cfg)).collect()
}

/// The trace's content id: the first 16 hex digits of SHA-256(domain \0 intents-JSON).
pub fn trace_id(domain: &str, intents: &[Vec<String>]) -> String {
    let json = serde_json::to_string(intents).unwrap_or_default();
    let digest = Sha256::digest(format!("{domain}\0{json}").as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

fn split_of(trace_id: &str, eval_fraction: f64) -> Split {
    let bucket = u64::from_str_radix(&trace_id[..8], 16).unwrap_or(0) % 10_000;
    if (bucket as f64) < eval_fraction * 10_000.0 {
        Split::Eval
    } else {
        Split::Train
    }
}

/// Sample unique traces for one domain.
pub fn sample_traces(
    graph: &ToolGraph,
    seed: u64,
    cfg: &SampleParams,
    target: usize,
) -> (Vec<SampledTrace>, SampleReport) {
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
            out.push(SampledTrace {
                split: split_of(&id, cfg.eval_fraction),
                trace_id: id,
                sample_index: index,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ToolKind;
    use crate::graph::{Edge, Node};
    use std::collections::HashSet;

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

    fn cfg() -> SampleParams {
        SampleParams::default()
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
