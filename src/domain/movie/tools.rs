//! The sixteen movie tools: the reference's fifteen (same names, arguments, result shapes
//! and error strings, checks in the same order) plus the kit's `think`, so the split is
//! the paper's 13 read / 3 write (generic tools, the price preview included, count as
//! reads). Outputs are tau2's `to_json_str` of what the reference returns: movies,
//! theaters, shows and bookings as `model_dump()` JSON, listings and the price preview as
//! plain dicts (numbers printed as strings), the show status as a bare string.
//! Descriptions are ours, in
//! `tools.toml` with the arguments.
//!
//! Money follows the reference's float arithmetic exactly ([`quote`] is the price oracle of
//! a booking and of a seat change: per-seat tax on price plus convenience fee, each part
//! rounded to cents, each sum rounded after summing, the grand total the rounded sum of the
//! rounded parts), so what grounding pays is what the tools demand. Every check runs before
//! any mutation, so a failing call leaves the state untouched. The clock is the
//! reference's fixed `24-05-15-15-00` ([`NOW`]); new bookings take the first free slot of
//! `BKG001`..`BKG003`.
//!
//! Departures (docs/domains/movie.md, `tests/fixtures/reference/movie/departures.json`): a
//! seat list that names one seat twice is refused (the reference checks the seat *set* but
//! prices the *list*, so a repeated seat was sold twice and charged twice); a booking or a
//! seat change needs at least one seat (the reference created seatless bookings that
//! charged only the booking fee, and a seat change to no seats refunded the tickets while
//! the booking stayed confirmed); a concession line needs a positive quantity and a price
//! that is not negative (the reference subtracted them from the total).
//!
//! Architecture invariant: tools see only the `MovieDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{
    Auditorium, BookedSeat, Booking, BookingPayment, BookingTotals, CONFIRMED, ConcessionItem,
    Customer, Delivery, Movie, MovieDb, PaymentMethod, SCHEDULED, Show, Theater, TicketDelivery,
};
use crate::domain::ToolFn;
use crate::domain::kit::calc::py_round;
use crate::domain::kit::glue::read_tool;
use crate::domain::kit::ids::first_free_slot;
use crate::domain::kit::pyjson::{Py, py_float_repr};
use crate::domain::kit::python::py_repr;
use crate::domain::kit::specs;
use crate::domain::{Args, Tool};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The reference's fixed clock (`YY-MM-DD-HH-MM`).
pub const NOW: &str = "24-05-15-15-00";

/// The slots new bookings take, in order.
pub const NEW_BOOKING_SLOTS: [&str; 3] = ["BKG001", "BKG002", "BKG003"];

pub const TICKET_TYPES: [&str; 3] = ["adult", "child", "senior"];
pub const DELIVERY_METHODS: [&str; 3] = ["e-ticket", "box-office", "kiosk"];
pub const PAYMENT_SOURCES: [&str; 4] = ["card", "wallet", "cash", "gift_card"];

crate::domain::kit::glue::tool_list!(MovieDb);

fn build() -> Vec<Tool<MovieDb>> {
    let runs: [(&str, ToolFn<MovieDb>); 13] = [
        ("list_movies", |db, _| {
            let entry = |m: &Movie| json!({"movie_id": m.movie_id, "title": m.title});
            Ok(plain_list(db.movies.in_order().map(entry)))
        }),
        ("list_theaters", |db, _| {
            let entry = |t: &Theater| json!({"theater_id": t.theater_id, "name": t.name});
            Ok(plain_list(db.theaters.in_order().map(entry)))
        }),
        ("get_movie_details", read_tool!(movie, "movie_id")),
        ("get_theater_details", read_tool!(theater, "theater_id")),
        ("list_shows", |db, a| {
            let t = theater(db, a.str("theater_id")?)?;
            let Some(day) = t.dates.get(a.str("date")?) else {
                return Ok("[]".into());
            };
            let movie = a.opt_str("movie_id");
            let shows = day
                .shows
                .iter()
                .filter(|s| movie.is_none_or(|m| s.movie_id == m));
            Ok(Py::models(shows).to_json_str())
        }),
        ("get_show_details", |db, a| {
            let (_, s) = show(
                db,
                a.str("theater_id")?,
                a.str("show_id")?,
                a.opt_str("date"),
            )?;
            Ok(Py::model(s).to_json_str())
        }),
        ("get_show_status", |db, a| {
            let (_, s) = show(db, a.str("theater_id")?, a.str("show_id")?, None)?;
            Ok(s.status.clone())
        }),
        ("get_seat_availability", |db, a| {
            let tid = a.str("theater_id")?;
            let t = theater(db, tid)?;
            let (_, s) = show(db, tid, a.str("show_id")?, None)?;
            let aud = auditorium(t, &s.auditorium_id)?;
            let booked = booked_seats(db, tid, &s.show_id, None);
            let available: BTreeSet<&str> = aud
                .seats()
                .map(|x| x.seat_id.as_str())
                .filter(|x| !booked.contains(*x))
                .collect();
            Ok(Py::Plain(json!({"available": available, "booked": booked})).to_json_str())
        }),
        ("price_preview", price_preview),
        ("create_booking", create_booking),
        ("cancel_booking", cancel_booking),
        ("update_booking_seats", update_booking_seats),
        ("get_booking_details", read_tool!(booking, "booking_id")),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

crate::domain::kit::glue::row_getters!(MovieDb {
    movie: movies.get_named("Movie") -> Movie,
    theater: theaters.get_named("Theater") -> Theater,
    booking: bookings.get_named("Booking") -> Booking,
});

/// A listing the reference returns as a plain list of dicts (values printed as strings).
fn plain_list(entries: impl Iterator<Item = Value>) -> String {
    Py::Plain(Value::Array(entries.collect())).to_json_str()
}

/// A show of a theater and its date, with the reference's errors.
pub fn show<'a>(
    db: &'a MovieDb,
    theater_id: &str,
    show_id: &str,
    date: Option<&'a str>,
) -> Result<(&'a str, &'a Show), String> {
    let t = theater(db, theater_id)?;
    if let Some(d) = date {
        let day = t
            .dates
            .get(d)
            .ok_or_else(|| format!("No schedule for date {d} at theater {theater_id}"))?;
        let (date, _) = t.dates.iter().find(|(k, _)| *k == d).unwrap_or((d, day));
        return day
            .shows
            .iter()
            .find(|s| s.show_id == show_id)
            .map(|s| (date, s))
            .ok_or_else(|| {
                format!("Show {show_id} not found on date {d} at theater {theater_id}")
            });
    }
    t.show(show_id)
        .ok_or_else(|| format!("Show {show_id} not found at theater {theater_id}"))
}

fn auditorium<'a>(t: &'a Theater, id: &str) -> Result<&'a Auditorium, String> {
    t.auditoriums
        .get(id)
        .ok_or_else(|| format!("Auditorium {id} not found at theater {}", t.theater_id))
}

/// Seats held for a show by confirmed bookings (all but `except`).
pub fn booked_seats(
    db: &MovieDb,
    theater_id: &str,
    show_id: &str,
    except: Option<&str>,
) -> BTreeSet<String> {
    db.bookings
        .iter()
        .filter(|(id, b)| {
            b.theater_id == theater_id
                && b.show_id == show_id
                && b.status == CONFIRMED
                && Some(*id) != except
        })
        .flat_map(|(_, b)| b.seats.iter().map(|s| s.seat_id.clone()))
        .collect()
}

#[derive(Clone, Debug, Deserialize)]
pub struct SeatSpec {
    pub seat_id: String,
    pub ticket_type: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ConcessionSpec {
    pub item_id: String,
    pub name: String,
    pub size: String,
    pub quantity: i64,
    pub price_each: f64,
}

/// The price of a booking as the reference computes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Quote {
    pub seats: Vec<BookedSeat>,
    pub concessions: Vec<ConcessionItem>,
    pub tickets_subtotal: f64,
    pub concessions_subtotal: f64,
    pub fees_total: f64,
    pub tax_total: f64,
    pub grand_total: f64,
    pub booking_fee: f64,
}

impl Quote {
    /// A booking's totals at this price, `paid` of it paid.
    pub fn totals(&self, paid: f64) -> BookingTotals {
        BookingTotals {
            tickets_subtotal: self.tickets_subtotal,
            concessions_subtotal: self.concessions_subtotal,
            fees_total: self.fees_total,
            tax_total: self.tax_total,
            grand_total: self.grand_total,
            amount_paid: paid,
            amount_due: py_round(self.grand_total - paid, 2),
        }
    }
}

fn per_ticket_price(s: &Show, ticket_type: &str) -> Result<f64, String> {
    let p = &s.price_schema;
    match ticket_type {
        "adult" => Ok(p.adult),
        "child" => Ok(p.child),
        "senior" => Ok(p.senior),
        other => Err(format!("Unsupported ticket type {other}")),
    }
}

fn sum(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |a, x| a + x)
}

/// The price oracle: seats priced from the show's price schema, tax per seat on price plus
/// convenience fee, concession tax per item; every part rounded to cents, every sum
/// rounded after summing, in the reference's order. Concession lines already computed (a
/// seat change keeps the booking's) are passed as `kept`.
pub fn quote(
    t: &Theater,
    s: &Show,
    seats: &[SeatSpec],
    concessions: &[ConcessionSpec],
    kept: Option<&[ConcessionItem]>,
) -> Result<Quote, String> {
    let rate = t.pricing_rules.tax_rate_percent / 100.0;
    let fee = s.price_schema.fees.convenience_fee;
    let mut booked = Vec::with_capacity(seats.len());
    for spec in seats {
        let price = per_ticket_price(s, &spec.ticket_type)?;
        booked.push(BookedSeat {
            seat_id: spec.seat_id.clone(),
            ticket_type: spec.ticket_type.clone(),
            price: py_round(price, 2),
            convenience_fee: py_round(fee, 2),
            tax: py_round((price + fee) * rate, 2),
        });
    }
    let lines: Vec<ConcessionItem> = match kept {
        Some(k) => k.to_vec(),
        None => concessions
            .iter()
            .map(|c| {
                let tax_each = c.price_each * rate;
                ConcessionItem {
                    item_id: c.item_id.clone(),
                    name: c.name.clone(),
                    size: c.size.clone(),
                    quantity: c.quantity,
                    price_each: py_round(c.price_each, 2),
                    tax_each: py_round(tax_each, 2),
                    total: py_round(c.quantity as f64 * (c.price_each + tax_each), 2),
                }
            })
            .collect(),
    };
    let tickets_subtotal = py_round(sum(booked.iter().map(|x| x.price)), 2);
    let ticket_fees = py_round(sum(booked.iter().map(|x| x.convenience_fee)), 2);
    let ticket_tax = py_round(sum(booked.iter().map(|x| x.tax)), 2);
    let concessions_subtotal = py_round(
        sum(lines.iter().map(|i| i.price_each * i.quantity as f64)),
        2,
    );
    let concessions_tax = py_round(sum(lines.iter().map(|i| i.tax_each * i.quantity as f64)), 2);
    let booking_fee = t.pricing_rules.fees.booking_fee;
    let fees_total = py_round(ticket_fees + booking_fee, 2);
    let tax_total = py_round(ticket_tax + concessions_tax, 2);
    let grand_total = py_round(
        tickets_subtotal + concessions_subtotal + fees_total + tax_total,
        2,
    );
    Ok(Quote {
        seats: booked,
        concessions: lines,
        tickets_subtotal,
        concessions_subtotal,
        fees_total,
        tax_total,
        grand_total,
        booking_fee,
    })
}

fn seat_specs(a: &Args) -> Result<Vec<SeatSpec>, String> {
    a.parse("seats")
}

fn concession_specs(a: &Args) -> Result<Vec<ConcessionSpec>, String> {
    let specs: Vec<ConcessionSpec> = match a.value("concessions") {
        Some(_) => a.parse("concessions")?,
        None => Vec::new(),
    };
    // Departure: the reference took negative quantities and prices off the total.
    if specs.iter().any(|c| c.quantity < 1) {
        return Err("Concession quantity must be at least 1".into());
    }
    if specs.iter().any(|c| c.price_each < 0.0) {
        return Err("Concession price must not be negative".into());
    }
    Ok(specs)
}

/// The seat checks a booking and a seat change share, in the reference's order, plus our
/// refusals of an empty list and of a seat named twice.
fn check_seats(
    db: &MovieDb,
    t: &Theater,
    s: &Show,
    seats: &[SeatSpec],
    except: Option<&Booking>,
) -> Result<(), String> {
    let aud = auditorium(t, &s.auditorium_id)?;
    if seats.is_empty() {
        return Err("At least one seat is required".into());
    }
    let requested: BTreeSet<&str> = seats.iter().map(|x| x.seat_id.as_str()).collect();
    if requested.len() != seats.len() {
        let twice: BTreeSet<&str> = requested
            .iter()
            .copied()
            .filter(|id| seats.iter().filter(|x| x.seat_id == *id).count() > 1)
            .collect();
        return Err(format!("Duplicate seat ids: {}", py_repr(&twice)));
    }
    let all: BTreeSet<&str> = aud.seats().map(|x| x.seat_id.as_str()).collect();
    let missing: Vec<&str> = requested.difference(&all).copied().collect();
    if !missing.is_empty() {
        return Err(format!("Unknown seat ids: {}", py_repr(&missing)));
    }
    let held = booked_seats(db, &t.theater_id, &s.show_id, None);
    let own: BTreeSet<&str> = except
        .map(|b| b.seats.iter().map(|x| x.seat_id.as_str()).collect())
        .unwrap_or_default();
    let conflict: Vec<&str> = requested
        .iter()
        .copied()
        .filter(|id| held.contains(*id) && !own.contains(id))
        .collect();
    if !conflict.is_empty() {
        return Err(format!("Seats not available: {}", py_repr(&conflict)));
    }
    Ok(())
}

fn bookable<'a>(db: &'a MovieDb, a: &Args) -> Result<(&'a Theater, &'a str, &'a Show), String> {
    let tid = a.str("theater_id")?;
    let t = theater(db, tid)?;
    let (date, s) = show(db, tid, a.str("show_id")?, None)?;
    if s.status != SCHEDULED {
        return Err(format!(
            "Show {} is not available for booking (status={})",
            s.show_id, s.status
        ));
    }
    Ok((t, date, s))
}

/// The quote a preview or a booking call would produce (the checks in the tool's order).
pub fn quote_call(db: &MovieDb, a: &Args) -> Result<(Quote, String), String> {
    let (t, date, s) = bookable(db, a)?;
    let seats = seat_specs(a)?;
    check_seats(db, t, s, &seats, None)?;
    let concessions = concession_specs(a)?;
    Ok((quote(t, s, &seats, &concessions, None)?, date.to_string()))
}

/// The grand total a preview or booking with these arguments would charge (0 when the
/// call would fail): the exact amount a grounded booking pays.
pub fn grand_total(db: &MovieDb, args: &Value) -> f64 {
    quote_call(db, &Args::new(args)).map_or(0.0, |(q, _)| q.grand_total)
}

fn price_preview(db: &mut MovieDb, a: &Args) -> Result<String, String> {
    let (q, _) = quote_call(db, a)?;
    let f = |x: f64| Py::Plain(json!(x));
    Ok(Py::dict([
        ("tickets_subtotal", f(q.tickets_subtotal)),
        ("concessions_subtotal", f(q.concessions_subtotal)),
        ("fees_total", f(q.fees_total)),
        ("tax_total", f(q.tax_total)),
        ("grand_total", f(q.grand_total)),
        ("ticket_count", Py::Plain(json!(q.seats.len()))),
        ("booking_fee", f(py_round(q.booking_fee, 2))),
    ])
    .to_json_str())
}

fn create_booking(db: &mut MovieDb, a: &Args) -> Result<String, String> {
    let customer: Customer = a.parse("customer")?;
    let payments: Vec<BookingPayment> = a.parse("payments")?;
    let (q, date) = quote_call(db, a)?;
    let s = show(db, a.str("theater_id")?, a.str("show_id")?, None)?.1;
    let paid = py_round(sum(payments.iter().map(|p| p.amount)), 2);
    if paid != q.grand_total {
        return Err(format!(
            "Payment amount does not add up, total price is {}, but paid {}",
            py_float_repr(q.grand_total),
            // Python's sum of no payments is the integer 0.
            if payments.is_empty() {
                "0".to_string()
            } else {
                py_float_repr(paid)
            }
        ));
    }
    let id = first_free_slot(&NEW_BOOKING_SLOTS, |k| db.bookings.contains(k))
        .ok_or("Too many new bookings in this session")?;
    let tickets = (1..=q.seats.len())
        .map(|i| {
            let ticket_id = format!("{id}-TKT-{i:03}");
            TicketDelivery {
                barcode: format!("BAR-{ticket_id}"),
                ticket_id,
            }
        })
        .collect();
    let totals = q.totals(paid);
    let b = Booking {
        booking_id: id.clone(),
        theater_id: a.str("theater_id")?.to_string(),
        movie_id: s.movie_id.clone(),
        show_id: s.show_id.clone(),
        date,
        start_time_local: s.start_time_local.clone(),
        status: CONFIRMED.into(),
        created_at: NOW.into(),
        canceled_at: None,
        customer,
        seats: q.seats,
        concessions: q.concessions,
        promotions_applied: Vec::new(),
        payment_history: payments,
        totals,
        delivery: Delivery {
            method: a.str("delivery_method")?.to_string(),
            tickets,
        },
        special_requests: a.opt_str("special_requests").map(str::to_string),
    };
    let out = Py::model(&b).to_json_str();
    db.bookings.insert(id, b);
    Ok(out)
}

/// A refund entry as the reference records it (cash source, method id `refund`), made at
/// `created_at` (the tools' [`NOW`]).
pub fn refund(payment_id: String, amount: f64, created_at: &str) -> BookingPayment {
    BookingPayment {
        payment_id,
        amount,
        method: PaymentMethod {
            source: "cash".into(),
            payment_method_id: "refund".into(),
            extra_info: None,
        },
        created_at: created_at.into(),
    }
}

fn cancel_booking(db: &mut MovieDb, a: &Args) -> Result<String, String> {
    let id = a.str("booking_id")?;
    let b = booking(db, id)?;
    if b.status == "canceled" || b.status == "refunded" {
        return Ok(Py::model(b).to_json_str());
    }
    let b = db.bookings.get_mut(id).ok_or("Booking not found")?;
    let refund_amount = -b.totals.amount_paid;
    if refund_amount != 0.0 {
        b.payment_history.push(refund(
            format!("{id}-refund"),
            py_round(refund_amount, 2),
            NOW,
        ));
        b.totals.amount_paid = py_round(b.totals.amount_paid + refund_amount, 2);
        b.totals.amount_due = py_round(b.totals.grand_total - b.totals.amount_paid, 2);
    }
    b.status = "canceled".into();
    b.canceled_at = Some(NOW.into());
    Ok(Py::model(&*b).to_json_str())
}

/// What a seat change would do: the new quote and the difference to settle (positive: the
/// customer pays it; negative: it is refunded). The checks are the tool's, in its order.
pub fn seat_change(db: &MovieDb, a: &Args) -> Result<(Quote, f64), String> {
    let b = booking(db, a.str("booking_id")?)?;
    let t = theater(db, &b.theater_id)?;
    let (_, s) = show(db, &b.theater_id, &b.show_id, None)?;
    if b.status != CONFIRMED {
        return Err(format!(
            "Only confirmed bookings can be updated (status={})",
            b.status
        ));
    }
    if s.status != SCHEDULED {
        return Err(format!(
            "Show {} is not bookable (status={})",
            b.show_id, s.status
        ));
    }
    let seats = seat_specs(a)?;
    check_seats(db, t, s, &seats, Some(b))?;
    let q = quote(t, s, &seats, &[], Some(&b.concessions))?;
    let diff = py_round(q.grand_total - b.totals.grand_total, 2);
    Ok((q, diff))
}

/// The difference a seat change settles (0 when the call would fail).
pub fn seat_change_difference(db: &MovieDb, args: &Value) -> f64 {
    seat_change(db, &Args::new(args)).map_or(0.0, |(_, d)| d)
}

fn update_booking_seats(db: &mut MovieDb, a: &Args) -> Result<String, String> {
    let payment: Option<BookingPayment> = match a.value("payment") {
        Some(_) => Some(a.parse("payment")?),
        None => None,
    };
    let (q, diff) = seat_change(db, a)?;
    let id = a.str("booking_id")?;
    if diff > 0.0
        && payment
            .as_ref()
            .is_none_or(|p| py_round(p.amount, 2) != diff)
    {
        return Err(format!(
            "Additional payment of {} is required to complete the update",
            py_float_repr(diff)
        ));
    }
    let b = db.bookings.get_mut(id).ok_or("Booking not found")?;
    if diff > 0.0 {
        b.payment_history.extend(payment);
        b.totals.amount_paid = py_round(b.totals.amount_paid + diff, 2);
    } else if diff < 0.0 {
        b.payment_history
            .push(refund(format!("{id}-adj-refund"), diff, NOW));
        b.totals.amount_paid = py_round(b.totals.amount_paid + diff, 2);
    }
    b.seats = q.seats;
    b.totals.tickets_subtotal = q.tickets_subtotal;
    b.totals.fees_total = q.fees_total;
    b.totals.tax_total = q.tax_total;
    b.totals.grand_total = q.grand_total;
    b.totals.amount_due = py_round(b.totals.grand_total - b.totals.amount_paid, 2);
    Ok(Py::model(&*b).to_json_str())
}
