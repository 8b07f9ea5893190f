//! Refinement and verification hooks for bank: what a client knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: sentences in
//! `requests.toml`, variables computed here), what the agent must tell them of their
//! transactions and loans (`required_outputs`) and what the agent can look up once they are
//! identified (`customer_records`). `tools.toml` declares which argument values they could
//! never know (`internal`: account, card, loan and beneficiary ids) and what the other
//! lookups tell (`tells`: an account's status and current balance, a card's status and
//! both daily limits, a payee's verification status and per-transfer limit).
//!
//! Clients authenticate with their email (the policy's first step). They name accounts by
//! type and last four digits, cards by brand, type and last digits, loans by kind (and
//! principal when they hold two of a kind), payees by the name shown for them, and amounts
//! in the account's currency.
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{Account, BankDb, Card, Client, Loan};
use super::tools::account_listing;
use crate::domain::UserFact;
use crate::domain::kit::facts::{self, Identity};
use crate::domain::kit::pyjson::Py;
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_list, arg_str, money_in, values_at};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// "your savings account ending in 4821".
pub fn account_text(a: &Account) -> String {
    format!("your {} account ending in {}", a.kind, a.last_four())
}

/// "your Visa debit card ending in 1234".
pub fn card_text(c: &Card) -> String {
    format!(
        "your {} {} card ending in {}",
        c.extra_info.brand, c.kind, c.extra_info.last_four
    )
}

/// "your auto loan" (with the principal when the client holds two of that kind).
pub fn loan_text(db: &BankDb, c: &Client, l: &Loan) -> String {
    let kind = l.kind.replace('_', " ");
    let same = c
        .loan_ids
        .iter()
        .filter_map(|id| db.loans.get(id))
        .filter(|x| x.kind == l.kind)
        .count();
    if same > 1 {
        format!("your {kind} loan of {}", money_in(l.principal, &l.currency))
    } else {
        format!("your {kind} loan")
    }
}

fn account_of<'a>(c: &'a Client, args: &Value, key: &str) -> Option<&'a Account> {
    c.accounts.get(arg_str(args, key))
}

pub fn user_facts(db: &BankDb, client_id: &str) -> Vec<UserFact> {
    let Some(c) = db.clients.get(client_id) else {
        return Vec::new();
    };
    // Authenticating gives the agent the client id, and with it (by the policy's rule) the
    // ids of the next payees the client adds.
    let n = c.beneficiary_ids.len();
    let next: Vec<String> = (n + 1..=n + 3)
        .map(|k| format!("{client_id}-B{k:02}"))
        .collect();
    let mut ids = vec![client_id];
    ids.extend(next.iter().map(String::as_str));
    let mut out = vec![
        facts::identity(Identity::Email(&c.contact.email), &ids),
        facts::name(&c.name.first_name, &c.name.last_name),
    ];
    for a in c.accounts.values() {
        out.push(facts::fact(
            "entity",
            format!(
                "You hold a {} account in {} ending in {}.",
                a.kind,
                a.currency,
                a.last_four()
            ),
            vec![a.last_four().to_string()],
            &[&a.account_id],
        ));
    }
    for card in c.cards.values() {
        let text = card_text(card);
        out.push(facts::fact(
            "entity",
            format!("You have {}.", text.replacen("your ", "a ", 1)),
            vec![card.extra_info.last_four.clone()],
            &[&card.card_id],
        ));
    }
    for l in c.loan_ids.iter().filter_map(|id| db.loans.get(id)) {
        out.push(facts::fact(
            "entity",
            format!(
                "You have {}.",
                loan_text(db, c, l).replacen("your ", "a ", 1)
            ),
            vec![l.kind.replace('_', " ")],
            &[&l.loan_id],
        ));
    }
    for b in c
        .beneficiary_ids
        .iter()
        .filter_map(|id| db.beneficiaries.get(id))
    {
        let name = b.name.listing();
        out.push(facts::fact(
            "entity",
            format!("You have a saved payee, {name}."),
            vec![name],
            &[&b.beneficiary_id],
        ));
    }
    out
}

pub fn describe_request(db: &BankDb, tool: &str, args: &Value, output: &str) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let mut table = tool.to_string();
    let amount = args.get("amount").and_then(Value::as_f64);
    match tool {
        "initiate_internal_transfer" => {
            let c = db.clients.get(arg_str(args, "client_id"))?;
            let from = account_of(c, args, "from_account_id")?;
            vars.insert("from", account_text(from));
            vars.insert("to", account_text(account_of(c, args, "to_account_id")?));
            vars.insert("amount", money_in(amount?, &from.currency));
        }
        "add_beneficiary" => {
            let c = db.clients.get(arg_str(args, "client_id"))?;
            let from: Vec<&Account> = arg_list(args, "allowed_from_account_ids")
                .iter()
                .filter_map(|id| c.accounts.get(id))
                .collect();
            let first = from.first()?;
            vars.insert(
                "from",
                crate::domain::kit::text::join_and(
                    &from.iter().map(|a| account_text(a)).collect::<Vec<_>>(),
                ),
            );
            let limit = |k: &str| args.get(k).and_then(Value::as_f64);
            vars.insert(
                "per",
                money_in(limit("per_transfer_limit")?, &first.currency),
            );
            vars.insert("daily", money_in(limit("daily_limit")?, &first.currency));
            let who = match arg_str(args, "beneficiary_type") {
                "business" => format!("a business, {}", arg_str(args, "business_name")),
                kind => format!(
                    "{} {}, {} {}",
                    if kind == "individual" { "an" } else { "a" },
                    kind,
                    arg_str(args, "first_name"),
                    arg_str(args, "last_name")
                ),
            };
            vars.insert("who", who);
            let route = if arg_str(args, "iban").is_empty() {
                format!("routing number {}", arg_str(args, "routing_number"))
            } else {
                format!(
                    "IBAN {}, SWIFT/BIC {}",
                    arg_str(args, "iban"),
                    arg_str(args, "swift_bic")
                )
            };
            vars.insert("route", route);
            let place: Vec<&str> = ["address1", "address2", "city", "state", "zip", "country"]
                .iter()
                .map(|k| arg_str(args, k))
                .filter(|s| !s.is_empty())
                .collect();
            vars.insert("address", place.join(", "));
            vars.insert(
                "method",
                args.get("verification_method")
                    .and_then(Value::as_str)
                    .unwrap_or("document")
                    .replace('_', " "),
            );
        }
        "verify_beneficiary" | "initiate_transfer_to_beneficiary" => {
            let c = db.clients.get(arg_str(args, "client_id"))?;
            let b = db.beneficiaries.get(arg_str(args, "beneficiary_id"))?;
            vars.insert("payee", b.name.listing());
            if tool == "verify_beneficiary" {
                let method = args.get("method").and_then(Value::as_str);
                vars.insert("method", method.unwrap_or("document").replace('_', " "));
            } else {
                let from = account_of(c, args, "from_account_id")?;
                vars.insert("from", account_text(from));
                vars.insert("amount", money_in(amount?, &from.currency));
                let method = args.get("method").and_then(Value::as_str).unwrap_or("ACH");
                vars.insert(
                    "how",
                    if method == "Wire" {
                        "by wire"
                    } else {
                        "by ACH"
                    }
                    .into(),
                );
            }
        }
        "freeze_card" | "unfreeze_card" => {
            let id = arg_str(args, "card_id");
            vars.insert("card", card_text(db.holder_of(id)?.cards.get(id)?));
        }
        "freeze_account" | "unfreeze_account" => {
            let id = arg_str(args, "account_id");
            vars.insert("account", account_text(db.holder_of(id)?.accounts.get(id)?));
        }
        "get_account_details" | "get_recent_transactions" => {
            let id = arg_str(args, "account_id");
            vars.insert("account", account_text(db.holder_of(id)?.accounts.get(id)?));
            // A newest entry whose description carries an id is asked about by amount only.
            if tool == "get_recent_transactions" {
                let newest = serde_json::from_str::<Value>(output).ok();
                let described = newest.is_some_and(|v| told_description(&v).is_some());
                let case = if described { "described" } else { "amount" };
                table = format!("{tool}.{case}");
            }
        }
        "get_card_details" => {
            let id = arg_str(args, "card_id");
            vars.insert("card", card_text(db.holder_of(id)?.cards.get(id)?));
        }
        "get_loan_details" => {
            let l = db.loans.get(arg_str(args, "loan_id"))?;
            vars.insert("loan", loan_text(db, db.clients.get(&l.client_id)?, l));
        }
        "get_beneficiary_details" => {
            let b = db.beneficiaries.get(arg_str(args, "beneficiary_id"))?;
            vars.insert("payee", b.name.listing());
        }
        "make_loan_payment" => {
            let c = db.clients.get(arg_str(args, "client_id"))?;
            let l = db.loans.get(arg_str(args, "loan_id"))?;
            let from = account_of(c, args, "from_account_id")?;
            vars.insert("loan", loan_text(db, c, l));
            vars.insert("from", account_text(from));
            vars.insert("amount", money_in(amount?, &from.currency));
            let case = match l.due_at(&super::CLOCK.utc_stamp()) {
                Some((0, d)) if Some(d.amount) == amount => "installment",
                Some((_, d)) if Some(d.amount) == amount => "following",
                _ => "other",
            };
            table = format!("{tool}.{case}");
        }
        _ => {}
    }
    REQUESTS.render(&table, args, &vars)
}

/// The newest transaction's description as a customer is told it: it names what the entry
/// was ("Card purchase at Nordlys Café"), unless it carries an id ("Internal transfer to
/// 3ADT79A5", "Loan payment IWH5PSK9"); then the request asks for the amount alone.
fn told_description(recent: &Value) -> Option<&str> {
    recent
        .pointer("/0/description")
        .and_then(Value::as_str)
        .filter(|d| !d.chars().any(|c| c.is_ascii_digit()))
}

/// What the transaction and loan lookups' request sentences (`requests.toml`) all ask for,
/// read from the output: the newest transaction's description (when it names no account
/// id) and amount; a loan's status and the next installment's due date and amount. Amounts
/// as Python prints them (`1300.0`), which is how the tool shows them. The other lookups'
/// values are declared in `tools.toml` (`tells`); the payee list falls to the shared
/// default (the names).
pub fn required_outputs(_db: &BankDb, tool: &str, _args: &Value, output: &str) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(output) else {
        return Vec::new();
    };
    match tool {
        "get_recent_transactions" => {
            let mut out: Vec<String> = told_description(&v)
                .map(str::to_string)
                .into_iter()
                .collect();
            out.extend(values_at(&v, &["/0/amount"]));
            out
        }
        "get_loan_details" => {
            let next = v["payment_schedule"]
                .as_array()
                .and_then(|s| s.iter().position(|e| e["status"] == "due"));
            let mut out = values_at(&v, &["/status"]);
            if let Some(i) = next {
                out.extend(values_at(
                    &v,
                    &[
                        &format!("/payment_schedule/{i}/due_date"),
                        &format!("/payment_schedule/{i}/amount"),
                    ],
                ));
            }
            out
        }
        _ => Vec::new(),
    }
}

pub fn customer_records(db: &BankDb, client_id: &str) -> Vec<String> {
    let Some(c) = db.clients.get(client_id) else {
        return Vec::new();
    };
    let mut records = vec![
        client_id.to_string(),
        Py::model(c).to_json_str(),
        account_listing(c),
    ];
    for l in c.loan_ids.iter().filter_map(|id| db.loans.get(id)) {
        records.push(Py::model(l).to_json_str());
    }
    for b in c
        .beneficiary_ids
        .iter()
        .filter_map(|id| db.beneficiaries.get(id))
    {
        records.push(Py::model(b).to_json_str());
    }
    records
}
