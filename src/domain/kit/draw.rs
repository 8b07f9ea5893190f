//! Seeded draws the domain generators share: one item of a list, uniformly or by weight.
//! Each consumes exactly one `random_range` from the RNG, so generators that switch to
//! these keep their databases byte for byte.
//!
//! Architecture invariant: pure functions of the RNG and their inputs.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

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
