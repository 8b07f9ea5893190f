//! The fourteen airline tools: specs (name, kind, description, JSON Schema) and their code.
//!
//! Names, arguments, return shapes and error messages follow tau-bench's public airline
//! environment, so its tasks replay here. Departures (each a fix of an evident defect) are
//! listed in the module's report and marked `Departure:` below.
//!
//! New ids are derived from the state, never from a clock or a global counter:
//! - a booked reservation takes the first unused id of `HATHAT`, `HATHAU`, `HATHAV` (the
//!   ids tau-bench uses), then `HAT000`, `HAT001`, ... (base 36, three characters);
//! - a certificate takes the first unused `certificate_<n>` for n = 3221322, 3221323, ...
//!   in the receiving user's profile.
//!
//! Architecture invariant: tools see only the database and their validated arguments; they
//! never check the policy (that is `ground::check_policy`) — as in tau-bench, the agent is
//! responsible for the rules the API does not enforce.

use super::db::{
    AirlineDb, BAG_FEE, CLOCK, Flight, FlightDate, INSURANCE_FEE, Money, Passenger, Payment,
    Reservation, ReservedFlight, format_date, parse_date,
};
use crate::domain::{Args, Tool, ToolKind, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Airport codes our generator and tau-bench's data use, with the city each serves.
pub const AIRPORTS: &[(&str, &str)] = &[
    ("ATL", "Atlanta"),
    ("AUS", "Austin"),
    ("BNA", "Nashville"),
    ("BOS", "Boston"),
    ("CLT", "Charlotte"),
    ("DEN", "Denver"),
    ("DFW", "Dallas"),
    ("DTW", "Detroit"),
    ("EWR", "Newark"),
    ("IAH", "Houston"),
    ("JFK", "New York"),
    ("LAS", "Las Vegas"),
    ("LAX", "Los Angeles"),
    ("LGA", "LaGuardia"),
    ("MCO", "Orlando"),
    ("MIA", "Miami"),
    ("MSP", "Minneapolis"),
    ("ORD", "Chicago"),
    ("PDX", "Portland"),
    ("PHL", "Philadelphia"),
    ("PHX", "Phoenix"),
    ("SAN", "San Diego"),
    ("SEA", "Seattle"),
    ("SFO", "San Francisco"),
    ("SLC", "Salt Lake City"),
];

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

fn passenger_schema() -> Value {
    json!({"type": "array", "items": obj(json!({
        "first_name": {"type": "string", "description": "Given name as on the passenger's ID."},
        "last_name": {"type": "string", "description": "Family name as on the passenger's ID."},
        "dob": {"type": "string", "description": "Date of birth, YYYY-MM-DD."}
    }), &["first_name", "last_name", "dob"])})
}

fn flights_schema() -> Value {
    json!({"type": "array", "description": "Every segment of the trip, in travel order.",
        "items": obj(json!({
            "flight_number": {"type": "string", "description": "Flight number such as 'HAT123'."},
            "date": {"type": "string", "description": "Departure date of this segment, YYYY-MM-DD."}
        }), &["flight_number", "date"])})
}

fn cabin_schema() -> Value {
    json!({"type": "string", "enum": ["basic_economy", "economy", "business"]})
}

fn spec(
    name: &'static str,
    kind: ToolKind,
    description: &'static str,
    parameters: Value,
) -> ToolSpec {
    ToolSpec {
        name,
        kind,
        description,
        parameters,
        terminates: false,
        intent: crate::domain::Intent::infer(name, kind),
    }
}

static TOOLS: LazyLock<Vec<Tool<AirlineDb>>> = LazyLock::new(|| {
    use ToolKind::{Read, Write};
    let route = obj(
        json!({
            "origin": {"type": "string", "description": "Three-letter code of the departure airport, e.g. 'SEA'."},
            "destination": {"type": "string", "description": "Three-letter code of the arrival airport, e.g. 'BOS'."},
            "date": {"type": "string", "description": "Departure date, YYYY-MM-DD."}
        }),
        &["origin", "destination", "date"],
    );
    let reservation_only = obj(
        json!({"reservation_id": {"type": "string", "description": "Six-character reservation code, e.g. 'ZFA04Y'."}}),
        &["reservation_id"],
    );
    vec![
        Tool {
            spec: spec(
                "book_reservation",
                Write,
                "Create a new reservation for a user: the flights, cabin, passengers, checked bags, \
                 insurance choice, and how the total is split across the user's saved payment methods.",
                obj(
                    json!({
                        "user_id": {"type": "string", "description": "Id of the booking user, e.g. 'maya_okafor_1234'."},
                        "origin": {"type": "string", "description": "Airport code where the trip starts."},
                        "destination": {"type": "string", "description": "Airport code of the trip's destination."},
                        "flight_type": {"type": "string", "enum": ["one_way", "round_trip"]},
                        "cabin": cabin_schema(),
                        "flights": flights_schema(),
                        "passengers": passenger_schema(),
                        "payment_methods": {"type": "array", "description": "Payment ids from the user's profile with the amount charged to each; the amounts must add up to the total price.",
                            "items": obj(json!({
                                "payment_id": {"type": "string", "description": "Id such as 'credit_card_1234567'."},
                                "amount": {"type": "number", "description": "Dollars charged to this method."}
                            }), &["payment_id", "amount"])},
                        "total_baggages": {"type": "integer", "description": "Checked bags for the whole reservation."},
                        "nonfree_baggages": {"type": "integer", "description": "How many of those bags are paid (beyond the free allowance)."},
                        "insurance": {"type": "string", "enum": ["yes", "no"]}
                    }),
                    &[
                        "user_id",
                        "origin",
                        "destination",
                        "flight_type",
                        "cabin",
                        "flights",
                        "passengers",
                        "payment_methods",
                        "total_baggages",
                        "nonfree_baggages",
                        "insurance",
                    ],
                ),
            ),
            run: book_reservation,
        },
        Tool {
            spec: spec(
                "calculate",
                Read,
                "Evaluate an arithmetic expression (numbers, + - * / and parentheses) and return \
                 the result rounded to two decimals.",
                obj(
                    json!({"expression": {"type": "string", "description": "For example '(249 + 118) * 2'."}}),
                    &["expression"],
                ),
            ),
            run: calculate,
        },
        Tool {
            spec: spec(
                "cancel_reservation",
                Write,
                "Cancel a whole reservation; every payment on it is reversed to its original method.",
                reservation_only.clone(),
            ),
            run: cancel_reservation,
        },
        Tool {
            spec: spec(
                "get_reservation_details",
                Read,
                "Look up one reservation by its code: route, segments, passengers, payments, bags and insurance.",
                reservation_only.clone(),
            ),
            run: get_reservation_details,
        },
        Tool {
            spec: spec(
                "get_user_details",
                Read,
                "Look up a user's profile: name, contact details, membership tier, saved payment \
                 methods and passengers, and reservation codes.",
                obj(
                    json!({"user_id": {"type": "string", "description": "Id such as 'maya_okafor_1234'."}}),
                    &["user_id"],
                ),
            ),
            run: get_user_details,
        },
        Tool {
            spec: spec(
                "list_all_airports",
                Read,
                "List the airports the airline serves, each code with its city.",
                obj(json!({}), &[]),
            ),
            run: list_all_airports,
        },
        Tool {
            spec: spec(
                "search_direct_flight",
                Read,
                "Find nonstop flights between two airports that can still be booked on a date, \
                 with seats left and prices per cabin.",
                route.clone(),
            ),
            run: search_direct_flight,
        },
        Tool {
            spec: spec(
                "search_onestop_flight",
                Read,
                "Find two-segment itineraries with one connection between two airports that can \
                 still be booked, departing on a date.",
                route,
            ),
            run: search_onestop_flight,
        },
        Tool {
            spec: spec(
                "send_certificate",
                Write,
                "Add a travel certificate of the given value to a user's payment methods, as compensation.",
                obj(
                    json!({
                        "user_id": {"type": "string", "description": "Id of the user to compensate."},
                        "amount": {"type": "number", "description": "Value of the certificate in dollars."}
                    }),
                    &["user_id", "amount"],
                ),
            ),
            run: send_certificate,
        },
        Tool {
            spec: spec(
                "think",
                Read,
                "Write down reasoning for yourself; nothing is looked up or changed.",
                obj(
                    json!({"thought": {"type": "string", "description": "The reasoning to note."}}),
                    &["thought"],
                ),
            ),
            run: think,
        },
        Tool {
            spec: ToolSpec {
                terminates: true,
                ..spec(
                    "transfer_to_human_agents",
                    Read,
                    "Hand the conversation to a human agent with a short summary of the user's \
                     problem. Only for requests outside what the tools and policy allow.",
                    obj(
                        json!({"summary": {"type": "string", "description": "What the user needs and what has been done so far."}}),
                        &["summary"],
                    ),
                )
            },
            run: transfer_to_human_agents,
        },
        Tool {
            spec: spec(
                "update_reservation_baggages",
                Write,
                "Set a reservation's checked-bag counts; paid bags added beyond those already paid \
                 are charged to the given payment method.",
                obj(
                    json!({
                        "reservation_id": {"type": "string", "description": "Six-character reservation code."},
                        "total_baggages": {"type": "integer", "description": "New total of checked bags."},
                        "nonfree_baggages": {"type": "integer", "description": "New number of paid bags."},
                        "payment_id": {"type": "string", "description": "Credit card or gift card id from the user's profile."}
                    }),
                    &[
                        "reservation_id",
                        "total_baggages",
                        "nonfree_baggages",
                        "payment_id",
                    ],
                ),
            ),
            run: update_reservation_baggages,
        },
        Tool {
            spec: spec(
                "update_reservation_flights",
                Write,
                "Replace a reservation's segments and/or cabin. Pass every segment of the new \
                 itinerary, including unchanged ones; the fare difference is charged or refunded \
                 through the given payment method.",
                obj(
                    json!({
                        "reservation_id": {"type": "string", "description": "Six-character reservation code."},
                        "cabin": cabin_schema(),
                        "flights": flights_schema(),
                        "payment_id": {"type": "string", "description": "Credit card or gift card id from the user's profile."}
                    }),
                    &["reservation_id", "cabin", "flights", "payment_id"],
                ),
            ),
            run: update_reservation_flights,
        },
        Tool {
            spec: spec(
                "update_reservation_passengers",
                Write,
                "Replace the passenger details of a reservation; the number of passengers must stay the same.",
                obj(
                    json!({
                        "reservation_id": {"type": "string", "description": "Six-character reservation code."},
                        "passengers": passenger_schema()
                    }),
                    &["reservation_id", "passengers"],
                ),
            ),
            run: update_reservation_passengers,
        },
    ]
});

pub fn all_tools() -> &'static [Tool<AirlineDb>] {
    &TOOLS
}

fn to_json<T: Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string(v).map_err(|e| format!("could not serialise the result: {e}"))
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

fn get_user_details(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let id = args.str("user_id")?;
    db.users
        .get(id)
        .ok_or_else(|| "user not found".to_string())
        .and_then(to_json)
}

/// Departure: tau-bench answers "user not found" for an unknown reservation (a copy slip);
/// we name what is missing.
fn get_reservation_details(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let id = args.str("reservation_id")?;
    db.reservations
        .get(id)
        .ok_or_else(|| "reservation not found".to_string())
        .and_then(to_json)
}

/// Airports that appear in the flight table, with their cities (unknown codes map to
/// themselves). Departure: tau-bench returns a fixed list; deriving it from the data keeps it
/// true for generated and imported databases alike.
fn list_all_airports(db: &mut AirlineDb, _args: &Args) -> Result<String, String> {
    let mut out = BTreeMap::new();
    for (_, f) in db.flights.iter() {
        for code in [&f.origin, &f.destination] {
            let city = AIRPORTS
                .iter()
                .find(|(c, _)| c == code)
                .map(|(_, city)| *city)
                .unwrap_or(code.as_str());
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

fn search_direct_flight(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let (o, d, date) = (
        args.str("origin")?,
        args.str("destination")?,
        args.str("date")?,
    );
    to_json(&search_direct(db, o, d, date))
}

fn search_onestop_flight(db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    let (o, d, date) = (
        args.str("origin")?,
        args.str("destination")?,
        args.str("date")?,
    );
    to_json(&search_onestop(db, o, d, date))
}

fn think(_db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    args.str("thought")?;
    Ok(String::new())
}

fn transfer_to_human_agents(_db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    args.str("summary")?;
    Ok("Transfer successful".to_string())
}

fn calculate(_db: &mut AirlineDb, args: &Args) -> Result<String, String> {
    crate::domain::kit::calc::evaluate(args.str("expression")?)
}

// ---------------------------------------------------------------- write tools

/// The id a newly booked reservation receives (see the module comment for the rule).
pub fn next_reservation_id(db: &AirlineDb) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    for id in ["HATHAT", "HATHAU", "HATHAV"] {
        if !db.reservations.contains(id) {
            return id.to_string();
        }
    }
    let mut n = 0usize;
    loop {
        let id: String = [n / (36 * 36), (n / 36) % 36, n % 36]
            .iter()
            .map(|&k| char::from(DIGITS.get(k % 36).copied().unwrap_or(b'0')))
            .collect();
        let id = format!("HAT{id}");
        if !db.reservations.contains(&id) || n >= 36 * 36 * 36 {
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
        history.push(Payment {
            payment_id: p.payment_id.clone(),
            amount,
        });
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
        created_at: CLOCK.to_string(),
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
    let refunds: Vec<Payment> = r
        .payment_history
        .iter()
        .map(|p| Payment {
            payment_id: p.payment_id.clone(),
            amount: -p.amount,
        })
        .collect();
    r.payment_history.extend(refunds);
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
        r.payment_history.push(Payment {
            payment_id: payment_id.to_string(),
            amount: total,
        });
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
        r.payment_history.push(Payment {
            payment_id: payment_id.to_string(),
            amount: total,
        });
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
pub fn next_certificate_id(user: &super::db::User) -> String {
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
        super::db::PaymentMethod {
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
