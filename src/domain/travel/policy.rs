//! The machine-checkable rules of `policies/travel.md`, as named kit rows per write tool.
//! Grounding drops proposals that break one; graph and task verification reject calls that
//! do; the rule name groups rejections in `tracer stats`.
//!
//! The tools already refuse unknown ids, departures that are not open or lack slots,
//! unsaved payment methods, payments that do not add up and a changed traveler count.
//! These rules add what the policy asks and the tools do not check: a booking names at
//! least one traveler, each with a name and a real date of birth, a room that holds at
//! most the party, an agent who manages the package, a departure after today and positive
//! payments; changes and cancellations only of bookings that are not cancelled, and only
//! while the package's own policy allows them ("free cancellation up to N days before
//! departure", "changes up to N days before departure"; a policy we cannot read goes to a
//! human, so the rule refuses); and a change must change something.
//!
//! Architecture invariant: reads the state only.

use super::db::{Booking, BookingTraveler, TravelDb};
use super::tools::CLOCK;
use crate::domain::kit::clock::parse_date;
use crate::domain::kit::policy::{Rule, positive_payments, refuse_if, rule};
use crate::domain::kit::tau2::parse_short_date;
use crate::domain::kit::text::arg_str;
use serde_json::Value;

const BOOK: &str = "book_package";
const CANCEL: &str = "cancel_booking";
const ADD_ONS: &str = "update_booking_add_ons";
const DATE: &str = "update_booking_departure_date";
const TRAVELERS: &str = "update_booking_travelers";
const ROOMING: &str = "update_booking_rooming";

/// Checked in order; the first broken rule is reported.
pub static RULES: [Rule<TravelDb>; 17] = [
    rule(BOOK, "travelers_named", |_, a| {
        named(&travelers(a, "travelers"))
    }),
    rule(BOOK, "room_fits_party", |_, a| {
        fits(a, travelers(a, "travelers").len())
    }),
    rule(BOOK, "agent_manages_package", |db, a| {
        let Some(agent) = a.get("agent_id").and_then(Value::as_str) else {
            return Ok(());
        };
        match db.packages.get(arg_str(a, "package_id")) {
            Some(p) if !p.managed_by_agents.iter().any(|m| m == agent) => Err(format!(
                "agent {agent} does not manage package {}",
                p.package_id
            )),
            _ => Ok(()),
        }
    }),
    rule(BOOK, "departs_after_today", |_, a| {
        let date = arg_str(a, "departure_date");
        match (parse_short_date(date), today()) {
            (Some(d), Some(t)) if d <= t => {
                Err(format!("the departure on {date} is not after today"))
            }
            _ => Ok(()),
        }
    }),
    rule(BOOK, "positive_payments", |_, a| {
        positive_payments(a, "payment_methods", |x| {
            x.as_f64().is_some_and(|x| x > 0.0)
        })
    }),
    rule(CANCEL, "booking_is_active", |db, a| {
        active(db, a).map(|_| ())
    }),
    rule(CANCEL, "cancellation_permitted", |db, a| {
        let b = active(db, a)?;
        window(db, b, "cancellation", |p| &p.policies.cancellation_policy)
    }),
    rule(ADD_ONS, "booking_is_active", |db, a| {
        active(db, a).map(|_| ())
    }),
    rule(ADD_ONS, "real_change", |db, a| {
        let b = active(db, a)?;
        let new: Vec<super::db::AddOn> = a
            .get("add_ons")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        refuse_if(new == b.add_ons, || {
            "the new add-on list is the current one".into()
        })
    }),
    rule(DATE, "booking_is_active", |db, a| active(db, a).map(|_| ())),
    rule(DATE, "real_change", |db, a| {
        let b = active(db, a)?;
        let date = &b.departure_date;
        refuse_if(arg_str(a, "new_departure_date") == *date, || {
            format!("the booking already departs on {date}")
        })
    }),
    rule(DATE, "change_permitted", |db, a| {
        let b = active(db, a)?;
        window(db, b, "change", |p| &p.policies.change_policy)
    }),
    rule(TRAVELERS, "booking_is_active", |db, a| {
        active(db, a).map(|_| ())
    }),
    rule(TRAVELERS, "real_change", |db, a| {
        let b = active(db, a)?;
        let new = travelers(a, "travelers");
        named(&new)?;
        refuse_if(new == b.travelers, || {
            "the traveler list is unchanged".into()
        })
    }),
    rule(ROOMING, "booking_is_active", |db, a| {
        active(db, a).map(|_| ())
    }),
    rule(ROOMING, "room_fits_party", |db, a| {
        fits(a, active(db, a)?.travelers.len())
    }),
    rule(ROOMING, "real_change", |db, a| {
        let b = active(db, a)?;
        let same = a.pointer("/rooming/room_type").and_then(Value::as_str)
            == Some(b.rooming.room_type.as_str())
            && a.pointer("/rooming/occupancy").and_then(Value::as_i64) == Some(b.rooming.occupancy);
        refuse_if(same, || "the rooming is unchanged".into())
    }),
];

fn today() -> Option<i64> {
    parse_date(CLOCK.today())
}

fn travelers(a: &Value, key: &str) -> Vec<BookingTraveler> {
    a.get(key)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// At least one traveler; each with both names and a date of birth that exists and lies
/// before today.
fn named(list: &[BookingTraveler]) -> Result<(), String> {
    if list.is_empty() {
        return Err("a booking needs at least one traveler".into());
    }
    for t in list {
        if t.first_name.trim().is_empty() || t.last_name.trim().is_empty() {
            return Err("every traveler needs a first and a last name".into());
        }
        match (parse_short_date(&t.dob), today()) {
            (Some(d), Some(now)) if d < now => {}
            _ => {
                return Err(format!(
                    "{} {}'s date of birth '{}' is not a past YY-MM-DD date",
                    t.first_name, t.last_name, t.dob
                ));
            }
        }
    }
    Ok(())
}

/// The room holds between one person and the whole party.
fn fits(a: &Value, party: usize) -> Result<(), String> {
    let occupancy = a
        .pointer("/rooming/occupancy")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if occupancy >= 1 && occupancy <= party as i64 {
        Ok(())
    } else {
        Err(format!(
            "a room for {occupancy} does not fit a party of {party}"
        ))
    }
}

/// The booking the call names, which must not be cancelled.
fn active<'a>(db: &'a TravelDb, a: &Value) -> Result<&'a Booking, String> {
    let id = arg_str(a, "booking_id");
    let (_, b) = db
        .find_booking(id)
        .ok_or_else(|| format!("booking {id} does not exist"))?;
    if b.is_cancelled() {
        Err(format!("booking {id} is cancelled"))
    } else {
        Ok(b)
    }
}

/// Days a package policy text allows the action before departure: the number in "up to N
/// days before departure", or `None` when the text does not say.
pub fn days_allowed(text: &str) -> Option<i64> {
    let rest = &text[text.find("up to ")? + "up to ".len()..];
    let (n, tail) = rest.split_once(' ')?;
    tail.starts_with("days before departure")
        .then(|| n.parse().ok())
        .flatten()
}

/// Days from today to the booking's departure.
pub fn days_to_departure(b: &Booking) -> Option<i64> {
    Some(parse_short_date(&b.departure_date)? - today()?)
}

/// The package's policy (`what`: cancellation or change) allows acting on `b` today.
fn window(
    db: &TravelDb,
    b: &Booking,
    what: &str,
    text: impl Fn(&super::db::Package) -> &String,
) -> Result<(), String> {
    let p = db
        .packages
        .get(&b.package_id)
        .ok_or_else(|| format!("package {} does not exist", b.package_id))?;
    let Some(days) = days_allowed(text(p)) else {
        return Err(format!(
            "the {what} policy of package {} does not say when a {what} is allowed; transfer to a human agent",
            p.package_id
        ));
    };
    match days_to_departure(b) {
        Some(left) if left >= days => Ok(()),
        Some(left) => Err(format!(
            "package {} allows a {what} up to {days} days before departure; booking {} departs in {left}",
            p.package_id, b.booking_id
        )),
        None => Err(format!(
            "booking {} has no readable departure date",
            b.booking_id
        )),
    }
}
