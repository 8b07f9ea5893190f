//! Row shapes several domains share, in the references' field names and order (a row's
//! JSON is what its fields say, whatever the domain calls the type): a person's name, a
//! postal address, and the saved payment method of the tau2-style domains.
//!
//! Architecture invariant: rows only; knows no domain.

use super::tau2;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Name {
    pub first_name: String,
    pub last_name: String,
}

/// A street address without a second line (movie's theaters, travel's travelers).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostalAddress {
    pub street: String,
    pub city: String,
    pub state: String,
    pub country: String,
    pub zip: String,
}

/// What a saved payment method shows of itself (`extra_info`): a brand, the last four
/// digits, either absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MethodInfo {
    pub brand: Option<String>,
    pub last_four: Option<String>,
}

/// A saved payment method whose `extra_info` may be absent (movie's, travel's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentMethod {
    pub source: String,
    pub payment_method_id: String,
    pub extra_info: Option<MethodInfo>,
}

impl PaymentMethod {
    /// How the customer names it, and the strings that reveals ([`tau2::saved_method`]).
    pub fn phrase(&self) -> (String, Vec<String>) {
        let info = self.extra_info.as_ref();
        tau2::saved_method(
            &self.source,
            info.and_then(|i| i.brand.as_deref()),
            info.and_then(|i| i.last_four.as_deref()),
        )
    }
}
