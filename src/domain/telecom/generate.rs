//! The deterministic synthetic telecom database at the paper's scale: 500 customers with a
//! billing account each, a 15-plan service catalogue (mobile 5, internet 5, TV 3, phone 1,
//! security 1), a 19-model device catalogue (phones 9, networking 4, TV 4, desk phone 1,
//! security 1) and 240 support tickets.
//!
//! Shapes and proportions follow the reference data (tau-emotion-bench's telecom); every
//! value is our own, and the catalogues, plan weights and vocabulary live in
//! `vocabulary.toml` beside this file. Customers: one account in six is a business (fleet
//! mobile plan, fast fiber, often a business phone system); everyone holds a mobile and an
//! internet plan, at most one plan per category, two to four in all; phones per mobile plan
//! follow its lines, one router per internet plan, TV boxes and sets for TV, an alarm hub for
//! security; a few devices sit on no plan (spares) and a few plans have no device. Billing: one
//! charge line per plan at its catalogue price, equipment rental, a discount line for the
//! senior plan, taxes and fees, and for about one account in nine a missed payment: a late fee
//! and an open balance. Tickets: about a third of the customers have one to three (most
//! customers who owe money among them), seeded without a category (as in the reference),
//! mostly closed.
//!
//! Architecture invariant: pure — same seed, same database; no clock read, no I/O.

use super::SIMULATION_CLOCK;
use super::db::{
    Account, Address, Billing, BillingPreferences, CatalogueDevice, Customer, Demographics, Device,
    LastPayment, Name, PaymentRecord, Service, TelecomDb, Ticket,
};
use crate::domain::kit::calc::py_round;
use crate::domain::kit::clock::{civil_from_days, days_from_civil, format_date, parse_date};
use crate::domain::kit::draw::{pick, weighted_index};
use crate::domain::kit::ids::counter_id;
use crate::domain::kit::python::PyDict;
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::LazyLock;

pub const CUSTOMERS: usize = 500;
pub const TICKETS: usize = 240;

/// `vocabulary.toml`: the catalogues, who holds what, and the vocabulary.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Catalogue {
    pub categories: Vec<PlanCategory>,
    pub services: Vec<Plan>,
    pub devices: Vec<Model>,
    payment_methods: Vec<(String, u32)>,
    first_names: Vec<String>,
    last_names: Vec<String>,
    streets: Vec<String>,
    cities: Vec<(String, String, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanCategory {
    pub name: String,
    residential: f64,
    business: f64,
    device: String,
    devices: (u32, u32),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    pub id: String,
    pub name: String,
    pub category: String,
    pub price: f64,
    residential: u32,
    business: u32,
    lines: Option<(u32, u32)>,
    #[serde(default)]
    senior: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub name: String,
    pub category: String,
    manufacturer: String,
    model: String,
    #[serde(default)]
    residential: bool,
    #[serde(default)]
    business: bool,
}

/// The built-in catalogue; a broken file is a bug the generator tests catch (an empty
/// catalogue generates no plans), so it never panics at run time.
pub fn catalogue() -> &'static Catalogue {
    static CATALOGUE: LazyLock<Catalogue> =
        LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());
    &CATALOGUE
}

/// The same day of the month `months` later (days are drawn from 1-28, so always valid).
fn add_months(day: i64, months: i64) -> i64 {
    let (y, m, d) = civil_from_days(day);
    let total = y * 12 + (m - 1) + months;
    days_from_civil(total.div_euclid(12), total.rem_euclid(12) + 1, d)
}

/// The plans one account holds (at most one per category, in category order) and the
/// devices on them: (model, plan or none for a spare).
fn plans_and_devices(
    rng: &mut ChaCha8Rng,
    business: bool,
    senior: bool,
) -> (
    Vec<&'static Plan>,
    Vec<(&'static str, Option<&'static str>)>,
) {
    let cat = catalogue();
    let fits = |m: &Model| {
        if business {
            !m.residential
        } else {
            !m.business
        }
    };
    let mut plans = Vec::new();
    let mut devices = Vec::new();
    for c in &cat.categories {
        if !rng.random_bool(if business { c.business } else { c.residential }) {
            continue;
        }
        let offered: Vec<&Plan> = cat
            .services
            .iter()
            .filter(|p| p.category == c.name && (senior || !p.senior))
            .collect();
        let weights: Vec<u32> = offered
            .iter()
            .map(|p| if business { p.business } else { p.residential })
            .collect();
        let Some(plan) = weighted_index(rng, &weights).map(|i| offered[i]) else {
            continue;
        };
        plans.push(plan);
        // A few plans other than mobile are held without any device on them.
        if plan.lines.is_none() && rng.random_bool(0.04) {
            continue;
        }
        let (lo, hi) = plan.lines.unwrap_or(c.devices);
        let pool: Vec<&str> = cat
            .devices
            .iter()
            .filter(|m| m.category == c.device && fits(m))
            .map(|m| m.name.as_str())
            .collect();
        for _ in 0..rng.random_range(lo..=hi) {
            devices.push((*pick(rng, &pool), Some(plan.id.as_str())));
        }
    }
    // One customer in twelve keeps a spare phone on no plan.
    if rng.random_bool(0.08) {
        let phones: Vec<&str> = cat
            .devices
            .iter()
            .filter(|m| m.category == "mobile_phone")
            .map(|m| m.name.as_str())
            .collect();
        devices.push((*pick(rng, &phones), None));
    }
    (plans, devices)
}

/// A string `make` draws that no earlier call returned (ids, emails, phones).
fn unique(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    make: impl Fn(&mut ChaCha8Rng) -> String,
) -> String {
    loop {
        let s = make(rng);
        if used.insert(s.clone()) {
            return s;
        }
    }
}

pub fn generate(seed: u64) -> TelecomDb {
    let cat = catalogue();
    let mut rng = derive_rng(seed, &["db", "telecom"]);
    let today = parse_date(SIMULATION_CLOCK).unwrap_or_default();
    let services: PyDict<Service> = cat
        .services
        .iter()
        .map(|p| {
            let (id, name, category) = (p.id.clone(), p.name.clone(), p.category.clone());
            let row = Service {
                service_id: id.clone(),
                name,
                category,
                price: p.price,
            };
            (id, row)
        })
        .collect();
    let devices: PyDict<CatalogueDevice> = cat
        .devices
        .iter()
        .map(|m| {
            let row = CatalogueDevice {
                category: m.category.clone(),
                manufacturer: m.manufacturer.clone(),
                model: m.model.clone(),
            };
            (m.name.clone(), row)
        })
        .collect();
    let methods: Vec<u32> = cat.payment_methods.iter().map(|m| m.1).collect();
    let mut used = BTreeSet::new();
    let mut customers = PyDict::new();
    let mut billing = PyDict::new();
    for i in 0..CUSTOMERS {
        let first = pick(&mut rng, &cat.first_names).clone();
        let last = pick(&mut rng, &cat.last_names).clone();
        let (f, l) = (first.to_lowercase(), last.to_lowercase());
        let id = unique(&mut rng, &mut used, |r| {
            format!("{f}_{l}_{:04}", r.random_range(0..10_000))
        });
        let email = unique(&mut rng, &mut used, |r| {
            format!("{f}.{l}{:04}@example.com", r.random_range(0..10_000))
        });
        let phone = unique(&mut rng, &mut used, |r| {
            let (exchange, line) = (r.random_range(200..1000), r.random_range(0..10_000));
            format!("(555) {exchange}-{line:04}")
        });
        let birth = rng.random_range(days_from_civil(1938, 1, 1)..=days_from_civil(2004, 12, 31));
        let business = rng.random_bool(0.16);
        let (plans, owned) = plans_and_devices(&mut rng, business, (today - birth) / 365 >= 65);
        let (city, state, zip3) = pick(&mut rng, &cat.cities).clone();
        let address2 = match rng.random_range(0..100) {
            0..=24 => format!("Apt {}", rng.random_range(1..=40)),
            25..=32 => format!("Suite {}", rng.random_range(100..=450)),
            _ => String::new(),
        };
        let method = weighted_index(&mut rng, &methods)
            .map_or("invoice".to_string(), |k| cat.payment_methods[k].0.clone());
        let street = format!(
            "{} {}",
            rng.random_range(10..=9899),
            pick(&mut rng, &cat.streets)
        );
        let customer = Customer {
            customer_id: id.clone(),
            name: Name {
                first_name: first,
                last_name: last,
            },
            demographics: Demographics {
                date_of_birth: format_date(birth),
                phone,
                email,
            },
            address: Address {
                address1: street,
                address2,
                city,
                state,
                zip: format!("{zip3}{:02}", rng.random_range(1..=99)),
                country: "USA".into(),
            },
            account: Account {
                account_number: format!("ACC{:09}", 2_500_000 + i),
                account_type: if business { "business" } else { "residential" }.into(),
                created_date: format_date(
                    rng.random_range(days_from_civil(2014, 1, 1)..=today - 20),
                ),
                credit_score: (0..3).map(|_| rng.random_range(180..=274)).sum(),
                payment_method: method.clone(),
            },
            services: plans.iter().map(|p| p.id.clone()).collect(),
            devices: owned
                .iter()
                .enumerate()
                .map(|(k, (model, plan))| Device {
                    device_id: (k + 1).to_string(),
                    name: model.to_string(),
                    service: plan.map(str::to_string),
                })
                .collect(),
            billing_preferences: BillingPreferences {
                paperless: rng.random_bool(0.7),
                auto_pay: method.starts_with("auto_pay"),
                billing_cycle: "monthly".into(),
            },
        };
        billing.insert(
            id.clone(),
            billing_for(&mut rng, &customer, &services, today),
        );
        customers.insert(id, customer);
    }
    let tickets = tickets(&mut rng, &customers, &billing);
    TelecomDb::new(customers, billing, services, devices, tickets)
}

/// The billing account of a customer: charges, the last payment and its history, a late
/// fee and open balance for the accounts that missed a payment.
fn billing_for(
    rng: &mut ChaCha8Rng,
    c: &Customer,
    services: &PyDict<Service>,
    today: i64,
) -> Billing {
    let mut charges: PyDict<f64> = PyDict::new();
    let mut subtotal = 0.0;
    for plan in &c.services {
        let price = services.get(plan).map_or(0.0, |s| s.price);
        charges.insert(plan.clone(), price);
        subtotal += price;
    }
    let held = |category: &str| {
        c.services
            .iter()
            .any(|p| services.get(p).is_some_and(|s| s.category == category))
    };
    if held("internet") && rng.random_bool(0.55) {
        charges.insert("modem_rental", f64::from(5 * rng.random_range(1..=3u32)));
    }
    if held("tv") && rng.random_bool(0.6) {
        charges.insert("dvr_rental", f64::from(rng.random_range(2..=3u32) * 5));
    }
    let senior_plan = catalogue().services.iter().filter(|p| p.senior);
    if senior_plan.into_iter().any(|p| c.services.contains(&p.id)) {
        let share = rng.random_range(4..=14) as f64 / 100.0;
        charges.insert("senior_discount", -py_round(subtotal * share, 2));
    }
    let tax = rng.random_range(75..=110) as f64 / 1000.0;
    charges.insert("taxes_and_fees", py_round(subtotal * tax, 2));
    let regular = py_round(charges.values().sum::<f64>(), 2);
    let late = rng.random_bool(0.11);
    let (balance, paid) = if late {
        charges.insert("late_fee", 25.0);
        let owed = py_round(rng.random_range(2_000..=25_000) as f64 / 100.0, 2);
        (owed, py_round(regular - owed / 2.0, 2).max(10.0))
    } else {
        (0.0, regular)
    };
    let bill_day = rng.random_range(1..=28);
    let (y, m, _) = civil_from_days(today);
    let mut last = days_from_civil(y, m, bill_day);
    if last >= today {
        last = add_months(last, -1);
    }
    let history_len = if rng.random_bool(0.68) { 4 } else { 3 };
    let method = c.account.payment_method.clone();
    Billing {
        customer_id: c.customer_id.clone(),
        account_number: c.account.account_number.clone(),
        current_balance: balance,
        last_payment: LastPayment {
            amount: paid,
            date: format_date(last),
            method,
            status: if late { "late" } else { "completed" }.into(),
        },
        next_bill_date: format_date(add_months(last, 1)),
        monthly_charges: charges,
        payment_history: (0..history_len)
            .map(|k| PaymentRecord {
                date: format_date(add_months(last, -k)),
                amount: if k == 0 { paid } else { regular },
                status: if late && k == 0 { "late" } else { "completed" }.into(),
            })
            .collect(),
        auto_pay: c.billing_preferences.auto_pay,
        paperless: c.billing_preferences.paperless,
        billing_cycle: None,
    }
}

/// 240 tickets over about a third of the customers (one to three each), ids in a shuffled
/// order so a customer's tickets are not numbered together. Customers who owe money are
/// likelier to have called support (billing trouble brings people to the phone), so most
/// of them hold a ticket.
fn tickets(
    rng: &mut ChaCha8Rng,
    customers: &PyDict<Customer>,
    billing: &PyDict<Billing>,
) -> PyDict<Ticket> {
    let mut ranked: Vec<(f64, &str)> = customers
        .keys()
        .map(|id| {
            let owes = billing.get(id).is_some_and(|b| b.current_balance > 0.0);
            (rng.random::<f64>() - if owes { 0.6 } else { 0.0 }, id)
        })
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut owners: Vec<&str> = Vec::with_capacity(TICKETS);
    for (_, id) in ranked {
        let n = [1, 1, 1, 1, 1, 1, 1, 2, 2, 3][rng.random_range(0..10)];
        for _ in 0..n {
            if owners.len() < TICKETS {
                owners.push(id);
            }
        }
        if owners.len() == TICKETS {
            break;
        }
    }
    owners.shuffle(rng);
    owners
        .into_iter()
        .enumerate()
        .map(|(k, owner)| {
            let ticket_id = counter_id("TICKET", 5, k as u64 + 1);
            let ticket = Ticket {
                ticket_id: ticket_id.clone(),
                customer_id: owner.to_string(),
                status: if rng.random_bool(0.7) {
                    "closed"
                } else {
                    "open"
                }
                .into(),
                priority: ["medium", "low", "high"]
                    [weighted_index(rng, &[54, 24, 22]).unwrap_or(0)]
                .into(),
                category: None,
            };
            (ticket_id, ticket)
        })
        .collect()
}
