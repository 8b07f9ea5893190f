//! Refinement hooks of the airline domain: what a customer knows about themself
//! ([`user_facts`]), the request sentence behind each reference call ([`describe_request`]),
//! the argument values a customer could not know ([`internal_ids`]), the values an agent must
//! tell the customer ([`required_outputs`]) and what an agent can look up once the customer
//! is identified ([`customer_records`]).
//!
//! The airline authenticates by user id, so the id is the identity fact; reservation codes
//! are printed on confirmations and may be stated; payment ids are internal and are described
//! the way a customer knows the method (card brand and last four digits, gift card or
//! certificate number's last digits and value). Sentences vary deterministically with the
//! call's arguments (no RNG reaches these hooks).
//!
//! Architecture invariant: reads the state only; dry runs use forks.

use super::db::{AirlineDb, CLOCK, Money, Passenger, PaymentMethod, Reservation, User};
use super::ground::{cancellation_ground, change_cost};
use super::tools::AIRPORTS;
use crate::domain::{Environment, UserFact};
use serde_json::Value;

// ---------------------------------------------------------------- small helpers

/// A stable small number from the arguments, to vary phrasing without an RNG (FNV-1a).
fn variant(args: &Value, n: usize) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in args.to_string().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h % n.max(1) as u64) as usize
}

fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// "Seattle (SEA)"; the bare code when the city is unknown.
fn place(code: &str) -> String {
    match AIRPORTS.iter().find(|(c, _)| *c == code) {
        Some((_, city)) if *city != code => format!("{city} ({code})"),
        _ => code.to_string(),
    }
}

/// Cabin as a customer says it ("basic economy", "economy", "business").
fn cabin_words(cabin: &str) -> String {
    cabin.replace('_', " ")
}

fn brand_name(brand: &str) -> String {
    match brand {
        "visa" => "Visa".into(),
        "mastercard" => "Mastercard".into(),
        "amex" => "American Express".into(),
        "discover" => "Discover".into(),
        other => {
            let mut c = other.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => "credit".into(),
            }
        }
    }
}

/// The last four characters of a payment id's number (`gift_card_5567147` -> `7147`).
fn id_tail(id: &str) -> String {
    let digits: Vec<char> = id.chars().filter(char::is_ascii_digit).collect();
    digits[digits.len().saturating_sub(4)..].iter().collect()
}

fn money(m: Money) -> String {
    format!("${m}")
}

/// How a customer names one of their payment methods, without its article
/// ("Visa credit card ending in 3303", "gift card ending in 7147", ...), and the literal
/// string that identifies it.
fn payment_phrase(m: &PaymentMethod) -> (String, String) {
    match m.source.as_str() {
        "credit_card" => {
            let last = m.last_four.clone().unwrap_or_else(|| id_tail(&m.id));
            let brand = brand_name(m.brand.as_deref().unwrap_or(""));
            (format!("{brand} credit card ending in {last}"), last)
        }
        "gift_card" => {
            let tail = id_tail(&m.id);
            (format!("gift card ending in {tail}"), tail)
        }
        "certificate" => {
            let tail = id_tail(&m.id);
            (format!("travel certificate ending in {tail}"), tail)
        }
        other => {
            let tail = id_tail(&m.id);
            (
                format!("{} ending in {tail}", other.replace('_', " ")),
                tail,
            )
        }
    }
}

/// "your Visa credit card ending in 3303" for a payment id of `user`.
fn your_payment(user: Option<&User>, payment_id: &str) -> String {
    match user.and_then(|u| u.payment_methods.get(payment_id)) {
        Some(m) => format!("your {}", payment_phrase(m).0),
        // Unknown method: fall back to a description that reveals nothing internal.
        None => "the payment method on file".into(),
    }
}

fn person(p: &Passenger) -> String {
    format!("{} {}", p.first_name, p.last_name)
}

fn person_born(p: &Passenger) -> String {
    format!("{} {} (born {})", p.first_name, p.last_name, p.dob)
}

fn list_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

/// How the customer refers to a reservation: by its code, or, when it was booked in this
/// very conversation (at the simulation clock), as their new reservation by route (they only
/// learn its code from the agent).
fn reservation_ref(db: &AirlineDb, id: &str) -> String {
    match db.reservations.get(id) {
        Some(r) if r.created_at == CLOCK => format!(
            "your new reservation from {} to {}",
            place(&r.origin),
            place(&r.destination)
        ),
        _ => format!("reservation {id}"),
    }
}

fn flight_list(flights: &[Value]) -> String {
    let legs: Vec<String> = flights
        .iter()
        .map(|f| {
            format!(
                "flight {} on {}",
                str_arg(f, "flight_number"),
                str_arg(f, "date")
            )
        })
        .collect();
    list_and(&legs)
}

fn passengers_arg(args: &Value) -> Vec<Passenger> {
    args.get("passengers")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

// ---------------------------------------------------------------- user facts

/// Identity (user id) first, then name, birth date, membership, each payment method the way
/// the customer knows it, and their reservation codes.
pub fn user_facts(db: &AirlineDb, user_id: &str) -> Vec<UserFact> {
    let Some(user) = db.users.get(user_id) else {
        return Vec::new();
    };
    let mut facts = vec![
        UserFact {
            kind: "identity".into(),
            text: format!("Your user id is {user_id}."),
            values: vec![user_id.to_string()],
            ids: Vec::new(),
        },
        UserFact {
            kind: "name".into(),
            text: format!(
                "Your name is {} {}.",
                user.name.first_name, user.name.last_name
            ),
            values: vec![user.name.first_name.clone(), user.name.last_name.clone()],
            ids: Vec::new(),
        },
        UserFact {
            kind: "birth_date".into(),
            text: format!("Your date of birth is {}.", user.dob),
            values: vec![user.dob.clone()],
            ids: Vec::new(),
        },
        UserFact {
            kind: "membership".into(),
            text: format!("You are a {} member of the airline.", user.membership),
            values: vec![user.membership.clone()],
            ids: Vec::new(),
        },
    ];
    for m in user.payment_methods.values() {
        let (phrase, value) = payment_phrase(m);
        let article = if phrase.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        let text = match m.source.as_str() {
            "gift_card" => format!(
                "You have {article} {phrase} with a balance of {}.",
                money(m.balance())
            ),
            "certificate" => format!("You have {article} {phrase} worth {}.", money(m.balance())),
            _ => format!("You have {article} {phrase}."),
        };
        facts.push(UserFact {
            kind: "payment".into(),
            text,
            values: vec![value],
            ids: vec![m.id.clone()],
        });
    }
    if !user.reservations.is_empty() {
        let codes = user.reservations.clone();
        let text = if codes.len() == 1 {
            format!("Your reservation code is {}.", codes[0])
        } else {
            format!("Your reservation codes are {}.", list_and(&codes))
        };
        facts.push(UserFact {
            kind: "entity".into(),
            text,
            values: codes,
            ids: Vec::new(),
        });
    }
    facts
}

// ---------------------------------------------------------------- request sentences

/// The customer's request behind a call (see [`crate::domain::Database::describe_request`]);
/// `db` is the state before the call.
pub fn describe_request(db: &AirlineDb, tool: &str, args: &Value, output: &str) -> Option<String> {
    match tool {
        "get_reservation_details" => describe_reservation_read(db, args),
        "search_direct_flight" => describe_search(args, output, false),
        "search_onestop_flight" => describe_search(args, output, true),
        "book_reservation" => describe_booking(db, args),
        "cancel_reservation" => describe_cancel(db, args),
        "update_reservation_baggages" => describe_bags(db, args),
        "update_reservation_flights" => describe_flight_change(db, args),
        "update_reservation_passengers" => describe_passengers(db, args),
        "send_certificate" => Some(
            [
                "You want compensation for the disruption to your trip.",
                "You feel the airline owes you compensation for the disrupted flight and want it issued.",
            ][variant(args, 2)]
            .to_string(),
        ),
        // Agent-side lookups and helpers: get_user_details, list_all_airports, think,
        // calculate, transfer_to_human_agents.
        _ => None,
    }
}

fn describe_reservation_read(db: &AirlineDb, args: &Value) -> Option<String> {
    let id = str_arg(args, "reservation_id");
    let r = db.reservations.get(id)?;
    let what = reservation_ref(db, id);
    if r.is_cancelled() {
        return Some(format!("You want to make sure {what} is now cancelled."));
    }
    Some(match variant(args, 3) {
        0 => format!(
            "You want to check which flights {what} is booked on (flight numbers and dates)."
        ),
        1 => {
            format!("You would like the agent to tell you the flight numbers and dates on {what}.")
        }
        _ => format!("You want to go over {what} and hear which flights it covers."),
    })
}

/// Offers of a search output as (flight numbers, economy fare total), in output order.
fn search_offers(output: &str, onestop: bool) -> Vec<(Vec<String>, Option<i64>)> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(output) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| {
            let legs: Vec<&Value> = if onestop {
                item.as_array()
                    .map(|a| a.iter().collect())
                    .unwrap_or_default()
            } else {
                vec![item]
            };
            let numbers = legs
                .iter()
                .map(|l| str_arg(l, "flight_number").to_string())
                .collect();
            let fare: Option<i64> = legs
                .iter()
                .map(|l| {
                    l.get("prices")
                        .and_then(|p| p.get("economy"))
                        .and_then(Value::as_f64)
                        .map(|x| (x * 100.0).round() as i64)
                })
                .sum();
            (numbers, fare)
        })
        .collect()
}

/// Direct searches with up to three results ask for all of them; otherwise (and for every
/// one-stop search) the customer asks for the cheapest economy option.
const LIST_ALL_UP_TO: usize = 3;

fn describe_search(args: &Value, output: &str, onestop: bool) -> Option<String> {
    let (o, d, date) = (
        place(str_arg(args, "origin")),
        place(str_arg(args, "destination")),
        str_arg(args, "date"),
    );
    let offers = search_offers(output, onestop);
    let kind = if onestop { "one-stop" } else { "nonstop" };
    if offers.is_empty() {
        return Some(format!(
            "You want to know whether there are any {kind} flights from {o} to {d} on {date}."
        ));
    }
    if !onestop && offers.len() <= LIST_ALL_UP_TO {
        return Some(match variant(args, 2) {
            0 => format!("You want to know which nonstop flights go from {o} to {d} on {date}."),
            _ => format!(
                "You are looking at flying from {o} to {d} on {date} and want to hear the nonstop flight numbers available."
            ),
        });
    }
    if onestop {
        return Some(match variant(args, 2) {
            0 => format!(
                "You want to know the cheapest one-stop connection in economy from {o} to {d} departing on {date}, and both of its flight numbers."
            ),
            _ => format!(
                "You are comparing prices and want the agent to find the one-stop connection from {o} to {d} on {date} with the lowest total economy fare, and tell you its two flight numbers."
            ),
        });
    }
    Some(match variant(args, 2) {
        0 => format!(
            "You want to know the cheapest nonstop flight in economy from {o} to {d} on {date}: its flight number and the economy fare."
        ),
        _ => format!(
            "You are comparing prices and want the agent to find the nonstop flight from {o} to {d} on {date} with the lowest economy fare, and tell you its flight number and that fare."
        ),
    })
}

fn describe_booking(db: &AirlineDb, args: &Value) -> Option<String> {
    let user = db.users.get(str_arg(args, "user_id"));
    let (o, d) = (
        place(str_arg(args, "origin")),
        place(str_arg(args, "destination")),
    );
    let trip = str_arg(args, "flight_type").replace('_', " ");
    let cabin = cabin_words(str_arg(args, "cabin"));
    let flights = args
        .get("flights")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let people: Vec<String> = passengers_arg(args)
        .iter()
        .map(|p| {
            let me = user.is_some_and(|u| {
                u.name.first_name == p.first_name && u.name.last_name == p.last_name
            });
            if me {
                format!("yourself (born {})", p.dob)
            } else {
                person_born(p)
            }
        })
        .collect();
    let bags = args
        .get("total_baggages")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let bags = match bags {
        0 => "no checked bags".to_string(),
        1 => "1 checked bag".to_string(),
        n => format!("{n} checked bags"),
    };
    let insurance = if str_arg(args, "insurance") == "yes" {
        "When travel insurance comes up, you say yes, you want it."
    } else {
        "When travel insurance comes up, you say no, you do not want it."
    };
    let payers: Vec<String> = args
        .get("payment_methods")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| your_payment(user, str_arg(p, "payment_id")))
        .collect();
    let opening = match variant(args, 3) {
        0 => format!("You want to book a {trip} trip from {o} to {d} in {cabin}"),
        1 => format!("You would like a new {trip} booking from {o} to {d}, flying {cabin}"),
        _ => format!("You need to book a {trip} trip in {cabin} from {o} to {d}"),
    };
    Some(format!(
        "{opening}, on {}, for {}. You want {bags}. {insurance} You will pay with {}.",
        flight_list(&flights),
        list_and(&people),
        list_and(&payers)
    ))
}

fn describe_cancel(db: &AirlineDb, args: &Value) -> Option<String> {
    let id = str_arg(args, "reservation_id");
    let r = db.reservations.get(id)?;
    let what = reservation_ref(db, id);
    let reason = match cancellation_ground(db, r) {
        Ok("the airline cancelled a flight") => {
            "because the airline cancelled one of its flights".to_string()
        }
        Ok("travel insurance (health or weather reason)") => {
            if variant(&serde_json::json!(["reason", args]), 2) == 0 {
                "because a health problem means you cannot travel; you bought travel insurance for this trip".to_string()
            } else {
                "because severe weather at your destination means you cannot travel; you bought travel insurance for this trip".to_string()
            }
        }
        _ => "because of a change of plans".to_string(),
    };
    Some(match variant(args, 2) {
        0 => format!("You want to cancel {what} {reason}."),
        _ => format!("You need to cancel {what} {reason}, and you want a full refund."),
    })
}

fn describe_bags(db: &AirlineDb, args: &Value) -> Option<String> {
    let id = str_arg(args, "reservation_id");
    let r = db.reservations.get(id)?;
    let user = db.users.get(&r.user_id);
    let what = reservation_ref(db, id);
    let total = args.get("total_baggages").and_then(Value::as_i64)?;
    let nonfree = args
        .get("nonfree_baggages")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let added = total - r.total_baggages;
    let bags = |n: i64| {
        if n == 1 {
            "1 checked bag".to_string()
        } else {
            format!("{n} checked bags")
        }
    };
    let pay = your_payment(user, str_arg(args, "payment_id"));
    let head = if added > 0 {
        format!(
            "You want to add {} to {what}, for {} in total.",
            bags(added),
            bags(total)
        )
    } else {
        format!("You want {what} to have {} in total.", bags(total))
    };
    let payment = if nonfree > r.nonfree_baggages {
        format!("Pay for any extra bag fees with {pay}.")
    } else {
        format!("If anything needs paying, use {pay}.")
    };
    Some(format!("{head} {payment}"))
}

fn describe_flight_change(db: &AirlineDb, args: &Value) -> Option<String> {
    let id = str_arg(args, "reservation_id");
    let r: &Reservation = db.reservations.get(id)?;
    let user = db.users.get(&r.user_id);
    let what = reservation_ref(db, id);
    let cabin = str_arg(args, "cabin");
    let flights = args
        .get("flights")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let same_flights = flights.len() == r.flights.len()
        && flights.iter().all(|f| {
            r.flights.iter().any(|s| {
                s.flight_number == str_arg(f, "flight_number") && s.date == str_arg(f, "date")
            })
        });
    let pay = your_payment(user, str_arg(args, "payment_id"));
    let cost = change_cost(db, r, cabin, &flights).unwrap_or(Money(0));
    let payment = if cost > Money(0) {
        format!("Pay the fare difference with {pay}.")
    } else if cost < Money(0) {
        format!("Any refund of the fare difference should go to {pay}.")
    } else {
        format!("Use {pay} for any fare difference.")
    };
    let new_cabin = cabin_words(cabin);
    let old_cabin = cabin_words(&r.cabin);
    let head = if same_flights {
        let verb = if cabin_rank(cabin) > cabin_rank(&r.cabin) {
            "upgrade"
        } else {
            "change"
        };
        match variant(args, 2) {
            0 => format!(
                "You want to {verb} {what} from {old_cabin} to {new_cabin}, keeping the same flights."
            ),
            _ => format!(
                "On {what} you want to fly {new_cabin} instead of {old_cabin}, on the same flights."
            ),
        }
    } else {
        let cabin_part = if cabin == r.cabin {
            format!("staying in {new_cabin}")
        } else {
            format!("and switch from {old_cabin} to {new_cabin}")
        };
        match variant(args, 2) {
            0 => format!(
                "Your plans shifted, so you want to move {what} to {}, {cabin_part}.",
                flight_list(&flights)
            ),
            _ => format!(
                "You want to change the flights of {what} to {}, {cabin_part}.",
                flight_list(&flights)
            ),
        }
    };
    Some(format!("{head} {payment}"))
}

fn cabin_rank(cabin: &str) -> usize {
    super::db::CABINS
        .iter()
        .position(|c| *c == cabin)
        .unwrap_or(0)
}

fn describe_passengers(db: &AirlineDb, args: &Value) -> Option<String> {
    let id = str_arg(args, "reservation_id");
    let r = db.reservations.get(id)?;
    let what = reservation_ref(db, id);
    let new = passengers_arg(args);
    let mut changes = Vec::new();
    for (i, p) in new.iter().enumerate() {
        match r.passengers.get(i) {
            Some(old) if old == p => {}
            Some(old) if old.first_name == p.first_name && old.last_name == p.last_name => {
                changes.push(format!(
                    "correct the date of birth of {} to {}",
                    person(p),
                    p.dob
                ));
            }
            Some(old) => changes.push(format!("replace {} with {}", person(old), person_born(p))),
            None => changes.push(format!("add {}", person_born(p))),
        }
    }
    if changes.is_empty() {
        let all: Vec<String> = new.iter().map(person_born).collect();
        return Some(format!(
            "You want to confirm the passengers on {what} are {}.",
            list_and(&all)
        ));
    }
    Some(match variant(args, 2) {
        0 => format!(
            "You want to update the passengers on {what}: {}.",
            list_and(&changes)
        ),
        _ => format!(
            "The travellers on {what} have changed, so you want to {}.",
            list_and(&changes)
        ),
    })
}

// ---------------------------------------------------------------- ids, outputs, records

/// Payment ids anywhere in the arguments (`payment_id`, `payment_methods[].payment_id`).
pub fn internal_ids(_tool: &str, args: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if k == "payment_id"
                        && let Value::String(s) = x
                        && !out.contains(s)
                    {
                        out.push(s.clone());
                    }
                    walk(x, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(args, &mut out);
    out
}

/// What the agent must tell the customer after a read that ends a read-only intent:
/// a reservation's flight numbers (or that it is cancelled), a search's flight numbers, or
/// the cheapest option's flight numbers and economy fare (as [`describe_request`] asks).
pub fn required_outputs(tool: &str, args: &Value, output: &str) -> Vec<String> {
    let _ = args;
    match tool {
        "get_reservation_details" => {
            let Ok(v) = serde_json::from_str::<Value>(output) else {
                return Vec::new();
            };
            if v.get("status").and_then(Value::as_str) == Some("cancelled") {
                return vec!["cancelled".into()];
            }
            let mut out: Vec<String> = Vec::new();
            for f in v
                .get("flights")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let n = str_arg(f, "flight_number").to_string();
                if !n.is_empty() && !out.contains(&n) {
                    out.push(n);
                }
            }
            out
        }
        "search_direct_flight" | "search_onestop_flight" => {
            let onestop = tool == "search_onestop_flight";
            let offers = search_offers(output, onestop);
            if offers.is_empty() {
                return Vec::new();
            }
            if !onestop && offers.len() <= LIST_ALL_UP_TO {
                return offers.into_iter().flat_map(|(n, _)| n).collect();
            }
            let best = offers
                .iter()
                .filter_map(|(n, f)| f.map(|f| (f, n)))
                .min_by_key(|(f, _)| *f);
            let Some((fare, numbers)) = best else {
                return Vec::new();
            };
            let tied = offers.iter().filter(|(_, f)| *f == Some(fare)).count() > 1;
            let mut out = Vec::new();
            if !tied {
                out.extend(numbers.iter().cloned());
            }
            // A one-stop total is a sum the output does not print; a nonstop fare is printed.
            if !onestop {
                out.push(Money(fare).to_string());
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The profile and every reservation of the customer, as the read tools print them.
pub fn customer_records(db: &AirlineDb, user_id: &str) -> Vec<String> {
    let Some(user) = db.users.get(user_id) else {
        return Vec::new();
    };
    let mut fork = db.clone();
    let mut out = Vec::new();
    let profile = fork.invoke("get_user_details", &serde_json::json!({"user_id": user_id}));
    if !profile.is_error {
        out.push(profile.text);
    }
    for id in &user.reservations {
        let r = fork.invoke(
            "get_reservation_details",
            &serde_json::json!({"reservation_id": id}),
        );
        if !r.is_error {
            out.push(r.text);
        }
    }
    out
}
