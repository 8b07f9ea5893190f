//! The deterministic synthetic bank databases, drawn from a ChaCha8 stream seeded by the
//! caller and the split: the evaluation database at the reference's scale (297 clients,
//! 297 loans, 297 beneficiaries, 297 transactions) and the training database at the
//! paper's (1,000 clients, 768 loans, 951 beneficiaries; 1,000 transactions).
//!
//! Distributions follow the reference's `db.json`: one to three accounts per client (57% /
//! 38% / 5%; checking, savings, a few credit lines), in the client's own currency across
//! some thirty countries, nearly all active; one to three cards each (a few blocked or
//! expired); loans of four kinds with a paid and a due installment; beneficiaries mostly
//! active and verified, a third pending, some suspended; card payments, deposits and
//! transfers as transactions. Where the reference's data blocks a task, ours departs
//! mildly: masked account numbers are unique within a client (the reference repeats
//! `****1234`), every email is unique, a fifth of the accounts are frozen and a fifth of the
//! cards blocked (so unfreezing has something to do), and a third of the clients hold two
//! or three cards (the reference: 8%), so freezing one card and unfreezing another is a
//! coherent task rather than a write taken back. Names, places, banks and merchants are our own
//! (`vocabulary.toml`); amounts are whole cents, so Python's `round(x, 2)` leaves them as
//! they are.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    Account, BankDb, BankDetails, Beneficiary, BeneficiaryName, Client, ClientContact, ClientName,
    Collateral, KycInfo, Loan, MerchantInfo, RepaymentEntry, ScheduleEntry, Transaction,
    TransferLimits, Verification,
};
use super::generate_clients::generate_client;
use super::generate_vocab::{VOCABULARY, address, amount, cents, fresh_id, stamp};
use crate::domain::Split;
use crate::domain::kit::draw::{Scales, digits_in, pick, weighted};
use crate::domain::kit::python::PyDict;
use crate::seed::derive_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Sizes of one database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
pub struct Scale {
    pub clients: usize,
    pub loans: usize,
    pub beneficiaries: usize,
    pub transactions: usize,
}

/// The sizes per split (`[scale.eval]`, `[scale.train]` in `vocabulary.toml`).
pub static SCALES: LazyLock<Scales<Scale>> =
    LazyLock::new(|| Scales::read(include_str!("vocabulary.toml")));

/// Spread `total` items over `n` owners: everyone gets `base`, the rest go one each to
/// random owners (at most `base + 1` each when `total <= 2n`).
fn spread(rng: &mut ChaCha8Rng, n: usize, total: usize) -> Vec<usize> {
    let mut counts = vec![total / n.max(1); n];
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    for &i in order.iter().take(total - counts.iter().sum::<usize>()) {
        counts[i] += 1;
    }
    counts
}

/// The database of one split, at its size in [`SCALES`].
pub fn generate(seed: u64, split: Split) -> BankDb {
    let scale = SCALES.of(split);
    let mut rng = derive_rng(seed, &["bank", "db", split.as_str()]);
    let v = &*VOCABULARY;
    if v.regions.is_empty() || v.given_names.is_empty() || v.banks.is_empty() {
        return BankDb::new(
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
            BTreeMap::new(),
        );
    }
    let mut used = BTreeSet::new();
    let mut emails = BTreeSet::new();
    let mut clients: Vec<(Client, f64)> = (0..scale.clients)
        .map(|_| generate_client(&mut rng, &mut used, &mut emails))
        .collect();
    let loan_counts = spread(&mut rng, clients.len(), scale.loans);
    let ben_counts = spread(&mut rng, clients.len(), scale.beneficiaries);
    let mut loans = BTreeMap::new();
    let mut beneficiaries = BTreeMap::new();
    let mut transactions = BTreeMap::new();
    for (i, (c, rate)) in clients.iter_mut().enumerate() {
        for _ in 0..loan_counts[i] {
            let l = generate_loan(&mut rng, &mut used, c, *rate);
            // The paid installment's transaction, as the reference links them (for up to
            // three fifths of the table; the rest are everyday transactions).
            if let Some(paid) = l
                .repayment_history
                .first()
                .filter(|_| transactions.len() < scale.transactions * 3 / 5)
            {
                let tx = loan_transaction(c, &l, paid);
                transactions.insert(tx.transaction_id.clone(), tx);
            }
            c.loan_ids.push(l.loan_id.clone());
            loans.insert(l.loan_id.clone(), l);
        }
        for _ in 0..ben_counts[i] {
            let b = generate_beneficiary(&mut rng, &mut used, c, *rate);
            c.beneficiary_ids.push(b.beneficiary_id.clone());
            beneficiaries.insert(b.beneficiary_id.clone(), b);
        }
    }
    // Loan repayments count toward the transactions; the rest are everyday ones.
    while transactions.len() < scale.transactions {
        let (c, rate) = pick(&mut rng, &clients);
        let tx = everyday_transaction(&mut rng, &mut used, c, *rate);
        transactions.insert(tx.transaction_id.clone(), tx);
    }
    let clients = clients
        .into_iter()
        .map(|(c, _)| (c.client_id.clone(), c))
        .collect();
    BankDb::new(clients, transactions, loans, beneficiaries)
}

/// The client's non-credit accounts (what pays loans and beneficiaries).
fn funding_accounts(c: &Client) -> Vec<&Account> {
    let own: Vec<&Account> = c.accounts.values().filter(|a| a.kind != "credit").collect();
    if own.is_empty() {
        c.accounts.values().collect()
    } else {
        own
    }
}

fn generate_loan(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>, c: &Client, rate: f64) -> Loan {
    let kind = weighted(
        rng,
        &[
            ("mortgage", 32),
            ("auto", 33),
            ("personal", 32),
            ("credit_line", 3),
        ],
    );
    let accounts = funding_accounts(c);
    let repay = accounts[rng.random_range(0..accounts.len())];
    let (principal, apr, term) = match kind {
        "mortgage" => (amount(rng, 120_000.0, 600_000.0, rate), 3.5..7.0, 300),
        "auto" => (amount(rng, 8_000.0, 45_000.0, rate), 4.0..9.5, 60),
        "credit_line" => (amount(rng, 5_000.0, 20_000.0, rate), 9.0..15.0, 36),
        _ => (amount(rng, 2_000.0, 25_000.0, rate), 7.0..16.0, 48),
    };
    let apr = (rng.random_range(apr) * 100.0f64).round() / 100.0;
    let installment = cents((principal / term as f64 * 1.25 * 100.0).round() as i64);
    let currency = repay.currency.clone();
    let loan_id = fresh_id(rng, used);
    let (y, m) = (rng.random_range(2020..2025), rng.random_range(1..13));
    let day = rng.random_range(1..29);
    let date = |y: i64, m: i64| format!("{y}-{m:02}-{day:02}T00:00:00Z");
    let paid_tx = fresh_id(rng, used);
    let paid = RepaymentEntry {
        transaction_id: paid_tx.clone(),
        posted_at: format!("2025-09-{day:02}T10:00:00Z"),
        amount: installment,
        currency: currency.clone(),
        method: weighted(rng, &[("ACH", 2), ("Internal", 2)]).into(),
        principal_component: cents((installment * 80.0).round() as i64),
        interest_component: cents((installment * 20.0).round() as i64),
        fees_component: 0.0,
    };
    let entry = |due: String, status: &str, tx: Option<String>| ScheduleEntry {
        due_date: due,
        amount: installment,
        currency: currency.clone(),
        status: status.into(),
        transaction_id: tx,
    };
    let collateral = match kind {
        "mortgage" => Some(Collateral {
            kind: "real_estate".into(),
            description: format!("Residence at {}", c.address.address1),
            value_amount: cents((principal * 130.0).round() as i64),
            value_currency: currency.clone(),
        }),
        "auto" => Some(Collateral {
            kind: "vehicle".into(),
            description: format!("Passenger car, VIN ending {}", digits_in(rng, "####")),
            value_amount: cents((principal * 110.0).round() as i64),
            value_currency: currency.clone(),
        }),
        _ => None,
    };
    Loan {
        loan_id,
        client_id: c.client_id.clone(),
        linked_repayment_account_id: repay.account_id.clone(),
        kind: kind.into(),
        principal,
        currency: currency.clone(),
        interest_rate_apr: apr,
        amortization: weighted(rng, &[("fixed", 90), ("interest_only", 7), ("balloon", 3)]).into(),
        term_months: term,
        origination_date: date(y, m),
        first_payment_date: date(y + (m / 12), m % 12 + 1),
        maturity_date: date(y + term / 12, m),
        status: weighted(rng, &[("active", 96), ("delinquent", 4)]).into(),
        collateral,
        payment_schedule: vec![
            entry(format!("2025-09-{day:02}"), "paid", Some(paid_tx)),
            entry(format!("2025-10-{day:02}"), "due", None),
            entry(format!("2025-11-{day:02}"), "due", None),
        ],
        repayment_history: vec![paid],
        escrow: None,
    }
}

fn loan_transaction(c: &Client, l: &Loan, paid: &RepaymentEntry) -> Transaction {
    let acc = c.accounts.get(&l.linked_repayment_account_id);
    Transaction {
        transaction_id: paid.transaction_id.clone(),
        client_id: c.client_id.clone(),
        account_id: l.linked_repayment_account_id.clone(),
        timestamp: paid.posted_at.clone(),
        kind: "payment".into(),
        direction: "debit".into(),
        amount: paid.amount,
        currency: paid.currency.clone(),
        description: Some("Loan repayment".into()),
        method: paid.method.clone(),
        status: "posted".into(),
        merchant: None,
        related_transaction_id: None,
        exchange: None,
        fees: Vec::new(),
        hold: None,
        balance_after: acc.map(|a| a.balance.current),
    }
}

fn generate_beneficiary(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    c: &Client,
    rate: f64,
) -> Beneficiary {
    let v = &*VOCABULARY;
    let business = rng.random_bool(0.35);
    let name = if business {
        let b = pick(rng, &v.business_names).clone();
        BeneficiaryName {
            display_name: Some(b.clone()),
            first_name: None,
            last_name: None,
            business_name: Some(b),
        }
    } else {
        let (f, l) = (
            pick(rng, &v.given_names).clone(),
            pick(rng, &v.family_names).clone(),
        );
        BeneficiaryName {
            display_name: Some(format!("{f} {l}")),
            first_name: Some(f),
            last_name: Some(l),
            business_name: None,
        }
    };
    let accounts = funding_accounts(c);
    let mut allowed: Vec<String> = Vec::new();
    if !accounts.is_empty() {
        allowed.push(
            accounts[rng.random_range(0..accounts.len())]
                .account_id
                .clone(),
        );
    }
    if accounts.len() > 1 && rng.random_bool(0.1) {
        let other = accounts.iter().find(|a| a.account_id != allowed[0]);
        allowed.extend(other.map(|a| a.account_id.clone()));
    }
    let iban_cc = VOCABULARY
        .regions
        .iter()
        .find(|r| r.0 == c.address.country)
        .map_or("", |r| r.5.as_str());
    let (routing, iban, swift) = if iban_cc.is_empty() {
        (Some(digits_in(rng, "#########")), None, None)
    } else {
        (
            None,
            Some(digits_in(rng, &format!("{iban_cc}##################"))),
            Some(format!("{}{}XX", digits_in(rng, "BNK"), iban_cc)),
        )
    };
    let per = amount(rng, 500.0, 5_000.0, rate);
    let status = weighted(rng, &[("verified", 62), ("pending", 31), ("failed", 7)]);
    Beneficiary {
        beneficiary_id: fresh_id(rng, used),
        client_id: c.client_id.clone(),
        name,
        kind: if business { "business" } else { "individual" }.into(),
        bank_details: BankDetails {
            bank_name: pick(rng, &v.banks).clone(),
            account_number_masked: digits_in(rng, "****####"),
            routing_number: routing,
            iban,
            swift_bic: swift,
        },
        address: address(rng, &c.address.country),
        allowed_from_account_ids: allowed,
        transfer_limits: TransferLimits {
            per_transfer_limit: per,
            daily_limit: per * 2.0,
        },
        verification: Verification {
            status: status.into(),
            method: weighted(
                rng,
                &[("document", 35), ("instant", 33), ("micro_deposits", 32)],
            )
            .into(),
            verified_at: (status == "verified").then(|| stamp(rng, 2024..2025)),
        },
        status: weighted(rng, &[("active", 81), ("suspended", 17), ("revoked", 2)]).into(),
        created_at: stamp(rng, 2022..2024),
        notes: None,
    }
}

fn everyday_transaction(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    c: &Client,
    rate: f64,
) -> Transaction {
    let v = &*VOCABULARY;
    let accounts: Vec<&Account> = c.accounts.values().collect();
    let acc = accounts[rng.random_range(0..accounts.len())];
    let kind = weighted(
        rng,
        &[
            ("payment", 70),
            ("deposit", 18),
            ("transfer", 7),
            ("withdrawal", 3),
            ("interest", 2),
        ],
    );
    let (direction, method, description, merchant) = match kind {
        "payment" => {
            let (name, mcc) = pick(rng, &v.merchants).clone();
            (
                "debit",
                "Card",
                format!("Card purchase at {name}"),
                Some(MerchantInfo {
                    name,
                    mcc,
                    city: c.address.city.clone(),
                    country: c.address.country.clone(),
                }),
            )
        }
        "deposit" => ("credit", "ACH", "Salary deposit".to_string(), None),
        "transfer" => ("debit", "Wire", "Outgoing wire transfer".to_string(), None),
        "withdrawal" => ("debit", "ATM", "Cash withdrawal".to_string(), None),
        _ => ("credit", "Internal", "Monthly interest".to_string(), None),
    };
    let amount = match kind {
        "deposit" => amount(rng, 800.0, 4_000.0, rate),
        "interest" => amount(rng, 1.0, 40.0, rate),
        _ => amount(rng, 5.0, 300.0, rate),
    };
    let pending = rng.random_bool(0.06);
    Transaction {
        transaction_id: fresh_id(rng, used),
        client_id: c.client_id.clone(),
        account_id: acc.account_id.clone(),
        timestamp: format!(
            "2025-{:02}-{:02}T{:02}:{:02}:00Z",
            rng.random_range(6..10),
            rng.random_range(1..29),
            rng.random_range(6..23),
            rng.random_range(0..60)
        ),
        kind: kind.into(),
        direction: direction.into(),
        amount,
        currency: acc.currency.clone(),
        description: Some(description),
        method: method.into(),
        status: if pending { "pending" } else { "posted" }.into(),
        merchant,
        related_transaction_id: None,
        exchange: None,
        fees: Vec::new(),
        hold: pending.then(|| super::db::TransactionHold {
            is_hold: true,
            release_at: Some("2025-10-22T00:00:00Z".into()),
            reason: Some("Authorization pending".into()),
        }),
        balance_after: Some(acc.balance.current),
    }
}

/// A new payee's details as `add_beneficiary` arguments (all but the client, id and
/// allowed accounts): an individual or a business in `country`, paid by routing number or
/// IBAN as that country's banks are, verified by any method, with a per-transfer limit a
/// fifth of `available` (rounded) and a daily limit twice that.
pub fn random_payee(rng: &mut ChaCha8Rng, country: &str, available: f64) -> serde_json::Value {
    let v = &*VOCABULARY;
    if v.given_names.is_empty() || v.banks.is_empty() || v.business_names.is_empty() {
        return serde_json::json!({});
    }
    let c = Client {
        client_id: String::new(),
        name: ClientName {
            first_name: String::new(),
            last_name: String::new(),
            middle_name: None,
        },
        contact: ClientContact {
            email: String::new(),
            phone: String::new(),
        },
        address: address(rng, country),
        accounts: PyDict::new(),
        cards: PyDict::new(),
        loan_ids: Vec::new(),
        beneficiary_ids: Vec::new(),
        created_at: String::new(),
        kyc: KycInfo {
            status: String::new(),
            last_reviewed_at: String::new(),
            tax_id_masked: String::new(),
        },
    };
    let mut used = BTreeSet::new();
    let b = generate_beneficiary(rng, &mut used, &c, 1.0);
    let per = round_share(available).max(1.0);
    let method = *pick(rng, &["document", "instant", "micro_deposits"]);
    serde_json::json!({
        "beneficiary_type": b.kind,
        "display_name": b.name.display_name,
        "first_name": b.name.first_name,
        "last_name": b.name.last_name,
        "business_name": b.name.business_name,
        "bank_name": b.bank_details.bank_name,
        "account_number_masked": b.bank_details.account_number_masked,
        "routing_number": b.bank_details.routing_number,
        "iban": b.bank_details.iban,
        "swift_bic": b.bank_details.swift_bic,
        "address1": b.address.address1,
        "address2": b.address.address2,
        "city": b.address.city,
        "state": b.address.state,
        "zip": b.address.zip,
        "country": b.address.country,
        "per_transfer_limit": per,
        "daily_limit": per * 2.0,
        "verification_method": method,
    })
}

/// A round share of an amount: a fifth of it, down to a step of 10, 100 or 1,000 units by
/// size (at least 1).
pub fn round_share(available: f64) -> f64 {
    let x = available / 5.0;
    let step = if x >= 10_000.0 {
        1_000.0
    } else if x >= 1_000.0 {
        100.0
    } else if x >= 50.0 {
        10.0
    } else {
        1.0
    };
    ((x / step).floor() * step).max(1.0)
}
