//! The skeleton database: members (who they are, how they authenticate, the ids of their
//! loans), the books of the catalogue (copies owned and on loan) and the loans between
//! them (due date, renewals, status). Rows serialise as the tools print them and as a
//! `db.json` holds them (one object per table, keyed by id).
//!
//! Architecture invariant: data only — the rows, the tables and their import; the impls
//! are `mod.rs`'s, tool behaviour `tools.rs`'s. This file imports no sibling, so every
//! other file of the domain may import it.

use crate::domain::DomainError;
use crate::domain::kit::tau2;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub member_id: String,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub zip: String,
    /// Every loan the member ever took, oldest first.
    pub loans: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Book {
    pub book_id: String,
    pub title: String,
    pub author: String,
    pub copies: i64,
    pub on_loan: i64,
}

impl Book {
    pub fn available(&self) -> i64 {
        self.copies - self.on_loan
    }
}

/// A loan is `active` until the book comes back (`returned`).
pub const ACTIVE: &str = "active";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loan {
    pub loan_id: String,
    pub member_id: String,
    pub book_id: String,
    /// `YYYY-MM-DD`.
    pub due_date: String,
    pub renewals: i64,
    pub status: String,
}

impl Loan {
    pub fn is_active(&self) -> bool {
        self.status == ACTIVE
    }
}

crate::domain::kit::glue::database_struct! {
    SkeletonDb { members: Member, books: Book, loans: Loan }
}

impl SkeletonDb {
    /// A `db.json`'s tables; a loan of an unknown member or book is refused by name.
    pub fn import(tables: &BTreeMap<String, Value>, origin: &Path) -> Result<Self, DomainError> {
        let members: BTreeMap<String, Member> = tau2::parse_table(tables, "members", origin)?;
        let books: BTreeMap<String, Book> = tau2::parse_table(tables, "books", origin)?;
        let loans: BTreeMap<String, Loan> = tau2::parse_table(tables, "loans", origin)?;
        for (id, loan) in &loans {
            let missing = if !members.contains_key(&loan.member_id) {
                Some(("member_id", &loan.member_id))
            } else if !books.contains_key(&loan.book_id) {
                Some(("book_id", &loan.book_id))
            } else {
                None
            };
            if let Some((field, value)) = missing {
                return Err(DomainError::Import {
                    path: origin.display().to_string(),
                    message: format!("loans['{id}']: unknown {field} '{value}'"),
                });
            }
        }
        Ok(SkeletonDb::new(members, books, loans))
    }

    /// A member's loans, oldest first.
    pub fn loans_of<'a>(&'a self, member: &'a Member) -> impl Iterator<Item = &'a Loan> {
        member.loans.iter().filter_map(|id| self.loans.get(id))
    }
}
