//! Seeded draws the domain generators share: one item of a list, uniformly or by weight
//! (one `random_range` each), codes and digit strings (one `random_range` per character),
//! fresh ids and unique emails; and the database sizes per split ([`Scales`]), which are
//! data in the domain's `vocabulary.toml`. Generators that switch to these keep their
//! databases byte for byte: each draws from the RNG in the order the code it replaces did.
//!
//! Architecture invariant: pure functions of the RNG and their inputs.

use crate::domain::Split;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;

/// A domain's database sizes per split, in the domain's own `Scale` shape: the
/// reference's (`eval`, its `db.json`) and the paper's (`train`), as the `[scale.eval]` and
/// `[scale.train]` tables of its `vocabulary.toml` state them.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub struct Scales<S> {
    pub eval: S,
    pub train: S,
}

impl<S: DeserializeOwned + Default + Copy> Scales<S> {
    /// The `[scale]` table of a vocabulary file (other keys ignored); all sizes default
    /// (empty databases, which the generator tests catch) when it does not parse, so this
    /// never panics at run time.
    pub fn read(vocabulary: &str) -> Self {
        #[derive(Deserialize)]
        struct File<S> {
            scale: Scales<S>,
        }
        toml::from_str::<File<S>>(vocabulary).map_or_else(|_| Scales::default(), |f| f.scale)
    }

    /// The sizes of `split`'s database.
    pub fn of(&self, split: Split) -> S {
        match split {
            Split::Eval => self.eval,
            Split::Train => self.train,
        }
    }
}

/// One item of a non-empty `items`, uniformly.
pub fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

/// One of `choices` with probability proportional to its weight (the first when every
/// weight is zero).
pub fn weighted<T: Clone>(rng: &mut ChaCha8Rng, choices: &[(T, u32)]) -> T {
    let total: u32 = choices.iter().map(|(_, w)| w).sum();
    let mut r = rng.random_range(0..total.max(1));
    for (value, w) in choices {
        if r < *w {
            return value.clone();
        }
        r -= w;
    }
    choices[0].0.clone()
}

/// A count for each of `items` things, each drawn by `weights`, then moved by one at a time
/// at seeded positions (never below zero nor above the largest weighted count) until they
/// sum to `total`: how many bookings each customer holds in a database of an exact size.
pub fn counts_summing_to(
    rng: &mut ChaCha8Rng,
    items: usize,
    weights: &[(usize, u32)],
    total: usize,
) -> Vec<usize> {
    let max = weights.iter().map(|(n, _)| *n).max().unwrap_or(1);
    let mut counts: Vec<usize> = (0..items).map(|_| weighted(rng, weights)).collect();
    let mut sum: usize = counts.iter().sum();
    while sum != total && !counts.is_empty() {
        let i = rng.random_range(0..counts.len());
        if sum > total && counts[i] > 0 {
            counts[i] -= 1;
            sum -= 1;
        } else if sum < total && counts[i] < max {
            counts[i] += 1;
            sum += 1;
        }
    }
    counts
}

/// An index drawn by integer weights (`None` when they are all zero, which draws nothing).
pub fn weighted_index(rng: &mut ChaCha8Rng, weights: &[u32]) -> Option<usize> {
    let total: u32 = weights.iter().sum();
    if total == 0 {
        return None;
    }
    let mut x = rng.random_range(0..total);
    weights.iter().position(|w| {
        let hit = x < *w;
        x = x.saturating_sub(*w);
        hit
    })
}

/// Upper-case letters and digits, the reference ids' usual alphabet.
pub const UPPER_ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// `len` characters of `alphabet`, each drawn uniformly.
pub fn code(rng: &mut ChaCha8Rng, alphabet: &[u8], len: usize) -> String {
    (0..len)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect()
}

/// A [`code`] not yet in `used` (drawn again on a clash), recorded there.
pub fn fresh_code(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    alphabet: &[u8],
    len: usize,
) -> String {
    loop {
        let id = code(rng, alphabet, len);
        if used.insert(id.clone()) {
            return id;
        }
    }
}

/// `n` decimal digits.
pub fn digits(rng: &mut ChaCha8Rng, n: usize) -> String {
    (0..n)
        .map(|_| char::from(b'0' + rng.random_range(0..10u8)))
        .collect()
}

/// `pattern` with each `#` replaced by a digit.
pub fn digits_in(rng: &mut ChaCha8Rng, pattern: &str) -> String {
    pattern
        .chars()
        .map(|c| {
            if c == '#' {
                char::from(b'0' + rng.random_range(0..10u8))
            } else {
                c
            }
        })
        .collect()
}

/// `base@domain`, or `base2@domain`, `base3@domain`, ... the first not yet in `emails`
/// (recorded there). Draws nothing.
pub fn unique_email(emails: &mut BTreeSet<String>, base: &str, domain: &str) -> String {
    let mut email = format!("{base}@{domain}");
    let mut n = 2;
    while !emails.insert(email.clone()) {
        email = format!("{base}{n}@{domain}");
        n += 1;
    }
    email
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_are_read_per_split_from_a_vocabulary_and_default_when_broken() {
        #[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
        struct Scale {
            rows: usize,
            span: (usize, usize),
        }
        let text = "names = [\"a\"]\n[scale.eval]\nrows = 3\nspan = [1, 2]\n\
                    [scale.train]\nrows = 30\nspan = [2, 4]\n";
        let scales: Scales<Scale> = Scales::read(text);
        assert_eq!(
            scales.of(Split::Eval),
            Scale {
                rows: 3,
                span: (1, 2)
            }
        );
        assert_eq!(scales.of(Split::Train).rows, 30);
        assert_eq!(
            Scales::<Scale>::read("names = 1").of(Split::Eval),
            Scale::default()
        );
    }
}
