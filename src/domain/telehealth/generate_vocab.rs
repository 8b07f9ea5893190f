//! What every table's generator of the synthetic clinic shares: the vocabulary
//! (`vocabulary.toml`) with its parsed conditions, the small text-table and drawing
//! helpers, the clinic's "today" and the number of patients in active care.
//!
//! Architecture invariant: generation is pure — same seed, same database; no clock, no I/O.

use super::CLOCK;
use crate::domain::kit::clock::parse_date;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::sync::LazyLock;

/// The clinic's vocabulary (`vocabulary.toml`): names, places, conditions, specialties, the
/// supplier catalogue, interactions and note texts, as compact text tables.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Vocabulary {
    pub(super) first_names: String,
    pub(super) last_names: String,
    pub(super) streets: String,
    pub(super) street_kinds: String,
    pub(super) cities: String,
    pub(super) mail_hosts: String,
    pub(super) relations: String,
    pub(super) insurers: String,
    pub(super) allergies: String,
    pub(super) conditions: String,
    pub(super) specialties: String,
    pub(super) times: String,
    pub(super) languages: String,
    pub(super) catalogue: String,
    pub(super) companies: String,
    pub(super) brand_endings: String,
    pub(super) interactions: String,
    pub(super) appointment_notes: String,
    pub(super) soap: String,
    pub(super) record_types: String,
}

/// The built-in vocabulary. It is compiled in, so a broken file is a bug of this crate,
/// reported by the domain's tests before any generator runs.
pub(super) fn vocab() -> &'static Vocabulary {
    static V: LazyLock<Vocabulary> = LazyLock::new(|| {
        toml::from_str(include_str!("vocabulary.toml")).expect("vocabulary.toml parses")
    });
    &V
}

/// A parsed line of the vocabulary's conditions.
pub(super) struct Condition {
    pub(super) name: &'static str,
    pub(super) specialty: &'static str,
    pub(super) meds: Vec<(&'static str, &'static str, &'static str)>,
    pub(super) device: Option<&'static str>,
    pub(super) complaint: &'static str,
}

pub(super) fn conditions() -> &'static [Condition] {
    static PARSED: LazyLock<Vec<Condition>> = LazyLock::new(|| {
        vocab()
            .conditions
            .lines()
            .map(|line| {
                let f: Vec<&str> = line.split('|').collect();
                let meds = f[2]
                    .split(';')
                    .filter(|m| !m.is_empty())
                    .map(|m| {
                        let p: Vec<&str> = m.split(':').collect();
                        (p[0], p[1], p[2])
                    })
                    .collect();
                Condition {
                    name: f[0],
                    specialty: f[1],
                    meds,
                    device: (!f[3].is_empty()).then_some(f[3]),
                    complaint: f[4],
                }
            })
            .collect()
    });
    &PARSED
}

/// `a|b` pairs of a table, split on `sep`.
pub(super) fn pairs(table: &'static str, sep: char) -> Vec<(&'static str, &'static str)> {
    table
        .split(sep)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .filter_map(|r| r.split_once('|'))
        .collect()
}

pub(super) fn words(list: &'static str) -> Vec<&'static str> {
    list.split_whitespace().collect()
}

pub(super) fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

pub(super) fn today() -> i64 {
    parse_date(CLOCK.today()).unwrap_or_default()
}

/// Patients in active care (the first ones generated).
pub(super) const ACTIVE: usize = 150;
