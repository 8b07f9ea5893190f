//! Refinement and verification hooks of the airline domain: what a customer knows about
//! themself ([`user_facts`]), what they ask of each call ([`describe_request`]: the sentences
//! live in `requests.toml`, this module computes their variables), the values an agent must
//! tell the customer ([`required_outputs`]) and what an agent can look up once the customer
//! is identified ([`customer_records`]). The argument values a customer could not know are
//! declared in `tools.toml` (`internal`).
//!
//! The airline authenticates by user id, so the id is the identity fact; reservation codes
//! are printed on confirmations and may be stated; payment ids are internal and are described
//! the way a customer knows the method (card brand and last four digits, gift card or
//! certificate number's last digits and value).
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! call's arguments (no RNG reaches these hooks), so grounding stays reproducible.

use super::db::{AirlineDb, CABINS, CLOCK, Money, Passenger, PaymentMethod, User};
use super::generate::airport_city;
use super::policy::{Ground, cancellation_ground};
use super::tools::change_cost;
use crate::domain::kit::facts::{self, Identity};
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_str, brand_name, join_and_serial, words};
use crate::domain::{Environment, UserFact};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

type Vars = BTreeMap<&'static str, String>;

/// A sentence of `table` with its choice keyed by the call's arguments alone (so the phrases
/// a sentence holds vary with it).
fn say(table: &str, args: &Value, vars: &Vars) -> Option<String> {
    REQUESTS.render_keyed(table, &args.to_string(), args, vars)
}

/// "Seattle (SEA)"; the bare code when the city is unknown.
fn place(code: &str) -> String {
    match airport_city(code) {
        Some(city) if city != code => format!("{city} ({code})"),
        _ => code.to_string(),
    }
}

/// The last four digits of a payment id's number (`gift_card_5567147` -> `7147`).
fn id_tail(id: &str) -> String {
    let digits: Vec<char> = id.chars().filter(char::is_ascii_digit).collect();
    digits[digits.len().saturating_sub(4)..].iter().collect()
}

fn money(m: Money) -> String {
    format!("${m}")
}

/// How a customer names one of their payment methods, without its article ("Visa credit
/// card ending in 3303", "gift card ending in 7147", ...), and the literal that identifies it.
fn payment_phrase(m: &PaymentMethod) -> (String, String) {
    let tail = id_tail(&m.id);
    match m.source.as_str() {
        "credit_card" => {
            let last = m.last_four.clone().unwrap_or(tail);
            let brand = match m.brand.as_deref() {
                Some(b) if !b.is_empty() => brand_name(b),
                _ => "credit".to_string(),
            };
            (format!("{brand} credit card ending in {last}"), last)
        }
        "gift_card" => (format!("gift card ending in {tail}"), tail),
        "certificate" => (format!("travel certificate ending in {tail}"), tail),
        other => (format!("{} ending in {tail}", words(other)), tail),
    }
}

/// "your Visa credit card ending in 3303" for a payment id of `user`.
fn your_payment(user: Option<&User>, payment_id: &str) -> String {
    match user.and_then(|u| u.payment_methods.get(payment_id)) {
        Some(m) => format!("your {}", payment_phrase(m).0),
        // Unknown method: a description that reveals nothing internal.
        None => "the payment method on file".into(),
    }
}

fn person(p: &Passenger) -> String {
    format!("{} {}", p.first_name, p.last_name)
}

fn person_born(p: &Passenger) -> String {
    format!("{} {} (born {})", p.first_name, p.last_name, p.dob)
}

/// "1 checked bag", "no checked bags", "3 checked bags".
fn checked_bags(n: i64, none: &str) -> String {
    match n {
        0 => none.to_string(),
        1 => "1 checked bag".to_string(),
        n => format!("{n} checked bags"),
    }
}

/// How the customer refers to a reservation: by its code, or, when it was booked in this
/// very conversation (at the simulation clock), as their new reservation by route (they only
/// learn its code from the agent).
fn reservation_ref(db: &AirlineDb, id: &str) -> String {
    match db.reservations.get(id) {
        Some(r) if r.created_at == CLOCK.now => format!(
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
            let (n, d) = (arg_str(f, "flight_number"), arg_str(f, "date"));
            format!("flight {n} on {d}")
        })
        .collect();
    join_and_serial(&legs)
}

fn list_arg(args: &Value, key: &str) -> Vec<Value> {
    args.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn passengers_arg(args: &Value) -> Vec<Passenger> {
    serde_json::from_value(json!(list_arg(args, "passengers"))).unwrap_or_default()
}

/// Identity (user id) first, then name, birth date, membership, each payment method the way
/// the customer knows it, and their reservation codes.
pub fn user_facts(db: &AirlineDb, user_id: &str) -> Vec<UserFact> {
    let Some(user) = db.users.get(user_id) else {
        return Vec::new();
    };
    let mut out = vec![
        facts::identity(Identity::UserId(user_id), &[]),
        facts::name(&user.name.first_name, &user.name.last_name),
        facts::fact(
            "birth_date",
            format!("Your date of birth is {}.", user.dob),
            vec![user.dob.clone()],
            &[],
        ),
        facts::fact(
            "membership",
            format!("You are a {} member of the airline.", user.membership),
            vec![user.membership.clone()],
            &[],
        ),
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
        out.push(facts::fact("payment", text, vec![value], &[&m.id]));
    }
    let codes = &user.reservations;
    let text = match codes.as_slice() {
        [] => None,
        [one] => Some(format!("Your reservation code is {one}.")),
        many => Some(format!(
            "Your reservation codes are {}.",
            join_and_serial(many)
        )),
    };
    out.extend(text.map(|t| facts::fact("entity", t, codes.clone(), &[])));
    out
}

/// The customer's request behind a call (see [`crate::domain::Hooks::describe_request`]);
/// `db` is the state before the call. Agent-side lookups and helpers (get_user_details,
/// list_all_airports, think, calculate, transfer_to_human_agents) have no sentence.
pub fn describe_request(db: &AirlineDb, tool: &str, args: &Value, output: &str) -> Option<String> {
    let mut vars = Vars::new();
    let reservation = db.reservations.get(arg_str(args, "reservation_id"));
    if let Some(r) = reservation {
        vars.insert("what", reservation_ref(db, &r.reservation_id));
    }
    let case = match tool {
        "get_reservation_details" => match reservation?.is_cancelled() {
            true => "cancelled",
            false => "open",
        },
        "search_direct_flight" | "search_onestop_flight" => {
            vars.insert("from", place(arg_str(args, "origin")));
            vars.insert("to", place(arg_str(args, "destination")));
            search_case(tool, output)
        }
        "book_reservation" => {
            booking_vars(db, args, &mut vars)?;
            ""
        }
        "cancel_reservation" => {
            let reason = match cancellation_ground(db, reservation?) {
                Ok(Ground::AirlineCancelled) => "airline_cancelled",
                Ok(Ground::Insured) => "insured",
                _ => "other",
            };
            let key = json!(["reason", args]).to_string();
            let table = format!("cancel_reason.{reason}");
            let reason = REQUESTS.render_keyed(&table, &key, args, &vars)?;
            vars.insert("reason", reason);
            ""
        }
        "update_reservation_baggages" => baggage_case(db, args, &mut vars)?,
        "update_reservation_flights" => flight_change_case(db, args, &mut vars)?,
        "update_reservation_passengers" => passenger_case(db, args, &mut vars)?,
        _ => "",
    };
    let table = match case {
        "" => tool.to_string(),
        case => format!("{tool}.{case}"),
    };
    say(&table, args, &vars)
}

/// Direct searches with up to this many results ask for all of them; otherwise (and for
/// every one-stop search) the customer asks for the cheapest economy option.
const LIST_ALL_UP_TO: usize = 3;

fn search_case(tool: &str, output: &str) -> &'static str {
    let onestop = tool == "search_onestop_flight";
    match search_offers(output, onestop).len() {
        0 => "none",
        n if !onestop && n <= LIST_ALL_UP_TO => "few",
        _ => "cheapest",
    }
}

/// Offers of a search output as (flight numbers, economy fare total in cents), in output
/// order.
fn search_offers(output: &str, onestop: bool) -> Vec<(Vec<String>, Option<i64>)> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(output) else {
        return Vec::new();
    };
    items
        .iter()
        .map(|item| {
            let legs: Vec<&Value> = match (onestop, item.as_array()) {
                (true, Some(a)) => a.iter().collect(),
                (true, None) => Vec::new(),
                (false, _) => vec![item],
            };
            let numbers = legs
                .iter()
                .map(|l| arg_str(l, "flight_number").to_string())
                .collect();
            let fare: Option<i64> = legs
                .iter()
                .map(|l| {
                    let economy = l.pointer("/prices/economy").and_then(Value::as_f64);
                    economy.map(|x| (x * 100.0).round() as i64)
                })
                .sum();
            (numbers, fare)
        })
        .collect()
}

fn booking_vars(db: &AirlineDb, args: &Value, vars: &mut Vars) -> Option<()> {
    let user = db.users.get(arg_str(args, "user_id"));
    let people: Vec<String> = passengers_arg(args)
        .iter()
        .map(|p| {
            let me = user.is_some_and(|u| {
                u.name.first_name == p.first_name && u.name.last_name == p.last_name
            });
            match me {
                true => format!("yourself (born {})", p.dob),
                false => person_born(p),
            }
        })
        .collect();
    let payers: Vec<String> = list_arg(args, "payment_methods")
        .iter()
        .map(|p| your_payment(user, arg_str(p, "payment_id")))
        .collect();
    let bags = args.get("total_baggages").and_then(Value::as_i64);
    let insurance = match arg_str(args, "insurance") {
        "yes" => "insurance.yes",
        _ => "insurance.no",
    };
    vars.insert("insurance", say(insurance, args, vars)?);
    vars.insert("from", place(arg_str(args, "origin")));
    vars.insert("to", place(arg_str(args, "destination")));
    vars.insert("trip", words(arg_str(args, "flight_type")));
    vars.insert("class", words(arg_str(args, "cabin")));
    vars.insert("flights", flight_list(&list_arg(args, "flights")));
    vars.insert("people", join_and_serial(&people));
    vars.insert("bags", checked_bags(bags.unwrap_or(0), "no checked bags"));
    vars.insert("payers", join_and_serial(&payers));
    Some(())
}

fn baggage_case(db: &AirlineDb, args: &Value, vars: &mut Vars) -> Option<&'static str> {
    let r = db.reservations.get(arg_str(args, "reservation_id"))?;
    let total = args.get("total_baggages").and_then(Value::as_i64)?;
    let nonfree = args.get("nonfree_baggages").and_then(Value::as_i64);
    let added = total - r.total_baggages;
    let pay = your_payment(db.users.get(&r.user_id), arg_str(args, "payment_id"));
    vars.insert("pay", pay);
    let fee = match nonfree.unwrap_or(0) > r.nonfree_baggages {
        true => "bag_payment.fee",
        false => "bag_payment.maybe",
    };
    vars.insert("payment", say(fee, args, vars)?);
    vars.insert("added", checked_bags(added, "0 checked bags"));
    vars.insert("total", checked_bags(total, "0 checked bags"));
    Some(if added > 0 { "add" } else { "set" })
}

fn flight_change_case(db: &AirlineDb, args: &Value, vars: &mut Vars) -> Option<&'static str> {
    let r = db.reservations.get(arg_str(args, "reservation_id"))?;
    let cabin = arg_str(args, "cabin");
    let flights = list_arg(args, "flights");
    let same_flights = flights.len() == r.flights.len()
        && flights.iter().all(|f| {
            r.flights.iter().any(|s| {
                s.flight_number == arg_str(f, "flight_number") && s.date == arg_str(f, "date")
            })
        });
    let pay = your_payment(db.users.get(&r.user_id), arg_str(args, "payment_id"));
    vars.insert("pay", pay);
    let cost = change_cost(db, r, cabin, &flights).unwrap_or(Money(0));
    let payment = match cost.cents() {
        c if c > 0 => "fare_difference.charge",
        c if c < 0 => "fare_difference.refund",
        _ => "fare_difference.even",
    };
    vars.insert("payment", say(payment, args, vars)?);
    vars.insert("new_class", words(cabin));
    vars.insert("old_class", words(&r.cabin));
    vars.insert("flights", flight_list(&flights));
    let rank = |c: &str| CABINS.iter().position(|x| *x == c).unwrap_or(0);
    Some(match (same_flights, cabin == r.cabin) {
        (true, _) if rank(cabin) > rank(&r.cabin) => "upgrade",
        (true, _) => "cabin",
        (false, true) => "move",
        (false, false) => "move_and_cabin",
    })
}

fn passenger_case(db: &AirlineDb, args: &Value, vars: &mut Vars) -> Option<&'static str> {
    let r = db.reservations.get(arg_str(args, "reservation_id"))?;
    let new = passengers_arg(args);
    let mut changes = Vec::new();
    for (i, p) in new.iter().enumerate() {
        let mut v = Vars::new();
        v.insert("new", person_born(p));
        let clause = match r.passengers.get(i) {
            Some(old) if old == p => continue,
            Some(old) if old.first_name == p.first_name && old.last_name == p.last_name => {
                v.insert("name", person(p));
                v.insert("dob", p.dob.clone());
                "passenger_change.birth_date"
            }
            Some(old) => {
                v.insert("old", person(old));
                "passenger_change.replace"
            }
            None => "passenger_change.add",
        };
        changes.push(say(clause, args, &v)?);
    }
    if changes.is_empty() {
        let all: Vec<String> = new.iter().map(person_born).collect();
        vars.insert("all", join_and_serial(&all));
        return Some("confirm");
    }
    vars.insert("changes", join_and_serial(&changes));
    Some("change")
}

/// What the agent must tell the customer after a read that ends a read-only intent:
/// a reservation's flight numbers and dates (or that it is cancelled), a search's flight numbers, or
/// the cheapest option's flight numbers and economy fare (as [`describe_request`] asks).
pub fn required_outputs(_db: &AirlineDb, tool: &str, _args: &Value, output: &str) -> Vec<String> {
    match tool {
        "get_reservation_details" => {
            let Ok(v) = serde_json::from_str::<Value>(output) else {
                return Vec::new();
            };
            if arg_str(&v, "status") == "cancelled" {
                return vec!["cancelled".into()];
            }
            // Each flight's number and date: the sentences ask which flights, on which days.
            let mut out: Vec<String> = Vec::new();
            for f in list_arg(&v, "flights") {
                for key in ["flight_number", "date"] {
                    let x = arg_str(&f, key).to_string();
                    if !x.is_empty() && !out.contains(&x) {
                        out.push(x);
                    }
                }
            }
            out
        }
        "search_direct_flight" | "search_onestop_flight" => {
            let onestop = tool == "search_onestop_flight";
            let offers = search_offers(output, onestop);
            if search_case(tool, output) == "few" {
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
    let mut calls = vec![("get_user_details", json!({"user_id": user_id}))];
    calls.extend(
        user.reservations
            .iter()
            .map(|id| ("get_reservation_details", json!({"reservation_id": id}))),
    );
    calls
        .into_iter()
        .map(|(tool, args)| fork.invoke(tool, &args))
        .filter(|out| !out.is_error)
        .map(|out| out.text)
        .collect()
}
