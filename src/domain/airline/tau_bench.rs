//! tau-bench airline import / export: `flights.json`, `reservations.json`, `users.json`,
//! each a JSON object keyed by id, read into (and written from) the typed tables.
//!
//! Architecture invariant: the only airline code that knows tau-bench's file names.

use super::db::AirlineDb;
use crate::domain::{DomainError, parse_table};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The file stems of a tau-bench airline database directory.
pub const FILES: [&str; 3] = ["flights", "reservations", "users"];

/// Read a tau-bench airline database directory; errors name the file and row.
pub fn import(dir: &Path) -> Result<AirlineDb, DomainError> {
    let flights = parse_table(dir, "flights")?;
    let reservations = parse_table(dir, "reservations")?;
    let users = parse_table(dir, "users")?;
    Ok(AirlineDb::new(flights, reservations, users))
}

/// The state as tau-bench's files: stem -> JSON object keyed by id.
pub fn export(db: &AirlineDb) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for (stem, rows) in [
        ("flights", db.flights.to_json_rows()),
        ("reservations", db.reservations.to_json_rows()),
        ("users", db.users.to_json_rows()),
    ] {
        let map: Map<String, Value> = rows.into_iter().collect();
        out.insert(stem.to_string(), Value::Object(map));
    }
    out
}
