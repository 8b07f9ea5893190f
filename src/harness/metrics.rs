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
//! Architecture invariant: pure functions of rollout records; no I/O, no clock, no
//! thread-local randomness.

use crate::artifact::RolloutRecord;
use crate::seed::derive_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;

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

/// Significance level of a comparison's verdict.
pub const ALPHA: f64 = 0.05;

/// One task id's outcomes in two evaluations, A and B.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairedTask {
    pub a: TaskOutcome,
    pub b: TaskOutcome,
}

/// What a paired comparison says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    ABetter,
    BBetter,
    WithinNoise,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::ABetter => "A better",
            Verdict::BBetter => "B better",
            Verdict::WithinNoise => "within noise",
        }
    }
}

/// A figure in A and in B over the same tasks, their difference and its noise.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// Paired tasks the figure counts (Pass^j: those with j scored trials on both sides).
    pub tasks: usize,
    pub a: f64,
    pub b: f64,
    /// `a - b`.
    pub diff: f64,
    /// 95% paired-bootstrap interval of `a - b`.
    pub ci: Interval,
    /// Two-sided sign-flip permutation p-value of `a - b`.
    pub p_value: f64,
    /// A or B better only when `ci` excludes 0 and `p_value < ALPHA`.
    pub verdict: Verdict,
}

/// The seed of a comparison's streams from the run seeds of its two sides, the same in
/// either order.
pub fn comparison_seed(a: u64, b: u64) -> u64 {
    let (lo, hi) = (a.min(b), a.max(b));
    crate::seed::derive_seed(lo, &["compare", &hi.to_string()])
}

/// Compare a figure between A and B over paired tasks, grouped in strata (domains; a
/// figure over several is combined as [`combine`] does). Only the pairs the figure counts
/// on both sides take part. The interval resamples pairs within each stratum; the p-value
/// swaps each pair's A and B outcomes with probability 1/2 and counts the resamples whose
/// |difference| reaches the observed one: (1 + that count) / (1 + resamples). `labels`
/// name the figure's streams. `None` when no pair counts.
pub fn paired_difference(
    strata: &[&[PairedTask]],
    score: Score,
    bootstrap: &Bootstrap,
    labels: &[&str],
) -> Option<Difference> {
    let kept: Vec<Vec<&PairedTask>> = strata
        .iter()
        .map(|s| {
            s.iter()
                .filter(|p| score.counts(&p.a) && score.counts(&p.b))
                .collect::<Vec<_>>()
        })
        .filter(|s| !s.is_empty())
        .collect();
    if kept.is_empty() {
        return None;
    }
    // One side's figure over drawn indices; `swapped` says which pairs trade sides.
    let side = |drawn: &[Vec<usize>], swapped: &dyn Fn(usize, usize) -> bool, a: bool| {
        let parts: Vec<(Option<f64>, usize)> = kept
            .iter()
            .zip(drawn)
            .enumerate()
            .map(|(si, (pairs, ix))| {
                let outcomes = ix.iter().map(|&i| {
                    if a != swapped(si, i) {
                        &pairs[i].a
                    } else {
                        &pairs[i].b
                    }
                });
                (score.of(outcomes), ix.len())
            })
            .collect();
        combine(&parts)
    };
    let difference = |drawn: &[Vec<usize>], swapped: &dyn Fn(usize, usize) -> bool| {
        Some(side(drawn, swapped, true)? - side(drawn, swapped, false)?)
    };
    let unswapped = |_: usize, _: usize| false;
    let identity: Vec<Vec<usize>> = kept.iter().map(|s| (0..s.len()).collect()).collect();
    let a = side(&identity, &unswapped, true)?;
    let b = side(&identity, &unswapped, false)?;
    let diff = a - b;
    let resamples = bootstrap.resamples.max(1);

    let mut labelled = labels.to_vec();
    labelled.push("bootstrap");
    let sizes: Vec<usize> = kept.iter().map(Vec::len).collect();
    let ci = bootstrap_intervals(
        &sizes,
        resamples,
        &mut bootstrap.rng(&labelled),
        1,
        |drawn| vec![difference(drawn, &unswapped)],
    )
    .pop()
    .flatten()
    .unwrap_or(Interval { lo: diff, hi: diff });

    labelled.pop();
    labelled.push("permutation");
    let mut rng = bootstrap.rng(&labelled);
    // Float sums of the same values in another order may differ in the last bits.
    let observed = diff.abs() - 1e-12;
    let mut extreme = 0usize;
    for _ in 0..resamples {
        let flips: Vec<Vec<bool>> = kept
            .iter()
            .map(|s| s.iter().map(|_| rng.random_bool(0.5)).collect())
            .collect();
        let swapped = |si: usize, i: usize| flips[si][i];
        if difference(&identity, &swapped).is_some_and(|d| d.abs() >= observed) {
            extreme += 1;
        }
    }
    let p_value = (1 + extreme) as f64 / (1 + resamples) as f64;
    let verdict = if p_value < ALPHA && ci.lo > 0.0 {
        Verdict::ABetter
    } else if p_value < ALPHA && ci.hi < 0.0 {
        Verdict::BBetter
    } else {
        Verdict::WithinNoise
    };
    Some(Difference {
        tasks: sizes.iter().sum(),
        a,
        b,
        diff,
        ci,
        p_value,
        verdict,
    })
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

    const BOOT: Bootstrap = Bootstrap {
        resamples: DEFAULT_RESAMPLES,
        seed: 7,
    };

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
        let r = report("airline", &rows, 2, &BOOT);
        // a: 1 of 2 (the agent's malformed call is a failure); b: 1 of 1 scored.
        assert_eq!((r.tasks, r.episodes), (2, 3));
        assert_eq!((r.agent_errors, r.infrastructure_errors), (1, 1));
        assert!((r.avg_at_k.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.pass_hat[0], Some(0.75));
        assert_eq!(r.pass_hat[1], Some(0.0), "only a has 2 scored trials");
        let table = report_table(std::slice::from_ref(&r));
        // Resampling two tasks: {a, a} 2/4, {a, b} 2/3, {b, b} 2/2 (Avg@2); Pass^2 only
        // ever sees a.
        assert!(
            table.contains(
                "| airline | 2 | 66.7% [50.0%, 100.0%] | 75.0% [50.0%, 100.0%] | 0.0% [0.0%, 0.0%] | 1 | 1 |"
            ),
            "{table}"
        );
        assert!(
            table.contains("C(c, j) / C(n, j)") && table.contains("95% percentile bootstrap"),
            "{table}"
        );
    }

    #[test]
    fn a_report_of_nothing_says_so_in_well_formed_markdown() {
        let none = report("retail", &[], 0, &BOOT);
        let lost = report("airline", &[episode("a", 0, 0, "endpoint_error")], 3, &BOOT);
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

    /// `tasks` tasks of k = 3 trials; task i succeeds in `successes(i)` of them.
    fn trials(tasks: usize, successes: impl Fn(usize) -> usize) -> Vec<RolloutRecord> {
        (0..tasks)
            .flat_map(|i| {
                let c = successes(i);
                (0..3).map(move |t| {
                    let reward = i32::from(t < c);
                    episode(&format!("t{i:03}"), t as i32, reward, "user_stop")
                })
            })
            .collect()
    }

    /// Every figure of a report with its interval.
    fn figures(r: &EvalReport) -> Vec<(f64, Interval)> {
        std::iter::once((r.avg_at_k, r.avg_at_k_ci))
            .chain(
                r.pass_hat
                    .iter()
                    .copied()
                    .zip(r.pass_hat_ci.iter().copied()),
            )
            .map(|(v, ci)| (v.unwrap(), ci.unwrap()))
            .collect()
    }

    #[test]
    fn intervals_contain_the_point_estimate() {
        let r = report("retail", &trials(40, |i| (i * 7) % 4), 3, &BOOT);
        let all = figures(&r);
        assert_eq!(all.len(), 4);
        for (v, ci) in all {
            assert!(ci.contains(v), "{v} outside {ci:?}");
            assert!(ci.width() > 0.0, "{v}: {ci:?} should have a spread");
        }
    }

    #[test]
    fn intervals_shrink_with_more_tasks() {
        let pattern = |i: usize| (i * 7) % 4;
        let few = report("retail", &trials(20, pattern), 3, &BOOT);
        let many = report("retail", &trials(400, pattern), 3, &BOOT);
        for ((_, small), (_, large)) in figures(&few).into_iter().zip(figures(&many)) {
            assert!(
                large.width() < small.width() / 2.0,
                "20 tasks {small:?}, 400 tasks {large:?}"
            );
        }
    }

    #[test]
    fn intervals_are_the_same_on_every_call() {
        let rows = trials(50, |i| (i * 5) % 4);
        let a = report("airline", &rows, 3, &BOOT);
        let b = report("airline", &rows, 3, &BOOT);
        assert_eq!(a, b);
        let other = report("retail", &trials(30, |i| i % 3), 3, &BOOT);
        let (ta, tb) = (
            report_table(&[a.clone(), other.clone()]),
            report_table(&[b, other]),
        );
        assert_eq!(ta, tb);
        let with_interval = ta
            .lines()
            .filter(|l| l.starts_with('|') && l.contains(" ["))
            .count();
        assert_eq!(with_interval, 3, "{ta}");
    }

    #[test]
    fn intervals_are_a_point_when_every_task_scores_the_same() {
        let r = report("bank", &trials(25, |_| 2), 3, &BOOT);
        for (v, ci) in figures(&r) {
            assert_eq!((ci.lo, ci.hi), (v, v));
        }
        assert!((r.avg_at_k.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(r.pass_hat[2], Some(0.0));
    }

    #[test]
    fn the_overall_row_has_an_interval_around_the_weighted_score() {
        let a = report("airline", &trials(30, |i| i % 4), 3, &BOOT);
        let b = report("retail", &trials(10, |_| 3), 3, &BOOT);
        let table = report_table(&[a.clone(), b.clone()]);
        let overall = table
            .lines()
            .find(|l| l.starts_with("| overall | 40 |"))
            .unwrap_or_else(|| panic!("{table}"));
        let weighted = (a.avg_at_k.unwrap() * 30.0 + 10.0) / 40.0;
        let cell = overall.split(" | ").nth(2).unwrap();
        assert!(
            cell.starts_with(&percent(Some(weighted))) && cell.contains(" ["),
            "{cell}"
        );
    }

    fn paired(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<PairedTask> {
        let outcome = |i: usize, (trials, successes): (u64, u64)| TaskOutcome {
            task_id: format!("t{i}"),
            trials,
            successes,
        };
        a.iter()
            .zip(b)
            .enumerate()
            .map(|(i, (&x, &y))| PairedTask {
                a: outcome(i, x),
                b: outcome(i, y),
            })
            .collect()
    }

    #[test]
    fn a_run_compared_with_itself_is_within_noise() {
        let side: Vec<(u64, u64)> = (0..30).map(|i| (3, i % 4)).collect();
        let pairs = paired(&side, &side);
        for score in [Score::AvgAtK, Score::PassHat(3)] {
            let d = paired_difference(&[&pairs], score, &BOOT, &["x"]).unwrap();
            assert_eq!((d.tasks, d.diff, d.ci.lo, d.ci.hi), (30, 0.0, 0.0, 0.0));
            assert_eq!(d.p_value, 1.0);
            assert_eq!(d.verdict, Verdict::WithinNoise);
        }
    }

    #[test]
    fn a_clear_difference_is_called_for_the_better_side() {
        let good: Vec<(u64, u64)> = (0..30).map(|i| (3, 2 + i % 2)).collect();
        let bad: Vec<(u64, u64)> = (0..30).map(|_| (3, 0)).collect();
        let ab = paired_difference(&[&paired(&good, &bad)], Score::AvgAtK, &BOOT, &["x"]).unwrap();
        assert_eq!(ab.verdict, Verdict::ABetter, "{ab:?}");
        assert!(ab.ci.lo > 0.0 && ab.p_value < 0.01, "{ab:?}");
        let ba = paired_difference(&[&paired(&bad, &good)], Score::AvgAtK, &BOOT, &["x"]).unwrap();
        assert_eq!(ba.verdict, Verdict::BBetter, "{ba:?}");
        assert!((ba.diff + ab.diff).abs() < 1e-12);
        assert!((ba.ci.hi + ab.ci.lo).abs() < 1e-9, "{ab:?} {ba:?}");
        assert_eq!(ba.p_value, ab.p_value);
    }

    #[test]
    fn a_small_difference_on_few_tasks_is_within_noise() {
        // B loses one success on one of eight tasks.
        let a: Vec<(u64, u64)> = (0..8).map(|i| (3, i % 4)).collect();
        let mut b = a.clone();
        b[3].1 -= 1;
        let d = paired_difference(&[&paired(&a, &b)], Score::AvgAtK, &BOOT, &["x"]).unwrap();
        assert!(d.diff > 0.0 && d.ci.contains(0.0), "{d:?}");
        assert!(d.p_value >= ALPHA, "{d:?}");
        assert_eq!(d.verdict, Verdict::WithinNoise);
    }

    #[test]
    fn pass_hat_pairs_only_tasks_with_enough_trials_on_both_sides() {
        let a = [(3, 3), (2, 2), (3, 0)];
        let b = [(3, 0), (3, 3), (3, 0)];
        let d = paired_difference(&[&paired(&a, &b)], Score::PassHat(3), &BOOT, &["x"]).unwrap();
        assert_eq!(d.tasks, 2);
        assert!((d.a - 0.5).abs() < 1e-12 && d.b == 0.0, "{d:?}");
        let none = paired_difference(
            &[&paired(&a[1..2], &b[1..2])],
            Score::PassHat(3),
            &BOOT,
            &["x"],
        );
        assert_eq!(none, None);
    }
}
