//! The machine-checkable rules of `policies/airline.md`, as named kit rows per write tool:
//! grounding drops proposals that break one, graph and task verification reject calls that
//! do, and the rule name groups those rejections. The tools check only what tau-bench's
//! tools check (ids, seats, balances, sums); these rules add what the agent must enforce:
//! who may cancel, what may change once a trip has begun, the free bag allowance, how
//! changes are paid for, the limits on booking payments, and when compensation is due.
//! Rules run in the order listed and the first broken one is reported, its detail prefixed
//! `policy:`.
//!
//! Architecture invariant: reads the state only; "now" is the domain's simulation clock.

use super::db::{AirlineDb, CLOCK, Money, Reservation, User, free_bags_per_passenger};
use crate::domain::kit::clock::parse_datetime;
use crate::domain::kit::policy::{Rule, rule};
use crate::domain::kit::text::arg_str;
use serde_json::Value;
use std::collections::BTreeSet;

const BOOK: &str = "book_reservation";
const CANCEL: &str = "cancel_reservation";
const FLIGHTS: &str = "update_reservation_flights";
const BAGS: &str = "update_reservation_baggages";
const PASSENGERS: &str = "update_reservation_passengers";
const CERTIFICATE: &str = "send_certificate";

/// Checked in order; the first broken rule is reported.
pub static RULES: &[Rule<AirlineDb>] = &[
    rule(BOOK, "known_user", |db, a| {
        user(db, arg_str(a, "user_id")).map(drop)
    }),
    rule(BOOK, "one_to_five_passengers", |_, a| {
        let n = list_len(a, "passengers");
        deny(
            !(1..=5).contains(&n),
            "policy: a reservation has one to five passengers",
        )
    }),
    rule(BOOK, "payments_from_profile", |db, a| {
        let user = user(db, arg_str(a, "user_id"))?;
        for p in list(a, "payment_methods") {
            let amount = p.get("amount").and_then(Value::as_f64).unwrap_or(0.0);
            deny(
                amount <= 0.0,
                "policy: every payment amount must be positive",
            )?;
            source(user, arg_str(p, "payment_id"))?;
        }
        Ok(())
    }),
    rule(BOOK, "payment_mix", |db, a| {
        let user = user(db, arg_str(a, "user_id"))?;
        let count = |kind: &str| {
            let sources =
                list(a, "payment_methods").map(|p| source(user, arg_str(p, "payment_id")));
            sources.filter(|s| *s == Ok(kind)).count()
        };
        deny(
            count("certificate") > 1 || count("credit_card") > 1 || count("gift_card") > 3,
            "policy: at most one certificate, one credit card and three gift cards",
        )
    }),
    rule(BOOK, "flights_match_trip", |db, a| {
        let Some(legs) = itinerary(db, &flight_refs(a)) else {
            return Ok(());
        };
        let (o, d) = (arg_str(a, "origin"), arg_str(a, "destination"));
        check_route(&legs, o, d, arg_str(a, "flight_type"))
    }),
    rule(BOOK, "paid_bags_match_allowance", |db, a| {
        let user = user(db, arg_str(a, "user_id"))?;
        let (total, nonfree) = bag_args(a);
        let free = allowance(user, arg_str(a, "cabin"), list_len(a, "passengers") as i64);
        let expected = (total - free).max(0);
        deny(
            total < 0 || nonfree != expected,
            &bags_error(total, expected),
        )
    }),
    rule(CANCEL, "known_reservation", |db, a| {
        reservation(db, a).map(drop)
    }),
    rule(CANCEL, "not_cancelled", |db, a| {
        deny(
            reservation(db, a)?.is_cancelled(),
            "policy: the reservation is already cancelled",
        )
    }),
    rule(CANCEL, "nothing_flown", |db, a| {
        deny(
            any_flown(db, reservation(db, a)?),
            "policy: a trip with a flown segment cannot be cancelled (transfer to a human agent)",
        )
    }),
    rule(CANCEL, "cancellation_ground", |db, a| {
        cancellation_ground(db, reservation(db, a)?).map(drop)
    }),
    rule(FLIGHTS, "known_reservation", |db, a| {
        reservation(db, a).map(drop)
    }),
    rule(FLIGHTS, "reservation_open", |db, a| open(db, a).map(drop)),
    rule(FLIGHTS, "known_user", |db, a| {
        owner(db, open(db, a)?).map(drop)
    }),
    rule(FLIGHTS, "basic_economy_flights_fixed", |db, a| {
        let r = open(db, a)?;
        let current: BTreeSet<(String, String)> = r
            .flights
            .iter()
            .map(|s| (s.flight_number.clone(), s.date.clone()))
            .collect();
        let wanted: BTreeSet<(String, String)> = flight_refs(a).into_iter().collect();
        deny(
            current != wanted && r.cabin == "basic_economy",
            "policy: basic economy flights cannot be changed (only the cabin)",
        )
    }),
    rule(FLIGHTS, "cabin_fixed_once_flown", |db, a| {
        let r = open(db, a)?;
        deny(
            any_flown(db, r) && arg_str(a, "cabin") != r.cabin,
            "policy: the cabin cannot change once a segment is flown",
        )
    }),
    rule(FLIGHTS, "flown_segments_kept", |db, a| {
        let wanted = flight_refs(a);
        let dropped = open(db, a)?.flights.iter().any(|s| {
            segment_flown(db, &s.flight_number, &s.date)
                && !wanted.contains(&(s.flight_number.clone(), s.date.clone()))
        });
        deny(dropped, "policy: a flown segment cannot be changed")
    }),
    rule(FLIGHTS, "same_trip", |db, a| {
        let r = open(db, a)?;
        let Some(legs) = itinerary(db, &flight_refs(a)) else {
            return Ok(());
        };
        check_route(&legs, &r.origin, &r.destination, &r.flight_type)
            .map_err(|e| format!("{e}; origin, destination and trip type cannot change"))
    }),
    rule(FLIGHTS, "card_or_gift_card", |db, a| {
        change_payment(owner(db, open(db, a)?)?, arg_str(a, "payment_id"))
    }),
    rule(BAGS, "known_reservation", |db, a| {
        reservation(db, a).map(drop)
    }),
    rule(BAGS, "reservation_open", |db, a| open(db, a).map(drop)),
    rule(BAGS, "known_user", |db, a| {
        owner(db, open(db, a)?).map(drop)
    }),
    rule(BAGS, "bags_only_added", |db, a| {
        let r = open(db, a)?;
        let (total, nonfree) = bag_args(a);
        deny(
            total < r.total_baggages || nonfree < r.nonfree_baggages,
            "policy: checked bags can be added but not removed",
        )
    }),
    rule(BAGS, "paid_bags_match_allowance", |db, a| {
        let r = open(db, a)?;
        let (total, nonfree) = bag_args(a);
        let free = allowance(owner(db, r)?, &r.cabin, r.passenger_count());
        let expected = (total - free).max(r.nonfree_baggages).max(0);
        deny(nonfree != expected, &bags_error(total, expected))
    }),
    rule(BAGS, "card_or_gift_card", |db, a| {
        change_payment(owner(db, open(db, a)?)?, arg_str(a, "payment_id"))
    }),
    rule(PASSENGERS, "known_reservation", |db, a| {
        reservation(db, a).map(drop)
    }),
    rule(PASSENGERS, "reservation_open", |db, a| {
        open(db, a).map(drop)
    }),
    rule(PASSENGERS, "nothing_flown", |db, a| {
        deny(
            any_flown(db, open(db, a)?),
            "policy: passengers of a trip already flown cannot change",
        )
    }),
    rule(PASSENGERS, "same_passenger_count", |db, a| {
        deny(
            list_len(a, "passengers") != open(db, a)?.passengers.len(),
            "policy: the number of passengers cannot change",
        )
    }),
    rule(CERTIFICATE, "known_user", |db, a| {
        user(db, arg_str(a, "user_id")).map(drop)
    }),
    rule(CERTIFICATE, "certificate_eligible", |db, a| {
        deny(
            !certificate_eligible(db, user(db, arg_str(a, "user_id"))?),
            "policy: certificates only for silver/gold members or reservations with insurance \
             or in business",
        )
    }),
    rule(CERTIFICATE, "certificate_amount", |db, a| {
        let user = user(db, arg_str(a, "user_id"))?;
        let amount = Money::from_f64(a.get("amount").and_then(Value::as_f64).unwrap_or(0.0));
        let allowed = user.reservations.iter().any(|id| {
            db.reservations.get(id).is_some_and(|r| {
                let n = r.passenger_count();
                amount == Money::dollars(50).times(n) || amount == Money::dollars(100).times(n)
            })
        });
        deny(
            !allowed,
            "policy: a certificate is $100 (cancelled flight) or $50 (delayed flight) per \
             passenger of one of the user's reservations",
        )
    }),
];

/// Why a reservation may be cancelled under the policy (the first ground that holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ground {
    BookedWithin24Hours,
    AirlineCancelled,
    Business,
    Insured,
}

/// The ground on which a reservation may be cancelled, or `Err` naming the rule.
pub fn cancellation_ground(db: &AirlineDb, r: &Reservation) -> Result<Ground, String> {
    if r.is_cancelled() {
        return Err("policy: the reservation is already cancelled".into());
    }
    if any_flown(db, r) {
        return Err(
            "policy: a trip with a flown segment cannot be cancelled (transfer to a human agent)"
                .into(),
        );
    }
    let booked_recently =
        parse_datetime(&r.created_at).is_some_and(|t| (0..86_400).contains(&(CLOCK.seconds() - t)));
    if booked_recently {
        Ok(Ground::BookedWithin24Hours)
    } else if airline_cancelled_a_flight(db, r) {
        Ok(Ground::AirlineCancelled)
    } else if r.cabin == "business" {
        Ok(Ground::Business)
    } else if r.insurance == "yes" {
        Ok(Ground::Insured)
    } else {
        Err(
            "policy: cancellation needs booking within 24 hours, an airline-cancelled flight, \
             a business cabin or travel insurance"
                .into(),
        )
    }
}

/// A segment is flown once its flight has left (landed or in the air) or its date is past.
fn segment_flown(db: &AirlineDb, flight_number: &str, date: &str) -> bool {
    match db
        .flights
        .get(flight_number)
        .and_then(|f| f.dates.get(date))
    {
        Some(d) => matches!(d.status.as_str(), "landed" | "flying"),
        None => date < CLOCK.today(),
    }
}

pub fn any_flown(db: &AirlineDb, r: &Reservation) -> bool {
    r.flights
        .iter()
        .any(|s| segment_flown(db, &s.flight_number, &s.date))
}

pub fn airline_cancelled_a_flight(db: &AirlineDb, r: &Reservation) -> bool {
    r.flights.iter().any(|s| {
        db.flights
            .get(&s.flight_number)
            .and_then(|f| f.dates.get(&s.date))
            .is_some_and(|d| d.status == "cancelled")
    })
}

/// Free checked bags for `passengers` travellers of `user` in `cabin`.
pub fn allowance(user: &User, cabin: &str, passengers: i64) -> i64 {
    free_bags_per_passenger(&user.membership, cabin) * passengers
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

/// `Err(detail)` when the rule is broken.
fn deny(broken: bool, detail: &str) -> Result<(), String> {
    match broken {
        true => Err(detail.to_string()),
        false => Ok(()),
    }
}

fn user<'a>(db: &'a AirlineDb, id: &str) -> Result<&'a User, String> {
    db.users.get_or(id, "policy: unknown user")
}

fn owner<'a>(db: &'a AirlineDb, r: &Reservation) -> Result<&'a User, String> {
    user(db, &r.user_id)
}

fn reservation<'a>(db: &'a AirlineDb, args: &Value) -> Result<&'a Reservation, String> {
    db.reservations
        .get(arg_str(args, "reservation_id"))
        .ok_or_else(|| "policy: unknown reservation".to_string())
}

/// The call's reservation, which must not be cancelled.
fn open<'a>(db: &'a AirlineDb, args: &Value) -> Result<&'a Reservation, String> {
    let r = reservation(db, args)?;
    match r.is_cancelled() {
        true => Err("policy: a cancelled reservation cannot be changed".into()),
        false => Ok(r),
    }
}

/// The source of a payment method in the user's profile.
fn source<'a>(user: &'a User, payment_id: &str) -> Result<&'a str, String> {
    match user.payment_methods.get(payment_id) {
        Some(m)
            if matches!(
                m.source.as_str(),
                "certificate" | "credit_card" | "gift_card"
            ) =>
        {
            Ok(m.source.as_str())
        }
        _ => Err("policy: the payment method must be in the user's profile".into()),
    }
}

/// Changes are paid with a credit card or a gift card of the owner, never a certificate.
fn change_payment(user: &User, payment_id: &str) -> Result<(), String> {
    match user
        .payment_methods
        .get(payment_id)
        .map(|m| m.source.as_str())
    {
        Some("credit_card" | "gift_card") => Ok(()),
        Some(_) => Err(
            "policy: changes are paid with a credit card or gift card, not a certificate".into(),
        ),
        None => Err("policy: the payment method must be in the user's profile".into()),
    }
}

fn list<'a>(args: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    args.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn list_len(args: &Value, key: &str) -> usize {
    list(args, key).count()
}

/// `(total_baggages, nonfree_baggages)`, 0 when absent.
fn bag_args(args: &Value) -> (i64, i64) {
    let n = |k| args.get(k).and_then(Value::as_i64).unwrap_or(0);
    (n("total_baggages"), n("nonfree_baggages"))
}

fn bags_error(total: i64, expected: i64) -> String {
    format!(
        "policy: with {total} bags the paid bags must be {expected} (free allowance by tier and cabin)"
    )
}

/// `(flight_number, date)` of each segment argument.
pub fn flight_refs(args: &Value) -> Vec<(String, String)> {
    list(args, "flights")
        .map(|f| {
            let (n, d) = (arg_str(f, "flight_number"), arg_str(f, "date"));
            (n.to_string(), d.to_string())
        })
        .collect()
}

/// The airports a list of segments visits, in order, when every flight is known.
fn itinerary(db: &AirlineDb, refs: &[(String, String)]) -> Option<Vec<(String, String)>> {
    refs.iter()
        .map(|(n, _)| {
            let f = db.flights.get(n)?;
            Some((f.origin.clone(), f.destination.clone()))
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
    match ok {
        true => Ok(()),
        false => Err(format!(
            "policy: the flights must match the trip {origin} -> {destination} ({flight_type})"
        )),
    }
}
