//! Refinement and verification hooks for restaurant: what a patron knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: sentences in
//! `requests.toml`, variables computed here) and what the agent can look up once they are
//! identified (`customer_records`: their profile, their tickets, the dishes on those
//! tickets and the menu listing, which maps the dish titles they say to dish refs).
//! `tools.toml` declares which argument values they could never know (`internal`: saved
//! instrument refs) and what the agent must tell them after a read (`tells`).
//!
//! Patrons authenticate with their email (the policy's first step; name and postal code
//! are the fallback and a fact too). They name tickets by reference (printed on their
//! receipt) and what is on them, plates by portion, spice and protein (never by plate
//! ref), instruments by issuer and last digits, and amounts in dollars and cents.
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{Plate, RestaurantDb, ServiceMode, ServiceTicket};
use super::policy::ADDRESS_FIELDS;
use super::tools::{dish_listing, swap_difference};
use crate::domain::UserFact;
use crate::domain::kit::facts;
use crate::domain::kit::pyjson::Py;
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_list, arg_str, dollars, join_and};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

fn mode_text(mode: ServiceMode) -> &'static str {
    match mode {
        ServiceMode::DineIn => "dine-in",
        ServiceMode::Takeout => "takeout",
        ServiceMode::Delivery => "delivery",
    }
}

/// "your delivery order k3Jd9Qa (Lamb Tagine and Fish Tacos)".
fn ticket_text(db: &RestaurantDb, t: &ServiceTicket) -> String {
    let mut titles: Vec<String> = Vec::new();
    for e in &t.line_entries {
        let title = db
            .menu_board
            .get(&e.dish_ref)
            .map_or_else(|| e.label.clone(), |d| d.title.clone());
        if !titles.contains(&title) {
            titles.push(title);
        }
    }
    format!(
        "your {} order {} ({})",
        mode_text(t.service_mode),
        t.ticket_ref,
        join_and(&titles)
    )
}

/// "large, hot, lamb" — how a patron tells one plate of a dish from another.
fn plate_text(p: &Plate) -> String {
    let m = &p.modifiers;
    let parts: Vec<String> = [&m.portion, &m.spice_level, &m.protein]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if parts.is_empty() {
        p.plate_ref.clone()
    } else {
        parts.join(", ")
    }
}

fn instrument_text(db: &RestaurantDb, guest_ref: &str, instrument_ref: &str) -> String {
    db.patron_registry
        .get(guest_ref)
        .and_then(|p| p.saved_instruments.get(instrument_ref))
        .map_or_else(
            || "one of your saved payment methods".into(),
            |i| i.phrase().0,
        )
}

pub fn user_facts(db: &RestaurantDb, guest_ref: &str) -> Vec<UserFact> {
    let Some(p) = db.patron_registry.get(guest_ref) else {
        return Vec::new();
    };
    let name = (
        &*p.identity.given,
        &*p.identity.family,
        &*p.location.postal_code,
    );
    let mut out = facts::email_or_name_zip(&p.contact_email, name, &[guest_ref]);
    for i in p.saved_instruments.values() {
        let (phrase, values) = i.phrase();
        out.push(facts::fact(
            "payment",
            format!(
                "You have {} saved on your profile.",
                phrase.replacen("your ", "a ", 1)
            ),
            values,
            &[&i.instrument_ref],
        ));
    }
    out.extend(facts::entity_ids("ticket reference", &p.ticket_log));
    out
}

pub fn describe_request(
    db: &RestaurantDb,
    tool: &str,
    args: &Value,
    _output: &str,
) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let ticket = db.service_tickets.get(arg_str(args, "ticket_ref"));
    let mut table = tool.to_string();
    match tool {
        "cancel_placed_ticket" | "get_ticket_details" => {
            vars.insert("ticket", ticket_text(db, ticket?));
        }
        "modify_placed_ticket_dropoff" => {
            vars.insert("ticket", ticket_text(db, ticket?));
            let parts: Vec<&str> = ADDRESS_FIELDS
                .iter()
                .map(|f| arg_str(args, f))
                .filter(|s| !s.is_empty())
                .collect();
            vars.insert("address", parts.join(", "));
        }
        "modify_placed_ticket_table" => {
            vars.insert("ticket", ticket_text(db, ticket?));
            let seats = args.get("seat_count").and_then(Value::as_i64)?;
            vars.insert("seats", seats.to_string());
        }
        "modify_placed_ticket_items" => {
            let t = ticket?;
            vars.insert("ticket", ticket_text(db, t));
            let old = arg_list(args, "plate_refs");
            let new = arg_list(args, "new_plate_refs");
            let mut swaps = Vec::new();
            for (o, n) in old.iter().zip(&new) {
                let dish = db.dish_of_plate(o)?;
                let (from, to) = (dish.selections.get(*o)?, dish.selections.get(*n)?);
                swaps.push(format!(
                    "the {} ({}) for the {} one",
                    dish.title,
                    plate_text(from),
                    plate_text(to)
                ));
            }
            vars.insert("swaps", join_and(&swaps));
            let diff = swap_difference(db, args);
            vars.insert("amount", dollars(diff.abs()));
            vars.insert(
                "pay",
                instrument_text(db, &t.guest_ref, arg_str(args, "instrument_ref")),
            );
            let case = match diff {
                d if d > 0.0 => "charge",
                d if d < 0.0 => "refund",
                _ => "even",
            };
            table = format!("{tool}.{case}");
        }
        "modify_placed_ticket_instrument" => {
            let t = ticket?;
            vars.insert("ticket", ticket_text(db, t));
            vars.insert(
                "pay",
                instrument_text(db, &t.guest_ref, arg_str(args, "instrument_ref")),
            );
        }
        "add_tip_to_ticket" => {
            let t = ticket?;
            vars.insert("ticket", ticket_text(db, t));
            let tip = args.get("tip_total").and_then(Value::as_f64)?;
            vars.insert("amount", dollars(tip));
            vars.insert(
                "pay",
                instrument_text(db, &t.guest_ref, arg_str(args, "instrument_ref")),
            );
        }
        "get_dish_details" => {
            vars.insert(
                "dish",
                db.menu_board.get(arg_str(args, "dish_ref"))?.title.clone(),
            );
        }
        _ => {}
    }
    // Tools without sentences (authentication and agent-side notes) give `None`.
    REQUESTS.render(&table, args, &vars)
}

pub fn customer_records(db: &RestaurantDb, guest_ref: &str) -> Vec<String> {
    let Some(p) = db.patron_registry.get(guest_ref) else {
        return Vec::new();
    };
    let mut records = vec![guest_ref.to_string(), Py::model(p).to_json_str()];
    let mut dishes: Vec<&str> = Vec::new();
    for t in db.tickets_of(p) {
        records.push(Py::model(t).to_json_str());
        for e in &t.line_entries {
            if !dishes.contains(&e.dish_ref.as_str()) {
                dishes.push(&e.dish_ref);
            }
        }
    }
    for d in dishes.iter().filter_map(|id| db.menu_board.get(id)) {
        records.push(Py::model(d).to_json_str());
    }
    records.push(dish_listing(db));
    records
}
