//! Refinement and verification hooks for school: what a student knows about themself
//! (`user_facts`), what they ask of each call (`describe_request`: sentences in
//! `requests.toml`, variables computed here) and what the agent can look up once they are
//! identified (`customer_records`: their record, their registrations, the courses they hold
//! and each term's catalogue listing, which maps the course codes they say to course ids).
//! `tools.toml` declares the rest: the argument values they could never know (`internal`:
//! saved payment method ids), the registrar's registration ids no instruction names
//! (`internal_fields`) and what the agent must tell them after a read (`tells`).
//!
//! Students identify with their student id (the policy's first step). They name courses by
//! code and title, terms as the school writes them (`2025-SPRING`), registrations by term
//! and id (printed on their confirmation; one created in the same conversation as "the
//! registration you just made"), payment methods by brand and last digits, and dates in
//! full (`2025-01-27`, which holds the tools' `25-01-27`).
//!
//! Architecture invariant: reads the state only; phrasing varies deterministically with the
//! arguments (no RNG), so grounding stays reproducible.

use super::db::{Course, GradingOption, Registration, SchoolDb, Student, StudyLevel};
use super::policy::difference;
use super::tools::term_listing;
use crate::domain::UserFact;
use crate::domain::kit::facts;
use crate::domain::kit::pyjson::Py;
use crate::domain::kit::tau2::{long_date, parse_short_date};
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{
    arg_items, arg_list, arg_str, filter_clauses, join_and, payments_phrase,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static REQUESTS: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// Whole dollars with thousands separators ("$3,800", "-$500").
pub fn usd(amount: i64) -> String {
    let digits = amount.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{}${out}", if amount < 0 { "-" } else { "" })
}

fn course_text(c: &Course) -> String {
    format!("{} {}", c.course_code, c.title)
}

fn courses_text(db: &SchoolDb, ids: &[&str]) -> String {
    let parts: Vec<String> = ids
        .iter()
        .map(|id| {
            db.courses
                .get(id)
                .map_or_else(|| id.to_string(), course_text)
        })
        .collect();
    join_and(&parts)
}

fn code_of(db: &SchoolDb, id: &str) -> String {
    db.courses
        .get(id)
        .map_or_else(|| id.to_string(), |c| c.course_code.clone())
}

/// A registration as the student refers to it: by term (its id is the registrar's), and by
/// its courses when the student holds another registration for the same term.
fn registration_text(db: &SchoolDb, reg: &Registration) -> String {
    if reg.registration_id.starts_with("REG") && reg.registration_id.len() == 6 {
        return format!("the {} registration you just made", reg.term);
    }
    let twin = db.students.get(&reg.student_id).is_some_and(|s| {
        db.registrations_of(s)
            .iter()
            .any(|r| r.registration_id != reg.registration_id && r.term == reg.term)
    });
    let codes: Vec<String> = reg
        .courses
        .iter()
        .map(|c| code_of(db, &c.course_id))
        .collect();
    if twin && !codes.is_empty() {
        format!("your {} registration for {}", reg.term, join_and(&codes))
    } else {
        format!("your {} registration", reg.term)
    }
}

fn level_text(level: StudyLevel) -> &'static str {
    match level {
        StudyLevel::Undergraduate => "an undergraduate",
        StudyLevel::Graduate => "a graduate",
        StudyLevel::ContinuingEd => "a continuing education",
    }
}

/// How a grading choice is said after a course code ("taken pass/fail").
fn grading_text(g: GradingOption) -> &'static str {
    match g {
        GradingOption::Letter => "for a letter grade",
        GradingOption::PassFail => "pass/fail",
        GradingOption::Audit => "as an audit",
    }
}

fn method_phrase(student: &Student, id: &str) -> String {
    student.payment_methods.get(id).map_or_else(
        || "one of your saved payment methods".into(),
        |m| m.phrase().0,
    )
}

fn grading_entries(args: &Value) -> Vec<(String, GradingOption)> {
    args.get("grading_options")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(id, g)| Some((id.clone(), GradingOption::parse(g.as_str()?)?)))
        .collect()
}

pub fn user_facts(db: &SchoolDb, student_id: &str) -> Vec<UserFact> {
    let Some(s) = db.students.get(student_id) else {
        return Vec::new();
    };
    let mut out = facts::id_and_name("student", student_id, &s.name);
    out.push(facts::fact(
        "program",
        format!(
            "You are enrolled in the {} {} program.",
            s.program.degree, s.program.major
        ),
        vec![s.program.degree.clone(), s.program.major.clone()],
        &[],
    ));
    for m in s.payment_methods.values() {
        let (phrase, values) = m.phrase();
        out.push(facts::fact(
            "payment",
            format!(
                "You have {} saved on your student account.",
                phrase.replacen("your ", "a ", 1)
            ),
            values,
            &[&m.payment_method_id],
        ));
    }
    for r in db.registrations_of(s) {
        out.push(facts::fact(
            "entity",
            format!("You are registered for {}.", r.term),
            vec![r.term.clone()],
            &[],
        ));
    }
    out
}

pub fn describe_request(db: &SchoolDb, tool: &str, args: &Value, output: &str) -> Option<String> {
    let mut vars: BTreeMap<&str, String> = BTreeMap::new();
    let reg = db.registrations.get(arg_str(args, "registration_id"));
    let owner = reg.and_then(|r| db.students.get(&r.student_id));
    let course = db.courses.get(arg_str(args, "course_id"));
    let mut table = tool.to_string();
    match tool {
        "register_courses" => {
            let student = db.students.get(arg_str(args, "student_id"))?;
            let level = StudyLevel::parse(arg_str(args, "study_level"))?;
            vars.insert("level", level_text(level).into());
            let grading: Vec<String> = grading_entries(args)
                .into_iter()
                .map(|(id, g)| format!("{} {}", code_of(db, &id), grading_text(g)))
                .collect();
            let mut courses = courses_text(db, &arg_list(args, "course_ids"));
            if !grading.is_empty() {
                courses.push_str(&format!(" (with {})", join_and(&grading)));
            }
            vars.insert("courses", courses);
            let insured = arg_str(args, "health_insurance") == "yes";
            vars.insert(
                "insurance",
                if insured {
                    "saying yes to the school health insurance".into()
                } else {
                    "saying no to the school health insurance".into()
                },
            );
            let payments: Vec<(String, i64)> = arg_items(args, "payment_methods")
                .map(|p| {
                    (
                        method_phrase(student, arg_str(p, "payment_id")),
                        p.get("amount").and_then(Value::as_i64).unwrap_or(0),
                    )
                })
                .collect();
            vars.insert("total", usd(payments.iter().map(|(_, a)| a).sum()));
            vars.insert("pay", payments_phrase(&payments, usd));
        }
        "update_registration_courses" => {
            let (reg, owner) = (reg?, owner?);
            vars.insert("registration", registration_text(db, reg));
            let adds = arg_list(args, "add_course_ids");
            let drops = arg_list(args, "drop_course_ids");
            let mut changes = Vec::new();
            let mut keep = Vec::new();
            if !adds.is_empty() {
                changes.push(format!("add {}", courses_text(db, &adds)));
            }
            if !drops.is_empty() {
                changes.push(format!("drop {}", courses_text(db, &drops)));
            }
            for (id, g) in grading_entries(args) {
                let code = code_of(db, &id);
                let held = reg.courses.iter().find(|c| c.course_id == id);
                match held {
                    Some(c) if c.grading_option == g => {
                        keep.push(format!("{code} {}", grading_text(g)));
                    }
                    Some(_) => changes.push(format!(
                        "switch {code} to {}",
                        match g {
                            GradingOption::Letter => "letter grading",
                            GradingOption::PassFail => "pass/fail grading",
                            GradingOption::Audit => "an audit",
                        }
                    )),
                    None => changes.push(format!("take {code} {}", grading_text(g))),
                }
            }
            if changes.is_empty() {
                return None;
            }
            let mut changes = join_and(&changes);
            if !keep.is_empty() {
                changes.push_str(&format!(", keeping {}", join_and(&keep)));
            }
            vars.insert("changes", changes);
            let diff = difference(db, reg, args);
            let payment_id = arg_str(args, "payment_id");
            vars.insert("amount", usd(diff.abs()));
            vars.insert("pay", method_phrase(owner, payment_id));
            let case = match diff {
                d if d > 0 => "charge",
                d if d < 0 && !payment_id.is_empty() => "refund_to",
                d if d < 0 => "refund",
                _ => "even",
            };
            table = format!("{tool}.{case}");
        }
        "cancel_registration" | "get_registration_details" => {
            vars.insert("registration", registration_text(db, reg?));
        }
        "pay_registration" => {
            let (reg, owner) = (reg?, owner?);
            vars.insert("registration", registration_text(db, reg));
            let amount = args.pointer("/payment/amount").and_then(Value::as_i64)?;
            vars.insert("amount", usd(amount));
            let id = args
                .pointer("/payment/payment_id")
                .and_then(Value::as_str)?;
            vars.insert("pay", format!("with {}", method_phrase(owner, id)));
        }
        "get_course_details" => {
            vars.insert("course", course_text(course?));
        }
        "get_course_meeting_status" => {
            vars.insert("course", course_text(course?));
            let day = parse_short_date(arg_str(args, "date"))?;
            vars.insert("date", long_date(day));
        }
        "search_courses" => {
            let mut filters = match args.get("department").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d} courses"),
                _ => "courses".to_string(),
            };
            filters += &filter_clauses(
                args,
                &[
                    ("campus", "on the {} campus"),
                    ("day", "that meet on {}"),
                    ("start_after", "starting no earlier than {}"),
                    ("end_before", "ending by {}"),
                ],
            );
            if args.get("open_only").and_then(Value::as_bool) == Some(true) {
                filters.push_str(" with open seats");
            }
            vars.insert("filters", filters);
        }
        // Only a term the school offers is something a student asks about.
        "list_courses_by_term" if !output.contains("course_id") => return None,
        _ => {}
    }
    // Tools without sentences (agent-side lookups and notes) give `None`.
    REQUESTS.render(&table, args, &vars)
}

pub fn customer_records(db: &SchoolDb, student_id: &str) -> Vec<String> {
    let Some(s) = db.students.get(student_id) else {
        return Vec::new();
    };
    let mut records = vec![student_id.to_string(), Py::model(s).to_json_str()];
    let mut held: Vec<&str> = Vec::new();
    for r in db.registrations_of(s) {
        records.push(Py::model(r).to_json_str());
        held.extend(r.courses.iter().map(|c| c.course_id.as_str()));
    }
    for c in held.iter().filter_map(|id| db.courses.get(id)) {
        records.push(Py::model(c).to_json_str());
    }
    for term in db.terms() {
        records.push(term_listing(db, &term).to_json_str());
    }
    records
}
