//! Executable edge demonstration: an edge (a, b) is demonstrated when, for some customer of
//! the generated database, a policy-compliant call of `a` succeeds on a fork and then a
//! policy-compliant call of `b`, proposed from what `a` revealed, succeeds on the same fork.
//!
//! The search is deterministic: customers are tried in a seeded order and proposals come
//! from the domain's `propose_calls` with an RNG derived from (seed, edge).

use super::ToolGraph;
use crate::domain::{Environment, GroundingContext};
use crate::seed::{derive_rng, derive_seed};
use serde::Serialize;
use serde_json::Value;

/// How one edge fared.
#[derive(Clone, Debug, Serialize)]
pub struct EdgeDemo {
    pub from: String,
    pub to: String,
    pub witness: Option<Witness>,
}

/// The executions that demonstrated an edge.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Witness {
    pub user_id: String,
    pub source_args: Value,
    pub target_args: Value,
}

/// Limits of the search per edge.
#[derive(Clone, Copy, Debug)]
pub struct SearchLimits {
    pub customers: usize,
    pub proposals: usize,
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            customers: 40,
            proposals: 8,
        }
    }
}

/// Customers in a seeded order (a stride over the list so a search samples the whole base).
pub fn customer_order(env: &dyn Environment, seed: u64, limit: usize) -> Vec<String> {
    let customers = env.customers();
    if customers.is_empty() {
        return Vec::new();
    }
    let n = customers.len();
    let start = (derive_seed(seed, &["customers"]) % n as u64) as usize;
    // A stride coprime with n visits distinct customers.
    let mut stride = (n / limit.max(1)).max(1);
    while gcd(stride, n) != 1 {
        stride += 1;
    }
    (0..limit.min(n))
        .map(|i| customers[(start + i * stride) % n].clone())
        .collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Try to execute `from` then `to` for one customer; returns the witness on success.
pub fn demonstrate_pair(
    env: &dyn Environment,
    from: &str,
    to: &str,
    user_id: &str,
    rng_seed: u64,
    limits: SearchLimits,
) -> Option<Witness> {
    let mut rng = derive_rng(rng_seed, &[from, to, user_id]);
    let ctx = GroundingContext::for_user(user_id);
    let sources = env.propose_calls(from, &ctx, &mut rng);
    for source_args in sources.into_iter().take(limits.proposals) {
        if env.check_policy(from, &source_args).is_err() {
            continue;
        }
        let mut after_source = env.fork();
        let out = after_source.invoke(from, &source_args);
        if out.is_error {
            continue;
        }
        let mut ctx_after = ctx.clone();
        after_source.observe(from, &source_args, &out.text, &mut ctx_after);
        let targets = after_source.propose_calls(to, &ctx_after, &mut rng);
        for target_args in targets.into_iter().take(limits.proposals) {
            if after_source.check_policy(to, &target_args).is_err() {
                continue;
            }
            let mut after_target = after_source.fork();
            if !after_target.invoke(to, &target_args).is_error {
                return Some(Witness {
                    user_id: user_id.to_string(),
                    source_args,
                    target_args,
                });
            }
        }
    }
    None
}

/// Demonstrate every edge of `graph` (in parallel over edges; results in edge order).
pub fn demonstrate_edges(
    graph: &ToolGraph,
    env: &dyn Environment,
    seed: u64,
    limits: SearchLimits,
) -> Vec<EdgeDemo> {
    let customers = customer_order(env, seed, limits.customers);
    let demo = |from: &str, to: &str| EdgeDemo {
        from: from.to_string(),
        to: to.to_string(),
        witness: customers
            .iter()
            .find_map(|user| demonstrate_pair(env, from, to, user, seed, limits)),
    };
    crate::parallel::parallel_map(&graph.edges, |e| demo(&e.from, &e.to))
}
/// `stages/graphs.toml`: how hard the `graphs` stage searches for each edge's witness.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphsConfig {
    /// Customers tried per edge before giving up.
    #[serde(default = "default_customers")]
    pub customers: usize,
    /// Argument proposals tried per tool and customer.
    #[serde(default = "default_proposals")]
    pub proposals: usize,
    /// Fail the stage when an edge cannot be demonstrated.
    #[serde(default = "yes")]
    pub require_all_demonstrated: bool,
    /// Folder of the reviewers' edge decisions (`<reviews_dir>/graphs/<domain>.jsonl`),
    /// relative to the project root.
    #[serde(default = "reviews")]
    pub reviews_dir: String,
}

fn reviews() -> String {
    "reviews".into()
}

fn default_customers() -> usize {
    40
}
fn default_proposals() -> usize {
    8
}
fn yes() -> bool {
    true
}

impl GraphsConfig {
    pub fn limits(&self) -> SearchLimits {
        SearchLimits {
            customers: self.customers,
            proposals: self.proposals,
        }
    }
}
