//! The bank database: clients (profile, KYC, and their accounts and cards nested as the
//! reference nests them), transactions, loans and beneficiaries.
//!
//! Rows mirror the reference's pydantic models field for field and in the same order and
//! serialise in `model_dump()` form (optional fields as `null`, money as floats), so a tool
//! output is tau2's text and an export is what tau2 hashes. A client's accounts and cards
//! are Python dicts there: [`PyDict`]s here, printed in the order the file held them.
//! Clients and transactions keep the `db.json` order too, because the reference scans them
//! in it: the first client with an email wins (its file repeats 31 emails), and recent
//! transactions with equal timestamps keep file order (Python's stable sort). Transactions
//! a tool adds go after the loaded ones, as a dict appends them.
//!
//! Architecture invariant: data and the `Database` glue only; tool behaviour lives in
//! `tools.rs`, grounding in `ground.rs`, refinement hooks in `hooks.rs`.

use crate::domain::kit::python::PyDict;
use crate::domain::kit::tau2;
use crate::domain::{DomainError, Table};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use crate::domain::kit::rows::StreetAddress as BankAddress;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientName {
    pub first_name: String,
    pub last_name: String,
    pub middle_name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientContact {
    pub email: String,
    pub phone: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccountBalance {
    pub current: f64,
    pub available: f64,
    pub on_hold: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccountFeatures {
    pub checks_enabled: bool,
    pub atm_access: bool,
    pub online_banking: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Account {
    pub account_id: String,
    /// checking, savings, credit.
    #[serde(rename = "type")]
    pub kind: String,
    pub currency: String,
    /// active, frozen, closed.
    pub status: String,
    pub account_number_masked: String,
    pub routing_number: String,
    pub balance: AccountBalance,
    pub interest_rate_apr: Option<f64>,
    pub overdraft_limit: Option<f64>,
    pub opened_at: String,
    pub features: AccountFeatures,
}

impl Account {
    pub fn is_active(&self) -> bool {
        self.status == "active"
    }

    /// The last four digits of the masked number ("****4821" -> "4821").
    pub fn last_four(&self) -> &str {
        let m = self.account_number_masked.trim_start_matches('*');
        m.get(m.len().saturating_sub(4)..).unwrap_or(m)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CardExtraInfo {
    pub brand: String,
    pub last_four: String,
    pub exp_month: String,
    pub exp_year: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CardLimits {
    pub daily_atm_limit: f64,
    pub daily_pos_limit: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Card {
    pub card_id: String,
    /// debit, credit.
    #[serde(rename = "type")]
    pub kind: String,
    pub linked_account_id: String,
    /// active, blocked, expired.
    pub status: String,
    pub issuer: String,
    pub extra_info: CardExtraInfo,
    pub limits: CardLimits,
    pub pin_set: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KycInfo {
    pub status: String,
    pub last_reviewed_at: String,
    pub tax_id_masked: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MerchantInfo {
    pub name: String,
    pub mcc: String,
    pub city: String,
    pub country: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeInfo {
    pub source_currency: String,
    pub target_currency: String,
    pub rate: f64,
    pub source_amount: f64,
    pub target_amount: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransactionFee {
    #[serde(rename = "type")]
    pub kind: String,
    pub amount: f64,
    pub currency: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransactionHold {
    pub is_hold: bool,
    pub release_at: Option<String>,
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transaction {
    pub transaction_id: String,
    pub client_id: String,
    pub account_id: String,
    pub timestamp: String,
    /// deposit, withdrawal, transfer, payment, fee, interest.
    #[serde(rename = "type")]
    pub kind: String,
    pub direction: String,
    pub amount: f64,
    pub currency: String,
    pub description: Option<String>,
    /// ACH, Wire, Card, ATM, Internal.
    pub method: String,
    /// pending, posted, reversed.
    pub status: String,
    pub merchant: Option<MerchantInfo>,
    pub related_transaction_id: Option<String>,
    pub exchange: Option<ExchangeInfo>,
    #[serde(default)]
    pub fees: Vec<TransactionFee>,
    pub hold: Option<TransactionHold>,
    pub balance_after: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Collateral {
    #[serde(rename = "type")]
    pub kind: String,
    pub description: String,
    pub value_amount: f64,
    pub value_currency: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScheduleEntry {
    pub due_date: String,
    pub amount: f64,
    pub currency: String,
    /// due, paid, late, deferred.
    pub status: String,
    pub transaction_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepaymentEntry {
    pub transaction_id: String,
    pub posted_at: String,
    pub amount: f64,
    pub currency: String,
    pub method: String,
    pub principal_component: f64,
    pub interest_component: f64,
    pub fees_component: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EscrowAccount {
    pub account_id: String,
    pub balance: f64,
    pub currency: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Loan {
    pub loan_id: String,
    pub client_id: String,
    pub linked_repayment_account_id: String,
    /// mortgage, auto, personal, credit_line.
    #[serde(rename = "type")]
    pub kind: String,
    pub principal: f64,
    pub currency: String,
    pub interest_rate_apr: f64,
    pub amortization: String,
    pub term_months: i64,
    pub origination_date: String,
    pub first_payment_date: String,
    pub maturity_date: String,
    pub status: String,
    pub collateral: Option<Collateral>,
    pub payment_schedule: Vec<ScheduleEntry>,
    pub repayment_history: Vec<RepaymentEntry>,
    pub escrow: Option<EscrowAccount>,
}

impl Loan {
    /// The first scheduled installment still due (what a client pays next).
    pub fn next_due(&self) -> Option<&ScheduleEntry> {
        self.payment_schedule.iter().find(|e| e.status == "due")
    }

    /// The installment a client pays next in a conversation at `now`, and how many of this
    /// loan's payments `now` already saw: the schedule does not record a payment (as in
    /// the reference), so after one payment today the next is the following installment.
    pub fn due_at(&self, now: &str) -> Option<(usize, &ScheduleEntry)> {
        let made = self
            .repayment_history
            .iter()
            .filter(|r| r.posted_at == now)
            .count();
        let entry = self
            .payment_schedule
            .iter()
            .filter(|e| e.status == "due")
            .nth(made)?;
        Some((made, entry))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BeneficiaryName {
    pub display_name: Option<String>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub business_name: Option<String>,
}

impl BeneficiaryName {
    /// The reference's listing name: display name, else business name, else first and
    /// last name joined, else "Unnamed Beneficiary" (empty strings count as missing).
    pub fn listing(&self) -> String {
        fn set(s: &Option<String>) -> Option<&str> {
            s.as_deref().filter(|x| !x.is_empty())
        }
        if let Some(n) = set(&self.display_name).or(set(&self.business_name)) {
            return n.to_string();
        }
        let joined: Vec<&str> = [set(&self.first_name), set(&self.last_name)]
            .into_iter()
            .flatten()
            .collect();
        if joined.is_empty() {
            "Unnamed Beneficiary".into()
        } else {
            joined.join(" ")
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BankDetails {
    pub bank_name: String,
    pub account_number_masked: String,
    pub routing_number: Option<String>,
    pub iban: Option<String>,
    pub swift_bic: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransferLimits {
    pub per_transfer_limit: f64,
    pub daily_limit: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// pending, verified, failed.
    pub status: String,
    /// micro_deposits, document, instant.
    pub method: String,
    pub verified_at: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Beneficiary {
    pub beneficiary_id: String,
    pub client_id: String,
    pub name: BeneficiaryName,
    /// individual, business.
    #[serde(rename = "type")]
    pub kind: String,
    pub bank_details: BankDetails,
    pub address: BankAddress,
    pub allowed_from_account_ids: Vec<String>,
    pub transfer_limits: TransferLimits,
    pub verification: Verification,
    /// active, suspended, revoked.
    pub status: String,
    pub created_at: String,
    pub notes: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Client {
    pub client_id: String,
    pub name: ClientName,
    pub contact: ClientContact,
    pub address: BankAddress,
    pub accounts: PyDict<Account>,
    pub cards: PyDict<Card>,
    pub loan_ids: Vec<String>,
    pub beneficiary_ids: Vec<String>,
    pub created_at: String,
    pub kyc: KycInfo,
}

/// The whole bank state. Clients list in the order the reference scans them
/// (`Table::in_order`: its `db.json` order; id order for a generated database).
#[derive(Clone)]
pub struct BankDb {
    pub clients: Table<Client>,
    pub transactions: Table<Transaction>,
    pub loans: Table<Loan>,
    pub beneficiaries: Table<Beneficiary>,
    /// Transaction ids in `db.json` order as loaded, then those added since, in order.
    tx_order: Arc<Vec<String>>,
    added: Vec<String>,
    /// Account and card id -> the first client (in scanning order) holding it. No tool adds,
    /// removes or moves an account or a card, so lookups read this instead of scanning.
    holders: Arc<BTreeMap<String, String>>,
}

impl BankDb {
    pub fn new(
        clients: BTreeMap<String, Client>,
        transactions: BTreeMap<String, Transaction>,
        loans: BTreeMap<String, Loan>,
        beneficiaries: BTreeMap<String, Beneficiary>,
    ) -> Self {
        let tx_order: Vec<String> = transactions.keys().cloned().collect();
        let mut db = BankDb {
            clients: Table::new("clients", clients),
            transactions: Table::new("transactions", transactions),
            loans: Table::new("loans", loans),
            beneficiaries: Table::new("beneficiaries", beneficiaries),
            tx_order: Arc::new(tx_order),
            added: Vec::new(),
            holders: Arc::default(),
        };
        db.index();
        db
    }

    fn index(&mut self) {
        let mut holders = BTreeMap::new();
        for c in self.clients.in_order() {
            for id in c.accounts.keys().chain(c.cards.keys()) {
                holders
                    .entry(id.to_string())
                    .or_insert_with(|| c.client_id.clone());
            }
        }
        self.holders = Arc::new(holders);
    }

    /// Transactions in the reference's dict order (loaded, then added).
    pub fn transactions_in_order(&self) -> impl Iterator<Item = &Transaction> {
        self.tx_order
            .iter()
            .chain(&self.added)
            .filter_map(|id| self.transactions.get(id))
    }

    /// Store a new transaction (appended to the scanning order).
    pub fn add_transaction(&mut self, tx: Transaction) {
        let id = tx.transaction_id.clone();
        if !self.transactions.contains(&id) {
            self.added.push(id.clone());
        }
        self.transactions.insert(id, tx);
    }

    /// The client holding an account or card id (the first in scanning order).
    pub fn holder_of(&self, id: &str) -> Option<&Client> {
        self.holders.get(id).and_then(|c| self.clients.get(c))
    }

    /// Read the reference's tables (`db.json` top-level keys). Clients and transactions keep
    /// the order the file at `origin` lists them in, when it is readable.
    pub fn import(tables: &BTreeMap<String, Value>, origin: &Path) -> Result<Self, DomainError> {
        let clients: BTreeMap<String, Client> = tau2::parse_table(tables, "clients", origin)?;
        let transactions: BTreeMap<String, Transaction> =
            tau2::parse_table(tables, "transactions", origin)?;
        let loans: BTreeMap<String, Loan> = tau2::parse_table(tables, "loans", origin)?;
        let beneficiaries: BTreeMap<String, Beneficiary> =
            tau2::parse_table(tables, "beneficiaries", origin)?;
        let order = tau2::document_order(origin);
        let tx_order = tau2::in_document_order(
            transactions.keys().map(String::as_str),
            order.get("transactions"),
        );
        let mut db = BankDb::new(clients, transactions, loans, beneficiaries);
        tau2::keep_document_order(&mut db.clients, &order);
        db.tx_order = Arc::new(tx_order);
        db.index();
        Ok(db)
    }
}
