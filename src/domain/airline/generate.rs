//! The deterministic airline database generator: 500 users, 300 flights over May 2024, 2,000
//! reservations, all from one `ChaCha8Rng` seeded with the caller's seed and our own
//! vocabulary lists.
//!
//! Invariants the generator keeps (and the tests check):
//! - every reservation's user exists and lists it; every payment in its history is one of
//!   that user's credit or gift cards; every segment is a real flight on a date it has;
//! - flight dates before the clock are landed or cancelled, the clock's own date is
//!   landed / flying / on time / delayed / cancelled according to the scheduled and actual
//!   times versus 15:00, later dates are available with seats and prices;
//! - bookings precede the first segment and the clock; about one in six future trips was
//!   booked within the last 24 hours, so cancellation under the policy is often possible;
//! - gift-card and certificate balances are non-negative; reservation ids never start with
//!   `HAT` (that prefix is reserved for ids the booking tool creates).
//!
//! Architecture invariant: never reads the wall clock or anything outside its arguments.

use super::db::{
    Address, AirlineDb, BAG_FEE, CABINS, CLOCK, Flight, FlightDate, INSURANCE_FEE, Money, Name,
    Passenger, Payment, PaymentMethod, PerCabin, Reservation, ReservedFlight, User,
    free_bags_per_passenger,
};
use crate::domain::kit::clock::{
    days_from_civil, format_date, format_datetime, parse_clock, parse_date,
};
use rand::seq::IndexedRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

pub const USERS: usize = 500;
pub const FLIGHTS: usize = 300;
pub const RESERVATIONS: usize = 2000;
/// The calendar every flight carries: 2024-05-01 ..= 2024-05-30.
pub const FIRST_DATE: &str = "2024-05-01";
pub const DAYS: i64 = 30;

/// The vocabulary the generator draws from, kept as data in `vocabulary.toml`.
#[derive(Debug, Default, Deserialize)]
struct Vocabulary {
    first_names: Vec<String>,
    last_names: Vec<String>,
    streets: Vec<String>,
    /// (city, state, lowest zip code).
    cities: Vec<(String, String, u32)>,
    card_brands: Vec<String>,
    /// (code, city) of every airport the tools know.
    airports: Vec<(String, String)>,
    /// The airports of the generated network.
    network: Vec<String>,
}

/// The built-in vocabulary; a broken file is a bug the generator tests catch, so this never
/// panics at run time (an empty vocabulary generates nothing).
static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

/// The city an airport code serves, for the codes the vocabulary knows.
pub fn airport_city(code: &str) -> Option<&'static str> {
    let airports = &VOCABULARY.airports;
    airports
        .iter()
        .find(|(c, _)| c == code)
        .map(|(_, city)| city.as_str())
}

/// Build the database for `seed`.
pub fn generate(seed: u64) -> AirlineDb {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let flights = gen_flights(&mut rng);
    let mut used_payment_ids = BTreeSet::new();
    let mut users = gen_users(&mut rng, &mut used_payment_ids);
    let reservations = gen_reservations(&mut rng, &flights, &mut users);
    AirlineDb::new(flights, reservations, users)
}

fn pick<'a>(rng: &mut ChaCha8Rng, items: &'a [String]) -> &'a str {
    items.choose(rng).map(String::as_str).unwrap_or("")
}

fn first_day() -> i64 {
    parse_date(FIRST_DATE).unwrap_or_default()
}

fn hms(secs: i64) -> String {
    let s = secs.rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

// ---------------------------------------------------------------- flights

fn gen_flights(rng: &mut ChaCha8Rng) -> BTreeMap<String, Flight> {
    // 75 airport pairs, each flown both ways twice a day: 300 flights.
    let network = &VOCABULARY.network;
    let mut pairs: BTreeSet<(usize, usize)> = BTreeSet::new();
    // A ring first so the network is connected, then random extra pairs.
    for i in 0..network.len() {
        pairs.insert((i, (i + 1) % network.len()));
    }
    while pairs.len() < FLIGHTS / 4 {
        let a = rng.random_range(0..network.len());
        let b = rng.random_range(0..network.len());
        if a != b && !pairs.contains(&(b, a)) {
            pairs.insert((a, b));
        }
    }
    let mut legs = Vec::with_capacity(FLIGHTS);
    for &(a, b) in &pairs {
        let minutes = 60 + 30 * rng.random_range(0..10i64);
        let base = 40 + minutes / 6 + rng.random_range(0..30i64);
        for (o, d) in [(a, b), (b, a)] {
            for _ in 0..2 {
                legs.push((network[o].as_str(), network[d].as_str(), minutes, base));
            }
        }
    }
    let mut numbers: Vec<usize> = (1..=legs.len()).collect();
    rand::seq::SliceRandom::shuffle(numbers.as_mut_slice(), rng);
    let clock = CLOCK.seconds();
    let today = parse_date(CLOCK.today()).unwrap_or_default();
    let mut flights = BTreeMap::new();
    for ((origin, destination, minutes, base), number) in legs.into_iter().zip(numbers) {
        let dep = rng.random_range(10..45i64) * 1800; // 05:00 ..= 22:00, on the half hour
        let arr = dep + minutes * 60;
        let arrival = if arr >= 86_400 {
            format!("{}+1", hms(arr))
        } else {
            hms(arr)
        };
        let mut dates = BTreeMap::new();
        for k in 0..DAYS {
            let day = first_day() + k;
            let start = day * 86_400 + dep;
            let end = day * 86_400 + arr;
            let entry = if day > today {
                available_entry(rng, base)
            } else if rng.random_bool(if day == today { 0.04 } else { 0.07 }) {
                status_only("cancelled")
            } else {
                let actual_dep = start + 60 * rng.random_range(-20..45i64);
                let actual_arr = end + 60 * rng.random_range(-25..45i64);
                if actual_arr <= clock {
                    FlightDate {
                        actual_departure_time_est: Some(format_datetime(actual_dep)),
                        actual_arrival_time_est: Some(format_datetime(actual_arr)),
                        ..status_only("landed")
                    }
                } else if actual_dep <= clock {
                    FlightDate {
                        actual_departure_time_est: Some(format_datetime(actual_dep)),
                        estimated_arrival_time_est: Some(format_datetime(actual_arr)),
                        ..status_only("flying")
                    }
                } else {
                    // Not yet departed: the expected times, later still when delayed.
                    let delayed = rng.random_bool(0.3);
                    let shift = if delayed {
                        60 * rng.random_range(30..180i64)
                    } else {
                        0
                    };
                    FlightDate {
                        estimated_departure_time_est: Some(format_datetime(actual_dep + shift)),
                        estimated_arrival_time_est: Some(format_datetime(actual_arr + shift)),
                        ..status_only(if delayed { "delayed" } else { "on time" })
                    }
                }
            };
            dates.insert(format_date(day), entry);
        }
        let flight_number = format!("HAT{number:03}");
        flights.insert(
            flight_number.clone(),
            Flight {
                flight_number,
                origin: origin.to_string(),
                destination: destination.to_string(),
                scheduled_departure_time_est: hms(dep),
                scheduled_arrival_time_est: arrival,
                dates,
            },
        );
    }
    flights
}

fn status_only(status: &str) -> FlightDate {
    FlightDate {
        status: status.to_string(),
        available_seats: None,
        prices: None,
        actual_departure_time_est: None,
        actual_arrival_time_est: None,
        estimated_departure_time_est: None,
        estimated_arrival_time_est: None,
    }
}

fn available_entry(rng: &mut ChaCha8Rng, base: i64) -> FlightDate {
    let mut seats = || {
        if rng.random_bool(0.05) {
            0
        } else {
            rng.random_range(1..=20i64)
        }
    };
    let available_seats = PerCabin {
        basic_economy: seats(),
        economy: seats(),
        business: seats(),
    };
    let basic = base + rng.random_range(0..40i64);
    let economy = basic + 40 + rng.random_range(0..90i64);
    let business = economy * 2 + rng.random_range(0..160i64);
    FlightDate {
        available_seats: Some(available_seats),
        prices: Some(PerCabin {
            basic_economy: Money::dollars(basic),
            economy: Money::dollars(economy),
            business: Money::dollars(business),
        }),
        ..status_only("available")
    }
}

// ---------------------------------------------------------------- users

fn unique_number(rng: &mut ChaCha8Rng, used: &mut BTreeSet<u32>) -> u32 {
    loop {
        let n = rng.random_range(1_000_000..10_000_000u32);
        if used.insert(n) {
            return n;
        }
    }
}

fn random_dob(rng: &mut ChaCha8Rng, from_year: i64, to_year: i64) -> String {
    let lo = days_from_civil(from_year, 1, 1);
    let hi = days_from_civil(to_year, 12, 31);
    format_date(rng.random_range(lo..=hi))
}

fn random_person(rng: &mut ChaCha8Rng) -> Passenger {
    Passenger {
        first_name: pick(rng, &VOCABULARY.first_names).to_string(),
        last_name: pick(rng, &VOCABULARY.last_names).to_string(),
        dob: random_dob(rng, 1945, 2015),
    }
}

fn gen_users(rng: &mut ChaCha8Rng, used: &mut BTreeSet<u32>) -> BTreeMap<String, User> {
    let mut users = BTreeMap::new();
    let mut suffixes = BTreeSet::new();
    while users.len() < USERS {
        let first = pick(rng, &VOCABULARY.first_names);
        let last = pick(rng, &VOCABULARY.last_names);
        let suffix = rng.random_range(1000..10_000u32);
        if !suffixes.insert((first, last, suffix)) {
            continue;
        }
        let user_id = format!("{}_{}_{suffix}", first.to_lowercase(), last.to_lowercase());
        let mut methods = BTreeMap::new();
        let cards = if rng.random_bool(0.1) {
            0
        } else {
            rng.random_range(1..=2)
        };
        let gifts = if cards == 0 {
            rng.random_range(1..=2)
        } else {
            rng.random_range(0..=2)
        };
        for _ in 0..cards {
            let id = format!("credit_card_{}", unique_number(rng, used));
            methods.insert(
                id.clone(),
                PaymentMethod {
                    source: "credit_card".into(),
                    brand: Some(pick(rng, &VOCABULARY.card_brands).to_string()),
                    last_four: Some(format!("{:04}", rng.random_range(0..10_000u32))),
                    amount: None,
                    id,
                },
            );
        }
        for _ in 0..gifts {
            let id = format!("gift_card_{}", unique_number(rng, used));
            let balance = Money::dollars(rng.random_range(0..=400i64));
            methods.insert(id.clone(), balance_method("gift_card", balance, id));
        }
        for _ in 0..rng.random_range(0..=2) {
            let id = format!("certificate_{}", unique_number(rng, used));
            let amount = *[100i64, 150, 200, 250, 300, 500]
                .choose(rng)
                .unwrap_or(&100);
            methods.insert(
                id.clone(),
                balance_method("certificate", Money::dollars(amount), id),
            );
        }
        let Some((city, state, zip)) = VOCABULARY.cities.choose(rng) else {
            break;
        };
        let saved = (0..rng.random_range(1..=2))
            .map(|_| random_person(rng))
            .collect();
        let membership = match rng.random_range(0..100) {
            0..35 => "regular",
            35..70 => "silver",
            _ => "gold",
        };
        let user = User {
            name: Name {
                first_name: first.to_string(),
                last_name: last.to_string(),
            },
            address: Address {
                address1: format!(
                    "{} {}",
                    rng.random_range(10..9999),
                    pick(rng, &VOCABULARY.streets)
                ),
                address2: if rng.random_bool(0.5) {
                    format!("Suite {}", rng.random_range(100..999))
                } else {
                    format!("Apt {}", rng.random_range(1..60))
                },
                city: city.to_string(),
                country: "USA".to_string(),
                state: state.to_string(),
                zip: format!("{}", *zip + rng.random_range(0..60u32)),
            },
            email: format!(
                "{}.{}{}@example.com",
                first.to_lowercase(),
                last.to_lowercase(),
                rng.random_range(100..10_000)
            ),
            dob: random_dob(rng, 1950, 2004),
            payment_methods: methods,
            saved_passengers: saved,
            membership: membership.to_string(),
            reservations: Vec::new(),
        };
        users.insert(user_id, user);
    }
    users
}

fn balance_method(source: &str, amount: Money, id: String) -> PaymentMethod {
    PaymentMethod {
        source: source.into(),
        brand: None,
        last_four: None,
        amount: Some(amount),
        id,
    }
}

// ---------------------------------------------------------------- reservations

fn reservation_id(rng: &mut ChaCha8Rng, taken: &BTreeMap<String, Reservation>) -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    loop {
        let id: String = (0..6)
            .map(|_| char::from(*CHARS.choose(rng).unwrap_or(&b'A')))
            .collect();
        if !id.starts_with("HAT") && !taken.contains_key(&id) {
            return id;
        }
    }
}

/// Price of a segment: the fare on the date when it is still sold, else a plausible past fare.
fn fare(rng: &mut ChaCha8Rng, flight: &Flight, date: &str, cabin: &str) -> Money {
    if let Some(p) = flight
        .dates
        .get(date)
        .and_then(|d| d.prices.as_ref())
        .and_then(|p| p.get(cabin))
    {
        return p;
    }
    let basic = rng.random_range(50..110i64);
    Money::dollars(match cabin {
        "basic_economy" => basic,
        "economy" => basic + 40 + rng.random_range(0..90i64),
        _ => 2 * (basic + 80) + rng.random_range(0..160i64),
    })
}

fn segment(rng: &mut ChaCha8Rng, f: &Flight, day: i64, cabin: &str) -> ReservedFlight {
    let date = format_date(day);
    ReservedFlight {
        origin: f.origin.clone(),
        destination: f.destination.clone(),
        flight_number: f.flight_number.clone(),
        price: fare(rng, f, &date, cabin),
        date,
    }
}

fn gen_reservations(
    rng: &mut ChaCha8Rng,
    flights: &BTreeMap<String, Flight>,
    users: &mut BTreeMap<String, User>,
) -> BTreeMap<String, Reservation> {
    let flight_list: Vec<&Flight> = flights.values().collect();
    let user_ids: Vec<String> = users.keys().cloned().collect();
    let today = parse_date(CLOCK.today()).unwrap_or_default();
    let last_day = first_day() + DAYS - 1;
    let clock = CLOCK.seconds();
    let mut out: BTreeMap<String, Reservation> = BTreeMap::new();
    while out.len() < RESERVATIONS {
        let Some(user_id) = user_ids.choose(rng) else {
            break;
        };
        let Some(user) = users.get(user_id) else {
            continue;
        };
        let Some(&f1) = flight_list.choose(rng) else {
            break;
        };
        let cabin = *CABINS.choose(rng).unwrap_or(&"economy");
        // When the trip starts: a third in the past, a few today, the rest ahead.
        let start = match rng.random_range(0..100) {
            0..33 => rng.random_range(first_day()..today),
            33..38 => today,
            _ => rng.random_range(today + 1..=last_day - 5),
        };
        let mut segs = vec![segment(rng, f1, start, cabin)];
        let kind = rng.random_range(0..100);
        let next = start + i64::from(f1.arrives_next_day());
        let (flight_type, destination) = if kind < 35 {
            // one way with a connection, when one exists
            let conn: Vec<&&Flight> = flight_list
                .iter()
                .filter(|f| {
                    f.origin == f1.destination
                        && f.destination != f1.origin
                        && f1.arrival_clock() <= f.scheduled_departure_time_est.as_str()
                })
                .collect();
            match conn.choose(rng) {
                Some(f2) if next <= last_day => {
                    segs.push(segment(rng, f2, next, cabin));
                    ("one_way", f2.destination.clone())
                }
                _ => ("one_way", f1.destination.clone()),
            }
        } else if kind < 80 {
            let back: Vec<&&Flight> = flight_list
                .iter()
                .filter(|f| f.origin == f1.destination && f.destination == f1.origin)
                .collect();
            match back.choose(rng) {
                Some(f2) => {
                    let ret = (next + rng.random_range(1..=5)).min(last_day);
                    segs.push(segment(rng, f2, ret, cabin));
                    ("round_trip", f1.destination.clone())
                }
                None => ("one_way", f1.destination.clone()),
            }
        } else {
            ("one_way", f1.destination.clone())
        };

        let pax = match rng.random_range(0..100) {
            0..45 => 1,
            45..75 => 2,
            75..89 => 3,
            89..96 => 4,
            _ => 5,
        };
        let mut passengers = Vec::with_capacity(pax);
        if rng.random_bool(0.75) {
            passengers.push(user.as_passenger());
        }
        for p in &user.saved_passengers {
            if passengers.len() < pax {
                passengers.push(p.clone());
            }
        }
        while passengers.len() < pax {
            passengers.push(random_person(rng));
        }

        // Booked before departure and before the clock; some within the last 24 hours.
        let departs = start * 86_400 + parse_clock(&f1.scheduled_departure_time_est).unwrap_or(0);
        let latest = departs.min(clock) - 3600;
        let created = if start > today && rng.random_bool(0.18) {
            clock - rng.random_range(600..86_000i64)
        } else {
            let latest = latest.min(clock - 90_000);
            latest - rng.random_range(0..20 * 86_400i64)
        };

        let insurance = if rng.random_bool(0.45) { "yes" } else { "no" };
        let allowance = free_bags_per_passenger(&user.membership, cabin) * pax as i64;
        let total_bags = rng.random_range(0..=allowance + 2);
        let nonfree = (total_bags - allowance).max(0);
        let n = pax as i64;
        let mut amount: Money = segs.iter().map(|s| s.price.times(n)).sum();
        if insurance == "yes" {
            amount = amount + Money::dollars(INSURANCE_FEE).times(n);
        }
        amount = amount + Money::dollars(BAG_FEE).times(nonfree);
        let payable: Vec<&String> = user
            .payment_methods
            .values()
            .filter(|m| m.source == "credit_card" || m.source == "gift_card")
            .map(|m| &m.id)
            .collect();
        let Some(payment_id) = payable.choose(rng).map(|s| s.to_string()) else {
            continue;
        };
        let mut history = vec![Payment::new(payment_id.clone(), amount)];
        let cancelled = created < clock - 86_400 && rng.random_bool(0.03);
        if cancelled {
            history.push(Payment::new(payment_id, -amount));
        }
        let id = reservation_id(rng, &out);
        let reservation = Reservation {
            reservation_id: id.clone(),
            user_id: user_id.clone(),
            origin: f1.origin.clone(),
            destination,
            flight_type: flight_type.to_string(),
            cabin: cabin.to_string(),
            flights: segs,
            passengers,
            payment_history: history,
            created_at: format_datetime(created),
            total_baggages: total_bags,
            nonfree_baggages: nonfree,
            insurance: insurance.to_string(),
            status: cancelled.then(|| "cancelled".to_string()),
        };
        out.insert(id, reservation);
    }
    // Each user lists their reservations in booking order.
    let mut by_user: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for r in out.values() {
        by_user
            .entry(&r.user_id)
            .or_default()
            .push((&r.created_at, &r.reservation_id));
    }
    for (uid, mut list) in by_user {
        list.sort();
        if let Some(u) = users.get_mut(uid) {
            u.reservations = list.into_iter().map(|(_, id)| id.to_string()).collect();
        }
    }
    out
}
