//! The machine-checkable rules of `policies/bank.md`, as named kit rows per write tool.
//! Grounding drops proposals that break one; graph and task verification reject calls that
//! do; the rule name groups rejections in `tracer stats`.
//!
//! The tools already refuse unknown ids, another client's accounts and beneficiaries,
//! inactive accounts, credit sources, mixed currencies, short balances, unverified or
//! inactive beneficiaries, unauthorised source accounts, amounts over the per-transfer
//! limit and cards or accounts in no manageable state. These rules add what the policy
//! asks and the tools do not check: amounts in whole cents; an internal transfer between
//! two different accounts; a new beneficiary under the id the policy prescribes, named as
//! its type requires, payable through a routing number or an IBAN, with positive limits
//! (the daily one at least the per-transfer one) and only active accounts allowed to pay
//! it; verification only of an active beneficiary not yet verified; transfers to a
//! beneficiary by ACH or wire and within its daily limit (the tool checks only the
//! per-transfer one); freezes and unfreezes that change something, with a reason for a
//! freeze; loan payments to a loan that is not closed, from an account in the loan's
//! currency, no more than what is still scheduled.
//!
//! Architecture invariant: reads the state only.

use super::db::{Account, BankDb};
use super::tools::{TX_METHODS, VERIFY_METHODS, account_anywhere};
use crate::domain::kit::policy::{Rule, rule};
use crate::domain::kit::text::{arg_list, arg_str};
use serde_json::Value;

const INTERNAL: &str = "initiate_internal_transfer";
const ADD: &str = "add_beneficiary";
const VERIFY: &str = "verify_beneficiary";
const SEND: &str = "initiate_transfer_to_beneficiary";
const LOAN: &str = "make_loan_payment";

/// The id a new beneficiary takes: the client id, `-B` and the number of beneficiaries the
/// client will then have, two digits (`03DZE1C1-B02`).
pub fn new_beneficiary_id(db: &BankDb, client_id: &str) -> Option<String> {
    let c = db.clients.get(client_id)?;
    Some(format!("{client_id}-B{:02}", c.beneficiary_ids.len() + 1))
}

fn cents(a: &Value) -> Result<(), String> {
    let x = a.get("amount").and_then(Value::as_f64).unwrap_or(0.0);
    if x > 0.0 && ((x * 100.0).round() - x * 100.0).abs() < 1e-6 {
        Ok(())
    } else {
        Err(format!(
            "an amount is positive and in whole cents, not {}",
            a.get("amount").unwrap_or(&Value::Null)
        ))
    }
}

fn own_account<'a>(db: &'a BankDb, a: &Value, key: &str) -> Option<&'a Account> {
    db.clients
        .get(arg_str(a, "client_id"))?
        .accounts
        .get(arg_str(a, key))
}

fn reason(a: &Value) -> Result<(), String> {
    if arg_str(a, "reason").trim().is_empty() {
        Err("a freeze needs the client's reason".into())
    } else {
        Ok(())
    }
}

fn card_status(db: &BankDb, a: &Value, want: &str) -> Result<(), String> {
    let id = arg_str(a, "card_id");
    match db
        .holder_of(id)
        .and_then(|c| c.cards.get(id))
        .map(|c| c.status.as_str())
    {
        Some(s) if s != want => Err(format!("the card is {s}, so this changes nothing")),
        _ => Ok(()),
    }
}

fn account_status(db: &BankDb, a: &Value, want: &str) -> Result<(), String> {
    match account_anywhere(db, arg_str(a, "account_id")).map(|(_, x)| x.status.as_str()) {
        Ok(s) if s != want => Err(format!("the account is {s}, not {want}")),
        _ => Ok(()),
    }
}

/// Checked in order; the first broken rule is reported.
pub static RULES: [Rule<BankDb>; 20] = [
    rule(INTERNAL, "amount_in_cents", |_, a| cents(a)),
    rule(INTERNAL, "two_different_accounts", |_, a| {
        if arg_str(a, "from_account_id") == arg_str(a, "to_account_id") {
            Err("an internal transfer moves money between two different accounts".into())
        } else {
            Ok(())
        }
    }),
    rule(ADD, "beneficiary_id_as_prescribed", |db, a| {
        let want = new_beneficiary_id(db, arg_str(a, "client_id"));
        match want {
            Some(w) if w != arg_str(a, "beneficiary_id") => {
                Err(format!("a new beneficiary of this client takes the id {w}"))
            }
            _ => Ok(()),
        }
    }),
    rule(ADD, "named_for_its_type", |_, a| {
        let set = |k: &str| !arg_str(a, k).trim().is_empty();
        let ok = match arg_str(a, "beneficiary_type") {
            "individual" => set("first_name") && set("last_name"),
            "business" => set("business_name"),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err("an individual needs a first and last name, a business its business name".into())
        }
    }),
    rule(ADD, "payable_route", |_, a| {
        if arg_str(a, "routing_number").is_empty() && arg_str(a, "iban").is_empty() {
            Err("a beneficiary needs a routing number or an IBAN".into())
        } else {
            Ok(())
        }
    }),
    rule(ADD, "limits_consistent", |_, a| {
        let per = a
            .get("per_transfer_limit")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let day = a.get("daily_limit").and_then(Value::as_f64).unwrap_or(0.0);
        if per > 0.0 && day >= per {
            Ok(())
        } else {
            Err("limits are positive and the daily limit is at least the per-transfer one".into())
        }
    }),
    rule(ADD, "allowed_accounts_active", |db, a| {
        let ids = arg_list(a, "allowed_from_account_ids");
        let c = db.clients.get(arg_str(a, "client_id"));
        let active = |id: &&str| {
            c.and_then(|c| c.accounts.get(id))
                .is_some_and(|x| x.is_active() && x.kind != "credit")
        };
        if !ids.is_empty() && ids.iter().all(active) {
            Ok(())
        } else {
            Err("a beneficiary is paid from at least one active, non-credit account".into())
        }
    }),
    rule(VERIFY, "verifiable", |db, a| {
        let Some(b) = db.beneficiaries.get(arg_str(a, "beneficiary_id")) else {
            return Ok(());
        };
        if b.status != "active" {
            Err(format!("the beneficiary is {}", b.status))
        } else if b.verification.status == "verified" {
            Err("the beneficiary is already verified".into())
        } else {
            Ok(())
        }
    }),
    rule(VERIFY, "known_method", |_, a| {
        let m = a
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("document");
        crate::domain::kit::policy::one_of("the verification method", m, &VERIFY_METHODS)
    }),
    rule(SEND, "amount_in_cents", |_, a| cents(a)),
    rule(SEND, "ach_or_wire", |_, a| {
        let m = a.get("method").and_then(Value::as_str).unwrap_or("ACH");
        crate::domain::kit::policy::one_of("a beneficiary transfer method", m, &TX_METHODS[..2])
    }),
    rule(SEND, "within_daily_limit", |db, a| {
        let Some(b) = db.beneficiaries.get(arg_str(a, "beneficiary_id")) else {
            return Ok(());
        };
        let x = a.get("amount").and_then(Value::as_f64).unwrap_or(0.0);
        if x > b.transfer_limits.daily_limit {
            Err("the amount exceeds the beneficiary's daily limit".into())
        } else {
            Ok(())
        }
    }),
    rule("freeze_card", "reason_given", |_, a| reason(a)),
    rule("freeze_card", "card_is_active", |db, a| {
        card_status(db, a, "active")
    }),
    rule("unfreeze_card", "card_is_blocked", |db, a| {
        card_status(db, a, "blocked")
    }),
    rule("freeze_account", "reason_given", |_, a| reason(a)),
    rule("freeze_account", "account_is_active", |db, a| {
        account_status(db, a, "active")
    }),
    rule("unfreeze_account", "account_is_frozen", |db, a| {
        account_status(db, a, "frozen")
    }),
    rule(LOAN, "amount_in_cents", |_, a| cents(a)),
    rule(LOAN, "loan_payable", |db, a| {
        let Some(l) = db.loans.get(arg_str(a, "loan_id")) else {
            return Ok(());
        };
        let owed: f64 = l
            .payment_schedule
            .iter()
            .filter(|e| e.status != "paid")
            .map(|e| e.amount)
            .sum();
        let x = a.get("amount").and_then(Value::as_f64).unwrap_or(0.0);
        if l.status == "closed" {
            Err("the loan is closed".into())
        } else if own_account(db, a, "from_account_id")
            .is_some_and(|acc| acc.currency != l.currency)
        {
            Err("a loan is paid from an account in its own currency".into())
        } else if x > owed + 1e-9 {
            Err("the payment exceeds what is still scheduled".into())
        } else {
            Ok(())
        }
    }),
];
