//! Candidate-edge proposal (`tracer graphs build`): a starting point for a reviewed graph.
//!
//! Two sources of candidates, as the paper describes:
//! - data flow: tool `a` yields an id (learnt from its outputs when executed on the
//!   generated database) that tool `b` consumes as an argument;
//! - policy ordering: a customer may follow one request with another, so a tool that can open
//!   a conversation (root-eligible: executable knowing only the customer) may follow any tool.
//!
//! Every candidate is then executed ([`super::demonstrate`]); only demonstrated candidates
//! are kept. The output is for a human to review, never used unreviewed.

use super::demonstrate::{SearchLimits, customer_order, demonstrate_pair};
use super::{Edge, Node, ToolGraph};
use crate::domain::{Environment, GroundingContext, ToolSpec};
use crate::seed::derive_rng;
use serde_json::Value;
use std::collections::BTreeSet;

/// A proposed edge and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub from: String,
    pub to: String,
    pub reasons: Vec<String>,
    pub demonstrated: bool,
}

fn consumed_keys(schema: &Value, out: &mut BTreeSet<String>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, sub) in props {
            out.insert(k.clone());
            consumed_keys(sub, out);
        }
    }
    if let Some(items) = schema.get("items") {
        consumed_keys(items, out);
    }
}

/// What executing `tool` for these customers revealed (context keys), and whether it ran
/// knowing only the customer (root-eligible).
fn probe(
    env: &dyn Environment,
    tool: &str,
    customers: &[String],
    seed: u64,
) -> (BTreeSet<String>, bool) {
    let mut yields = BTreeSet::new();
    let mut root = false;
    for user in customers {
        let ctx = GroundingContext::for_user(user);
        let mut rng = derive_rng(seed, &["probe", tool, user]);
        for args in env.propose_calls(tool, &ctx, &mut rng).into_iter().take(4) {
            if env.check_policy(tool, &args).is_err() {
                continue;
            }
            let mut fork = env.fork();
            let out = fork.invoke(tool, &args);
            if out.is_error {
                continue;
            }
            root = true;
            let mut after = ctx.clone();
            fork.observe(tool, &args, &out.text, &mut after);
            yields.extend(after.known.keys().cloned());
        }
    }
    (yields, root)
}

/// Propose, execute and keep candidate edges among `tools`.
pub fn build_candidates(
    env: &dyn Environment,
    domain: &str,
    tools: &[&ToolSpec],
    seed: u64,
    limits: SearchLimits,
) -> (ToolGraph, Vec<Candidate>) {
    let customers = customer_order(env, seed, limits.customers.min(12));
    let probes: Vec<(BTreeSet<String>, bool)> = tools
        .iter()
        .map(|t| probe(env, t.name, &customers, seed))
        .collect();
    let mut candidates = Vec::new();
    for (ia, a) in tools.iter().enumerate() {
        for (ib, b) in tools.iter().enumerate() {
            if ia == ib {
                continue;
            }
            let mut consumes = BTreeSet::new();
            consumed_keys(&b.parameters, &mut consumes);
            let mut reasons: Vec<String> = probes[ia]
                .0
                .intersection(&consumes)
                .map(|k| format!("{} yields {k}, consumed by {}", a.name, b.name))
                .collect();
            if probes[ib].1 {
                reasons.push(format!(
                    "{} can open a new request of the same customer",
                    b.name
                ));
            }
            if reasons.is_empty() {
                continue;
            }
            let demonstrated = customers
                .iter()
                .any(|u| demonstrate_pair(env, a.name, b.name, u, seed, limits).is_some());
            candidates.push(Candidate {
                from: a.name.to_string(),
                to: b.name.to_string(),
                reasons,
                demonstrated,
            });
        }
    }
    let graph = ToolGraph {
        domain: domain.to_string(),
        nodes: tools
            .iter()
            .zip(&probes)
            .map(|(t, p)| Node {
                tool: t.name.to_string(),
                kind: t.kind,
                root: p.1,
            })
            .collect(),
        edges: candidates
            .iter()
            .filter(|c| c.demonstrated)
            .map(|c| Edge {
                from: c.from.clone(),
                to: c.to.clone(),
            })
            .collect(),
    };
    (graph, candidates)
}
