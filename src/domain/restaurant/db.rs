//! The restaurant database: the menu board (dishes, each with its plate selections), the
//! patron registry (identity, address, contact email, saved payment instruments, ticket
//! log) and the service tickets (mode, dropoff or table, line entries, state, kitchen
//! batches, charges).
//!
//! Rows mirror the reference's pydantic models field for field and in the same order, and
//! serialise in `model_dump()` form (optional fields as `null`, costs as floats), so a tool
//! output is tau2's text and an export is what tau2 hashes. The reference's `db.json` omits
//! some optional keys (`dropoff`, `table_info`); import fills them with `null`, as pydantic
//! does. The service mode is an enum, so a bad value in an imported file is an import error
//! naming the row; `state` and charge `kind` are free text in the reference and stay so.
//!
//! Python walks its dicts in file order: the first patron matching an email wins, and the
//! menu lists dishes in file order. The patron and dish orders of an imported `db.json` are
//! kept ([`RestaurantDb::patrons_in_order`], [`RestaurantDb::dishes_in_order`]).
//!
//! Architecture invariant: data and the `Database` glue only; tool behaviour lives in
//! `tools.rs`, grounding in `ground.rs`, refinement hooks in `hooks.rs`.

use crate::domain::DomainError;
use crate::domain::kit::tau2;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlateModifiers {
    pub spice_level: Option<String>,
    pub portion: Option<String>,
    pub protein: Option<String>,
    pub preparation: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plate {
    pub plate_ref: String,
    pub modifiers: PlateModifiers,
    pub served_today: bool,
    pub cost: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dish {
    pub title: String,
    pub dish_ref: String,
    pub selections: BTreeMap<String, Plate>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestIdentity {
    pub given: String,
    pub family: String,
}

/// An address; the reference's field order (nation before province).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatronLocation {
    pub line_one: String,
    pub line_two: String,
    pub municipality: String,
    pub nation: String,
    pub province: String,
    pub postal_code: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstrumentMetadata {
    pub issuer: String,
    pub tail_digits: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentInstrument {
    pub origin: String,
    pub instrument_ref: String,
    pub metadata: InstrumentMetadata,
}

impl PaymentInstrument {
    /// How the patron names it ("your M-Pesa mobile money ending in 4421"), and the
    /// strings that reveals. The issuer is kept as written (issuers such as "bKash" or
    /// "HBL Visa" are not brand keys to capitalise).
    pub fn phrase(&self) -> (String, Vec<String>) {
        let kind = self.origin.replace('_', " ");
        let issuer = self.metadata.issuer.trim();
        let named = if issuer.is_empty() || issuer.to_lowercase().contains(&kind) {
            kind
        } else {
            format!("{issuer} {kind}")
        };
        let tail = self.metadata.tail_digits.trim();
        if tail.is_empty() {
            (format!("your {named}"), vec![named])
        } else {
            (
                format!("your {named} ending in {tail}"),
                vec![tail.to_string()],
            )
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patron {
    pub guest_ref: String,
    pub identity: GuestIdentity,
    pub location: PatronLocation,
    pub contact_email: String,
    pub saved_instruments: BTreeMap<String, PaymentInstrument>,
    pub ticket_log: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceMode {
    DineIn,
    Takeout,
    Delivery,
}

impl ServiceMode {
    pub fn name(self) -> &'static str {
        match self {
            ServiceMode::DineIn => "dine_in",
            ServiceMode::Takeout => "takeout",
            ServiceMode::Delivery => "delivery",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableInfo {
    pub zone: String,
    pub table_no: String,
    pub seat_count: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineEntryMods {
    pub heat: Option<String>,
    pub sauce: Option<String>,
    pub side: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineEntry {
    pub label: String,
    pub dish_ref: String,
    pub plate_ref: String,
    pub cost: f64,
    pub mods: LineEntryMods,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrepBatch {
    pub parcel_tags: Vec<String>,
    pub plate_refs: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TicketCharge {
    /// payment, refund, tip, tax, delivery_fee.
    pub kind: String,
    pub total: f64,
    pub instrument_ref: String,
}

impl TicketCharge {
    pub fn new(kind: &str, total: f64, instrument_ref: &str) -> Self {
        TicketCharge {
            kind: kind.to_string(),
            total,
            instrument_ref: instrument_ref.to_string(),
        }
    }
}

/// The state every change needs (the reference's modifiable state).
pub const PLACED: &str = "placed";
pub const CANCELLED: &str = "cancelled";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceTicket {
    pub ticket_ref: String,
    pub guest_ref: String,
    pub service_mode: ServiceMode,
    pub dropoff: Option<PatronLocation>,
    pub table_info: Option<TableInfo>,
    pub line_entries: Vec<LineEntry>,
    pub state: String,
    pub prep_batches: Vec<PrepBatch>,
    pub charges: Vec<TicketCharge>,
}

impl ServiceTicket {
    pub fn is_placed(&self) -> bool {
        self.state == PLACED
    }

    /// The ticket's `payment` charges, in order.
    pub fn payments(&self) -> Vec<&TicketCharge> {
        self.charges
            .iter()
            .filter(|c| c.kind == "payment")
            .collect()
    }
}

crate::domain::kit::glue::database_struct! {
    /// The whole restaurant state. Dishes and patrons list in the order the reference walks
    /// them (`Table::in_order`: its `db.json` order; id order for a generated database).
    RestaurantDb { menu_board: Dish, patron_registry: Patron, service_tickets: ServiceTicket }
}

impl RestaurantDb {
    /// The dish a plate belongs to (the first in menu order, as the reference scans).
    pub fn dish_of_plate(&self, plate_ref: &str) -> Option<&Dish> {
        self.menu_board
            .in_order()
            .find(|d| d.selections.contains_key(plate_ref))
    }

    /// The patron's tickets, in the order their log lists them.
    pub fn tickets_of<'a>(&'a self, patron: &'a Patron) -> Vec<&'a ServiceTicket> {
        patron
            .ticket_log
            .iter()
            .filter_map(|id| self.service_tickets.get(id))
            .collect()
    }

    /// Read the reference's tables (`db.json` top-level keys) and check that references
    /// resolve: every ticket's patron exists, every logged ticket exists, every charge names
    /// one of the owner's saved instruments, and plate ids are unique across the menu.
    pub fn import(tables: &BTreeMap<String, Value>, origin: &Path) -> Result<Self, DomainError> {
        let dishes: BTreeMap<String, Dish> = tau2::parse_table(tables, "menu_board", origin)?;
        let patrons: BTreeMap<String, Patron> =
            tau2::parse_table(tables, "patron_registry", origin)?;
        let tickets: BTreeMap<String, ServiceTicket> =
            tau2::parse_table(tables, "service_tickets", origin)?;
        let err = |message: String| DomainError::Import {
            path: origin.display().to_string(),
            message,
        };
        let mut plates: BTreeMap<&str, &str> = BTreeMap::new();
        for (id, d) in &dishes {
            for p in d.selections.keys() {
                if let Some(other) = plates.insert(p, id) {
                    return Err(err(format!(
                        "menu_board['{id}']: plate '{p}' also belongs to dish '{other}'"
                    )));
                }
            }
        }
        for (id, t) in &tickets {
            let Some(owner) = patrons.get(&t.guest_ref) else {
                return Err(err(format!(
                    "service_tickets['{id}']: unknown guest_ref '{}'",
                    t.guest_ref
                )));
            };
            if let Some(c) = t
                .charges
                .iter()
                .find(|c| !owner.saved_instruments.contains_key(&c.instrument_ref))
            {
                return Err(err(format!(
                    "service_tickets['{id}']: charge instrument '{}' is not saved for patron '{}'",
                    c.instrument_ref, t.guest_ref
                )));
            }
        }
        for (id, p) in &patrons {
            if let Some(t) = p.ticket_log.iter().find(|t| !tickets.contains_key(*t)) {
                return Err(err(format!(
                    "patron_registry['{id}']: unknown ticket '{t}'"
                )));
            }
        }
        let order = tau2::document_order(origin);
        let mut db = RestaurantDb::new(dishes, patrons, tickets);
        tau2::keep_document_order(&mut db.menu_board, &order);
        tau2::keep_document_order(&mut db.patron_registry, &order);
        Ok(db)
    }
}
