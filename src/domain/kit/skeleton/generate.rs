//! The skeleton's generator: members with one to three loans (most active, some returned),
//! a catalogue whose copies on loan match the active loans, for the evaluation database
//! (40 members, 60 books) and the training database (200 members, 120 books). Names and
//! titles come from `vocabulary.toml`.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{ACTIVE, Book, Loan, Member, SkeletonDb};
use super::tools::{LOAN_DAYS, TODAY, add_days};
use crate::domain::Split;
use crate::domain::kit::draw::{Scales, digits, pick, unique_email};
use crate::domain::kit::ids::counter_id;
use crate::seed::derive_rng;
use rand::RngExt;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vocabulary {
    first_names: Vec<String>,
    last_names: Vec<String>,
    title_openings: Vec<String>,
    title_endings: Vec<String>,
    authors: Vec<String>,
    /// The `[scale]` tables, read by [`SCALES`].
    #[serde(rename = "scale")]
    _scale: serde::de::IgnoredAny,
}

/// The built-in vocabulary; a broken file generates an empty database, which the tests
/// catch, so this never panics at run time.
static VOCABULARY: LazyLock<Vocabulary> =
    LazyLock::new(|| toml::from_str(include_str!("vocabulary.toml")).unwrap_or_default());

/// Members and books of one database.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub struct Scale {
    pub members: usize,
    pub books: usize,
}

/// The sizes per split (`[scale.eval]`, `[scale.train]` in `vocabulary.toml`).
pub static SCALES: LazyLock<Scales<Scale>> =
    LazyLock::new(|| Scales::read(include_str!("vocabulary.toml")));

/// The database of one split, at its size in [`SCALES`].
pub fn generate(seed: u64, split: Split) -> SkeletonDb {
    let scale = SCALES.of(split);
    let mut rng = derive_rng(seed, &["skeleton", "db", split.as_str()]);
    let v = &*VOCABULARY;
    if v.first_names.is_empty() || v.title_openings.is_empty() || v.authors.is_empty() {
        return SkeletonDb::new(BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    }
    let mut books = BTreeMap::new();
    let mut titles = BTreeSet::new();
    for i in 0..scale.books {
        // Titles are unique, so a member's "the book called X" names one book.
        let title = loop {
            let t = format!(
                "{} {}",
                pick(&mut rng, &v.title_openings),
                pick(&mut rng, &v.title_endings)
            );
            if titles.insert(t.clone())
                || titles.len() >= v.title_openings.len() * v.title_endings.len()
            {
                break t;
            }
        };
        let id = counter_id("B", 4, i as u64 + 1);
        books.insert(
            id.clone(),
            Book {
                book_id: id,
                title,
                author: pick(&mut rng, &v.authors).clone(),
                copies: rng.random_range(1..=4),
                on_loan: 0,
            },
        );
    }
    let book_ids: Vec<String> = books.keys().cloned().collect();
    let mut members = BTreeMap::new();
    let mut loans = BTreeMap::new();
    let mut emails = BTreeSet::new();
    for i in 0..scale.members {
        let first = pick(&mut rng, &v.first_names).clone();
        let last = pick(&mut rng, &v.last_names).clone();
        let member_id = format!("M{}", 10_000 + i);
        let base = format!("{}.{}", first.to_lowercase(), last.to_lowercase());
        let mut member = Member {
            member_id: member_id.clone(),
            first_name: first,
            last_name: last,
            email: unique_email(&mut emails, &base, "example.com"),
            zip: digits(&mut rng, 5),
            loans: Vec::new(),
        };
        for _ in 0..rng.random_range(1..=3) {
            let book = books
                .get_mut(pick(&mut rng, &book_ids))
                .expect("drawn from the keys");
            let holds = member.loans.iter().any(|l: &String| {
                loans
                    .get(l)
                    .is_some_and(|x: &Loan| x.is_active() && x.book_id == book.book_id)
            });
            let active = rng.random_bool(0.75) && book.available() > 0 && !holds;
            let loan_id = counter_id("LN", 4, loans.len() as u64 + 1);
            let due = add_days(TODAY, rng.random_range(-LOAN_DAYS..=LOAN_DAYS))
                .unwrap_or_else(|_| TODAY.to_string());
            if active {
                book.on_loan += 1;
            }
            member.loans.push(loan_id.clone());
            loans.insert(
                loan_id.clone(),
                Loan {
                    loan_id,
                    member_id: member_id.clone(),
                    book_id: book.book_id.clone(),
                    due_date: due,
                    renewals: rng.random_range(0..=2),
                    status: if active { ACTIVE } else { "returned" }.to_string(),
                },
            );
        }
        members.insert(member_id, member);
    }
    SkeletonDb::new(members, books, loans)
}
