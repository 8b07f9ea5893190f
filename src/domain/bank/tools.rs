//! The twenty-two bank tools: the reference's nineteen (same names, arguments, result shapes
//! and error strings, checks in the same order), its generic `calculate` and
//! `transfer_to_human_agents`, and the kit's `think`, so the split is the paper's 13 read /
//! 9 write. Outputs are tau2's `to_json_str` of what the reference returns: rows as
//! `model_dump()` JSON, a client id as a bare string, the two listings as
//! `json.dumps(..., sort_keys=True)` text. Descriptions are ours, in
//! `tools.toml` with the arguments.
//!
//! Money follows the reference's float arithmetic: balances move by `round(x - amount, 2)`
//! (Python's rounding, [`py_round`]), the stored amount is rounded, `balance_after` is the
//! new current balance. Every check runs before any mutation, so a failing call leaves the
//! state untouched. Timestamps come from the simulation clock ([`CLOCK`]), never the wall
//! clock.
//!
//! Departures (docs/domains/bank.md, `tests/fixtures/reference/bank/departures.json`): the
//! two legs of an internal transfer get distinct ids (the reference mints one id for both,
//! so the debit leg is lost and the credit leg points at itself); a transfer or loan
//! payment method, a verification method and a beneficiary type outside their enums are
//! refused before anything changes (the reference debits the account, then fails in
//! pydantic, or stores an unchecked method); an existing beneficiary id is refused instead
//! of overwritten (which could take over another client's beneficiary).
//!
//! Architecture invariant: tools see only the `BankDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{
    Account, BankAddress, BankDb, BankDetails, Beneficiary, BeneficiaryName, Card, Client, Loan,
    RepaymentEntry, Transaction, TransferLimits, Verification,
};
use crate::domain::ToolFn;
use crate::domain::kit::calc::py_round;
use crate::domain::kit::clock::SimClock;
use crate::domain::kit::glue::read_tool;
use crate::domain::kit::ids::{counter_id, id_by_email};
use crate::domain::kit::pyjson::{Py, dumps};
use crate::domain::kit::specs;
use crate::domain::{Args, Tool};
use serde_json::Value;
use std::collections::BTreeMap;

/// The bank's "now": every stamp a tool writes (`2025-10-20T09:00:00Z`).
pub const CLOCK: SimClock = SimClock::new("2025-10-20T09:00:00");

/// The reference's enums a tool checks before it changes anything.
pub const TX_METHODS: [&str; 5] = ["ACH", "Wire", "Card", "ATM", "Internal"];
pub const VERIFY_METHODS: [&str; 3] = ["micro_deposits", "document", "instant"];
pub const BENEFICIARY_TYPES: [&str; 2] = ["individual", "business"];

crate::domain::kit::glue::tool_list!(BankDb);

fn build() -> Vec<Tool<BankDb>> {
    let runs: [(&str, ToolFn<BankDb>); 19] = [
        ("find_client_id_by_email", |db, a| {
            let rows = db
                .clients
                .in_order()
                .map(|c| (&*c.client_id, &*c.contact.email));
            id_by_email(rows, a.str("email")?).ok_or_else(|| "Client not found".to_string())
        }),
        ("get_client_details", read_tool!(client, "client_id")),
        ("get_account_details", |db, a| {
            Ok(Py::model(account_anywhere(db, a.str("account_id")?)?.1).to_json_str())
        }),
        ("get_card_details", |db, a| {
            Ok(Py::model(card_anywhere(db, a.str("card_id")?)?.1).to_json_str())
        }),
        ("get_loan_details", read_tool!(loan, "loan_id")),
        (
            "get_beneficiary_details",
            read_tool!(beneficiary, "beneficiary_id"),
        ),
        ("list_client_accounts", |db, a| {
            Ok(account_listing(client(db, a.str("client_id")?)?))
        }),
        ("list_client_beneficiaries", |db, a| {
            let c = client(db, a.str("client_id")?)?;
            let names: BTreeMap<&str, String> = c
                .beneficiary_ids
                .iter()
                .filter_map(|id| db.beneficiaries.get(id))
                .map(|b| (b.beneficiary_id.as_str(), b.name.listing()))
                .collect();
            Ok(dumps(&names))
        }),
        ("get_recent_transactions", recent_transactions),
        ("search_transactions", search_transactions),
        ("initiate_internal_transfer", internal_transfer),
        ("add_beneficiary", add_beneficiary),
        ("verify_beneficiary", verify_beneficiary),
        ("initiate_transfer_to_beneficiary", beneficiary_transfer),
        ("freeze_card", |db, a| {
            a.str("reason")?;
            set_card_status(db, a.str("card_id")?, "blocked")
        }),
        ("unfreeze_card", |db, a| {
            set_card_status(db, a.str("card_id")?, "active")
        }),
        ("freeze_account", |db, a| {
            a.str("reason")?;
            set_account_status(db, a.str("account_id")?, "frozen")
        }),
        ("unfreeze_account", |db, a| {
            set_account_status(db, a.str("account_id")?, "active")
        }),
        ("make_loan_payment", loan_payment),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

crate::domain::kit::glue::row_getters!(BankDb {
    client: clients.get_or("Client not found") -> Client,
    loan: loans.get_or("Loan not found") -> Loan,
    beneficiary: beneficiaries.get_or("Beneficiary not found") -> Beneficiary,
});

/// The account with this id and its holder (the first client in scanning order).
pub fn account_anywhere<'a>(db: &'a BankDb, id: &str) -> Result<(&'a Client, &'a Account), String> {
    db.holder_of(id)
        .and_then(|c| Some((c, c.accounts.get(id)?)))
        .ok_or_else(|| "Account not found".to_string())
}

fn card_anywhere<'a>(db: &'a BankDb, id: &str) -> Result<(&'a Client, &'a Card), String> {
    db.holder_of(id)
        .and_then(|c| Some((c, c.cards.get(id)?)))
        .ok_or_else(|| "Card not found".to_string())
}

/// `{account_id: {currency, masked, status, type}}`, keys sorted at both levels.
pub fn account_listing(c: &Client) -> String {
    let listing: BTreeMap<&str, BTreeMap<&str, &str>> = c
        .accounts
        .values()
        .map(|a| {
            let row = [
                ("type", a.kind.as_str()),
                ("status", a.status.as_str()),
                ("masked", a.account_number_masked.as_str()),
                ("currency", a.currency.as_str()),
            ]
            .into_iter()
            .collect();
            (a.account_id.as_str(), row)
        })
        .collect();
    dumps(&listing)
}

/// Transactions sorted by timestamp text, newest first; equal stamps keep scanning order
/// (Python's stable sort with `reverse=True`).
fn newest_first(mut txs: Vec<&Transaction>) -> Vec<&Transaction> {
    txs.sort_by(|a, b| b.timestamp.cmp(&a.timestamp));
    txs
}

fn recent_transactions(db: &mut BankDb, a: &Args) -> Result<String, String> {
    let id = a.str("account_id")?;
    let limit = match a.value("limit") {
        Some(_) => a.i64("limit")?,
        None => 10,
    };
    account_anywhere(db, id)?;
    let txs: Vec<&Transaction> = db
        .transactions_in_order()
        .filter(|t| t.account_id == id && (t.status == "posted" || t.status == "pending"))
        .collect();
    let mut txs = newest_first(txs);
    txs.truncate(limit.max(0) as usize);
    Ok(Py::models(txs).to_json_str())
}

/// The client's own account, with the reference's errors.
fn own_account<'a>(db: &'a BankDb, client_id: &str, id: &str) -> Result<&'a Account, String> {
    client(db, client_id)?
        .accounts
        .get(id)
        .ok_or_else(|| "Account not found for this client".to_string())
}

fn search_transactions(db: &mut BankDb, a: &Args) -> Result<String, String> {
    let id = a.str("account_id")?;
    own_account(db, a.str("client_id")?, id)?;
    // Python truthiness: an empty string filter is no filter.
    let text = |k: &str| a.opt_str(k).filter(|s| !s.is_empty());
    let (start, end) = (text("start_date"), text("end_date"));
    let (kind, status) = (text("transaction_type"), text("status"));
    let merchant = text("merchant_name_contains").map(str::to_lowercase);
    let min = a.value("min_amount").and_then(Value::as_f64);
    let max = a.value("max_amount").and_then(Value::as_f64);
    let txs: Vec<&Transaction> = db
        .transactions_in_order()
        .filter(|t| {
            t.account_id == id
                && start.is_none_or(|s| t.timestamp.as_str() >= s)
                && end.is_none_or(|e| t.timestamp.as_str() <= e)
                && min.is_none_or(|m| t.amount >= m)
                && max.is_none_or(|m| t.amount <= m)
                && kind.is_none_or(|k| t.kind == k)
                && status.is_none_or(|s| t.status == s)
                && merchant.as_ref().is_none_or(|m| {
                    t.merchant
                        .as_ref()
                        .map_or(String::new(), |x| x.name.to_lowercase())
                        .contains(m.as_str())
                })
        })
        .collect();
    Ok(Py::models(newest_first(txs)).to_json_str())
}

/// A new transaction id as the reference mints them (`tx_` and the table's length plus
/// one, seven digits), moved past any id already taken.
pub fn next_tx_id(db: &BankDb, skip: &[String]) -> String {
    let mut n = db.transactions.len() as u64 + 1;
    loop {
        let id = counter_id("tx_", 7, n);
        if !db.transactions.contains(&id) && !skip.contains(&id) {
            return id;
        }
        n += 1;
    }
}

/// A debit or credit from the simulation clock, type transfer/payment, status posted.
struct Posting<'a> {
    client_id: &'a str,
    account: &'a Account,
    kind: &'a str,
    direction: &'a str,
    amount: f64,
    description: String,
    method: &'a str,
}

impl Posting<'_> {
    fn transaction(&self, id: &str, related: Option<String>, balance_after: f64) -> Transaction {
        Transaction {
            transaction_id: id.to_string(),
            client_id: self.client_id.to_string(),
            account_id: self.account.account_id.clone(),
            timestamp: CLOCK.utc_stamp(),
            kind: self.kind.to_string(),
            direction: self.direction.to_string(),
            amount: py_round(self.amount, 2),
            currency: self.account.currency.clone(),
            description: Some(self.description.clone()),
            method: self.method.to_string(),
            status: "posted".into(),
            merchant: None,
            related_transaction_id: related,
            exchange: None,
            fees: Vec::new(),
            hold: None,
            balance_after: Some(balance_after),
        }
    }
}

/// Move an account's balances by `delta` (Python's `round(x, 2)` on each); the new current
/// balance.
fn shift(db: &mut BankDb, client_id: &str, account_id: &str, delta: f64) -> f64 {
    let Some(acc) = db
        .clients
        .get_mut(client_id)
        .and_then(|c| c.accounts.get_mut(account_id))
    else {
        return 0.0;
    };
    acc.balance.available = py_round(acc.balance.available + delta, 2);
    acc.balance.current = py_round(acc.balance.current + delta, 2);
    acc.balance.current
}

fn assert_active(acc: &Account) -> Result<(), String> {
    if acc.is_active() {
        Ok(())
    } else {
        Err("Account is not active".into())
    }
}

fn method_arg<'a>(a: &Args<'a>, default: &'a str) -> Result<&'a str, String> {
    Ok(a.opt_str("method").unwrap_or(default))
}

fn check_method(method: &str) -> Result<(), String> {
    if TX_METHODS.contains(&method) {
        Ok(())
    } else {
        Err(format!(
            "Invalid transaction method '{method}': use one of {}",
            TX_METHODS.join(", ")
        ))
    }
}

/// `description or default`: an empty memo counts as none.
fn memo(a: &Args, default: impl FnOnce() -> String) -> String {
    a.opt_str("description")
        .filter(|s| !s.is_empty())
        .map_or_else(default, str::to_string)
}

fn internal_transfer(db: &mut BankDb, a: &Args) -> Result<String, String> {
    let amount = a.f64("amount")?;
    if amount <= 0.0 {
        return Err("Amount must be greater than zero".into());
    }
    let client_id = a.str("client_id")?;
    let c = client(db, client_id)?;
    let (from_id, to_id) = (a.str("from_account_id")?, a.str("to_account_id")?);
    let (Some(from), Some(to)) = (c.accounts.get(from_id), c.accounts.get(to_id)) else {
        return Err("Both accounts must belong to the same client".into());
    };
    assert_active(from)?;
    assert_active(to)?;
    if from.kind == "credit" {
        return Err("Transfers from a credit account are not supported".into());
    }
    if from.currency != to.currency {
        return Err("Cross-currency internal transfers are not supported".into());
    }
    if from.balance.available < amount {
        return Err("Insufficient available balance".into());
    }
    let debit = Posting {
        client_id,
        account: from,
        kind: "transfer",
        direction: "debit",
        amount,
        description: memo(a, || format!("Internal transfer to {to_id}")),
        method: "Internal",
    };
    let credit = Posting {
        account: to,
        direction: "credit",
        description: memo(a, || format!("Internal transfer from {from_id}")),
        ..debit
    };
    let out_id = next_tx_id(db, &[]);
    let in_id = next_tx_id(db, std::slice::from_ref(&out_id));
    let debit = debit.transaction(&out_id, Some(in_id.clone()), 0.0);
    let credit = credit.transaction(&in_id, Some(out_id), 0.0);
    // All four balance moves first (the same account twice nets out), then the rows read
    // the final balances, as the reference does.
    let (client_id, from_id, to_id) = (
        client_id.to_string(),
        from_id.to_string(),
        to_id.to_string(),
    );
    shift(db, &client_id, &from_id, -amount);
    shift(db, &client_id, &to_id, amount);
    let current = |db: &BankDb, id: &str| {
        db.clients
            .get(&client_id)
            .and_then(|c| c.accounts.get(id))
            .map_or(0.0, |x| x.balance.current)
    };
    let debit = Transaction {
        balance_after: Some(current(db, &from_id)),
        ..debit
    };
    let credit = Transaction {
        balance_after: Some(current(db, &to_id)),
        ..credit
    };
    db.add_transaction(debit.clone());
    db.add_transaction(credit.clone());
    Ok(Py::models([&debit, &credit]).to_json_str())
}

fn add_beneficiary(db: &mut BankDb, a: &Args) -> Result<String, String> {
    let client_id = a.str("client_id")?;
    let c = client(db, client_id)?;
    let allowed: Vec<String> = a
        .str_list("allowed_from_account_ids")?
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(bad) = allowed.iter().find(|id| !c.accounts.contains_key(id)) {
        return Err(format!("Allowed account {bad} does not belong to client"));
    }
    let method = a.opt_str("verification_method").unwrap_or("document");
    if !VERIFY_METHODS.contains(&method) {
        return Err(format!(
            "Invalid verification method '{method}': use one of {}",
            VERIFY_METHODS.join(", ")
        ));
    }
    let kind = a.str("beneficiary_type")?;
    if !BENEFICIARY_TYPES.contains(&kind) {
        return Err(format!(
            "Invalid beneficiary type '{kind}': use one of {}",
            BENEFICIARY_TYPES.join(", ")
        ));
    }
    let id = a.str("beneficiary_id")?;
    if db.beneficiaries.contains(id) {
        return Err(format!("Beneficiary {id} already exists"));
    }
    let text = |k: &str| a.str(k).map(str::to_string);
    let maybe = |k: &str| a.opt_str(k).map(str::to_string);
    let b = Beneficiary {
        beneficiary_id: id.to_string(),
        client_id: client_id.to_string(),
        name: BeneficiaryName {
            display_name: maybe("display_name"),
            first_name: maybe("first_name"),
            last_name: maybe("last_name"),
            business_name: maybe("business_name"),
        },
        kind: kind.to_string(),
        bank_details: BankDetails {
            bank_name: text("bank_name")?,
            account_number_masked: text("account_number_masked")?,
            routing_number: maybe("routing_number"),
            iban: maybe("iban"),
            swift_bic: maybe("swift_bic"),
        },
        address: BankAddress {
            address1: text("address1")?,
            address2: text("address2")?,
            city: text("city")?,
            state: text("state")?,
            zip: text("zip")?,
            country: text("country")?,
        },
        allowed_from_account_ids: allowed,
        transfer_limits: TransferLimits {
            per_transfer_limit: a.f64("per_transfer_limit")?,
            daily_limit: a.f64("daily_limit")?,
        },
        verification: Verification {
            status: "pending".into(),
            method: method.to_string(),
            verified_at: None,
        },
        status: "active".into(),
        created_at: CLOCK.utc_stamp(),
        notes: None,
    };
    let out = Py::model(&b).to_json_str();
    db.beneficiaries.insert(id.to_string(), b);
    if let Some(c) = db.clients.get_mut(client_id)
        && !c.beneficiary_ids.iter().any(|x| x == id)
    {
        c.beneficiary_ids.push(id.to_string());
    }
    Ok(out)
}

/// The client's beneficiary, with the reference's errors in its order.
fn owned_beneficiary<'a>(
    db: &'a BankDb,
    client_id: &str,
    id: &str,
) -> Result<&'a Beneficiary, String> {
    if !client(db, client_id)?
        .beneficiary_ids
        .iter()
        .any(|b| b == id)
    {
        return Err("Beneficiary not owned by this client".into());
    }
    beneficiary(db, id)
}

fn verify_beneficiary(db: &mut BankDb, a: &Args) -> Result<String, String> {
    let id = a.str("beneficiary_id")?;
    owned_beneficiary(db, a.str("client_id")?, id)?;
    let method = a.opt_str("method").unwrap_or("document");
    if !VERIFY_METHODS.contains(&method) {
        return Err(format!(
            "Invalid verification method '{method}': use one of {}",
            VERIFY_METHODS.join(", ")
        ));
    }
    let b = db
        .beneficiaries
        .get_mut(id)
        .ok_or("Beneficiary not found")?;
    b.verification.status = "verified".into();
    b.verification.method = method.to_string();
    b.verification.verified_at = Some(CLOCK.utc_stamp());
    Ok(Py::model(&*b).to_json_str())
}

fn beneficiary_transfer(db: &mut BankDb, a: &Args) -> Result<String, String> {
    let amount = a.f64("amount")?;
    if amount <= 0.0 {
        return Err("Amount must be greater than zero".into());
    }
    let client_id = a.str("client_id")?;
    let from_id = a.str("from_account_id")?;
    let acc = client(db, client_id)?
        .accounts
        .get(from_id)
        .ok_or("Source account must belong to the client")?;
    assert_active(acc)?;
    let b = owned_beneficiary(db, client_id, a.str("beneficiary_id")?)?;
    if b.status != "active" {
        return Err("Beneficiary is not active".into());
    }
    if b.verification.status != "verified" {
        return Err("Beneficiary must be verified before transfers".into());
    }
    if !b.allowed_from_account_ids.iter().any(|x| x == from_id) {
        return Err("This account is not authorized for transfers to the beneficiary".into());
    }
    if amount > b.transfer_limits.per_transfer_limit {
        return Err("Amount exceeds per-transfer limit for beneficiary".into());
    }
    if acc.balance.available < amount {
        return Err("Insufficient available balance".into());
    }
    let method = method_arg(a, "ACH")?;
    check_method(method)?;
    let shown = b
        .name
        .display_name
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| b.beneficiary_id.clone());
    let posting = Posting {
        client_id,
        account: acc,
        kind: "transfer",
        direction: "debit",
        amount,
        description: memo(a, || format!("Transfer to beneficiary {shown}")),
        method,
    };
    let id = next_tx_id(db, &[]);
    let tx = posting.transaction(&id, None, 0.0);
    let (client_id, from_id) = (client_id.to_string(), from_id.to_string());
    let tx = Transaction {
        balance_after: Some(shift(db, &client_id, &from_id, -amount)),
        ..tx
    };
    db.add_transaction(tx.clone());
    Ok(Py::model(&tx).to_json_str())
}

fn loan_payment(db: &mut BankDb, a: &Args) -> Result<String, String> {
    let amount = a.f64("amount")?;
    if amount <= 0.0 {
        return Err("Amount must be greater than zero".into());
    }
    let client_id = a.str("client_id")?;
    let from_id = a.str("from_account_id")?;
    let c = client(db, client_id)?;
    if !c.accounts.contains_key(from_id) {
        return Err("Source account must belong to the client".into());
    }
    let loan_id = a.str("loan_id")?;
    if loan(db, loan_id)?.client_id != client_id {
        return Err("Loan does not belong to the client".into());
    }
    let acc = c
        .accounts
        .get(from_id)
        .ok_or("Source account must belong to the client")?;
    assert_active(acc)?;
    if acc.balance.available < amount {
        return Err("Insufficient available balance".into());
    }
    let method = method_arg(a, "Internal")?;
    check_method(method)?;
    let posting = Posting {
        client_id,
        account: acc,
        kind: "payment",
        direction: "debit",
        amount,
        description: memo(a, || format!("Loan payment {loan_id}")),
        method,
    };
    let id = next_tx_id(db, &[]);
    let tx = posting.transaction(&id, None, 0.0);
    let (client_id, from_id) = (client_id.to_string(), from_id.to_string());
    let tx = Transaction {
        balance_after: Some(shift(db, &client_id, &from_id, -amount)),
        ..tx
    };
    db.add_transaction(tx.clone());
    if let Some(l) = db.loans.get_mut(loan_id) {
        l.repayment_history.push(RepaymentEntry {
            transaction_id: tx.transaction_id.clone(),
            posted_at: tx.timestamp.clone(),
            amount: tx.amount,
            currency: tx.currency.clone(),
            method: tx.method.clone(),
            principal_component: tx.amount,
            interest_component: 0.0,
            fees_component: 0.0,
        });
    }
    Ok(Py::model(&tx).to_json_str())
}

fn set_card_status(db: &mut BankDb, id: &str, status: &str) -> Result<String, String> {
    let (c, card) = card_anywhere(db, id)?;
    if card.status != "active" && card.status != "blocked" {
        return Err("Card not in a manageable state".into());
    }
    let holder = c.client_id.clone();
    let card = db
        .clients
        .get_mut(&holder)
        .and_then(|c| c.cards.get_mut(id))
        .ok_or("Card not found")?;
    card.status = status.to_string();
    Ok(Py::model(&*card).to_json_str())
}

fn set_account_status(db: &mut BankDb, id: &str, status: &str) -> Result<String, String> {
    let (c, acc) = account_anywhere(db, id)?;
    if acc.status == "closed" {
        let verb = if status == "frozen" {
            "frozen"
        } else {
            "unfrozen"
        };
        return Err(format!("Account is closed and cannot be {verb}"));
    }
    let holder = c.client_id.clone();
    let acc = db
        .clients
        .get_mut(&holder)
        .and_then(|c| c.accounts.get_mut(id))
        .ok_or("Account not found")?;
    acc.status = status.to_string();
    Ok(Py::model(&*acc).to_json_str())
}
