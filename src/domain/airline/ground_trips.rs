//! The airline grounder's trip proposals: flight searches from the customer's
//! reservations and the places they know, bookings built from real search offers, and
//! flight changes with the payment that covers their cost.
//!
//! Architecture invariant: reads the state only; every proposal is checked on a fork by
//! `ground.rs`.

use super::db::{AirlineDb, BAG_FEE, CABINS, CLOCK, INSURANCE_FEE, Money, Passenger, User};
use super::policy::{allowance, any_flown};
use super::tools::{change_cost, search_direct, search_onestop};
use crate::domain::GroundingContext;
use crate::domain::kit::clock::{format_date, parse_date};
use crate::domain::kit::text::arg_str;
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::ground_memory::{
    LAST_SEARCH, Purpose, SEARCH_OFFERS, SEARCHED, reservations_for, search_key,
};

/// How many proposals a call returns at most.
pub(super) const MAX_PROPOSALS: usize = 8;

pub(super) fn future_dates() -> Vec<String> {
    let today = parse_date(CLOCK.today()).unwrap_or_default();
    (1..=15).map(|k| format_date(today + k)).collect()
}

/// Payment ids of `user` that can pay `cost` for a change: credit cards, then gift cards
/// with enough balance.
pub(super) fn payers(user: &User, cost: Money) -> Vec<String> {
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

pub(super) fn propose_searches(
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
pub(super) struct Trip<'a> {
    legs: &'a [(String, String)],
    flight_type: &'a str,
    cabin: &'a str,
    passengers: &'a [Passenger],
    bags: i64,
    insurance: &'a str,
}

pub(super) fn booking_args(db: &AirlineDb, user_id: &str, user: &User, trip: Trip) -> Vec<Value> {
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
pub(super) fn draw_choices(rng: &mut ChaCha8Rng) -> (&'static str, i64, &'static str) {
    let cabin = *CABINS.choose(rng).unwrap_or(&"economy");
    let bags = rng.random_range(0..=2i64);
    let insurance = if rng.random_bool(0.5) { "yes" } else { "no" };
    (cabin, bags, insurance)
}

/// One-way bookings of `legs` in the drawn cabin, then economy and business: for the
/// customer alone (`group[0]`, with the drawn insurance) and for the whole group (without).
pub(super) fn one_way_bookings(
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

pub(super) fn propose_bookings(
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

pub(super) fn propose_flight_changes(
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
