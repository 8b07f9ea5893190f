//! The machine-checkable rules of `policies/restaurant.md`, as named kit rows per write
//! tool. Grounding drops proposals that break one; graph and task verification reject
//! calls that do; the rule name groups rejections in `tracer stats`.
//!
//! The tools already refuse unknown ids, tickets past 'placed' (or cancelled, for tips),
//! the wrong service mode, unsaved instruments, plates of another dish or not served
//! today, a second payment change and the same instrument again. These rules add what the
//! policy asks and the tools do not check: a cancellation states a reason; a new address
//! is complete and really differs; a table change really changes something and seats at
//! least one guest (at most twenty); an item change swaps at least one plate for a
//! different one; a tip is a positive amount in cents.
//!
//! Architecture invariant: reads the state only.

use super::db::{RestaurantDb, ServiceTicket};
use crate::domain::kit::policy::{Rule, address_complete, refuse_if, rule, same_address};
use crate::domain::kit::text::{arg_list, arg_str};
use serde_json::Value;

const CANCEL: &str = "cancel_placed_ticket";
const DROPOFF: &str = "modify_placed_ticket_dropoff";
const TABLE: &str = "modify_placed_ticket_table";
const ITEMS: &str = "modify_placed_ticket_items";
const TIP: &str = "add_tip_to_ticket";

/// The address fields of a dropoff change, in the tool's argument order.
pub const ADDRESS_FIELDS: [&str; 6] = [
    "line_one",
    "line_two",
    "municipality",
    "province",
    "nation",
    "postal_code",
];

/// Most seats a table change may ask for.
pub const MAX_SEATS: i64 = 20;

/// Checked in order; the first broken rule is reported.
pub static RULES: [Rule<RestaurantDb>; 7] = [
    rule(CANCEL, "reason_given", |_, a| {
        refuse_if(arg_str(a, "reason").trim().is_empty(), || {
            "a cancellation needs the patron's reason".into()
        })
    }),
    rule(DROPOFF, "address_complete", |_, a| {
        address_complete(a, &ADDRESS_FIELDS, &["line_two"])
    }),
    rule(DROPOFF, "address_changes", |db, a| {
        let Some(current) = ticket(db, a).and_then(|t| t.dropoff.as_ref()) else {
            return Ok(());
        };
        let now = [
            &current.line_one,
            &current.line_two,
            &current.municipality,
            &current.province,
            &current.nation,
            &current.postal_code,
        ];
        refuse_if(same_address(a, &ADDRESS_FIELDS, &now), || {
            "the ticket already goes to that address".into()
        })
    }),
    rule(TABLE, "seats_in_range", |_, a| {
        match a.get("seat_count").and_then(Value::as_f64) {
            Some(n) if n >= 1.0 && n <= MAX_SEATS as f64 => Ok(()),
            _ => Err(format!(
                "a table seats 1 to {MAX_SEATS} guests, not {}",
                a.get("seat_count").unwrap_or(&Value::Null)
            )),
        }
    }),
    rule(TABLE, "table_changes", |db, a| {
        let Some(current) = ticket(db, a).and_then(|t| t.table_info.as_ref()) else {
            return Ok(());
        };
        let same = arg_str(a, "zone") == current.zone
            && arg_str(a, "table_no") == current.table_no
            && a.get("seat_count").and_then(Value::as_f64) == Some(current.seat_count as f64);
        refuse_if(same, || "the ticket already has that table".into())
    }),
    rule(ITEMS, "swaps_a_plate", |_, a| {
        let old = arg_list(a, "plate_refs");
        let new = arg_list(a, "new_plate_refs");
        refuse_if(
            old.is_empty() || old.iter().zip(&new).all(|(o, n)| o == n),
            || "an item change must replace at least one plate with a different one".into(),
        )
    }),
    rule(TIP, "tip_positive_cents", |_, a| {
        let tip = a.get("tip_total").and_then(Value::as_f64).unwrap_or(0.0);
        if tip > 0.0 && ((tip * 100.0).round() - tip * 100.0).abs() < 1e-6 {
            Ok(())
        } else {
            Err(format!(
                "a tip is a positive amount in cents, not {}",
                a.get("tip_total").unwrap_or(&Value::Null)
            ))
        }
    }),
];

fn ticket<'a>(db: &'a RestaurantDb, a: &Value) -> Option<&'a ServiceTicket> {
    db.service_tickets.get(arg_str(a, "ticket_ref"))
}
