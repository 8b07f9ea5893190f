//! The machine-checkable rules of the skeleton's policy (`policies/skeleton.md`), as named
//! kit rows per write tool. Grounding drops proposals that break one; graph and task
//! verification reject calls that do; the rule name groups rejections in `tracer stats`.
//!
//! The tools already refuse unknown ids, a book with no free copy and a loan that is not
//! active. These rules add what the policy asks and the tools do not check: a member holds
//! at most three active loans and does not borrow a second copy of a book they hold; a loan
//! is renewed at most twice.
//!
//! Architecture invariant: reads the state only.

use super::db::SkeletonDb;
use crate::domain::kit::policy::{Rule, refuse_if, rule};
use crate::domain::kit::text::arg_str;

/// Active loans a member may hold at once, and renewals a loan may have.
pub const MAX_ACTIVE_LOANS: usize = 3;
pub const MAX_RENEWALS: i64 = 2;

/// Checked in order; the first broken rule is reported.
pub static RULES: [Rule<SkeletonDb>; 3] = [
    rule("borrow_book", "loan_limit", |db, a| {
        let active = db
            .members
            .get(arg_str(a, "member_id"))
            .map_or(0, |m| db.loans_of(m).filter(|l| l.is_active()).count());
        refuse_if(active >= MAX_ACTIVE_LOANS, || {
            format!("a member holds at most {MAX_ACTIVE_LOANS} active loans")
        })
    }),
    rule("borrow_book", "one_copy_each", |db, a| {
        let holds = db.members.get(arg_str(a, "member_id")).is_some_and(|m| {
            db.loans_of(m)
                .any(|l| l.is_active() && l.book_id == arg_str(a, "book_id"))
        });
        refuse_if(holds, || "the member already has this book on loan".into())
    }),
    rule("renew_loan", "renewal_limit", |db, a| {
        let renewals = db
            .loans
            .get(arg_str(a, "loan_id"))
            .map_or(0, |l| l.renewals);
        refuse_if(renewals >= MAX_RENEWALS, || {
            format!("a loan is renewed at most {MAX_RENEWALS} times")
        })
    }),
];
