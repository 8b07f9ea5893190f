//! The fifteen restaurant tools: the reference's fourteen (same names, arguments, result
//! shapes and error strings, checks in the same order) plus the kit's `think`, so the split
//! is the paper's 9 read / 6 write. Outputs are tau2's `to_json_str` of what the reference
//! returns: tickets, dishes and patrons as `model_dump()` JSON, ids as bare strings, the menu
//! listing as `json.dumps(..., sort_keys=True)` text. Descriptions are ours.
//!
//! Money follows the reference's float arithmetic exactly ([`swap_difference`] is the price
//! oracle of an item change: the differences summed in order, then Python's `round(x, 2)`),
//! so what grounding and the request sentences quote is what the tool records. Every check
//! runs before any mutation, so a failing call leaves the state untouched.
//!
//! Departures (docs/domains/restaurant.md,
//! `tests/fixtures/reference/restaurant/departures.json`): `list_all_dishes` keeps every
//! dish when titles repeat (the title maps to the list of its dish refs, in menu order)
//! instead of silently keeping the last; `cancel_placed_ticket` refunds what is still paid
//! (payments minus refunds, per instrument) instead of refunding every payment charge
//! again, which after an instrument change or a refunded item change gave back more than
//! the patron paid.
//!
//! Architecture invariant: tools see only the `RestaurantDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{
    CANCELLED, Dish, PatronLocation, PaymentInstrument, RestaurantDb, ServiceMode, ServiceTicket,
    TableInfo, TicketCharge,
};
use crate::domain::kit::calc::py_round;
use crate::domain::kit::glue::read_tool;
use crate::domain::kit::ids::id_by_email;
use crate::domain::kit::pyjson::{Py, name_listing};
use crate::domain::kit::{specs, text::arg_list};
use crate::domain::{Args, Tool, ToolFn};
use serde_json::Value;
use std::collections::BTreeMap;

crate::domain::kit::glue::tool_list!(RestaurantDb);

/// Each tool function by name, in `tools.toml`'s order (it places the kit's tools too);
/// `tools.toml` describes them.
fn build() -> Vec<Tool<RestaurantDb>> {
    let runs: [(&str, ToolFn<RestaurantDb>); 12] = [
        ("get_ticket_details", read_tool!(ticket, "ticket_ref")),
        ("get_dish_details", read_tool!(dish, "dish_ref")),
        ("get_patron_details", read_tool!(patron, "guest_ref")),
        ("list_all_dishes", |db, _| Ok(dish_listing(db))),
        ("find_patron_ref_by_email", |db, a| {
            let rows = db.patron_registry.in_order();
            let rows = rows.map(|p| (&*p.guest_ref, &*p.contact_email));
            id_by_email(rows, a.str("email")?).ok_or_else(|| "Patron not found".to_string())
        }),
        ("find_patron_ref_by_name_zip", |db, a| {
            let given = a.str("given")?.to_lowercase();
            let family = a.str("family")?.to_lowercase();
            let postal = a.str("postal_code")?;
            db.patron_registry
                .in_order()
                .find(|p| {
                    p.identity.given.to_lowercase() == given
                        && p.identity.family.to_lowercase() == family
                        && p.location.postal_code == postal
                })
                .map(|p| p.guest_ref.clone())
                .ok_or_else(|| "Patron not found".to_string())
        }),
        ("cancel_placed_ticket", cancel_placed_ticket),
        ("modify_placed_ticket_dropoff", modify_dropoff),
        ("modify_placed_ticket_table", modify_table),
        ("modify_placed_ticket_items", modify_items),
        ("modify_placed_ticket_instrument", modify_instrument),
        ("add_tip_to_ticket", add_tip),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

crate::domain::kit::glue::row_getters!(RestaurantDb {
    ticket: service_tickets.get_or("Ticket not found") -> ServiceTicket,
    dish: menu_board.get_or("Dish not found") -> Dish,
    patron: patron_registry.get_or("Patron not found") -> super::db::Patron,
});

/// The patron's saved instrument, with the reference's two errors.
pub fn instrument<'a>(
    db: &'a RestaurantDb,
    guest_ref: &str,
    instrument_ref: &str,
) -> Result<&'a PaymentInstrument, String> {
    patron(db, guest_ref)?
        .saved_instruments
        .get(instrument_ref)
        .ok_or_else(|| "Payment instrument not found".to_string())
}

/// The menu as `{title: dish_ref}` sorted by title ([`name_listing`]: a repeated title
/// keeps every dish, in menu order).
pub fn dish_listing(db: &RestaurantDb) -> String {
    name_listing(
        db.menu_board
            .in_order()
            .map(|d| (d.title.as_str(), d.dish_ref.as_str())),
    )
}

fn placed<'a>(db: &'a RestaurantDb, a: &Args) -> Result<&'a ServiceTicket, String> {
    let t = ticket(db, a.str("ticket_ref")?)?;
    if t.is_placed() {
        Ok(t)
    } else {
        Err("Non-placed ticket cannot be modified".into())
    }
}

/// Apply `change` to the stored ticket and print it.
fn update(
    db: &mut RestaurantDb,
    id: &str,
    change: impl FnOnce(&mut ServiceTicket),
) -> Result<String, String> {
    let t = db.service_tickets.get_mut(id).ok_or("Ticket not found")?;
    change(t);
    Ok(Py::model(&*t).to_json_str())
}

/// What a cancellation refunds: one refund per payment charge, in order, to its
/// instrument (as the reference records them), less what was already refunded to that
/// instrument, and never more in all than the ticket's payments minus its refunds.
pub fn cancellation_refunds(t: &ServiceTicket) -> Vec<TicketCharge> {
    let mut credit: BTreeMap<&str, f64> = BTreeMap::new();
    let mut left = 0.0;
    for c in &t.charges {
        match c.kind.as_str() {
            "refund" => {
                *credit.entry(&c.instrument_ref).or_default() += c.total;
                left -= c.total;
            }
            "payment" => left += c.total,
            _ => {}
        }
    }
    let mut out = Vec::new();
    for c in t.payments() {
        let already = credit.entry(&c.instrument_ref).or_default();
        let consumed = already.min(c.total);
        *already -= consumed;
        let mut amount = if consumed > 0.0 {
            py_round(c.total - consumed, 2)
        } else {
            c.total
        };
        // Sums of cents drift in the last bits; only a real excess is capped.
        if amount > left + 1e-9 {
            amount = py_round(left, 2);
        }
        if amount > 0.0 {
            left -= amount;
            out.push(TicketCharge::new("refund", amount, &c.instrument_ref));
        }
    }
    out
}

fn cancel_placed_ticket(db: &mut RestaurantDb, a: &Args) -> Result<String, String> {
    let t = ticket(db, a.str("ticket_ref")?)?;
    a.str("reason")?;
    if !t.is_placed() {
        return Err("Only tickets in 'placed' state can be cancelled".into());
    }
    let refunds = cancellation_refunds(t);
    let id = t.ticket_ref.clone();
    update(db, &id, |t| {
        t.charges.extend(refunds);
        t.state = CANCELLED.to_string();
    })
}

fn modify_dropoff(db: &mut RestaurantDb, a: &Args) -> Result<String, String> {
    let t = placed(db, a)?;
    if t.service_mode != ServiceMode::Delivery {
        return Err("Only delivery tickets have a dropoff address".into());
    }
    let location = PatronLocation {
        line_one: a.str("line_one")?.into(),
        line_two: a.str("line_two")?.into(),
        municipality: a.str("municipality")?.into(),
        nation: a.str("nation")?.into(),
        province: a.str("province")?.into(),
        postal_code: a.str("postal_code")?.into(),
    };
    let id = t.ticket_ref.clone();
    update(db, &id, |t| t.dropoff = Some(location))
}

fn modify_table(db: &mut RestaurantDb, a: &Args) -> Result<String, String> {
    let t = placed(db, a)?;
    if t.service_mode != ServiceMode::DineIn {
        return Err("Only dine-in tickets have table information".into());
    }
    let info = TableInfo {
        zone: a.str("zone")?.into(),
        table_no: a.str("table_no")?.into(),
        seat_count: a.i64("seat_count")?,
    };
    let id = t.ticket_ref.clone();
    update(db, &id, |t| t.table_info = Some(info))
}

/// One replaced line entry: its index, the new plate and the new plate's cost.
pub type Replacement = (usize, String, f64);

/// The line entries an item change replaces (index per entry of `old`, duplicates taking
/// successive occurrences), the checks in the reference's order; and the price oracle: the
/// new-minus-old differences summed in order, rounded to cents as Python rounds.
pub fn swap_plan(
    db: &RestaurantDb,
    t: &ServiceTicket,
    old: &[&str],
    new: &[&str],
) -> Result<(Vec<Replacement>, f64), String> {
    for pr in old {
        let wanted = old.iter().filter(|x| *x == pr).count();
        let held = t.line_entries.iter().filter(|e| e.plate_ref == *pr).count();
        if wanted > held {
            return Err(format!(
                "Plate {pr} not found in the ticket the requested number of times"
            ));
        }
    }
    if old.len() != new.len() {
        return Err("The number of plates to be modified should match".into());
    }
    let mut used: BTreeMap<&str, usize> = BTreeMap::new();
    let mut diff = 0.0;
    let mut plan = Vec::new();
    for (old_pr, new_pr) in old.iter().zip(new) {
        let skip = used.entry(old_pr).or_default();
        let index = t
            .line_entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.plate_ref == *old_pr)
            .nth(*skip)
            .map(|(i, _)| i)
            .ok_or_else(|| format!("Plate {old_pr} not found"))?;
        *skip += 1;
        let old_dish = db
            .dish_of_plate(old_pr)
            .ok_or("Plate not found in any dish")?;
        let new_dish = db
            .dish_of_plate(new_pr)
            .ok_or_else(|| format!("New plate {new_pr} not found"))?;
        if old_dish.dish_ref != new_dish.dish_ref {
            return Err("New plate must be from the same dish as the original".into());
        }
        let plate = &new_dish.selections[*new_pr];
        if !plate.served_today {
            return Err(format!("New plate {new_pr} is not available today"));
        }
        diff += plate.cost - t.line_entries[index].cost;
        plan.push((index, plate.plate_ref.clone(), plate.cost));
    }
    Ok((plan, py_round(diff, 2)))
}

/// The price difference an item change would record (0 when the call would fail).
pub fn swap_difference(db: &RestaurantDb, args: &Value) -> f64 {
    let Some(t) = db
        .service_tickets
        .get(args.get("ticket_ref").and_then(Value::as_str).unwrap_or(""))
    else {
        return 0.0;
    };
    swap_plan(
        db,
        t,
        &arg_list(args, "plate_refs"),
        &arg_list(args, "new_plate_refs"),
    )
    .map_or(0.0, |(_, d)| d)
}

fn modify_items(db: &mut RestaurantDb, a: &Args) -> Result<String, String> {
    let t = placed(db, a)?;
    let instrument_ref = a.str("instrument_ref")?;
    instrument(db, &t.guest_ref, instrument_ref)?;
    let (plan, diff) = swap_plan(
        db,
        t,
        &a.str_list("plate_refs")?,
        &a.str_list("new_plate_refs")?,
    )?;
    let id = t.ticket_ref.clone();
    update(db, &id, |t| {
        if diff != 0.0 {
            let kind = if diff > 0.0 { "payment" } else { "refund" };
            t.charges
                .push(TicketCharge::new(kind, diff.abs(), instrument_ref));
        }
        for (index, plate_ref, cost) in plan {
            let entry = &mut t.line_entries[index];
            entry.plate_ref = plate_ref;
            entry.cost = cost;
        }
    })
}

fn modify_instrument(db: &mut RestaurantDb, a: &Args) -> Result<String, String> {
    let t = placed(db, a)?;
    let instrument_ref = a.str("instrument_ref")?;
    instrument(db, &t.guest_ref, instrument_ref)?;
    let [current] = t.payments()[..] else {
        return Err("There should be exactly one payment charge for a placed ticket".into());
    };
    if current.instrument_ref == instrument_ref {
        return Err("The new instrument should be different from the current one".into());
    }
    let charges = [
        TicketCharge::new("payment", current.total, instrument_ref),
        TicketCharge::new("refund", current.total, &current.instrument_ref),
    ];
    let id = t.ticket_ref.clone();
    update(db, &id, |t| t.charges.extend(charges))
}

fn add_tip(db: &mut RestaurantDb, a: &Args) -> Result<String, String> {
    let t = ticket(db, a.str("ticket_ref")?)?;
    if t.state == CANCELLED {
        return Err("Cannot add tip to a cancelled ticket".into());
    }
    let tip = a.f64("tip_total")?;
    if tip < 0.0 {
        return Err("Tip amount must be non-negative".into());
    }
    let instrument_ref = a.str("instrument_ref")?;
    instrument(db, &t.guest_ref, instrument_ref)?;
    let charge = TicketCharge::new("tip", py_round(tip, 2), instrument_ref);
    let id = t.ticket_ref.clone();
    update(db, &id, |t| t.charges.push(charge))
}
