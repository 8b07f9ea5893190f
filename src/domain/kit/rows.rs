//! Row shapes several domains share, in the references' field names and order (a row's
//! JSON is what its fields say, whatever the domain calls the type): a person's name,
//! postal addresses with and without a second line, the saved payment method of the
//! tau2-style domains, and one entry of a payment history.
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

/// A postal address with a second line, in the tau2-style order (bank's clients and payees,
/// telecom's customers, telehealth's patients): state and zip before the country.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreetAddress {
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub state: String,
    pub zip: String,
    pub country: String,
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

/// One entry of a payment history (airline's reservations, school's registrations, travel's
/// bookings): the method's id and the amount, negative for a refund. `A` is the domain's
/// amount type (cents, whole dollars or a Python float).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payment<A> {
    pub payment_id: String,
    pub amount: A,
}

impl<A> Payment<A> {
    pub fn new(payment_id: impl Into<String>, amount: A) -> Self {
        Payment {
            payment_id: payment_id.into(),
            amount,
        }
    }
}

/// Refund a whole history, the way the references cancel: every entry is mirrored by one
/// with the negated amount, appended in the same order.
pub fn refund_all<A: Copy + std::ops::Neg<Output = A>>(history: &mut Vec<Payment<A>>) {
    let refunds: Vec<Payment<A>> = history
        .iter()
        .map(|p| Payment::new(&p.payment_id, -p.amount))
        .collect();
    history.extend(refunds);
}
