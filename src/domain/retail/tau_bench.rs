//! tau-bench retail format: import a data directory (`users.json`, `products.json`,
//! `orders.json`, each an object keyed by id) and export a state back to the same files.
//!
//! Import parses rows with [`parse_table`], so a bad row is reported with its file and id,
//! then checks that references resolve (an order's user, an order listed by its user)
//! so tools never meet a dangling id they could not explain.
//!
//! Architecture invariant: only this module knows tau-bench's file names.

use super::db::{Order, Product, RetailDb, User};
use crate::domain::{DomainError, parse_table};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The files of a tau-bench retail data directory, in export order.
pub const FILES: [&str; 3] = ["users", "products", "orders"];

pub fn import(dir: &Path) -> Result<RetailDb, DomainError> {
    let users: BTreeMap<String, User> = parse_table(dir, "users")?;
    let products: BTreeMap<String, Product> = parse_table(dir, "products")?;
    let orders: BTreeMap<String, Order> = parse_table(dir, "orders")?;
    let orders_path = dir.join("orders.json").display().to_string();
    for (id, order) in &orders {
        if !users.contains_key(&order.user_id) {
            return Err(DomainError::Import {
                path: orders_path,
                message: format!("row '{id}': unknown user_id '{}'", order.user_id),
            });
        }
        if &order.order_id != id {
            return Err(DomainError::Import {
                path: orders_path,
                message: format!(
                    "row '{id}': order_id '{}' differs from its key",
                    order.order_id
                ),
            });
        }
    }
    let users_path = dir.join("users.json").display().to_string();
    for (id, user) in &users {
        if let Some(missing) = user.orders.iter().find(|o| !orders.contains_key(*o)) {
            return Err(DomainError::Import {
                path: users_path,
                message: format!("row '{id}': unknown order '{missing}'"),
            });
        }
    }
    Ok(RetailDb::new(users, products, orders))
}

/// The state as tau-bench's JSON files: stem -> object keyed by id.
pub fn export(db: &RetailDb) -> BTreeMap<String, Value> {
    let tables = [
        ("users", db.users.to_json_rows()),
        ("products", db.products.to_json_rows()),
        ("orders", db.orders.to_json_rows()),
    ];
    tables
        .into_iter()
        .map(|(stem, rows)| {
            let object: Map<String, Value> = rows.into_iter().collect();
            (stem.to_string(), Value::Object(object))
        })
        .collect()
}
