//! Scores of a batch of episodes: the error accounting (an infrastructure failure is not
//! the agent's fault and is left out; an agent's malformed output is a failure), the
//! reward mix, and the evaluation report — Avg@k (successes over all scored trials) and
//! Pass^1..k (the unbiased estimator C(c, j) / C(n, j) per task, averaged over tasks),
//! each with a 95% interval, and the paired comparison of two evaluations.
//!
//! Intervals are percentile bootstraps over tasks: a resample draws as many tasks as there
//! are, with replacement (within each domain, for a figure over several domains), and
//! recomputes the figure with the same estimator as the point estimate; the interval is
//! the 2.5th to 97.5th percentile of the resampled figures. The draws come from a ChaCha
//! stream derived from the run seed and the domain, so the same episodes always give the
//! same interval.
//!
//! The comparison pairs tasks by id: the 95% interval of the difference is a paired
//! bootstrap (a resample draws paired tasks, so both sides see the same tasks), and the
//! p-value a two-sided sign-flip permutation test (each task's A and B outcomes swapped
//! with probability 1/2). A difference is called only when the interval excludes 0 and
//! p < 0.05; otherwise it is within noise.
//!
//! The error accounting, the estimators and the bootstrap are here; the evaluation report
//! and its table are `report.rs`, the paired comparison `paired.rs`.
//!
//! Architecture invariant: pure functions of rollout records; no I/O, no clock, no
//! thread-local randomness.

mod paired;
mod report;

use crate::artifact::RolloutRecord;
use crate::seed::derive_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

pub use paired::{ALPHA, Difference, PairedTask, Verdict, comparison_seed, paired_difference};
pub use report::{
    EvalReport, estimator_note, percent, percent_with_interval, report, report_table,
};

/// Bootstrap (and permutation) resamples unless a config or flag says otherwise.
pub const DEFAULT_RESAMPLES: usize = 1_000;

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

/// The warning for infrastructure failures `check_errored` tolerated (under
/// `max_errored_share`): the output keeps them as errored rows, so a plain rerun finds the
/// stage fresh and does not retry them. `None` when there are none.
pub fn tolerated_errors(rows: &[RolloutRecord], max_share: f64) -> Option<String> {
    let errored = rows.iter().filter(|r| is_infrastructure_failure(r)).count();
    (errored > 0).then(|| {
        format!(
            "{errored} of {} episodes errored on infrastructure and were tolerated (max_errored_share = {max_share}): kept as errored rows, left out of scores and training data, and not retried by a plain rerun",
            rows.len()
        )
    })
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

/// A 95% interval around a figure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }
}

/// How intervals are drawn: the number of resamples, and the seed of their stream (the
/// run seed the episodes were made with).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
}

impl Bootstrap {
    /// The stream of one figure's resamples, apart from every other figure's.
    fn rng(&self, labels: &[&str]) -> ChaCha8Rng {
        let mut parts = vec!["eval-ci"];
        parts.extend_from_slice(labels);
        derive_rng(self.seed, &parts)
    }
}

/// One task's scored episodes: how many, and how many succeeded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskOutcome {
    pub task_id: String,
    pub trials: u64,
    pub successes: u64,
}

/// A scored episode succeeded: reward 1 and no agent error.
fn is_success(r: &RolloutRecord) -> bool {
    r.reward == 1 && r.error.is_none()
}

/// The tasks with at least one scored episode, in task-id order.
pub fn task_outcomes(rows: &[RolloutRecord]) -> Vec<TaskOutcome> {
    let mut per_task: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for r in rows.iter().filter(|r| !is_infrastructure_failure(r)) {
        let e = per_task.entry(r.task_id.as_str()).or_default();
        e.0 += 1;
        e.1 += u64::from(is_success(r));
    }
    per_task
        .into_iter()
        .map(|(id, (trials, successes))| TaskOutcome {
            task_id: id.to_string(),
            trials,
            successes,
        })
        .collect()
}

/// A figure of a set of tasks; the one definition behind the reports, their intervals and
/// the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Successes over scored episodes, pooled over the tasks.
    AvgAtK,
    /// Pass^j: the unbiased C(c, j) / C(n, j) of each task with at least j scored trials,
    /// averaged over those tasks.
    PassHat(u64),
}

impl Score {
    /// The figures of a report of k trials: Avg@k, then Pass^1..k.
    pub fn all(k: u32) -> Vec<Score> {
        std::iter::once(Score::AvgAtK)
            .chain((1..=u64::from(k)).map(Score::PassHat))
            .collect()
    }

    /// The figure's column name in a report of k trials.
    pub fn label(self, k: u32) -> String {
        match self {
            Score::AvgAtK => format!("Avg@{k}"),
            Score::PassHat(j) => format!("Pass^{j}"),
        }
    }

    /// Whether a task counts toward the figure (Pass^j needs j scored trials).
    pub fn counts(self, t: &TaskOutcome) -> bool {
        match self {
            Score::AvgAtK => t.trials > 0,
            Score::PassHat(j) => t.trials >= j,
        }
    }

    /// The figure over these tasks (`None` when no task counts).
    pub fn of<'a>(self, tasks: impl IntoIterator<Item = &'a TaskOutcome>) -> Option<f64> {
        let counted = tasks.into_iter().filter(|t| self.counts(t));
        match self {
            Score::AvgAtK => {
                let (n, c) =
                    counted.fold((0u64, 0u64), |(n, c), t| (n + t.trials, c + t.successes));
                (n > 0).then(|| c as f64 / n as f64)
            }
            Score::PassHat(j) => {
                let (sum, m) = counted.fold((0.0, 0usize), |(sum, m), t| {
                    (sum + pass_hat_k(t.trials, t.successes, j), m + 1)
                });
                (m > 0).then(|| sum / m as f64)
            }
        }
    }
}

/// Figures of several domains as one: each domain weighted by its number of tasks, over
/// the domains that have the figure; a single domain's figure passes through unchanged.
pub fn combine(parts: &[(Option<f64>, usize)]) -> Option<f64> {
    let present: Vec<(f64, usize)> = parts
        .iter()
        .filter_map(|(v, n)| v.map(|v| (v, *n)))
        .collect();
    match present.as_slice() {
        [] => None,
        [(v, _)] => Some(*v),
        _ => {
            let n: usize = present.iter().map(|(_, n)| n).sum();
            let sum: f64 = present.iter().map(|(v, n)| v * *n as f64).sum();
            (n > 0).then(|| sum / n as f64)
        }
    }
}

/// The 2.5th and 97.5th percentiles of some draws (linear interpolation between order
/// statistics); `None` without draws.
fn percentile_95(mut draws: Vec<f64>) -> Option<Interval> {
    if draws.is_empty() {
        return None;
    }
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let h = q * (draws.len() - 1) as f64;
        let i = h.floor() as usize;
        let (a, b) = (draws[i], draws[(i + 1).min(draws.len() - 1)]);
        a + (b - a) * (h - i as f64)
    };
    Some(Interval {
        lo: at(0.025),
        hi: at(0.975),
    })
}

/// Percentile-bootstrap intervals of `figures` figures: each resample draws, within every
/// stratum, as many indices as the stratum has items, with replacement, and `eval`
/// computes every figure on those drawn indices (the figures share the draws). A resample
/// where a figure is undefined is left out of that figure's percentiles.
fn bootstrap_intervals(
    sizes: &[usize],
    resamples: usize,
    rng: &mut ChaCha8Rng,
    figures: usize,
    eval: impl Fn(&[Vec<usize>]) -> Vec<Option<f64>>,
) -> Vec<Option<Interval>> {
    let mut draws: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); figures];
    for _ in 0..resamples {
        let drawn: Vec<Vec<usize>> = sizes
            .iter()
            .map(|&n| (0..n).map(|_| rng.random_range(0..n)).collect())
            .collect();
        for (d, v) in draws.iter_mut().zip(eval(&drawn)) {
            d.extend(v);
        }
    }
    draws.into_iter().map(percentile_95).collect()
}

#[cfg(test)]
mod tests;
