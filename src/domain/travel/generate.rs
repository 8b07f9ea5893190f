//! The deterministic synthetic travel databases, drawn from a ChaCha8 stream seeded by the
//! caller and the split: the evaluation database at the reference's scale (87 travelers,
//! 87 packages, 87 agents, 89 bookings) and the training database at the paper's (1,000
//! travelers, 87 packages, 87 agents; bookings in the reference's ratio, 1,023).
//!
//! Distributions follow the reference's `db.json` (two or three dated departures per
//! package, about nine in ten open, a few sold out or 'limited'; one to three managing
//! agents per package; two or three availability dates per agent with one to three slots;
//! one booking per traveler for most, a few with none or several; one or two saved payment
//! methods for most, a few with none; two-person parties with add-ons; insurance labels
//! that are often free text), with our own places, names and prices (`vocabulary.toml`).
//!
//! Unlike the reference data, ours is internally consistent: every booking's total is the
//! price oracle's, paid from the holder's saved methods; agents list the travelers and
//! bookings they handle and the packages they manage; booking ids never take the
//! `TAU001`-`TAU003` slots new bookings use. Departures lie after the clock (2024-05-15),
//! some within a package's cancellation window, so the cancellation rule has cases both
//! ways; a few packages state no cancellation window at all (a case for a human agent).
//! About one booking in six carries a companion's date of birth typed a day off from the
//! profile's (what a traveler asks to correct). The training database also holds some
//! cancelled bookings (refunded in full).
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    AddOn, Agency, Agent, AvailabilityDay, Booking, BookingTraveler, Companion, ContactInfo,
    MethodInfo, Name, Package, Passport, Payment, PaymentMethod, PostalAddress, Preferences,
    Rooming, TravelDb, Traveler,
};
use super::generate_packages::generate_package;
use super::generate_vocab::{VOCABULARY, fresh_id, sample};
pub use super::generate_vocab::{add_on_catalogue, room_types};
use super::tools::package_total;
use crate::domain::Split;
use crate::domain::kit::calc::py_round;
use crate::domain::kit::draw::{Scales, counts_summing_to, digits, pick, weighted};
use crate::domain::kit::rows::refund_all;
use crate::domain::kit::tau2::{day_of, parse_short_date, short_date};
use crate::seed::derive_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Sizes of one database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
pub struct Scale {
    pub travelers: usize,
    pub packages: usize,
    pub agents: usize,
    pub bookings: usize,
}

/// The sizes per split (`[scale.eval]`, `[scale.train]` in `vocabulary.toml`).
pub static SCALES: LazyLock<Scales<Scale>> =
    LazyLock::new(|| Scales::read(include_str!("vocabulary.toml")));

/// The database of one split, at its size in [`SCALES`]; the training
/// one lets some bookings be cancelled ones.
pub fn generate(seed: u64, split: Split) -> TravelDb {
    let scale = SCALES.of(split);
    let cancelled = split == Split::Train;
    let mut rng = derive_rng(seed, &["travel", "db", split.as_str()]);
    let v = &*VOCABULARY;
    if v.countries.is_empty() || v.first_names.is_empty() || v.agencies.is_empty() {
        return TravelDb::new(BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    }
    let mut used = BTreeSet::new();
    let mut agents: Vec<Agent> = (0..scale.agents)
        .map(|_| generate_agent(&mut rng, &mut used))
        .collect();
    let mut packages = BTreeMap::new();
    for _ in 0..scale.packages {
        let mut p = generate_package(&mut rng, &mut used);
        let managers = weighted(&mut rng, &v.managers_per_package);
        for i in sample(&(0..agents.len()).collect::<Vec<_>>(), managers, &mut rng) {
            p.managed_by_agents.push(agents[i].agent_id.clone());
            agents[i].managed_packages.push(p.package_id.clone());
        }
        packages.insert(p.package_id.clone(), p);
    }
    let mut travelers: Vec<Traveler> = (0..scale.travelers)
        .map(|_| generate_traveler(&mut rng, &mut used))
        .collect();
    // Bookings per traveler (only travelers with a saved method can have paid), adjusted
    // to the exact total.
    let payers: Vec<usize> = (0..travelers.len())
        .filter(|i| !travelers[*i].payment_methods.is_empty())
        .collect();
    let counts = counts_summing_to(
        &mut rng,
        payers.len(),
        &v.bookings_per_traveler,
        scale.bookings,
    );
    let package_ids: Vec<String> = packages.keys().cloned().collect();
    let mut booking_ids = BTreeSet::new();
    for (&i, &count) in payers.iter().zip(&counts) {
        for _ in 0..count {
            let pid = pick(&mut rng, &package_ids).clone();
            let Some(pkg) = packages.get(&pid) else {
                continue;
            };
            let id = loop {
                let id = format!("BKG-{}", digits(&mut rng, 5));
                if booking_ids.insert(id.clone()) {
                    break id;
                }
            };
            let b = generate_booking(&mut rng, &travelers[i], pkg, id, cancelled);
            if let Some(a) = agents.iter_mut().find(|a| a.agent_id == b.agent_id) {
                if !a.assigned_travelers.contains(&travelers[i].traveler_id) {
                    a.assigned_travelers.push(travelers[i].traveler_id.clone());
                }
                a.bookings_handled.push(b.booking_id.clone());
            }
            travelers[i].bookings.push(b);
        }
    }
    TravelDb::new(
        packages,
        travelers
            .into_iter()
            .map(|t| (t.traveler_id.clone(), t))
            .collect(),
        agents
            .into_iter()
            .map(|a| (a.agent_id.clone(), a))
            .collect(),
    )
}

fn person(rng: &mut ChaCha8Rng) -> Name {
    let v = &*VOCABULARY;
    Name {
        first_name: pick(rng, &v.first_names).clone(),
        last_name: pick(rng, &v.last_names).clone(),
    }
}

fn generate_agent(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> Agent {
    let v = &*VOCABULARY;
    let name = person(rng);
    let (agency, street, city, state, country, zip, tz) = pick(rng, &v.agencies).clone();
    let domain: String = agency
        .to_lowercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    // Meeting dates a few days to three months after the clock, sorted as the file holds
    // them.
    let mut availability = BTreeMap::new();
    for _ in 0..weighted(rng, &v.meeting_days_per_agent) {
        let day = day_of(2024, 5, 16) + rng.random_range(0..100);
        let n = weighted(rng, &v.slots_per_meeting_day);
        let mut slots = sample(&v.meeting_slots, n, rng);
        slots.sort();
        availability.insert(
            short_date(day),
            AvailabilityDay {
                slots,
                timezone: tz.clone(),
            },
        );
    }
    Agent {
        agent_id: fresh_id(rng, used),
        contact: ContactInfo {
            email: format!(
                "{}.{}@{domain}.example",
                name.first_name.to_lowercase(),
                name.last_name.to_lowercase()
            ),
            phone: format!("+1-{}-555-{}", rng.random_range(201..990), digits(rng, 4)),
        },
        name,
        agency: Agency {
            name: agency,
            address: PostalAddress {
                street,
                city,
                state,
                country,
                zip,
            },
        },
        certifications: sample(&v.certifications, rng.random_range(1..=2), rng),
        languages: sample(&v.languages, rng.random_range(1..=3), rng),
        regions_of_expertise: {
            let countries: Vec<String> = v.countries.iter().map(|c| c.country.clone()).collect();
            sample(&countries, rng.random_range(1..=3), rng)
        },
        commission_rate: f64::from(rng.random_range(8..=15u32)) / 100.0,
        employment_status: weighted(rng, &v.employment_statuses),
        assigned_travelers: Vec::new(),
        managed_packages: Vec::new(),
        bookings_handled: Vec::new(),
        availability: availability.into_iter().collect(),
        notes: rng
            .random_bool(0.5)
            .then(|| pick(rng, &v.agent_notes).clone()),
    }
}

fn generate_traveler(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> Traveler {
    let v = &*VOCABULARY;
    let name = person(rng);
    let (city, state, country, zip3) = pick(rng, &v.home_cities).clone();
    let born = day_of(1950, 1, 1) + rng.random_range(0..(52 * 365));
    let mut methods = BTreeMap::new();
    let mut lasts = BTreeSet::new();
    for _ in 0..weighted(rng, &v.payment_methods_per_traveler) {
        let id = fresh_id(rng, used);
        let last = loop {
            let l = digits(rng, 4);
            if lasts.insert(l.clone()) {
                break l;
            }
        };
        let source = weighted(rng, &v.payment_sources);
        let extra_info = match source.as_str() {
            "paypal" => Some(MethodInfo {
                brand: None,
                last_four: None,
            }),
            "bank_transfer" => Some(MethodInfo {
                brand: None,
                last_four: Some(last),
            }),
            _ => Some(MethodInfo {
                brand: Some(weighted(rng, &v.card_brands)),
                last_four: Some(last),
            }),
        };
        methods.insert(
            id.clone(),
            PaymentMethod {
                source,
                payment_method_id: id,
                extra_info,
            },
        );
    }
    let companions = (0..weighted(rng, &v.companions_per_traveler))
        .map(|_| {
            let family = rng.random_bool(0.6);
            let mut p = person(rng);
            if family {
                p.last_name = name.last_name.clone();
            }
            let dob = short_date(day_of(1948, 1, 1) + rng.random_range(0..(60 * 365)));
            Companion {
                first_name: p.first_name,
                last_name: p.last_name,
                dob,
                passport: rng.random_bool(0.8).then(|| passport(rng, &country)),
            }
        })
        .collect();
    Traveler {
        traveler_id: fresh_id(rng, used),
        contact: ContactInfo {
            email: format!(
                "{}.{}{}@mail.example",
                name.first_name.to_lowercase(),
                name.last_name.to_lowercase(),
                digits(rng, 2)
            ),
            phone: format!("+1-{}-555-{}", rng.random_range(201..990), digits(rng, 4)),
        },
        name,
        address: PostalAddress {
            street: format!("{} {}", rng.random_range(2..980), pick(rng, &v.streets)),
            city,
            state,
            zip: format!("{zip3}{}", digits(rng, 2)),
            country: country.clone(),
        },
        dob: short_date(born),
        passport: rng.random_bool(0.9).then(|| passport(rng, &country)),
        preferences: Some(Preferences {
            dietary: rng.random_bool(0.7).then(|| pick(rng, &v.dietary).clone()),
            accessibility: rng
                .random_bool(0.1)
                .then(|| pick(rng, &v.accessibility).clone()),
            room_type: Some(pick(rng, &v.room_types[..3]).clone()),
            bed_preference: rng.random_bool(0.8).then(|| pick(rng, &v.beds).clone()),
            other: rng
                .random_bool(0.4)
                .then(|| pick(rng, &v.other_preferences).clone()),
        }),
        payment_methods: methods.into_iter().collect(),
        saved_companions: companions,
        memberships: sample(
            &v.memberships,
            weighted(rng, &v.memberships_per_traveler),
            rng,
        ),
        bookings: Vec::new(),
    }
}

fn passport(rng: &mut ChaCha8Rng, country: &str) -> Passport {
    let prefix: String = country.chars().take(2).collect::<String>().to_uppercase();
    Passport {
        number: format!("{prefix}{}", digits(rng, 7)),
        nationality: country.to_string(),
        expiry: short_date(day_of(2026, 1, 1) + rng.random_range(0..3000)),
    }
}

fn generate_booking(
    rng: &mut ChaCha8Rng,
    holder: &Traveler,
    pkg: &Package,
    booking_id: String,
    cancelled: bool,
) -> Booking {
    let v = &*VOCABULARY;
    // Mostly onto open departures, as bookings are made.
    let open: Vec<&str> = pkg
        .departures
        .iter()
        .filter(|(_, d)| d.is_open())
        .map(|(k, _)| k)
        .collect();
    let all: Vec<&str> = pkg.departures.keys().collect();
    let date = if !open.is_empty() && rng.random_bool(0.92) {
        pick(rng, &open).to_string()
    } else {
        pick(rng, &all).to_string()
    };
    let base = pkg.departures.get(&date).map_or(0.0, |d| d.base_price);
    let mut travelers = vec![BookingTraveler {
        first_name: holder.name.first_name.clone(),
        last_name: holder.name.last_name.clone(),
        dob: holder.dob.clone(),
    }];
    let party = weighted(rng, &v.party_sizes);
    for c in sample(&holder.saved_companions, party - 1, rng) {
        // Now and then a companion's details were mistyped at booking time (a day off in
        // the date of birth): the case a traveler later asks to have corrected.
        let dob = match parse_short_date(&c.dob) {
            Some(day) if rng.random_bool(0.15) => short_date(day + 1),
            _ => c.dob.clone(),
        };
        travelers.push(BookingTraveler {
            first_name: c.first_name.clone(),
            last_name: c.last_name.clone(),
            dob,
        });
    }
    let n = travelers.len();
    let room_type = match n {
        1 => "single".to_string(),
        2 => pick(rng, &["double".to_string(), "twin".to_string()]).clone(),
        _ => "family_suite".to_string(),
    };
    let add_ons: Vec<AddOn> = sample(
        &add_on_catalogue(),
        weighted(rng, &v.add_ons_per_booking),
        rng,
    );
    let free_label = pick(rng, &v.free_insurance).clone();
    let insurance = match weighted(rng, &v.insurance_choices).as_str() {
        "none" => None,
        "free text" => Some(free_label),
        label => Some(label.to_string()),
    };
    let total = package_total(base, n, &add_ons, insurance.as_deref());
    let methods: Vec<&str> = holder.payment_methods.keys().collect();
    let payment_history = if methods.len() > 1 && rng.random_bool(0.3) && total >= 200.0 {
        let first = (total / 2.0).floor();
        vec![
            Payment::new(methods[0], first),
            Payment::new(methods[1], py_round(total - first, 2)),
        ]
    } else {
        vec![Payment::new(*pick(rng, &methods), total)]
    };
    let status = if cancelled && rng.random_bool(0.04) {
        "cancelled"
    } else if rng.random_bool(0.02) {
        "pending"
    } else {
        "confirmed"
    };
    let mut b = Booking {
        booking_id,
        package_id: pkg.package_id.clone(),
        agent_id: pick(rng, &pkg.managed_by_agents).clone(),
        booking_date: short_date(day_of(2024, 5, 15) - rng.random_range(5..200)),
        departure_date: date,
        status: status.to_string(),
        travelers,
        rooming: Rooming {
            room_type,
            occupancy: n as i64,
        },
        add_ons,
        insurance,
        payment_history,
        total_price: total,
        notes: rng
            .random_bool(0.3)
            .then(|| pick(rng, &v.booking_notes).clone()),
    };
    if b.is_cancelled() {
        refund_all(&mut b.payment_history);
    }
    b
}
