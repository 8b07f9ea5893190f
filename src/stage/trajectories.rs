//! `trajectories` stage: keep reward-1 rollouts (never errored ones) that are clean SFT rows
//! (`analysis::clean`: ended by the user's stop, no policy or interaction fault, the customer
//! identified before the first write; the others go to `_rejects.parquet`), balance domains with
//! a seeded cap per domain (the paper's "High" set, 250 by default), mark the "Low"
//! selection (every success of the named domains), and export an SFT dataset in the
//! conversational tool-calling format TRL's `SFTTrainer` takes: one row per trajectory with
//! `messages` (system = the domain policy; assistant tool calls as structured
//! `{type, function: {name, arguments}}`; tool results as `tool` messages; reasoning kept as
//! `reasoning_content` or dropped by option) and `tools` (the OpenAI tool schemas).
//!
//! Files: `part-00000.parquet` (the High set as rollout rows), `_low.parquet` (the Low set,
//! when this domain is in it), `_sft.jsonl` (arguments and tools as real JSON objects) and
//! `_sft.parquet` (the same rows; `arguments` and `tools` as JSON strings so the schema is
//! fixed). Side files start with `_`, the convention dataset readers (pyarrow, Spark) use
//! to skip non-data files, so `output/trajectories` still reads as one table.

use crate::artifact::{self, RejectRecord, RolloutRecord, TaskRecord, sha256_hex};
use crate::config::ConfigError;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

pub struct TrajectoriesStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoriesConfig {
    /// Successes kept per domain in the High set.
    #[serde(default = "cap")]
    pub cap_per_domain: usize,
    /// Domains whose every success forms the Low set.
    #[serde(default = "low")]
    pub low_domains: Vec<String>,
    /// Keep the agent's reasoning as `reasoning_content` in the SFT rows.
    #[serde(default = "yes")]
    pub keep_reasoning: bool,
    /// Keep only clean successes: ended by the user's stop, no policy or interaction fault
    /// that the failure analysis finds, the customer identified before the first write
    /// (`analysis::clean`). The rest go to `_rejects.parquet` with the reason.
    #[serde(default = "yes")]
    pub clean_only: bool,
    /// Require a lookup that identifies the customer before the first write (every
    /// domain's policy asks for it).
    #[serde(default = "yes")]
    pub identity_first: bool,
    /// Export rows made by a scripted (offline) agent or user to the SFT files. Off by
    /// default: scripted rows are test data, not training data; when on, each row says
    /// `"scripted": true`.
    #[serde(default)]
    pub export_scripted: bool,
}

fn cap() -> usize {
    250
}
/// The paper's Low set (PAPER_FACTS, stage 7) among the domains this build registers, so
/// the default stays valid while the paper's domains are added one by one; a name listed
/// explicitly must be registered (`low_domains` is checked like every domain name).
fn low() -> Vec<String> {
    ["airline", "retail", "telecom", "telehealth"]
        .into_iter()
        .filter(|d| crate::domain::find(d).is_ok())
        .map(String::from)
        .collect()
}
fn yes() -> bool {
    true
}

/// Reward-1, error-free rollouts; at most `cap` of them, chosen by a seeded hash order and
/// returned in their original order.
pub fn select_successes(rows: &[RolloutRecord], cap: usize, seed: u64) -> Vec<RolloutRecord> {
    let wins: Vec<&RolloutRecord> = rows
        .iter()
        .filter(|r| r.reward == 1 && r.error.is_none())
        .collect();
    let mut ranked: Vec<(String, usize)> = wins
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                sha256_hex(format!("{seed}\0{}\0{}", r.task_id, r.trial).as_bytes()),
                i,
            )
        })
        .collect();
    ranked.sort();
    let mut keep: Vec<usize> = ranked.into_iter().take(cap).map(|(_, i)| i).collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| wins[i].clone()).collect()
}

/// One SFT row: `{"messages": [...], "tools": [...]}` with structured tool calls.
pub fn sft_row(rollout: &RolloutRecord, tools: &[Value], keep_reasoning: bool) -> Value {
    let out: Vec<Value> = rollout
        .messages
        .iter()
        .map(|m| {
            let mut o = serde_json::Map::new();
            o.insert("role".into(), json!(m.role));
            o.insert("content".into(), json!(m.content.clone().unwrap_or_default()));
            // Every message carries the same keys (empty or null when unused), so loaders
            // that infer one schema per column (Hugging Face `datasets`) see uniform rows.
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    let args = c.arguments_json().unwrap_or(Value::Object(Default::default()));
                    json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": args}})
                })
                .collect();
            o.insert("tool_calls".into(), Value::Array(calls));
            o.insert("tool_call_id".into(), json!(m.tool_call_id));
            o.insert("name".into(), json!(m.name));
            if keep_reasoning {
                o.insert("reasoning_content".into(), json!(m.reasoning_content));
            }
            Value::Object(o)
        })
        .collect();
    json!({
        "messages": out, "tools": tools, "task_id": rollout.task_id, "domain": rollout.domain,
        "agent_model": rollout.agent_model, "user_model": rollout.user_model,
        "scripted": is_scripted(rollout),
    })
}

/// Whether a scripted (offline) agent or user made this episode.
pub fn is_scripted(rollout: &RolloutRecord) -> bool {
    rollout.agent_model.starts_with("scripted:") || rollout.user_model.starts_with("scripted:")
}

/// Split the successes into clean rows and rejections (`analysis::clean`): each success is
/// analysed on a fork of its task's database by the deterministic detectors.
fn clean_successes(
    ctx: &StageContext,
    rows: Vec<RolloutRecord>,
    cfg: &TrajectoriesConfig,
) -> Result<(Vec<RolloutRecord>, Vec<RejectRecord>), PipelineError> {
    let wins: Vec<RolloutRecord> = rows
        .into_iter()
        .filter(|r| r.reward == 1 && r.error.is_none())
        .collect();
    if !cfg.clean_only {
        return Ok((wins, Vec::new()));
    }
    let (tasks, _) =
        artifact::read_records::<TaskRecord>(&ctx.input_dir("tasks").join("part-00000.parquet"))?;
    let tasks: BTreeMap<String, TaskRecord> =
        tasks.into_iter().map(|t| (t.task_id.clone(), t)).collect();
    let envs = crate::project::SplitEnvs::load(&ctx.input_dir("db"), ctx.domain)?;
    let starts = crate::analysis::StartStates {
        train: envs.for_split(crate::split::Split::Train),
        eval: envs.for_split(crate::split::Split::Eval),
    };
    let analysed = crate::analysis::analyse_rollouts(starts, &tasks, &wins, true)
        .map_err(|e| ctx.fail(ErrorKind::Input, e.to_string()))?;
    // Identity first only where the domain's policy has the agent identify the customer.
    let identity_first = cfg.identity_first && starts.train.identifies_customer();
    let mut verdicts: Vec<Vec<crate::analysis::clean::Unclean>> = vec![Vec::new(); wins.len()];
    for a in &analysed {
        verdicts[a.index] =
            crate::analysis::clean::unclean(&a.episode, &a.findings, identity_first);
    }
    let mut kept = Vec::new();
    let mut rejects = Vec::new();
    for (r, why) in wins.into_iter().zip(verdicts) {
        match why.first() {
            None => kept.push(r),
            Some(first) => rejects.push(RejectRecord {
                domain: r.domain.clone(),
                split: r.split,
                trace_id: String::new(),
                task_id: Some(r.task_id.clone()),
                stage: "trajectories".into(),
                reason_kind: "unclean".into(),
                rule: Some(first.kind().to_string()),
                reason: why
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
            }),
        }
    }
    Ok((kept, rejects))
}

impl StageConfig for TrajectoriesConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let c = crate::config::Check::new(path);
        c.count(
            "cap_per_domain",
            self.cap_per_domain,
            1,
            crate::config::MAX_COUNT,
        )?;
        c.domains("low_domains", self.low_domains.iter().map(String::as_str))
    }
}

impl TypedStage for TrajectoriesStage {
    type Config = TrajectoriesConfig;
    fn name(&self) -> &'static str {
        "trajectories"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "tasks", "rollouts"]
    }
    fn run(&self, ctx: &StageContext, cfg: &TrajectoriesConfig) -> Result<String, PipelineError> {
        let (rows, _) = artifact::read_records::<RolloutRecord>(
            &ctx.input_dir("rollouts").join("part-00000.parquet"),
        )?;
        let wins = rows
            .iter()
            .filter(|r| r.reward == 1 && r.error.is_none())
            .count();
        let (clean, rejects) = clean_successes(ctx, rows, cfg)?;
        let high = select_successes(&clean, cfg.cap_per_domain, ctx.seed);
        let prov = ctx.provenance();
        artifact::write_records(&ctx.out("part-00000.parquet"), &high, &prov)?;
        artifact::write_records(&ctx.out("_rejects.parquet"), &rejects, &prov)?;
        let in_low = cfg.low_domains.iter().any(|d| d == ctx.domain.name());
        let low = if in_low {
            select_successes(&clean, usize::MAX, ctx.seed)
        } else {
            Vec::new()
        };
        if in_low {
            artifact::write_records(&ctx.out("_low.parquet"), &low, &prov)?;
        }
        let tools: Vec<Value> = ctx.domain.tool_specs().iter().map(|s| s.openai()).collect();
        let exported: Vec<&RolloutRecord> = high
            .iter()
            .filter(|r| cfg.export_scripted || !is_scripted(r))
            .collect();
        let withheld = high.len() - exported.len();
        let sft: Vec<Value> = exported
            .iter()
            .map(|r| sft_row(r, &tools, cfg.keep_reasoning))
            .collect();
        let mut jsonl = String::new();
        for row in &sft {
            jsonl.push_str(&row.to_string());
            jsonl.push('\n');
        }
        artifact::write_atomic(&ctx.out("_sft.jsonl"), jsonl.as_bytes())?;
        let batches = artifact::sft::sft_batches(&sft)
            .map_err(|e| ctx.fail(ErrorKind::Internal, format!("_sft.parquet: {e}")))?;
        artifact::write_batches(
            &ctx.out("_sft.parquet"),
            artifact::sft::sft_schema(),
            &batches,
            &prov,
        )?;
        Ok(format!(
            "{} of {wins} successes kept ({} unclean dropped, cap {}), low set {}, {} SFT rows{}",
            high.len(),
            rejects.len(),
            cfg.cap_per_domain,
            if in_low {
                low.len().to_string()
            } else {
                "-".into()
            },
            sft.len(),
            if withheld > 0 {
                format!(
                    " ({withheld} scripted rows withheld: set export_scripted = true to export them, marked)"
                )
            } else {
                String::new()
            }
        ))
    }
}
