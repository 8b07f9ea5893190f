//! The sixteen travel tools: the reference's thirteen (same names, arguments, result shapes
//! and error strings, checks in the same order), its two generic tools
//! (`transfer_to_human_agents`, tau2's `calculate`) and the kit's `think` — 9 read, 7
//! write, the paper's split. Outputs are tau2's `to_json_str` of what the reference
//! returns: models as `model_dump()` JSON, the meeting confirmation as a bare sentence.
//! Descriptions are ours, in
//! `tools.toml` with the arguments.
//!
//! Money is Python floats, computed in the reference's order so totals agree to the bit:
//! [`package_total`] is the price oracle (base price x travelers, plus add-ons, plus the
//! insurance table, rounded to cents), and payments must add up to it after rounding.
//! Every check runs before any mutation, so a failing call leaves the state untouched.
//!
//! Departure (docs/domains/travel.md, `tests/fixtures/reference/travel/departures.json`):
//! cancelling a booking that is already cancelled is refused ("Booking X is already
//! cancelled") instead of appending the negation of the whole payment history again and
//! giving the slots back a second time. Malformed nested arguments (a traveler without a
//! date of birth, a rooming without occupancy) are refused by the schema before the tool
//! runs, where the reference fails in pydantic with its multi-line message; neither changes
//! anything.
//!
//! Architecture invariant: tools see only the `TravelDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{
    AddOn, Agent, Booking, BookingTraveler, Departure, Package, Payment, Rooming, TravelDb,
    Traveler,
};
use crate::domain::ToolFn;
use crate::domain::kit::calc::py_round;
use crate::domain::kit::clock::SimClock;
use crate::domain::kit::glue::read_tool;
use crate::domain::kit::ids::{first_free_slot, slot_list};
use crate::domain::kit::pyjson::{Py, py_float_repr};
use crate::domain::kit::rows::refund_all;
use crate::domain::kit::specs;
use crate::domain::{Args, Tool};
use serde_json::{Value, json};

/// The travel agency's fixed "now" (its policy's clock). New bookings are stamped with its
/// date in four-digit form, `2024-05-15`, as the reference stamps them.
pub const CLOCK: SimClock = SimClock::new("2024-05-15T15:00:00");

/// New bookings take the first free of these ids (the reference's fixed slots).
pub const NEW_BOOKING_SLOTS: u64 = 3;

crate::domain::kit::glue::tool_list!(TravelDb);

fn build() -> Vec<Tool<TravelDb>> {
    let runs: [(&str, ToolFn<TravelDb>); 13] = [
        ("get_traveler_details", read_tool!(traveler, "traveler_id")),
        ("get_agent_details", read_tool!(agent, "agent_id")),
        ("get_package_details", read_tool!(package, "package_id")),
        ("get_booking_details", |db, a| {
            let id = a.str("booking_id")?;
            let (_, b) = db
                .find_booking(id)
                .ok_or_else(|| format!("Booking {id} not found"))?;
            Ok(Py::model(b).to_json_str())
        }),
        ("search_packages", search_packages),
        ("list_all_destinations", |db, _| {
            let mut seen: Vec<(&str, &str)> = Vec::new();
            let mut out = Vec::new();
            for loc in db.packages.in_order().flat_map(|p| &p.destinations) {
                let key = (loc.city.as_str(), loc.country.as_str());
                if !seen.contains(&key) {
                    seen.push(key);
                    out.push(loc);
                }
            }
            Ok(Py::models(out).to_json_str())
        }),
        ("book_package", book_package),
        ("cancel_booking", cancel_booking),
        ("update_booking_add_ons", update_booking_add_ons),
        (
            "update_booking_departure_date",
            update_booking_departure_date,
        ),
        ("update_booking_travelers", update_booking_travelers),
        ("update_booking_rooming", update_booking_rooming),
        ("schedule_agent_meeting", schedule_agent_meeting),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

crate::domain::kit::glue::row_getters!(TravelDb {
    traveler: travelers.get_named("Traveler") -> Traveler,
    agent: agents.get_named("Agent") -> Agent,
    package: packages.get_named("Package") -> Package,
});

/// The booking and the id of the traveler holding it (cloned: the caller mutates later).
fn booking(db: &TravelDb, id: &str) -> Result<(String, Booking), String> {
    db.find_booking(id)
        .map(|(t, b)| (t.traveler_id.clone(), b.clone()))
        .ok_or_else(|| format!("Booking {id} not found"))
}

/// Apply `edit` to the stored booking (the first with this id on the traveler).
fn edit_booking(
    db: &mut TravelDb,
    traveler_id: &str,
    booking_id: &str,
    edit: impl FnOnce(&mut Booking),
) -> Result<String, String> {
    let b = db
        .travelers
        .get_mut(traveler_id)
        .and_then(|t| t.bookings.iter_mut().find(|b| b.booking_id == booking_id))
        .ok_or_else(|| format!("Booking {booking_id} not found"))?;
    edit(b);
    Ok(Py::model(&*b).to_json_str())
}

fn move_slots(db: &mut TravelDb, package_id: &str, date: &str, by: i64) {
    if let Some(d) = db
        .packages
        .get_mut(package_id)
        .and_then(|p| p.departures.get_mut(date))
    {
        d.available_slots += by;
    }
}

/// The reference's departure check, with its three errors.
pub fn validate_departure<'a>(
    package: &'a Package,
    date: &str,
    required_slots: i64,
) -> Result<&'a Departure, String> {
    let id = &package.package_id;
    let dep = package
        .departures
        .get(date)
        .ok_or_else(|| format!("Package {id} not offered on {date}"))?;
    if !dep.is_open() {
        return Err(format!(
            "Departure on {date} for package {id} is not available"
        ));
    }
    if dep.available_slots < required_slots {
        return Err(format!(
            "Not enough slots on {date}. Needed {required_slots}, available {}",
            dep.available_slots
        ));
    }
    Ok(dep)
}

/// Insurance per traveler: the label stripped and lower-cased must be exactly `standard`
/// ($50) or `premium` ($100); any other label (and none) costs nothing.
pub fn insurance_per_person(label: Option<&str>) -> f64 {
    match label.map(|l| l.trim().to_lowercase()).as_deref() {
        Some("standard") => 50.0,
        Some("premium") => 100.0,
        _ => 0.0,
    }
}

/// The price oracle: base x travelers + add-ons + insurance, summed in the reference's
/// order and rounded to cents as Python's `round(x, 2)` does.
pub fn package_total(
    base: f64,
    travelers: usize,
    add_ons: &[AddOn],
    insurance: Option<&str>,
) -> f64 {
    let n = travelers as f64;
    let mut total = base * n;
    total += add_ons.iter().fold(0.0, |s, a| s + a.price);
    total += insurance_per_person(insurance) * n;
    py_round(total, 2)
}

/// Python's `round(sum(amounts), 2)` printed as Python prints it: `0` for no payments (an
/// int), else the float.
fn paid_text(amounts: &[f64]) -> (f64, String) {
    let sum = py_round(amounts.iter().fold(0.0, |s, a| s + a), 2);
    let text = if amounts.is_empty() {
        "0".to_string()
    } else {
        py_float_repr(sum)
    };
    (sum, text)
}

fn list<T: serde::de::DeserializeOwned>(a: &Args, key: &str) -> Result<Vec<T>, String> {
    a.parse(key)
}

fn saved_method_check(t: &Traveler, id: &str) -> Result<(), String> {
    if t.payment_methods.contains_key(id) {
        Ok(())
    } else {
        Err(format!("Payment method {id} not found for traveler"))
    }
}

fn search_packages(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    // Python truthiness decides whether a filter applies; `None` vs "" decides a match.
    let given = |k: &str| a.value(k).and_then(Value::as_str);
    let truthy = |k: &str| given(k).filter(|s| !s.is_empty());
    let (city, country) = (given("destination_city"), given("destination_country"));
    let mut out = Vec::new();
    for p in db.packages.in_order() {
        if truthy("destination_city").is_some() || truthy("destination_country").is_some() {
            let hit = p.destinations.iter().any(|l| {
                city.is_none_or(|c| l.city == c) && country.is_none_or(|c| l.country == c)
            });
            if !hit {
                continue;
            }
        }
        if truthy("category").is_some_and(|c| p.category != c) {
            continue;
        }
        if truthy("departure_date").is_some_and(|d| !p.departures.contains_key(d)) {
            continue;
        }
        if p.departures
            .values()
            .any(|d| d.is_open() && d.available_slots > 0)
        {
            out.push(p);
        }
    }
    Ok(Py::models(out).to_json_str())
}

fn book_package(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    let travelers: Vec<BookingTraveler> = list(a, "travelers")?;
    let rooming: Rooming = a.parse("rooming")?;
    let add_ons: Vec<AddOn> = list(a, "add_ons")?;
    let payments: Vec<Payment<f64>> = list(a, "payment_methods")?;
    let traveler_id = a.str("traveler_id")?;
    let holder = traveler(db, traveler_id)?;
    let package_id = a.str("package_id")?;
    let pkg = package(db, package_id)?;
    let agent_id = match a.value("agent_id").and_then(Value::as_str) {
        Some(id) => id.to_string(),
        None => pkg
            .managed_by_agents
            .first()
            .cloned()
            .ok_or("No managing agent available for this package")?,
    };
    agent(db, &agent_id)?;
    let date = a.str("departure_date")?;
    let n = travelers.len();
    let dep = validate_departure(pkg, date, n as i64)?;
    let insurance = a.value("insurance").and_then(Value::as_str);
    let total = package_total(dep.base_price, n, &add_ons, insurance);
    for p in &payments {
        saved_method_check(holder, &p.payment_id)?;
    }
    let amounts: Vec<f64> = payments.iter().map(|p| p.amount).collect();
    let (paid, paid_shown) = paid_text(&amounts);
    if total != paid {
        return Err(format!(
            "Payment amount does not add up, total price is {}, but paid {paid_shown}",
            py_float_repr(total)
        ));
    }
    let slots = slot_list("TAU", NEW_BOOKING_SLOTS);
    let slots: Vec<&str> = slots.iter().map(String::as_str).collect();
    let id = first_free_slot(&slots, |s| db.find_booking(s).is_some())
        .ok_or("Too many bookings created")?;
    let new = Booking {
        booking_id: id.clone(),
        package_id: package_id.to_string(),
        agent_id: agent_id.clone(),
        booking_date: CLOCK.today().to_string(),
        departure_date: date.to_string(),
        status: "confirmed".into(),
        travelers,
        rooming,
        add_ons,
        insurance: insurance.map(str::to_string),
        payment_history: payments,
        total_price: total,
        notes: None,
    };
    let out = Py::model(&new).to_json_str();
    if let Some(t) = db.travelers.get_mut(traveler_id) {
        t.bookings.push(new);
    }
    db.note_new_booking(&id, traveler_id);
    move_slots(db, package_id, date, -(n as i64));
    if let Some(ag) = db.agents.get_mut(&agent_id) {
        if !ag.assigned_travelers.iter().any(|t| t == traveler_id) {
            ag.assigned_travelers.push(traveler_id.to_string());
        }
        if !ag.bookings_handled.contains(&id) {
            ag.bookings_handled.push(id);
        }
    }
    Ok(out)
}

fn cancel_booking(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    let (owner, b) = booking(db, a.str("booking_id")?)?;
    package(db, &b.package_id)?;
    // Departure: the reference negates the whole history again, refunding its own refunds.
    if b.is_cancelled() {
        return Err(format!("Booking {} is already cancelled", b.booking_id));
    }
    move_slots(
        db,
        &b.package_id,
        &b.departure_date,
        b.travelers.len() as i64,
    );
    edit_booking(db, &owner, &b.booking_id, |b| {
        refund_all(&mut b.payment_history);
        b.status = "cancelled".into();
    })
}

/// Record `delta` (already rounded) against the method unless it is zero.
fn record_delta(b: &mut Booking, method: &str, delta: f64) {
    if delta != 0.0 {
        b.payment_history.push(Payment::new(method, delta));
    }
}

fn update_booking_add_ons(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    let (owner, b) = booking(db, a.str("booking_id")?)?;
    let pkg = package(db, &b.package_id)?;
    let method = a.str("payment_method_id")?;
    saved_method_check(traveler(db, &owner)?, method)?;
    let add_ons: Vec<AddOn> = list(a, "add_ons")?;
    let dep = validate_departure(pkg, &b.departure_date, 0)?;
    let new_total = package_total(
        dep.base_price,
        b.travelers.len(),
        &add_ons,
        b.insurance.as_deref(),
    );
    let delta = py_round(new_total - b.total_price, 2);
    edit_booking(db, &owner, &b.booking_id, |b| {
        record_delta(b, method, delta);
        b.add_ons = add_ons;
        b.total_price = new_total;
    })
}

fn update_booking_departure_date(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    let (owner, b) = booking(db, a.str("booking_id")?)?;
    let pkg = package(db, &b.package_id)?;
    let method = a.str("payment_method_id")?;
    saved_method_check(traveler(db, &owner)?, method)?;
    let n = b.travelers.len();
    let date = a.str("new_departure_date")?;
    let dep = validate_departure(pkg, date, n as i64)?;
    let new_total = package_total(dep.base_price, n, &b.add_ons, b.insurance.as_deref());
    let delta = py_round(new_total - b.total_price, 2);
    let package_id = b.package_id.clone();
    move_slots(db, &package_id, &b.departure_date, n as i64);
    move_slots(db, &package_id, date, -(n as i64));
    edit_booking(db, &owner, &b.booking_id, |b| {
        record_delta(b, method, delta);
        b.departure_date = date.to_string();
        b.total_price = new_total;
    })
}

fn update_booking_travelers(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    let (owner, b) = booking(db, a.str("booking_id")?)?;
    let travelers: Vec<BookingTraveler> = list(a, "travelers")?;
    if travelers.len() != b.travelers.len() {
        return Err("Number of travelers does not match current booking".into());
    }
    edit_booking(db, &owner, &b.booking_id, |b| b.travelers = travelers)
}

fn update_booking_rooming(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    let (owner, b) = booking(db, a.str("booking_id")?)?;
    let rooming: Rooming = a.parse("rooming")?;
    edit_booking(db, &owner, &b.booking_id, |b| b.rooming = rooming)
}

fn schedule_agent_meeting(db: &mut TravelDb, a: &Args) -> Result<String, String> {
    let agent_id = a.str("agent_id")?;
    let ag = agent(db, agent_id)?;
    traveler(db, a.str("traveler_id")?)?;
    let date = a.str("date")?;
    let range = a.str("time_range")?;
    let day = ag
        .availability
        .get(date)
        .ok_or_else(|| format!("Agent is not available on {date}"))?;
    let Some(i) = day.slots.iter().position(|s| s == range) else {
        return Err(format!("Time slot {range} not available on {date}"));
    };
    if let Some(d) = db
        .agents
        .get_mut(agent_id)
        .and_then(|ag| ag.availability.get_mut(date))
    {
        d.slots.remove(i);
    }
    Ok(format!(
        "Meeting scheduled with agent {agent_id} on {date} at {range}"
    ))
}

/// The arguments of a booking's payment entries as `json!` values (for proposals).
pub fn payment_json(id: &str, amount: f64) -> Value {
    json!({"payment_id": id, "amount": amount})
}
