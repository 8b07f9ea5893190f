//! The machine-checkable rules of `policies/movie.md`, as named kit rows per write tool.
//! Grounding drops proposals that break one; graph and task verification reject calls
//! that do; the rule name groups rejections in `tracer stats`.
//!
//! The tools already refuse unknown ids, shows that are not scheduled, unknown or taken
//! seats, payments that do not match, and seat changes of bookings that are not
//! confirmed. These rules add what the policy asks and the tools do not check: no
//! wheelchair-accessible seat unless the customer asks for one (no request does); a
//! booking names the customer in full; a payment's id is its payment method's id and it
//! carries the current time; a seat change really changes something; a cancellation is of a
//! booking still active, for a show that has not been completed.
//!
//! Architecture invariant: reads the state only.

use super::db::{CONFIRMED, MovieDb, SCHEDULED};
use super::tools::{NOW, show};
use crate::domain::kit::policy::{Rule, refuse_if, rule};
use crate::domain::kit::text::arg_str;
use serde_json::Value;

const CREATE: &str = "create_booking";
const UPDATE: &str = "update_booking_seats";
const CANCEL: &str = "cancel_booking";

/// Checked in order; the first broken rule is reported.
pub static RULES: [Rule<MovieDb>; 9] = [
    rule(CREATE, "customer_complete", |_, a| {
        let c = &a["customer"];
        let missing = [
            c["name"]["first_name"].as_str(),
            c["name"]["last_name"].as_str(),
            c["email"].as_str(),
            c["phone"].as_str(),
        ]
        .iter()
        .any(|v| v.is_none_or(|s| s.trim().is_empty()));
        refuse_if(missing, || {
            "a booking names the customer: first and last name, email and phone".into()
        })
    }),
    rule(CREATE, "no_accessible_seats", |db, a| {
        accessible_seats(db, arg_str(a, "theater_id"), arg_str(a, "show_id"), a, &[])
    }),
    rule(CREATE, "payments_follow_policy", |_, a| {
        for p in a["payments"].as_array().into_iter().flatten() {
            payment_ok(p)?;
        }
        Ok(())
    }),
    rule(UPDATE, "no_accessible_seats", |db, a| {
        let Some(b) = db.bookings.get(arg_str(a, "booking_id")) else {
            return Ok(());
        };
        let own: Vec<&str> = b.seats.iter().map(|s| s.seat_id.as_str()).collect();
        accessible_seats(db, &b.theater_id, &b.show_id, a, &own)
    }),
    rule(UPDATE, "seats_change", |db, a| {
        let Some(b) = db.bookings.get(arg_str(a, "booking_id")) else {
            return Ok(());
        };
        let now: Vec<(&str, &str)> = b
            .seats
            .iter()
            .map(|s| (s.seat_id.as_str(), s.ticket_type.as_str()))
            .collect();
        let asked: Vec<(&str, &str)> = seat_args(a);
        refuse_if(asked == now, || {
            "the booking already has exactly these seats".into()
        })
    }),
    rule(UPDATE, "payments_follow_policy", |_, a| {
        match a.get("payment") {
            Some(p) if !p.is_null() => payment_ok(p),
            _ => Ok(()),
        }
    }),
    rule(CANCEL, "booking_active", |db, a| {
        match db.bookings.get(arg_str(a, "booking_id")) {
            Some(b) if b.status != CONFIRMED && b.status != "pending" => {
                Err(format!("booking {} is already {}", b.booking_id, b.status))
            }
            _ => Ok(()),
        }
    }),
    rule(CANCEL, "show_not_completed", |db, a| {
        let Some(b) = db.bookings.get(arg_str(a, "booking_id")) else {
            return Ok(());
        };
        match show(db, &b.theater_id, &b.show_id, None) {
            Ok((_, s)) if s.status != SCHEDULED && s.status != "canceled" => Err(format!(
                "the show is {}: a human agent handles that booking",
                s.status
            )),
            _ => Ok(()),
        }
    }),
    rule(CREATE, "single_payment", |_, a| {
        match a["payments"].as_array().map(Vec::len) {
            Some(1) => Ok(()),
            _ => Err("a booking is paid with one payment".into()),
        }
    }),
];

/// `(seat_id, ticket_type)` of the call's `seats`.
pub fn seat_args(a: &Value) -> Vec<(&str, &str)> {
    a["seats"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["seat_id"].as_str().unwrap_or(""),
                s["ticket_type"].as_str().unwrap_or(""),
            )
        })
        .collect()
}

fn accessible_seats(
    db: &MovieDb,
    theater_id: &str,
    show_id: &str,
    a: &Value,
    own: &[&str],
) -> Result<(), String> {
    let Some(t) = db.theaters.get(theater_id) else {
        return Ok(());
    };
    let Some((_, s)) = t.show(show_id) else {
        return Ok(());
    };
    let Some(aud) = t.auditoriums.get(&s.auditorium_id) else {
        return Ok(());
    };
    for (seat, _) in seat_args(a) {
        if own.contains(&seat) {
            continue;
        }
        if aud
            .seats()
            .any(|x| x.seat_id == seat && x.wheelchair_accessible)
        {
            return Err(format!(
                "seat {seat} is wheelchair accessible: assign it only when asked"
            ));
        }
    }
    Ok(())
}

/// A payment is named after the payment method it uses and stamped with the current time.
fn payment_ok(p: &Value) -> Result<(), String> {
    let method = p["method"]["payment_method_id"].as_str().unwrap_or("");
    if p["payment_id"].as_str() != Some(method) {
        return Err(format!(
            "a payment's id is its payment method id ({method})"
        ));
    }
    if p["created_at"].as_str() != Some(NOW) {
        return Err(format!("a payment is stamped with the current time {NOW}"));
    }
    Ok(())
}
