//! The skeleton's own tests: what its tools do and refuse, and what its policy adds. The
//! conformance suite (`src/domain/conformance.rs`) runs over it too.

use super::db::SkeletonDb;
use super::generate::{SCALES, generate};
use crate::domain::{Environment, Hooks, Split};
use serde_json::{Value, json};

fn db() -> SkeletonDb {
    generate(7, Split::Eval)
}

fn call(db: &mut SkeletonDb, tool: &str, args: Value) -> (String, bool) {
    let out = Environment::invoke(db, tool, &args);
    (out.text, out.is_error)
}

#[test]
fn generators_have_their_scale_and_consistent_copies() {
    for (split, scale) in [(Split::Eval, SCALES.eval), (Split::Train, SCALES.train)] {
        let db = generate(7, split);
        assert_eq!(db.members.len(), scale.members);
        assert_eq!(db.books.len(), scale.books);
        for (id, b) in db.books.iter() {
            let active = db
                .loans
                .iter()
                .filter(|(_, l)| l.book_id == id && l.is_active())
                .count() as i64;
            assert_eq!(b.on_loan, active, "{id}");
            assert!(b.available() >= 0, "{id}");
        }
    }
}

#[test]
fn borrowing_lends_a_free_copy_and_renewing_moves_the_due_date() {
    let mut db = db();
    let (member, book) = {
        let m = db.members.iter().next().map(|(_, m)| m.clone()).unwrap();
        let b = db
            .books
            .iter()
            .find(|(id, b)| b.available() > 0 && !db.loans_of(&m).any(|l| l.book_id == *id))
            .map(|(_, b)| b.clone())
            .unwrap();
        (m, b)
    };
    let (out, err) = call(
        &mut db,
        "borrow_book",
        json!({"member_id": member.member_id, "book_id": book.book_id}),
    );
    assert!(!err, "{out}");
    let loan: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(loan["due_date"], "2025-03-24");
    assert_eq!(
        db.books.get(&book.book_id).unwrap().on_loan,
        book.on_loan + 1
    );
    let id = loan["loan_id"].as_str().unwrap().to_string();
    assert!(
        db.members
            .get(&member.member_id)
            .unwrap()
            .loans
            .contains(&id)
    );
    let (out, err) = call(&mut db, "renew_loan", json!({"loan_id": id}));
    assert!(!err, "{out}");
    assert!(out.contains("2025-04-07"), "{out}");
    // Errors name what is wrong and change nothing.
    let before = Environment::state_hash(&db);
    assert_eq!(
        call(&mut db, "get_loan_details", json!({"loan_id": "LN9999"})),
        ("Error: Loan not found".to_string(), true)
    );
    assert_eq!(Environment::state_hash(&db), before);
}

#[test]
fn the_policy_limits_loans_and_renewals() {
    let db = db();
    let rule =
        |tool: &str, args: Value| Hooks::check_policy(&db, tool, &args).err().map(|v| v.rule);
    let renewed_twice = db.loans.iter().find(|(_, l)| l.renewals >= 2).unwrap().0;
    assert_eq!(
        rule("renew_loan", json!({"loan_id": renewed_twice})),
        Some("renewal_limit")
    );
    let (member, held) = db
        .loans
        .iter()
        .find(|(_, l)| l.is_active())
        .map(|(_, l)| (l.member_id.clone(), l.book_id.clone()))
        .unwrap();
    assert_eq!(
        rule("borrow_book", json!({"member_id": member, "book_id": held})),
        Some("one_copy_each")
    );
}

#[test]
fn requests_name_books_by_title_and_never_by_id() {
    let db = db();
    let (id, b) = db.books.iter().next().unwrap();
    let args = json!({"member_id": "M10000", "book_id": id});
    let said = Hooks::describe_request(&db, "borrow_book", &args, "").unwrap();
    assert!(said.contains(&b.title) && !said.contains(id), "{said}");
    assert!(Hooks::internal_id_fields(&db).contains(&"book_id"));
    // The agent finds the id by the title, in what it can look up.
    let records = Hooks::customer_records(&db, "M10000").join("\n");
    assert!(
        records.contains(&format!("\"book_id\":\"{id}\"")),
        "{records}"
    );
}
