//! Refinement and verification hooks for movie: what a customer knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: sentences in
//! `requests.toml`, variables computed here), what the agent must tell them where
//! `tools.toml`'s `tells` cannot point at it (`required_outputs`) and what the agent can
//! look up (`customer_records`: their bookings, the listings and schedules, the policy's
//! clock). The argument values they could never know (payment and payment method ids) are
//! declared in `tools.toml` (`internal`).
//!
//! There is no authentication: a customer identifies a booking by its id (printed on their
//! confirmation), so the booking ids are the identity fact; name, email, phone and loyalty
//! id follow (a new booking needs them). Customers name movies by title, theaters by name,
//! shows by date and time, seats by seat label, payment methods by brand and last digits,
//! and amounts in the theater's money, with its currency (`CURRENCIES`, by country).
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{Booking, MovieDb, PaymentMethod};
use super::policy::seat_args;
use super::tools::{NOW, grand_total, seat_change_difference};
use crate::domain::kit::facts;
use crate::domain::kit::pyjson::Py;
use crate::domain::kit::tau2::{long_stamp, saved_method};
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_str, join_and};
use crate::domain::{Environment, UserFact};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// The currency of each country a theater stands in (ours, `vocabulary.toml`'s places, and
/// the reference database's): the data names none, a theater charges in its country's.
const CURRENCIES: [(&str, &str); 18] = [
    ("Austria", "EUR"),
    ("Belgium", "EUR"),
    ("Canada", "CAD"),
    ("Colombia", "COP"),
    ("France", "EUR"),
    ("Germany", "EUR"),
    ("Iran", "IRR"),
    ("Ireland", "EUR"),
    ("Japan", "JPY"),
    ("Mexico", "MXN"),
    ("Norway", "NOK"),
    ("Portugal", "EUR"),
    ("Romania", "RON"),
    ("Russia", "RUB"),
    ("South Korea", "KRW"),
    ("Spain", "EUR"),
    ("Sweden", "SEK"),
    ("United States", "USD"),
];

/// The currency code of a country ([`CURRENCIES`]), if known.
pub(super) fn currency_of(country: &str) -> Option<&'static str> {
    CURRENCIES
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(country))
        .map(|(_, code)| *code)
}

/// An amount as a customer says it, in the money of the theater it is paid to: "$27.50",
/// "59.03 EUR" (the digits as the tools print them); a country without a known currency
/// is named instead ("59.03 in Iceland's currency").
fn amount(db: &MovieDb, theater_id: &str, x: f64) -> String {
    let country = db
        .theaters
        .get(theater_id)
        .map_or("", |t| t.address.country.as_str());
    match currency_of(country) {
        Some("USD") => format!("${x:.2}"),
        Some(code) => format!("{x:.2} {code}"),
        None if country.is_empty() => format!("{x:.2} in the theater's currency"),
        None => format!("{x:.2} in {country}'s currency"),
    }
}

/// "24-06-12-19-30" -> "2024-06-12 at 19:30".
fn when(stamp: &str) -> String {
    long_stamp(stamp).unwrap_or_else(|| stamp.to_string())
}

/// "Paper Lanterns at Orion Lisbon Cinema on 2024-06-12 at 19:30".
fn show_text(db: &MovieDb, theater_id: &str, show_id: &str) -> Option<String> {
    let t = db.theaters.get(theater_id)?;
    let (_, s) = t.show(show_id)?;
    let title = db
        .movies
        .get(&s.movie_id)
        .map_or("the movie", |m| m.title.as_str());
    Some(format!(
        "{title} ({}) at {} on {}",
        s.format,
        t.name,
        when(&s.start_time_local)
    ))
}

fn booking_text(db: &MovieDb, b: &Booking) -> String {
    let show = show_text(db, &b.theater_id, &b.show_id).unwrap_or_else(|| "your show".into());
    format!("your booking {} for {show}", b.booking_id)
}

/// "seats R1-03 (adult) and R1-04 (child)".
fn seats_text(seats: &[(&str, &str)]) -> String {
    let parts: Vec<String> = seats.iter().map(|(s, t)| format!("{s} ({t})")).collect();
    let noun = if parts.len() == 1 { "seat" } else { "seats" };
    format!("{noun} {}", join_and(&parts))
}

fn method_text(m: &PaymentMethod) -> String {
    let extra = m.extra_info.as_ref();
    let brand = extra.and_then(|e| e.brand.as_deref());
    let last = extra.and_then(|e| e.last_four.as_deref());
    match m.source.as_str() {
        "cash" => "cash".into(),
        "wallet" => format!("your {} wallet", brand.unwrap_or("digital")),
        "gift_card" => saved_method("gift_card", None, last).0,
        _ => match (brand, last) {
            (Some(b), Some(l)) => format!("your {b} card ending in {l}"),
            (None, Some(l)) => format!("your card ending in {l}"),
            (Some(b), None) => format!("your {b} card"),
            (None, None) => "your card".into(),
        },
    }
}

fn payment_method(p: &Value) -> Option<PaymentMethod> {
    serde_json::from_value(p.get("method")?.clone()).ok()
}

pub fn user_facts(db: &MovieDb, email: &str) -> Vec<UserFact> {
    let bookings = db.bookings_of(email);
    let Some(last) = bookings.last() else {
        return Vec::new();
    };
    let ids: Vec<String> = bookings.iter().map(|b| b.booking_id.clone()).collect();
    let mut out = Vec::new();
    if let Some(mut f) = facts::entity_ids("booking id", &ids) {
        f.kind = "identity".into();
        out.push(f);
    }
    let c = &last.customer;
    out.push(facts::name(&c.name.first_name, &c.name.last_name));
    out.push(facts::fact(
        "contact",
        format!(
            "Your email address is {} and your phone number is {}.",
            c.email, c.phone
        ),
        vec![c.email.clone(), c.phone.clone()],
        &[],
    ));
    if let Some(l) = &c.loyalty_id {
        out.push(facts::fact(
            "loyalty",
            format!("Your loyalty id is {l}."),
            vec![l.clone()],
            &[],
        ));
    }
    let mut methods: Vec<&PaymentMethod> = Vec::new();
    for p in bookings.iter().flat_map(|b| b.payment_history.iter()) {
        if p.method.payment_method_id != "refund" && !methods.contains(&&p.method) {
            methods.push(&p.method);
        }
    }
    for m in methods {
        let text = method_text(m);
        let values: Vec<String> = [
            m.extra_info.as_ref().and_then(|e| e.brand.clone()),
            m.extra_info.as_ref().and_then(|e| e.last_four.clone()),
        ]
        .into_iter()
        .flatten()
        .chain([m.source.replace('_', " ")])
        .collect();
        out.push(facts::fact(
            "payment",
            format!("You pay with {text}."),
            values,
            &[&m.payment_method_id],
        ));
    }
    out
}

pub fn describe_request(db: &MovieDb, tool: &str, args: &Value, _output: &str) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let booking = db.bookings.get(arg_str(args, "booking_id"));
    let mut table = tool.to_string();
    match tool {
        "cancel_booking" => {
            vars.insert("booking", booking_text(db, booking?));
        }
        "get_booking_details" => {
            let b = booking?;
            vars.insert("booking", booking_text(db, b));
            let case = if b.status == "canceled" {
                "cancelled"
            } else {
                "open"
            };
            table = format!("{tool}.{case}");
        }
        "create_booking" | "price_preview" => {
            vars.insert(
                "show",
                show_text(db, arg_str(args, "theater_id"), arg_str(args, "show_id"))?,
            );
            vars.insert("seats", seats_text(&seat_args(args)));
            if tool == "create_booking" {
                let delivery = match arg_str(args, "delivery_method") {
                    "box-office" => "box-office pickup",
                    "kiosk" => "kiosk pickup",
                    _ => "e-ticket",
                };
                vars.insert("delivery", delivery.to_string());
                vars.insert(
                    "amount",
                    amount(db, arg_str(args, "theater_id"), grand_total(db, args)),
                );
                let pay = args["payments"].get(0).and_then(payment_method)?;
                vars.insert("pay", method_text(&pay));
            }
        }
        "update_booking_seats" => {
            let b = booking?;
            vars.insert("booking", booking_text(db, b));
            let old: Vec<(&str, &str)> = b
                .seats
                .iter()
                .map(|s| (s.seat_id.as_str(), s.ticket_type.as_str()))
                .collect();
            vars.insert("old", seats_text(&old));
            vars.insert("seats", seats_text(&seat_args(args)));
            let diff = seat_change_difference(db, args);
            vars.insert("amount", amount(db, &b.theater_id, diff.abs()));
            let case = if diff > 0.0 {
                let pay = args.get("payment").and_then(payment_method)?;
                vars.insert("pay", method_text(&pay));
                "charge"
            } else if diff < 0.0 {
                "refund"
            } else {
                "even"
            };
            table = format!("{tool}.{case}");
        }
        "get_show_status" | "get_seat_availability" | "get_show_details" => {
            vars.insert(
                "show",
                show_text(db, arg_str(args, "theater_id"), arg_str(args, "show_id"))?,
            );
        }
        "get_theater_details" | "list_shows" => {
            vars.insert(
                "theater",
                db.theaters.get(arg_str(args, "theater_id"))?.name.clone(),
            );
            let date = arg_str(args, "date");
            if !date.is_empty() {
                vars.insert("day", format!("20{date}"));
            }
        }
        "get_movie_details" => {
            vars.insert(
                "movie",
                db.movies.get(arg_str(args, "movie_id"))?.title.clone(),
            );
        }
        _ => {}
    }
    REQUESTS.render(&table, args, &vars)
}

/// The customer's bookings, and what anyone can look up: the movie and theater listings,
/// every theater's shows by date, and the current time the policy states.
pub fn customer_records(db: &MovieDb, email: &str) -> Vec<String> {
    let mut out: Vec<String> = db
        .bookings_of(email)
        .into_iter()
        .map(|b| Py::model(b).to_json_str())
        .collect();
    let mut env = db.clone();
    for tool in ["list_movies", "list_theaters"] {
        out.push(Environment::invoke(&mut env, tool, &json!({})).text);
    }
    for t in db.theaters.in_order() {
        for (date, day) in t.dates.iter() {
            let shows: Vec<&super::db::Show> = day.shows.iter().collect();
            out.push(format!(
                "{} {date}: {}",
                t.theater_id,
                Py::models(shows).to_json_str()
            ));
        }
    }
    out.push(format!("The current time is {NOW}."));
    out
}

/// What the agent must tell after a read the customer asked for, where the request's words
/// do not name the field (`quality::answers` reads the rest) and `tools.toml`'s `tells`
/// cannot point at it (there: a price preview's grand total, a film's rating and running
/// time, a theater's street and amenities): the status of a cancelled booking ("is it now
/// cancelled?"), and the titles of the films a theater shows that day ("what is on?": the
/// shows carry movie ids only, so the agent looks the titles up; every show's status,
/// `scheduled`, was what the shared default recorded).
pub fn required_outputs(db: &MovieDb, tool: &str, _args: &Value, output: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(output) else {
        return Vec::new();
    };
    match tool {
        "list_shows" => {
            let mut titles: Vec<String> = Vec::new();
            for show in v.as_array().into_iter().flatten() {
                let movie = show["movie_id"].as_str().and_then(|id| db.movies.get(id));
                if let Some(m) = movie
                    && !titles.contains(&m.title)
                {
                    titles.push(m.title.clone());
                }
            }
            titles
        }
        "get_booking_details" if v.get("status").and_then(Value::as_str) == Some("canceled") => {
            vec!["canceled".to_string()]
        }
        _ => Vec::new(),
    }
}
