//! The deterministic synthetic restaurant databases, drawn from a ChaCha8 stream seeded by
//! the caller and the split: the evaluation database at the reference's scale (200 patrons,
//! 207 dishes, 207 tickets) and the training database at the paper's (1,000 patrons, 207
//! dishes, 1,564 tickets).
//!
//! Distributions follow the reference's `db.json` where they do not block a task: tickets
//! are mostly delivery, then dine-in, a few takeout; one or two line entries each,
//! with tax, delivery fee and tip itemised beside one payment that covers them. Where the
//! reference's data makes a write tool unusable, ours departs on purpose: a dish offers one
//! to four plates (portion, spice or protein variants, a few not served today) instead of
//! almost always one, and about two patrons in three save two or three instruments
//! instead of one, so item swaps and instrument changes have something to choose; and more tickets
//! are still placed (45% against the reference's 28%; the rest being prepared, delivered or
//! ready) and held by fewer patrons, so a conversation with several changes finds several
//! tickets it may change. The training
//! database also holds a few cancelled tickets (refunded), so "only placed tickets" is a
//! rule a task can meet. Names, dishes and places are our own (`vocabulary.toml`).
//!
//! Every payment is the exact sum of the ticket's items, tax, fee and tip as the reference
//! computes money (floats, Python's `round(x, 2)`); every charge names one of the owner's
//! saved instruments; titles, emails and plate ids are unique.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    CANCELLED, Dish, GuestIdentity, InstrumentMetadata, LineEntry, LineEntryMods, PLACED, Patron,
    PatronLocation, PaymentInstrument, Plate, PlateModifiers, PrepBatch, RestaurantDb, ServiceMode,
    ServiceTicket, TableInfo, TicketCharge,
};
use crate::domain::Split;
use crate::domain::kit::calc::py_round;
use crate::domain::kit::draw::{Scales, counts_summing_to, digits_in, fresh_code, pick, weighted};
use crate::domain::kit::text::capitalize;
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Sizes of one database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
pub struct Scale {
    pub patrons: usize,
    pub dishes: usize,
    pub tickets: usize,
}

/// The sizes per split (`[scale.eval]`, `[scale.train]` in `vocabulary.toml`).
pub static SCALES: LazyLock<Scales<Scale>> =
    LazyLock::new(|| Scales::read(include_str!("vocabulary.toml")));

#[derive(Debug, Default, Deserialize)]
struct Vocabulary {
    dishes: Vec<(String, String, String, f64)>,
    qualifiers: Vec<String>,
    portions: Vec<(String, f64)>,
    spice_levels: Vec<String>,
    sauces: Vec<String>,
    sides: Vec<String>,
    zones: Vec<String>,
    given_names: Vec<String>,
    family_names: Vec<String>,
    email_domains: Vec<String>,
    places: Vec<(String, String, String, String)>,
    streets: Vec<String>,
    second_lines: Vec<String>,
    issuers: BTreeMap<String, Vec<String>>,
}

/// The built-in vocabulary; a broken file generates an empty database, which the generator
/// tests catch, so this never panics at run time.
static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

const ALPHANUMERIC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A fresh 7-character mixed-case id (the reference's shape) not yet in `used`.
fn fresh_id(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> String {
    fresh_code(rng, used, ALPHANUMERIC, 7)
}

/// To the nearest quarter (exact in binary, as menu prices are).
fn quarter(x: f64) -> f64 {
    (x * 4.0).round() / 4.0
}

/// The database of one split, at its size in [`SCALES`]; the training
/// one lets a few tickets be cancelled ones.
pub fn generate(seed: u64, split: Split) -> RestaurantDb {
    let scale = SCALES.of(split);
    let cancelled = split == Split::Train;
    let mut rng = derive_rng(seed, &["restaurant", "db", split.as_str()]);
    let mut used = BTreeSet::new();
    let v = &*VOCABULARY;
    if v.dishes.is_empty() || v.given_names.is_empty() || v.places.is_empty() {
        return RestaurantDb::new(BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    }
    let menu = generate_menu(&mut rng, &mut used, scale.dishes);
    let mut patrons: Vec<Patron> = Vec::with_capacity(scale.patrons);
    let mut emails = BTreeSet::new();
    for _ in 0..scale.patrons {
        patrons.push(generate_patron(&mut rng, &mut used, &mut emails));
    }
    // Tickets per patron, adjusted to the exact total (most patrons hold one).
    // Tickets cluster on fewer patrons than in the reference (where almost everyone holds
    // one), so a conversation with several changes finds several tickets to change.
    let weights: &[(usize, u32)] = if scale.tickets > scale.patrons * 3 / 2 {
        &[(0, 25), (1, 30), (2, 20), (3, 15), (4, 10)]
    } else {
        &[(0, 55), (1, 20), (2, 10), (3, 8), (4, 7)]
    };
    let counts = counts_summing_to(&mut rng, patrons.len(), weights, scale.tickets);
    let dishes: Vec<&Dish> = menu.values().collect();
    let mut tickets = BTreeMap::new();
    for (patron, &count) in patrons.iter_mut().zip(&counts) {
        for _ in 0..count {
            let t = generate_ticket(&mut rng, &mut used, patron, &dishes, cancelled);
            patron.ticket_log.push(t.ticket_ref.clone());
            tickets.insert(t.ticket_ref.clone(), t);
        }
    }
    let patrons = patrons
        .into_iter()
        .map(|p| (p.guest_ref.clone(), p))
        .collect();
    RestaurantDb::new(menu, patrons, tickets)
}

fn generate_menu(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    count: usize,
) -> BTreeMap<String, Dish> {
    let v = &*VOCABULARY;
    let mut titles: Vec<(String, usize)> = Vec::new();
    let mut seen = BTreeSet::new();
    // Every base once, then qualified variants in a seeded order, until `count` titles.
    let mut variants: Vec<(usize, usize)> = (0..v.qualifiers.len())
        .flat_map(|q| (0..v.dishes.len()).map(move |d| (q, d)))
        .collect();
    variants.shuffle(rng);
    for (i, d) in v.dishes.iter().enumerate() {
        if seen.insert(d.0.clone()) {
            titles.push((d.0.clone(), i));
        }
    }
    for (q, d) in variants {
        if titles.len() >= count {
            break;
        }
        let title = format!("{} {}", v.qualifiers[q], v.dishes[d].0);
        if seen.insert(title.clone()) {
            titles.push((title, d));
        }
    }
    titles.truncate(count);
    let mut out = BTreeMap::new();
    for (title, base) in titles {
        let (_, proteins, preparation, cost) = &v.dishes[base];
        let proteins: Vec<&str> = proteins.split('|').collect();
        let base_cost = quarter(cost * rng.random_range(0.85..1.2));
        let plates = weighted(rng, &[(1usize, 35), (2, 35), (3, 22), (4, 8)]);
        let default_spice = pick(rng, &v.spice_levels).clone();
        let mut variants_seen = BTreeSet::new();
        let mut selections = BTreeMap::new();
        for k in 0..plates * 3 {
            if selections.len() == plates {
                break;
            }
            // The first plate is the regular portion of the default protein.
            let (portion, factor) = if k == 0 {
                v.portions[1].clone()
            } else {
                pick(rng, &v.portions).clone()
            };
            let p = if k == 0 {
                0
            } else {
                rng.random_range(0..proteins.len())
            };
            let spice = if k == 0 || rng.random_bool(0.6) {
                default_spice.clone()
            } else {
                pick(rng, &v.spice_levels).clone()
            };
            if !variants_seen.insert((portion.clone(), p, spice.clone())) {
                continue;
            }
            let plate_ref = fresh_id(rng, used);
            let plate = Plate {
                plate_ref: plate_ref.clone(),
                modifiers: PlateModifiers {
                    spice_level: Some(spice),
                    portion: Some(portion),
                    protein: Some(proteins[p].to_string()),
                    preparation: Some(preparation.clone()),
                },
                served_today: k == 0 || rng.random_bool(0.88),
                cost: quarter(base_cost * factor + 1.5 * p as f64),
            };
            selections.insert(plate_ref, plate);
        }
        let dish_ref = fresh_id(rng, used);
        out.insert(
            dish_ref.clone(),
            Dish {
                title,
                dish_ref,
                selections,
            },
        );
    }
    out
}

fn generate_patron(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    emails: &mut BTreeSet<String>,
) -> Patron {
    let v = &*VOCABULARY;
    let given = pick(rng, &v.given_names).clone();
    let family = pick(rng, &v.family_names).clone();
    let location = random_address(rng);
    let contact_email = loop {
        let email = format!(
            "{}.{}{}@{}",
            given.to_lowercase(),
            family.to_lowercase().replace(' ', ""),
            rng.random_range(1..100),
            pick(rng, &v.email_domains)
        );
        if emails.insert(email.clone()) {
            break email;
        }
    };
    let mut saved_instruments = BTreeMap::new();
    let mut tails = BTreeSet::new();
    for _ in 0..weighted(rng, &[(1usize, 32), (2, 45), (3, 23)]) {
        let origin = weighted(
            rng,
            &[
                ("credit_card", 62),
                ("debit_card", 18),
                ("mobile_money", 10),
                ("gift_card", 10),
            ],
        );
        let issuer = v
            .issuers
            .get(origin)
            .map_or_else(|| "Visa".to_string(), |list| pick(rng, list).clone());
        let tail_digits = loop {
            let t = digits_in(rng, "####");
            if tails.insert(t.clone()) {
                break t;
            }
        };
        let instrument_ref = fresh_id(rng, used);
        saved_instruments.insert(
            instrument_ref.clone(),
            PaymentInstrument {
                origin: origin.to_string(),
                instrument_ref,
                metadata: InstrumentMetadata {
                    issuer,
                    tail_digits,
                },
            },
        );
    }
    Patron {
        guest_ref: fresh_id(rng, used),
        identity: GuestIdentity { given, family },
        location,
        contact_email,
        saved_instruments,
        ticket_log: Vec::new(),
    }
}

/// An address from the vocabulary's places (patrons' homes, other dropoff points, and
/// the new addresses grounding proposes).
pub fn random_address(rng: &mut ChaCha8Rng) -> PatronLocation {
    let v = &*VOCABULARY;
    if v.places.is_empty() || v.streets.is_empty() || v.second_lines.is_empty() {
        // Only a broken vocabulary gets here (the generator tests would fail first).
        return PatronLocation {
            line_one: "1 Main Street".into(),
            line_two: String::new(),
            municipality: "Springfield".into(),
            nation: "United States".into(),
            province: "Oregon".into(),
            postal_code: "97477".into(),
        };
    }
    let (municipality, province, nation, postal) = pick(rng, &v.places).clone();
    PatronLocation {
        line_one: format!("{} {}", rng.random_range(1..240), pick(rng, &v.streets)),
        line_two: pick(rng, &v.second_lines).clone(),
        municipality,
        nation,
        province,
        postal_code: digits_in(rng, &postal),
    }
}

/// "Lamb Tagine - Large, Hot" from a plate's modifiers.
fn label(title: &str, plate: &Plate) -> String {
    let m = &plate.modifiers;
    let parts: Vec<String> = [&m.portion, &m.spice_level]
        .into_iter()
        .flatten()
        .map(|s| capitalize(s))
        .collect();
    format!("{title} - {}", parts.join(", "))
}

fn generate_ticket(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    patron: &Patron,
    dishes: &[&Dish],
    cancelled: bool,
) -> ServiceTicket {
    let v = &*VOCABULARY;
    let mode = weighted(
        rng,
        &[
            (ServiceMode::Delivery, 63),
            (ServiceMode::DineIn, 31),
            (ServiceMode::Takeout, 6),
        ],
    );
    // The reference's order of frequency, with more tickets still placed (45% against
    // its 28%): only placed tickets can change.
    let mut states = vec![
        (PLACED, 45),
        ("in_progress", 30),
        ("delivered", 20),
        ("ready", 5),
    ];
    if cancelled {
        states.push((CANCELLED, 3));
    }
    let state = weighted(rng, &states);
    let lines = weighted(rng, &[(1usize, 62), (2, 28), (3, 10)]);
    let mut line_entries: Vec<LineEntry> = Vec::new();
    for i in 0..lines {
        // Now and then the same plate twice (a swap may then name it twice).
        let repeat = i > 0 && rng.random_bool(0.15);
        let (dish, plate) = if repeat {
            let prev = &line_entries[i - 1];
            let d = dishes.iter().find(|d| d.dish_ref == prev.dish_ref);
            match d.and_then(|d| d.selections.get(&prev.plate_ref).map(|p| (*d, p))) {
                Some(x) => x,
                None => continue,
            }
        } else {
            let d = *pick(rng, dishes);
            let plates: Vec<&Plate> = d.selections.values().filter(|p| p.served_today).collect();
            if plates.is_empty() {
                continue;
            }
            (d, *pick(rng, &plates))
        };
        line_entries.push(LineEntry {
            label: label(&dish.title, plate),
            dish_ref: dish.dish_ref.clone(),
            plate_ref: plate.plate_ref.clone(),
            cost: plate.cost,
            mods: LineEntryMods {
                heat: plate.modifiers.spice_level.clone(),
                sauce: Some(pick(rng, &v.sauces).clone()),
                side: Some(pick(rng, &v.sides).clone()),
            },
        });
    }
    let ticket_ref = fresh_id(rng, used);
    let instruments: Vec<&String> = patron.saved_instruments.keys().collect();
    let paid_with = (*pick(rng, &instruments)).clone();
    let items = line_entries.iter().fold(0.0, |sum, e| sum + e.cost);
    let mut extras: Vec<TicketCharge> = Vec::new();
    if rng.random_bool(0.7) {
        let rate = *pick(rng, &[0.05, 0.08, 0.1]);
        extras.push(TicketCharge::new(
            "tax",
            py_round(items * rate, 2),
            &paid_with,
        ));
    }
    if mode == ServiceMode::Delivery && rng.random_bool(0.75) {
        let fee = *pick(rng, &[2.0, 2.5, 3.0, 3.5, 4.99]);
        extras.push(TicketCharge::new("delivery_fee", fee, &paid_with));
    }
    if rng.random_bool(0.3) {
        let tip = *pick(rng, &[1.0, 2.0, 2.5, 3.0, 5.0]);
        extras.push(TicketCharge::new("tip", tip, &paid_with));
    }
    let total = py_round(extras.iter().fold(items, |sum, c| sum + c.total), 2);
    extras.shuffle(rng);
    let mut charges = extras;
    // The payment usually comes last, as in the reference.
    let payment = TicketCharge::new("payment", total, &paid_with);
    if rng.random_bool(0.9) {
        charges.push(payment);
    } else {
        charges.insert(0, payment);
    }
    if state == CANCELLED {
        charges.push(TicketCharge::new("refund", total, &paid_with));
    } else if state == "delivered" && rng.random_bool(0.1) {
        // A tip added after the meal.
        charges.push(TicketCharge::new("tip", 2.0, &paid_with));
    }
    let (dropoff, table_info, tag) = match mode {
        ServiceMode::Delivery => {
            let address = if rng.random_bool(0.8) {
                patron.location.clone()
            } else {
                random_address(rng)
            };
            (Some(address), None, digits_in(rng, "BAG-###"))
        }
        ServiceMode::DineIn => {
            let table_no = rng.random_range(1..40).to_string();
            let info = TableInfo {
                zone: pick(rng, &v.zones).clone(),
                seat_count: weighted(rng, &[(2i64, 40), (4, 40), (6, 15), (8, 5)]),
                table_no: table_no.clone(),
            };
            (None, Some(info), format!("TBL-{table_no}"))
        }
        ServiceMode::Takeout => (None, None, digits_in(rng, "TO-###")),
    };
    ServiceTicket {
        ticket_ref,
        guest_ref: patron.guest_ref.clone(),
        service_mode: mode,
        dropoff,
        table_info,
        prep_batches: vec![PrepBatch {
            parcel_tags: vec![tag],
            plate_refs: line_entries.iter().map(|e| e.plate_ref.clone()).collect(),
        }],
        line_entries,
        state: state.to_string(),
        charges,
    }
}
