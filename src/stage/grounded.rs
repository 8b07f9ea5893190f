//! `grounded` stage: ground the first N traces of each split (the algorithms are in
//! [`crate::grounding`]) and write the task rows and the rejections. Item-parallel: a
//! shard grounds the selected traces whose id it owns; a merge puts the rows back in
//! selection order.

use crate::artifact::{self, RejectRecord, TaskRecord, TraceRecord};
use crate::config::ConfigError;
use crate::domain::{Environment, Split};
use crate::grounding::{SearchLimits, task_record};
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::roles::GroundJob;
use crate::seed::derive_seed;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct GroundedStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GroundedConfig {
    /// Traces to ground per split (the first N in sampling order).
    pub max_train: usize,
    pub max_eval: usize,
    /// Customers tried per trace.
    pub max_customers: usize,
    /// Argument proposals tried per step.
    pub max_proposals: usize,
    /// Tool executions allowed per customer before giving up on them.
    pub max_expansions: usize,
    /// Refuse incoherent compositions during the search (see `quality::coherence`).
    pub coherent: bool,
    /// Refuse a requested read with nothing to tell (see `SearchLimits::answerable`).
    pub answerable: bool,
    /// Share of traces allowed one stated change of mind (see
    /// `SearchLimits::change_of_mind`).
    pub change_of_mind: f64,
    /// Traces with more tool calls than this are passed over: the selection takes the
    /// first N traces short enough for the tasks stage's `max_actions` gate, so the cap
    /// finds tasks instead of filtering them.
    pub max_actions: usize,
    /// `[roles.grounder]`: scripted search (the default) or a tool-calling model
    /// (experimental: docs/real-models.md).
    pub roles: crate::llm::RolesConfig,
    /// The directory of the role prompts: an endpoint grounder sends `<prompts>/grounder.md`.
    pub prompts: Option<String>,
    /// Share of traces the grounder's endpoint may fail on before the stage fails and stays
    /// stale; failed ones are errored, never rejected.
    pub max_errored_share: f64,
    /// `[caps.<domain>]`: per-domain `max_train` / `max_eval` / `max_customers` /
    /// `max_actions` replacing the ones above for that domain (the release recipe gives
    /// each domain its share of the paper's counts; a domain whose traces need rarer
    /// customers searches more of them; one whose requests are long stops its tasks sooner).
    pub caps: std::collections::BTreeMap<String, DomainCaps>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DomainCaps {
    pub max_train: Option<usize>,
    pub max_eval: Option<usize>,
    pub max_customers: Option<usize>,
    pub max_actions: Option<usize>,
}

impl Default for GroundedConfig {
    fn default() -> Self {
        let limits = SearchLimits::default();
        GroundedConfig {
            max_train: 300,
            max_eval: 150,
            max_customers: limits.max_customers,
            max_proposals: limits.max_proposals,
            max_expansions: limits.max_expansions,
            coherent: limits.coherent,
            answerable: limits.answerable,
            change_of_mind: limits.change_of_mind,
            max_actions: crate::verify::MAX_ACTIONS,
            roles: Default::default(),
            prompts: None,
            max_errored_share: 0.0,
            caps: Default::default(),
        }
    }
}

impl GroundedConfig {
    /// The traces to ground per split for `domain`: `(train, eval)`.
    pub fn caps_for(&self, domain: &str) -> (usize, usize) {
        let own = self.caps.get(domain);
        (
            own.and_then(|c| c.max_train).unwrap_or(self.max_train),
            own.and_then(|c| c.max_eval).unwrap_or(self.max_eval),
        )
    }

    /// The most tool calls a trace selected for `domain` has.
    pub fn max_actions_for(&self, domain: &str) -> usize {
        self.caps
            .get(domain)
            .and_then(|c| c.max_actions)
            .unwrap_or(self.max_actions)
    }

    /// The search limits for `domain` (its `[caps]` entry's `max_customers`, if any).
    pub fn limits_for(&self, domain: &str) -> SearchLimits {
        SearchLimits {
            max_customers: self
                .caps
                .get(domain)
                .and_then(|c| c.max_customers)
                .unwrap_or(self.max_customers),
            ..self.limits()
        }
    }

    pub fn limits(&self) -> SearchLimits {
        SearchLimits {
            max_customers: self.max_customers,
            max_proposals: self.max_proposals,
            max_expansions: self.max_expansions,
            coherent: self.coherent,
            answerable: self.answerable,
            change_of_mind: self.change_of_mind,
        }
    }
}

/// The traces a run grounds, in order: the first `max_train` training traces, then the
/// first `max_eval` evaluation traces, of at most `max_actions` calls each (the cap applies
/// before any sharding).
fn select_traces<'a>(
    traces: &'a [TraceRecord],
    cfg: &GroundedConfig,
    domain: &str,
) -> Vec<&'a TraceRecord> {
    let mut selected: Vec<&TraceRecord> = Vec::new();
    let (train, eval) = cfg.caps_for(domain);
    let max_actions = cfg.max_actions_for(domain);
    for (split, cap) in [(Split::Train, train), (Split::Eval, eval)] {
        selected.extend(
            traces
                .iter()
                .filter(|t| t.split == split && t.length as usize <= max_actions)
                .take(cap),
        );
    }
    selected
}

fn read_traces(ctx: &StageContext) -> Result<Vec<TraceRecord>, PipelineError> {
    Ok(
        artifact::read_records::<TraceRecord>(&ctx.input_dir("traces").join("part-00000.parquet"))?
            .0,
    )
}

/// Write the task rows and rejections (one of the two per grounded trace); the summary.
fn write_grounded(
    ctx: &StageContext,
    tasks: &[TaskRecord],
    rejects: &[RejectRecord],
) -> Result<String, PipelineError> {
    let prov = ctx.provenance();
    artifact::write_records(&ctx.out("part-00000.parquet"), tasks, &prov)?;
    artifact::write_records(&ctx.out("_rejects.parquet"), rejects, &prov)?;
    Ok(format!(
        "{} of {} traces grounded ({} rejected)",
        tasks.len(),
        tasks.len() + rejects.len(),
        rejects.len()
    ))
}

impl StageConfig for GroundedConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        use crate::config::MAX_COUNT;
        let c = crate::config::Check::new(path);
        c.count("max_train", self.max_train, 0, MAX_COUNT)?;
        c.count("max_eval", self.max_eval, 0, MAX_COUNT)?;
        c.count("max_customers", self.max_customers, 1, 100_000)?;
        c.count("max_proposals", self.max_proposals, 1, 10_000)?;
        c.count("max_expansions", self.max_expansions, 1, MAX_COUNT)?;
        c.count("max_actions", self.max_actions, 1, MAX_COUNT)?;
        c.share("change_of_mind", self.change_of_mind)?;
        c.share("max_errored_share", self.max_errored_share)?;
        c.domains("caps", self.caps.keys().map(String::as_str))?;
        for (domain, caps) in &self.caps {
            if let Some(n) = caps.max_train {
                c.count(&format!("caps.{domain}.max_train"), n, 0, MAX_COUNT)?;
            }
            if let Some(n) = caps.max_eval {
                c.count(&format!("caps.{domain}.max_eval"), n, 0, MAX_COUNT)?;
            }
            if let Some(n) = caps.max_customers {
                c.count(&format!("caps.{domain}.max_customers"), n, 1, 100_000)?;
            }
            if let Some(n) = caps.max_actions {
                c.count(&format!("caps.{domain}.max_actions"), n, 1, MAX_COUNT)?;
            }
        }
        crate::llm::config::check_roles(path, &self.roles, &[crate::llm::Role::Grounder])
    }
    fn preflight(&self, scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        super::roles::preflight(
            scope,
            &self.roles,
            self.prompts.as_deref(),
            &[(crate::llm::Role::Grounder, "grounder")],
        )
    }
}

impl TypedStage for GroundedStage {
    type Config = GroundedConfig;
    fn name(&self) -> &'static str {
        "grounded"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "traces"]
    }
    fn source_files(&self, _domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        super::roles::prompt_sources(config, &[(crate::llm::Role::Grounder, "grounder")])
    }
    fn run(&self, ctx: &StageContext, cfg: &GroundedConfig) -> Result<String, PipelineError> {
        let traces = read_traces(ctx)?;
        let mut selected = select_traces(&traces, cfg, ctx.domain.name());
        selected.retain(|t| ctx.owns(&t.trace_id));
        let db_dir = ctx.input_dir("db");
        let train = crate::project::load_db(&db_dir, ctx.domain, Split::Train)?;
        let eval = crate::project::load_db(&db_dir, ctx.domain, Split::Eval)?;
        let seed = derive_seed(ctx.seed, &["grounded"]);
        let model = super::roles::open_role(ctx, &cfg.roles, crate::llm::Role::Grounder)?;
        let prompt = super::roles::role_prompt(ctx, &model, cfg.prompts.as_deref(), "grounder")?;
        let grounder =
            crate::roles::grounder::grounder(&model, cfg.limits_for(ctx.domain.name()), prompt);
        let (train, eval): (Arc<dyn Environment>, Arc<dyn Environment>) =
            (train.into(), eval.into());
        let jobs: Vec<GroundJob> = selected
            .iter()
            .map(|t| GroundJob {
                env: Arc::clone(if t.split == Split::Eval {
                    &eval
                } else {
                    &train
                }),
                domain: t.domain.clone(),
                trace_id: t.trace_id.clone(),
                intents: t.intents.clone(),
            })
            .collect();
        let results = grounder
            .ground(&jobs, seed)
            .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        let grounder_id = grounder.model_id();
        let mut tasks = Vec::new();
        let mut rejects = Vec::new();
        let mut errored: Vec<(String, String)> = Vec::new();
        for (trace, result) in selected.iter().zip(results) {
            match result {
                Ok(g) => tasks.push(TaskRecord {
                    grounder: grounder_id.clone(),
                    ..task_record(trace, &g)
                }),
                Err(failure) => {
                    // An endpoint failure says nothing about the trace: errored, not rejected.
                    let endpoint = failure.reason.starts_with(crate::grounding::ENDPOINT_ERROR);
                    if endpoint {
                        errored.push((trace.trace_id.clone(), failure.reason.clone()));
                    }
                    rejects.push(RejectRecord {
                        domain: trace.domain.clone(),
                        split: trace.split,
                        trace_id: trace.trace_id.clone(),
                        task_id: None,
                        stage: "grounded".into(),
                        reason_kind: if endpoint { "errored" } else { "no_grounding" }.into(),
                        rule: failure.rule.map(str::to_string),
                        reason: failure.reason,
                    })
                }
            }
        }
        super::roles::settle_errored(
            ctx,
            "grounder traces",
            &errored,
            selected.len(),
            cfg.max_errored_share,
        )?;
        write_grounded(ctx, &tasks, &rejects)
    }
    fn shardable(&self) -> bool {
        true
    }
    fn merge(
        &self,
        ctx: &StageContext,
        cfg: &GroundedConfig,
        parts: &[PathBuf],
    ) -> Result<String, PipelineError> {
        let traces = read_traces(ctx)?;
        let order = super::positions(
            select_traces(&traces, cfg, ctx.domain.name())
                .iter()
                .map(|t| t.trace_id.as_str()),
        );
        let tasks = super::merge_rows(ctx, parts, "part-00000.parquet", |t: &TaskRecord| {
            order.get(&t.trace_id).copied()
        })?;
        let rejects = super::merge_rows(ctx, parts, "_rejects.parquet", |r: &RejectRecord| {
            order.get(&r.trace_id).copied()
        })?;
        write_grounded(ctx, &tasks, &rejects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> (GroundedConfig, Result<(), ConfigError>) {
        let table: toml::Table = text.parse().unwrap();
        let path = Path::new("stages/grounded.toml");
        let cfg = crate::config::parse_typed(path, &table).unwrap();
        (cfg, GroundedConfig::load(path, &table).map(|_| ()))
    }

    #[test]
    fn a_domain_cap_on_customers_applies_to_that_domain_only() {
        let (cfg, ok) = config("max_customers = 24\n[caps.bank]\nmax_customers = 48\n");
        assert!(ok.is_ok());
        assert_eq!(cfg.limits_for("bank").max_customers, 48);
        assert_eq!(cfg.limits_for("retail").max_customers, 24);
        assert_eq!(cfg.caps_for("bank"), (300, 150));
        let (_, bad) = config("[caps.bank]\nmax_customers = 0\n");
        let err = bad.unwrap_err().to_string();
        assert!(err.contains("caps.bank.max_customers"), "{err}");
    }

    #[test]
    fn a_domain_cap_on_actions_selects_shorter_traces_for_that_domain_only() {
        let (cfg, ok) = config("max_train = 2\nmax_eval = 0\n[caps.travel]\nmax_actions = 8\n");
        assert!(ok.is_ok());
        let traces: Vec<TraceRecord> = [10, 8, 9, 3]
            .iter()
            .enumerate()
            .map(|(k, &length)| TraceRecord {
                trace_id: format!("t{k}"),
                domain: "travel".into(),
                split: Split::Train,
                sample_index: k as i32,
                n_intents: 1,
                intents: vec![vec!["x".into(); length as usize]],
                length,
            })
            .collect();
        let picked = |domain: &str| -> Vec<i32> {
            select_traces(&traces, &cfg, domain)
                .iter()
                .map(|t| t.length)
                .collect()
        };
        assert_eq!(picked("travel"), vec![8, 3]);
        assert_eq!(picked("movie"), vec![10, 8]);
        let (_, bad) = config("[caps.travel]\nmax_actions = 0\n");
        let err = bad.unwrap_err().to_string();
        assert!(err.contains("caps.travel.max_actions"), "{err}");
    }
}
