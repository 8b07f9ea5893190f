//! Grounding for telecom: proposals (`propose_calls`) are about the context's customer —
//! what the conversation revealed first (a plan just looked up, a ticket just opened, a
//! device just discussed), then the customer's own plans, devices and tickets, then the
//! catalogue; write proposals already obey the policy rules (`policy.rs`). `observe` learns
//! the ids an output reveals.
//!
//! Architecture invariant: reads the state only; never mutates it or calls tools.

use super::db::{
    BILLING_CYCLES, Customer, PAYMENT_METHODS, TelecomDb, fits, holds_category, is_open,
    own_tickets, today,
};
use super::policy::billing_update_changes_something;
use super::tools::{CATEGORIES, ISSUES, PRIORITIES, steps_for};
use crate::domain::GroundingContext;
use crate::domain::kit::calc;
use crate::domain::kit::draw::pick;
use crate::domain::kit::propose::{MAX_PROPOSALS, shuffled, tiered};
use crate::domain::kit::pyjson::py_float_repr;
use crate::domain::kit::text::arg_str;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

fn customer_of<'a>(db: &'a TelecomDb, ctx: &GroundingContext) -> Option<&'a Customer> {
    let mut ids = ctx.user_id.iter().chain(ctx.values("customer_id"));
    ids.find_map(|id| db.customers.get(id))
}

pub fn propose_calls(
    db: &TelecomDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let c = customer_of(db, ctx);
    let cid = c.map_or("", |c| c.customer_id.as_str());
    // Candidates: what the conversation named first, then the customer's own, then the rest.
    let catalogue: Vec<String> = db
        .services
        .in_order()
        .map(|s| s.service_id.clone())
        .collect();
    let own_plans = c.map(|c| c.services.clone()).unwrap_or_default();
    let plans = |rng: &mut _| {
        let tiers = vec![own_plans.clone(), catalogue.clone()];
        tiered(ctx, "service_id", tiers, |s| db.services.contains(s), rng)
    };
    let own_models: Vec<String> = c.map_or(Vec::new(), |c| {
        c.devices.iter().map(|d| d.name.clone()).collect()
    });
    let models: Vec<String> = db.devices.keys().map(str::to_string).collect();
    let tickets = |rng: &mut _| {
        let own = own_tickets(db, cid).map(|(id, _)| id.to_string()).collect();
        let mine = |id: &str| {
            db.tickets
                .get(id)
                .is_some_and(|t| c.is_none() || t.customer_id == cid)
        };
        tiered(ctx, "ticket_id", vec![own], mine, rng)
    };
    let mut out: Vec<Value> = Vec::new();
    match (tool, c) {
        ("find_customer_by_email", Some(c)) => out.push(json!({"email": c.demographics.email})),
        ("find_customer_by_phone", Some(c)) => out.push(json!({"phone": c.demographics.phone})),
        ("get_customer_details" | "get_billing_details", Some(_)) => {
            out.push(json!({"customer_id": cid}));
        }
        ("get_services", _) => out.push(json!({})),
        ("get_service_details", _) => {
            out.extend(plans(rng).into_iter().map(|s| json!({"service_id": s})));
        }
        ("get_senior_discount", _) => {
            let mut prices: Vec<String> = Vec::new();
            for p in plans(rng).iter().filter_map(|s| db.services.get(s)) {
                let p = format!("{:.2}", p.price);
                if !prices.contains(&p) {
                    prices.push(p);
                }
            }
            out.extend(prices.into_iter().map(|p| json!({"original_price": p})));
        }
        ("get_device_details", _) => {
            let names = tiered(ctx, "device_name", vec![own_models, models], |_| true, rng);
            out.extend(names.into_iter().map(|n| json!({"device_name": n})));
        }
        ("troubleshoot_device", _) => {
            // The customer's own devices (any model when no customer is known), with issues
            // that have steps for the model's kind.
            let tiers = if c.is_some() {
                vec![own_models]
            } else {
                vec![models]
            };
            for n in tiered(ctx, "device_name", tiers, |n| db.model(n).is_some(), rng) {
                let kind = db.model(&n).map_or("", |m| m.category.as_str());
                let issues = ISSUES.iter().filter(|i| steps_for(kind, i).is_some());
                for issue in shuffled(issues.collect(), rng).into_iter().take(2) {
                    out.push(json!({"device_name": n, "issue": issue}));
                }
            }
        }
        ("add_device", Some(_)) => {
            for n in tiered(ctx, "device_name", vec![models], |_| true, rng) {
                out.push(json!({"customer_id": cid, "device_name": n}));
            }
        }
        ("manage_service", Some(c)) => propose_service_changes(db, ctx, c, rng, &mut out),
        ("create_support_ticket", Some(_)) => {
            let taken: Vec<&str> = own_tickets(db, cid)
                .filter(|(_, t)| is_open(&t.status))
                .filter_map(|(_, t)| t.category.as_deref())
                .collect();
            let mut categories = shuffled(CATEGORIES.to_vec(), rng);
            // After a device was discussed, a device ticket is the natural one.
            if !ctx.values("device_name").is_empty() {
                categories.sort_by_key(|x| *x != "device");
            }
            for category in categories.into_iter().filter(|x| !taken.contains(x)) {
                let mut call = json!({"customer_id": cid, "category": category});
                if rng.random_bool(0.75) {
                    call["priority"] = json!(*pick(rng, &PRIORITIES));
                }
                out.push(call);
            }
        }
        ("get_support_ticket_details", _) => {
            out.extend(tickets(rng).into_iter().map(|t| json!({"ticket_id": t})));
        }
        ("modify_support_ticket", _) => {
            for id in tickets(rng) {
                let next: &[&str] = match db.tickets.get(&id).map(|t| t.status.as_str()) {
                    Some("open") => &["in_progress", "resolved", "closed"],
                    Some("in_progress") => &["resolved", "closed", "open"],
                    Some("resolved") => &["closed", "open"],
                    _ => &["open"],
                };
                for _ in 0..2 {
                    let (status, priority) = (*pick(rng, next), *pick(rng, &PRIORITIES));
                    let call = json!({"ticket_id": id, "status": status, "priority": priority});
                    if !out.contains(&call) {
                        out.push(call);
                    }
                }
            }
        }
        ("manage_billing", Some(_)) => {
            for _ in 0..6 {
                let (paperless, auto_pay) = (rng.random_bool(0.6), rng.random_bool(0.5));
                let call = json!({"customer_id": cid, "paperless": paperless,
                    "auto_pay": auto_pay, "billing_cycle": *pick(rng, &BILLING_CYCLES)});
                if billing_update_changes_something(db, &call).is_ok() && !out.contains(&call) {
                    out.push(call);
                }
            }
        }
        ("record_payment", Some(_)) => {
            let balance = db.billing.get(cid).map_or(0.0, |b| b.current_balance);
            if balance > 0.0 {
                let method = *pick(rng, &PAYMENT_METHODS);
                let half = calc::py_round(balance / 2.0, 2);
                for (amount, method) in
                    [(balance, method), (half, method), (balance, "credit_card")]
                {
                    out.push(json!({"customer_id": cid, "amount": amount,
                        "method": method, "date": today()}));
                }
            }
        }
        ("calculate", _) => {
            if let Some(b) = db.billing.get(cid) {
                let terms: Vec<String> = b
                    .monthly_charges
                    .values()
                    .map(|v| py_float_repr(*v))
                    .collect();
                out.push(json!({"expression": terms.join(" + ")}));
            }
            out.push(json!({"expression": "45.00 - 5"}));
        }
        ("think", _) => out.push(json!({"thought": format!(
            "Customer {cid}: confirm the request and list the change before making it.")})),
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}

/// manage_service proposals: plans the conversation named first (removed if held, added
/// if the category is free), then the other removals and additions and a listing in a
/// seeded order. An addition proposes moving the customer's spare devices of its kind.
fn propose_service_changes(
    db: &TelecomDb,
    ctx: &GroundingContext,
    c: &Customer,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let id = c.customer_id.as_str();
    let mut first = Vec::new();
    let mut rest = vec![json!({"customer_id": id, "action": "list"})];
    for s in db.services.in_order() {
        let (sid, category) = (s.service_id.as_str(), s.category.as_str());
        let mut calls = Vec::new();
        if c.services.iter().any(|h| h == sid) {
            calls.push(json!({"customer_id": id, "action": "remove", "service_id": sid}));
        } else if !holds_category(db, c, category, sid) {
            let spare: Vec<&str> = c
                .devices
                .iter()
                .filter(|d| d.service.is_none() && fits(db, &d.name, category))
                .map(|d| d.device_id.as_str())
                .collect();
            let add = json!({"customer_id": id, "action": "add", "service_id": sid});
            if !spare.is_empty() {
                let mut with = add.clone();
                with["devices_ids"] = json!(spare);
                calls.push(with);
            }
            calls.push(add);
        }
        let named = ctx.values("service_id").iter().any(|k| k == sid);
        if named { &mut first } else { &mut rest }.extend(calls);
    }
    rest.shuffle(rng);
    out.extend(first);
    out.extend(rest);
}

pub fn observe(db: &TelecomDb, tool: &str, args: &Value, output: &str, ctx: &mut GroundingContext) {
    match tool {
        "find_customer_by_email" | "find_customer_by_phone" if db.customers.contains(output) => {
            return ctx.learn("customer_id", output);
        }
        // "Success: Created support ticket TICKET241 for customer ..."
        "create_support_ticket" => {
            if let Some(id) = output.split_whitespace().nth(4) {
                ctx.learn("ticket_id", id);
            }
            return;
        }
        // The whole catalogue is not something the customer picked.
        "get_services" => return,
        "get_device_details" | "troubleshoot_device" | "add_device" => {
            ctx.learn("device_name", arg_str(args, "device_name"));
        }
        "manage_service" if !arg_str(args, "service_id").is_empty() => {
            ctx.learn("service_id", arg_str(args, "service_id"));
        }
        _ => {}
    }
    let Ok(value) = serde_json::from_str::<Value>(output) else {
        return;
    };
    ctx.learn_from_json(&value, &[]);
    if tool == "get_customer_details" {
        ctx.learn_listed(&value, "services", "service_id");
        for d in value["devices"].as_array().into_iter().flatten() {
            ctx.learn("device_name", d["name"].as_str().unwrap_or_default());
        }
    }
}
