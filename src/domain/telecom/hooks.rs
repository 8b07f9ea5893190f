//! Refinement hooks for telecom, built on the domain kit: identity is the email (the phone
//! for one customer in four); sentences come from `requests.toml`; what the agent must tell
//! after a read is computed here where `tools.toml`'s `tells` cannot point at it; the
//! records an agent can look up are the profile, the billing account, the catalogue, the
//! customer's tickets and their device models.
//!
//! Internal ids: none are declared (`tools.toml` has no `internal`). A customer id such as `sage_okafor_4821` is
//! customer-knowable (the policy has the agent read it back after authentication, and the
//! reference's own instructions state it); plan ids are public catalogue ids; ticket ids are
//! printed on the customer's tickets. Device ids ("1", "2", ...) are not customer
//! knowledge, but as one-digit strings they cannot be searched for in an instruction;
//! requests name devices by model instead, and the agent reads the ids from the profile.
//!
//! Architecture invariant: reads the state only; never mutates it or calls tools.

use super::db::{TelecomDb, own_tickets};
use crate::domain::UserFact;
use crate::domain::kit::facts::{self, Identity};
use crate::domain::kit::pyjson::{dumps, py_float_repr};
use crate::domain::kit::python::PyDict;
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_list, arg_str, dollars, join_and, variant, words};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

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

pub fn describe_request(db: &TelecomDb, tool: &str, args: &Value, _output: &str) -> Option<String> {
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
                .services
                .in_order()
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

/// What the reads that `tools.toml` cannot point at tell: the senior discount (the whole
/// output as printed), a troubleshooting guide's first step, a device's maker and model, the
/// cheapest plan and its price.
pub fn required_outputs(_db: &TelecomDb, tool: &str, args: &Value, output: &str) -> Vec<String> {
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
    if tool == "get_device_details" {
        // Every request asks for the maker and the model; a model the customer already
        // named (the device's name) tells them nothing new.
        let mut out: Vec<String> = v["manufacturer"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect();
        if let Some(model) = v["model"].as_str()
            && model != arg_str(args, "device_name")
        {
            out.push(model.to_string());
        }
        return out;
    }
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
    Vec::new()
}

pub fn customer_records(db: &TelecomDb, id: &str) -> Vec<String> {
    let Some(c) = db.customers.get(id) else {
        return Vec::new();
    };
    let mut out = vec![id.to_string(), dumps(c)];
    out.extend(db.billing.get(id).map(|b| dumps(&**b)));
    let catalogue: PyDict<_> = db
        .services
        .in_order()
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
