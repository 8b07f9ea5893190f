//! Refinement and verification hooks for travel: what a traveler knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: sentences in
//! `requests.toml`, variables computed here) and what the agent can look up once they are
//! identified (`customer_records`: their profile, their bookings, the packages and agents
//! of those). `tools.toml` declares the rest: the argument values they could never know
//! (`internal`: saved payment method ids), the agency's package codes and agent ids no
//! instruction names (`internal_fields`) and what each lookup's request sentences all ask
//! for (`tells`: a booking's status, an agent's email address, a package's cancellation
//! policy; other reads fall to the shared default, the fields a sentence names).
//!
//! Travelers identify with their traveler id (the policy's first step). They name bookings
//! by id (printed on their confirmation; one made in the same conversation as "the booking
//! you just made"), packages by name and id (as a brochure prints them), agents by name and
//! id, payment methods by brand and last digits, people by name and date of birth, and
//! dates in full (`2024-09-14`, which holds the tools' `24-09-14`).
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{AddOn, Booking, BookingTraveler, TravelDb, Traveler};
use crate::domain::UserFact;
use crate::domain::kit::facts;
use crate::domain::kit::tau2::{long_date, parse_short_date};
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{
    arg_items, arg_str, count_word, filter_clauses, join_and, money_in, payments_phrase, words,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// A `YY-MM-DD` date as a customer says it (`2024-09-14`), else as given.
pub fn say_date(short: &str) -> String {
    parse_short_date(short).map_or_else(|| short.to_string(), long_date)
}

/// A traveler on a booking as the customer names them: "Amara Alvarez (born 1970-09-25)",
/// or "yourself (born 1994-05-07)" for the customer.
fn person(customer: &Traveler, t: &BookingTraveler) -> String {
    if customer.name.first_name == t.first_name && customer.name.last_name == t.last_name {
        return format!("yourself (born {})", say_date(&t.dob));
    }
    format!(
        "{} {} (born {})",
        t.first_name,
        t.last_name,
        say_date(&t.dob)
    )
}

/// A rooming as a traveler says it: "a single room", "a twin room for two", "a family
/// suite for three".
fn room_text(rooming: &Value) -> Option<String> {
    let kind = words(arg_str(rooming, "room_type"));
    let occupancy = rooming.get("occupancy")?.as_u64()? as usize;
    let noun = if kind.ends_with("suite") {
        kind.clone()
    } else {
        format!("{kind} room")
    };
    Some(if kind == "single" && occupancy == 1 {
        format!("a {noun}")
    } else {
        format!("a {noun} for {}", count_word(occupancy))
    })
}

fn add_on_text(a: &AddOn) -> String {
    format!("the {} '{}'", words(&a.kind), a.description)
}

fn method_phrase(t: &Traveler, id: &str) -> String {
    t.payment_methods.get(id).map_or_else(
        || "one of your saved payment methods".into(),
        |m| m.phrase().0,
    )
}

/// A booking as the traveler refers to it. One made in this conversation is "the booking
/// you just made for the X" when it is the latest made, else "the booking you made for the
/// X"; its departure is said when another booking made in the conversation is for a package
/// of the same name, and when that departure is shared too, its place among the bookings
/// made ("the first booking you made, for the X") tells them apart.
fn booking_text(db: &TravelDb, b: &Booking) -> String {
    let name = |b: &Booking| db.packages.get(&b.package_id).map(|p| p.name.clone());
    let package = name(b).map_or_else(|| "your package".to_string(), |n| format!("the {n}"));
    if !(b.booking_id.starts_with("TAU") && b.booking_id.len() == 6) {
        return format!("your booking {} for {package}", b.booking_id);
    }
    let made: Vec<&Booking> = db.made_bookings().collect();
    let latest = made.last().is_some_and(|m| m.booking_id == b.booking_id);
    let when = if latest { "you just made" } else { "you made" };
    let twins: Vec<&&Booking> = made.iter().filter(|m| name(m) == name(b)).collect();
    let same_day = twins
        .iter()
        .filter(|m| m.departure_date == b.departure_date)
        .count();
    if twins.len() < 2 {
        return format!("the booking {when} for {package}");
    }
    let departing = format!(
        "the booking {when} for {package} (departing {})",
        say_date(&b.departure_date)
    );
    if same_day < 2 || latest {
        return departing;
    }
    made.iter()
        .position(|m| m.booking_id == b.booking_id)
        .and_then(|i| crate::domain::kit::text::ORDINALS.get(i))
        .map_or(departing, |o| {
            format!("the {o} booking you made, for {package}")
        })
}

/// A package as a traveler names it: its name, and its length and kind, which tell apart
/// the packages that share a name (its code is the agency's, not the traveler's).
fn package_text(db: &TravelDb, id: &str) -> Option<String> {
    db.packages.get(id).map(|p| {
        format!(
            "the {} package (the {}-day {} trip)",
            p.name, p.duration_days, p.category
        )
    })
}

/// An agent as a traveler names them: by name.
fn agent_text(db: &TravelDb, id: &str) -> Option<String> {
    db.agents
        .get(id)
        .map(|a| format!("{} {}", a.name.first_name, a.name.last_name))
}

pub fn user_facts(db: &TravelDb, traveler_id: &str) -> Vec<UserFact> {
    let Some(t) = db.travelers.get(traveler_id) else {
        return Vec::new();
    };
    let mut out = facts::id_and_name("traveler", traveler_id, &t.name);
    for m in t.payment_methods.values() {
        let (phrase, values) = m.phrase();
        out.push(facts::fact(
            "payment",
            format!(
                "You have {} saved on your travel profile.",
                phrase.replacen("your ", "a ", 1)
            ),
            values,
            &[&m.payment_method_id],
        ));
    }
    for b in &t.bookings {
        out.push(facts::fact(
            "entity",
            format!(
                "Your booking id for the trip departing {} is {}.",
                say_date(&b.departure_date),
                b.booking_id
            ),
            vec![b.booking_id.clone()],
            &[],
        ));
    }
    out
}

pub fn describe_request(db: &TravelDb, tool: &str, args: &Value, output: &str) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let found = db.find_booking(arg_str(args, "booking_id"));
    let mut table = tool.to_string();
    match tool {
        "book_package" => {
            let t = db.travelers.get(arg_str(args, "traveler_id"))?;
            vars.insert("package", package_text(db, arg_str(args, "package_id"))?);
            vars.insert("date", say_date(arg_str(args, "departure_date")));
            let people: Vec<BookingTraveler> =
                serde_json::from_value(args.get("travelers")?.clone()).ok()?;
            vars.insert(
                "party",
                join_and(&people.iter().map(|p| person(t, p)).collect::<Vec<_>>()),
            );
            let rooming = args.get("rooming")?;
            vars.insert("room", room_text(rooming)?);
            let extras: Vec<AddOn> = serde_json::from_value(args.get("add_ons")?.clone()).ok()?;
            vars.insert(
                "extras",
                if extras.is_empty() {
                    "with no add-ons".into()
                } else {
                    format!(
                        "adding {}",
                        join_and(&extras.iter().map(add_on_text).collect::<Vec<_>>())
                    )
                },
            );
            vars.insert(
                "insurance",
                match args.get("insurance").and_then(Value::as_str) {
                    Some(label) => format!("with {label} travel insurance"),
                    None => "without travel insurance".into(),
                },
            );
            let payments: Vec<(String, f64)> = arg_items(args, "payment_methods")
                .map(|p| {
                    (
                        method_phrase(t, arg_str(p, "payment_id")),
                        p.get("amount").and_then(Value::as_f64).unwrap_or(0.0),
                    )
                })
                .collect();
            let currency = db
                .packages
                .get(arg_str(args, "package_id"))
                .and_then(|p| p.departures.get(arg_str(args, "departure_date")))
                .map_or("", |d| d.currency.as_str());
            vars.insert(
                "total",
                money_in(payments.iter().map(|(_, a)| a).sum(), currency),
            );
            let pay = payments_phrase(&payments, |a| money_in(a, currency));
            vars.insert("pay", pay);
            table = match args.get("agent_id").and_then(Value::as_str) {
                Some(a) => {
                    vars.insert("agent", agent_text(db, a)?);
                    "book_package.agent".into()
                }
                None => "book_package.plain".into(),
            };
        }
        "cancel_booking" | "get_booking_details" => {
            let (_, b) = found?;
            vars.insert("booking", booking_text(db, b));
            vars.insert("date", say_date(&b.departure_date));
        }
        "update_booking_add_ons" => {
            let (owner, b) = found?;
            vars.insert("booking", booking_text(db, b));
            let new: Vec<AddOn> = serde_json::from_value(args.get("add_ons")?.clone()).ok()?;
            let added: Vec<String> = new
                .iter()
                .filter(|a| !b.add_ons.contains(a))
                .map(add_on_text)
                .collect();
            let removed: Vec<String> = b
                .add_ons
                .iter()
                .filter(|a| !new.contains(a))
                .map(add_on_text)
                .collect();
            let mut changes = Vec::new();
            if !added.is_empty() {
                changes.push(format!("add {}", join_and(&added)));
            }
            if !removed.is_empty() {
                changes.push(format!("drop {}", join_and(&removed)));
            }
            if changes.is_empty() {
                return None;
            }
            vars.insert("changes", join_and(&changes));
            vars.insert(
                "pay",
                method_phrase(owner, arg_str(args, "payment_method_id")),
            );
        }
        "update_booking_departure_date" => {
            let (owner, b) = found?;
            vars.insert("booking", booking_text(db, b));
            vars.insert("old", say_date(&b.departure_date));
            vars.insert("new", say_date(arg_str(args, "new_departure_date")));
            vars.insert(
                "pay",
                method_phrase(owner, arg_str(args, "payment_method_id")),
            );
        }
        "update_booking_travelers" => {
            let (holder, b) = found?;
            vars.insert("booking", booking_text(db, b));
            let new: Vec<BookingTraveler> =
                serde_json::from_value(args.get("travelers")?.clone()).ok()?;
            let mut changes = Vec::new();
            for (old, new) in b.travelers.iter().zip(&new) {
                if old == new {
                    continue;
                }
                if old.first_name == new.first_name && old.last_name == new.last_name {
                    changes.push(format!(
                        "correct {} {}'s date of birth to {}",
                        new.first_name,
                        new.last_name,
                        say_date(&new.dob)
                    ));
                } else {
                    changes.push(format!(
                        "replace {} {} with {}",
                        old.first_name,
                        old.last_name,
                        person(holder, new)
                    ));
                }
            }
            if changes.is_empty() {
                return None;
            }
            vars.insert("changes", join_and(&changes));
        }
        "update_booking_rooming" => {
            let (_, b) = found?;
            vars.insert("booking", booking_text(db, b));
            let rooming = args.get("rooming")?;
            vars.insert("room", room_text(rooming)?);
        }
        "schedule_agent_meeting" => {
            vars.insert("agent", agent_text(db, arg_str(args, "agent_id"))?);
            vars.insert("date", say_date(arg_str(args, "date")));
        }
        "get_package_details" => {
            vars.insert("package", package_text(db, arg_str(args, "package_id"))?);
        }
        "get_agent_details" => {
            vars.insert("agent", agent_text(db, arg_str(args, "agent_id"))?);
        }
        "search_packages" => {
            let mut filters = match args.get("category").and_then(Value::as_str) {
                Some(c) if !c.is_empty() => format!("{} packages", words(c)),
                _ => "packages".to_string(),
            };
            let clauses = [
                ("destination_city", "to {}"),
                ("destination_country", "in {}"),
            ];
            filters += &filter_clauses(args, &clauses);
            if let Some(d) = args.get("departure_date").and_then(Value::as_str) {
                filters.push_str(&format!(" departing on {}", say_date(d)));
            }
            vars.insert("filters", filters);
        }
        // Asking for destinations only makes sense when there are some.
        "list_all_destinations" if !output.contains("city") => return None,
        _ => {}
    }
    // Tools without sentences (agent-side lookups and notes) give `None`.
    REQUESTS.render(&table, args, &vars)
}

fn plain<T: serde::Serialize>(row: &T) -> String {
    serde_json::to_string(row).unwrap_or_default()
}

/// The records as JSON with non-ASCII text left as it is: the tools print `json.dumps`
/// escapes (`Bra\u0219ov`), which an agent reads as the name a traveler says (`Brașov`),
/// and the sufficiency check compares plain strings.
pub fn customer_records(db: &TravelDb, traveler_id: &str) -> Vec<String> {
    let Some(t) = db.travelers.get(traveler_id) else {
        return Vec::new();
    };
    let mut records = vec![traveler_id.to_string(), plain(t)];
    let mut seen: Vec<&str> = Vec::new();
    for b in &t.bookings {
        records.push(plain(b));
        for id in [b.package_id.as_str(), b.agent_id.as_str()] {
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            if let Some(p) = db.packages.get(id) {
                records.push(plain(p));
            } else if let Some(a) = db.agents.get(id) {
                records.push(plain(a));
            }
        }
    }
    // The catalogue an agent searches (`search_packages`) for a package the traveler names,
    // with the agents who manage each package.
    for (_, p) in db.packages.iter() {
        records.push(format!(
            "package {} {} {}-day {} agents {}",
            p.package_id,
            p.name,
            p.duration_days,
            p.category,
            p.managed_by_agents.join(" ")
        ));
    }
    records
}
