//! Grounding hooks of the airline domain: the machine-checkable policy rules
//! ([`check_policy`]), id learning from tool outputs ([`observe`]) and candidate arguments
//! for a tool call ([`propose_calls`]).
//!
//! Write proposals are built from the customer's own reservations and payment methods and
//! from real bookable flights, then kept only if they obey [`check_policy`] and succeed on a
//! throw-away fork of the state (forking is an `Arc` clone), so every proposal returned is
//! executable and policy-compliant.
//!
//! Architecture invariant: reads the state only; never mutates `self` (dry runs use forks).

use super::db::{
    AirlineDb, BAG_FEE, CABINS, INSURANCE_FEE, Money, Passenger, Reservation, TODAY, User,
    clock_seconds, format_date, free_bags_per_passenger, parse_date, parse_datetime,
};
use super::tools::{search_direct, search_onestop};
use crate::domain::{Environment, GroundingContext};
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// How many proposals a call returns at most.
const MAX_PROPOSALS: usize = 8;

// ---------------------------------------------------------------- policy

/// A segment is flown once its flight has left (landed or in the air) or its date is past.
fn segment_flown(db: &AirlineDb, flight_number: &str, date: &str) -> bool {
    match db
        .flights
        .get(flight_number)
        .and_then(|f| f.dates.get(date))
    {
        Some(d) => matches!(d.status.as_str(), "landed" | "flying"),
        None => date < TODAY,
    }
}

fn any_flown(db: &AirlineDb, r: &Reservation) -> bool {
    r.flights
        .iter()
        .any(|s| segment_flown(db, &s.flight_number, &s.date))
}

fn airline_cancelled_a_flight(db: &AirlineDb, r: &Reservation) -> bool {
    r.flights.iter().any(|s| {
        db.flights
            .get(&s.flight_number)
            .and_then(|f| f.dates.get(&s.date))
            .is_some_and(|d| d.status == "cancelled")
    })
}

fn booked_within_24h(r: &Reservation) -> bool {
    parse_datetime(&r.created_at)
        .map(|t| {
            let age = clock_seconds() - t;
            (0..86_400).contains(&age)
        })
        .unwrap_or(false)
}

/// Why a reservation may be cancelled under the policy, or `Err` naming the rule.
pub fn cancellation_ground(db: &AirlineDb, r: &Reservation) -> Result<&'static str, String> {
    if r.is_cancelled() {
        return Err("policy: the reservation is already cancelled".into());
    }
    if any_flown(db, r) {
        return Err(
            "policy: a trip with a flown segment cannot be cancelled (transfer to a human agent)"
                .into(),
        );
    }
    if booked_within_24h(r) {
        Ok("booked within the last 24 hours")
    } else if airline_cancelled_a_flight(db, r) {
        Ok("the airline cancelled a flight")
    } else if r.cabin == "business" {
        Ok("business cabin")
    } else if r.insurance == "yes" {
        Ok("travel insurance (health or weather reason)")
    } else {
        Err(
            "policy: cancellation needs booking within 24 hours, an airline-cancelled flight, \
             a business cabin or travel insurance"
                .into(),
        )
    }
}

fn allowance(user: &User, cabin: &str, passengers: i64) -> i64 {
    free_bags_per_passenger(&user.membership, cabin) * passengers
}

fn payment_source<'a>(user: &'a User, payment_id: &str) -> Option<&'a str> {
    user.payment_methods
        .get(payment_id)
        .map(|m| m.source.as_str())
}

/// Whether a user may receive a goodwill certificate at all (silver/gold, or a reservation
/// with insurance or in business).
fn certificate_eligible(db: &AirlineDb, user: &User) -> bool {
    user.membership == "silver"
        || user.membership == "gold"
        || user.reservations.iter().any(|id| {
            db.reservations
                .get(id)
                .is_some_and(|r| r.insurance == "yes" || r.cabin == "business")
        })
}

fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

fn flight_refs(args: &Value) -> Vec<(String, String)> {
    args.get("flights")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|f| {
                    (
                        str_arg(f, "flight_number").into(),
                        str_arg(f, "date").into(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The airports a list of segments visits, in order, when every flight is known.
fn itinerary(db: &AirlineDb, refs: &[(String, String)]) -> Option<Vec<(String, String)>> {
    refs.iter()
        .map(|(n, _)| {
            db.flights
                .get(n)
                .map(|f| (f.origin.clone(), f.destination.clone()))
        })
        .collect()
}

/// Segments must chain, start at `origin`, and end at `destination` (one way) or reach
/// `destination` and come back to `origin` (round trip).
fn check_route(
    legs: &[(String, String)],
    origin: &str,
    destination: &str,
    flight_type: &str,
) -> Result<(), String> {
    let (Some(first), Some(last)) = (legs.first(), legs.last()) else {
        return Err("policy: a trip needs at least one flight".into());
    };
    if legs.windows(2).any(|w| w[0].1 != w[1].0) {
        return Err("policy: the flights do not connect into one itinerary".into());
    }
    let ok = first.0 == origin
        && match flight_type {
            "round_trip" => last.1 == origin && legs.iter().any(|l| l.1 == destination),
            _ => last.1 == destination,
        };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "policy: the flights must match the trip {origin} -> {destination} ({flight_type})"
        ))
    }
}

/// The policy rules of `policies/airline.md` that the state can decide, evaluated before the
/// call. `Err` names the rule broken.
pub fn check_policy(db: &AirlineDb, tool: &str, args: &Value) -> Result<(), String> {
    match tool {
        "book_reservation" => check_booking(db, args),
        "cancel_reservation" => {
            let r = reservation(db, args)?;
            cancellation_ground(db, r).map(|_| ())
        }
        "update_reservation_flights" => check_flight_change(db, args),
        "update_reservation_baggages" => {
            let r = open_reservation(db, args)?;
            let user = db.users.get(&r.user_id).ok_or("policy: unknown user")?;
            let total = args
                .get("total_baggages")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let nonfree = args
                .get("nonfree_baggages")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if total < r.total_baggages || nonfree < r.nonfree_baggages {
                return Err("policy: checked bags can be added but not removed".into());
            }
            let expected = (total - allowance(user, &r.cabin, r.passenger_count()))
                .max(r.nonfree_baggages)
                .max(0);
            if nonfree != expected {
                return Err(format!(
                    "policy: with {total} bags the paid bags must be {expected} (free allowance by tier and cabin)"
                ));
            }
            check_update_payment(user, str_arg(args, "payment_id"))
        }
        "update_reservation_passengers" => {
            let r = open_reservation(db, args)?;
            if any_flown(db, r) {
                return Err("policy: passengers of a trip already flown cannot change".into());
            }
            let n = args
                .get("passengers")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            if n != r.passengers.len() {
                return Err("policy: the number of passengers cannot change".into());
            }
            Ok(())
        }
        "send_certificate" => {
            let user_id = str_arg(args, "user_id");
            let user = db.users.get(user_id).ok_or("policy: unknown user")?;
            if !certificate_eligible(db, user) {
                return Err("policy: certificates only for silver/gold members or \
                            reservations with insurance or in business"
                    .into());
            }
            let amount = Money::from_f64(args.get("amount").and_then(Value::as_f64).unwrap_or(0.0));
            let allowed = user.reservations.iter().any(|id| {
                db.reservations.get(id).is_some_and(|r| {
                    let n = r.passenger_count();
                    amount == Money::dollars(50).times(n) || amount == Money::dollars(100).times(n)
                })
            });
            if !allowed {
                return Err(
                    "policy: a certificate is $100 (cancelled flight) or $50 (delayed \
                            flight) per passenger of one of the user's reservations"
                        .into(),
                );
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn reservation<'a>(db: &'a AirlineDb, args: &Value) -> Result<&'a Reservation, String> {
    db.reservations
        .get(str_arg(args, "reservation_id"))
        .ok_or_else(|| "policy: unknown reservation".to_string())
}

fn open_reservation<'a>(db: &'a AirlineDb, args: &Value) -> Result<&'a Reservation, String> {
    let r = reservation(db, args)?;
    if r.is_cancelled() {
        return Err("policy: a cancelled reservation cannot be changed".into());
    }
    Ok(r)
}

fn check_update_payment(user: &User, payment_id: &str) -> Result<(), String> {
    match payment_source(user, payment_id) {
        Some("credit_card" | "gift_card") => Ok(()),
        Some(_) => Err(
            "policy: changes are paid with a credit card or gift card, not a certificate".into(),
        ),
        None => Err("policy: the payment method must be in the user's profile".into()),
    }
}

fn check_booking(db: &AirlineDb, args: &Value) -> Result<(), String> {
    let user = db
        .users
        .get(str_arg(args, "user_id"))
        .ok_or("policy: unknown user")?;
    let pax = args
        .get("passengers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len) as i64;
    if !(1..=5).contains(&pax) {
        return Err("policy: a reservation has one to five passengers".into());
    }
    let (mut certs, mut cards, mut gifts) = (0, 0, 0);
    for p in args
        .get("payment_methods")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if p.get("amount").and_then(Value::as_f64).unwrap_or(0.0) <= 0.0 {
            return Err("policy: every payment amount must be positive".into());
        }
        match payment_source(user, str_arg(p, "payment_id")) {
            Some("certificate") => certs += 1,
            Some("credit_card") => cards += 1,
            Some("gift_card") => gifts += 1,
            _ => return Err("policy: the payment method must be in the user's profile".into()),
        }
    }
    if certs > 1 || cards > 1 || gifts > 3 {
        return Err("policy: at most one certificate, one credit card and three gift cards".into());
    }
    let refs = flight_refs(args);
    if let Some(legs) = itinerary(db, &refs) {
        check_route(
            &legs,
            str_arg(args, "origin"),
            str_arg(args, "destination"),
            str_arg(args, "flight_type"),
        )?;
    }
    let cabin = str_arg(args, "cabin");
    let total = args
        .get("total_baggages")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let nonfree = args
        .get("nonfree_baggages")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let expected = (total - allowance(user, cabin, pax)).max(0);
    if total < 0 || nonfree != expected {
        return Err(format!(
            "policy: with {total} bags the paid bags must be {expected} (free allowance by tier and cabin)"
        ));
    }
    Ok(())
}

fn check_flight_change(db: &AirlineDb, args: &Value) -> Result<(), String> {
    let r = open_reservation(db, args)?;
    let user = db.users.get(&r.user_id).ok_or("policy: unknown user")?;
    let refs = flight_refs(args);
    let current: BTreeSet<(String, String)> = r
        .flights
        .iter()
        .map(|s| (s.flight_number.clone(), s.date.clone()))
        .collect();
    let wanted: BTreeSet<(String, String)> = refs.iter().cloned().collect();
    let cabin = str_arg(args, "cabin");
    if current != wanted && r.cabin == "basic_economy" {
        return Err("policy: basic economy flights cannot be changed (only the cabin)".into());
    }
    for s in &r.flights {
        if segment_flown(db, &s.flight_number, &s.date) {
            if cabin != r.cabin {
                return Err("policy: the cabin cannot change once a segment is flown".into());
            }
            if !wanted.contains(&(s.flight_number.clone(), s.date.clone())) {
                return Err("policy: a flown segment cannot be changed".into());
            }
        }
    }
    if let Some(legs) = itinerary(db, &refs) {
        check_route(&legs, &r.origin, &r.destination, &r.flight_type)
            .map_err(|e| format!("{e}; origin, destination and trip type cannot change"))?;
    }
    check_update_payment(user, str_arg(args, "payment_id"))
}

// ---------------------------------------------------------------- observe

/// Learn every `*_id`, plus reservation and payment ids listed in a profile and flight
/// numbers, dates and airports from searches and reservations.
pub fn observe(
    _db: &AirlineDb,
    tool: &str,
    args: &Value,
    output: &str,
    ctx: &mut GroundingContext,
) {
    remember_conversation(tool, args, output, ctx);
    let Ok(v) = serde_json::from_str::<Value>(output) else {
        return;
    };
    ctx.learn_from_json(&v, &["flight_number", "date", "origin", "destination"]);
    if tool == "get_user_details" {
        for id in v
            .get("reservations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            ctx.learn("reservation_id", id);
        }
        if let Some(methods) = v.get("payment_methods").and_then(Value::as_object) {
            for id in methods.keys() {
                ctx.learn("payment_id", id);
            }
        }
        if let Some(uid) = args.get("user_id").and_then(Value::as_str) {
            ctx.learn("user_id", uid);
        }
    }
    if tool.starts_with("search_") {
        for key in ["origin", "destination", "date"] {
            if let Some(s) = args.get(key).and_then(Value::as_str) {
                ctx.learn(key, s);
            }
        }
    }
}

/// Context keys (underscore-prefixed, so they never clash with argument names) that record
/// the conversation so far, letting proposals keep one coherent customer story: the last
/// tool and the reservation it touched, the reservations already read or changed, and the
/// last search with the itineraries it offered.
const LAST_TOOL: &str = "_last_tool";
const LAST_RESERVATION: &str = "_last_reservation";
const READ: &str = "_read_reservation";
const CHANGED: &str = "_changed_reservation";
const LAST_SEARCH: &str = "_last_search";
const SEARCH_OFFERS: &str = "_search_offers";
const SEARCHED: &str = "_searched";

fn search_key(onestop: bool, origin: &str, destination: &str, date: &str) -> String {
    format!("{onestop}|{origin}|{destination}|{date}")
}

fn is_write(tool: &str) -> bool {
    matches!(
        tool,
        "book_reservation"
            | "cancel_reservation"
            | "update_reservation_baggages"
            | "update_reservation_flights"
            | "update_reservation_passengers"
            | "send_certificate"
    )
}

fn remember_conversation(tool: &str, args: &Value, output: &str, ctx: &mut GroundingContext) {
    let set = |ctx: &mut GroundingContext, key: &str, vals: Vec<String>| {
        ctx.known.insert(key.to_string(), vals);
    };
    set(ctx, LAST_TOOL, vec![tool.to_string()]);
    let touched = if tool == "book_reservation" {
        serde_json::from_str::<Value>(output).ok().and_then(|v| {
            v.get("reservation_id")
                .and_then(Value::as_str)
                .map(String::from)
        })
    } else {
        args.get("reservation_id")
            .and_then(Value::as_str)
            .map(String::from)
    };
    if let Some(id) = touched {
        set(ctx, LAST_RESERVATION, vec![id.clone()]);
        if is_write(tool) {
            ctx.learn(CHANGED, &id);
        } else if tool == "get_reservation_details" {
            ctx.learn(READ, &id);
        }
    }
    if tool.starts_with("search_") {
        let route: Vec<String> = ["origin", "destination", "date"]
            .iter()
            .map(|k| str_arg(args, k).to_string())
            .collect();
        let date = route[2].clone();
        let key = search_key(tool == "search_onestop_flight", &route[0], &route[1], &date);
        ctx.learn(SEARCHED, &key);
        set(ctx, LAST_SEARCH, route);
        // Each offer as a JSON list of {flight_number, date} legs.
        let offers: Vec<String> = serde_json::from_str::<Value>(output)
            .ok()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .map(|o| {
                let legs: Vec<Value> = match o.as_array() {
                    Some(pair) => pair
                        .iter()
                        .map(|l| json!({"flight_number": str_arg(l, "flight_number"), "date": str_arg(l, "date")}))
                        .collect(),
                    None => vec![json!({"flight_number": str_arg(o, "flight_number"), "date": date})],
                };
                Value::Array(legs).to_string()
            })
            .collect();
        set(ctx, SEARCH_OFFERS, offers);
    }
}

// ---------------------------------------------------------------- proposals

/// Reservations to talk about, most plausible first: ones the context already knows (the
/// customer's before others), then the customer's other reservations in a seeded order.
fn candidate_reservations<'a>(
    db: &'a AirlineDb,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<&'a Reservation> {
    let user_id = ctx.user_id.as_deref().unwrap_or("");
    let known: Vec<&Reservation> = ctx
        .values("reservation_id")
        .iter()
        .filter_map(|id| db.reservations.get(id))
        .collect();
    let mut out: Vec<&Reservation> = known
        .iter()
        .copied()
        .filter(|r| r.user_id == user_id)
        .collect();
    let mut own: Vec<&Reservation> = db
        .users
        .get(user_id)
        .map(|u| {
            u.reservations
                .iter()
                .filter_map(|id| db.reservations.get(id))
                .filter(|r| !out.iter().any(|o| o.reservation_id == r.reservation_id))
                .collect()
        })
        .unwrap_or_default();
    own.shuffle(rng);
    out.extend(own);
    for r in known {
        if !out.iter().any(|o| o.reservation_id == r.reservation_id) {
            out.push(r);
        }
    }
    out
}

/// What a proposal will do with a reservation, for [`reservations_for`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Read,
    Write,
}

/// [`candidate_reservations`] reordered so the conversation stays coherent:
/// - a read right after a change looks at the reservation just changed (the customer checks
///   the result); otherwise reads prefer reservations not yet read nor changed;
/// - a write right after reading a reservation acts on it; a write right after a different
///   kind of change continues on the same reservation; otherwise writes prefer reservations
///   not changed yet (so a later intent does not pile onto one already changed).
fn reservations_for<'a>(
    db: &'a AirlineDb,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
    tool: &str,
    purpose: Purpose,
) -> Vec<&'a Reservation> {
    let base = candidate_reservations(db, ctx, rng);
    let last_tool = ctx
        .values(LAST_TOOL)
        .first()
        .map(String::as_str)
        .unwrap_or("");
    let last = ctx.values(LAST_RESERVATION).first().cloned();
    let changed = ctx.values(CHANGED);
    let read = ctx.values(READ);
    let first: Option<String> = match purpose {
        Purpose::Read if is_write(last_tool) => last,
        Purpose::Write if last_tool == "get_reservation_details" => {
            last.filter(|id| !changed.contains(id))
        }
        Purpose::Write if is_write(last_tool) && last_tool != tool => last,
        _ => None,
    };
    let fresh = |r: &Reservation| match purpose {
        Purpose::Read => !read.contains(&r.reservation_id) && !changed.contains(&r.reservation_id),
        Purpose::Write => !changed.contains(&r.reservation_id),
    };
    let mut out: Vec<&Reservation> = Vec::with_capacity(base.len());
    if let Some(id) = &first
        && let Some(r) = base.iter().find(|r| &r.reservation_id == id)
    {
        out.push(r);
    }
    let rest = base
        .iter()
        .filter(|r| Some(&r.reservation_id) != first.as_ref());
    let (a, b): (Vec<&Reservation>, Vec<&Reservation>) = rest.partition(|r| fresh(r));
    out.extend(a);
    out.extend(b);
    out
}

fn future_dates() -> Vec<String> {
    let today = parse_date(TODAY).unwrap_or_default();
    (1..=15).map(|k| format_date(today + k)).collect()
}

/// Keep the candidates that obey the policy and succeed on a fork, deduplicated, capped.
fn executable(db: &AirlineDb, tool: &str, candidates: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for c in candidates {
        if out.len() >= MAX_PROPOSALS {
            break;
        }
        if out.contains(&c) || check_policy(db, tool, &c).is_err() {
            continue;
        }
        let mut fork = db.clone();
        if !fork.invoke(tool, &c).is_error {
            out.push(c);
        }
    }
    out
}

/// Candidate arguments for `tool` (see the module comment).
pub fn propose_calls(
    db: &AirlineDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let user_id = ctx.user_id.clone().unwrap_or_default();
    let user = db.users.get(&user_id);
    match tool {
        "get_user_details" => {
            let mut ids = vec![user_id.clone()];
            ids.extend(ctx.values("user_id").iter().cloned());
            let mut seen = BTreeSet::new();
            ids.into_iter()
                .filter(|id| db.users.contains(id) && seen.insert(id.clone()))
                .take(MAX_PROPOSALS)
                .map(|id| json!({"user_id": id}))
                .collect()
        }
        "get_reservation_details" => reservations_for(db, ctx, rng, tool, Purpose::Read)
            .into_iter()
            .take(MAX_PROPOSALS)
            .map(|r| json!({"reservation_id": r.reservation_id}))
            .collect(),
        "list_all_airports" => vec![json!({})],
        "think" => {
            let about = candidate_reservations(db, ctx, rng)
                .first()
                .map(|r| format!("reservation {} of {}", r.reservation_id, r.user_id))
                .unwrap_or_else(|| format!("the request of {user_id}"));
            vec![json!({"thought": format!("Check the policy before acting on {about}.")})]
        }
        "calculate" => candidate_reservations(db, ctx, rng)
            .into_iter()
            .take(MAX_PROPOSALS)
            .map(|r| {
                let fares: Vec<String> = r.flights.iter().map(|s| s.price.to_string()).collect();
                json!({"expression": format!("({}) * {}", fares.join(" + "), r.passengers.len())})
            })
            .chain(std::iter::once(json!({"expression": "2 * 50 + 30"})))
            .take(MAX_PROPOSALS)
            .collect(),
        "transfer_to_human_agents" => vec![json!({"summary": format!(
            "User {user_id} needs help that is outside what the tools and policy allow."
        )})],
        "search_direct_flight" => propose_searches(db, ctx, rng, false),
        "search_onestop_flight" => propose_searches(db, ctx, rng, true),
        "book_reservation" => match user {
            Some(u) => executable(db, tool, propose_bookings(db, &user_id, u, ctx, rng)),
            None => Vec::new(),
        },
        "cancel_reservation" => {
            let c = reservations_for(db, ctx, rng, tool, Purpose::Write)
                .into_iter()
                .map(|r| json!({"reservation_id": r.reservation_id}))
                .collect();
            executable(db, tool, c)
        }
        "update_reservation_baggages" => {
            let mut c = Vec::new();
            for r in reservations_for(db, ctx, rng, tool, Purpose::Write) {
                let Some(owner) = db.users.get(&r.user_id) else {
                    continue;
                };
                let free = allowance(owner, &r.cabin, r.passenger_count());
                for add in [1, 2] {
                    let total = r.total_baggages + add;
                    let nonfree = (total - free).max(r.nonfree_baggages).max(0);
                    let cost = Money::dollars(BAG_FEE).times(nonfree - r.nonfree_baggages);
                    for pid in payers(owner, cost) {
                        c.push(
                            json!({"reservation_id": r.reservation_id, "total_baggages": total,
                            "nonfree_baggages": nonfree, "payment_id": pid}),
                        );
                    }
                }
            }
            executable(db, tool, c)
        }
        "update_reservation_flights" => executable(db, tool, propose_flight_changes(db, ctx, rng)),
        "update_reservation_passengers" => {
            let mut c = Vec::new();
            for r in reservations_for(db, ctx, rng, tool, Purpose::Write) {
                let Some(owner) = db.users.get(&r.user_id) else {
                    continue;
                };
                let mut people: Vec<Passenger> = owner.saved_passengers.clone();
                people.push(Passenger {
                    first_name: owner.name.first_name.clone(),
                    last_name: owner.name.last_name.clone(),
                    dob: owner.dob.clone(),
                });
                for p in people {
                    if r.passengers.contains(&p) {
                        continue;
                    }
                    let mut list = r.passengers.clone();
                    if let Some(last) = list.last_mut() {
                        *last = p;
                    }
                    c.push(json!({"reservation_id": r.reservation_id, "passengers": list}));
                }
            }
            executable(db, tool, c)
        }
        "send_certificate" => {
            let mut c = Vec::new();
            for r in candidate_reservations(db, ctx, rng) {
                if r.user_id != user_id {
                    continue;
                }
                let per = if airline_cancelled_a_flight(db, r) {
                    100
                } else {
                    50
                };
                let n = r.passenger_count();
                c.push(json!({"user_id": user_id, "amount": per * n}));
            }
            executable(db, tool, c)
        }
        _ => Vec::new(),
    }
}

/// Payment ids of `user` that can pay `cost` for a change: credit cards, then gift cards
/// with enough balance.
fn payers(user: &User, cost: Money) -> Vec<String> {
    let mut out: Vec<String> = user
        .payment_methods
        .values()
        .filter(|m| m.source == "credit_card")
        .map(|m| m.id.clone())
        .collect();
    out.extend(
        user.payment_methods
            .values()
            .filter(|m| m.source == "gift_card" && m.balance() >= cost)
            .map(|m| m.id.clone()),
    );
    out
}

fn propose_searches(
    db: &AirlineDb,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
    onestop: bool,
) -> Vec<Value> {
    let mut routes: Vec<(String, String, Vec<String>)> = Vec::new();
    let dates = future_dates();
    for r in reservations_for(db, ctx, rng, "search", Purpose::Read) {
        let mut preferred: Vec<String> = r
            .flights
            .iter()
            .map(|s| s.date.clone())
            .filter(|d| d.as_str() > TODAY)
            .collect();
        preferred.extend(dates.iter().cloned());
        routes.push((r.origin.clone(), r.destination.clone(), preferred.clone()));
        for s in &r.flights {
            routes.push((s.origin.clone(), s.destination.clone(), preferred.clone()));
        }
    }
    if let (Some(o), Some(d)) = (
        ctx.values("origin").last(),
        ctx.values("destination").last(),
    ) {
        let mut preferred: Vec<String> = ctx.values("date").to_vec();
        preferred.extend(dates.iter().cloned());
        routes.insert(0, (o.clone(), d.clone(), preferred));
    }
    // The customer's last search comes first: same route, same day first (e.g. nonstop
    // flights, then one-stop connections for the same trip).
    if let [o, d, date] = ctx.values(LAST_SEARCH) {
        let mut preferred = vec![date.clone()];
        preferred.extend(dates.iter().cloned());
        routes.insert(0, (o.clone(), d.clone(), preferred));
    }
    let searched = ctx.values(SEARCHED);
    // A trip from an airport to itself is not a search anyone makes.
    routes.retain(|(o, d, _)| o != d);
    // Random real routes as a fallback (connections for one-stop searches).
    let flights: Vec<_> = db.flights.iter().map(|(_, f)| f).collect();
    for _ in 0..12 {
        let Some(f1) = flights.choose(rng) else {
            break;
        };
        let mut shuffled = dates.clone();
        shuffled.shuffle(rng);
        if onestop {
            let next: Vec<_> = flights
                .iter()
                .filter(|f| f.origin == f1.destination && f.destination != f1.origin)
                .collect();
            if let Some(f2) = next.choose(rng) {
                routes.push((f1.origin.clone(), f2.destination.clone(), shuffled));
            }
        } else {
            routes.push((f1.origin.clone(), f1.destination.clone(), shuffled));
        }
    }
    let mut out = Vec::new();
    for (o, d, dates) in routes {
        if out.len() >= MAX_PROPOSALS {
            break;
        }
        // The same search twice adds nothing: a repeated route moves to another day.
        let found = dates.iter().take(6).find(|date| {
            if searched.contains(&search_key(onestop, &o, &d, date)) {
                return false;
            }
            if onestop {
                !search_onestop(db, &o, &d, date).is_empty()
            } else {
                !search_direct(db, &o, &d, date).is_empty()
            }
        });
        if let Some(date) = found {
            let v = json!({"origin": o, "destination": d, "date": date});
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// One booking to price and pay: segments (flight number, date) and the choices made.
struct Trip<'a> {
    legs: &'a [(String, String)],
    flight_type: &'a str,
    cabin: &'a str,
    passengers: &'a [Passenger],
    bags: i64,
    insurance: &'a str,
}

fn booking_args(db: &AirlineDb, user_id: &str, user: &User, trip: Trip) -> Vec<Value> {
    let Trip {
        legs,
        flight_type,
        cabin,
        passengers,
        bags,
        insurance,
    } = trip;
    let pax = passengers.len() as i64;
    let mut total = Money(0);
    let mut route = Vec::new();
    for (n, d) in legs {
        let Some(f) = db.flights.get(n) else {
            return Vec::new();
        };
        let Some(price) = f
            .dates
            .get(d)
            .and_then(|x| x.prices.as_ref())
            .and_then(|p| p.get(cabin))
        else {
            return Vec::new();
        };
        total = total + price.times(pax);
        route.push((f.origin.clone(), f.destination.clone()));
    }
    let (Some(first), Some(last)) = (route.first(), route.last()) else {
        return Vec::new();
    };
    let destination = if flight_type == "round_trip" {
        first.1.clone()
    } else {
        last.1.clone()
    };
    let nonfree = (bags - allowance(user, cabin, pax)).max(0);
    if insurance == "yes" {
        total = total + Money::dollars(INSURANCE_FEE).times(pax);
    }
    total = total + Money::dollars(BAG_FEE).times(nonfree);
    let flights: Vec<Value> = legs
        .iter()
        .map(|(n, d)| json!({"flight_number": n, "date": d}))
        .collect();
    payers(user, total)
        .into_iter()
        .take(2)
        .map(|pid| {
            json!({"user_id": user_id, "origin": first.0, "destination": destination,
                "flight_type": flight_type, "cabin": cabin, "flights": flights,
                "passengers": passengers, "payment_methods": [{"payment_id": pid, "amount": total.as_f64()}],
                "total_baggages": bags, "nonfree_baggages": nonfree, "insurance": insurance})
        })
        .collect()
}

fn propose_bookings(
    db: &AirlineDb,
    user_id: &str,
    user: &User,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let me = Passenger {
        first_name: user.name.first_name.clone(),
        last_name: user.name.last_name.clone(),
        dob: user.dob.clone(),
    };
    let mut group = vec![me.clone()];
    group.extend(user.saved_passengers.iter().take(1).cloned());
    let dates = future_dates();
    // Flights the context revealed first (with the dates it saw), then random bookable ones.
    let mut picks: Vec<(String, Vec<String>)> = ctx
        .values("flight_number")
        .iter()
        .map(|n| {
            let mut d = ctx.values("date").to_vec();
            d.extend(dates.iter().cloned());
            (n.clone(), d)
        })
        .collect();
    // Itineraries the customer's last search offered come first, booked as found (one way).
    let mut out = Vec::new();
    for offer in ctx.values(SEARCH_OFFERS).iter().take(3) {
        let Ok(Value::Array(legs)) = serde_json::from_str::<Value>(offer) else {
            continue;
        };
        let legs: Vec<(String, String)> = legs
            .iter()
            .map(|l| {
                (
                    str_arg(l, "flight_number").to_string(),
                    str_arg(l, "date").to_string(),
                )
            })
            .collect();
        let cabin = *CABINS.choose(rng).unwrap_or(&"economy");
        let bags = rng.random_range(0..=2i64);
        let insurance = if rng.random_bool(0.5) { "yes" } else { "no" };
        for c in [cabin, "economy", "business"] {
            for (passengers, insurance) in
                [(std::slice::from_ref(&me), insurance), (&group[..], "no")]
            {
                let trip = Trip {
                    legs: &legs,
                    flight_type: "one_way",
                    cabin: c,
                    passengers,
                    bags,
                    insurance,
                };
                out.extend(booking_args(db, user_id, user, trip));
            }
        }
    }
    let all: Vec<String> = db.flights.keys().map(str::to_string).collect();
    for _ in 0..6 {
        if let Some(n) = all.choose(rng) {
            let mut d = dates.clone();
            d.shuffle(rng);
            picks.push((n.clone(), d));
        }
    }
    for (number, dates) in picks {
        let Some(f) = db.flights.get(&number) else {
            continue;
        };
        let Some(date) = dates.iter().find(|d| {
            d.as_str() > TODAY
                && f.dates.get(d.as_str()).is_some_and(|x| {
                    x.status == "available"
                        && x.available_seats
                            .as_ref()
                            .is_some_and(|s| s.economy >= 2 || s.business >= 2)
                })
        }) else {
            continue;
        };
        let cabin = *CABINS.choose(rng).unwrap_or(&"economy");
        let bags = rng.random_range(0..=2i64);
        let insurance = if rng.random_bool(0.5) { "yes" } else { "no" };
        for c in [cabin, "economy", "business"] {
            let legs = [(number.clone(), date.clone())];
            for (passengers, insurance) in
                [(std::slice::from_ref(&me), insurance), (&group[..], "no")]
            {
                let trip = Trip {
                    legs: &legs,
                    flight_type: "one_way",
                    cabin: c,
                    passengers,
                    bags,
                    insurance,
                };
                out.extend(booking_args(db, user_id, user, trip));
            }
        }
        // A round trip back on a later day, when a return flight exists.
        let back = db
            .flights
            .iter()
            .map(|(_, b)| b)
            .find(|b| b.origin == f.destination && b.destination == f.origin);
        if let (Some(b), Some(day)) = (back, parse_date(date)) {
            let ret = format_date(day + 2);
            let legs = [
                (number.clone(), date.clone()),
                (b.flight_number.clone(), ret),
            ];
            let trip = Trip {
                legs: &legs,
                flight_type: "round_trip",
                cabin: "economy",
                passengers: std::slice::from_ref(&me),
                bags,
                insurance,
            };
            out.extend(booking_args(db, user_id, user, trip));
        }
    }
    out
}

fn propose_flight_changes(
    db: &AirlineDb,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let mut c = Vec::new();
    for r in reservations_for(db, ctx, rng, "update_reservation_flights", Purpose::Write) {
        if r.is_cancelled() || any_flown(db, r) {
            continue;
        }
        let Some(owner) = db.users.get(&r.user_id) else {
            continue;
        };
        let same: Vec<Value> = r
            .flights
            .iter()
            .map(|s| json!({"flight_number": s.flight_number, "date": s.date}))
            .collect();
        let mut variants: Vec<(String, Vec<Value>)> = Vec::new();
        // A cabin change on the same flights (allowed for every cabin).
        let up = match r.cabin.as_str() {
            "basic_economy" => "economy",
            "economy" => "business",
            _ => "economy",
        };
        variants.push((up.to_string(), same.clone()));
        if r.cabin != "basic_economy" {
            // The same flights a day later or earlier (still in the future).
            for shift in [1i64, -1, 2] {
                let moved: Option<Vec<Value>> = r
                    .flights
                    .iter()
                    .map(|s| {
                        let d = format_date(parse_date(&s.date)? + shift);
                        (d.as_str() > TODAY)
                            .then(|| json!({"flight_number": s.flight_number, "date": d}))
                    })
                    .collect();
                if let Some(m) = moved {
                    variants.push((r.cabin.clone(), m));
                }
            }
            // Another nonstop on the same route and date, for one-segment trips.
            if let [s] = r.flights.as_slice() {
                for o in search_direct(db, &s.origin, &s.destination, &s.date) {
                    if o.flight_number != s.flight_number {
                        variants.push((
                            r.cabin.clone(),
                            vec![json!({"flight_number": o.flight_number, "date": s.date})],
                        ));
                    }
                }
            }
        }
        // Cabin changes and moves to other flights in a seeded order, so both kinds occur.
        variants.shuffle(rng);
        for (cabin, flights) in variants {
            let cost = change_cost(db, r, &cabin, &flights).unwrap_or(Money(0));
            for pid in payers(owner, cost).into_iter().take(2) {
                c.push(json!({"reservation_id": r.reservation_id, "cabin": cabin,
                    "flights": flights, "payment_id": pid}));
            }
        }
    }
    c
}

/// The fare difference a flight change would charge (as the tool computes it).
pub(super) fn change_cost(
    db: &AirlineDb,
    r: &Reservation,
    cabin: &str,
    flights: &[Value],
) -> Option<Money> {
    let pax = r.passenger_count();
    let mut total = Money(0);
    for f in flights {
        let n = str_arg(f, "flight_number");
        let d = str_arg(f, "date");
        let kept = r
            .flights
            .iter()
            .find(|s| s.flight_number == n && s.date == d && cabin == r.cabin);
        let price = match kept {
            Some(s) => s.price,
            None => db
                .flights
                .get(n)?
                .dates
                .get(d)?
                .prices
                .as_ref()?
                .get(cabin)?,
        };
        total = total + price.times(pax);
    }
    let old: Money = r.flights.iter().map(|s| s.price).sum();
    Some(total - old.times(pax))
}
