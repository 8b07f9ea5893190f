//! Scores of a batch of episodes: the error accounting (an infrastructure failure is not
//! the agent's fault and is left out; an agent's malformed output is a failure), the
//! reward mix, and the evaluation report — Avg@k (mean success over all scored trials)
//! and Pass^1..k (the unbiased estimator C(c, j) / C(n, j) per task, averaged over tasks).
//!
//! Architecture invariant: pure functions of rollout records; no I/O.

use crate::artifact::RolloutRecord;
use serde::Serialize;
use std::collections::BTreeMap;

/// Whether an episode ended on an infrastructure failure (excluded from scores, retried);
/// an agent's own malformed output is not one.
pub fn is_infrastructure_failure(r: &RolloutRecord) -> bool {
    r.termination == super::Termination::EndpointError.as_str()
}

/// The errored share check: `Err` with a one-line account when infrastructure failures
/// exceed `max_share` of the episodes, naming how many and the first cause.
pub fn check_errored(rows: &[RolloutRecord], max_share: f64) -> Result<(), String> {
    let errored: Vec<&RolloutRecord> = rows
        .iter()
        .filter(|r| is_infrastructure_failure(r))
        .collect();
    if errored.is_empty() || errored.len() as f64 <= max_share * rows.len() as f64 {
        return Ok(());
    }
    let cause = errored[0].error.as_deref().unwrap_or("unknown cause");
    Err(format!(
        "{} of {} episodes errored on infrastructure (first: {cause}); the {} finished ones are kept, rerun to retry the errored ones (max_errored_share = {max_share})",
        errored.len(),
        rows.len(),
        rows.len() - errored.len()
    ))
}

/// The reward mix of some rollouts, for summaries: rewards of the scored episodes (agent
/// errors among them, as failures), then the infrastructure failures left out.
pub fn reward_mix(rows: &[RolloutRecord]) -> String {
    let scored = || rows.iter().filter(|x| !is_infrastructure_failure(x));
    let n = |r: i32| scored().filter(|x| x.reward == r).count();
    let agent_errors = scored().filter(|x| x.error.is_some()).count();
    let infra = rows.len() - scored().count();
    format!(
        "R=1 {} / R=0 {} / R=-1 {} / agent errors {agent_errors} / infrastructure errors {infra}",
        n(1),
        n(0),
        n(-1),
    )
}

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
    /// Tasks with at least one scored episode.
    pub tasks: usize,
    pub trials: u32,
    /// Mean success rate over all scored episodes (`None`: nothing was scored).
    pub avg_at_k: Option<f64>,
    /// Pass^1 .. Pass^k (`None` where no task has that many scored trials).
    pub pass_hat: Vec<Option<f64>>,
    /// Scored episodes: every episode but the infrastructure failures.
    pub episodes: usize,
    /// Episodes that ended on the agent's own malformed output; scored as failures.
    pub agent_errors: usize,
    /// Episodes lost to infrastructure failures (endpoint unreachable, 5xx or 429 after
    /// retries, timeouts): not scored, neither successes nor failures.
    pub infrastructure_errors: usize,
    /// Tasks whose gold actions fail and leave the database unchanged, so an agent that
    /// does nothing would pass (only task files from outside the pipeline have them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken_gold: Vec<String>,
    /// Whether the broken-gold tasks were rolled out and scored anyway.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub broken_gold_scored: bool,
}

/// Score episodes of one domain. Only infrastructure failures are left out; an agent's
/// malformed output is a failed episode like any other.
pub fn report(domain: &str, rows: &[RolloutRecord], k: u32) -> EvalReport {
    let mut per_task: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let scored: Vec<&RolloutRecord> = rows
        .iter()
        .filter(|r| !is_infrastructure_failure(r))
        .collect();
    for r in &scored {
        let e = per_task.entry(r.task_id.as_str()).or_default();
        e.0 += 1;
        e.1 += u64::from(r.reward == 1 && r.error.is_none());
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
            (!scored.is_empty()).then(|| scored.iter().sum::<f64>() / scored.len() as f64)
        })
        .collect();
    EvalReport {
        domain: domain.to_string(),
        tasks: per_task.len(),
        trials: k,
        avg_at_k: (trials > 0).then(|| wins as f64 / trials as f64),
        pass_hat,
        episodes: scored.len(),
        agent_errors: scored.iter().filter(|r| r.error.is_some()).count(),
        infrastructure_errors: rows.len() - scored.len(),
        broken_gold: Vec::new(),
        broken_gold_scored: false,
    }
}

/// A score as a percentage, `n/a` when nothing was scored.
pub fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{:.1}%", x * 100.0))
}

/// Markdown table of reports (per domain, then overall weighted by tasks), followed by a
/// note per domain with broken-gold tasks.
pub fn report_table(reports: &[EvalReport]) -> String {
    let k = reports.iter().map(|r| r.trials).max().unwrap_or(0) as usize;
    let mut header = vec!["domain".to_string(), "tasks".into(), format!("Avg@{k}")];
    header.extend((1..=k).map(|j| format!("Pass^{j}")));
    header.extend(["agent errors".into(), "infra errors (not scored)".into()]);
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut out = line(&header);
    out.push_str(&line(&vec!["---".to_string(); header.len()]));
    let row = |name: &str,
               tasks: usize,
               avg: Option<f64>,
               pass: &[Option<f64>],
               agent: usize,
               infra: usize| {
        let mut cells = vec![name.to_string(), tasks.to_string(), percent(avg)];
        cells.extend((0..k).map(|j| percent(pass.get(j).copied().flatten())));
        cells.extend([agent.to_string(), infra.to_string()]);
        line(&cells)
    };
    for r in reports {
        out.push_str(&row(
            &r.domain,
            r.tasks,
            r.avg_at_k,
            &r.pass_hat,
            r.agent_errors,
            r.infrastructure_errors,
        ));
    }
    if reports.len() > 1 {
        // Weighted by tasks, over the domains that have the score at all.
        let weighted = |f: &dyn Fn(&EvalReport) -> Option<f64>| {
            let (sum, n) = reports
                .iter()
                .fold((0.0, 0usize), |(sum, n), r| match f(r) {
                    Some(v) => (sum + v * r.tasks as f64, n + r.tasks),
                    None => (sum, n),
                });
            (n > 0).then(|| sum / n as f64)
        };
        let pass: Vec<Option<f64>> = (0..k)
            .map(|j| weighted(&|r| r.pass_hat.get(j).copied().flatten()))
            .collect();
        out.push_str(&row(
            "overall",
            reports.iter().map(|r| r.tasks).sum(),
            weighted(&|r| r.avg_at_k),
            &pass,
            reports.iter().map(|r| r.agent_errors).sum(),
            reports.iter().map(|r| r.infrastructure_errors).sum(),
        ));
    }
    for r in reports.iter().filter(|r| !r.broken_gold.is_empty()) {
        out.push_str(&format!(
            "\n{}: {} task(s) whose gold actions fail and change nothing (doing nothing would pass), {}: {}\n",
            r.domain,
            r.broken_gold.len(),
            if r.broken_gold_scored {
                "scored anyway (--include-broken-gold)"
            } else {
                "not scored"
            },
            r.broken_gold.join(", ")
        ));
    }
    out
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

    fn episode(task: &str, trial: i32, reward: i32, termination: &str) -> RolloutRecord {
        let errored = termination.ends_with("_error");
        RolloutRecord {
            task_id: task.into(),
            trial,
            reward,
            termination: termination.into(),
            error: errored.then(|| format!("{termination}: boom")),
            ..Default::default()
        }
    }

    #[test]
    fn only_infrastructure_failures_are_left_out_of_the_scores() {
        let rows = [
            episode("a", 0, 1, "user_stop"),
            episode("a", 1, 0, "agent_error"),
            episode("b", 0, 0, "endpoint_error"),
            episode("b", 1, 1, "user_stop"),
        ];
        let r = report("airline", &rows, 2);
        // a: 1 of 2 (the agent's malformed call is a failure); b: 1 of 1 scored.
        assert_eq!((r.tasks, r.episodes), (2, 3));
        assert_eq!((r.agent_errors, r.infrastructure_errors), (1, 1));
        assert!((r.avg_at_k.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.pass_hat[0], Some(0.75));
        assert_eq!(r.pass_hat[1], Some(0.0), "only a has 2 scored trials");
        let table = report_table(std::slice::from_ref(&r));
        assert!(
            table.contains("| airline | 2 | 66.7% | 75.0% | 0.0% | 1 | 1 |"),
            "{table}"
        );
    }

    #[test]
    fn a_report_of_nothing_says_so_in_well_formed_markdown() {
        let none = report("retail", &[], 0);
        let lost = report("airline", &[episode("a", 0, 0, "endpoint_error")], 3);
        assert_eq!((none.avg_at_k, lost.avg_at_k), (None, None));
        for table in [
            report_table(std::slice::from_ref(&none)),
            report_table(&[none.clone(), lost.clone()]),
        ] {
            let widths: Vec<usize> = table
                .lines()
                .take_while(|l| l.starts_with('|'))
                .map(|l| l.matches('|').count())
                .collect();
            assert!(widths.len() >= 3, "{table}");
            assert!(widths.iter().all(|w| *w == widths[0]), "{table}");
            assert!(table.contains("n/a") && !table.contains("0.0%"), "{table}");
        }
    }
}
