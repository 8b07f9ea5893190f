//! The skeleton's tools: behaviour here, specs in `tools.toml` (bound by name). Outputs are
//! the rows as JSON; errors are sentences the agent reads. Every check runs before any
//! change, so a failing call leaves the state as it was.
//!
//! Architecture invariant: tools see only the `SkeletonDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{ACTIVE, Book, Loan, Member, SkeletonDb};
use crate::domain::kit::clock::{civil_from_days, parse_date};
use crate::domain::kit::{ids, specs};
use crate::domain::{Tool, ToolFn};
use serde::Serialize;
use serde_json::json;

/// The library's today: tools never read the wall clock.
pub const TODAY: &str = "2025-03-03";

/// Days a new loan runs, and what one renewal adds.
pub const LOAN_DAYS: i64 = 21;
pub const RENEWAL_DAYS: i64 = 14;

crate::domain::kit::glue::tool_list!(SkeletonDb);

fn build() -> Vec<Tool<SkeletonDb>> {
    let runs: [(&str, ToolFn<SkeletonDb>); 7] = [
        ("find_member_id_by_email", |db, a| {
            let rows = db.members.iter().map(|(id, m)| (id, m.email.as_str()));
            ids::id_by_email(rows, a.str("email")?).ok_or_else(|| "Member not found".to_string())
        }),
        ("get_member_details", |db, a| {
            show(member(db, a.str("member_id")?)?)
        }),
        ("list_books", |db, a| {
            let author = a.opt_str("author").map(str::to_lowercase);
            let found: Vec<_> = db
                .books
                .iter()
                .filter(|(_, b)| {
                    author
                        .as_ref()
                        .is_none_or(|x| b.author.to_lowercase() == *x)
                })
                .map(|(_, b)| {
                    json!({"book_id": b.book_id, "title": b.title, "author": b.author,
                           "available": b.available()})
                })
                .collect();
            if found.is_empty() {
                return Err("No book by that author".into());
            }
            show(&found)
        }),
        ("get_book_details", |db, a| {
            show(book(db, a.str("book_id")?)?)
        }),
        ("get_loan_details", |db, a| {
            show(loan(db, a.str("loan_id")?)?)
        }),
        ("borrow_book", |db, a| {
            let member_id = member(db, a.str("member_id")?)?.member_id.clone();
            let b = book(db, a.str("book_id")?)?;
            if b.available() < 1 {
                return Err("No copy of this book is free".into());
            }
            let mut b = b.clone();
            let n = ids::max_numeric_suffix(db.loans.keys(), &["LN"]) + 1;
            let loan = Loan {
                loan_id: ids::counter_id("LN", 4, n),
                member_id: member_id.clone(),
                book_id: b.book_id.clone(),
                due_date: add_days(TODAY, LOAN_DAYS)?,
                renewals: 0,
                status: ACTIVE.to_string(),
            };
            b.on_loan += 1;
            let mut m = db
                .members
                .get(&member_id)
                .cloned()
                .ok_or("Member not found")?;
            m.loans.push(loan.loan_id.clone());
            db.books.insert(b.book_id.clone(), b);
            db.members.insert(member_id, m);
            db.loans.insert(loan.loan_id.clone(), loan.clone());
            show(&loan)
        }),
        ("renew_loan", |db, a| {
            let mut l = loan(db, a.str("loan_id")?)?.clone();
            if !l.is_active() {
                return Err("Only an active loan can be renewed".into());
            }
            l.due_date = add_days(&l.due_date, RENEWAL_DAYS)?;
            l.renewals += 1;
            db.loans.insert(l.loan_id.clone(), l.clone());
            show(&l)
        }),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

fn show<T: Serialize + ?Sized>(row: &T) -> Result<String, String> {
    serde_json::to_string(row).map_err(|e| e.to_string())
}

crate::domain::kit::glue::row_getters!(SkeletonDb {
    member: members.get_or("Member not found") -> Member,
    book: books.get_or("Book not found") -> Book,
    loan: loans.get_or("Loan not found") -> Loan,
});

/// `date` (`YYYY-MM-DD`) moved by `days`.
pub fn add_days(date: &str, days: i64) -> Result<String, String> {
    let day = parse_date(date).ok_or_else(|| format!("Bad date '{date}'"))?;
    let (y, m, d) = civil_from_days(day + days);
    Ok(format!("{y:04}-{m:02}-{d:02}"))
}
