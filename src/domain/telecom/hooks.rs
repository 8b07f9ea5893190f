//! Grounding, policy and refinement hooks for telecom, built on the domain kit.
//!
//! - Proposals (`propose_calls`) are about the context's customer: what the conversation
//!   revealed first (a plan just looked up, a ticket just opened, a device just discussed),
//!   then the customer's own plans, devices and tickets, then the catalogue. Write
//!   proposals already obey the policy rules below.
//! - Policy (`RULES`): the machine-checkable part of `policies/telecom.md` that the tools
//!   themselves do not enforce — one plan per category (switching is remove, then add),
//!   devices go only onto a plan of their kind, one open ticket per issue category, known
//!   ticket states and billing cycles, no empty updates, payments that are positive, within
//!   the balance, by an accepted method and dated today.
//! - Refinement: identity is the email (the phone for one customer in four); sentences come
//!   from `requests.toml`; the records an agent can look up are the profile, the billing
//!   account, the catalogue, the customer's tickets and their device models.
//!
//! Internal ids: none are declared. A customer id such as `sage_okafor_4821` is
//! customer-knowable (the policy has the agent read it back after authentication, and the
//! reference's own instructions state it); plan ids are public catalogue ids; ticket ids are
//! printed on the customer's tickets. Device ids ("1", "2", ...) are not customer
//! knowledge, but as one-digit strings they cannot be searched for in an instruction;
//! requests name devices by model instead, and the agent reads the ids from the profile.
//!
//! Architecture invariant: reads the state only; never mutates it or calls tools.

use super::SIMULATION_CLOCK;
use super::db::{Customer, TelecomDb, Ticket, plan_category};
use super::tools::{CATEGORIES, ISSUES, PRIORITIES, steps_for};
use crate::domain::kit::calc;
use crate::domain::kit::clock::SimClock;
use crate::domain::kit::draw::pick;
use crate::domain::kit::facts::{self, Identity};
use crate::domain::kit::policy::{self, Rule};
use crate::domain::kit::propose::{shuffled, tiered};
use crate::domain::kit::pyjson::{dumps, py_float_repr};
use crate::domain::kit::python::PyDict;
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_list, arg_str, dollars, join_and, variant, words};
use crate::domain::{GroundingContext, PolicyViolation, UserFact};
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

const MAX_PROPOSALS: usize = 8;
pub const TICKET_STATUSES: [&str; 4] = ["open", "in_progress", "resolved", "closed"];
pub const BILLING_CYCLES: [&str; 3] = ["monthly", "quarterly", "annual"];
pub const PAYMENT_METHODS: [&str; 2] = ["credit_card", "bank_transfer"];

fn today() -> &'static str {
    SimClock::new(SIMULATION_CLOCK).today()
}

fn customer_of<'a>(db: &'a TelecomDb, ctx: &GroundingContext) -> Option<&'a Customer> {
    let mut ids = ctx.user_id.iter().chain(ctx.values("customer_id"));
    ids.find_map(|id| db.customers.get(id))
}

fn category_of<'a>(db: &'a TelecomDb, service_id: &str) -> Option<&'a str> {
    db.services.get(service_id).map(|s| s.category.as_str())
}

/// Whether a customer already holds a plan of `category` (other than `except`).
fn holds_category(db: &TelecomDb, c: &Customer, category: &str, except: &str) -> bool {
    let mut held = c.services.iter().filter(|s| *s != except);
    held.any(|s| category_of(db, s) == Some(category))
}

/// Whether a model fits a plan of `category` (phones on mobile plans, ...).
fn fits(db: &TelecomDb, model: &str, category: &str) -> bool {
    db.model(model).and_then(|m| plan_category(&m.category)) == Some(category)
}

/// Open and in-progress tickets are still being worked on.
fn is_open(status: &str) -> bool {
    matches!(status, "open" | "in_progress")
}

fn own_tickets<'a>(db: &'a TelecomDb, cid: &'a str) -> impl Iterator<Item = (&'a str, &'a Ticket)> {
    db.tickets.iter().filter(move |(_, t)| t.customer_id == cid)
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
        .services_in_order()
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
    for s in db.services_in_order() {
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
        for s in value["services"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            ctx.learn("service_id", s);
        }
        for d in value["devices"].as_array().into_iter().flatten() {
            ctx.learn("device_name", d["name"].as_str().unwrap_or_default());
        }
    }
}

// ---------- policy ----------

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

fn billing_update_changes_something(db: &TelecomDb, a: &Value) -> Result<(), String> {
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
static RULES: [Rule<TelecomDb>; 10] = crate::policy_rules![
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

pub fn check_policy(db: &TelecomDb, tool: &str, args: &Value) -> Result<(), PolicyViolation> {
    policy::check_rules(&RULES, db, tool, args)
}

// ---------- refinement ----------

static TEMPLATES: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// The built-in request sentences (for tests).
pub fn templates() -> &'static Templates {
    &TEMPLATES
}

pub fn user_facts(db: &TelecomDb, id: &str) -> Vec<UserFact> {
    let Some(c) = db.customers.get(id) else {
        return Vec::new();
    };
    // Telecom customers authenticate by email or by phone; one in four uses the phone.
    let identity = match variant(id, 4) {
        0 => Identity::Phone(&c.demographics.phone),
        _ => Identity::Email(&c.demographics.email),
    };
    let mut out = vec![
        facts::identity(identity, &[id]),
        facts::name(&c.name.first_name, &c.name.last_name),
    ];
    let plans: Vec<String> = c.services.iter().filter_map(|s| plan_name(db, s)).collect();
    let models: Vec<String> = c.devices.iter().map(|d| d.name.clone()).collect();
    for (text, values) in [("Your plans are the", plans), ("Your devices are:", models)] {
        if !values.is_empty() {
            let text = format!("{text} {}.", join_and(&values));
            out.push(facts::fact("entity", text, values, &[]));
        }
    }
    let tickets: Vec<String> = own_tickets(db, id).map(|(k, _)| k.to_string()).collect();
    out.extend(facts::entity_ids("support ticket", &tickets));
    if let Some(b) = db.billing.get(id).filter(|b| b.current_balance > 0.0) {
        let owed = dollars(b.current_balance);
        let text = format!("Your account shows an open balance of {owed}.");
        out.push(facts::fact(
            "billing",
            text,
            vec![owed[1..].to_string()],
            &[],
        ));
    }
    out
}

fn plan_name(db: &TelecomDb, sid: &str) -> Option<String> {
    db.services.get(sid).map(|s| s.name.clone())
}

/// The problem as a customer describes it; it names the issue in words.
fn problem(issue: &str) -> Option<&'static str> {
    Some(match issue {
        "no_service" => "has no service",
        "slow_speeds" => "is stuck at slow speeds",
        "battery_drain" => "suffers from battery drain",
        _ => return None,
    })
}

/// What a ticket is about, naming its category.
fn topic(category: &str) -> Option<&'static str> {
    Some(match category {
        "mobile" => "a problem with your mobile service",
        "internet" => "an internet outage at home",
        "tv" => "a problem with your TV service",
        "billing" => "a billing problem",
        "account" => "a problem with your account",
        "device" => "a device problem",
        "security" => "a problem with your security monitoring",
        "phone" => "a problem with your phone line",
        _ => return None,
    })
}

/// "iPhone 16 and Pixel 9", for the devices a call names by id.
fn devices_text(db: &TelecomDb, cid: &str, ids: &[&str]) -> Option<String> {
    let devices = &db.customers.get(cid)?.devices;
    let name = |id: &&str| {
        devices
            .iter()
            .find(|d| d.device_id == *id)
            .map(|d| d.name.clone())
    };
    Some(join_and(&ids.iter().map(name).collect::<Option<Vec<_>>>()?))
}

pub fn describe_request(db: &TelecomDb, tool: &str, args: &Value) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let cid = arg_str(args, "customer_id");
    let key = match tool {
        "get_service_details" => {
            vars.insert("service", plan_name(db, arg_str(args, "service_id"))?);
            tool
        }
        "get_senior_discount" => {
            let price = arg_str(args, "original_price");
            vars.insert("price", format!("${price}"));
            // Name the plan only when its price identifies it.
            let mut same_price = db
                .services_in_order()
                .filter(|s| format!("{:.2}", s.price) == price);
            match (same_price.next(), same_price.next()) {
                (Some(s), None) => {
                    vars.insert("service", s.name.clone());
                    tool
                }
                _ => "get_senior_discount_price",
            }
        }
        "troubleshoot_device" => {
            vars.insert("problem", problem(arg_str(args, "issue"))?.to_string());
            tool
        }
        "manage_service" => match arg_str(args, "action") {
            "list" => "manage_service_list",
            "remove" => {
                vars.insert("service", plan_name(db, arg_str(args, "service_id"))?);
                "manage_service_remove"
            }
            "add" => {
                vars.insert("service", plan_name(db, arg_str(args, "service_id"))?);
                let ids = arg_list(args, "devices_ids");
                if ids.is_empty() {
                    "manage_service_add"
                } else {
                    vars.insert("devices", devices_text(db, cid, &ids)?);
                    "manage_service_add_devices"
                }
            }
            _ => return None,
        },
        "create_support_ticket" => {
            vars.insert("topic", topic(arg_str(args, "category"))?.to_string());
            if args.get("priority").is_some_and(Value::is_string) {
                tool
            } else {
                "create_support_ticket_default"
            }
        }
        "modify_support_ticket" => {
            vars.insert("status_words", words(arg_str(args, "status")));
            tool
        }
        "manage_billing" => {
            let on = |key: &str| usize::from(args[key].as_bool().unwrap_or(false));
            let paper = ["paper bills by mail", "paperless bills"][on("paperless")];
            let auto = [
                "automatic payments turned off",
                "automatic payments turned on",
            ];
            vars.insert("paperless_text", paper.into());
            vars.insert("auto_pay_text", auto[on("auto_pay")].into());
            tool
        }
        "record_payment" => {
            vars.insert("amount", dollars(args["amount"].as_f64()?));
            vars.insert("method_words", words(arg_str(args, "method")));
            tool
        }
        "get_device_details"
        | "get_billing_details"
        | "get_services"
        | "get_support_ticket_details"
        | "add_device" => tool,
        // Lookups and notes the agent makes on its own.
        _ => return None,
    };
    TEMPLATES.render(key, args, &vars)
}

pub fn required_outputs(tool: &str, output: &str) -> Vec<String> {
    if tool == "get_senior_discount" {
        return vec![output.to_string()];
    }
    if tool == "troubleshoot_device" {
        // The first step, as the customer will hear it.
        return output
            .lines()
            .find_map(|l| l.strip_prefix("1) "))
            .map(|s| vec![s.trim().to_string()])
            .unwrap_or_default();
    }
    let Ok(v) = serde_json::from_str::<Value>(output) else {
        return Vec::new();
    };
    if tool == "get_services" {
        // The cheapest plan and its price (a tie would go to the lower service id).
        let cheapest = v.as_object().and_then(|m| {
            m.values()
                .filter_map(|s| Some((s["price"].as_f64()?, s["name"].as_str()?)))
                .fold(None, |best: Option<(f64, &str)>, x| match best {
                    Some(b) if b.0 <= x.0 => Some(b),
                    _ => Some(x),
                })
        });
        return cheapest
            .map(|(price, name)| vec![name.to_string(), py_float_repr(price)])
            .unwrap_or_default();
    }
    let field = match tool {
        "get_billing_details" => &v["current_balance"],
        "get_service_details" => &v["price"],
        "get_support_ticket_details" => &v["status"],
        "get_device_details" => &v["manufacturer"],
        _ => return Vec::new(),
    };
    match field {
        Value::Number(n) => n.as_f64().map(py_float_repr).into_iter().collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    }
}

pub fn customer_records(db: &TelecomDb, id: &str) -> Vec<String> {
    let Some(c) = db.customers.get(id) else {
        return Vec::new();
    };
    let mut out = vec![id.to_string(), dumps(c)];
    out.extend(db.billing.get(id).map(|b| dumps(&**b)));
    let catalogue: PyDict<_> = db
        .services_in_order()
        .map(|s| (s.service_id.clone(), s))
        .collect();
    out.push(dumps(&catalogue));
    out.extend(own_tickets(db, id).map(|(_, t)| dumps(t)));
    let mut models: Vec<&str> = c.devices.iter().map(|d| d.name.as_str()).collect();
    models.sort_unstable();
    models.dedup();
    out.extend(models.into_iter().filter_map(|m| db.model(m)).map(dumps));
    out
}
