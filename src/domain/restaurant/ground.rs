//! Grounding hooks for restaurant: candidate arguments per tool (`propose_calls`); the refs
//! a call reveals are learnt as `tools.toml` declares (`learns`), and the rules proposals
//! respect are in `policy.rs`.
//!
//! Proposals are about the context's patron: tickets the conversation revealed come first,
//! then the patron's own in a seeded order. Write proposals are shaped to succeed: only
//! placed tickets of the right service mode, swaps to another served plate of the same
//! dish (the price difference settled on the instrument that paid, or another saved one),
//! instrument changes only where exactly one payment exists and another instrument is
//! saved, tips in cents on tickets that are not cancelled.
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{CANCELLED, Patron, RestaurantDb, ServiceMode, ServiceTicket};
use super::generate::random_address;
use crate::domain::GroundingContext;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// Reasons a patron gives for cancelling.
pub const REASONS: [&str; 4] = [
    "no longer needed",
    "ordered by mistake",
    "plans changed",
    "the wait is too long",
];

/// The patron's tickets (`TICKETS.ranked`: known ones first, the rest shuffled).
const TICKETS: propose::Owned<RestaurantDb, Patron, ServiceTicket> = propose::Owned {
    key: "ticket_ref",
    table: |db| &db.service_tickets,
    own: |p| p.ticket_log.clone(),
    mine: |p, t| t.guest_ref == p.guest_ref,
};

/// The instrument a patron would pay a ticket's extras with: the one that paid it, then
/// the others they saved.
fn instruments_for(patron: &Patron, t: &ServiceTicket) -> Vec<String> {
    let mut out: Vec<String> = t
        .payments()
        .iter()
        .map(|c| c.instrument_ref.clone())
        .filter(|i| patron.saved_instruments.contains_key(i))
        .take(1)
        .collect();
    for i in patron.saved_instruments.keys() {
        if !out.contains(i) {
            out.push(i.clone());
        }
    }
    out
}

/// Items cost of a ticket, as its entries are summed.
fn items_total(t: &ServiceTicket) -> f64 {
    t.line_entries.iter().fold(0.0, |s, e| s + e.cost)
}

pub fn propose_calls(
    db: &RestaurantDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let patron = propose::customer(ctx, "guest_ref", &db.patron_registry);
    let owner = |t: &ServiceTicket| db.patron_registry.get(&t.guest_ref);
    let placed = |t: &ServiceTicket| t.is_placed();
    let mut out: Vec<Value> = Vec::new();
    match tool {
        "get_patron_details" => {
            if let Some(p) = patron {
                out.push(json!({"guest_ref": p.guest_ref}));
            }
        }
        "find_patron_ref_by_email" => {
            if let Some(p) = patron {
                out.push(json!({"email": p.contact_email}));
            }
        }
        "find_patron_ref_by_name_zip" => {
            if let Some(p) = patron {
                out.push(
                    json!({"given": p.identity.given, "family": p.identity.family,
                    "postal_code": p.location.postal_code}),
                );
            }
        }
        "get_ticket_details" => {
            for t in TICKETS.ranked(db, ctx, patron, rng, |_| true) {
                out.push(json!({"ticket_ref": t.ticket_ref}));
            }
        }
        "get_dish_details" => {
            let own: Vec<String> = TICKETS
                .ranked(db, ctx, patron, rng, |_| true)
                .iter()
                .flat_map(|t| t.line_entries.iter().map(|e| e.dish_ref.clone()))
                .collect();
            let catalogue: Vec<String> = db.menu_board.keys().map(str::to_string).collect();
            let fits = |id: &str| db.menu_board.contains(id);
            let mut refs = propose::tiered(ctx, "dish_ref", vec![own], fits, rng);
            refs.extend(propose::shuffled(catalogue, rng).into_iter().take(2));
            for d in propose::distinct(propose::values(refs)) {
                out.push(json!({"dish_ref": d}));
            }
        }
        "list_all_dishes" => out.push(json!({})),
        "calculate" => {
            for t in TICKETS
                .ranked(db, ctx, patron, rng, |_| true)
                .into_iter()
                .take(2)
            {
                let terms: Vec<String> =
                    t.line_entries.iter().map(|e| e.cost.to_string()).collect();
                if !terms.is_empty() {
                    out.push(json!({"expression": terms.join(" + ")}));
                }
            }
        }
        "think" => out.push(json!({"thought": format!(
            "Check the state of patron {}'s ticket and the saved instruments before any change.",
            patron.map_or("(not identified)", |p| p.guest_ref.as_str()))})),
        "transfer_to_human_agents" => out.push(json!({"summary": format!(
            "Patron {} asks for help the ticket tools cannot give.",
            patron.map_or("(not identified)", |p| p.guest_ref.as_str()))})),
        "cancel_placed_ticket" => {
            for t in TICKETS.ranked(db, ctx, patron, rng, placed) {
                let reason = REASONS[rng.random_range(0..REASONS.len())];
                out.push(json!({"ticket_ref": t.ticket_ref, "reason": reason}));
            }
        }
        "modify_placed_ticket_dropoff" => {
            let delivery =
                |t: &ServiceTicket| t.is_placed() && t.service_mode == ServiceMode::Delivery;
            for t in TICKETS.ranked(db, ctx, patron, rng, delivery) {
                let mut addresses = Vec::new();
                if let Some(p) = owner(t)
                    && t.dropoff.as_ref() != Some(&p.location)
                {
                    addresses.push(p.location.clone());
                }
                addresses.push(random_address(rng));
                for a in addresses {
                    out.push(json!({"ticket_ref": t.ticket_ref, "line_one": a.line_one,
                        "line_two": a.line_two, "municipality": a.municipality,
                        "province": a.province, "nation": a.nation, "postal_code": a.postal_code}));
                }
            }
        }
        "modify_placed_ticket_table" => {
            let dine_in =
                |t: &ServiceTicket| t.is_placed() && t.service_mode == ServiceMode::DineIn;
            for t in TICKETS.ranked(db, ctx, patron, rng, dine_in) {
                let seats = t.table_info.as_ref().map_or(2, |i| i.seat_count);
                let zone = t
                    .table_info
                    .as_ref()
                    .map_or("Main Hall", |i| i.zone.as_str());
                let bigger = seats + 2;
                let table_no = rng.random_range(1..40).to_string();
                out.push(json!({"ticket_ref": t.ticket_ref, "zone": zone,
                    "table_no": table_no, "seat_count": bigger}));
                out.push(json!({"ticket_ref": t.ticket_ref, "zone": "Terrace",
                    "table_no": rng.random_range(40..60).to_string(), "seat_count": seats}));
            }
        }
        "modify_placed_ticket_items" => {
            for t in TICKETS.ranked(db, ctx, patron, rng, placed) {
                let Some(p) = owner(t) else { continue };
                swap_proposals(db, p, t, rng, &mut out);
                if out.len() >= MAX_PROPOSALS {
                    break;
                }
            }
        }
        "modify_placed_ticket_instrument" => {
            let single = |t: &ServiceTicket| t.is_placed() && t.payments().len() == 1;
            for t in TICKETS.ranked(db, ctx, patron, rng, single) {
                let Some(p) = owner(t) else { continue };
                let paid = &t.payments()[0].instrument_ref;
                for i in p.saved_instruments.keys().filter(|i| *i != paid) {
                    out.push(json!({"ticket_ref": t.ticket_ref, "instrument_ref": i}));
                }
            }
        }
        "add_tip_to_ticket" => {
            let open = |t: &ServiceTicket| t.state != CANCELLED;
            for t in TICKETS.ranked(db, ctx, patron, rng, open) {
                let Some(p) = owner(t) else { continue };
                let instruments = instruments_for(p, t);
                if instruments.is_empty() {
                    continue;
                }
                let share = (items_total(t) * 0.15 * 2.0).round() / 2.0;
                let amounts = [3.0, if share >= 1.0 { share } else { 2.5 }];
                for (k, amount) in amounts.into_iter().enumerate() {
                    let i = &instruments[k.min(instruments.len() - 1)];
                    out.push(json!({"ticket_ref": t.ticket_ref, "tip_total": amount,
                        "instrument_ref": i}));
                }
            }
        }
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}

/// Swaps of one entry (and, where the ticket has two, of two) to another served plate of
/// the same dish, paid or refunded on the instrument that paid, else another saved one.
fn swap_proposals(
    db: &RestaurantDb,
    patron: &Patron,
    t: &ServiceTicket,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let instruments = instruments_for(patron, t);
    let Some(first) = instruments.first() else {
        return;
    };
    let mut swaps: Vec<(String, String)> = Vec::new();
    for e in &t.line_entries {
        let Some(dish) = db.menu_board.get(&e.dish_ref) else {
            continue;
        };
        let others: Vec<&String> = dish
            .selections
            .values()
            .filter(|p| p.served_today && p.plate_ref != e.plate_ref)
            .map(|p| &p.plate_ref)
            .collect();
        if !others.is_empty() {
            let new = others[rng.random_range(0..others.len())];
            swaps.push((e.plate_ref.clone(), new.clone()));
        }
    }
    for (k, (old, new)) in swaps.iter().enumerate() {
        let instrument = if k % 2 == 1 && instruments.len() > 1 {
            &instruments[1]
        } else {
            first
        };
        out.push(json!({"ticket_ref": t.ticket_ref, "plate_refs": [old],
            "new_plate_refs": [new], "instrument_ref": instrument}));
    }
    if swaps.len() >= 2 {
        let (old, new): (Vec<&String>, Vec<&String>) =
            swaps.iter().take(2).map(|(o, n)| (o, n)).unzip();
        out.push(json!({"ticket_ref": t.ticket_ref, "plate_refs": old,
            "new_plate_refs": new, "instrument_ref": first}));
    }
}
