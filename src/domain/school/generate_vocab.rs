//! What every table's generator of the school shares: the vocabulary (`vocabulary.toml`:
//! departments with their course titles and buildings, names, places, degrees) and the
//! draws over it: fresh ids, days, and a person's contact (instructors and advisors).
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::Contact;
use crate::domain::kit::draw::{UPPER_ALPHANUMERIC, code, pick};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::LazyLock;

#[derive(Debug, Default, Deserialize)]
pub(super) struct Department {
    pub(super) name: String,
    pub(super) code: String,
    pub(super) titles: Vec<String>,
    pub(super) buildings: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct Vocabulary {
    pub(super) university_domain: String,
    pub(super) departments: Vec<Department>,
    pub(super) campuses: Vec<String>,
    pub(super) topics: Vec<String>,
    pub(super) held_notes: Vec<String>,
    pub(super) canceled_notes: Vec<String>,
    pub(super) rescheduled_notes: Vec<String>,
    pub(super) first_names: Vec<String>,
    pub(super) last_names: Vec<String>,
    pub(super) streets: Vec<String>,
    pub(super) cities: Vec<(String, String, String)>,
    pub(super) card_brands: Vec<String>,
    pub(super) relationships: Vec<String>,
    pub(super) memberships: Vec<String>,
    pub(super) schools: Vec<String>,
    pub(super) graduate_school: String,
    pub(super) continuing_school: String,
    pub(super) undergraduate_degrees: Vec<String>,
    pub(super) graduate_degrees: Vec<String>,
    pub(super) continuing_degrees: Vec<String>,
}

/// The built-in vocabulary; a broken file generates an empty database, which the generator
/// tests catch, so this never panics at run time.
pub(super) static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

/// A fresh 7-character id (the reference's shape) not yet in `used`; never a `REGnnn`
/// slot id, which new registrations take.
pub(super) fn fresh_id(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>, len: usize) -> String {
    loop {
        let id = code(rng, UPPER_ALPHANUMERIC, len);
        if !id.starts_with("REG") && used.insert(id.clone()) {
            return id;
        }
    }
}

pub(super) fn random_day(rng: &mut ChaCha8Rng, from: i64, to: i64) -> i64 {
    rng.random_range(from..=to)
}

pub(super) fn contact(rng: &mut ChaCha8Rng) -> Contact {
    let v = &*VOCABULARY;
    let first = pick(rng, &v.first_names).clone();
    let last = pick(rng, &v.last_names).clone();
    let email = format!(
        "{}{}@{}",
        first.chars().next().unwrap_or('x').to_ascii_lowercase(),
        last.to_lowercase(),
        v.university_domain
    );
    Contact {
        first_name: first,
        last_name: last,
        email,
    }
}
