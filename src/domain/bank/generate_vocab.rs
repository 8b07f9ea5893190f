//! What every table's generator of the bank shares: the vocabulary (`vocabulary.toml`:
//! regions, places, names, banks, merchants) and the draws over it: ids in the reference's
//! shape, amounts in a currency, timestamps and addresses.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::BankAddress;
use crate::domain::kit::draw::{UPPER_ALPHANUMERIC, code, digits_in, pick};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::LazyLock;

#[derive(Debug, Default, Deserialize)]
pub(super) struct Vocabulary {
    pub(super) regions: Vec<(String, String, f64, String, String, String)>,
    pub(super) places: Vec<(String, String, String, String)>,
    pub(super) streets: Vec<String>,
    pub(super) second_lines: Vec<String>,
    pub(super) given_names: Vec<String>,
    pub(super) family_names: Vec<String>,
    pub(super) banks: Vec<String>,
    pub(super) business_names: Vec<String>,
    pub(super) card_brands: Vec<String>,
    pub(super) merchants: Vec<(String, String)>,
}

pub(super) static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

/// A fresh id in the reference's shape: seven upper-case letters or digits and a shard
/// digit (`03DZE1C1`).
pub(super) fn fresh_id(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> String {
    loop {
        let mut id = code(rng, UPPER_ALPHANUMERIC, 7);
        id.push(char::from(b'1' + rng.random_range(0..9u8)));
        if used.insert(id.clone()) {
            return id;
        }
    }
}

/// Whole cents as a float (exact to two decimals as Python prints them).
pub(super) fn cents(c: i64) -> f64 {
    c as f64 / 100.0
}

/// An amount of about `low..high` US dollars in a currency worth `rate` per dollar,
/// rounded to a plausible step (whole units for weak currencies).
pub(super) fn amount(rng: &mut ChaCha8Rng, low: f64, high: f64, rate: f64) -> f64 {
    let x = rng.random_range(low..high) * rate;
    if rate >= 20.0 {
        (x / 100.0).round() * 100.0
    } else {
        cents((x * 100.0).round() as i64)
    }
}

/// `YYYY-MM-DDTHH:MM:00Z` in the given year range.
pub(super) fn stamp(rng: &mut ChaCha8Rng, years: std::ops::Range<i64>) -> String {
    format!(
        "{}-{:02}-{:02}T{:02}:{:02}:00Z",
        rng.random_range(years),
        rng.random_range(1..13),
        rng.random_range(1..29),
        rng.random_range(7..20),
        rng.random_range(0..4) * 15
    )
}

pub(super) fn address(rng: &mut ChaCha8Rng, country: &str) -> BankAddress {
    let v = &*VOCABULARY;
    let places: Vec<&(String, String, String, String)> =
        v.places.iter().filter(|p| p.0 == country).collect();
    let (city, state, zip) = match places.as_slice() {
        [] => (
            "Capital City".to_string(),
            "Central".to_string(),
            "1000".to_string(),
        ),
        ps => {
            let p = ps[rng.random_range(0..ps.len())];
            (p.1.clone(), p.2.clone(), digits_in(rng, &p.3))
        }
    };
    BankAddress {
        address1: format!("{} {}", rng.random_range(1..220), pick(rng, &v.streets)),
        address2: if rng.random_bool(0.25) {
            pick(rng, &v.second_lines).clone()
        } else {
            String::new()
        },
        city,
        state,
        zip,
        country: country.to_string(),
    }
}
