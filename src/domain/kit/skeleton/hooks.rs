//! Refinement and verification hooks for the skeleton: what a member knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: sentences in
//! `requests.toml`, variables computed here), what the agent must tell them where
//! `tools.toml`'s `tells` cannot point at it (`required_outputs`) and what the agent can
//! look up once they are identified (`customer_records`). `tools.toml` declares the rest:
//! argument values a member never knows (`internal`: none here), fields no instruction
//! names (`internal_fields`: book ids, looked up by title and never said) and the reads
//! whose values a pointer selects (`tells`).
//!
//! Members authenticate with their email (name and zip code are the fallback), name books
//! by title and author, and loans by the id on their receipt with the book's title.
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{Loan, SkeletonDb};
use crate::domain::UserFact;
use crate::domain::kit::facts;
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::arg_str;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// "LN0007 for The Winter Garden": a loan as the member names it.
fn loan_text(db: &SkeletonDb, l: &Loan) -> String {
    let title = db
        .books
        .get(&l.book_id)
        .map_or("a book", |b| b.title.as_str());
    format!("{} for {title}", l.loan_id)
}

pub fn user_facts(db: &SkeletonDb, user_id: &str) -> Vec<UserFact> {
    let Some(m) = db.members.get(user_id) else {
        return Vec::new();
    };
    let mut out = facts::email_or_name_zip(
        &m.email,
        (&m.first_name, &m.last_name, &m.zip),
        &[&m.member_id],
    );
    let active: Vec<String> = db
        .loans_of(m)
        .filter(|l| l.is_active())
        .map(|l| l.loan_id.clone())
        .collect();
    out.extend(facts::entity_ids("loan id", &active));
    out
}

pub fn describe_request(
    db: &SkeletonDb,
    tool: &str,
    args: &Value,
    _output: &str,
) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    if let Some(b) = db.books.get(arg_str(args, "book_id")) {
        vars.insert("title", b.title.clone());
        vars.insert("author", b.author.clone());
    }
    if let Some(l) = db.loans.get(arg_str(args, "loan_id")) {
        vars.insert("loan", loan_text(db, l));
        vars.insert("due_date", l.due_date.clone());
    }
    match tool {
        // The agent's own steps: identifying the member, reading their record.
        "find_member_id_by_email" | "get_member_details" => None,
        _ => REQUESTS.render(tool, args, &vars),
    }
}

/// What the member asked to hear where `tools.toml`'s `tells` cannot point at it (there: a
/// loan's due date): an author's titles, a book's author and free copies.
pub fn required_outputs(db: &SkeletonDb, tool: &str, args: &Value, output: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(output).unwrap_or(Value::Null);
    match tool {
        "list_books" => v
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["title"].as_str().map(str::to_string))
            .collect(),
        "get_book_details" => db
            .books
            .get(arg_str(args, "book_id"))
            .map(|b| vec![b.author.clone(), b.available().to_string()])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The member's record, each of their loans and the books of those loans, as the read
/// tools print them, and the catalogue as `list_books` lists it: the agent finds the id of
/// a book the member names by its title there.
pub fn customer_records(db: &SkeletonDb, user_id: &str) -> Vec<String> {
    let Some(m) = db.members.get(user_id) else {
        return Vec::new();
    };
    let mut out = vec![serde_json::to_string(m).unwrap_or_default()];
    for l in db.loans_of(m) {
        out.push(serde_json::to_string(l).unwrap_or_default());
        if let Some(b) = db.books.get(&l.book_id) {
            out.push(serde_json::to_string(b).unwrap_or_default());
        }
    }
    let catalogue: Vec<Value> = db
        .books
        .iter()
        .map(|(_, b)| serde_json::json!({"book_id": b.book_id, "title": b.title}))
        .collect();
    out.push(Value::Array(catalogue).to_string());
    out
}
