//! The fourteen airline tools' code; their specs (kind, description, arguments) are data in
//! `tools.toml`, bound here by name.
//!
//! Names, arguments, return shapes and error messages follow tau-bench's public airline
//! environment (as the authors' tau-emotion-bench ships it), so its tasks replay here.
//! Departures (each a fix of an evident defect) are listed in docs/domains/airline.md and
//! marked `Departure:` below.
//!
//! New ids are derived from the state, never from a clock or a global counter:
//! - a booked reservation takes the first unused id of `HATHAT`, `HATHAU`, `HATHAV` (the
//!   ids tau-bench uses), then `HAT000`, `HAT001`, ... (base 36, three characters);
//! - a certificate takes the first unused `certificate_<n>` for n = 3221322, 3221323, ...
//!   in the receiving user's profile.
//!
//! Architecture invariant: tools see only the database and their validated arguments; they
//! never check the policy (that is `policy.rs`) — as in tau-bench, the agent is
//! responsible for the rules the API does not enforce.

use super::db::{
    AirlineDb, BAG_FEE, CLOCK, Flight, FlightDate, INSURANCE_FEE, Money, Passenger, Payment,
    PaymentMethod, Reservation, ReservedFlight, User,
};
use super::generate::airport_city;
use crate::domain::ToolFn;
use crate::domain::kit::clock::{format_date, parse_date};
use crate::domain::kit::rows::refund_all;
use crate::domain::kit::specs;
use crate::domain::kit::text::arg_str;
use crate::domain::kit::{calc, ids};
use crate::domain::{Args, Tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

crate::domain::kit::glue::tool_list!(AirlineDb);

fn build() -> Vec<Tool<AirlineDb>> {
    let runs: [(&str, ToolFn<AirlineDb>); 14] = [
        ("book_reservation", book_reservation),
        ("calculate", |_, a| calc::evaluate(a.str("expression")?)),
        ("cancel_reservation", cancel_reservation),
        (
            "get_reservation_details", // Departure: tau-bench answers "user not found" for an unknown reservation (a
            // copy slip); we name what is missing.
            |db, a| match db.reservations.get(a.str("reservation_id")?) {
                Some(r) => to_json(r),
                None => Err("reservation not found".into()),
            },
        ),
        ("get_user_details", |db, a| {
            match db.users.get(a.str("user_id")?) {
                Some(u) => to_json(u),
                None => Err("user not found".into()),
            }
        }),
        ("list_all_airports", list_all_airports),
        ("search_direct_flight", |db, a| {
            let (o, d, date) = route_args(a)?;
            to_json(&search_direct(db, o, d, date))
        }),
        ("search_onestop_flight", |db, a| {
            let (o, d, date) = route_args(a)?;
            to_json(&search_onestop(db, o, d, date))
        }),
        ("send_certificate", send_certificate),
        ("think", |_, a| a.str("thought").map(|_| String::new())),
        ("transfer_to_human_agents", |_, a| {
            a.str("summary").map(|_| "Transfer successful".to_string())
        }),
        ("update_reservation_baggages", update_reservation_baggages),
        ("update_reservation_flights", update_reservation_flights),
        (
            "update_reservation_passengers",
            update_reservation_passengers,
        ),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

fn to_json<T: Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string(v).map_err(|e| format!("could not serialise the result: {e}"))
}

/// `(origin, destination, date)` of a search.
fn route_args<'a>(args: &Args<'a>) -> Result<(&'a str, &'a str, &'a str), String> {
    Ok((
        args.str("origin")?,
        args.str("destination")?,
        args.str("date")?,
    ))
}

#[derive(Deserialize)]
struct FlightRef {
    flight_number: String,
    date: String,
}

#[derive(Deserialize)]
struct PaymentArg {
    payment_id: String,
    amount: f64,
}

// ---------------------------------------------------------------- read tools

/// Airports that appear in the flight table, with their cities (unknown codes map to
/// themselves). Departure: tau-bench returns a fixed list; deriving it from the data keeps it
/// true for generated and imported databases alike.
fn list_all_airports(db: &mut AirlineDb, _args: &Args) -> Result<String, String> {
    let mut out = BTreeMap::new();
    for (_, f) in db.flights.iter() {
        for code in [&f.origin, &f.destination] {
            let city = airport_city(code).unwrap_or(code.as_str());
            out.insert(code.clone(), city.to_string());
        }
    }
    to_json(&out)
}

/// One flight on one date as a search returns it: the flight without its calendar, merged
/// with that date's entry (and, in one-stop results, the date).
#[derive(Serialize)]
pub struct FlightOffer<'a> {
    pub flight_number: &'a str,
    pub origin: &'a str,
    pub destination: &'a str,
    pub scheduled_departure_time_est: &'a str,
    pub scheduled_arrival_time_est: &'a str,
    #[serde(flatten)]
    pub day: &'a FlightDate,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

fn offer<'a>(f: &'a Flight, day: &'a FlightDate, date: Option<String>) -> FlightOffer<'a> {
    FlightOffer {
        flight_number: &f.flight_number,
        origin: &f.origin,
        destination: &f.destination,
        scheduled_departure_time_est: &f.scheduled_departure_time_est,
        scheduled_arrival_time_est: &f.scheduled_arrival_time_est,
        day,
        date,
    }
}

fn bookable_on<'a>(f: &'a Flight, date: &str) -> Option<&'a FlightDate> {
    f.dates.get(date).filter(|d| d.status == "available")
}

/// Direct flights `origin -> destination` bookable on `date`, in flight-number order.
pub fn search_direct<'a>(
    db: &'a AirlineDb,
    origin: &str,
    destination: &str,
    date: &str,
) -> Vec<FlightOffer<'a>> {
    db.flights
        .iter()
        .filter(|(_, f)| f.origin == origin && f.destination == destination)
        .filter_map(|(_, f)| bookable_on(f, date).map(|d| offer(f, d, None)))
        .collect()
}

/// Connections `origin -> X -> destination`: the first leg departs on `date`, the second
/// leaves no earlier than the first lands (on the next day when the first lands after
/// midnight). Departure: tau-bench builds the next day's date by string arithmetic (wrong at
/// month ends and for days below 10) and shows the second leg's seats of the first date; we
/// use the real next day for both.
pub fn search_onestop<'a>(
    db: &'a AirlineDb,
    origin: &str,
    destination: &str,
    date: &str,
) -> Vec<[FlightOffer<'a>; 2]> {
    let mut out = Vec::new();
    let next_day = parse_date(date).map(|d| format_date(d + 1));
    for (_, f1) in db.flights.iter().filter(|(_, f)| f.origin == origin) {
        let Some(day1) = bookable_on(f1, date) else {
            continue;
        };
        let date2 = if f1.arrives_next_day() {
            match &next_day {
                Some(d) => d.clone(),
                None => continue,
            }
        } else {
            date.to_string()
        };
        for (_, f2) in db.flights.iter() {
            if f2.origin != f1.destination || f2.destination != destination {
                continue;
            }
            if f1.arrival_clock() > f2.scheduled_departure_time_est.as_str() {
                continue;
            }
            let Some(day2) = bookable_on(f2, &date2) else {
                continue;
            };
            out.push([
                offer(f1, day1, Some(date.to_string())),
                offer(f2, day2, Some(date2.clone())),
            ]);
        }
    }
    out
}

// ---------------------------------------------------------------- write tools

/// The id a newly booked reservation receives (see the module comment for the rule).
pub fn next_reservation_id(db: &AirlineDb) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let taken = |id: &str| db.reservations.contains(id);
    if let Some(id) = ids::first_free_slot(&["HATHAT", "HATHAU", "HATHAV"], taken) {
        return id;
    }
    let mut n = 0usize;
    loop {
        let id: String = [n / (36 * 36), (n / 36) % 36, n % 36]
            .iter()
            .map(|&k| char::from(DIGITS.get(k % 36).copied().unwrap_or(b'0')))
            .collect();
        let id = format!("HAT{id}");
        if !taken(&id) || n >= 36 * 36 * 36 {
            return id;
        }
        n += 1;
    }
}

/// Price one segment for `cabin` and `passengers` travellers, with tau-bench's errors.
fn price_segment(
    db: &AirlineDb,
    r: &FlightRef,
    cabin: &str,
    passengers: usize,
) -> Result<ReservedFlight, String> {
    let n = &r.flight_number;
    let flight = db
        .flights
        .get(n)
        .ok_or_else(|| format!("flight {n} not found"))?;
    let day = flight
        .dates
        .get(&r.date)
        .ok_or_else(|| format!("flight {n} not found on date {}", r.date))?;
    if day.status != "available" {
        return Err(format!("flight {n} not available on date {}", r.date));
    }
    let seats = day
        .available_seats
        .as_ref()
        .and_then(|s| s.get(cabin))
        .unwrap_or(0);
    if seats < passengers as i64 {
        return Err(format!("not enough seats on flight {n}"));
    }
    let price = day
        .prices
        .as_ref()
        .and_then(|p| p.get(cabin))
        .ok_or_else(|| format!("flight {n} has no {cabin} fare on date {}", r.date))?;
    Ok(ReservedFlight {
        origin: flight.origin.clone(),
        destination: flight.destination.clone(),
        flight_number: n.clone(),
        date: r.date.clone(),
        price,
    })
}

/// Departures: (1) when one payment id appears several times its amounts are checked
/// against the balance together, so a gift card can never go negative; (2) amounts are
/// exact cents. Like tau-bench, booking does not change the seat counts.
fn book_reservation(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let user_id = args.str("user_id")?;
    let cabin = args.str("cabin")?;
    let flights: Vec<FlightRef> = args.parse("flights")?;
    let passengers: Vec<Passenger> = args.parse("passengers")?;
    let payments: Vec<PaymentArg> = args.parse("payment_methods")?;
    let total_baggages = args.i64("total_baggages")?;
    let nonfree_baggages = args.i64("nonfree_baggages")?;
    let insurance = args.str("insurance")?;
    let user = db.users.get(user_id).ok_or("user not found")?;

    let mut segments = Vec::with_capacity(flights.len());
    let mut total = Money(0);
    let pax = passengers.len() as i64;
    for r in &flights {
        let seg = price_segment(db, r, cabin, passengers.len())?;
        total = total + seg.price.times(pax);
        segments.push(seg);
    }
    if insurance == "yes" {
        total = total + Money::dollars(INSURANCE_FEE).times(pax);
    }
    total = total + Money::dollars(BAG_FEE).times(nonfree_baggages);

    let mut per_method: BTreeMap<&str, Money> = BTreeMap::new();
    let mut history = Vec::with_capacity(payments.len());
    for p in &payments {
        let amount = Money::from_f64(p.amount);
        let method = user
            .payment_methods
            .get(&p.payment_id)
            .ok_or_else(|| format!("payment method {} not found", p.payment_id))?;
        let used = per_method.entry(&p.payment_id).or_default();
        *used = *used + amount;
        if matches!(method.source.as_str(), "gift_card" | "certificate") && method.balance() < *used
        {
            return Err(format!(
                "not enough balance in payment method {}",
                p.payment_id
            ));
        }
        history.push(Payment::new(&p.payment_id, amount));
    }
    let paid: Money = history.iter().map(|p| p.amount).sum();
    if paid != total {
        return Err(format!(
            "payment amount does not add up, total price is {total}, but paid {paid}"
        ));
    }

    let reservation_id = next_reservation_id(db);
    let reservation = Reservation {
        reservation_id: reservation_id.clone(),
        user_id: user_id.to_string(),
        origin: args.str("origin")?.to_string(),
        destination: args.str("destination")?.to_string(),
        flight_type: args.str("flight_type")?.to_string(),
        cabin: cabin.to_string(),
        flights: segments,
        passengers,
        payment_history: history,
        created_at: CLOCK.now.to_string(),
        total_baggages,
        nonfree_baggages,
        insurance: insurance.to_string(),
        status: None,
    };
    let user = db.users.get_mut(user_id).ok_or("user not found")?;
    for (id, used) in per_method {
        let remove = match user.payment_methods.get_mut(id) {
            Some(m) if m.source == "gift_card" => {
                m.amount = Some(m.balance() - used);
                false
            }
            Some(m) => m.source == "certificate",
            None => false,
        };
        if remove {
            user.payment_methods.remove(id);
        }
    }
    user.reservations.push(reservation_id.clone());
    let out = to_json(&reservation);
    db.reservations.insert(reservation_id, reservation);
    out
}

/// Like tau-bench: every payment is mirrored by a negative entry and the status becomes
/// "cancelled"; refunds are not credited to balances here (they take days to arrive).
fn cancel_reservation(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let id = args.str("reservation_id")?;
    let r = db.reservations.get_mut(id).ok_or("reservation not found")?;
    refund_all(&mut r.payment_history);
    r.status = Some("cancelled".to_string());
    to_json(&*r)
}

/// Check a payment id of the reservation's owner for a charge of `total` (certificates are
/// refused, gift cards need the balance), with tau-bench's messages.
fn check_update_payment(
    db: &AirlineDb,
    user_id: &str,
    payment_id: &str,
    total: Money,
) -> Result<(), String> {
    let user = db.users.get(user_id).ok_or("user not found")?;
    let method = user
        .payment_methods
        .get(payment_id)
        .ok_or("payment method not found")?;
    if method.source == "certificate" {
        return Err("certificate cannot be used to update reservation".into());
    }
    if method.source == "gift_card" && method.balance() < total {
        return Err("gift card balance is not enough".into());
    }
    Ok(())
}

fn charge(db: &mut AirlineDb, user_id: &str, payment_id: &str, total: Money) {
    if let Some(m) = db
        .users
        .get_mut(user_id)
        .and_then(|u| u.payment_methods.get_mut(payment_id))
        && m.source == "gift_card"
    {
        m.amount = Some(m.balance() - total);
    }
}

fn update_reservation_baggages(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let id = args.str("reservation_id")?;
    let total_baggages = args.i64("total_baggages")?;
    let nonfree_baggages = args.i64("nonfree_baggages")?;
    let payment_id = args.str("payment_id")?;
    let r = db.reservations.get(id).ok_or("reservation not found")?;
    let user_id = r.user_id.clone();
    let extra = nonfree_baggages.saturating_sub(r.nonfree_baggages).max(0);
    let total = Money::dollars(BAG_FEE).times(extra);
    check_update_payment(db, &user_id, payment_id, total)?;
    charge(db, &user_id, payment_id, total);
    let r = db.reservations.get_mut(id).ok_or("reservation not found")?;
    r.total_baggages = total_baggages;
    r.nonfree_baggages = nonfree_baggages;
    if total != Money(0) {
        r.payment_history.push(Payment::new(payment_id, total));
    }
    to_json(&*r)
}

/// A segment already on the reservation (same flight and date, cabin unchanged) keeps the
/// price paid; any other segment is priced now. The difference is charged (or refunded,
/// when negative) through `payment_id`. Departure: tau-bench leaves the reservation's
/// `cabin` field as it was; we record the new cabin, since the prices charged are for it.
fn update_reservation_flights(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let id = args.str("reservation_id")?;
    let cabin = args.str("cabin")?;
    let wanted: Vec<FlightRef> = args.parse("flights")?;
    let payment_id = args.str("payment_id")?;
    let r = db.reservations.get(id).ok_or("reservation not found")?;
    let pax = r.passenger_count();
    let mut segments = Vec::with_capacity(wanted.len());
    let mut total = Money(0);
    for w in &wanted {
        let kept = r
            .flights
            .iter()
            .find(|f| f.flight_number == w.flight_number && f.date == w.date && cabin == r.cabin);
        let seg = match kept {
            Some(f) => f.clone(),
            None => price_segment(db, w, cabin, r.passengers.len())?,
        };
        total = total + seg.price.times(pax);
        segments.push(seg);
    }
    let old: Money = r.flights.iter().map(|f| f.price).sum();
    total = total - old.times(pax);
    let user_id = r.user_id.clone();
    check_update_payment(db, &user_id, payment_id, total)?;
    charge(db, &user_id, payment_id, total);
    let r = db.reservations.get_mut(id).ok_or("reservation not found")?;
    r.flights = segments;
    r.cabin = cabin.to_string();
    if total != Money(0) {
        r.payment_history.push(Payment::new(payment_id, total));
    }
    to_json(&*r)
}

fn update_reservation_passengers(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let id = args.str("reservation_id")?;
    let passengers: Vec<Passenger> = args.parse("passengers")?;
    let r = db.reservations.get_mut(id).ok_or("reservation not found")?;
    if passengers.len() != r.passengers.len() {
        return Err("number of passengers does not match".into());
    }
    r.passengers = passengers;
    to_json(&*r)
}

/// The id a new certificate for `user` receives (see the module comment for the rule).
pub fn next_certificate_id(user: &User) -> String {
    (3_221_322u64..)
        .map(|n| format!("certificate_{n}"))
        .find(|id| !user.payment_methods.contains_key(id))
        .unwrap_or_else(|| "certificate_0".to_string())
}

/// Departure: tau-bench stops after three certificates per user (and then answers with
/// nothing); we keep counting.
fn send_certificate(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let user_id = args.str("user_id")?;
    let amount = Money::from_f64(args.f64("amount")?);
    let user = db.users.get_mut(user_id).ok_or("user not found")?;
    let payment_id = next_certificate_id(user);
    user.payment_methods.insert(
        payment_id.clone(),
        PaymentMethod {
            source: "certificate".to_string(),
            brand: None,
            last_four: None,
            amount: Some(amount),
            id: payment_id.clone(),
        },
    );
    Ok(format!(
        "Certificate {payment_id} added to user {user_id} with amount {amount}."
    ))
}

/// The fare difference [`update_reservation_flights`] would charge for a change (negative:
/// a refund), without the tool's availability checks; `None` when a new segment has no fare.
pub fn change_cost(
    db: &AirlineDb,
    r: &Reservation,
    cabin: &str,
    flights: &[Value],
) -> Option<Money> {
    let pax = r.passenger_count();
    let mut total = Money(0);
    for f in flights {
        let (n, d) = (arg_str(f, "flight_number"), arg_str(f, "date"));
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
