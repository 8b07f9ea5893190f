//! What every table's generator of the travel agency shares: the vocabulary
//! (`vocabulary.toml`: agencies, countries with their cities, themes and prices, names,
//! add-ons, package texts) with the add-on catalogue and room types grounding reads too,
//! and the draws over it: seeded samples and fresh ids.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::AddOn;
use crate::domain::kit::draw::{UPPER_ALPHANUMERIC, fresh_code};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::LazyLock;

#[derive(Debug, Default, Deserialize)]
pub(super) struct Country {
    pub(super) country: String,
    pub(super) currency: String,
    pub(super) cities: Vec<String>,
    pub(super) themes: Vec<String>,
    pub(super) price: (u32, u32),
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct Vocabulary {
    pub(super) agencies: Vec<(String, String, String, String, String, String, String)>,
    pub(super) certifications: Vec<String>,
    pub(super) languages: Vec<String>,
    pub(super) meeting_slots: Vec<String>,
    pub(super) agent_notes: Vec<String>,
    pub(super) categories: Vec<(String, u32)>,
    pub(super) first_names: Vec<String>,
    pub(super) last_names: Vec<String>,
    pub(super) streets: Vec<String>,
    pub(super) home_cities: Vec<(String, String, String, String)>,
    pub(super) card_brands: Vec<(String, u32)>,
    pub(super) memberships: Vec<String>,
    pub(super) dietary: Vec<String>,
    pub(super) accessibility: Vec<String>,
    pub(super) room_types: Vec<String>,
    pub(super) beds: Vec<String>,
    pub(super) other_preferences: Vec<String>,
    pub(super) booking_notes: Vec<String>,
    pub(super) free_insurance: Vec<String>,
    pub(super) add_ons: Vec<(String, String, f64)>,
    pub(super) accommodation_kinds: Vec<String>,
    pub(super) meals: Vec<String>,
    pub(super) inclusions: Vec<String>,
    pub(super) exclusions: Vec<String>,
    pub(super) package_notes: Vec<String>,
    pub(super) day_titles: Vec<String>,
    pub(super) activity_names: Vec<(String, String)>,
    pub(super) countries: Vec<Country>,
    pub(super) package_text: PackageText,
    pub(super) managers_per_package: Vec<(usize, u32)>,
    pub(super) bookings_per_traveler: Vec<(usize, u32)>,
    pub(super) meeting_days_per_agent: Vec<(usize, u32)>,
    pub(super) slots_per_meeting_day: Vec<(usize, u32)>,
    pub(super) employment_statuses: Vec<(String, u32)>,
    pub(super) payment_methods_per_traveler: Vec<(usize, u32)>,
    pub(super) payment_sources: Vec<(String, u32)>,
    pub(super) companions_per_traveler: Vec<(usize, u32)>,
    pub(super) memberships_per_traveler: Vec<(usize, u32)>,
    pub(super) party_sizes: Vec<(usize, u32)>,
    pub(super) add_ons_per_booking: Vec<(usize, u32)>,
    pub(super) insurance_choices: Vec<(String, u32)>,
    pub(super) stops_per_package: Vec<(usize, u32)>,
    pub(super) package_days: Vec<(i64, u32)>,
    pub(super) departures_per_package: Vec<(usize, u32)>,
    pub(super) departure_statuses: Vec<(String, u32)>,
    pub(super) free_cancellation_days: Vec<i64>,
    pub(super) cancellation_fees: Vec<i64>,
    pub(super) change_days: Vec<i64>,
    pub(super) refund_days: Vec<i64>,
}

/// A package's sentences, `{...}` filled by the generator ([`super::generate_packages`]).
#[derive(Debug, Default, Deserialize)]
pub(super) struct PackageText {
    pub(super) description: String,
    pub(super) day: String,
    pub(super) stays: Vec<String>,
    pub(super) hubs: Vec<String>,
    pub(super) hub_country: String,
    pub(super) international: String,
    pub(super) domestic: String,
    pub(super) ground: String,
    pub(super) cancellation_by_operator: String,
    pub(super) cancellation: String,
    pub(super) change: String,
    pub(super) refund: String,
}

/// The built-in vocabulary; a broken file generates an empty database, which the generator
/// tests catch, so this never panics at run time.
pub(super) static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

/// The add-ons a traveler can ask for (type, description, price).
pub fn add_on_catalogue() -> Vec<AddOn> {
    VOCABULARY
        .add_ons
        .iter()
        .map(|(kind, description, price)| AddOn {
            kind: kind.clone(),
            description: description.clone(),
            price: *price,
        })
        .collect()
}

/// Room types a booking can take.
pub fn room_types() -> &'static [String] {
    &VOCABULARY.room_types
}

/// `k` distinct items of `items` in a seeded order.
pub(super) fn sample<T: Clone>(items: &[T], k: usize, rng: &mut ChaCha8Rng) -> Vec<T> {
    let mut idx: Vec<usize> = (0..items.len()).collect();
    let mut out = Vec::new();
    while out.len() < k && !idx.is_empty() {
        out.push(items[idx.swap_remove(rng.random_range(0..idx.len()))].clone());
    }
    out
}

/// A fresh 7-character id (the reference's shape) not yet in `used`.
pub(super) fn fresh_id(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> String {
    fresh_code(rng, used, UPPER_ALPHANUMERIC, 7)
}
