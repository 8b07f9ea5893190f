//! What the two tau-bench domains (Airline, Retail) share of their rows: a customer's
//! name and postal address, in the reference's field names and order.
//!
//! Architecture invariant: rows only; knows no domain.

use serde::{Deserialize, Serialize};

pub use super::rows::Name;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub country: String,
    pub state: String,
    pub zip: String,
}
