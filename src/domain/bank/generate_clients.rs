//! The bank's clients: each with one to three accounts in the client's own currency (or a
//! few in dollars or euros) and one to three cards linked to them.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    Account, AccountBalance, AccountFeatures, Card, CardExtraInfo, CardLimits, Client,
    ClientContact, ClientName, KycInfo,
};
use super::generate_vocab::{VOCABULARY, address, amount, cents, fresh_id, stamp};
use crate::domain::kit::draw::{digits_in, pick, unique_email, weighted};
use crate::domain::kit::python::PyDict;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

struct Region<'a> {
    country: &'a str,
    currency: &'a str,
    rate: f64,
    phone: &'a str,
    tld: &'a str,
}

fn region(rng: &mut ChaCha8Rng) -> Region<'static> {
    let r = pick(rng, &VOCABULARY.regions);
    Region {
        country: &r.0,
        currency: &r.1,
        rate: r.2,
        phone: &r.3,
        tld: &r.4,
    }
}

pub(super) fn generate_client(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    emails: &mut BTreeSet<String>,
) -> (Client, f64) {
    let v = &*VOCABULARY;
    let r = region(rng);
    let first = pick(rng, &v.given_names).clone();
    let last = pick(rng, &v.family_names).clone();
    let client_id = fresh_id(rng, used);
    let base = format!("{first}.{last}").to_lowercase();
    let email = unique_email(emails, &base, &format!("example.{}", r.tld).to_lowercase());
    let n_accounts = weighted(rng, &[(1usize, 57), (2, 38), (3, 5)]);
    let mut accounts = PyDict::new();
    let mut masks = BTreeSet::new();
    for k in 0..n_accounts {
        let kind = if k == 0 {
            weighted(rng, &[("checking", 70), ("savings", 30)])
        } else {
            weighted(rng, &[("savings", 50), ("checking", 25), ("credit", 25)])
        };
        let currency = if rng.random_bool(0.95) {
            r.currency
        } else {
            weighted(rng, &[("USD", 1), ("EUR", 1)])
        };
        let rate = if currency == r.currency { r.rate } else { 1.0 };
        let a = generate_account(rng, used, &mut masks, kind, currency, rate);
        accounts.insert(a.account_id.clone(), a);
    }
    let mut cards = PyDict::new();
    // More clients hold a second card than in the reference (92% hold one there), so a walk
    // that freezes one card can unfreeze another rather than take its own write back.
    let n_cards = weighted(rng, &[(1usize, 65), (2, 27), (3, 8)]);
    let account_ids: Vec<(String, String)> = accounts
        .values()
        .map(|a: &Account| (a.account_id.clone(), a.kind.clone()))
        .collect();
    for k in 0..n_cards {
        let (linked, kind) = &account_ids[k % account_ids.len()];
        let card = generate_card(rng, used, linked, kind, r.rate);
        cards.insert(card.card_id.clone(), card);
    }
    let client = Client {
        client_id,
        name: ClientName {
            first_name: first,
            last_name: last,
            middle_name: None,
        },
        contact: ClientContact {
            email,
            phone: digits_in(rng, &format!("{} ### ####", r.phone)),
        },
        address: address(rng, r.country),
        accounts,
        cards,
        loan_ids: Vec::new(),
        beneficiary_ids: Vec::new(),
        created_at: stamp(rng, 2015..2023),
        kyc: KycInfo {
            status: weighted(rng, &[("verified", 90), ("pending", 7), ("failed", 3)]).into(),
            last_reviewed_at: stamp(rng, 2024..2026),
            tax_id_masked: digits_in(rng, "****####"),
        },
    };
    (client, r.rate)
}

fn generate_account(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    masks: &mut BTreeSet<String>,
    kind: &str,
    currency: &str,
    rate: f64,
) -> Account {
    let mut masked = digits_in(rng, "****####");
    while !masks.insert(masked.clone()) {
        masked = digits_in(rng, "****####");
    }
    let on_hold = if rng.random_bool(0.2) {
        amount(rng, 10.0, 400.0, rate)
    } else {
        0.0
    };
    let (current, available, apr, overdraft) = match kind {
        "credit" => {
            let limit = amount(rng, 2_000.0, 15_000.0, rate);
            let owed = amount(rng, 0.0, 1_500.0, rate);
            (
                -owed,
                limit - owed,
                Some(cents(rng.random_range(1500..2800))),
                None,
            )
        }
        "savings" => {
            let bal = amount(rng, 500.0, 40_000.0, rate);
            (
                bal,
                bal - on_hold,
                Some(cents(rng.random_range(100..450))),
                None,
            )
        }
        _ => {
            let bal = amount(rng, 150.0, 9_000.0, rate);
            let overdraft = rng
                .random_bool(0.5)
                .then(|| amount(rng, 100.0, 1_000.0, rate));
            (bal, bal - on_hold, Some(0.0), overdraft)
        }
    };
    Account {
        account_id: fresh_id(rng, used),
        kind: kind.to_string(),
        currency: currency.to_string(),
        status: weighted(rng, &[("active", 800), ("frozen", 190), ("closed", 10)]).into(),
        account_number_masked: masked,
        routing_number: digits_in(rng, "#########"),
        balance: AccountBalance {
            current,
            available: cents((available * 100.0).round() as i64),
            on_hold,
        },
        interest_rate_apr: apr,
        overdraft_limit: overdraft,
        opened_at: stamp(rng, 2016..2024),
        features: AccountFeatures {
            checks_enabled: kind == "checking" && rng.random_bool(0.4),
            atm_access: kind != "credit",
            online_banking: rng.random_bool(0.95),
        },
    }
}

fn generate_card(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    linked: &str,
    account_kind: &str,
    rate: f64,
) -> Card {
    let v = &*VOCABULARY;
    let status = weighted(rng, &[("active", 74), ("blocked", 22), ("expired", 4)]);
    let year = if status == "expired" {
        rng.random_range(2022..2025)
    } else {
        rng.random_range(2026..2031)
    };
    Card {
        card_id: fresh_id(rng, used),
        kind: if account_kind == "credit" {
            "credit"
        } else {
            "debit"
        }
        .into(),
        linked_account_id: linked.to_string(),
        status: status.into(),
        issuer: pick(rng, &v.banks).clone(),
        extra_info: CardExtraInfo {
            brand: pick(rng, &v.card_brands).clone(),
            last_four: digits_in(rng, "####"),
            exp_month: format!("{:02}", rng.random_range(1..13)),
            exp_year: year.to_string(),
        },
        limits: CardLimits {
            daily_atm_limit: amount(rng, 300.0, 1_000.0, rate),
            daily_pos_limit: amount(rng, 1_500.0, 5_000.0, rate),
        },
        pin_set: rng.random_bool(0.95),
    }
}
