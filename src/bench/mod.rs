//! Benchmarks behind `make bench` / `tracer bench`: trace sampling throughput per domain,
//! database fork / state-hash cost (each figure the median of several timed rounds), and the
//! episode harness against a scripted loopback OpenAI-compatible server ([`harness`],
//! [`server`]): episodes/s and CPU per episode, throughput against the latency-bound ideal,
//! memory per in-flight episode. Tests never assert on these numbers (the machines are noisy).

pub mod harness;
pub mod serve_load;
pub mod server;

use crate::config::Paths;
use crate::domain::{self, Environment, GroundingContext, Split};
use crate::graph;
use crate::graph::sample::{SamplingRecipe, sample_traces};
use crate::seed::derive_rng;
use std::time::Instant;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs.get(xs.len() / 2).copied().unwrap_or(0.0)
}

/// Time `f` over `rounds` rounds of `iters` iterations; median seconds per iteration.
fn per_iter(rounds: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..rounds)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..iters {
                    f();
                }
                t.elapsed().as_secs_f64() / iters as f64
            })
            .collect(),
    )
}

/// A write the domain itself proposes for its first customer (for the hash-after-write
/// figure), if any write tool succeeds.
fn one_write(env: &dyn Environment) -> Option<(String, serde_json::Value)> {
    let user = env.customers().into_iter().next()?;
    let ctx = GroundingContext::for_user(&user);
    let mut rng = derive_rng(0, &["bench"]);
    for spec in env.tool_specs() {
        if spec.kind != domain::ToolKind::Write {
            continue;
        }
        for args in env.propose_calls(spec.name, &ctx, &mut rng) {
            if !env.fork().invoke(spec.name, &args).is_error {
                return Some((spec.name.to_string(), args));
            }
        }
    }
    None
}

/// What `tracer bench` runs.
#[derive(Clone, Debug, Default)]
pub struct BenchOptions {
    /// Shorter runs of everything.
    pub quick: bool,
    /// Only the harness section.
    pub harness_only: bool,
    /// The executable that serves the loopback server as a child process
    /// (`<exe> bench --loopback-server ...`); `None` runs it in-process.
    pub server_exe: Option<std::path::PathBuf>,
}

/// Run every benchmark; returns Markdown.
pub fn run_benchmarks(paths: &Paths, seed: u64, opts: &BenchOptions) -> String {
    let policy = std::fs::read_to_string(paths.policy_file("airline"))
        .unwrap_or_else(|_| "You are an airline customer service agent.".to_string());
    // The harness runs first, while the allocator holds little freed memory (its memory
    // figures are RSS growth); its section is printed last.
    let harness = harness::run(seed, policy, opts.server_exe.as_deref(), opts.quick)
        .unwrap_or_else(|e| format!("## Harness\n\nnot measured: {e}\n"));
    if opts.harness_only {
        return harness;
    }
    let mut out = base_benchmarks(paths, seed, opts.quick);
    out.push('\n');
    out.push_str(&harness);
    out
}

/// Trace sampling, fork and hash.
fn base_benchmarks(paths: &Paths, seed: u64, quick: bool) -> String {
    let (rounds, scale) = if quick { (3, 10) } else { (7, 1) };
    let mut out = String::new();
    let traces_cfg: SamplingRecipe = paths
        .stage_table("traces")
        .ok()
        .and_then(|(path, t)| crate::config::parse_typed(&path, &t).ok())
        .unwrap_or_default();

    out.push_str("## Trace sampling\n\n| domain | unique traces | median time | traces/s |\n|---|---|---|---|\n");
    let mut total = (0usize, 0.0f64);
    for d in domain::registry() {
        let Ok(g) = graph::load(&paths.graph_file(d.name()), *d) else {
            continue;
        };
        let target = traces_cfg.target(d.name());
        let mut n = 0;
        let secs = per_iter(if quick { 2 } else { 5 }, 1, || {
            n = sample_traces(&g, seed, &traces_cfg.sample(), target)
                .0
                .len();
        });
        total.0 += n;
        total.1 += secs;
        out.push_str(&format!(
            "| {} | {n} | {:.1} ms | {:.0} |\n",
            d.name(),
            secs * 1e3,
            n as f64 / secs
        ));
    }
    out.push_str(&format!(
        "| all | {} | {:.1} ms | {:.0} |\n\n",
        total.0,
        total.1 * 1e3,
        total.0 as f64 / total.1.max(1e-12)
    ));

    out.push_str("## Database fork and state hash\n\n| domain | generate | fork | hash (fresh fork) | write + hash | full rehash (cold base) |\n|---|---|---|---|---|---|\n");
    for d in domain::registry() {
        let t = Instant::now();
        let env = d.generate(seed, Split::Eval);
        let generate = t.elapsed().as_secs_f64();
        let _ = env.state_hash(); // warm the shared base sums
        let fork = per_iter(rounds, 20_000 / scale, || {
            std::hint::black_box(env.fork());
        });
        let hash = per_iter(rounds, 20_000 / scale, || {
            std::hint::black_box(env.state_hash());
        });
        let write = one_write(env.as_ref());
        let write_hash = per_iter(rounds, 2_000 / scale, || {
            let mut f = env.fork();
            if let Some((tool, args)) = &write {
                f.invoke(tool, args);
            }
            std::hint::black_box(f.state_hash());
        });
        let cold_hash = median(
            (0..3)
                .map(|_| {
                    let fresh = d.generate(seed, Split::Eval);
                    let t0 = Instant::now();
                    std::hint::black_box(fresh.state_hash());
                    t0.elapsed().as_secs_f64()
                })
                .collect(),
        );
        out.push_str(&format!(
            "| {} | {:.1} ms | {:.2} µs | {:.2} µs | {:.1} µs ({}) | {:.2} ms |\n",
            d.name(),
            generate * 1e3,
            fork * 1e6,
            hash * 1e6,
            write_hash * 1e6,
            write.as_ref().map(|w| w.0.as_str()).unwrap_or("no write"),
            cold_hash * 1e3
        ));
    }
    out
}
