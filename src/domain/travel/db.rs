//! The travel database: packages (destinations, dated departures with price and slots,
//! itinerary, policies, managing agents), travelers (profile, saved payment methods, saved
//! companions and their bookings, nested as the reference nests them) and agents
//! (availability by date, the travelers and bookings they handle).
//!
//! Rows mirror the reference's pydantic models field for field and in the same order and
//! serialise in `model_dump()` form, so a tool output is tau2's text and an export is what
//! tau2 hashes. Maps the reference keeps as Python dicts (departures, saved payment
//! methods, availability) are [`PyDict`]s: a tool prints them in the order the file held
//! them. Packages and travelers keep the `db.json` order too, because the reference's
//! search, destination list and booking lookup scan them in it (its database repeats some
//! booking ids across travelers; the first traveler in file order wins).
//!
//! Architecture invariant: data and the `Database` glue only; tool behaviour lives in
//! `tools.rs`, grounding in `ground.rs`, refinement hooks in `hooks.rs`.

pub use crate::domain::kit::rows::{MethodInfo, Name, Payment, PaymentMethod, PostalAddress};

use crate::domain::kit::python::PyDict;
use crate::domain::kit::tau2;
use crate::domain::{DomainError, Table};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContactInfo {
    pub email: String,
    pub phone: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Passport {
    pub number: String,
    pub nationality: String,
    pub expiry: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preferences {
    pub dietary: Option<String>,
    pub accessibility: Option<String>,
    pub room_type: Option<String>,
    pub bed_preference: Option<String>,
    pub other: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Companion {
    pub first_name: String,
    pub last_name: String,
    pub dob: String,
    pub passport: Option<Passport>,
}

/// One person on a booking (`BookingTravelerInfo`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BookingTraveler {
    pub first_name: String,
    pub last_name: String,
    /// `YY-MM-DD`.
    pub dob: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rooming {
    pub room_type: String,
    pub occupancy: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AddOn {
    #[serde(rename = "type")]
    pub kind: String,
    pub description: String,
    pub price: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Location {
    pub city: String,
    pub country: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Departure {
    pub status: String,
    pub base_price: f64,
    pub currency: String,
    pub available_slots: i64,
    pub early_bird_deadline: String,
}

impl Departure {
    /// What the reference books onto: status exactly `available`.
    pub fn is_open(&self) -> bool {
        self.status == "available"
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItineraryItem {
    pub day: i64,
    pub title: String,
    pub description: String,
    pub location: Location,
    pub included_meals: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Accommodation {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub location: Location,
    pub nights: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transportation {
    pub international: String,
    pub domestic: String,
    pub ground: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    pub name: String,
    pub description: String,
    pub day: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackagePolicies {
    pub cancellation_policy: String,
    pub change_policy: String,
    pub refund_policy: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Package {
    pub package_id: String,
    pub name: String,
    pub category: String,
    pub description: String,
    pub destinations: Vec<Location>,
    pub duration_days: i64,
    pub departure_points: Vec<Location>,
    /// `YY-MM-DD` -> departure.
    pub departures: PyDict<Departure>,
    pub itinerary: Vec<ItineraryItem>,
    pub inclusions: Vec<String>,
    pub exclusions: Vec<String>,
    pub accommodations: Vec<Accommodation>,
    pub transportation: Transportation,
    pub activities: Vec<Activity>,
    pub policies: PackagePolicies,
    pub notes: Option<String>,
    pub managed_by_agents: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Booking {
    pub booking_id: String,
    pub package_id: String,
    pub agent_id: String,
    pub booking_date: String,
    pub departure_date: String,
    pub status: String,
    pub travelers: Vec<BookingTraveler>,
    pub rooming: Rooming,
    pub add_ons: Vec<AddOn>,
    pub insurance: Option<String>,
    pub payment_history: Vec<Payment<f64>>,
    pub total_price: f64,
    pub notes: Option<String>,
}

impl Booking {
    pub fn is_cancelled(&self) -> bool {
        self.status == "cancelled"
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Traveler {
    pub traveler_id: String,
    pub name: Name,
    pub address: PostalAddress,
    pub contact: ContactInfo,
    pub dob: String,
    pub passport: Option<Passport>,
    pub preferences: Option<Preferences>,
    pub payment_methods: PyDict<PaymentMethod>,
    pub saved_companions: Vec<Companion>,
    pub memberships: Vec<String>,
    pub bookings: Vec<Booking>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agency {
    pub name: String,
    pub address: PostalAddress,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AvailabilityDay {
    /// `HH:MM-HH:MM`.
    pub slots: Vec<String>,
    pub timezone: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    pub agent_id: String,
    pub name: Name,
    pub contact: ContactInfo,
    pub agency: Agency,
    pub certifications: Vec<String>,
    pub languages: Vec<String>,
    pub regions_of_expertise: Vec<String>,
    pub commission_rate: f64,
    pub employment_status: String,
    pub assigned_travelers: Vec<String>,
    pub managed_packages: Vec<String>,
    pub bookings_handled: Vec<String>,
    /// `YY-MM-DD` -> open meeting slots.
    pub availability: PyDict<AvailabilityDay>,
    pub notes: Option<String>,
}

/// The whole travel state. Packages and travelers list in the order the reference scans
/// them (`Table::in_order`: its `db.json` order; id order for a generated database).
#[derive(Clone)]
pub struct TravelDb {
    pub packages: Table<Package>,
    pub travelers: Table<Traveler>,
    pub agents: Table<Agent>,
    /// Booking id -> the travelers holding it, in scanning order, as loaded. Tools never
    /// remove or move a booking and only add ones with fresh `TAU` slot ids, so a lookup
    /// reads this instead of scanning every traveler (grounding looks bookings up
    /// thousands of times per trace).
    holders: Arc<BTreeMap<String, Vec<String>>>,
    /// Bookings made since loading: (booking id, holder). At most three per task.
    made: Vec<(String, String)>,
}

impl TravelDb {
    pub fn new(
        packages: BTreeMap<String, Package>,
        travelers: BTreeMap<String, Traveler>,
        agents: BTreeMap<String, Agent>,
    ) -> Self {
        let mut db = TravelDb {
            packages: Table::new("packages", packages),
            travelers: Table::new("travelers", travelers),
            agents: Table::new("agents", agents),
            holders: Arc::default(),
            made: Vec::new(),
        };
        db.index_bookings();
        db
    }

    /// Record a booking just added to `holder`'s list (see `made`).
    pub fn note_new_booking(&mut self, booking_id: &str, holder: &str) {
        self.made.push((booking_id.to_string(), holder.to_string()));
    }

    /// The bookings made since loading, in the order they were made.
    pub fn made_bookings(&self) -> impl Iterator<Item = &Booking> {
        self.made
            .iter()
            .filter_map(|(id, _)| self.find_booking(id).map(|(_, b)| b))
    }

    fn index_bookings(&mut self) {
        let mut holders: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in self.travelers.in_order() {
            for b in &t.bookings {
                let list = holders.entry(b.booking_id.clone()).or_default();
                if !list.contains(&t.traveler_id) {
                    list.push(t.traveler_id.clone());
                }
            }
        }
        self.holders = Arc::new(holders);
    }

    /// The booking with this id and the traveler holding it: the first in scanning order,
    /// as the reference finds it.
    pub fn find_booking(&self, booking_id: &str) -> Option<(&Traveler, &Booking)> {
        let on =
            |t: &'_ Traveler| -> bool { t.bookings.iter().any(|b| b.booking_id == booking_id) };
        let holder = match self.holders.get(booking_id) {
            Some(ids) => ids
                .iter()
                .filter_map(|id| self.travelers.get(id))
                .find(|t| on(t)),
            // Only a booking made since loading (a `TAU` slot id) is missing from the index.
            None => self
                .made
                .iter()
                .find(|(id, _)| id == booking_id)
                .and_then(|(_, holder)| self.travelers.get(holder)),
        }?;
        let booking = holder
            .bookings
            .iter()
            .find(|b| b.booking_id == booking_id)?;
        Some((holder, booking))
    }

    /// Read the reference's tables (`db.json` top-level keys). Packages and travelers keep
    /// the order the file at `origin` lists them in, when it is readable. Agents a package
    /// names must exist (a booking would otherwise meet an agent it cannot load).
    pub fn import(tables: &BTreeMap<String, Value>, origin: &Path) -> Result<Self, DomainError> {
        let packages: BTreeMap<String, Package> = tau2::parse_table(tables, "packages", origin)?;
        let travelers: BTreeMap<String, Traveler> = tau2::parse_table(tables, "travelers", origin)?;
        let agents: BTreeMap<String, Agent> = tau2::parse_table(tables, "agents", origin)?;
        for (id, p) in &packages {
            if let Some(a) = p
                .managed_by_agents
                .iter()
                .find(|a| !agents.contains_key(*a))
            {
                return Err(DomainError::Import {
                    path: origin.display().to_string(),
                    message: format!("packages['{id}']: unknown managing agent '{a}'"),
                });
            }
        }
        let order = tau2::document_order(origin);
        let mut db = TravelDb::new(packages, travelers, agents);
        tau2::keep_document_order(&mut db.packages, &order);
        tau2::keep_document_order(&mut db.travelers, &order);
        db.index_bookings();
        Ok(db)
    }
}
