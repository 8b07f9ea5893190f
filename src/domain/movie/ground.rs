//! Grounding hooks for movie: candidate arguments per tool (`propose_calls`); the ids a
//! call reveals are learnt as `tools.toml` declares (`learns`), and the rules proposals
//! respect are in `policy.rs`.
//!
//! Proposals are about the context's customer (their email): bookings the conversation
//! revealed come first, then the customer's own in a seeded order. Write proposals are
//! shaped to succeed and pay exactly: a new booking takes adjacent free seats that are not
//! wheelchair accessible in a scheduled show (at a theater the customer knows first) and
//! pays the oracle's grand total with the method the customer paid with before; a seat
//! change moves to other free seats, adds or drops a seat or changes a ticket type, paying
//! the exact difference when it costs more; a cancellation is of an active booking whose
//! show is not completed.
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{Booking, CONFIRMED, MovieDb, PaymentMethod, SCHEDULED, Show, Theater};
use super::tools::{NOW, TICKET_TYPES, booked_seats, grand_total, seat_change_difference};
use crate::domain::GroundingContext;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use rand::RngExt;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

fn email(ctx: &GroundingContext) -> &str {
    ctx.user_id.as_deref().unwrap_or("")
}

/// The customer's bookings matching `keep`: known ones first, the rest shuffled.
fn ranked_bookings<'a>(
    db: &'a MovieDb,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
    keep: impl Fn(&Booking) -> bool,
) -> Vec<&'a Booking> {
    let mail = email(ctx).to_lowercase();
    let own: Vec<String> = db
        .bookings_of(&mail)
        .iter()
        .map(|b| b.booking_id.clone())
        .collect();
    let row = |id: &str| {
        let b = db.bookings.get(id)?;
        (b.customer.email.to_lowercase() == mail && keep(b)).then_some(b)
    };
    propose::ranked_rows(ctx, "booking_id", own, row, rng)
}

/// The show of a booking.
fn show_of<'a>(db: &'a MovieDb, b: &Booking) -> Option<(&'a Theater, &'a Show)> {
    let t = db.theaters.get(&b.theater_id)?;
    Some((t, t.show(&b.show_id)?.1))
}

fn scheduled(db: &MovieDb, b: &Booking) -> bool {
    show_of(db, b).is_some_and(|(_, s)| s.status == SCHEDULED)
}

/// Free seats of a show that are not wheelchair accessible, row by row.
fn free_rows(db: &MovieDb, t: &Theater, s: &Show, except: Option<&str>) -> Vec<Vec<String>> {
    let held = booked_seats(db, &t.theater_id, &s.show_id, except);
    let Some(aud) = t.auditoriums.get(&s.auditorium_id) else {
        return Vec::new();
    };
    aud.seat_map
        .rows
        .values()
        .map(|row| {
            row.iter()
                .filter(|x| !x.wheelchair_accessible && !held.contains(&x.seat_id))
                .map(|x| x.seat_id.clone())
                .collect()
        })
        .collect()
}

/// The payment method the customer used last (the latest non-refund payment).
fn usual_method<'a>(db: &'a MovieDb, mail: &str) -> Option<&'a PaymentMethod> {
    db.bookings_of(mail)
        .into_iter()
        .flat_map(|b| b.payment_history.iter())
        .filter(|p| p.amount > 0.0 && p.method.payment_method_id != "refund")
        .map(|p| &p.method)
        .next_back()
}

fn seats_json(seats: &[String], types: &[&str]) -> Value {
    Value::Array(
        seats
            .iter()
            .zip(types.iter().cycle())
            .map(|(s, t)| json!({"seat_id": s, "ticket_type": t}))
            .collect(),
    )
}

/// Scheduled shows to book: at theaters the conversation or the customer's bookings name
/// first, then elsewhere.
fn candidate_shows<'a>(
    db: &'a MovieDb,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<(&'a Theater, &'a Show)> {
    let mail = email(ctx).to_lowercase();
    let own: Vec<String> = db
        .bookings_of(&mail)
        .iter()
        .map(|b| b.theater_id.clone())
        .collect();
    let all: Vec<String> = db.theaters.keys().map(str::to_string).collect();
    let mut theaters = propose::tiered(
        ctx,
        "theater_id",
        vec![own],
        |id| db.theaters.contains(id),
        rng,
    );
    theaters.truncate(3);
    theaters.extend(propose::shuffled(all, rng).into_iter().take(2));
    let mut out = Vec::new();
    for id in propose::distinct(propose::values(theaters)) {
        let Some(t) = id.as_str().and_then(|id| db.theaters.get(id)) else {
            continue;
        };
        let mut shows: Vec<&Show> = t
            .shows()
            .map(|(_, s)| s)
            .filter(|s| s.status == SCHEDULED)
            .collect();
        let known = ctx.values("show_id");
        shows.sort_by_key(|s| !known.contains(&s.show_id));
        if let Some(first) = shows.first().copied() {
            let rest: Vec<&Show> = shows[1..].to_vec();
            out.push((t, first));
            if let Some(other) = rest.choose(rng) {
                out.push((t, *other));
            }
        }
    }
    out
}

/// A booking request at a show: up to `count` adjacent free seats of one row.
fn booking_seats(
    db: &MovieDb,
    t: &Theater,
    s: &Show,
    count: usize,
    rng: &mut ChaCha8Rng,
) -> Option<Vec<String>> {
    let mut rows = free_rows(db, t, s, None);
    rows.retain(|r| r.len() >= count);
    let row = rows.choose(rng)?;
    let at = rng.random_range(0..=row.len() - count);
    Some(row[at..at + count].to_vec())
}

fn ticket_types(rng: &mut ChaCha8Rng, n: usize) -> Vec<&'static str> {
    (0..n)
        .map(|i| {
            if i == 0 {
                "adult"
            } else {
                TICKET_TYPES[rng.random_range(0..TICKET_TYPES.len())]
            }
        })
        .collect()
}

fn preview_args(db: &MovieDb, ctx: &GroundingContext, rng: &mut ChaCha8Rng) -> Vec<Value> {
    let mut out = Vec::new();
    for (t, s) in candidate_shows(db, ctx, rng) {
        let count = [2, 1, 3][rng.random_range(0..3usize)];
        let Some(seats) = booking_seats(db, t, s, count, rng) else {
            continue;
        };
        let types = ticket_types(rng, seats.len());
        out.push(json!({"theater_id": t.theater_id, "show_id": s.show_id,
            "seats": seats_json(&seats, &types)}));
    }
    out
}

/// A payment as the policy shapes it: named after its method, stamped now.
fn payment(amount: f64, method: &PaymentMethod) -> Value {
    json!({"payment_id": method.payment_method_id, "amount": amount, "method": method,
        "created_at": NOW})
}

pub fn propose_calls(
    db: &MovieDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let mail = email(ctx).to_lowercase();
    let mut out: Vec<Value> = Vec::new();
    match tool {
        "list_movies" | "list_theaters" => out.push(json!({})),
        "get_booking_details" => {
            for b in ranked_bookings(db, ctx, rng, |_| true) {
                out.push(json!({"booking_id": b.booking_id}));
            }
        }
        "get_movie_details" => {
            let own: Vec<String> = ranked_bookings(db, ctx, rng, |_| true)
                .iter()
                .map(|b| b.movie_id.clone())
                .collect();
            let all: Vec<String> = db.movies.keys().map(str::to_string).collect();
            let mut ids =
                propose::tiered(ctx, "movie_id", vec![own], |id| db.movies.contains(id), rng);
            ids.extend(propose::shuffled(all, rng).into_iter().take(2));
            for id in propose::distinct(propose::values(ids)) {
                out.push(json!({"movie_id": id}));
            }
        }
        "get_theater_details" => {
            let own: Vec<String> = ranked_bookings(db, ctx, rng, |_| true)
                .iter()
                .map(|b| b.theater_id.clone())
                .collect();
            for id in propose::tiered(
                ctx,
                "theater_id",
                vec![own],
                |id| db.theaters.contains(id),
                rng,
            ) {
                out.push(json!({"theater_id": id}));
            }
        }
        "list_shows" | "get_show_details" | "get_show_status" | "get_seat_availability" => {
            let mut pairs: Vec<(String, String, String, String)> =
                ranked_bookings(db, ctx, rng, |_| true)
                    .iter()
                    .map(|b| {
                        (
                            b.theater_id.clone(),
                            b.show_id.clone(),
                            b.date.clone(),
                            b.movie_id.clone(),
                        )
                    })
                    .collect();
            for (t, s) in candidate_shows(db, ctx, rng) {
                let date = t
                    .show(&s.show_id)
                    .map(|(d, _)| d.to_string())
                    .unwrap_or_default();
                pairs.push((
                    t.theater_id.clone(),
                    s.show_id.clone(),
                    date,
                    s.movie_id.clone(),
                ));
            }
            for (k, (t, s, date, movie)) in pairs.into_iter().enumerate() {
                out.push(match tool {
                    "list_shows" if k % 2 == 1 => {
                        json!({"theater_id": t, "date": date, "movie_id": movie})
                    }
                    "list_shows" => json!({"theater_id": t, "date": date}),
                    "get_show_details" if k % 2 == 1 => {
                        json!({"theater_id": t, "show_id": s, "date": date})
                    }
                    _ => json!({"theater_id": t, "show_id": s}),
                });
            }
            out = propose::distinct(out);
        }
        "price_preview" => out = preview_args(db, ctx, rng),
        "create_booking" => {
            let Some(last) = db.bookings_of(&mail).last().copied() else {
                return out;
            };
            let Some(method) = usual_method(db, &mail) else {
                return out;
            };
            for mut args in preview_args(db, ctx, rng) {
                let total = grand_total(db, &args);
                args["customer"] = json!(last.customer);
                args["delivery_method"] = json!(last.delivery.method);
                args["payments"] = json!([payment(total, method)]);
                out.push(args);
            }
        }
        "cancel_booking" => {
            let active = |b: &Booking| {
                (b.status == CONFIRMED || b.status == "pending")
                    && show_of(db, b).is_some_and(|(_, s)| s.status != "completed")
            };
            for b in ranked_bookings(db, ctx, rng, active) {
                out.push(json!({"booking_id": b.booking_id}));
            }
        }
        "update_booking_seats" => {
            let method = usual_method(db, &mail).cloned();
            let open = |b: &Booking| b.status == CONFIRMED && scheduled(db, b);
            for b in ranked_bookings(db, ctx, rng, open) {
                seat_change_proposals(db, b, method.as_ref(), rng, &mut out);
                if out.len() >= MAX_PROPOSALS {
                    break;
                }
            }
        }
        "calculate" => {
            for b in ranked_bookings(db, ctx, rng, |_| true).into_iter().take(2) {
                let terms: Vec<String> = b.seats.iter().map(|s| s.price.to_string()).collect();
                if !terms.is_empty() {
                    out.push(json!({"expression": terms.join(" + ")}));
                }
            }
        }
        "think" => out.push(json!({"thought": format!(
            "Check the show, the seats and the price of {}'s booking before any change.",
            if mail.is_empty() { "the customer" } else { mail.as_str() })})),
        "transfer_to_human_agents" => out.push(json!({"summary": format!(
            "Customer {} needs help the booking tools cannot give.",
            if mail.is_empty() { "(unknown)" } else { mail.as_str() })})),
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}

/// Seat changes of one booking: other free seats (same ticket types), one more seat, one
/// seat fewer, another ticket type; each paying the exact difference when it costs more.
fn seat_change_proposals(
    db: &MovieDb,
    b: &Booking,
    method: Option<&PaymentMethod>,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let Some((t, s)) = show_of(db, b) else {
        return;
    };
    let current: Vec<String> = b.seats.iter().map(|x| x.seat_id.clone()).collect();
    let types: Vec<&str> = b.seats.iter().map(|x| x.ticket_type.as_str()).collect();
    let rows = free_rows(db, t, s, Some(&b.booking_id));
    let mut options: Vec<Value> = Vec::new();
    // Move: the same number of adjacent seats elsewhere.
    let fitting: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r.len() >= current.len() && !current.is_empty())
        .collect();
    if let Some(row) = fitting.choose(rng) {
        let at = rng.random_range(0..=row.len() - current.len());
        let seats = row[at..at + current.len()].to_vec();
        if seats != current {
            options.push(seats_json(&seats, &types));
        }
    }
    // Add one seat beside the current ones (adult).
    let held = booked_seats(db, &t.theater_id, &s.show_id, None);
    if let Some(extra) = rows
        .iter()
        .flatten()
        .find(|x| !held.contains(*x) && !current.contains(x))
    {
        let mut seats = current.clone();
        seats.push(extra.clone());
        let mut ty = types.clone();
        ty.push("adult");
        options.push(seats_json(&seats, &ty));
    }
    // Drop the last seat.
    if current.len() >= 2 {
        let n = current.len() - 1;
        options.push(seats_json(&current[..n], &types[..n]));
    }
    // Change the first seat's ticket type.
    if let Some(first) = types.first() {
        let other = if *first == "adult" { "senior" } else { "adult" };
        let mut ty = types.clone();
        ty[0] = other;
        options.push(seats_json(&current, &ty));
    }
    for seats in options {
        let mut args = json!({"booking_id": b.booking_id, "seats": seats});
        let diff = seat_change_difference(db, &args);
        if diff > 0.0 {
            let Some(m) = method else { continue };
            args["payment"] = payment(diff, m);
        }
        out.push(args);
    }
}
