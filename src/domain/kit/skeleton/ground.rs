//! Grounding hooks for the skeleton: candidate arguments per tool (`propose_calls`); the
//! ids a call reveals are learnt as `tools.toml` declares (`learns`), and the rules
//! proposals respect are in `policy.rs`.
//!
//! Proposals are about the context's member: what the conversation revealed comes first,
//! then the member's own loans and books, then the catalogue, each in a seeded order. Write
//! proposals are shaped to succeed: only books with a free copy the member does not hold,
//! only active loans with renewals left.
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{Member, SkeletonDb};
use super::policy::MAX_RENEWALS;
use crate::domain::GroundingContext;
use crate::domain::kit::propose;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// At most this many proposals per call.
const MAX_PROPOSALS: usize = 6;

fn member_of<'a>(db: &'a SkeletonDb, ctx: &GroundingContext) -> Option<&'a Member> {
    propose::customer(ctx, "member_id", &db.members)
}

/// Book ids: those the conversation revealed, the member's own, then the catalogue.
fn books(
    db: &SkeletonDb,
    ctx: &GroundingContext,
    member: Option<&Member>,
    rng: &mut ChaCha8Rng,
    keep: impl Fn(&str) -> bool,
) -> Vec<String> {
    let own: Vec<String> = member
        .map(|m| db.loans_of(m).map(|l| l.book_id.clone()).collect())
        .unwrap_or_default();
    let catalogue: Vec<String> = db.books.keys().map(str::to_string).collect();
    propose::tiered(ctx, "book_id", vec![own, catalogue], keep, rng)
}

pub fn propose_calls(
    db: &SkeletonDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let member = member_of(db, ctx);
    let loans = |rng: &mut ChaCha8Rng, keep: &dyn Fn(&str) -> bool| {
        let own = member.map(|m| m.loans.clone()).unwrap_or_default();
        propose::ranked(ctx, "loan_id", own, keep, rng)
    };
    let out: Vec<Value> = match tool {
        "find_member_id_by_email" => member
            .map(|m| json!({"email": m.email}))
            .into_iter()
            .collect(),
        "get_member_details" => member
            .map(|m| json!({"member_id": m.member_id}))
            .into_iter()
            .collect(),
        // An author of a book the member borrowed (they may want more by them), then others.
        "list_books" => {
            let mut authors: Vec<String> = Vec::new();
            for id in books(db, ctx, member, rng, |_| true) {
                if let Some(b) = db.books.get(&id)
                    && !authors.contains(&b.author)
                {
                    authors.push(b.author.clone());
                }
            }
            authors.into_iter().map(|a| json!({"author": a})).collect()
        }
        "get_book_details" => books(db, ctx, member, rng, |_| true)
            .into_iter()
            .map(|id| json!({"book_id": id}))
            .collect(),
        "get_loan_details" => loans(rng, &|_| true)
            .into_iter()
            .map(|id| json!({"loan_id": id}))
            .collect(),
        "borrow_book" => {
            let Some(m) = member else {
                return Vec::new();
            };
            let held: Vec<String> = db
                .loans_of(m)
                .filter(|l| l.is_active())
                .map(|l| l.book_id.clone())
                .collect();
            let free = |id: &str| {
                db.books.get(id).is_some_and(|b| b.available() > 0) && !held.iter().any(|h| h == id)
            };
            books(db, ctx, None, rng, free)
                .into_iter()
                .map(|id| json!({"member_id": m.member_id, "book_id": id}))
                .collect()
        }
        "renew_loan" => loans(rng, &|id: &str| {
            db.loans
                .get(id)
                .is_some_and(|l| l.is_active() && l.renewals < MAX_RENEWALS)
        })
        .into_iter()
        .map(|id| json!({"loan_id": id}))
        .collect(),
        _ => Vec::new(),
    };
    out.into_iter().take(MAX_PROPOSALS).collect()
}
