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

use super::db::{AirlineDb, BAG_FEE, Money, Passenger};
use super::ground_memory::{
    Purpose, candidate_reservations, remember_conversation, reservations_for,
};
use super::ground_trips::{
    MAX_PROPOSALS, payers, propose_bookings, propose_flight_changes, propose_searches,
};
use super::policy::{airline_cancelled_a_flight, allowance};
use crate::domain::GroundingContext;
use crate::domain::kit::propose;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeSet;

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
        ctx.learn_listed(&v, "reservations", "reservation_id");
        ctx.learn_keys(&v, "payment_methods", "payment_id");
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
