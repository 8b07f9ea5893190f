//! Agreement between reviewers over the doubly reviewed tasks: raw agreement and Cohen's
//! kappa on accept / reject (an edit counts as an accept).
//!
//! A task counts when two reviewers hold a standing decision of their own on its current
//! content (resolutions left out: a resolver saw the disagreement). With more than two,
//! the first two to decide it are the pair, so every task gives one pair of ratings, rater
//! one being whoever decided first.

use super::{Decision, Reviews};
use serde::{Deserialize, Serialize};

/// The 2x2 table of the pairs: rater one's label first (accept or reject).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Agreement {
    pub accept_accept: usize,
    pub accept_reject: usize,
    pub reject_accept: usize,
    pub reject_reject: usize,
}

impl Agreement {
    pub fn from_pairs(pairs: &[(bool, bool)]) -> Agreement {
        let mut a = Agreement::default();
        for p in pairs {
            match p {
                (true, true) => a.accept_accept += 1,
                (true, false) => a.accept_reject += 1,
                (false, true) => a.reject_accept += 1,
                (false, false) => a.reject_reject += 1,
            }
        }
        a
    }

    /// Tasks two reviewers decided.
    pub fn tasks(&self) -> usize {
        self.accept_accept + self.accept_reject + self.reject_accept + self.reject_reject
    }

    /// Of those, the ones both accepted or both rejected.
    pub fn agreed(&self) -> usize {
        self.accept_accept + self.reject_reject
    }

    /// Raw agreement, the share of pairs that agree.
    pub fn raw(&self) -> Option<f64> {
        (self.tasks() > 0).then(|| self.agreed() as f64 / self.tasks() as f64)
    }

    /// Cohen's kappa on accept / reject; `None` with no pair, or when chance agreement is
    /// total (both raters gave one and the same label only).
    pub fn kappa(&self) -> Option<f64> {
        let mut pairs = Vec::with_capacity(self.tasks());
        for (n, p) in [
            (self.accept_accept, (true, true)),
            (self.accept_reject, (true, false)),
            (self.reject_accept, (false, true)),
            (self.reject_reject, (false, false)),
        ] {
            pairs.extend(std::iter::repeat_n(p, n));
        }
        cohen_kappa(&pairs)
    }

    /// Two tables pooled (several domains): kappa is recomputed from the pooled table.
    pub fn add(&mut self, other: &Agreement) {
        self.accept_accept += other.accept_accept;
        self.accept_reject += other.accept_reject;
        self.reject_accept += other.reject_accept;
        self.reject_reject += other.reject_reject;
    }
}

/// Cohen's kappa of two raters' yes / no labels, one pair per item: (p_o - p_e) / (1 - p_e)
/// with p_e from each rater's own share of yes.
pub fn cohen_kappa(pairs: &[(bool, bool)]) -> Option<f64> {
    if pairs.is_empty() {
        return None;
    }
    let n = pairs.len() as f64;
    let observed = pairs.iter().filter(|(a, b)| a == b).count() as f64 / n;
    let yes_a = pairs.iter().filter(|(a, _)| *a).count() as f64 / n;
    let yes_b = pairs.iter().filter(|(_, b)| *b).count() as f64 / n;
    let chance = yes_a * yes_b + (1.0 - yes_a) * (1.0 - yes_b);
    if (1.0 - chance).abs() < 1e-12 {
        return None;
    }
    Some((observed - chance) / (1.0 - chance))
}

/// The accept (true) / reject (false) pairs of the doubly reviewed tasks among `tasks`
/// (task id, current content hash).
pub fn pairs<'a>(
    reviews: &Reviews,
    tasks: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(bool, bool)> {
    tasks
        .into_iter()
        .filter_map(|(id, hash)| {
            let own = reviews.independent(id, hash);
            let accepts = |d: Decision| d != Decision::Reject;
            match own.as_slice() {
                [a, b, ..] => Some((accepts(a.decision), accepts(b.decision))),
                _ => None,
            }
        })
        .collect()
}

/// Agreement over the doubly reviewed tasks among `tasks` (task id, current content hash).
pub fn agreement<'a>(
    reviews: &Reviews,
    tasks: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Agreement {
    Agreement::from_pairs(&pairs(reviews, tasks))
}
