//! The machine-checkable rules of `policies/school.md`, as named kit rows per write tool.
//! Grounding drops proposals that break one; graph and task verification reject calls that
//! do; the rule name groups rejections in `tracer stats`.
//!
//! The tools already refuse unknown ids, other-term or full courses, time conflicts,
//! unsaved payment methods and payments that do not add up. These rules add what the
//! policy asks and the tools do not check: at least one distinct course, the study level
//! of the student's program, one active registration per term, positive payments; changes
//! only to an active registration, that really change something, drop courses it holds and
//! add courses it does not, keep at least one course (dropping everything is a
//! cancellation), restate the grading option of every kept course not graded by letter (the
//! tool resets unnamed courses to letter grading), and send refunds to a saved method;
//! cancellations and payments only of active registrations, and payments of at most the
//! balance due.
//!
//! Architecture invariant: reads the state only.

use super::db::{GradingOption, Registration, SchoolDb};
use super::generate::level_of_degree;
use super::tools::tuition;
use crate::domain::kit::policy::{Rule, positive_payments, rule};
use crate::domain::kit::text::{arg_list, arg_str};
use serde_json::Value;

const REGISTER: &str = "register_courses";
const UPDATE: &str = "update_registration_courses";
const CANCEL: &str = "cancel_registration";
const PAY: &str = "pay_registration";

/// Checked in order; the first broken rule is reported.
pub static RULES: &[Rule<SchoolDb>] = &[
    rule(REGISTER, "at_least_one_course", |_, a| {
        let ids = arg_list(a, "course_ids");
        if ids.is_empty() {
            return Err("a registration needs at least one course".into());
        }
        match ids
            .iter()
            .enumerate()
            .find(|(i, id)| ids[..*i].contains(id))
        {
            Some((_, id)) => Err(format!("course {id} is listed twice")),
            None => Ok(()),
        }
    }),
    rule(REGISTER, "study_level_of_program", |db, a| {
        let Some(student) = db.students.get(arg_str(a, "student_id")) else {
            return Ok(());
        };
        let expected = level_of_degree(&student.program.degree);
        let asked = arg_str(a, "study_level");
        if asked == expected.name() {
            Ok(())
        } else {
            Err(format!(
                "a {} student registers at the {} level, not '{asked}'",
                student.program.degree,
                expected.name()
            ))
        }
    }),
    rule(REGISTER, "one_registration_per_term", |db, a| {
        let Some(student) = db.students.get(arg_str(a, "student_id")) else {
            return Ok(());
        };
        let term = arg_str(a, "term");
        match db
            .registrations_of(student)
            .into_iter()
            .find(|r| r.term == term && r.is_active())
        {
            Some(r) => Err(format!(
                "the student already holds registration {} for {term}; change that one instead",
                r.registration_id
            )),
            None => Ok(()),
        }
    }),
    rule(REGISTER, "positive_payments", |_, a| {
        positive_payments(a, "payment_methods", |n| n.as_i64().is_some_and(|n| n > 0))
    }),
    rule(UPDATE, "registration_is_active", |db, a| {
        active(db, a).map(|_| ())
    }),
    rule(UPDATE, "drops_are_registered", |db, a| {
        let reg = active(db, a)?;
        match arg_list(a, "drop_course_ids")
            .into_iter()
            .find(|id| !holds(reg, id))
        {
            Some(id) => Err(format!(
                "course {id} is not part of registration {}",
                reg.registration_id
            )),
            None => Ok(()),
        }
    }),
    rule(UPDATE, "adds_are_new", |db, a| {
        let reg = active(db, a)?;
        let adds = arg_list(a, "add_course_ids");
        let drops = arg_list(a, "drop_course_ids");
        for (i, id) in adds.iter().enumerate() {
            if holds(reg, id) || adds[..i].contains(id) || drops.contains(id) {
                return Err(format!(
                    "course {id} is already part of registration {} (or listed twice)",
                    reg.registration_id
                ));
            }
        }
        Ok(())
    }),
    rule(UPDATE, "keeps_a_course", |db, a| {
        let reg = active(db, a)?;
        let drops = arg_list(a, "drop_course_ids");
        let kept = reg
            .courses
            .iter()
            .filter(|c| !drops.contains(&c.course_id.as_str()))
            .count();
        if kept + arg_list(a, "add_course_ids").len() == 0 {
            Err("dropping every course is a cancellation, not a change".into())
        } else {
            Ok(())
        }
    }),
    rule(UPDATE, "grading_kept", |db, a| {
        let reg = active(db, a)?;
        let drops = arg_list(a, "drop_course_ids");
        let named = |id: &str| {
            a.pointer(&format!("/grading_options/{}", pointer_key(id)))
                .is_some()
        };
        match reg.courses.iter().find(|c| {
            c.grading_option != GradingOption::Letter
                && !drops.contains(&c.course_id.as_str())
                && !named(&c.course_id)
        }) {
            Some(c) => Err(format!(
                "{} is graded {}; the change must restate it or the tool resets it to letter",
                c.course_code,
                c.grading_option.name()
            )),
            None => Ok(()),
        }
    }),
    rule(UPDATE, "real_change", |db, a| {
        let reg = active(db, a)?;
        if !arg_list(a, "add_course_ids").is_empty() || !arg_list(a, "drop_course_ids").is_empty() {
            return Ok(());
        }
        let changes = reg.courses.iter().any(|c| {
            a.pointer(&format!("/grading_options/{}", pointer_key(&c.course_id)))
                .and_then(Value::as_str)
                .is_some_and(|g| g != c.grading_option.name())
        });
        if changes {
            Ok(())
        } else {
            Err("the call adds, drops and regrades nothing".into())
        }
    }),
    rule(UPDATE, "refund_to_saved_method", |db, a| {
        let reg = active(db, a)?;
        let payment_id = arg_str(a, "payment_id");
        if payment_id.is_empty() || difference(db, reg, a) >= 0 {
            return Ok(());
        }
        let saved = db
            .students
            .get(&reg.student_id)
            .is_some_and(|s| s.payment_methods.contains_key(payment_id));
        if saved {
            Ok(())
        } else {
            Err(format!(
                "refunds go to one of the student's saved payment methods, not {payment_id}"
            ))
        }
    }),
    rule(CANCEL, "registration_is_active", |db, a| {
        active(db, a).map(|_| ())
    }),
    rule(PAY, "registration_is_active", |db, a| {
        active(db, a).map(|_| ())
    }),
    rule(PAY, "pays_balance_due", |db, a| {
        let reg = active(db, a)?;
        let amount = a
            .pointer("/payment/amount")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let due = reg.balance_due();
        if amount > 0 && amount <= due {
            Ok(())
        } else if due <= 0 {
            Err(format!(
                "registration {} has no balance due",
                reg.registration_id
            ))
        } else {
            Err(format!(
                "a payment must be between $1 and the balance due (${due}), not ${amount}"
            ))
        }
    }),
];

/// The registration the call names, which must still hold courses.
fn active<'a>(db: &'a SchoolDb, a: &Value) -> Result<&'a Registration, String> {
    let id = arg_str(a, "registration_id");
    let reg = db
        .registrations
        .get(id)
        .ok_or_else(|| format!("registration {id} does not exist"))?;
    if reg.is_active() {
        Ok(reg)
    } else {
        Err(format!(
            "registration {id} has no courses (it was cancelled); register again instead"
        ))
    }
}

fn holds(reg: &Registration, course_id: &str) -> bool {
    reg.courses.iter().any(|c| c.course_id == course_id)
}

/// A course id as one JSON-pointer segment.
fn pointer_key(id: &str) -> String {
    id.replace('~', "~0").replace('/', "~1")
}

/// The tuition difference an update would record (new minus stored), as the tool computes
/// it; courses that do not exist count nothing (the tool refuses them anyway).
pub fn difference(db: &SchoolDb, reg: &Registration, a: &Value) -> i64 {
    let drops = arg_list(a, "drop_course_ids");
    let mut target: Vec<&str> = reg
        .courses
        .iter()
        .map(|c| c.course_id.as_str())
        .filter(|id| !drops.contains(id))
        .collect();
    for id in arg_list(a, "add_course_ids") {
        if !target.contains(&id) {
            target.push(id);
        }
    }
    let new: i64 = target
        .iter()
        .filter_map(|id| db.courses.get(id))
        .map(|c| tuition(c, reg.study_level))
        .sum();
    new - reg.courses.iter().map(|c| c.tuition).sum::<i64>()
}
