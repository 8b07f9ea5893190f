//! The twenty-two bank tools: the reference's nineteen (same names, arguments, result shapes
//! and error strings, checks in the same order), its generic `calculate` and
//! `transfer_to_human_agents`, and the kit's `think`, so the split is the paper's 13 read /
//! 9 write. Outputs are tau2's `to_json_str` of what the reference returns: rows as
//! `model_dump()` JSON, a client id as a bare string, the two listings as
//! `json.dumps(..., sort_keys=True)` text. Descriptions are ours.
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
use crate::domain::kit::calc::py_round;
use crate::domain::kit::clock::SimClock;
use crate::domain::kit::ids::counter_id;
use crate::domain::kit::pyjson::{Py, dumps};
use crate::domain::kit::schema::{
    integer, nullable, number, object, string, string_list, strings, tool, with_intent,
};
use crate::domain::kit::{generic, tau2_generic};
use crate::domain::{Args, Intent, Tool, ToolKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The bank's "now": every stamp a tool writes (`2025-10-20T09:00:00Z`).
pub const CLOCK: SimClock = SimClock::new("2025-10-20T09:00:00");

/// The reference's enums a tool checks before it changes anything.
pub const TX_METHODS: [&str; 5] = ["ACH", "Wire", "Card", "ATM", "Internal"];
pub const VERIFY_METHODS: [&str; 3] = ["micro_deposits", "document", "instant"];
pub const BENEFICIARY_TYPES: [&str; 2] = ["individual", "business"];

/// All tools, in the order they are listed to a model.
pub fn all() -> &'static [Tool<BankDb>] {
    static TOOLS: LazyLock<Vec<Tool<BankDb>>> = LazyLock::new(build);
    &TOOLS
}

const CLIENT: &str = "Client id, as find_client_id_by_email returns it.";
const ACCOUNT: &str = "Account id, e.g. '1U8RIZ41'.";
const CARD: &str = "Card id, e.g. 'CRM6JY91'.";
const BENEFICIARY: &str = "Beneficiary id.";

fn opt(desc: &str) -> Value {
    nullable(string(desc))
}

fn build() -> Vec<Tool<BankDb>> {
    use ToolKind::{Read, Write};
    let amount = || number("Amount in the account's currency, greater than zero.");
    let memo = || opt("Optional memo; a default description is used when omitted.");
    vec![
        tau2_generic::calculate(),
        generic::transfer_to_human_agents(),
        tool(
            "find_client_id_by_email",
            Read,
            "Find the client id for an email address (case does not matter; the first matching client).",
            strings(&[("email", "The client's email, e.g. 'ana.ruiz@example.es'.")]),
            |db, a| {
                let email = a.str("email")?.to_lowercase();
                db.clients_in_order()
                    .find(|c| c.contact.email.to_lowercase() == email)
                    .map(|c| c.client_id.clone())
                    .ok_or_else(|| "Client not found".to_string())
            },
        ),
        tool(
            "get_client_details",
            Read,
            "Show a client's profile: name, contact, address, accounts and cards (with balances, status and limits), loan ids, beneficiary ids, KYC.",
            strings(&[("client_id", CLIENT)]),
            |db, a| Ok(Py::model(client(db, a.str("client_id")?)?).to_json_str()),
        ),
        tool(
            "get_account_details",
            Read,
            "Show one account: type, currency, status, masked number, balances (current, available, on hold), rate, overdraft limit, features.",
            strings(&[("account_id", ACCOUNT)]),
            |db, a| Ok(Py::model(account_anywhere(db, a.str("account_id")?)?.1).to_json_str()),
        ),
        tool(
            "get_card_details",
            Read,
            "Show one card: type, linked account, status, issuer, brand, last four digits, expiry, limits.",
            strings(&[("card_id", CARD)]),
            |db, a| Ok(Py::model(card_anywhere(db, a.str("card_id")?)?.1).to_json_str()),
        ),
        tool(
            "get_loan_details",
            Read,
            "Show one loan: type, principal, rate, term, dates, status, collateral, payment schedule and repayment history.",
            strings(&[("loan_id", "Loan id.")]),
            |db, a| Ok(Py::model(loan(db, a.str("loan_id")?)?).to_json_str()),
        ),
        tool(
            "get_beneficiary_details",
            Read,
            "Show one beneficiary: names, type, bank details, address, accounts allowed to pay it, transfer limits, verification and status.",
            strings(&[("beneficiary_id", BENEFICIARY)]),
            |db, a| Ok(Py::model(beneficiary(db, a.str("beneficiary_id")?)?).to_json_str()),
        ),
        tool(
            "list_client_accounts",
            Read,
            "List a client's accounts as a JSON object from account id to {currency, masked, status, type}.",
            strings(&[("client_id", CLIENT)]),
            |db, a| Ok(account_listing(client(db, a.str("client_id")?)?)),
        ),
        tool(
            "list_client_beneficiaries",
            Read,
            "List a client's beneficiaries as a JSON object from beneficiary id to the name shown for it.",
            strings(&[("client_id", CLIENT)]),
            |db, a| {
                let c = client(db, a.str("client_id")?)?;
                let names: BTreeMap<&str, String> = c
                    .beneficiary_ids
                    .iter()
                    .filter_map(|id| db.beneficiaries.get(id))
                    .map(|b| (b.beneficiary_id.as_str(), b.name.listing()))
                    .collect();
                Ok(dumps(&names))
            },
        ),
        tool(
            "get_recent_transactions",
            Read,
            "The most recent posted or pending transactions of an account, newest first.",
            object(
                &[
                    ("account_id", string(ACCOUNT)),
                    ("limit", integer("How many to return (default 10).")),
                ],
                &["account_id"],
            ),
            recent_transactions,
        ),
        tool(
            "search_transactions",
            Read,
            "Search one of the client's accounts' transactions, newest first. Optional filters: timestamp range (ISO text, inclusive, compared as text), amount range, type, status, and a case-insensitive merchant name fragment.",
            object(
                &[
                    ("client_id", string(CLIENT)),
                    ("account_id", string("An account id the client owns.")),
                    ("start_date", opt("Earliest timestamp, e.g. '2025-08-01'.")),
                    (
                        "end_date",
                        opt("Latest timestamp, e.g. '2025-08-31T23:59:59Z'."),
                    ),
                    ("min_amount", nullable(number("Smallest amount."))),
                    ("max_amount", nullable(number("Largest amount."))),
                    (
                        "transaction_type",
                        opt("deposit, withdrawal, transfer, payment, fee or interest."),
                    ),
                    ("status", opt("pending, posted or reversed.")),
                    (
                        "merchant_name_contains",
                        opt("Part of the merchant's name."),
                    ),
                ],
                &["client_id", "account_id"],
            ),
            search_transactions,
        ),
        with_intent(
            tool(
                "initiate_internal_transfer",
                Write,
                "Move money between two active accounts of the same client in the same currency; the source may not be a credit account and needs enough available balance. Creates a debit and a credit transaction. State the details and get an explicit yes first.",
                object(
                    &[
                        ("client_id", string(CLIENT)),
                        ("from_account_id", string("Source account id.")),
                        ("to_account_id", string("Destination account id.")),
                        ("amount", amount()),
                        ("description", memo()),
                    ],
                    &["client_id", "from_account_id", "to_account_id", "amount"],
                ),
                internal_transfer,
            ),
            Intent::Pay,
        ),
        tool(
            "add_beneficiary",
            Write,
            "Add a payee for a client. Every argument must be given; unknown optional details are null. The beneficiary starts active with verification pending. State the details and get an explicit yes first.",
            object(
                &[
                    ("client_id", string(CLIENT)),
                    (
                        "beneficiary_id",
                        string("Id of the new beneficiary (see the policy)."),
                    ),
                    ("beneficiary_type", string("individual or business.")),
                    ("display_name", opt("Name shown for the beneficiary.")),
                    ("first_name", opt("First name (individuals).")),
                    ("last_name", opt("Last name (individuals).")),
                    ("business_name", opt("Business name (businesses).")),
                    ("bank_name", string("The beneficiary's bank.")),
                    (
                        "account_number_masked",
                        string("Masked account number, e.g. '****1111'."),
                    ),
                    ("routing_number", opt("Routing number, if any.")),
                    ("iban", opt("IBAN, if any.")),
                    ("swift_bic", opt("SWIFT/BIC code, if any.")),
                    ("address1", string("Address line 1.")),
                    ("address2", string("Address line 2 (may be empty).")),
                    ("city", string("City.")),
                    ("state", string("State or region.")),
                    ("zip", string("Postal code.")),
                    ("country", string("Country.")),
                    (
                        "allowed_from_account_ids",
                        string_list("The client's accounts that may pay this beneficiary."),
                    ),
                    ("per_transfer_limit", number("Largest single transfer.")),
                    ("daily_limit", number("Largest total per day.")),
                    (
                        "verification_method",
                        string("micro_deposits, document (default) or instant."),
                    ),
                ],
                &[
                    "client_id",
                    "beneficiary_id",
                    "beneficiary_type",
                    "display_name",
                    "first_name",
                    "last_name",
                    "business_name",
                    "bank_name",
                    "account_number_masked",
                    "routing_number",
                    "iban",
                    "swift_bic",
                    "address1",
                    "address2",
                    "city",
                    "state",
                    "zip",
                    "country",
                    "allowed_from_account_ids",
                    "per_transfer_limit",
                    "daily_limit",
                ],
            ),
            add_beneficiary,
        ),
        with_intent(
            tool(
                "verify_beneficiary",
                Write,
                "Mark one of the client's beneficiaries as verified, with the method used (micro_deposits, document or instant; default document). Get an explicit yes first.",
                object(
                    &[
                        ("client_id", string(CLIENT)),
                        ("beneficiary_id", string(BENEFICIARY)),
                        ("method", string("micro_deposits, document or instant.")),
                    ],
                    &["client_id", "beneficiary_id"],
                ),
                verify_beneficiary,
            ),
            Intent::Change,
        ),
        tool(
            "initiate_transfer_to_beneficiary",
            Write,
            "Send money from an active account of the client to one of its active, verified beneficiaries; the account must be allowed for that beneficiary, the amount within its per-transfer limit and the available balance. Creates one debit transaction. State the details and get an explicit yes first.",
            object(
                &[
                    ("client_id", string(CLIENT)),
                    ("from_account_id", string("Source account id.")),
                    ("beneficiary_id", string(BENEFICIARY)),
                    ("amount", amount()),
                    ("method", string("ACH (default) or Wire.")),
                    ("description", memo()),
                ],
                &["client_id", "from_account_id", "beneficiary_id", "amount"],
            ),
            beneficiary_transfer,
        ),
        with_intent(
            tool(
                "freeze_card",
                Write,
                "Block a card that is active (a blocked card stays blocked). Get an explicit yes first.",
                strings(&[("card_id", CARD), ("reason", "Why the card is blocked.")]),
                |db, a| {
                    a.str("reason")?;
                    set_card_status(db, a.str("card_id")?, "blocked")
                },
            ),
            Intent::Change,
        ),
        with_intent(
            tool(
                "unfreeze_card",
                Write,
                "Unblock a blocked card back to active (an active card stays active). Get an explicit yes first.",
                strings(&[("card_id", CARD)]),
                |db, a| set_card_status(db, a.str("card_id")?, "active"),
            ),
            Intent::Change,
        ),
        with_intent(
            tool(
                "freeze_account",
                Write,
                "Freeze an account that is not closed. Get an explicit yes first.",
                strings(&[
                    ("account_id", ACCOUNT),
                    ("reason", "Why the account is frozen."),
                ]),
                |db, a| {
                    a.str("reason")?;
                    set_account_status(db, a.str("account_id")?, "frozen")
                },
            ),
            Intent::Change,
        ),
        with_intent(
            tool(
                "unfreeze_account",
                Write,
                "Set an account that is not closed back to active. Get an explicit yes first.",
                strings(&[("account_id", ACCOUNT)]),
                |db, a| set_account_status(db, a.str("account_id")?, "active"),
            ),
            Intent::Change,
        ),
        tool(
            "make_loan_payment",
            Write,
            "Pay toward one of the client's loans from an active account of the client with enough available balance; recorded as a principal repayment. State the details and get an explicit yes first.",
            object(
                &[
                    ("client_id", string(CLIENT)),
                    ("loan_id", string("Loan id.")),
                    ("from_account_id", string("Source account id.")),
                    ("amount", amount()),
                    (
                        "method",
                        string("Internal (default), ACH, Wire, Card or ATM."),
                    ),
                    ("description", memo()),
                ],
                &["client_id", "loan_id", "from_account_id", "amount"],
            ),
            loan_payment,
        ),
        generic::think(),
    ]
}

pub fn client<'a>(db: &'a BankDb, id: &str) -> Result<&'a Client, String> {
    db.clients.get_or(id, "Client not found")
}

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

pub fn loan<'a>(db: &'a BankDb, id: &str) -> Result<&'a Loan, String> {
    db.loans.get_or(id, "Loan not found")
}

pub fn beneficiary<'a>(db: &'a BankDb, id: &str) -> Result<&'a Beneficiary, String> {
    db.beneficiaries.get_or(id, "Beneficiary not found")
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
