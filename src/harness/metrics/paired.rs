//! The paired comparison of two evaluations: a figure's difference over the tasks both
//! scored, its paired-bootstrap interval, its sign-flip permutation p-value and the
//! verdict ([`paired_difference`]).

use super::{Bootstrap, Interval, Score, TaskOutcome, bootstrap_intervals, combine};
use rand::RngExt;

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
