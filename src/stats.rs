//! `tracer stats`: the funnel per domain and split (traces -> grounded -> refined ->
//! verified) with rejection reasons, read from the stage artifacts, as Markdown.

use crate::artifact::{self, ArtifactError, RejectRecord, TaskRecord, TraceRecord};
use crate::config::Paths;
use crate::pipeline::stage_dir;
use crate::split::Split;
use std::collections::BTreeMap;

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
        "| domain | split | traces | grounded | refined | verified | rejected (stage: reason x n) |\n|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let traces = read_opt::<TraceRecord>(paths, "traces", d, "part-00000.parquet")?;
        let grounded = read_opt::<TaskRecord>(paths, "grounded", d, "part-00000.parquet")?;
        let refined = read_opt::<TaskRecord>(paths, "refined", d, "part-00000.parquet")?;
        let tasks = read_opt::<TaskRecord>(paths, "tasks", d, "part-00000.parquet")?;
        let mut rejects: Vec<RejectRecord> = Vec::new();
        for stage in ["grounded", "refined", "tasks"] {
            if let Some(r) = read_opt::<RejectRecord>(paths, stage, d, "_rejects.parquet")? {
                rejects.extend(r);
            }
        }
        for split in [Split::Train, Split::Eval] {
            let mut reasons: BTreeMap<(String, String), usize> = BTreeMap::new();
            for r in rejects.iter().filter(|r| r.split == split) {
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
            out.push_str(&format!(
                "| {d} | {split} | {} | {} | {} | {} | {} |\n",
                count(&traces, split, |t| t.split),
                count(&grounded, split, |t| t.split),
                count(&refined, split, |t| t.split),
                count(&tasks, split, |t| t.split),
                if reasons.is_empty() {
                    "none".into()
                } else {
                    reasons.join(", ")
                }
            ));
        }
    }
    Ok(out)
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

/// The fault rows of the `analysis` stage for these domains (none where it has not run).
pub fn read_faults(
    paths: &Paths,
    domains: &[&str],
) -> Result<Vec<crate::artifact::FaultRecord>, ArtifactError> {
    let mut rows = Vec::new();
    for &d in domains {
        if let Some(r) = read_opt(paths, "analysis", d, "part-00000.parquet")? {
            rows.extend(r);
        }
    }
    Ok(rows)
}

/// (domain, agent model, source): how the fault tables group episodes.
type Group<'a> = (&'a str, &'a str, &'a str);

fn group(r: &crate::artifact::FaultRecord) -> Group<'_> {
    (&r.domain, &r.agent_model, &r.source)
}

/// The analysed episodes of each group, by episode key.
fn episodes_by_group(
    rows: &[crate::artifact::FaultRecord],
) -> BTreeMap<Group<'_>, BTreeMap<(&str, i32), Vec<&crate::artifact::FaultRecord>>> {
    let mut out: BTreeMap<Group, BTreeMap<(&str, i32), Vec<&crate::artifact::FaultRecord>>> =
        BTreeMap::new();
    for r in rows {
        out.entry(group(r))
            .or_default()
            .entry((r.task_id.as_str(), r.trial))
            .or_default()
            .push(r);
    }
    out
}

/// The paper's error analysis per domain, agent model and source: for each fault, the
/// episodes it was found in and their share of the analysed episodes, and who decided it
/// (detectors, or `judge:<model>` for model labels).
pub fn fault_table(rows: &[crate::artifact::FaultRecord]) -> String {
    use crate::analysis::Fault;
    let mut out = String::from(
        "| domain | agent | source | analysed | fault | category | episodes | share | decided by |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for ((domain, agent, source), episodes) in episodes_by_group(rows) {
        let analysed = episodes.len();
        for fault in Fault::ALL {
            let hit: Vec<&Vec<&crate::artifact::FaultRecord>> = episodes
                .values()
                .filter(|rs| rs.iter().any(|r| r.fault == fault.as_str()))
                .collect();
            if hit.is_empty() {
                continue;
            }
            let mut deciders: BTreeMap<&str, usize> = BTreeMap::new();
            for rs in &hit {
                for r in rs.iter().filter(|r| r.fault == fault.as_str()) {
                    *deciders.entry(r.detector.as_str()).or_default() += 1;
                }
            }
            let deciders: Vec<String> = deciders.iter().map(|(d, n)| format!("{d} {n}")).collect();
            out.push_str(&format!(
                "| {domain} | {agent} | {source} | {analysed} | {} | {} | {} | {:.1}% | {} |\n",
                fault.as_str(),
                fault.category(),
                hit.len(),
                100.0 * hit.len() as f64 / analysed as f64,
                deciders.join(", ")
            ));
        }
    }
    out
}

/// Where episodes first left the reference path: per group, the episodes with an action
/// fault, and the position of the earliest one — the tool call it happened at (1, 2, 3, 4,
/// 5 or later), or "at the end" for faults after the last call (an early stop) — and the
/// median message index of that first diverging step.
pub fn divergence_table(rows: &[crate::artifact::FaultRecord]) -> String {
    use crate::analysis::Fault;
    let mut out = String::from(
        "| domain | agent | source | diverged | call 1 | call 2 | call 3 | call 4 | call 5+ | at the end | median step |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for ((domain, agent, source), episodes) in episodes_by_group(rows) {
        let mut buckets = [0usize; 6];
        let mut steps = Vec::new();
        for rs in episodes.values() {
            let first = rs
                .iter()
                .filter(|r| Fault::parse(&r.fault).is_some_and(Fault::diverges) && r.step.is_some())
                .min_by_key(|r| r.step);
            let Some(first) = first else { continue };
            let b = match first.call {
                Some(c) if c >= 1 => (c as usize).min(5) - 1,
                _ => 5,
            };
            buckets[b] += 1;
            steps.push(first.step.unwrap_or(0));
        }
        if steps.is_empty() {
            continue;
        }
        steps.sort_unstable();
        let median = steps[steps.len() / 2];
        let cells: Vec<String> = buckets.iter().map(|n| n.to_string()).collect();
        out.push_str(&format!(
            "| {domain} | {agent} | {source} | {} | {} | {median} |\n",
            steps.len(),
            cells.join(" | ")
        ));
    }
    out
}

/// Both fault tables with headings (empty when there are no rows).
pub fn fault_report(rows: &[crate::artifact::FaultRecord]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\n## Faults of failed episodes\n\n{}\n## First diverging step\n\n{}",
        fault_table(rows),
        divergence_table(rows)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_funnel_counts_policy_rejections_per_named_rule() {
        let dir = std::env::temp_dir().join(format!("tracer-stats-{}", std::process::id()));
        let paths = Paths {
            root: dir.clone(),
            output: dir.join("output"),
            overrides: None,
        };
        let reject = |rule: Option<&str>, kind: &str| RejectRecord {
            domain: "airline".into(),
            split: crate::split::Split::Train,
            trace_id: "t".into(),
            task_id: Some("t".into()),
            stage: "tasks".into(),
            reason_kind: kind.into(),
            rule: rule.map(str::to_string),
            reason: "why".into(),
        };
        let rows = vec![
            reject(Some("basic_economy_no_change"), "policy"),
            reject(Some("basic_economy_no_change"), "policy"),
            reject(Some("cancellation_window"), "policy"),
            reject(None, "information"),
        ];
        let out = stage_dir(&paths.output, "tasks", "airline");
        std::fs::create_dir_all(&out).unwrap();
        let prov = artifact::Provenance {
            version: "test".into(),
            stage: "tasks".into(),
            domain: "airline".into(),
            config_hash: String::new(),
            seed: 0,
            inputs: Default::default(),
        };
        artifact::write_records(&out.join("_rejects.parquet"), &rows, &prov).unwrap();
        let table = funnel(&paths, &["airline"]).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            table.contains(
                "tasks: information x 1, tasks: policy/basic_economy_no_change x 2, tasks: policy/cancellation_window x 1"
            ),
            "{table}"
        );
    }
}
