//! The agency's packages: a country's cities as stops, dated departures (mostly open, a
//! few sold out or limited), an itinerary, stays, activities and policies, some with no
//! cancellation window.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    Accommodation, Activity, Departure, ItineraryItem, Location, Package, PackagePolicies,
    Transportation,
};
use super::generate_vocab::{VOCABULARY, fresh_id, sample};
use crate::domain::kit::draw::{pick, weighted};
use crate::domain::kit::pytext;
use crate::domain::kit::python::PyDict;
use crate::domain::kit::tau2::{day_of, short_date};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;

pub(super) fn generate_package(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> Package {
    let v = &*VOCABULARY;
    let t = &v.package_text;
    let c = pick(rng, &v.countries);
    let loc = |city: &str| Location {
        city: city.to_string(),
        country: c.country.clone(),
    };
    let stops = sample(&c.cities, weighted(rng, &v.stops_per_package), rng);
    let destinations: Vec<Location> = stops.iter().map(|s| loc(s)).collect();
    let duration = weighted(rng, &v.package_days);
    let category = weighted(rng, &v.categories);
    let (low, high) = c.price;
    let step = if high > 50_000 { 1000 } else { 50 };
    let mut dates = BTreeSet::new();
    for _ in 0..weighted(rng, &v.departures_per_package) {
        // Mostly two months to a year after the clock; some within a few weeks of it.
        let day = if rng.random_bool(0.12) {
            day_of(2024, 5, 20) + rng.random_range(0..40)
        } else {
            day_of(2024, 7, 1) + rng.random_range(0..365)
        };
        dates.insert(day);
    }
    let mut departures = PyDict::new();
    for day in dates {
        let price = f64::from(rng.random_range(low / step..=high / step) * step)
            - if rng.random_bool(0.3) { 1.0 } else { 0.0 };
        let status = weighted(rng, &v.departure_statuses);
        departures.insert(
            short_date(day),
            Departure {
                status: status.clone(),
                base_price: price,
                currency: c.currency.clone(),
                available_slots: match status.as_str() {
                    "sold_out" => 0,
                    "limited" => rng.random_range(1..=3),
                    _ => rng.random_range(3..=20),
                },
                early_bird_deadline: short_date(day - rng.random_range(45..120)),
            },
        );
    }
    let itinerary = (1..=3)
        .map(|day| ItineraryItem {
            day,
            title: pick(rng, &v.day_titles).clone(),
            description: fill(
                &t.day,
                json!({"city": stops[(day as usize - 1) % stops.len()]}),
            ),
            location: loc(&stops[(day as usize - 1) % stops.len()]),
            included_meals: sample(&v.meals, rng.random_range(1..=2), rng),
        })
        .collect();
    let nights = duration - 1;
    let first_nights = if stops.len() > 1 { nights / 2 } else { nights };
    let accommodations = stops
        .iter()
        .take(2)
        .enumerate()
        .map(|(i, s)| Accommodation {
            name: format!("{s} {}", t.stays[i % t.stays.len()]),
            kind: pick(rng, &v.accommodation_kinds).clone(),
            location: loc(s),
            nights: if i == 0 {
                first_nights
            } else {
                nights - first_nights
            },
        })
        .collect();
    let activities = sample(&v.activity_names, rng.random_range(2..=3), rng)
        .into_iter()
        .enumerate()
        .map(|(i, (name, description))| Activity {
            name,
            description,
            day: i as i64 + 1,
        })
        .collect();
    let free = *pick(rng, &v.free_cancellation_days);
    let cancellation_policy = if rng.random_bool(0.05) {
        t.cancellation_by_operator.clone()
    } else {
        fill(
            &t.cancellation,
            json!({"free": free, "fee": pick(rng, &v.cancellation_fees)}),
        )
    };
    let change = *pick(rng, &v.change_days);
    Package {
        package_id: fresh_id(rng, used),
        name: format!("{} {}", c.country, pick(rng, &c.themes)),
        category,
        description: fill(
            &t.description,
            json!({"days": duration, "stops": stops.join(", ")}),
        ),
        destinations,
        duration_days: duration,
        departure_points: {
            let mut points = vec![loc(&c.cities[0])];
            if rng.random_bool(0.5) {
                points.push(Location {
                    city: pick(rng, &t.hubs).clone(),
                    country: t.hub_country.clone(),
                });
            }
            points
        },
        departures,
        itinerary,
        inclusions: sample(&v.inclusions, 3, rng),
        exclusions: sample(&v.exclusions, 3, rng),
        accommodations,
        transportation: Transportation {
            international: t.international.clone(),
            domestic: fill(&t.domestic, json!({"stops": stops.join(" and ")})),
            ground: t.ground.clone(),
        },
        activities,
        policies: PackagePolicies {
            cancellation_policy,
            change_policy: fill(&t.change, json!({"change": change})),
            refund_policy: fill(&t.refund, json!({"days": pick(rng, &v.refund_days)})),
        },
        notes: rng
            .random_bool(0.6)
            .then(|| pick(rng, &v.package_notes).clone()),
        managed_by_agents: Vec::new(),
    }
}

/// A sentence of [`super::generate_vocab::PackageText`] with its `{...}` filled from `values`.
fn fill(template: &str, values: Value) -> String {
    pytext::render(template, &values).unwrap_or_default()
}
