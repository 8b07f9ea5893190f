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
//! Departures (README, `tests/fixtures/reference/restaurant/departures.json`):
//! `list_all_dishes` keeps every dish when titles repeat (the title maps to the list of its
//! dish refs, in menu order) instead of silently keeping the last; `cancel_placed_ticket`
//! refunds what is still paid (payments minus refunds, per instrument) instead of refunding
//! every payment charge again, which after an instrument change or a refunded item change
//! gave back more than the patron paid.
//!
//! Architecture invariant: tools see only the `RestaurantDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{
    CANCELLED, Dish, PatronLocation, PaymentInstrument, RestaurantDb, ServiceMode, ServiceTicket,
    TableInfo, TicketCharge,
};
use crate::domain::kit::calc::py_round;
use crate::domain::kit::generic;
use crate::domain::kit::pyjson::{Py, dumps};
use crate::domain::kit::schema::{integer, number, object, string, string_list, strings, tool};
use crate::domain::kit::tau2_generic;
use crate::domain::kit::{schema::with_intent, text::arg_list};
use crate::domain::{Args, Intent, Tool, ToolKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// All tools, in the order they are listed to a model.
pub fn all() -> &'static [Tool<RestaurantDb>] {
    static TOOLS: LazyLock<Vec<Tool<RestaurantDb>>> = LazyLock::new(build);
    &TOOLS
}

const TICKET: &str = "Ticket reference, e.g. 'h4Tq9Zp'.";
const INSTRUMENT: &str = "Reference of one of the patron's saved payment instruments.";

fn build() -> Vec<Tool<RestaurantDb>> {
    use ToolKind::{Read, Write};
    vec![
        tau2_generic::calculate(),
        generic::transfer_to_human_agents(),
        tool(
            "get_ticket_details",
            Read,
            "Show a service ticket: owner, service mode, dropoff address or table, line entries (dish, plate, cost, modifiers), state, kitchen batches and charges.",
            strings(&[("ticket_ref", TICKET)]),
            |db, a| Ok(Py::model(ticket(db, a.str("ticket_ref")?)?).to_json_str()),
        ),
        tool(
            "get_dish_details",
            Read,
            "Show a dish of the menu with its plate selections: each plate's modifiers (spice level, portion, protein, preparation), whether it is served today, and its cost.",
            strings(&[("dish_ref", "Dish reference, e.g. 'Rk2mQ8s'.")]),
            |db, a| Ok(Py::model(dish(db, a.str("dish_ref")?)?).to_json_str()),
        ),
        tool(
            "get_patron_details",
            Read,
            "Show a patron's profile: name, address, contact email, saved payment instruments and the references of their tickets.",
            strings(&[("guest_ref", "Patron reference, e.g. 'pW7xK2a'.")]),
            |db, a| Ok(Py::model(patron(db, a.str("guest_ref")?)?).to_json_str()),
        ),
        tool(
            "list_all_dishes",
            Read,
            "List the menu as a JSON object from dish title to dish reference, sorted by title (a title shared by several dishes maps to the list of their references).",
            object(&[], &[]),
            |db, _| Ok(dish_listing(db)),
        ),
        tool(
            "find_patron_ref_by_email",
            Read,
            "Find the patron reference for a contact email (case does not matter).",
            strings(&[("email", "Contact email, e.g. 'ana.lopez@example.net'.")]),
            |db, a| {
                let email = a.str("email")?.to_lowercase();
                db.patrons_in_order()
                    .find(|p| p.contact_email.to_lowercase() == email)
                    .map(|p| p.guest_ref.clone())
                    .ok_or_else(|| "Patron not found".to_string())
            },
        ),
        tool(
            "find_patron_ref_by_name_zip",
            Read,
            "Find the patron reference by given and family name (case does not matter) and the exact postal code of their address; for when the email is unknown or not found.",
            strings(&[
                ("given", "Given (first) name."),
                ("family", "Family (last) name."),
                ("postal_code", "Postal code exactly as on the address."),
            ]),
            |db, a| {
                let given = a.str("given")?.to_lowercase();
                let family = a.str("family")?.to_lowercase();
                let postal = a.str("postal_code")?;
                db.patrons_in_order()
                    .find(|p| {
                        p.identity.given.to_lowercase() == given
                            && p.identity.family.to_lowercase() == family
                            && p.location.postal_code == postal
                    })
                    .map(|p| p.guest_ref.clone())
                    .ok_or_else(|| "Patron not found".to_string())
            },
        ),
        tool(
            "cancel_placed_ticket",
            Write,
            "Cancel a ticket that is still 'placed' (not yet being prepared). What the patron paid is refunded to the instruments it came from. State the details and get an explicit yes first. Returns the cancelled ticket.",
            strings(&[
                ("ticket_ref", TICKET),
                (
                    "reason",
                    "Why the patron cancels, e.g. 'no longer needed' or 'ordered by mistake'.",
                ),
            ]),
            cancel_placed_ticket,
        ),
        tool(
            "modify_placed_ticket_dropoff",
            Write,
            "Change the dropoff address of a placed delivery ticket. State the new address and get an explicit yes first. Returns the updated ticket.",
            strings(&[
                ("ticket_ref", TICKET),
                ("line_one", "First address line."),
                ("line_two", "Second address line (may be empty)."),
                ("municipality", "City or municipality."),
                ("province", "State or province."),
                ("nation", "Country."),
                ("postal_code", "Postal or ZIP code."),
            ]),
            modify_dropoff,
        ),
        tool(
            "modify_placed_ticket_table",
            Write,
            "Change the table of a placed dine-in ticket: zone, table number and seat count. State the change and get an explicit yes first. Returns the updated ticket.",
            object(
                &[
                    ("ticket_ref", string(TICKET)),
                    ("zone", string("Dining area, e.g. 'Terrace'.")),
                    ("table_no", string("Table number, e.g. '14'.")),
                    ("seat_count", integer("Number of seats at the table.")),
                ],
                &["ticket_ref", "zone", "table_no", "seat_count"],
            ),
            modify_table,
        ),
        tool(
            "modify_placed_ticket_items",
            Write,
            "Swap plates of a placed ticket for other plates of the same dish that are served today. plate_refs lists the plates to replace (repeat a plate to replace it twice), new_plate_refs the replacements in the same positions. The total price difference is charged to, or refunded to, the given saved instrument. State the swap and the amount and get an explicit yes first. Returns the updated ticket.",
            object(
                &[
                    ("ticket_ref", string(TICKET)),
                    (
                        "plate_refs",
                        string_list("Plates of the ticket to replace; duplicates allowed."),
                    ),
                    (
                        "new_plate_refs",
                        string_list("Replacement plates, one per entry of plate_refs."),
                    ),
                    ("instrument_ref", string(INSTRUMENT)),
                ],
                &[
                    "ticket_ref",
                    "plate_refs",
                    "new_plate_refs",
                    "instrument_ref",
                ],
            ),
            modify_items,
        ),
        tool(
            "modify_placed_ticket_instrument",
            Write,
            "Move the payment of a placed ticket to another saved instrument: the ticket must carry exactly one payment, and the new instrument must differ from it. The same amount is charged to the new instrument and refunded to the old one. State the change and get an explicit yes first. Returns the updated ticket.",
            strings(&[("ticket_ref", TICKET), ("instrument_ref", INSTRUMENT)]),
            modify_instrument,
        ),
        with_intent(
            tool(
                "add_tip_to_ticket",
                Write,
                "Add a tip to any ticket that is not cancelled, charged to a saved instrument (rounded to cents; never negative). State the amount and instrument and get an explicit yes first. Returns the updated ticket.",
                object(
                    &[
                        ("ticket_ref", string(TICKET)),
                        ("tip_total", number("Tip amount, e.g. 3.5.")),
                        ("instrument_ref", string(INSTRUMENT)),
                    ],
                    &["ticket_ref", "tip_total", "instrument_ref"],
                ),
                add_tip,
            ),
            Intent::Pay,
        ),
        generic::think(),
    ]
}

pub fn ticket<'a>(db: &'a RestaurantDb, id: &str) -> Result<&'a ServiceTicket, String> {
    db.service_tickets
        .get(id)
        .ok_or_else(|| "Ticket not found".to_string())
}

pub fn dish<'a>(db: &'a RestaurantDb, id: &str) -> Result<&'a Dish, String> {
    db.menu_board
        .get(id)
        .ok_or_else(|| "Dish not found".to_string())
}

pub fn patron<'a>(db: &'a RestaurantDb, id: &str) -> Result<&'a super::db::Patron, String> {
    db.patron_registry
        .get(id)
        .ok_or_else(|| "Patron not found".to_string())
}

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

/// The menu as `{title: dish_ref}` sorted by title; a repeated title keeps every dish
/// (a list of refs in menu order) where the reference keeps only the last.
pub fn dish_listing(db: &RestaurantDb) -> String {
    let mut by_title: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for d in db.dishes_in_order() {
        by_title.entry(&d.title).or_default().push(&d.dish_ref);
    }
    let listing: BTreeMap<&str, Value> = by_title
        .into_iter()
        .map(|(title, refs)| {
            let value = match refs.as_slice() {
                [one] => Value::from(*one),
                many => Value::from(many.to_vec()),
            };
            (title, value)
        })
        .collect();
    dumps(&listing)
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
