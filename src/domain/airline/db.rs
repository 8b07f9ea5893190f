//! The airline database types: users, flights (with per-date status) and reservations.
//!
//! Field names, nesting and optionality equal tau-bench's airline data files, so a
//! tau-bench database imports into these types and exports back to the same JSON. Every map
//! is a `BTreeMap` so serialisation (and with it the state hash) is canonical. Money is kept
//! in whole cents ([`Money`]) so sums and balances are exact.
//!
//! Architecture invariant: plain data plus small pure helpers (money, allowances);
//! nothing here knows tools, policies or generation.

use crate::domain::kit::clock::SimClock;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// The simulation clock: "now" for every airline rule (tau-bench's airline assumes it too).
pub const CLOCK: SimClock = SimClock::new("2024-05-15T15:00:00");

/// The three cabins, cheapest first.
pub const CABINS: [&str; 3] = ["basic_economy", "economy", "business"];

/// An amount of dollars stored as whole cents. Serialises as a JSON integer when it has no
/// cents (as tau-bench's data holds it) and as a decimal number otherwise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(pub i64);

impl Money {
    pub fn dollars(d: i64) -> Money {
        Money(d.saturating_mul(100))
    }

    /// Round a float amount to cents (tool arguments arrive as JSON numbers).
    pub fn from_f64(x: f64) -> Money {
        if x.is_finite() {
            Money((x * 100.0).round() as i64)
        } else {
            Money(0)
        }
    }

    pub fn cents(self) -> i64 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 100.0
    }

    pub fn times(self, n: i64) -> Money {
        Money(self.0.saturating_mul(n))
    }
}

impl std::ops::Add for Money {
    type Output = Money;
    fn add(self, o: Money) -> Money {
        Money(self.0.saturating_add(o.0))
    }
}

impl std::ops::Sub for Money {
    type Output = Money;
    fn sub(self, o: Money) -> Money {
        Money(self.0.saturating_sub(o.0))
    }
}

impl std::ops::Neg for Money {
    type Output = Money;
    fn neg(self) -> Money {
        Money(self.0.saturating_neg())
    }
}

impl std::iter::Sum for Money {
    fn sum<I: Iterator<Item = Money>>(iter: I) -> Money {
        iter.fold(Money(0), |a, b| a + b)
    }
}

impl fmt::Display for Money {
    /// Whole dollars print as an integer (`4986`), others with their cents (`12.5`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 % 100 == 0 {
            write!(f, "{}", self.0 / 100)
        } else {
            write!(f, "{}", self.as_f64())
        }
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0 % 100 == 0 {
            s.serialize_i64(self.0 / 100)
        } else {
            s.serialize_f64(self.as_f64())
        }
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Money, D::Error> {
        let v = serde_json::Number::deserialize(d)?;
        if let Some(i) = v.as_i64() {
            return Ok(Money::dollars(i));
        }
        v.as_f64()
            .map(Money::from_f64)
            .ok_or_else(|| serde::de::Error::custom("amount out of range"))
    }
}

/// The customer's name and address rows, shared with the other tau-bench domain.
pub use crate::domain::kit::tau_bench::{Address, Name};

/// A stored payment method: a credit card (brand, last four) or a gift card / travel
/// certificate (balance).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentMethod {
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub brand: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_four: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub amount: Option<Money>,
    pub id: String,
}

impl PaymentMethod {
    pub fn balance(&self) -> Money {
        self.amount.unwrap_or_default()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passenger {
    pub first_name: String,
    pub last_name: String,
    pub dob: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub name: Name,
    pub address: Address,
    pub email: String,
    pub dob: String,
    pub payment_methods: BTreeMap<String, PaymentMethod>,
    pub saved_passengers: Vec<Passenger>,
    pub membership: String,
    pub reservations: Vec<String>,
}

impl User {
    /// The user as a traveller on a reservation.
    pub fn as_passenger(&self) -> Passenger {
        let name = &self.name;
        Passenger {
            first_name: name.first_name.clone(),
            last_name: name.last_name.clone(),
            dob: self.dob.clone(),
        }
    }
}

/// Seats or prices per cabin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerCabin<T> {
    pub basic_economy: T,
    pub economy: T,
    pub business: T,
}

impl<T: Copy> PerCabin<T> {
    pub fn get(&self, cabin: &str) -> Option<T> {
        match cabin {
            "basic_economy" => Some(self.basic_economy),
            "economy" => Some(self.economy),
            "business" => Some(self.business),
            _ => None,
        }
    }
}

/// One date of a flight. `available` dates carry seats and prices; flown or departing
/// dates carry actual / estimated times; cancelled dates carry only the status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlightDate {
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub available_seats: Option<PerCabin<i64>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub prices: Option<PerCabin<Money>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub actual_departure_time_est: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub actual_arrival_time_est: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub estimated_departure_time_est: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub estimated_arrival_time_est: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flight {
    pub flight_number: String,
    pub origin: String,
    pub destination: String,
    pub scheduled_departure_time_est: String,
    /// `HH:MM:SS`, with a `+1` suffix when the flight lands the next day.
    pub scheduled_arrival_time_est: String,
    pub dates: BTreeMap<String, FlightDate>,
}

impl Flight {
    pub fn arrives_next_day(&self) -> bool {
        self.scheduled_arrival_time_est.ends_with("+1")
    }

    /// Scheduled arrival as `HH:MM:SS` without the next-day marker.
    pub fn arrival_clock(&self) -> &str {
        self.scheduled_arrival_time_est
            .strip_suffix("+1")
            .unwrap_or(&self.scheduled_arrival_time_est)
    }
}

/// One segment of a reservation, with the per-passenger price paid for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservedFlight {
    pub origin: String,
    pub destination: String,
    pub flight_number: String,
    pub date: String,
    pub price: Money,
}

/// A payment or refund of a reservation, in cents.
pub type Payment = crate::domain::kit::rows::Payment<Money>;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reservation {
    pub reservation_id: String,
    pub user_id: String,
    pub origin: String,
    pub destination: String,
    pub flight_type: String,
    pub cabin: String,
    pub flights: Vec<ReservedFlight>,
    pub passengers: Vec<Passenger>,
    pub payment_history: Vec<Payment>,
    pub created_at: String,
    pub total_baggages: i64,
    pub nonfree_baggages: i64,
    pub insurance: String,
    /// Absent until the reservation is cancelled (then `"cancelled"`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<String>,
}

impl Reservation {
    pub fn is_cancelled(&self) -> bool {
        self.status.as_deref() == Some("cancelled")
    }

    pub fn passenger_count(&self) -> i64 {
        self.passengers.len() as i64
    }
}

crate::domain::kit::glue::database_struct! {
    /// The whole airline state: three copy-on-write tables.
    AirlineDb { flights: Flight, reservations: Reservation, users: User }
}

/// Free checked bags per passenger for a membership tier and cabin.
pub fn free_bags_per_passenger(membership: &str, cabin: &str) -> i64 {
    match (membership, cabin) {
        ("gold", "basic_economy") => 2,
        ("gold", _) => 3,
        ("silver", "basic_economy") => 1,
        ("silver", "economy") => 2,
        ("silver", _) => 3,
        (_, "basic_economy") => 0,
        (_, "economy") => 1,
        (_, _) => 2,
    }
}

/// Price of one checked bag beyond the allowance, and of travel insurance per passenger.
pub const BAG_FEE: i64 = 50;
pub const INSURANCE_FEE: i64 = 30;
