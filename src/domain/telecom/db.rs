//! The telecom database: customers (with their devices), billing accounts, the service and
//! device catalogues and support tickets, and the reference's file format.
//!
//! Row fields follow the key order of tau-emotion-bench's `data/*.json`, so `json.dumps` of
//! a row (the kit's `dumps`) prints what the reference prints. Keys a tool adds to a row
//! (a ticket's `category`, a billing account's `billing_cycle`) are optional and printed
//! last, where Python appends them. A billing account's `monthly_charges` is an
//! insertion-ordered [`PyDict`] (a new service's charge goes last, as in Python), and the
//! billing row is [`Canonical`] so that order never reaches the state hash. Import reads
//! each file in file order and rejects unknown keys, naming the file and the row.
//!
//! Architecture invariant: data, import/export and the `Database` glue only; tool
//! behaviour is `tools.rs`, hooks are `hooks.rs`.

use crate::domain::kit::python::{Canonical, PyDict, read_ordered_table};
use crate::domain::{DomainError, Table};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The reference's data files, in export order (also our table names).
pub const FILES: [&str; 5] = [
    "customers",
    "billing",
    "services",
    "devices",
    "support_tickets",
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Name {
    pub first_name: String,
    pub last_name: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demographics {
    pub date_of_birth: String,
    pub phone: String,
    pub email: String,
}

pub use crate::domain::kit::rows::StreetAddress as Address;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Account {
    pub account_number: String,
    pub account_type: String,
    pub created_date: String,
    pub credit_score: i64,
    pub payment_method: String,
}

/// A device a customer owns: `name` is a catalogue model, `service` the plan it is on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub device_id: String,
    pub name: String,
    pub service: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BillingPreferences {
    pub paperless: bool,
    pub auto_pay: bool,
    pub billing_cycle: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    pub customer_id: String,
    pub name: Name,
    pub demographics: Demographics,
    pub address: Address,
    pub account: Account,
    pub services: Vec<String>,
    pub devices: Vec<Device>,
    pub billing_preferences: BillingPreferences,
}

/// The last payment of an account.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LastPayment {
    pub amount: f64,
    pub date: String,
    pub method: String,
    pub status: String,
}

/// One entry of an account's payment history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaymentRecord {
    pub date: String,
    pub amount: f64,
    pub status: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Billing {
    pub customer_id: String,
    pub account_number: String,
    pub current_balance: f64,
    pub last_payment: LastPayment,
    pub next_bill_date: String,
    /// Charge lines: one per held service (its price) and extras (taxes, equipment rental,
    /// discounts as negative amounts, late fees).
    pub monthly_charges: PyDict<f64>,
    pub payment_history: Vec<PaymentRecord>,
    pub auto_pay: bool,
    pub paperless: bool,
    /// Absent until `manage_billing` writes it (the reference keeps the cycle only in the
    /// customer's preferences until then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_cycle: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Service {
    pub service_id: String,
    pub name: String,
    pub category: String,
    pub price: f64,
}

/// A catalogue model, keyed by its marketing name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueDevice {
    pub category: String,
    pub manufacturer: String,
    pub model: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ticket {
    pub ticket_id: String,
    pub customer_id: String,
    pub status: String,
    pub priority: String,
    /// Seeded tickets have none; `create_support_ticket` records one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

/// The service category a device category works with (troubleshooting and the policy
/// rule that devices go only onto a fitting plan).
pub fn plan_category(device_category: &str) -> Option<&'static str> {
    match device_category {
        "mobile_phone" => Some("mobile"),
        "networking" => Some("internet"),
        "tv" => Some("tv"),
        "phone" => Some("phone"),
        "security" => Some("security"),
        _ => None,
    }
}

/// The whole telecom state. The catalogues never change, but live in tables too so they
/// are hashed and exported like the rest.
#[derive(Clone)]
pub struct TelecomDb {
    pub customers: Table<Customer>,
    pub billing: Table<Canonical<Billing>>,
    pub services: Table<Service>,
    pub devices: Table<CatalogueDevice>,
    pub tickets: Table<Ticket>,
}

impl TelecomDb {
    pub fn new(
        customers: PyDict<Customer>,
        billing: PyDict<Billing>,
        services: PyDict<Service>,
        devices: PyDict<CatalogueDevice>,
        tickets: PyDict<Ticket>,
    ) -> Self {
        let service_order = services.keys().map(str::to_string).collect();
        fn table<T: Clone + Serialize>(name: &'static str, rows: PyDict<T>) -> Table<T> {
            Table::new(name, rows.into_iter().collect::<BTreeMap<_, _>>())
        }
        let mut db = TelecomDb {
            customers: table("customers", customers),
            billing: table(
                "billing",
                billing
                    .into_iter()
                    .map(|(k, v)| (k, Canonical(v)))
                    .collect(),
            ),
            services: table("services", services),
            devices: table("devices", devices),
            tickets: table("support_tickets", tickets),
        };
        // `get_services` prints the catalogue in file order.
        db.services.set_order(service_order);
        db
    }

    /// The catalogue entry of a device model.
    pub fn model(&self, name: &str) -> Option<&CatalogueDevice> {
        self.devices.get(name)
    }
}

/// Read a reference data directory; references must resolve (every billing account and
/// ticket belongs to a customer, every row's own id equals its key).
pub fn import(dir: &Path) -> Result<TelecomDb, DomainError> {
    let customers: PyDict<Customer> = read_ordered_table(dir, "customers")?;
    let billing: PyDict<Billing> = read_ordered_table(dir, "billing")?;
    let services: PyDict<Service> = read_ordered_table(dir, "services")?;
    let devices: PyDict<CatalogueDevice> = read_ordered_table(dir, "devices")?;
    let tickets: PyDict<Ticket> = read_ordered_table(dir, "support_tickets")?;
    let known = |id: &str| customers.contains_key(id);
    // (file, row, what is wrong) of the first dangling reference or mismatched id.
    let problem = (customers.iter())
        .find(|(k, c)| c.customer_id != *k)
        .map(|(k, _)| ("customers", k, "customer_id differs from its key"))
        .or_else(|| {
            let mut rows = billing.iter();
            let bad = rows.find(|(k, b)| b.customer_id != *k || !known(k));
            bad.map(|(k, _)| ("billing", k, "not the account of a known customer"))
        })
        .or_else(|| {
            let bad = services.iter().find(|(k, s)| s.service_id != *k);
            bad.map(|(k, _)| ("services", k, "service_id differs from its key"))
        })
        .or_else(|| {
            let bad = tickets
                .iter()
                .find(|(k, t)| t.ticket_id != *k || !known(&t.customer_id));
            bad.map(|(k, _)| {
                (
                    "support_tickets",
                    k,
                    "unknown customer_id or ticket_id differs from its key",
                )
            })
        });
    if let Some((stem, row, message)) = problem {
        return Err(DomainError::Import {
            path: dir.join(format!("{stem}.json")).display().to_string(),
            message: format!("row '{row}': {message}"),
        });
    }
    Ok(TelecomDb::new(
        customers, billing, services, devices, tickets,
    ))
}

// ---------- reads shared by grounding, policy and refinement ----------

/// The ticket states, billing cycles and payment methods the policy accepts.
pub const TICKET_STATUSES: [&str; 4] = ["open", "in_progress", "resolved", "closed"];
pub const BILLING_CYCLES: [&str; 3] = ["monthly", "quarterly", "annual"];
pub const PAYMENT_METHODS: [&str; 2] = ["credit_card", "bank_transfer"];

/// Today on the domain's simulation clock.
pub fn today() -> &'static str {
    crate::domain::kit::clock::SimClock::new(super::SIMULATION_CLOCK).today()
}

pub fn category_of<'a>(db: &'a TelecomDb, service_id: &str) -> Option<&'a str> {
    db.services.get(service_id).map(|s| s.category.as_str())
}

/// Whether a customer already holds a plan of `category` (other than `except`).
pub fn holds_category(db: &TelecomDb, c: &Customer, category: &str, except: &str) -> bool {
    let mut held = c.services.iter().filter(|s| *s != except);
    held.any(|s| category_of(db, s) == Some(category))
}

/// Whether a model fits a plan of `category` (phones on mobile plans, ...).
pub fn fits(db: &TelecomDb, model: &str, category: &str) -> bool {
    db.model(model).and_then(|m| plan_category(&m.category)) == Some(category)
}

/// Open and in-progress tickets are still being worked on.
pub fn is_open(status: &str) -> bool {
    matches!(status, "open" | "in_progress")
}

pub fn own_tickets<'a>(
    db: &'a TelecomDb,
    cid: &'a str,
) -> impl Iterator<Item = (&'a str, &'a Ticket)> {
    db.tickets.iter().filter(move |(_, t)| t.customer_id == cid)
}
