//! The retail database types: users, products (with their variant items) and orders.
//!
//! Field names, nesting and optional fields mirror tau-bench's retail JSON files
//! (`users.json`, `products.json`, `orders.json`) so an imported database exports back to
//! the same JSON. Every map is a `BTreeMap` so serialisation is canonical, and each
//! collection is a copy-on-write [`Table`] so forking costs three `Arc` clones.
//!
//! Architecture invariant: this module holds data and the `Database` glue only; tool
//! behaviour lives in `tools.rs`, grounding in `ground.rs`, file formats in `tau_bench.rs`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Order statuses as tau-bench spells them.
pub mod status {
    pub const PENDING: &str = "pending";
    pub const PENDING_ITEM_MODIFIED: &str = "pending (item modified)";
    pub const PROCESSED: &str = "processed";
    pub const DELIVERED: &str = "delivered";
    pub const CANCELLED: &str = "cancelled";
    pub const EXCHANGE_REQUESTED: &str = "exchange requested";
    pub const RETURN_REQUESTED: &str = "return requested";
    /// tau-emotion-bench's spellings: the request keeps the order `delivered...`.
    pub const DELIVERED_EXCHANGE_REQUESTED: &str = "delivered (exchange requested)";
    pub const DELIVERED_RETURN_REQUESTED: &str = "delivered (return requested)";
}

/// The order lifecycle the tools follow: retail's rulesets. The two reference harnesses
/// differ in three tools only (modify items, return, exchange); everything else is shared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lifecycle {
    /// tau-emotion-bench (the default): modifying items leaves an order `pending` (so it can
    /// be changed again or cancelled); returns and exchanges accept any status that begins
    /// with `delivered` and set `delivered (return requested)` / `delivered (exchange
    /// requested)`.
    #[default]
    TauEmotionBench,
    /// tau-bench: modifying items sets `pending (item modified)`, which ends all changes;
    /// returns and exchanges need exactly `delivered` and set `return requested` /
    /// `exchange requested`.
    TauBench,
}

impl Lifecycle {
    pub const ALL: [Lifecycle; 2] = [Lifecycle::TauEmotionBench, Lifecycle::TauBench];

    pub const fn name(self) -> &'static str {
        match self {
            Lifecycle::TauEmotionBench => "tau-emotion-bench",
            Lifecycle::TauBench => "tau-bench",
        }
    }

    pub fn from_name(name: &str) -> Option<Lifecycle> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The status an order has after its items were modified.
    pub fn after_item_modification(self) -> &'static str {
        match self {
            Lifecycle::TauEmotionBench => status::PENDING,
            Lifecycle::TauBench => status::PENDING_ITEM_MODIFIED,
        }
    }

    /// Whether a return or an exchange may start from `order_status`.
    pub fn accepts_return_or_exchange(self, order_status: &str) -> bool {
        match self {
            Lifecycle::TauEmotionBench => order_status.starts_with(status::DELIVERED),
            Lifecycle::TauBench => order_status == status::DELIVERED,
        }
    }

    pub fn return_requested(self) -> &'static str {
        match self {
            Lifecycle::TauEmotionBench => status::DELIVERED_RETURN_REQUESTED,
            Lifecycle::TauBench => status::RETURN_REQUESTED,
        }
    }

    pub fn exchange_requested(self) -> &'static str {
        match self {
            Lifecycle::TauEmotionBench => status::DELIVERED_EXCHANGE_REQUESTED,
            Lifecycle::TauBench => status::EXCHANGE_REQUESTED,
        }
    }
}

/// The only cancellation reasons the cancel tool accepts.
pub const CANCEL_REASONS: [&str; 2] = ["no longer needed", "ordered by mistake"];

/// The customer's name and address rows, shared with the other tau-bench domain.
pub use crate::domain::kit::tau_bench::{Address, Name};

/// A stored payment method. `source` is `credit_card`, `paypal` or `gift_card`; cards carry
/// `brand` and `last_four`, gift cards a `balance`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaymentMethod {
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub brand: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_four: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub balance: Option<Money>,
    pub id: String,
}

impl PaymentMethod {
    pub fn is_gift_card(&self) -> bool {
        self.source == "gift_card"
    }

    /// The balance in dollars (0 when the method has none).
    pub fn balance_amount(&self) -> f64 {
        self.balance.as_ref().map(Money::value).unwrap_or(0.0)
    }

    pub fn set_balance(&mut self, dollars: f64) {
        self.balance = Some(Money::from_f64(dollars));
    }
}

/// A gift-card balance that keeps the JSON spelling it was read with: tau-bench stores
/// untouched balances as integers (`100`), and a Python update turns them into floats
/// (`100.0`). Keeping the number as read makes import/export round-trip exactly, and every
/// update stores a float, as Python's arithmetic does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Money(pub serde_json::Number);

impl Money {
    pub fn value(&self) -> f64 {
        self.0.as_f64().unwrap_or(0.0)
    }

    /// Non-finite input (impossible from our arithmetic on finite data) becomes 0.0.
    pub fn from_f64(dollars: f64) -> Self {
        Money(serde_json::Number::from_f64(dollars).unwrap_or_else(|| serde_json::Number::from(0)))
    }
}

/// A user profile, keyed by user id (the row itself carries no id, as in tau-bench).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub name: Name,
    pub address: Address,
    pub email: String,
    pub payment_methods: BTreeMap<String, PaymentMethod>,
    pub orders: Vec<String>,
}

/// One purchasable item (a product with concrete options).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub item_id: String,
    pub options: BTreeMap<String, String>,
    pub available: bool,
    pub price: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Product {
    pub name: String,
    pub product_id: String,
    pub variants: BTreeMap<String, Variant>,
}

impl Product {
    /// The available variants other than `item_id`: what that item can be swapped for.
    pub fn alternatives(&self, item_id: &str) -> Vec<&Variant> {
        let other = |v: &&Variant| v.available && v.item_id != item_id;
        self.variants.values().filter(other).collect()
    }
}

/// An item line of an order (a snapshot of the variant at purchase time).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderItem {
    pub name: String,
    pub product_id: String,
    pub item_id: String,
    pub price: f64,
    pub options: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fulfillment {
    pub tracking_id: Vec<String>,
    pub item_ids: Vec<String>,
}

/// One money movement: `transaction_type` is `payment` or `refund`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transaction {
    pub transaction_type: String,
    pub amount: f64,
    pub payment_method_id: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub order_id: String,
    pub user_id: String,
    pub address: Address,
    pub items: Vec<OrderItem>,
    pub fulfillments: Vec<Fulfillment>,
    pub status: String,
    pub payment_history: Vec<Transaction>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cancel_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exchange_items: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exchange_new_items: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exchange_payment_method_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exchange_price_difference: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub return_items: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub return_payment_method_id: Option<String>,
}

impl Order {
    /// Item ids of the order, one per line (duplicates kept).
    pub fn item_ids(&self) -> Vec<&str> {
        self.items.iter().map(|i| i.item_id.as_str()).collect()
    }

    /// The total of the first payment (what the customer paid at checkout).
    pub fn first_payment(&self) -> Option<&Transaction> {
        self.payment_history.first()
    }
}

/// Round money to cents exactly as tau-bench's `round(x, 2)` does after every balance update
/// (half-even on the double's exact value: 0.125 -> 0.12).
pub fn round2(x: f64) -> f64 {
    crate::domain::kit::calc::py_round(x, 2)
}

crate::domain::kit::glue::database_struct! {
    /// The whole retail state, and the lifecycle its tools follow (a rule, not data: it is not
    /// part of the state hash or the exported files).
    RetailDb { users: User, products: Product, orders: Order; lifecycle: Lifecycle }
}
