//! Grounding hooks for bank: candidate arguments per tool (`propose_calls`); the ids a call
//! reveals are learnt as `tools.toml` declares (`learns`), and the rules proposals respect
//! are in `policy.rs`.
//!
//! Proposals are about the context's client: entities the conversation revealed come
//! first, then the client's own in a seeded order. Write proposals are shaped to succeed:
//! internal transfers between two active accounts in one currency from a non-credit source,
//! for a round share of its available balance; new beneficiaries under the prescribed id,
//! paid from an active account; verification of pending or failed active beneficiaries;
//! beneficiary transfers within every limit and the balance; card and account freezes
//! only where they change something; loan payments of exactly the next installment due
//! (the amount the client's statement shows) from an account in the loan's currency.
//! Transfer, payment and verification methods are left to their defaults: a method the
//! reference's enum refuses makes it debit the account before failing (a departure), so
//! proposals never pass one that the differential sampler could corrupt.
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{Account, BankDb, Client};
use super::generate::{random_payee, round_share};
use super::policy::new_beneficiary_id;
use crate::domain::GroundingContext;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// Reasons a client gives for a freeze: the `reason` argument, which the request quotes
/// ("...; the reason: card lost."), so each is a noun phrase.
pub const REASONS: [&str; 4] = [
    "card lost",
    "suspected fraud",
    "card stolen",
    "travelling abroad",
];
pub const ACCOUNT_REASONS: [&str; 3] = [
    "suspicious activity",
    "account compromised",
    "going abroad for a long stay",
];

fn client_of<'a>(db: &'a BankDb, ctx: &GroundingContext) -> Option<&'a Client> {
    propose::customer(ctx, "client_id", &db.clients)
}

/// The client's accounts matching `keep`: known ones first, the rest shuffled.
fn accounts<'a>(
    c: &'a Client,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
    keep: impl Fn(&Account) -> bool,
) -> Vec<&'a Account> {
    let own: Vec<String> = c.accounts.keys().map(str::to_string).collect();
    let row = |id: &str| c.accounts.get(id).filter(|a| keep(a));
    propose::ranked_rows(ctx, "account_id", own, row, rng)
}

fn spendable(a: &Account) -> bool {
    a.is_active() && a.kind != "credit" && a.balance.available >= 1.0
}

pub fn propose_calls(
    db: &BankDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let Some(c) = client_of(db, ctx) else {
        return match tool {
            "think" => vec![json!({"thought": "Authenticate the client by email first."})],
            _ => Vec::new(),
        };
    };
    let id = c.client_id.as_str();
    let ranked = |key: &str, own: Vec<String>, rng: &mut ChaCha8Rng| {
        propose::ranked(ctx, key, own, |_| true, rng)
    };
    let mut out: Vec<Value> = Vec::new();
    match tool {
        "find_client_id_by_email" => out.push(json!({"email": c.contact.email})),
        "get_client_details" | "list_client_accounts" | "list_client_beneficiaries" => {
            out.push(json!({"client_id": id}));
        }
        "get_account_details" => {
            for a in accounts(c, ctx, rng, |_| true) {
                out.push(json!({"account_id": a.account_id}));
            }
        }
        "get_recent_transactions" => {
            for (k, a) in accounts(c, ctx, rng, |_| true).into_iter().enumerate() {
                out.push(if k % 2 == 0 {
                    json!({"account_id": a.account_id})
                } else {
                    json!({"account_id": a.account_id, "limit": 3})
                });
            }
        }
        "search_transactions" => {
            for (k, a) in accounts(c, ctx, rng, |_| true).into_iter().enumerate() {
                out.push(match k % 3 {
                    0 => json!({"client_id": id, "account_id": a.account_id}),
                    1 => json!({"client_id": id, "account_id": a.account_id, "status": "posted"}),
                    _ => json!({"client_id": id, "account_id": a.account_id,
                        "start_date": "2025-09-01"}),
                });
            }
        }
        "get_card_details" => {
            let own = c.cards.keys().map(str::to_string).collect();
            for card in ranked("card_id", own, rng) {
                out.push(json!({"card_id": card}));
            }
        }
        "get_loan_details" => {
            for l in ranked("loan_id", c.loan_ids.clone(), rng) {
                out.push(json!({"loan_id": l}));
            }
        }
        "get_beneficiary_details" => {
            for b in ranked("beneficiary_id", c.beneficiary_ids.clone(), rng) {
                out.push(json!({"beneficiary_id": b}));
            }
        }
        "calculate" => {
            for a in accounts(c, ctx, rng, |_| true).into_iter().take(2) {
                out.push(json!({"expression": format!("{} - {}",
                    a.balance.current, a.balance.on_hold)}));
            }
        }
        "think" => out.push(json!({"thought": format!(
            "Client {id}: check ownership, status, balance and limits before any change.")})),
        "transfer_to_human_agents" => out.push(json!({"summary": format!(
            "Client {id} needs help the banking tools cannot give.")})),
        "initiate_internal_transfer" => {
            for from in accounts(c, ctx, rng, spendable) {
                for to in c.accounts.values().filter(|t| {
                    t.account_id != from.account_id && t.is_active() && t.currency == from.currency
                }) {
                    out.push(json!({"client_id": id, "from_account_id": from.account_id,
                        "to_account_id": to.account_id,
                        "amount": round_share(from.balance.available)}));
                }
            }
        }
        "add_beneficiary" => {
            let Some(new_id) = new_beneficiary_id(db, id) else {
                return out;
            };
            if db.beneficiaries.contains(&new_id) {
                return out;
            }
            for a in accounts(c, ctx, rng, |a| a.is_active() && a.kind != "credit")
                .into_iter()
                .take(2)
            {
                let mut args = random_payee(rng, &c.address.country, a.balance.available);
                args["client_id"] = json!(id);
                args["beneficiary_id"] = json!(new_id);
                args["allowed_from_account_ids"] = json!([a.account_id]);
                out.push(args);
            }
        }
        "verify_beneficiary" => {
            for b in ranked("beneficiary_id", c.beneficiary_ids.clone(), rng) {
                let Some(b) = db.beneficiaries.get(&b) else {
                    continue;
                };
                if b.status == "active" && b.verification.status != "verified" {
                    out.push(json!({"client_id": id, "beneficiary_id": b.beneficiary_id}));
                }
            }
        }
        "initiate_transfer_to_beneficiary" => {
            for b in ranked("beneficiary_id", c.beneficiary_ids.clone(), rng) {
                let Some(b) = db.beneficiaries.get(&b) else {
                    continue;
                };
                if b.status != "active" || b.verification.status != "verified" {
                    continue;
                }
                for from in b.allowed_from_account_ids.iter() {
                    let Some(a) = c.accounts.get(from).filter(|a| spendable(a)) else {
                        continue;
                    };
                    let cap = b
                        .transfer_limits
                        .per_transfer_limit
                        .min(b.transfer_limits.daily_limit);
                    let amount = round_share(a.balance.available.min(cap * 5.0));
                    if amount > cap {
                        continue;
                    }
                    out.push(json!({"client_id": id, "from_account_id": from,
                        "beneficiary_id": b.beneficiary_id, "amount": amount}));
                }
            }
        }
        "freeze_card" | "unfreeze_card" => {
            let want = if tool == "freeze_card" {
                "active"
            } else {
                "blocked"
            };
            let own = c.cards.keys().map(str::to_string).collect();
            for card in ranked("card_id", own, rng) {
                if c.cards.get(&card).is_some_and(|x| x.status == want) {
                    out.push(if tool == "freeze_card" {
                        let reason = REASONS[rng.random_range(0..REASONS.len())];
                        json!({"card_id": card, "reason": reason})
                    } else {
                        json!({"card_id": card})
                    });
                }
            }
        }
        "freeze_account" => {
            for a in accounts(c, ctx, rng, Account::is_active) {
                let reason = ACCOUNT_REASONS[rng.random_range(0..ACCOUNT_REASONS.len())];
                out.push(json!({"account_id": a.account_id, "reason": reason}));
            }
        }
        "unfreeze_account" => {
            for a in accounts(c, ctx, rng, |a| a.status == "frozen") {
                out.push(json!({"account_id": a.account_id}));
            }
        }
        "make_loan_payment" => {
            let now = super::CLOCK.utc_stamp();
            for l in ranked("loan_id", c.loan_ids.clone(), rng) {
                let Some(loan) = db.loans.get(&l) else {
                    continue;
                };
                // The installment due, or after a payment in this conversation the
                // following one (no client pays one installment twice).
                let Some((_, due)) = loan.due_at(&now) else {
                    continue;
                };
                for a in accounts(c, ctx, rng, |a| {
                    spendable(a) && a.currency == loan.currency && a.balance.available >= due.amount
                }) {
                    out.push(json!({"client_id": id, "loan_id": l,
                        "from_account_id": a.account_id, "amount": due.amount}));
                }
            }
        }
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}
