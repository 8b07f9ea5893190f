//! The machine-checkable part of `policies/telecom.md` that the tools themselves do not
//! enforce, as named rules (`RULES`): one plan per category (switching is remove, then
//! add), devices go only onto a plan of their kind, one open ticket per issue category,
//! known ticket states and billing cycles, no empty updates, payments that are positive,
//! within the balance, by an accepted method and dated today.

use super::db::{
    BILLING_CYCLES, PAYMENT_METHODS, TICKET_STATUSES, TelecomDb, category_of, fits, holds_category,
    is_open, own_tickets, today,
};
use super::tools::PRIORITIES;
use crate::domain::kit::calc;
use crate::domain::kit::policy::{self, Rule};
use crate::domain::kit::text::{arg_list, arg_str, dollars};
use serde_json::Value;

fn one_plan_per_category(db: &TelecomDb, a: &Value) -> Result<(), String> {
    let sid = arg_str(a, "service_id");
    match (
        db.customers.get(arg_str(a, "customer_id")),
        category_of(db, sid),
    ) {
        (Some(c), Some(cat))
            if arg_str(a, "action") == "add" && holds_category(db, c, cat, sid) =>
        {
            Err(format!(
                "{} already has a {cat} plan; to switch, remove it before adding {sid}",
                c.customer_id
            ))
        }
        _ => Ok(()),
    }
}

fn devices_fit_the_plan(db: &TelecomDb, a: &Value) -> Result<(), String> {
    let sid = arg_str(a, "service_id");
    let (Some(c), Some(cat)) = (
        db.customers.get(arg_str(a, "customer_id")),
        category_of(db, sid),
    ) else {
        return Ok(());
    };
    let listed = c
        .devices
        .iter()
        .filter(|d| arg_list(a, "devices_ids").contains(&d.device_id.as_str()));
    match listed.into_iter().find(|d| !fits(db, &d.name, cat)) {
        Some(d) if arg_str(a, "action") == "add" => Err(format!(
            "device {} ({}) cannot go onto the {cat} plan {sid}",
            d.device_id, d.name
        )),
        _ => Ok(()),
    }
}

fn one_open_ticket_per_issue(db: &TelecomDb, a: &Value) -> Result<(), String> {
    let (cid, category) = (arg_str(a, "customer_id"), arg_str(a, "category"));
    let mut open = own_tickets(db, cid).filter(|(_, t)| is_open(&t.status));
    match open.find(|(_, t)| t.category.as_deref() == Some(category)) {
        Some((id, _)) => Err(format!(
            "{cid} already has the open {category} ticket {id}; update it instead"
        )),
        None => Ok(()),
    }
}

fn ticket_values_known(_: &TelecomDb, a: &Value) -> Result<(), String> {
    policy::one_of("a ticket status", arg_str(a, "status"), &TICKET_STATUSES)?;
    policy::one_of("a ticket priority", arg_str(a, "priority"), &PRIORITIES)
}

fn ticket_update_changes_something(db: &TelecomDb, a: &Value) -> Result<(), String> {
    let id = arg_str(a, "ticket_id");
    match db.tickets.get(id) {
        Some(t) if t.status == arg_str(a, "status") && t.priority == arg_str(a, "priority") => {
            Err(format!(
                "{id} already has status {} and priority {}",
                t.status, t.priority
            ))
        }
        _ => Ok(()),
    }
}

fn billing_cycle_offered(_: &TelecomDb, a: &Value) -> Result<(), String> {
    policy::one_of(
        "the billing cycle",
        arg_str(a, "billing_cycle"),
        &BILLING_CYCLES,
    )
}

pub(super) fn billing_update_changes_something(db: &TelecomDb, a: &Value) -> Result<(), String> {
    let cid = arg_str(a, "customer_id");
    let (Some(b), Some(c)) = (db.billing.get(cid), db.customers.get(cid)) else {
        return Ok(());
    };
    let cycle = b
        .billing_cycle
        .as_deref()
        .unwrap_or(&c.billing_preferences.billing_cycle);
    let same = a["paperless"].as_bool() == Some(b.paperless)
        && a["auto_pay"].as_bool() == Some(b.auto_pay)
        && arg_str(a, "billing_cycle") == cycle;
    match same {
        true => Err(format!(
            "the billing settings of {cid} are already as requested"
        )),
        false => Ok(()),
    }
}

fn payment_within_balance(db: &TelecomDb, a: &Value) -> Result<(), String> {
    let Some(b) = db.billing.get(arg_str(a, "customer_id")) else {
        return Ok(());
    };
    // NaN (no amount) fails too.
    let amount = calc::py_round(a["amount"].as_f64().unwrap_or(f64::NAN), 2);
    if amount.is_nan() || amount <= 0.0 || amount > b.current_balance {
        return Err(format!(
            "a payment must be positive and at most the balance of {}, not {amount}",
            dollars(b.current_balance)
        ));
    }
    Ok(())
}

fn payment_method_accepted(_: &TelecomDb, a: &Value) -> Result<(), String> {
    policy::one_of("the payment method", arg_str(a, "method"), &PAYMENT_METHODS)
}

fn payment_dated_today(_: &TelecomDb, a: &Value) -> Result<(), String> {
    policy::one_of("the payment date (today)", arg_str(a, "date"), &[today()])
}

/// The named, machine-checkable rules of `policies/telecom.md`.
pub static RULES: [Rule<TelecomDb>; 10] = crate::policy_rules![
    "manage_service" => one_plan_per_category,
    "manage_service" => devices_fit_the_plan,
    "create_support_ticket" => one_open_ticket_per_issue,
    "modify_support_ticket" => ticket_values_known,
    "modify_support_ticket" => ticket_update_changes_something,
    "manage_billing" => billing_cycle_offered,
    "manage_billing" => billing_update_changes_something,
    "record_payment" => payment_within_balance,
    "record_payment" => payment_method_accepted,
    "record_payment" => payment_dated_today,
];
