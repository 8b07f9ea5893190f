//! `tracer stats`: the funnel per domain and split (traces -> grounded -> refined ->
//! verified) with rejection reasons, read from the stage artifacts, as Markdown; and the
//! dollar cost of the model roles, read from the stage manifests (the tokens and prices
//! each run recorded, so the figures never depend on today's config).
//!
//! The funnel and the stage tables are here; the fault tables of the failure analysis are
//! `faults.rs`, the cost tables `costs.rs`.

mod costs;
mod faults;

use crate::artifact::{self, ArtifactError, RejectRecord, TaskRecord, TraceRecord};
use crate::config::Paths;
use crate::pipeline::stage_dir;
use crate::split::Split;
use std::collections::BTreeMap;

pub use costs::{COST_NOTE, CostScope, cost_report, dollars};
pub use faults::{divergence_table, fault_report, fault_table, read_faults};

fn read_opt<R: artifact::Record>(
    paths: &Paths,
    stage: &str,
    domain: &str,
    file: &str,
) -> Result<Option<Vec<R>>, ArtifactError> {
    let path = stage_dir(&paths.output, stage, domain).join(file);
    if !path.exists() {
        return Ok(None);
    }
    artifact::read_records::<R>(&path).map(|(rows, _)| Some(rows))
}

fn count<T>(rows: &Option<Vec<T>>, split: Split, split_of: impl Fn(&T) -> Split) -> String {
    match rows {
        None => "-".into(),
        Some(r) => r
            .iter()
            .filter(|x| split_of(x) == split)
            .count()
            .to_string(),
    }
}

/// The funnel table for these domains.
pub fn funnel(paths: &Paths, domains: &[&str]) -> Result<String, ArtifactError> {
    let mut out = String::from(
        "| domain | split | traces | grounded | refined | verified | screened | reviewed | rejected (stage: reason x n) | errored at an endpoint (stage x n) | model refiner: first / retried / fallback |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let traces = read_opt::<TraceRecord>(paths, "traces", d, "part-00000.parquet")?;
        let grounded = read_opt::<TaskRecord>(paths, "grounded", d, "part-00000.parquet")?;
        let refined = read_opt::<TaskRecord>(paths, "refined", d, "part-00000.parquet")?;
        let tasks = read_opt::<TaskRecord>(paths, "tasks", d, "part-00000.parquet")?;
        // Screening and review apply to the evaluation candidates only.
        let screened = read_opt::<TaskRecord>(paths, "screened", d, "part-00000.parquet")?;
        let reviewed = read_opt::<TaskRecord>(paths, "reviewed", d, "part-00000.parquet")?;
        let mut rejects: Vec<RejectRecord> = Vec::new();
        for stage in ["grounded", "refined", "tasks", "screened", "reviewed"] {
            if let Some(r) = read_opt::<RejectRecord>(paths, stage, d, "_rejects.parquet")? {
                rejects.extend(r);
            }
        }
        for split in [Split::Train, Split::Eval] {
            let mut reasons: BTreeMap<(String, String), usize> = BTreeMap::new();
            let mut errored: BTreeMap<String, usize> = BTreeMap::new();
            for r in rejects.iter().filter(|r| r.split == split) {
                // An endpoint failure is not the task's: its own column, never a rejection.
                if r.reason_kind == "errored" {
                    *errored.entry(r.stage.clone()).or_default() += 1;
                    continue;
                }
                // Policy rejections count per named rule ("policy/<rule>").
                let kind = match &r.rule {
                    Some(rule) => format!("{}/{rule}", r.reason_kind),
                    None => r.reason_kind.clone(),
                };
                *reasons.entry((r.stage.clone(), kind)).or_default() += 1;
            }
            let reasons: Vec<String> = reasons
                .iter()
                .map(|((s, k), n)| format!("{s}: {k} x {n}"))
                .collect();
            let errored: Vec<String> = errored.iter().map(|(s, n)| format!("{s} x {n}")).collect();
            let outcome = |prefix: &str| {
                refined.as_ref().map_or(0, |rows| {
                    rows.iter()
                        .filter(|t| t.split == split)
                        .filter(|t| {
                            t.refinement
                                .as_deref()
                                .is_some_and(|r| r.starts_with(prefix))
                        })
                        .count()
                })
            };
            let (first, retried, fallback) =
                (outcome("first"), outcome("retried"), outcome("fallback"));
            let refinement = if first + retried + fallback == 0 {
                "-".to_string()
            } else {
                format!("{first} / {retried} / {fallback}")
            };
            let eval_only = |rows: &Option<Vec<TaskRecord>>| match split {
                Split::Train => "-".to_string(),
                Split::Eval => count(rows, split, |t| t.split),
            };
            out.push_str(&format!(
                "| {d} | {split} | {} | {} | {} | {} | {} | {} | {} | {} | {refinement} |\n",
                count(&traces, split, |t| t.split),
                count(&grounded, split, |t| t.split),
                count(&refined, split, |t| t.split),
                count(&tasks, split, |t| t.split),
                eval_only(&screened),
                eval_only(&reviewed),
                if reasons.is_empty() {
                    "none".into()
                } else {
                    reasons.join(", ")
                },
                if errored.is_empty() {
                    "none".into()
                } else {
                    errored.join(", ")
                }
            ));
        }
    }
    Ok(out)
}

/// The manual review of the evaluation release per domain, from the `reviewed` stage's
/// counts: decisions, edit kinds (the paper's gold edits, id swaps and rewrites), what is
/// released, and, when two reviewers decided some tasks, their agreement (raw and Cohen's
/// kappa on accept / reject, per domain and pooled); `None` when no domain has run the stage.
pub fn review_table(paths: &Paths, domains: &[&str]) -> Option<String> {
    let mut out = String::from(
        "| domain | screened candidates | accepted | edited | rejected | pending | needs review again | conflict | released | gold edits | id swaps | rewrites | emotion edits |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut any = false;
    let mut agreement: Vec<(String, crate::review::Agreement)> = Vec::new();
    for &d in domains {
        let path = stage_dir(&paths.output, "reviewed", d).join("review.json");
        let Some(c) = crate::review::read_counts(&path) else {
            continue;
        };
        any = true;
        out.push_str(&format!(
            "| {d} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.candidates,
            c.accepted,
            c.edited,
            c.rejected + c.failed_edits,
            c.pending,
            c.stale,
            c.conflicts,
            c.released,
            c.gold_edits,
            c.id_swaps,
            c.rewrites,
            c.emotion_edits
        ));
        if c.agreement.tasks() > 0 {
            agreement.push((d.to_string(), c.agreement));
        }
    }
    if !agreement.is_empty() {
        out.push_str(&agreement_table(&agreement));
    }
    any.then_some(out)
}

/// Agreement between reviewers per domain and pooled (kappa recomputed from the pooled
/// pairs, not averaged).
fn agreement_table(rows: &[(String, crate::review::Agreement)]) -> String {
    let mut out = String::from(
        "\nAgreement between reviewers over the tasks two of them decided (accept or edit vs reject; the first two reviewers of each task):\n\n| domain | doubly reviewed | agreed | raw agreement | Cohen's kappa |\n|---|---|---|---|---|\n",
    );
    let row = |name: &str, a: &crate::review::Agreement| {
        format!(
            "| {name} | {} | {} | {} | {} |\n",
            a.tasks(),
            a.agreed(),
            a.raw().map_or("-".into(), |r| format!("{:.1}%", 100.0 * r)),
            a.kappa()
                .map_or("- (one label only)".into(), |k| format!("{k:.2}"))
        )
    };
    let mut pooled = crate::review::Agreement::default();
    for (d, a) in rows {
        out.push_str(&row(d, a));
        pooled.add(a);
    }
    if rows.len() > 1 {
        out.push_str(&row("all", &pooled));
    }
    out
}

/// The paper's Tables 6 and 7 analogues from the `rollouts` artifacts: reward mix and
/// success rate per domain; for reward-1 episodes the average user turns, assistant
/// turns, tool calls, gold actions and reasoning characters per assistant turn, and the
/// share of trajectories whose tool calls outnumber follow-up questions.
pub fn rollout_table(paths: &Paths, domains: &[&str]) -> Result<String, ArtifactError> {
    use crate::artifact::RolloutRecord;
    let mut out = String::from(
        "| domain | tasks | rollouts | agent errors | infra errors (not scored) | context exceeded | R=1 | R=0 | R=-1 | success | user turns | assistant turns | tool calls | gold actions | reasoning chars/turn | tools > questions |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let Some(rows) = read_opt::<RolloutRecord>(paths, "rollouts", d, "part-00000.parquet")?
        else {
            continue;
        };
        // Scored episodes: all but infrastructure failures; an agent error is a failure.
        let ok: Vec<&RolloutRecord> = rows
            .iter()
            .filter(|r| !crate::harness::metrics::is_infrastructure_failure(r))
            .collect();
        let wins: Vec<&RolloutRecord> = ok
            .iter()
            .copied()
            .filter(|r| r.reward == 1 && r.error.is_none())
            .collect();
        let context_exceeded = ok
            .iter()
            .filter(|r| r.termination == crate::harness::Termination::ContextExceeded.as_str())
            .count();
        // Agent errors: a malformed answer (an overflow is counted on its own).
        let agent_errors = ok
            .iter()
            .filter(|r| r.error.is_some())
            .count()
            .saturating_sub(context_exceeded);
        let tasks: std::collections::BTreeSet<&str> =
            rows.iter().map(|r| r.task_id.as_str()).collect();
        let n = |r: i32| ok.iter().filter(|x| x.reward == r).count();
        let avg = |f: &dyn Fn(&RolloutRecord) -> f64| {
            if wins.is_empty() {
                0.0
            } else {
                wins.iter().map(|r| f(r)).sum::<f64>() / wins.len() as f64
            }
        };
        let reasoning = {
            let turns: i64 = wins.iter().map(|r| i64::from(r.assistant_turns)).sum();
            let chars: i64 = wins.iter().map(|r| r.reasoning_chars).sum();
            if turns == 0 {
                0.0
            } else {
                chars as f64 / turns as f64
            }
        };
        let tools_first = wins
            .iter()
            .filter(|r| r.tool_calls > r.follow_up_questions)
            .count();
        out.push_str(&format!(
            "| {d} | {} | {} | {agent_errors} | {} | {context_exceeded} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {:.0}% |\n",
            tasks.len(),
            rows.len(),
            rows.len() - ok.len(),
            n(1),
            n(0),
            n(-1),
            crate::harness::metrics::percent((!ok.is_empty()).then(|| wins.len() as f64 / ok.len() as f64)),
            avg(&|r| f64::from(r.user_turns)),
            avg(&|r| f64::from(r.assistant_turns)),
            avg(&|r| f64::from(r.tool_calls)),
            avg(&|r| f64::from(r.gold_actions)),
            reasoning,
            if wins.is_empty() { 0.0 } else { 100.0 * tools_first as f64 / wins.len() as f64 },
        ));
    }
    Ok(out)
}

/// The Avg@k / Pass^k table, with 95% intervals, recomputed from the `eval` stage's
/// episodes: `resamples` bootstrap resamples per domain, drawn from the run seed recorded
/// in each domain's Parquet, so the table matches the stage's own `report.md`.
pub fn eval_table(
    paths: &Paths,
    domains: &[&str],
    resamples: usize,
) -> Result<Option<String>, ArtifactError> {
    let mut reports = Vec::new();
    for &d in domains {
        let path = stage_dir(&paths.output, "eval", d).join("part-00000.parquet");
        if !path.exists() {
            continue;
        }
        let (rows, prov) = artifact::read_records::<crate::artifact::RolloutRecord>(&path)?;
        let k = rows.iter().map(|r| r.trial + 1).max().unwrap_or(0).max(0) as u32;
        let bootstrap = crate::harness::metrics::Bootstrap {
            resamples,
            seed: prov.seed,
        };
        reports.push(crate::harness::metrics::report(d, &rows, k, &bootstrap));
    }
    Ok((!reports.is_empty()).then(|| crate::harness::metrics::report_table(&reports)))
}

/// The emotion mix of the verified tasks per domain: families, the most frequent emotions,
/// and each behavioural dimension.
pub fn emotion_table(paths: &Paths, domains: &[&str]) -> Result<String, ArtifactError> {
    let mut out = String::from(
        "| domain | tasks | families | top emotions | politeness | urgency | trust |\n|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let Some(rows) = read_opt::<TaskRecord>(paths, "tasks", d, "part-00000.parquet")? else {
            continue;
        };
        let mix = |f: &dyn Fn(&TaskRecord) -> Option<&String>, top: usize| {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &rows {
                *counts
                    .entry(f(r).map(String::as_str).unwrap_or("none"))
                    .or_default() += 1;
            }
            let mut v: Vec<(&str, usize)> = counts.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            v.iter()
                .take(top)
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| {d} | {} | {} | {} | {} | {} | {} |\n",
            rows.len(),
            mix(&|r| r.emotion_family.as_ref(), 5),
            mix(&|r| r.emotion.as_ref(), 5),
            mix(&|r| r.politeness.as_ref(), 3),
            mix(&|r| r.urgency.as_ref(), 3),
            mix(&|r| r.trust.as_ref(), 3),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
