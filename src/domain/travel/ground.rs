//! Grounding hooks for travel: candidate arguments per tool (`propose_calls`); the ids a
//! call reveals are learnt as `tools.toml` declares (`learns`), and the rules proposals
//! respect are in `policy.rs`.
//!
//! Proposals are about the context's traveler: what the conversation revealed comes first
//! (the booking just made, the packages a search returned, the agent just looked up), then
//! the traveler's own bookings and their packages and agents, then the catalogue in a
//! seeded order. Write proposals pay exactly: a new booking's payments add up to the price
//! oracle ([`package_total`]) and come from the traveler's saved methods; changes with a
//! price effect name a saved method for the delta the tool will compute.
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{AddOn, Booking, BookingTraveler, Package, TravelDb, Traveler};
use super::generate::{add_on_catalogue, room_types};
use super::tools::{NEW_BOOKING_SLOTS, package_total, payment_json};
use crate::domain::GroundingContext;
use crate::domain::kit::ids::slot_list;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

fn traveler_of<'a>(db: &'a TravelDb, ctx: &GroundingContext) -> Option<&'a Traveler> {
    propose::customer(ctx, "traveler_id", &db.travelers)
}

/// The traveler's bookings matching `keep`: known ones first, the rest shuffled. Looked up
/// by id as the tools do (the first holder in scanning order), and only those this
/// traveler holds.
fn ranked_bookings<'a>(
    db: &'a TravelDb,
    ctx: &GroundingContext,
    traveler: Option<&Traveler>,
    rng: &mut ChaCha8Rng,
    keep: impl Fn(&Booking) -> bool,
) -> Vec<&'a Booking> {
    let own: Vec<String> = traveler
        .map(|t| t.bookings.iter().map(|b| b.booking_id.clone()).collect())
        .unwrap_or_default();
    let row = |id: &str| {
        let (t, b) = db.find_booking(id)?;
        (traveler.is_none_or(|me| me.traveler_id == t.traveler_id) && keep(b)).then_some(b)
    };
    propose::ranked_rows(ctx, "booking_id", own, row, rng)
}

/// Packages: those the conversation revealed, then the traveler's booked ones, then the
/// catalogue, each tier shuffled.
fn ranked_packages<'a>(
    db: &'a TravelDb,
    ctx: &GroundingContext,
    traveler: Option<&Traveler>,
    rng: &mut ChaCha8Rng,
    keep: impl Fn(&Package) -> bool,
) -> Vec<&'a Package> {
    let booked: Vec<String> = traveler
        .map(|t| t.bookings.iter().map(|b| b.package_id.clone()).collect())
        .unwrap_or_default();
    let all: Vec<String> = db.packages.keys().map(str::to_string).collect();
    propose::tiered(
        ctx,
        "package_id",
        vec![booked, all],
        |id| db.packages.get(id).is_some_and(&keep),
        rng,
    )
    .iter()
    .filter_map(|id| db.packages.get(id))
    .collect()
}

/// Agents: revealed ones, then those handling the traveler's bookings or managing known
/// packages, then every agent who manages a package.
fn ranked_agents(
    db: &TravelDb,
    ctx: &GroundingContext,
    traveler: Option<&Traveler>,
    rng: &mut ChaCha8Rng,
) -> Vec<String> {
    let mut near: Vec<String> = traveler
        .map(|t| t.bookings.iter().map(|b| b.agent_id.clone()).collect())
        .unwrap_or_default();
    for p in ctx.values("package_id") {
        if let Some(p) = db.packages.get(p) {
            near.extend(p.managed_by_agents.iter().cloned());
        }
    }
    // Beyond those, the agents a traveler can find through the package catalogue (an
    // agent who manages no package is someone they could not name to the agency).
    let all: Vec<String> = db
        .agents
        .keys()
        .filter(|a| {
            db.packages
                .iter()
                .any(|(_, p)| p.managed_by_agents.iter().any(|m| m == a))
        })
        .map(str::to_string)
        .collect();
    propose::tiered(
        ctx,
        "agent_id",
        vec![near, all],
        |id| db.agents.contains(id),
        rng,
    )
}

/// The booking's people as the tools take them.
fn party(t: &Traveler, size: usize) -> Vec<BookingTraveler> {
    let mut out = vec![BookingTraveler {
        first_name: t.name.first_name.clone(),
        last_name: t.name.last_name.clone(),
        dob: t.dob.clone(),
    }];
    out.extend(t.saved_companions.iter().map(|c| BookingTraveler {
        first_name: c.first_name.clone(),
        last_name: c.last_name.clone(),
        dob: c.dob.clone(),
    }));
    out.truncate(size);
    out
}

fn room_for(n: usize, rng: &mut ChaCha8Rng) -> Value {
    let kind = match n {
        1 => "single",
        2 if rng.random_bool(0.5) => "twin",
        2 => "double",
        _ => "family_suite",
    };
    json!({"room_type": kind, "occupancy": n})
}

/// Payments that add up to `total`: all on one method, or split over two.
fn pay(t: &Traveler, total: f64, split: bool, rng: &mut ChaCha8Rng) -> Option<Value> {
    let methods: Vec<&str> = t.payment_methods.keys().collect();
    if methods.is_empty() {
        return None;
    }
    if split && methods.len() > 1 && total >= 200.0 {
        let first = (total / 2.0).floor();
        let rest = crate::domain::kit::calc::py_round(total - first, 2);
        return Some(json!([
            payment_json(methods[0], first),
            payment_json(methods[1], rest)
        ]));
    }
    let m = methods[rng.random_range(0..methods.len())];
    Some(json!([payment_json(m, total)]))
}

/// The saved method a traveler would use for a change: the one the booking was paid
/// with, when still saved, else the first.
fn preferred_method(t: &Traveler, b: &Booking) -> Option<String> {
    b.payment_history
        .iter()
        .map(|p| p.payment_id.as_str())
        .find(|id| t.payment_methods.contains_key(id))
        .or_else(|| t.payment_methods.keys().next())
        .map(str::to_string)
}

fn add_on_json(list: &[AddOn]) -> Value {
    serde_json::to_value(list).unwrap_or(Value::Null)
}

pub fn propose_calls(
    db: &TravelDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let traveler = traveler_of(db, ctx);
    let me = traveler.map_or("(not identified)", |t| t.traveler_id.as_str());
    let active = |b: &Booking| !b.is_cancelled();
    let mut out: Vec<Value> = Vec::new();
    match tool {
        "get_traveler_details" => {
            out.extend(traveler.map(|t| json!({"traveler_id": t.traveler_id})));
        }
        "get_booking_details" => {
            let found = ranked_bookings(db, ctx, traveler, rng, |_| true);
            out.extend(found.iter().map(|b| json!({"booking_id": b.booking_id})));
        }
        "get_package_details" => {
            for p in ranked_packages(db, ctx, traveler, rng, |_| true)
                .into_iter()
                .take(4)
            {
                out.push(json!({"package_id": p.package_id}));
            }
        }
        "get_agent_details" => {
            for a in ranked_agents(db, ctx, traveler, rng).into_iter().take(4) {
                out.push(json!({"agent_id": a}));
            }
        }
        "list_all_destinations" => out.push(json!({})),
        "search_packages" => {
            for p in ranked_packages(db, ctx, traveler, rng, |_| true)
                .into_iter()
                .take(3)
            {
                let Some(loc) = p.destinations.first() else {
                    continue;
                };
                out.push(json!({"destination_city": loc.city}));
                out.push(json!({"destination_country": loc.country, "category": p.category}));
                if let Some(date) = p.departures.keys().next() {
                    out.push(json!({"destination_country": loc.country, "departure_date": date}));
                }
            }
        }
        "think" => out.push(json!({"thought": format!(
            "Check traveler {me}'s booking, the package's departures and its policies before any change.")})),
        "transfer_to_human_agents" => out.push(json!({"summary": format!(
            "Traveler {me} needs help the booking tools cannot give.")})),
        "calculate" => {
            for b in ranked_bookings(db, ctx, traveler, rng, active).into_iter().take(2) {
                let addons: Vec<String> = b.add_ons.iter().map(|a| a.price.to_string()).collect();
                let mut expr = format!("{} / {}", b.total_price, b.travelers.len().max(1));
                if !addons.is_empty() {
                    expr = format!("{} - ({})", b.total_price, addons.join(" + "));
                }
                out.push(json!({"expression": expr}));
            }
        }
        "book_package" => {
            if let Some(t) = traveler {
                book_proposals(db, ctx, t, rng, &mut out);
            }
        }
        "cancel_booking" => {
            for b in ranked_bookings(db, ctx, traveler, rng, active) {
                out.push(json!({"booking_id": b.booking_id}));
            }
        }
        "update_booking_add_ons" => {
            for b in ranked_bookings(db, ctx, traveler, rng, active).into_iter().take(3) {
                add_on_proposals(db, b, rng, &mut out);
            }
        }
        "update_booking_departure_date" => {
            for b in ranked_bookings(db, ctx, traveler, rng, active) {
                let (Some((owner, _)), Some(p)) =
                    (db.find_booking(&b.booking_id), db.packages.get(&b.package_id))
                else {
                    continue;
                };
                let Some(m) = preferred_method(owner, b) else {
                    continue;
                };
                for (date, d) in p.departures.iter() {
                    if date != b.departure_date
                        && d.is_open()
                        && d.available_slots >= b.travelers.len() as i64
                    {
                        out.push(json!({"booking_id": b.booking_id,
                            "new_departure_date": date, "payment_method_id": m}));
                    }
                }
            }
        }
        "update_booking_travelers" => {
            for b in ranked_bookings(db, ctx, traveler, rng, active) {
                traveler_proposals(db, b, &mut out);
            }
        }
        "update_booking_rooming" => {
            for b in ranked_bookings(db, ctx, traveler, rng, active) {
                let n = b.travelers.len();
                for kind in room_types() {
                    let occupancy = if kind == "single" { 1 } else { n };
                    if *kind != b.rooming.room_type && (kind != "single" || n == 1) {
                        out.push(json!({"booking_id": b.booking_id,
                            "rooming": {"room_type": kind, "occupancy": occupancy}}));
                    }
                }
            }
            out = propose::shuffled(out, rng);
        }
        "schedule_agent_meeting" => {
            if let Some(t) = traveler {
                for a in ranked_agents(db, ctx, Some(t), rng).into_iter().take(3) {
                    let Some(agent) = db.agents.get(&a) else {
                        continue;
                    };
                    for (date, day) in agent.availability.iter() {
                        if let Some(slot) = day.slots.first() {
                            out.push(json!({"agent_id": a, "date": date,
                                "time_range": slot, "traveler_id": t.traveler_id}));
                        }
                    }
                }
            }
        }
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}

fn book_proposals(
    db: &TravelDb,
    ctx: &GroundingContext,
    t: &Traveler,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let free = slot_list("TAU", NEW_BOOKING_SLOTS)
        .iter()
        .any(|s| db.find_booking(s).is_none());
    if !free || t.payment_methods.is_empty() {
        return;
    }
    let catalogue = add_on_catalogue();
    let bookable = |p: &Package| {
        p.departures
            .values()
            .any(|d| d.is_open() && d.available_slots > 0)
    };
    for (k, p) in ranked_packages(db, ctx, Some(t), rng, bookable)
        .into_iter()
        .take(3)
        .enumerate()
    {
        let open: Vec<(&str, i64, f64)> = p
            .departures
            .iter()
            .filter(|(_, d)| d.is_open() && d.available_slots > 0)
            .map(|(k, d)| (k, d.available_slots, d.base_price))
            .collect();
        let (date, slots, base) = open[rng.random_range(0..open.len())];
        let most = (1 + t.saved_companions.len()).min(slots as usize).min(3);
        let n = rng.random_range(1..=most);
        let people = party(t, n);
        let extras: Vec<AddOn> = (0..rng.random_range(0..=2usize))
            .map(|_| catalogue[rng.random_range(0..catalogue.len())].clone())
            .fold(Vec::new(), |mut v, a| {
                if !v.contains(&a) {
                    v.push(a);
                }
                v
            });
        let insurance = match rng.random_range(0..3) {
            0 => None,
            1 => Some("standard"),
            _ => Some("premium"),
        };
        let total = package_total(base, n, &extras, insurance);
        let Some(payments) = pay(t, total, k % 2 == 1, rng) else {
            continue;
        };
        let mut args = json!({
            "traveler_id": t.traveler_id,
            "package_id": p.package_id,
            "departure_date": date,
            "travelers": serde_json::to_value(&people).unwrap_or(Value::Null),
            "rooming": room_for(n, rng),
            "add_ons": add_on_json(&extras),
            "insurance": insurance,
            "payment_methods": payments,
        });
        if p.managed_by_agents.len() > 1 && rng.random_bool(0.5) {
            args["agent_id"] = json!(p.managed_by_agents[1]);
        }
        out.push(args);
    }
}

fn add_on_proposals(db: &TravelDb, b: &Booking, rng: &mut ChaCha8Rng, out: &mut Vec<Value>) {
    let Some((owner, _)) = db.find_booking(&b.booking_id) else {
        return;
    };
    let Some(m) = preferred_method(owner, b) else {
        return;
    };
    let catalogue = add_on_catalogue();
    let fresh: Vec<&AddOn> = catalogue
        .iter()
        .filter(|a| !b.add_ons.contains(a))
        .collect();
    let mut lists: Vec<Vec<AddOn>> = Vec::new();
    if let Some(a) = fresh.get(rng.random_range(0..fresh.len().max(1))) {
        let mut more = b.add_ons.clone();
        more.push((*a).clone());
        lists.push(more);
    }
    if !b.add_ons.is_empty() {
        let mut fewer = b.add_ons.clone();
        fewer.remove(rng.random_range(0..fewer.len()));
        lists.push(fewer);
    }
    for list in lists {
        out.push(
            json!({"booking_id": b.booking_id, "add_ons": add_on_json(&list),
            "payment_method_id": m}),
        );
    }
}

/// Correct a companion's date of birth to the one saved on the profile, or swap someone
/// on the booking for a saved companion who is not on it.
fn traveler_proposals(db: &TravelDb, b: &Booking, out: &mut Vec<Value>) {
    let Some((owner, _)) = db.find_booking(&b.booking_id) else {
        return;
    };
    let saved: Vec<BookingTraveler> = party(owner, usize::MAX);
    let same_name = |x: &BookingTraveler, y: &BookingTraveler| {
        x.first_name == y.first_name && x.last_name == y.last_name
    };
    let mut fixes = Vec::new();
    let mut swaps = Vec::new();
    for (i, current) in b.travelers.iter().enumerate() {
        for c in &saved {
            let mut list = b.travelers.clone();
            if same_name(c, current) && c.dob != current.dob {
                list[i].dob = c.dob.clone();
                fixes.push(list);
            } else if i > 0 && !b.travelers.iter().any(|x| same_name(x, c)) {
                list[i] = c.clone();
                swaps.push(list);
            }
        }
    }
    for list in fixes.into_iter().chain(swaps) {
        out.push(json!({"booking_id": b.booking_id,
            "travelers": serde_json::to_value(&list).unwrap_or(Value::Null)}));
    }
}
