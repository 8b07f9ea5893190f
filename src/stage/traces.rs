//! `traces` stage: sample unique random-walk traces over the verified dependency graph
//! (the algorithm is [`crate::graph::sample`]) and write them as trace records.

use crate::artifact::{self, TraceRecord};
use crate::config::ConfigError;
use crate::graph::sample::{SamplingRecipe, sample_traces};
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::split::Split;
use std::path::Path;

pub struct TracesStage;

/// `stages/traces.toml`: the sampling recipe (shape + per-domain targets).
pub type TracesConfig = SamplingRecipe;

impl StageConfig for TracesConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
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
}

impl TypedStage for TracesStage {
    type Config = TracesConfig;
    fn name(&self) -> &'static str {
        "traces"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["graphs"]
    }
    fn run(&self, ctx: &StageContext, cfg: &TracesConfig) -> Result<String, PipelineError> {
        let graph = crate::graph::load(&ctx.input_dir("graphs").join("graph.json"), ctx.domain)
            .map_err(|e| ctx.fail(ErrorKind::Input, e.to_string()))?;
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
