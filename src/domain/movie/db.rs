//! The movie theater database: movies, theaters (address, auditoriums with seat maps,
//! pricing rules, schedules by date) and bookings (customer, seats, concessions, payments,
//! totals, delivered tickets). There is no customer table: a customer is the person named
//! on bookings, keyed by email.
//!
//! Rows mirror the reference's pydantic models field for field and in order, and serialise
//! in `model_dump()` form (optional fields as `null`, money as floats), so a tool output is
//! tau2's text and an export is what tau2 hashes. Maps inside rows (auditoriums, seat rows,
//! dates, format surcharges) keep their insertion order as Python dicts do (`PyDict`).
//! The movie and theater orders of an imported `db.json` are kept for the listings.
//!
//! Architecture invariant: data and the `Database` glue only; tool behaviour lives in
//! `tools.rs`, grounding in `ground.rs`, refinement hooks in `hooks.rs`.

pub use crate::domain::kit::rows::{MethodInfo, Name, PaymentMethod, PostalAddress};

use crate::domain::DomainError;
use crate::domain::kit::python::PyDict;
use crate::domain::kit::tau2;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CastMember {
    pub name: String,
    pub role: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Crew {
    pub director: String,
    pub writer: String,
    pub producer: String,
    pub music: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Movie {
    pub movie_id: String,
    pub title: String,
    pub genres: Vec<String>,
    pub runtime_minutes: i64,
    pub mpaa_rating: String,
    pub languages_audio: Vec<String>,
    pub subtitles: Vec<String>,
    pub formats: Vec<String>,
    pub release_date: String,
    pub end_of_run_est: String,
    pub cast: Vec<CastMember>,
    pub crew: Crew,
    pub synopsis: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TheaterContact {
    pub phone: String,
    pub email: String,
    pub website: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seat {
    pub seat_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub wheelchair_accessible: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeatMap {
    pub rows: PyDict<Vec<Seat>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Auditorium {
    pub auditorium_id: String,
    pub name: String,
    pub capacity: i64,
    pub features: Vec<String>,
    pub seat_map: SeatMap,
}

impl Auditorium {
    pub fn seats(&self) -> impl Iterator<Item = &Seat> {
        self.seat_map.rows.values().flatten()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PricingBase {
    pub adult: f64,
    pub child: f64,
    pub senior: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeBasedPricing {
    pub matinee_discount: f64,
    pub peak_surcharge: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TheaterFees {
    pub convenience_fee: f64,
    pub booking_fee: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PricingRules {
    pub base: PricingBase,
    pub format_surcharges: PyDict<f64>,
    pub time_based: TimeBasedPricing,
    pub fees: TheaterFees,
    pub tax_rate_percent: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceFees {
    pub convenience_fee: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceSchema {
    pub adult: f64,
    pub child: f64,
    pub senior: f64,
    pub fees: PriceFees,
}

/// The show states; only scheduled shows can be booked or changed.
pub const SCHEDULED: &str = "scheduled";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Show {
    pub show_id: String,
    pub movie_id: String,
    pub auditorium_id: String,
    pub start_time_local: String,
    pub end_time_local: String,
    pub format: String,
    pub language: String,
    pub subtitles: String,
    pub status: String,
    pub price_schema: PriceSchema,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DaySchedule {
    pub shows: Vec<Show>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Theater {
    pub theater_id: String,
    pub name: String,
    pub address: PostalAddress,
    pub contact: TheaterContact,
    pub amenities: Vec<String>,
    pub auditoriums: PyDict<Auditorium>,
    pub pricing_rules: PricingRules,
    pub dates: PyDict<DaySchedule>,
}

impl Theater {
    /// Every show with its date, in schedule order (the order the reference searches).
    pub fn shows(&self) -> impl Iterator<Item = (&str, &Show)> {
        self.dates
            .iter()
            .flat_map(|(d, day)| day.shows.iter().map(move |s| (d, s)))
    }

    pub fn show(&self, show_id: &str) -> Option<(&str, &Show)> {
        self.shows().find(|(_, s)| s.show_id == show_id)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Customer {
    pub name: Name,
    pub email: String,
    pub phone: String,
    pub loyalty_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookedSeat {
    pub seat_id: String,
    pub ticket_type: String,
    pub price: f64,
    pub convenience_fee: f64,
    pub tax: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConcessionItem {
    pub item_id: String,
    pub name: String,
    pub size: String,
    pub quantity: i64,
    pub price_each: f64,
    pub tax_each: f64,
    pub total: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromotionApplied {
    pub code: String,
    pub description: String,
    pub discount_amount: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookingPayment {
    pub payment_id: String,
    pub amount: f64,
    pub method: PaymentMethod,
    pub created_at: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookingTotals {
    pub tickets_subtotal: f64,
    pub concessions_subtotal: f64,
    pub fees_total: f64,
    pub tax_total: f64,
    pub grand_total: f64,
    pub amount_paid: f64,
    pub amount_due: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TicketDelivery {
    pub ticket_id: String,
    pub barcode: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub method: String,
    pub tickets: Vec<TicketDelivery>,
}

pub const CONFIRMED: &str = "confirmed";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Booking {
    pub booking_id: String,
    pub theater_id: String,
    pub movie_id: String,
    pub show_id: String,
    pub date: String,
    pub start_time_local: String,
    pub status: String,
    pub created_at: String,
    pub canceled_at: Option<String>,
    pub customer: Customer,
    pub seats: Vec<BookedSeat>,
    pub concessions: Vec<ConcessionItem>,
    pub promotions_applied: Vec<PromotionApplied>,
    pub payment_history: Vec<BookingPayment>,
    pub totals: BookingTotals,
    pub delivery: Delivery,
    pub special_requests: Option<String>,
}

crate::domain::kit::glue::database_struct! {
    /// The whole movie theater state. Movies and theaters list in the order the reference
    /// lists them (`Table::in_order`: its `db.json` order; id order for a generated database).
    MovieDb { movies: Movie, theaters: Theater, bookings: Booking }
}

impl MovieDb {
    /// The bookings of a customer (by email, case-insensitive), in id order.
    pub fn bookings_of(&self, email: &str) -> Vec<&Booking> {
        let email = email.to_lowercase();
        self.bookings
            .iter()
            .filter(|(_, b)| b.customer.email.to_lowercase() == email)
            .map(|(_, b)| b)
            .collect()
    }

    /// Read the reference's tables and check that bookings name existing theaters, shows
    /// and movies.
    pub fn import(tables: &BTreeMap<String, Value>, origin: &Path) -> Result<Self, DomainError> {
        let movies: BTreeMap<String, Movie> = tau2::parse_table(tables, "movies", origin)?;
        let theaters: BTreeMap<String, Theater> = tau2::parse_table(tables, "theaters", origin)?;
        let bookings: BTreeMap<String, Booking> = tau2::parse_table(tables, "bookings", origin)?;
        for (id, b) in &bookings {
            let known = theaters
                .get(&b.theater_id)
                .is_some_and(|t| t.show(&b.show_id).is_some());
            if !known {
                return Err(DomainError::Import {
                    path: origin.display().to_string(),
                    message: format!(
                        "bookings['{id}']: show '{}' not found at theater '{}'",
                        b.show_id, b.theater_id
                    ),
                });
            }
        }
        let order = tau2::document_order(origin);
        let mut db = MovieDb::new(movies, theaters, bookings);
        tau2::keep_document_order(&mut db.movies, &order);
        tau2::keep_document_order(&mut db.theaters, &order);
        Ok(db)
    }
}
