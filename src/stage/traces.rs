//! `traces` stage: sample unique random-walk traces over the verified dependency graph
//! (the algorithm is [`crate::graph::sample`]) and write them as trace records.

use crate::artifact::{self, TraceRecord};
use crate::config::ConfigError;
use crate::graph::sample::{SamplingRecipe, sample_traces};
use crate::pipeline::{PipelineError, Stage, StageContext};
use crate::split::Split;
use std::path::Path;

pub struct TracesStage;

/// `stages/traces.toml`: the sampling recipe (shape + per-domain targets).
pub type TracesConfig = SamplingRecipe;

impl Stage for TracesStage {
    fn name(&self) -> &'static str {
        "traces"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["graphs"]
    }
    /// Ranges and names (one path for `tracer validate` and `tracer run`). A walk is at
    /// most 50 calls and a trace at most 10 walks; sampling budgets stay countable.
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        use crate::config::{Check, MAX_COUNT};
        let cfg: TracesConfig = crate::config::parse_typed(path, table)?;
        let c = Check::new(path);
        c.count("max_intents", cfg.max_intents, 1, 10)?;
        c.count("min_intents", cfg.min_intents, 1, cfg.max_intents)?;
        c.count("max_length", cfg.max_length, 1, 50)?;
        c.count("min_length", cfg.min_length, 1, cfg.max_length)?;
        c.share("eval_fraction", cfg.eval_fraction)?;
        c.count("attempts_per_trace", cfg.attempts_per_trace, 1, 10_000)?;
        c.count("default_target", cfg.default_target, 0, MAX_COUNT)?;
        c.domains("targets", cfg.targets.keys().map(String::as_str))?;
        for (domain, n) in &cfg.targets {
            c.count(&format!("targets.{domain}"), *n, 0, MAX_COUNT)?;
        }
        Ok(())
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: TracesConfig = ctx.typed_config()?;
        let graph = crate::graph::load(&ctx.input_dir("graphs").join("graph.json"), ctx.domain)
            .map_err(|e| ctx.fail(e.to_string()))?;
        let target = cfg.target(ctx.domain.name());
        let (traces, report) = sample_traces(&graph, ctx.seed, &cfg.sample(), target);
        let rows: Vec<TraceRecord> = traces
            .into_iter()
            .map(|t| TraceRecord {
                split: t.split,
                trace_id: t.trace_id,
                domain: graph.domain.clone(),
                sample_index: t.sample_index as i32,
                n_intents: t.intents.len() as i32,
                length: t.intents.iter().map(Vec::len).sum::<usize>() as i32,
                intents: t.intents,
            })
            .collect();
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        let eval = rows.iter().filter(|r| r.split == Split::Eval).count();
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
