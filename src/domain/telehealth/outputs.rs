//! The telehealth tools' answer texts: the templates of `outputs.toml` rendered over the
//! row a tool reads as a Python f-string would be ([`render`]), so a key the reference's
//! code would miss fails with the same `Error: 'key'`; and the patient and provider names
//! and the not-found sentence the answers share.
//!
//! Architecture invariant: rendering reads the row it is given and changes nothing.

use super::db::{Provider, TelehealthDb};
use crate::domain::kit::pytext::render;
use crate::domain::plain_error;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static OUTPUTS: LazyLock<BTreeMap<String, String>> =
    LazyLock::new(|| toml::from_str(include_str!("outputs.toml")).unwrap_or_default());

/// The `outputs.toml` template `name` rendered over `row` (a serialisable row, with
/// `extra` fields added at its top level).
pub(super) fn text(name: &str, row: impl Serialize, extra: Value) -> Result<String, String> {
    let mut row = serde_json::to_value(row).map_err(|e| e.to_string())?;
    if let (Value::Object(r), Value::Object(x)) = (&mut row, extra) {
        r.extend(x);
    }
    render(OUTPUTS.get(name).map_or("", String::as_str), &row)
}

pub(super) fn patient_name(db: &TelehealthDb, id: &str) -> String {
    db.patients.get(id).map_or("Unknown Patient".into(), |p| {
        format!("{} {}", p.name.first_name, p.name.last_name)
    })
}

/// "Dr. Last" as the reference's confirmations name a provider.
pub(super) fn dr(provider: Option<&Provider>) -> String {
    format!(
        "Dr. {}",
        provider.map_or("Unknown Provider", |p| &p.name.last_name)
    )
}

pub(super) fn not_found(what: &str, id: &str) -> String {
    plain_error(format!("{what} with ID {id} not found."))
}
