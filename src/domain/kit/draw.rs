//! Seeded draws the domain generators share: one item of a list, uniformly or by weight
//! (one `random_range` each), codes and digit strings (one `random_range` per character),
//! fresh ids and unique emails. Generators that switch to these keep their databases byte
//! for byte: each draws from the RNG in the order the code it replaces did.
//!
//! Architecture invariant: pure functions of the RNG and their inputs.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

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
