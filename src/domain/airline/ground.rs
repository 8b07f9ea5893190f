//! Grounding hooks of the airline domain: id learning from tool outputs ([`observe`]) and
//! candidate arguments for a tool call ([`propose_calls`]); the policy rules they respect
//! are in `policy.rs`.
//!
//! Write proposals are built from the customer's own reservations and payment methods and
//! from real bookable flights, then kept only if they obey the policy and succeed on a
//! throw-away fork of the state (forking is an `Arc` clone), so every proposal returned is
//! executable and policy-compliant.
//!
//! Architecture invariant: reads the state only; never mutates `self` (dry runs use forks).

use super::db::{
    AirlineDb, BAG_FEE, CABINS, CLOCK, INSURANCE_FEE, Money, Passenger, Reservation, User,
};
use super::policy::{airline_cancelled_a_flight, allowance, any_flown};
use super::tools::{all_tools, change_cost, search_direct, search_onestop};
use crate::domain::kit::clock::{format_date, parse_date};
use crate::domain::kit::propose;
use crate::domain::kit::text::arg_str;
use crate::domain::{GroundingContext, ToolKind};
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// How many proposals a call returns at most.
const MAX_PROPOSALS: usize = 8;

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
    let spec = all_tools().iter().map(|t| &t.spec).find(|s| s.name == tool);
    spec.is_some_and(|s| s.kind == ToolKind::Write)
}

fn remember_conversation(tool: &str, args: &Value, output: &str, ctx: &mut GroundingContext) {
    let set = |ctx: &mut GroundingContext, key: &str, vals: Vec<String>| {
        ctx.known.insert(key.to_string(), vals);
    };
    set(ctx, LAST_TOOL, vec![tool.to_string()]);
    // A booking touches the reservation it creates (its id is in the output).
    let booked = serde_json::from_str::<Value>(output).unwrap_or_default();
    let holder = if tool == "book_reservation" {
        &booked
    } else {
        args
    };
    if let Some(id) = holder
        .get("reservation_id")
        .and_then(Value::as_str)
        .map(String::from)
    {
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
            .map(|k| arg_str(args, k).to_string())
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
                        .map(|l| json!({"flight_number": arg_str(l, "flight_number"), "date": arg_str(l, "date")}))
                        .collect(),
                    None => vec![json!({"flight_number": arg_str(o, "flight_number"), "date": date})],
                };
                Value::Array(legs).to_string()
            })
            .collect();
        set(ctx, SEARCH_OFFERS, offers);
    }
}

// ---------------------------------------------------------------- proposals

/// Reservations to talk about, most plausible first: the customer's reservations the
/// context already knows, the customer's other reservations in a seeded order, then other
/// reservations the context knows.
fn candidate_reservations<'a>(
    db: &'a AirlineDb,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<&'a Reservation> {
    let user_id = ctx.user_id.as_deref().unwrap_or("");
    let own = db
        .users
        .get(user_id)
        .map(|u| u.reservations.clone())
        .unwrap_or_default();
    let owned = |id: &str| {
        db.reservations
            .get(id)
            .is_some_and(|r| r.user_id == user_id)
    };
    let mut out: Vec<&Reservation> = propose::ranked(ctx, "reservation_id", own, owned, rng)
        .iter()
        .filter_map(|id| db.reservations.get(id))
        .collect();
    for r in ctx
        .values("reservation_id")
        .iter()
        .filter_map(|id| db.reservations.get(id))
    {
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
    let today = parse_date(CLOCK.today()).unwrap_or_default();
    (1..=15).map(|k| format_date(today + k)).collect()
}

/// Keep the candidates that obey the policy and succeed on a fork, deduplicated, capped.
fn executable(db: &AirlineDb, tool: &str, candidates: Vec<Value>) -> Vec<Value> {
    propose::executable(db, tool, propose::distinct(candidates), MAX_PROPOSALS)
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
                people.push(owner.as_passenger());
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
            .filter(|d| d.as_str() > CLOCK.today())
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

/// A booking's random choices: the cabin to try first, checked bags, insurance.
fn draw_choices(rng: &mut ChaCha8Rng) -> (&'static str, i64, &'static str) {
    let cabin = *CABINS.choose(rng).unwrap_or(&"economy");
    let bags = rng.random_range(0..=2i64);
    let insurance = if rng.random_bool(0.5) { "yes" } else { "no" };
    (cabin, bags, insurance)
}

/// One-way bookings of `legs` in the drawn cabin, then economy and business: for the
/// customer alone (`group[0]`, with the drawn insurance) and for the whole group (without).
fn one_way_bookings(
    db: &AirlineDb,
    user_id: &str,
    user: &User,
    legs: &[(String, String)],
    group: &[Passenger],
    (cabin, bags, insurance): (&str, i64, &str),
) -> Vec<Value> {
    let mut out = Vec::new();
    for c in [cabin, "economy", "business"] {
        for (passengers, insurance) in [(&group[..1], insurance), (group, "no")] {
            let trip = Trip {
                legs,
                flight_type: "one_way",
                cabin: c,
                passengers,
                bags,
                insurance,
            };
            out.extend(booking_args(db, user_id, user, trip));
        }
    }
    out
}

fn propose_bookings(
    db: &AirlineDb,
    user_id: &str,
    user: &User,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    // The customer first, then their first saved passenger.
    let mut group = vec![user.as_passenger()];
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
                    arg_str(l, "flight_number").into(),
                    arg_str(l, "date").into(),
                )
            })
            .collect();
        let choices = draw_choices(rng);
        out.extend(one_way_bookings(db, user_id, user, &legs, &group, choices));
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
            d.as_str() > CLOCK.today()
                && f.dates.get(d.as_str()).is_some_and(|x| {
                    x.status == "available"
                        && x.available_seats
                            .as_ref()
                            .is_some_and(|s| s.economy >= 2 || s.business >= 2)
                })
        }) else {
            continue;
        };
        let choices @ (_, bags, insurance) = draw_choices(rng);
        let legs = [(number.clone(), date.clone())];
        out.extend(one_way_bookings(db, user_id, user, &legs, &group, choices));
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
                passengers: &group[..1],
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
                        (d.as_str() > CLOCK.today())
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
