//! Metrics tests: the Pass^k estimator, the error accounting, the report's intervals and
//! the paired comparison's verdicts.

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
