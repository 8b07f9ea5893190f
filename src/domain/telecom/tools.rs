//! The eighteen telecom tools, API-compatible with tau-emotion-bench's `envs/telecom/tools`:
//! same names, arguments, return shapes and error strings, JSON printed as `json.dumps`
//! prints it. Descriptions are our own.
//!
//! Behaviour worth knowing (and where we depart on purpose, see docs/domains/telecom.md):
//! - Tools check existence only; ownership and the policy's rules are `check_policy`'s.
//!   `modify_support_ticket`, `manage_billing` and `record_payment` store any status,
//!   cycle or method string, as the reference does.
//! - `manage_service add` checks every device id before moving any (the reference moves
//!   devices one by one and can fail half-way); a `remove` whose charge line is missing
//!   fails before changing anything (the reference raises after unlinking the devices).
//! - `troubleshoot_device` answers "Unknown issue" for every device/issue pair without
//!   steps; for a TV with an issue other than `no_service` the reference crashes on a
//!   missing enum member (`Error: NO_SIGNAL`).
//! - New ids: tickets `TICKET{len+1:03d}` (TICKET241 after 240 tickets), devices
//!   `str(len(devices)+1)`, as the reference mints them.
//!
//! Architecture invariant: tools change only the rows they name and never read a clock.

use super::db::{Billing, Customer, Device, LastPayment, PaymentRecord, TelecomDb, Ticket};
use crate::domain::kit::python::{PyDict, py_fixed2, py_float, py_max, py_repr, py_str_repr};
use crate::domain::kit::{calc, ids, pyjson::dumps, specs};
use crate::domain::{Args, Tool, ToolFn};
use serde::Serialize;

/// Ticket categories and priorities `create_support_ticket` accepts.
pub const CATEGORIES: [&str; 8] = [
    "mobile", "internet", "tv", "billing", "account", "device", "security", "phone",
];
pub const PRIORITIES: [&str; 4] = ["low", "medium", "high", "urgent"];
/// The issues `troubleshoot_device` knows.
pub const ISSUES: [&str; 3] = ["no_service", "slow_speeds", "battery_drain"];

crate::domain::kit::glue::tool_list!(TelecomDb);

/// `json.dumps` of a row, or the reference's "not found" error.
fn found<T: Serialize>(
    row: Option<&T>,
    missing: impl FnOnce() -> String,
) -> Result<String, String> {
    row.map(|r| dumps(r)).ok_or_else(missing)
}

/// Each tool function by name; `tools.toml` describes them.
fn build() -> Vec<Tool<TelecomDb>> {
    let runs: [(&str, ToolFn<TelecomDb>); 18] = [
        ("calculate", |_, a| calc::evaluate(a.str("expression")?)),
        ("think", |_, _| Ok(String::new())),
        ("find_customer_by_email", find_customer_by_email),
        ("find_customer_by_phone", find_customer_by_phone),
        ("get_customer_details", |db, a| {
            let id = a.str("customer_id")?;
            found(db.customers.get(id), || format!("Customer not found: {id}"))
        }),
        ("get_service_details", |db, a| {
            let id = a.str("service_id")?;
            found(db.services.get(id), || format!("Service not found: {id}"))
        }),
        ("get_device_details", |db, a| {
            let name = a.str("device_name")?;
            found(db.model(name), || format!("Device not found: {name}"))
        }),
        ("get_billing_details", |db, a| {
            let id = a.str("customer_id")?;
            let b = db.billing.get(id).map(|b| &**b);
            found(b, || {
                format!("No billing information found for customer: {id}")
            })
        }),
        ("manage_service", manage_service),
        ("troubleshoot_device", troubleshoot_device),
        ("create_support_ticket", create_support_ticket),
        ("get_support_ticket_details", |db, a| {
            let id = a.str("ticket_id")?;
            found(db.tickets.get(id), || {
                format!("Support ticket not found: {id}")
            })
        }),
        ("add_device", add_device),
        ("manage_billing", manage_billing),
        ("get_services", |db, _| {
            let all: PyDict<_> = db
                .services
                .in_order()
                .map(|sv| (sv.service_id.clone(), sv))
                .collect();
            Ok(dumps(&all))
        }),
        ("get_senior_discount", |_, a| {
            let price = py_float(a.str("original_price")?);
            let price = price.ok_or("original_price must be a number")?;
            Ok(py_fixed2(py_max(price - 5.0, 0.0)))
        }),
        ("modify_support_ticket", modify_support_ticket),
        ("record_payment", record_payment),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

fn customer<'a>(db: &'a TelecomDb, id: &str) -> Result<&'a Customer, String> {
    db.customers
        .get(id)
        .ok_or_else(|| format!("Customer not found: {id}"))
}

fn find_customer_by_email(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let email = a.str("email")?;
    let rows = db
        .customers
        .iter()
        .map(|(id, c)| (id, &*c.demographics.email));
    ids::id_by_email(rows, email)
        .ok_or_else(|| format!("No customer found with email address: {email}"))
}

fn digits(s: &str) -> String {
    s.chars().filter(char::is_ascii_digit).collect()
}

fn find_customer_by_phone(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let phone = a.str("phone")?;
    let wanted = digits(phone);
    db.customers
        .iter()
        .find(|(_, c)| digits(&c.demographics.phone) == wanted)
        .map(|(id, _)| id.to_string())
        .ok_or_else(|| format!("No customer found with phone number: {phone}"))
}

#[derive(Serialize)]
struct ServiceList<'a> {
    customer_id: &'a str,
    services: Vec<&'a super::db::Service>,
}

fn manage_service(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let cid = a.str("customer_id")?;
    let action = a.str("action")?;
    let held = customer(db, cid)?.services.clone();
    if action == "list" {
        let services = held.iter().filter_map(|id| db.services.get(id)).collect();
        return Ok(dumps(&ServiceList {
            customer_id: cid,
            services,
        }));
    }
    let sid = match a.opt_str("service_id") {
        Some(s) if !s.is_empty() => s,
        _ => return Err(format!("Service ID is required for action: {action}")),
    };
    let service_name = |db: &TelecomDb| {
        db.services
            .get(sid)
            .map_or(sid.to_string(), |sv| sv.name.clone())
    };
    match action {
        "add" => {
            let price = db
                .services
                .get(sid)
                .map(|sv| sv.price)
                .ok_or_else(|| format!("Service not found: {sid}"))?;
            if held.iter().any(|h| h == sid) {
                return Err(format!("Customer {cid} already has service: {sid}"));
            }
            let wanted = match a.value("devices_ids") {
                Some(_) => a.str_list("devices_ids")?,
                None => Vec::new(),
            };
            // Every id is checked before any device moves: no half-done additions.
            let devices = &customer(db, cid)?.devices;
            if let Some(missing) = wanted
                .iter()
                .find(|id| !devices.iter().any(|d| d.device_id == **id))
            {
                return Err(format!(
                    "Device not found: {missing} in devices {}",
                    py_repr(devices)
                ));
            }
            let name = service_name(db);
            let c = db.customers.get_mut(cid).ok_or("customer vanished")?;
            for id in &wanted {
                if let Some(d) = c.devices.iter_mut().find(|d| d.device_id == *id) {
                    d.service = Some(sid.to_string());
                }
            }
            c.services.push(sid.to_string());
            if let Some(b) = db.billing.get_mut(cid) {
                b.monthly_charges.insert(sid, price);
            }
            Ok(format!("Success: Added service '{name}' to customer {cid}"))
        }
        "remove" => {
            if !held.iter().any(|h| h == sid) {
                return Err(format!("Customer {cid} does not have service: {sid}"));
            }
            if db
                .billing
                .get(cid)
                .is_some_and(|b| !b.monthly_charges.contains_key(sid))
            {
                // Python's KeyError text; raised before anything changes here.
                return Err(py_str_repr(sid));
            }
            let name = service_name(db);
            let c = db.customers.get_mut(cid).ok_or("customer vanished")?;
            let mut unlinked: Vec<String> = Vec::new();
            for d in c.devices.iter_mut() {
                if d.service.as_deref() == Some(sid) {
                    d.service = None;
                    unlinked.push(d.name.clone());
                }
            }
            if let Some(i) = c.services.iter().position(|h| h == sid) {
                c.services.remove(i);
            }
            if let Some(b) = db.billing.get_mut(cid) {
                b.monthly_charges.remove(sid);
            }
            Ok(format!(
                "Success: Removed service '{name}' from customer {cid}. Devices {} are now no \
                 longer associated with the service.",
                py_repr(&unlinked)
            ))
        }
        other => Err(format!(
            "Invalid action: {other}. Valid actions are: add, remove, list"
        )),
    }
}

const PHONE_STEPS: [&str; 3] = [
    // no_service, slow_speeds, battery_drain
    "\nTroubleshooting steps: \n1) Restart device \n2) Check signal coverage \n3) Reset network settings \n4) Contact support if issue persists\n",
    "\nTroubleshooting steps: \n1) Restart device \n2) Check data usage and plan limits\n3) Reset network settings \n4) Contact support if issue persists\n",
    "\nTroubleshooting steps: \n1) Restart device \n2) Check brightness settings and reduce if needed\n3) Close background apps\n4) Contact support if issue persists\n",
];
const ROUTER_STEPS: [&str; 2] = [
    "\nTroubleshooting steps: \n1) Restart router by unplugging for 30 seconds\n2) Check all cable connections \n3) Update firmware if available\n4) Contact support if needed\n",
    "\nTroubleshooting steps: \n1) Restart router by unplugging for 30 seconds\n2) Check cable connections \n3) Run speed test \n4) Contact support if needed\n",
];
const TV_STEPS: &str = "\nTroubleshooting steps: \n1) Check correct input/source \n2) Verify cable connections \n3) Restart cable box \n4) Contact support if needed\n";

/// The step text for a device category and an issue, `None` where no steps exist.
pub fn steps_for(category: &str, issue: &str) -> Option<&'static str> {
    let i = ISSUES.iter().position(|x| *x == issue)?;
    match category {
        "mobile_phone" | "phone" => PHONE_STEPS.get(i).copied(),
        "networking" => ROUTER_STEPS.get(i).copied(),
        "tv" if i == 0 => Some(TV_STEPS),
        _ => None,
    }
}

fn troubleshoot_device(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let name = a.str("device_name")?;
    let issue = a.str("issue")?;
    // The reference parses the issue before it looks the device up.
    if !ISSUES.contains(&issue) {
        return Err(format!("{} is not a valid Issue", py_str_repr(issue)));
    }
    let device = db
        .model(name)
        .ok_or_else(|| format!("Device not found: {name}"))?;
    Ok(steps_for(&device.category, issue)
        .unwrap_or("Unknown issue")
        .to_string())
}

fn create_support_ticket(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let cid = a.str("customer_id")?;
    customer(db, cid)?;
    let category = a.str("category")?;
    if !CATEGORIES.contains(&category) {
        return Err(format!(
            "Invalid category: {category}. Valid categories: {}",
            CATEGORIES.join(", ")
        ));
    }
    let priority = a.opt_str("priority").unwrap_or("medium");
    if !PRIORITIES.contains(&priority) {
        return Err(format!(
            "Invalid priority: {priority}. Valid priorities: {}",
            PRIORITIES.join(", ")
        ));
    }
    let id = ids::counter_id("TICKET", 3, db.tickets.len() as u64 + 1);
    // As in the reference, a minted id that already exists is overwritten (impossible on
    // databases whose ticket ids are five-digit, like both the reference's and ours).
    db.tickets.insert(
        id.clone(),
        Ticket {
            ticket_id: id.clone(),
            customer_id: cid.to_string(),
            status: "open".into(),
            priority: priority.to_string(),
            category: Some(category.to_string()),
        },
    );
    Ok(format!(
        "Success: Created support ticket {id} for customer {cid}"
    ))
}

fn modify_support_ticket(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let id = a.str("ticket_id")?;
    let status = a.str("status")?;
    let priority = a.str("priority")?;
    let t = db
        .tickets
        .get_mut(id)
        .ok_or_else(|| format!("Support ticket not found: {id}"))?;
    t.status = status.to_string();
    t.priority = priority.to_string();
    Ok(format!(
        "Success: Modified support ticket {id} with status {status} and priority {priority}"
    ))
}

fn add_device(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let cid = a.str("customer_id")?;
    customer(db, cid)?;
    let name = a.str("device_name")?;
    if db.model(name).is_none() {
        return Err(format!("Invalid device name: {name}"));
    }
    let c = db.customers.get_mut(cid).ok_or("customer vanished")?;
    // The reference's id: the list length plus one (it can repeat an id if the list ever
    // had a gap; kept for compatibility with tasks that name the new device's id).
    let device_id = (c.devices.len() + 1).to_string();
    c.devices.push(Device {
        device_id,
        name: name.to_string(),
        service: None,
    });
    Ok(format!("Success: Added device '{name}' to customer {cid}"))
}

#[derive(Serialize)]
struct BillingUpdate<'a> {
    customer_id: &'a str,
    billing: &'a Billing,
}

fn manage_billing(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let cid = a.str("customer_id")?;
    customer(db, cid)?;
    let (paperless, auto_pay) = (a.bool("paperless")?, a.bool("auto_pay")?);
    let cycle = a.str("billing_cycle")?;
    // The reference indexes the billing table directly: a customer without an account
    // raises KeyError.
    let b = db.billing.get_mut(cid).ok_or_else(|| py_str_repr(cid))?;
    b.paperless = paperless;
    b.auto_pay = auto_pay;
    b.billing_cycle = Some(cycle.to_string());
    Ok(dumps(&BillingUpdate {
        customer_id: cid,
        billing: b,
    }))
}

#[derive(Serialize)]
struct PaymentReceipt<'a> {
    customer_id: &'a str,
    amount: String,
    method: &'a str,
    date: &'a str,
    current_balance: String,
}

fn record_payment(db: &mut TelecomDb, a: &Args) -> Result<String, String> {
    let cid = a.str("customer_id")?;
    let b = db
        .billing
        .get_mut(cid)
        .ok_or_else(|| format!("No billing information found for customer: {cid}"))?;
    let amount = calc::py_round(a.f64("amount")?, 2);
    let (method, date) = (a.str("method")?, a.str("date")?);
    let balance = py_max(calc::py_round(b.current_balance - amount, 2), 0.0);
    b.current_balance = balance;
    b.payment_history.push(PaymentRecord {
        date: date.to_string(),
        amount,
        status: "completed".into(),
    });
    b.last_payment = LastPayment {
        amount,
        date: date.to_string(),
        method: method.to_string(),
        status: "completed".into(),
    };
    Ok(dumps(&PaymentReceipt {
        customer_id: cid,
        amount: py_fixed2(amount),
        method,
        date,
        current_balance: py_fixed2(balance),
    }))
}
