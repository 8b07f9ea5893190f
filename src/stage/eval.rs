//! `eval` stage: k trials per evaluation task (default 3, at most 200 steps), scored as
//! Avg@k (mean success over all trials) and Pass^1..k (the unbiased estimator
//! C(c, j) / C(n, j) per task, averaged over tasks), written as `report.json` and
//! `report.md` beside the episodes (`part-00000.parquet`).

use super::rollouts::{RolloutsConfig, reward_mix, run_stage};
use crate::artifact::{self, RolloutRecord};
use crate::config::ConfigError;
use crate::pipeline::{PipelineError, Stage, StageContext};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub struct EvalStage;

/// C(n, k) as f64 (small n).
fn choose(n: u64, k: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Unbiased Pass^k for one task with `n` trials and `c` successes.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> f64 {
    let denom = choose(n, k);
    if denom == 0.0 {
        0.0
    } else {
        choose(c, k) / denom
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EvalReport {
    pub domain: String,
    pub tasks: usize,
    pub trials: u32,
    /// Mean success rate over all counted trials.
    pub avg_at_k: f64,
    /// Pass^1 .. Pass^k.
    pub pass_hat: Vec<f64>,
    /// Episodes lost to endpoint errors (not counted as failures or successes).
    pub errored: usize,
}

/// Score episodes of one domain.
pub fn report(domain: &str, rows: &[RolloutRecord], k: u32) -> EvalReport {
    let mut per_task: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.error.is_none()) {
        let e = per_task.entry(r.task_id.as_str()).or_default();
        e.0 += 1;
        e.1 += u64::from(r.reward == 1);
    }
    let trials: u64 = per_task.values().map(|v| v.0).sum();
    let wins: u64 = per_task.values().map(|v| v.1).sum();
    let pass_hat = (1..=u64::from(k))
        .map(|j| {
            let scored: Vec<f64> = per_task
                .values()
                .filter(|(n, _)| *n >= j)
                .map(|(n, c)| pass_hat_k(*n, *c, j))
                .collect();
            if scored.is_empty() {
                0.0
            } else {
                scored.iter().sum::<f64>() / scored.len() as f64
            }
        })
        .collect();
    EvalReport {
        domain: domain.to_string(),
        tasks: per_task.len(),
        trials: k,
        avg_at_k: if trials == 0 {
            0.0
        } else {
            wins as f64 / trials as f64
        },
        pass_hat,
        errored: rows.iter().filter(|r| r.error.is_some()).count(),
    }
}

/// Markdown table of reports (per domain, then overall weighted by tasks).
pub fn report_table(reports: &[EvalReport]) -> String {
    let k = reports.iter().map(|r| r.trials).max().unwrap_or(0);
    let mut out = format!(
        "| domain | tasks | Avg@{k} | {} | errored |\n|---|---|---|{}---|\n",
        (1..=k)
            .map(|j| format!("Pass^{j}"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(k as usize)
    );
    let row = |name: &str, tasks: usize, avg: f64, pass: &[f64], err: usize| {
        format!(
            "| {name} | {tasks} | {:.1}% | {} | {err} |\n",
            avg * 100.0,
            pass.iter()
                .map(|p| format!("{:.1}%", p * 100.0))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    for r in reports {
        out.push_str(&row(&r.domain, r.tasks, r.avg_at_k, &r.pass_hat, r.errored));
    }
    let total: usize = reports.iter().map(|r| r.tasks).sum();
    if reports.len() > 1 && total > 0 {
        let w = |f: &dyn Fn(&EvalReport) -> f64| {
            reports.iter().map(|r| f(r) * r.tasks as f64).sum::<f64>() / total as f64
        };
        let pass: Vec<f64> = (0..k as usize)
            .map(|j| w(&|r| r.pass_hat.get(j).copied().unwrap_or(0.0)))
            .collect();
        out.push_str(&row(
            "overall",
            total,
            w(&|r| r.avg_at_k),
            &pass,
            reports.iter().map(|r| r.errored).sum(),
        ));
    }
    out
}

impl Stage for EvalStage {
    fn name(&self) -> &'static str {
        "eval"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "tasks"]
    }
    fn source_files(&self, domain: &str) -> Vec<std::path::PathBuf> {
        super::db::policy_sources(domain)
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        RolloutsConfig::load(path, table).map(|_| ())
    }
    fn preflight(&self, path: &Path, table: &toml::Table) -> Result<(), String> {
        let cfg = RolloutsConfig::load(path, table).map_err(|e| e.to_string())?;
        super::roles::preflight_roles(&cfg.roles)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: RolloutsConfig = ctx.typed_config()?;
        let rows = run_stage(ctx, &cfg)?;
        let prov = ctx.provenance();
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &prov)?;
        let rep = report(ctx.domain.name(), &rows, cfg.trials);
        let json = serde_json::to_vec_pretty(&rep).unwrap_or_default();
        artifact::write_atomic(&ctx.out("report.json"), &json)?;
        artifact::write_atomic(
            &ctx.out("report.md"),
            report_table(std::slice::from_ref(&rep)).as_bytes(),
        )?;
        let _ = std::fs::remove_file(ctx.journal_path());
        Ok(format!(
            "{} tasks x {} trials: Avg@{} {:.1}%, Pass^{} {:.1}% ({})",
            rep.tasks,
            cfg.trials,
            cfg.trials,
            rep.avg_at_k * 100.0,
            cfg.trials,
            rep.pass_hat.last().copied().unwrap_or(0.0) * 100.0,
            reward_mix(&rows)
        ))
    }
}

/// Imported tau-bench tasks as task rows, so published benchmarks run in this harness.
/// The reference hash comes from replaying the gold actions on the given database; the
/// scripted user states the task's instruction as its request and authenticates with the
/// task's user id (the only fact a tau-bench task file carries).
pub fn tasks_from_tau_bench(
    env: &dyn crate::domain::Environment,
    domain: &str,
    tasks: &[crate::replay::TauTask],
) -> Vec<crate::artifact::TaskRecord> {
    tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (_, outcome) = crate::replay::replay_task(env, i, t);
            let identity = crate::domain::UserFact {
                kind: "identity".into(),
                text: format!("Your user id is {}.", t.user_id),
                values: vec![t.user_id.clone()],
                ids: Vec::new(),
            };
            let mut requests: Vec<Option<String>> = vec![None; t.actions.len().max(1)];
            requests[0] = Some(t.instruction.clone());
            let actions: Vec<serde_json::Value> = t
                .actions
                .iter()
                .map(|a| serde_json::json!({"name": a.name, "kwargs": a.kwargs}))
                .collect();
            crate::artifact::TaskRecord {
                task_id: format!("{domain}-{i:04}"),
                domain: domain.to_string(),
                split: "eval".into(),
                trace_id: String::new(),
                user_id: t.user_id.clone(),
                intents: vec![t.actions.iter().map(|a| a.name.clone()).collect()],
                actions: serde_json::to_string(&actions).unwrap_or_default(),
                action_intents: vec![0; t.actions.len()],
                outputs: t.outputs.clone(),
                user_facts: serde_json::to_string(&[identity]).unwrap_or_default(),
                requests: serde_json::to_string(&requests).unwrap_or_default(),
                reference_hash: outcome.state_hash,
                grounder: "imported".into(),
                instruction: Some(t.instruction.clone()),
                refiner: Some("imported".into()),
                emotion_family: t.emotion_family.clone(),
                emotion: t.emotion_leaf.clone(),
                politeness: t.dimension_politeness.clone(),
                urgency: t.dimension_urgency.clone(),
                trust: t.dimension_trust_in_agent.clone(),
                ..Default::default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_hat_k_is_the_unbiased_estimator() {
        assert_eq!(pass_hat_k(3, 3, 3), 1.0);
        assert_eq!(pass_hat_k(3, 2, 3), 0.0);
        assert!((pass_hat_k(3, 2, 1) - 2.0 / 3.0).abs() < 1e-12);
        assert!((pass_hat_k(4, 2, 2) - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(pass_hat_k(3, 0, 1), 0.0);
    }
}
