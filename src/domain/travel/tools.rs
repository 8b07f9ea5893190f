//! The sixteen travel tools: the reference's thirteen (same names, arguments, result shapes
//! and error strings, checks in the same order), its two generic tools
//! (`transfer_to_human_agents`, tau2's `calculate`) and the kit's `think` — 9 read, 7
//! write, the paper's split. Outputs are tau2's `to_json_str` of what the reference
//! returns: models as `model_dump()` JSON, the meeting confirmation as a bare sentence.
//! Descriptions are ours.
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
    AddOn, Agent, Booking, BookingPayment, BookingTraveler, Departure, Package, Rooming, TravelDb,
    Traveler,
};
use crate::domain::kit::calc::py_round;
use crate::domain::kit::clock::SimClock;
use crate::domain::kit::ids::{first_free_slot, slot_list};
use crate::domain::kit::pyjson::{Py, py_float_repr};
use crate::domain::kit::schema::{array, integer, nullable, number, object, string, tool};
use crate::domain::kit::{generic, tau2_generic};
use crate::domain::{Args, Tool, ToolKind};
use serde_json::{Value, json};
use std::sync::LazyLock;

/// The travel agency's fixed "now" (its policy's clock). New bookings are stamped with its
/// date in four-digit form, `2024-05-15`, as the reference stamps them.
pub const CLOCK: SimClock = SimClock::new("2024-05-15T15:00:00");

/// New bookings take the first free of these ids (the reference's fixed slots).
pub const NEW_BOOKING_SLOTS: u64 = 3;

/// All tools, in the order they are listed to a model.
pub fn all() -> &'static [Tool<TravelDb>] {
    static TOOLS: LazyLock<Vec<Tool<TravelDb>>> = LazyLock::new(build);
    &TOOLS
}

const BOOKING_ID: &str = "Booking id, e.g. 'BKG-4821' (from the traveler's profile).";
const PAYMENT_METHOD: &str = "Id of one of the traveler's saved payment methods, used for the charge or refund of any price difference.";

fn traveler_schema() -> Value {
    object(
        &[
            ("first_name", string("First name.")),
            ("last_name", string("Last name.")),
            ("dob", string("Date of birth, YY-MM-DD.")),
        ],
        &["first_name", "last_name", "dob"],
    )
}

fn rooming_schema() -> Value {
    object(
        &[
            (
                "room_type",
                string("Room type, e.g. 'single', 'double', 'twin', 'suite'."),
            ),
            ("occupancy", integer("Number of people in the room.")),
        ],
        &["room_type", "occupancy"],
    )
}

fn add_on_schema() -> Value {
    object(
        &[
            (
                "type",
                string("Kind of add-on, e.g. 'excursion', 'transfer', 'meal'."),
            ),
            ("description", string("What the add-on is.")),
            ("price", number("Price of the add-on.")),
        ],
        &["type", "description", "price"],
    )
}

fn payment_schema() -> Value {
    object(
        &[
            (
                "payment_id",
                string("Id of one of the traveler's saved payment methods."),
            ),
            ("amount", number("Amount charged to it.")),
        ],
        &["payment_id", "amount"],
    )
}

fn build() -> Vec<Tool<TravelDb>> {
    use ToolKind::{Read, Write};
    vec![
        tool(
            "get_traveler_details",
            Read,
            "Show a traveler's profile: name, address, contact, date of birth, passport, preferences, saved payment methods, saved companions, memberships and every booking in full.",
            object(
                &[("traveler_id", string("Traveler id, e.g. 'Q7M2KXD'."))],
                &["traveler_id"],
            ),
            |db, a| Ok(Py::model(traveler(db, a.str("traveler_id")?)?).to_json_str()),
        ),
        tool(
            "get_agent_details",
            Read,
            "Show a travel agent's profile: contact, agency, languages, regions, the packages they manage and their open meeting slots by date.",
            object(
                &[("agent_id", string("Agent id, e.g. 'H3V8PLA'."))],
                &["agent_id"],
            ),
            |db, a| Ok(Py::model(agent(db, a.str("agent_id")?)?).to_json_str()),
        ),
        tool(
            "get_package_details",
            Read,
            "Show a package: destinations, duration, departure points, dated departures (status, base price per person, currency, open slots), itinerary, inclusions, accommodations, transport, activities, its cancellation / change / refund policies and managing agents.",
            object(
                &[("package_id", string("Package id, e.g. 'T5RK9WE'."))],
                &["package_id"],
            ),
            |db, a| Ok(Py::model(package(db, a.str("package_id")?)?).to_json_str()),
        ),
        tool(
            "get_booking_details",
            Read,
            "Show one booking: package, agent, dates, status, travelers, rooming, add-ons, insurance, payment history and total price.",
            object(&[("booking_id", string(BOOKING_ID))], &["booking_id"]),
            |db, a| {
                let id = a.str("booking_id")?;
                let (_, b) = db
                    .find_booking(id)
                    .ok_or_else(|| format!("Booking {id} not found"))?;
                Ok(Py::model(b).to_json_str())
            },
        ),
        tool(
            "search_packages",
            Read,
            "Find packages by destination city and/or country (exact names), category, and a departure date (YY-MM-DD) they offer. Only packages with at least one bookable departure are returned.",
            object(
                &[
                    (
                        "destination_city",
                        nullable(string("Destination city, e.g. 'Kyoto'.")),
                    ),
                    (
                        "destination_country",
                        nullable(string("Destination country, e.g. 'Japan'.")),
                    ),
                    (
                        "category",
                        nullable(string("Package category, e.g. 'adventure'.")),
                    ),
                    (
                        "departure_date",
                        nullable(string("A departure date the package must offer, YY-MM-DD.")),
                    ),
                ],
                &[],
            ),
            search_packages,
        ),
        tool(
            "list_all_destinations",
            Read,
            "List every destination (city and country) any package visits, without repeats.",
            object(&[], &[]),
            |db, _| {
                let mut seen: Vec<(&str, &str)> = Vec::new();
                let mut out = Vec::new();
                for loc in db.packages_in_order().flat_map(|p| &p.destinations) {
                    let key = (loc.city.as_str(), loc.country.as_str());
                    if !seen.contains(&key) {
                        seen.push(key);
                        out.push(loc);
                    }
                }
                Ok(Py::models(out).to_json_str())
            },
        ),
        tool(
            "book_package",
            Write,
            "Book a package departure for a traveler. The departure must be 'available' with a slot for every traveler. Total = base price per person x travelers + add-on prices + insurance ('standard' $50 or 'premium' $100 per traveler; any other label is free); the payments, from the traveler's saved methods, must add up to it exactly. The booking's agent defaults to the package's first managing agent. List the details and get an explicit yes first. Returns the new booking.",
            object(
                &[
                    ("traveler_id", string("Traveler id of the account holder.")),
                    ("package_id", string("Package id.")),
                    ("departure_date", string("Departure date, YY-MM-DD.")),
                    (
                        "travelers",
                        array(traveler_schema(), "Everyone travelling."),
                    ),
                    ("rooming", rooming_schema()),
                    (
                        "add_ons",
                        array(add_on_schema(), "Add-ons requested (may be empty)."),
                    ),
                    (
                        "insurance",
                        nullable(string(
                            "Insurance label: 'standard', 'premium', or null for none.",
                        )),
                    ),
                    (
                        "payment_methods",
                        array(payment_schema(), "Payments that add up to the total price."),
                    ),
                    (
                        "agent_id",
                        nullable(string(
                            "Handling agent; default: the package's first managing agent.",
                        )),
                    ),
                ],
                &[
                    "traveler_id",
                    "package_id",
                    "departure_date",
                    "travelers",
                    "rooming",
                    "add_ons",
                    "insurance",
                    "payment_methods",
                ],
            ),
            book_package,
        ),
        tool(
            "cancel_booking",
            Write,
            "Cancel a booking: every payment is refunded to its method (a negative entry), the status becomes 'cancelled' and the slots return to the departure. Check the package's cancellation policy first, then summarise and get an explicit yes. Returns the cancelled booking.",
            object(&[("booking_id", string(BOOKING_ID))], &["booking_id"]),
            cancel_booking,
        ),
        tool(
            "update_booking_add_ons",
            Write,
            "Replace a booking's add-on list with a new one; the difference between the new total and the old is charged (or refunded, as a negative entry) to one saved payment method. The departure must still be 'available'. Confirm the change and its price effect first. Returns the updated booking.",
            object(
                &[
                    ("booking_id", string(BOOKING_ID)),
                    (
                        "add_ons",
                        array(add_on_schema(), "The complete new add-on list."),
                    ),
                    ("payment_method_id", string(PAYMENT_METHOD)),
                ],
                &["booking_id", "add_ons", "payment_method_id"],
            ),
            update_booking_add_ons,
        ),
        tool(
            "update_booking_departure_date",
            Write,
            "Move a booking to another departure of the same package (status 'available', a slot for every traveler); the price difference is charged or refunded to one saved payment method. Confirm first. Returns the updated booking.",
            object(
                &[
                    ("booking_id", string(BOOKING_ID)),
                    (
                        "new_departure_date",
                        string("The new departure date, YY-MM-DD."),
                    ),
                    ("payment_method_id", string(PAYMENT_METHOD)),
                ],
                &["booking_id", "new_departure_date", "payment_method_id"],
            ),
            update_booking_departure_date,
        ),
        tool(
            "update_booking_travelers",
            Write,
            "Replace the names and dates of birth of a booking's travelers; the number of travelers cannot change. Confirm first. Returns the updated booking.",
            object(
                &[
                    ("booking_id", string(BOOKING_ID)),
                    (
                        "travelers",
                        array(traveler_schema(), "The complete corrected traveler list."),
                    ),
                ],
                &["booking_id", "travelers"],
            ),
            update_booking_travelers,
        ),
        tool(
            "update_booking_rooming",
            Write,
            "Change a booking's room type and occupancy (no price change). Confirm first. Returns the updated booking.",
            object(
                &[
                    ("booking_id", string(BOOKING_ID)),
                    ("rooming", rooming_schema()),
                ],
                &["booking_id", "rooming"],
            ),
            update_booking_rooming,
        ),
        tool(
            "schedule_agent_meeting",
            Write,
            "Book one of an agent's open meeting slots for a traveler; the slot is then taken. Confirm the agent, date and time first.",
            object(
                &[
                    ("agent_id", string("Agent id.")),
                    (
                        "date",
                        string("Meeting date, YY-MM-DD, one the agent has open."),
                    ),
                    (
                        "time_range",
                        string("One of the agent's open slots that day, HH:MM-HH:MM."),
                    ),
                    ("traveler_id", string("Traveler id.")),
                ],
                &["agent_id", "date", "time_range", "traveler_id"],
            ),
            schedule_agent_meeting,
        ),
        generic::transfer_to_human_agents(),
        tau2_generic::calculate(),
        generic::think(),
    ]
}

pub fn traveler<'a>(db: &'a TravelDb, id: &str) -> Result<&'a Traveler, String> {
    db.travelers
        .get(id)
        .ok_or_else(|| format!("Traveler {id} not found"))
}

pub fn agent<'a>(db: &'a TravelDb, id: &str) -> Result<&'a Agent, String> {
    db.agents
        .get(id)
        .ok_or_else(|| format!("Agent {id} not found"))
}

pub fn package<'a>(db: &'a TravelDb, id: &str) -> Result<&'a Package, String> {
    db.packages
        .get(id)
        .ok_or_else(|| format!("Package {id} not found"))
}

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
    for p in db.packages_in_order() {
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
    let payments: Vec<BookingPayment> = list(a, "payment_methods")?;
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
        let refunds: Vec<BookingPayment> = b
            .payment_history
            .iter()
            .map(|p| BookingPayment {
                payment_id: p.payment_id.clone(),
                amount: -p.amount,
            })
            .collect();
        b.payment_history.extend(refunds);
        b.status = "cancelled".into();
    })
}

/// Record `delta` (already rounded) against the method unless it is zero.
fn record_delta(b: &mut Booking, method: &str, delta: f64) {
    if delta != 0.0 {
        b.payment_history.push(BookingPayment {
            payment_id: method.to_string(),
            amount: delta,
        });
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
