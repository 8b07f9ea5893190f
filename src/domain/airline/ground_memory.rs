//! The airline grounder's memory of the conversation so far (what it last did, which
//! reservations it read or changed, the last search and its offers), kept in the grounding
//! context so proposals tell one coherent customer story, and the reservations a call
//! should be about, read from it.
//!
//! Architecture invariant: reads the state only.

use super::db::{AirlineDb, Reservation};
use super::tools;
use crate::domain::kit::propose;
use crate::domain::kit::text::arg_str;
use crate::domain::{GroundingContext, ToolKind};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// Context keys (underscore-prefixed, so they never clash with argument names) that record
/// the conversation so far, letting proposals keep one coherent customer story: the last
/// tool and the reservation it touched, the reservations already read or changed, and the
/// last search with the itineraries it offered.
pub(super) const LAST_TOOL: &str = "_last_tool";
pub(super) const LAST_RESERVATION: &str = "_last_reservation";
pub(super) const READ: &str = "_read_reservation";
pub(super) const CHANGED: &str = "_changed_reservation";
pub(super) const LAST_SEARCH: &str = "_last_search";
pub(super) const SEARCH_OFFERS: &str = "_search_offers";
pub(super) const SEARCHED: &str = "_searched";

pub(super) fn search_key(onestop: bool, origin: &str, destination: &str, date: &str) -> String {
    format!("{onestop}|{origin}|{destination}|{date}")
}

pub(super) fn is_write(tool: &str) -> bool {
    let spec = tools::all().iter().find(|t| t.spec.name == tool);
    spec.is_some_and(|t| t.spec.kind == ToolKind::Write)
}

pub(super) fn remember_conversation(
    tool: &str,
    args: &Value,
    output: &str,
    ctx: &mut GroundingContext,
) {
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
pub(super) fn candidate_reservations<'a>(
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
    let owned = |id: &str| db.reservations.get(id).filter(|r| r.user_id == user_id);
    let mut out = propose::ranked_rows(ctx, "reservation_id", own, owned, rng);
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
pub(super) enum Purpose {
    Read,
    Write,
}

/// [`candidate_reservations`] reordered so the conversation stays coherent:
/// - a read right after a change looks at the reservation just changed (the customer checks
///   the result); otherwise reads prefer reservations not yet read nor changed;
/// - a write right after reading a reservation acts on it; a write right after a different
///   kind of change continues on the same reservation; otherwise writes prefer reservations
///   not changed yet (so a later intent does not pile onto one already changed).
pub(super) fn reservations_for<'a>(
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
