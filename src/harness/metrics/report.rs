//! The evaluation report of one domain ([`EvalReport`]: Avg@k and Pass^1..k with their
//! intervals, the error counts) and the Markdown table of several, with an overall row.

use super::{
    Bootstrap, Interval, Score, TaskOutcome, bootstrap_intervals, combine,
    is_infrastructure_failure, task_outcomes,
};
use crate::artifact::RolloutRecord;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

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
    /// 95% interval of `avg_at_k`: percentile bootstrap over tasks.
    pub avg_at_k_ci: Option<Interval>,
    /// 95% intervals of `pass_hat`, the same way.
    pub pass_hat_ci: Vec<Option<Interval>>,
    /// How the intervals were drawn.
    pub bootstrap: Bootstrap,
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
    /// Each scored task's trials and successes: what the figures and intervals are made of.
    pub per_task: Vec<TaskOutcome>,
}

/// Score episodes of one domain. Only infrastructure failures are left out; an agent's
/// malformed output is a failed episode like any other. The intervals draw from the
/// stream of (`bootstrap.seed`, domain).
pub fn report(domain: &str, rows: &[RolloutRecord], k: u32, bootstrap: &Bootstrap) -> EvalReport {
    let per_task = task_outcomes(rows);
    let scores = Score::all(k);
    let points: Vec<Option<f64>> = scores.iter().map(|s| s.of(&per_task)).collect();
    let intervals = bootstrap_intervals(
        &[per_task.len()],
        bootstrap.resamples,
        &mut bootstrap.rng(&[domain]),
        scores.len(),
        |drawn| {
            scores
                .iter()
                .map(|s| s.of(drawn[0].iter().map(|&i| &per_task[i])))
                .collect()
        },
    );
    let scored: Vec<&RolloutRecord> = rows
        .iter()
        .filter(|r| !is_infrastructure_failure(r))
        .collect();
    EvalReport {
        domain: domain.to_string(),
        tasks: per_task.len(),
        trials: k,
        avg_at_k: points[0],
        pass_hat: points[1..].to_vec(),
        avg_at_k_ci: intervals[0],
        pass_hat_ci: intervals[1..].to_vec(),
        bootstrap: *bootstrap,
        episodes: scored.len(),
        agent_errors: scored.iter().filter(|r| r.error.is_some()).count(),
        infrastructure_errors: rows.len() - scored.len(),
        broken_gold: Vec::new(),
        broken_gold_scored: false,
        per_task,
    }
}

/// A score as a percentage, `n/a` when nothing was scored.
pub fn percent(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{:.1}%", x * 100.0))
}

/// A score with its interval, `62.0% [55.0%, 69.0%]`; the score alone without one.
pub fn percent_with_interval(v: Option<f64>, ci: Option<Interval>) -> String {
    match (v, ci) {
        (Some(_), Some(ci)) => format!(
            "{} [{}, {}]",
            percent(v),
            percent(Some(ci.lo)),
            percent(Some(ci.hi))
        ),
        _ => percent(v),
    }
}

/// What the figures of [`report_table`] are and how their intervals were drawn.
pub fn estimator_note(k: u32, resamples: usize) -> String {
    format!(
        "Avg@{k}: successes over scored episodes. Pass^j: the unbiased estimator C(c, j) / C(n, j) of each task (n scored trials, c successes), averaged over the tasks with at least j scored trials. Overall: domains weighted by their tasks. [lo, hi]: 95% percentile bootstrap interval over tasks ({resamples} resamples of the tasks, drawn within each domain for the overall row, seeded from the run seed).\n"
    )
}

/// The stream and resample count of the overall row: the first report's resamples, a
/// stream derived from every domain and its seed.
fn overall_bootstrap(reports: &[EvalReport]) -> (usize, ChaCha8Rng) {
    let mut labels = vec!["overall".to_string()];
    for r in reports {
        labels.push(r.domain.clone());
        labels.push(r.bootstrap.seed.to_string());
    }
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let first = reports[0].bootstrap;
    (first.resamples, first.rng(&labels))
}

/// Markdown table of reports (per domain, then overall weighted by tasks), each figure
/// with its 95% interval, the note stating the estimators, then a note per domain with
/// broken-gold tasks.
pub fn report_table(reports: &[EvalReport]) -> String {
    let k = reports.iter().map(|r| r.trials).max().unwrap_or(0);
    let scores = Score::all(k);
    let mut header = vec!["domain".to_string(), "tasks".into()];
    header.extend(scores.iter().map(|s| s.label(k)));
    header.extend(["agent errors".into(), "infra errors (not scored)".into()]);
    let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let mut out = line(&header);
    out.push_str(&line(&vec!["---".to_string(); header.len()]));
    let row = |name: &str,
               tasks: usize,
               figures: &[(Option<f64>, Option<Interval>)],
               agent: usize,
               infra: usize| {
        let mut cells = vec![name.to_string(), tasks.to_string()];
        cells.extend((0..scores.len()).map(|i| {
            figures
                .get(i)
                .map_or_else(|| percent(None), |&(v, ci)| percent_with_interval(v, ci))
        }));
        cells.extend([agent.to_string(), infra.to_string()]);
        line(&cells)
    };
    for r in reports {
        let figures: Vec<(Option<f64>, Option<Interval>)> =
            std::iter::once((r.avg_at_k, r.avg_at_k_ci))
                .chain(
                    r.pass_hat
                        .iter()
                        .zip(&r.pass_hat_ci)
                        .map(|(v, ci)| (*v, *ci)),
                )
                .collect();
        out.push_str(&row(
            &r.domain,
            r.tasks,
            &figures,
            r.agent_errors,
            r.infrastructure_errors,
        ));
    }
    if reports.len() > 1 {
        // Domains weighted by tasks, over the domains that have the figure; the interval
        // resamples tasks within each domain and combines the same way.
        let strata: Vec<&[TaskOutcome]> = reports.iter().map(|r| r.per_task.as_slice()).collect();
        let overall = |drawn: &[Vec<usize>]| -> Vec<Option<f64>> {
            scores
                .iter()
                .map(|s| {
                    let parts: Vec<(Option<f64>, usize)> = strata
                        .iter()
                        .zip(drawn)
                        .map(|(tasks, ix)| (s.of(ix.iter().map(|&i| &tasks[i])), ix.len()))
                        .collect();
                    combine(&parts)
                })
                .collect()
        };
        let identity: Vec<Vec<usize>> = strata.iter().map(|s| (0..s.len()).collect()).collect();
        let (resamples, mut rng) = overall_bootstrap(reports);
        let sizes: Vec<usize> = strata.iter().map(|s| s.len()).collect();
        let intervals = bootstrap_intervals(&sizes, resamples, &mut rng, scores.len(), overall);
        let figures: Vec<(Option<f64>, Option<Interval>)> =
            overall(&identity).into_iter().zip(intervals).collect();
        out.push_str(&row(
            "overall",
            reports.iter().map(|r| r.tasks).sum(),
            &figures,
            reports.iter().map(|r| r.agent_errors).sum(),
            reports.iter().map(|r| r.infrastructure_errors).sum(),
        ));
    }
    if let Some(first) = reports.first() {
        out.push('\n');
        out.push_str(&estimator_note(k, first.bootstrap.resamples));
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
