//! Grounding hooks for school: candidate arguments per tool (`propose_calls`); the ids a
//! call reveals are learnt as `tools.toml` declares (`learns`), and the rules proposals
//! respect are in `policy.rs`.
//!
//! Proposals are about the context's student: what the conversation revealed comes first
//! (the registration just created, the courses a search returned, the term just looked
//! at), then the student's own registrations and the term's catalogue in a seeded order.
//! Write proposals pay exactly: a registration's payments add up to the tuition oracle
//! (credits x the study level's rate, plus the insurance fee), an update charges or refunds
//! the difference the tool will compute, and a payment settles all or part of the balance
//! due, always from the student's saved methods.
//!
//! Architecture invariant: reads the state only; never mutates it and never calls tools.

use super::db::{Course, GradingOption, HEALTH_INSURANCE_FEE, Registration, SchoolDb, Student};
use super::generate::level_of_degree;
use super::policy::difference;
use super::tools::{NEW_REGISTRATION_SLOTS, conflict, tuition};
use crate::domain::GroundingContext;
use crate::domain::kit::ids::slot_list;
use crate::domain::kit::propose::{self, MAX_PROPOSALS};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

/// The student's registrations (`REGISTRATIONS.ranked`: known ones first, the rest
/// shuffled).
const REGISTRATIONS: propose::Owned<SchoolDb, Student, Registration> = propose::Owned {
    key: "registration_id",
    table: |db| &db.registrations,
    own: |s| s.registrations.clone(),
    mine: |s, r| r.student_id == s.student_id,
};

/// Courses matching `keep`: those the conversation revealed first, then `own`, then the
/// rest of the catalogue, each group shuffled.
fn ranked_courses<'a>(
    db: &'a SchoolDb,
    ctx: &GroundingContext,
    own: Vec<String>,
    rng: &mut ChaCha8Rng,
    keep: impl Fn(&Course) -> bool,
) -> Vec<&'a Course> {
    let fits = |id: &str| db.courses.get(id).is_some_and(&keep);
    let mut ids = propose::ranked(ctx, "course_id", own, fits, rng);
    let rest: Vec<String> = db
        .courses
        .keys()
        .filter(|id| fits(id) && !ids.iter().any(|x| x == id))
        .map(str::to_string)
        .collect();
    ids.extend(propose::shuffled(rest, rng));
    ids.iter().filter_map(|id| db.courses.get(id)).collect()
}

/// Terms: the ones the conversation named first, then those the student holds no active
/// registration for (what a student browses before registering: the coming term), then
/// the rest.
fn ranked_terms(db: &SchoolDb, ctx: &GroundingContext, student: Option<&Student>) -> Vec<String> {
    let all = db.terms();
    let mut out: Vec<String> = ctx
        .values("term")
        .iter()
        .filter(|t| all.contains(t))
        .cloned()
        .collect();
    let holds = |t: &str| {
        student.is_some_and(|s| {
            db.registrations_of(s)
                .iter()
                .any(|r| r.term == t && r.is_active())
        })
    };
    for t in all.iter().filter(|t| !holds(t)).chain(all.iter()) {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    out
}

/// The saved method a student would pay with: the one the registration last used, else
/// their first.
fn preferred_method(student: &Student, reg: Option<&Registration>) -> Option<String> {
    reg.and_then(|r| {
        r.payment_history
            .iter()
            .rev()
            .map(|p| &p.payment_id)
            .find(|id| student.payment_methods.contains_key(*id))
    })
    .or_else(|| student.payment_methods.keys().next())
    .cloned()
}

/// Up to `n` mutually compatible courses from `candidates`, in order.
fn compatible<'a>(candidates: &[&'a Course], with: &[&Course], n: usize) -> Vec<&'a Course> {
    let mut chosen: Vec<&Course> = Vec::new();
    for c in candidates {
        if chosen.len() == n {
            break;
        }
        let clash = chosen
            .iter()
            .chain(with)
            .any(|x| x.course_id == c.course_id || conflict(x, c).unwrap_or(true));
        if !clash {
            chosen.push(c);
        }
    }
    chosen
}

fn grading_map(entries: &[(&str, GradingOption)]) -> Option<Value> {
    if entries.is_empty() {
        return None;
    }
    let map: Map<String, Value> = entries
        .iter()
        .map(|(id, g)| (id.to_string(), json!(g.name())))
        .collect();
    Some(Value::Object(map))
}

pub fn propose_calls(
    db: &SchoolDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let student = propose::customer(ctx, "student_id", &db.students);
    let own_courses: Vec<String> = student
        .into_iter()
        .flat_map(|s| db.registrations_of(s))
        .flat_map(|r| r.courses.iter().map(|c| c.course_id.clone()))
        .collect();
    let mut out: Vec<Value> = Vec::new();
    match tool {
        "get_student_details" => out.extend(student.map(|s| json!({"student_id": s.student_id}))),
        "get_registration_details" => {
            let found = REGISTRATIONS.ranked(db, ctx, student, rng, |_| true);
            out.extend(
                found
                    .iter()
                    .map(|r| json!({"registration_id": r.registration_id})),
            );
        }
        "get_course_details" => {
            for c in ranked_courses(db, ctx, own_courses, rng, |_| true)
                .into_iter()
                .take(4)
            {
                out.push(json!({"course_id": c.course_id}));
            }
        }
        "list_departments" => out.push(json!({})),
        "list_courses_by_term" => {
            for t in ranked_terms(db, ctx, student) {
                out.push(json!({"term": t}));
            }
        }
        "search_courses" => search_proposals(db, ctx, student, rng, &mut out),
        "get_course_meeting_status" => {
            for c in ranked_courses(db, ctx, own_courses, rng, |c| !c.dates.is_empty())
                .into_iter()
                .take(4)
            {
                let dates: Vec<&String> = c.dates.keys().collect();
                let date = dates[rng.random_range(0..dates.len())];
                out.push(json!({"course_id": c.course_id, "date": date}));
            }
        }
        "think" => out.push(json!({"thought": format!(
            "Check the registration of student {} and the course rules before any change.",
            student.map_or("(not identified)", |s| s.student_id.as_str()))})),
        "transfer_to_human_agents" => out.push(json!({"summary": format!(
            "Student {} asks for help the registration tools cannot give.",
            student.map_or("(not identified)", |s| s.student_id.as_str()))})),
        "register_courses" => {
            if let Some(s) = student {
                register_proposals(db, ctx, s, rng, &mut out);
            }
        }
        "update_registration_courses" => {
            for r in REGISTRATIONS.ranked(db, ctx, student, rng, Registration::is_active) {
                update_proposals(db, ctx, r, rng, &mut out);
                if out.len() >= MAX_PROPOSALS {
                    break;
                }
            }
        }
        "cancel_registration" => {
            for r in REGISTRATIONS.ranked(db, ctx, student, rng, Registration::is_active) {
                out.push(json!({"registration_id": r.registration_id}));
            }
        }
        "pay_registration" => {
            let owing = |r: &Registration| r.is_active() && r.balance_due() > 0;
            for r in REGISTRATIONS.ranked(db, ctx, student, rng, owing) {
                let Some(owner) = db.students.get(&r.student_id) else {
                    continue;
                };
                let due = r.balance_due();
                let mut amounts = vec![due];
                if due >= 200 {
                    amounts.push(100 * (due / 200));
                }
                for (n, amount) in amounts.into_iter().enumerate() {
                    let method = if n == 0 {
                        preferred_method(owner, Some(r))
                    } else {
                        owner.payment_methods.keys().last().cloned()
                    };
                    if let Some(m) = method {
                        out.push(json!({"registration_id": r.registration_id,
                            "payment": {"payment_id": m, "amount": amount}}));
                    }
                }
            }
        }
        _ => {}
    }
    out.truncate(MAX_PROPOSALS);
    out
}

fn search_proposals(
    db: &SchoolDb,
    ctx: &GroundingContext,
    student: Option<&Student>,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let known: Vec<&Course> = ctx
        .values("course_id")
        .iter()
        .filter_map(|id| db.courses.get(id))
        .collect();
    for term in ranked_terms(db, ctx, student).into_iter().take(2) {
        let in_term: Vec<&Course> = db
            .courses
            .iter()
            .map(|(_, c)| c)
            .filter(|c| c.term == term)
            .collect();
        if in_term.is_empty() {
            continue;
        }
        let mut departments: Vec<String> = known
            .iter()
            .filter(|c| c.term == term)
            .map(|c| c.department.clone())
            .collect();
        if let Some(s) = student {
            departments.push(s.program.major.clone());
        }
        let pick = in_term[rng.random_range(0..in_term.len())];
        departments.push(pick.department.clone());
        departments.dedup();
        for d in departments {
            if in_term.iter().any(|c| c.department == d && !c.is_full()) {
                out.push(json!({"term": term, "department": d, "open_only": true}));
            }
        }
        // Narrower searches: a department with a meeting day, a start time or a campus.
        let day = pick
            .meeting_pattern
            .days
            .first()
            .map(|d| d.name())
            .unwrap_or("Monday");
        out.push(json!({"term": term, "department": pick.department, "day": day}));
        out.push(json!({"term": term, "department": pick.department, "start_after": "09-00"}));
        out.push(json!({"term": term, "department": pick.department,
            "campus": pick.location.campus, "end_before": "17-00"}));
    }
}

fn register_proposals(
    db: &SchoolDb,
    ctx: &GroundingContext,
    student: &Student,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let free = slot_list("REG", NEW_REGISTRATION_SLOTS)
        .iter()
        .any(|s| !db.registrations.contains(s));
    let methods: Vec<&String> = student.payment_methods.keys().collect();
    if !free || methods.is_empty() {
        return;
    }
    let level = level_of_degree(&student.program.degree);
    let held = db.registrations_of(student);
    let terms: Vec<String> = ranked_terms(db, ctx, Some(student))
        .into_iter()
        .filter(|t| !held.iter().any(|r| &r.term == t && r.is_active()))
        .collect();
    for term in terms.iter().take(2) {
        let candidates = ranked_courses(db, ctx, Vec::new(), rng, |c| {
            c.term == *term && !c.is_full()
        });
        let first = compatible(&candidates, &[], 3);
        let mut sets: Vec<Vec<&Course>> = Vec::new();
        for n in [2, 1, 3] {
            if first.len() >= n {
                sets.push(first[..n].to_vec());
            }
        }
        if candidates.len() > 1 {
            let tail = compatible(&candidates[1..], &[], 2);
            if !tail.is_empty() {
                sets.push(tail);
            }
        }
        for (k, set) in sets.into_iter().enumerate() {
            let insurance = if rng.random_bool(0.5) { "yes" } else { "no" };
            let grading: Vec<(&str, GradingOption)> = if rng.random_bool(0.3) {
                let c = set[set.len() - 1];
                let g = if rng.random_bool(0.6) {
                    GradingOption::PassFail
                } else {
                    GradingOption::Audit
                };
                vec![(c.course_id.as_str(), g)]
            } else {
                Vec::new()
            };
            let total = set.iter().map(|c| tuition(c, level)).sum::<i64>()
                + if insurance == "yes" {
                    HEALTH_INSURANCE_FEE
                } else {
                    0
                };
            let payments = if methods.len() > 1 && k % 2 == 1 && total >= 200 {
                let part = 100 * (total / 200);
                json!([{"payment_id": methods[0], "amount": part},
                       {"payment_id": methods[1], "amount": total - part}])
            } else {
                let m = methods[rng.random_range(0..methods.len())];
                json!([{"payment_id": m, "amount": total}])
            };
            let mut args = json!({
                "student_id": student.student_id,
                "term": term,
                "course_ids": set.iter().map(|c| c.course_id.as_str()).collect::<Vec<_>>(),
                "study_level": level.name(),
                "health_insurance": insurance,
                "payment_methods": payments,
            });
            if let Some(g) = grading_map(&grading) {
                args["grading_options"] = g;
            }
            out.push(args);
        }
    }
}

/// One proposed update: courses added, courses dropped, grading options changed.
type Change<'a> = (Vec<&'a str>, Vec<&'a str>, Vec<(&'a str, GradingOption)>);

fn update_proposals(
    db: &SchoolDb,
    ctx: &GroundingContext,
    reg: &Registration,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Value>,
) {
    let Some(owner) = db.students.get(&reg.student_id) else {
        return;
    };
    let current: Vec<&Course> = reg
        .courses
        .iter()
        .filter_map(|c| db.courses.get(&c.course_id))
        .collect();
    let holds = |id: &str| reg.courses.iter().any(|c| c.course_id == id);
    let candidates = ranked_courses(db, ctx, Vec::new(), rng, |c| {
        c.term == reg.term && !c.is_full() && !holds(&c.course_id)
    });
    let mut changes: Vec<Change> = Vec::new();
    // Add one course that fits the current schedule.
    if let Some(c) = compatible(&candidates, &current, 1).first() {
        changes.push((vec![c.course_id.as_str()], vec![], vec![]));
    }
    // Drop one course (a registration keeps at least one).
    if current.len() >= 2 {
        let i = rng.random_range(0..current.len());
        changes.push((vec![], vec![current[i].course_id.as_str()], vec![]));
    }
    // Swap one course for another.
    if !current.is_empty() {
        let i = rng.random_range(0..current.len());
        let rest: Vec<&Course> = current
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, c)| *c)
            .collect();
        if let Some(c) = compatible(&candidates, &rest, 1).first() {
            changes.push((
                vec![c.course_id.as_str()],
                vec![current[i].course_id.as_str()],
                vec![],
            ));
        }
    }
    // Change one course's grading option.
    if let Some(line) = reg
        .courses
        .get(rng.random_range(0..reg.courses.len().max(1)))
    {
        let options = [
            GradingOption::Letter,
            GradingOption::PassFail,
            GradingOption::Audit,
        ];
        let others: Vec<GradingOption> = options
            .into_iter()
            .filter(|g| *g != line.grading_option)
            .collect();
        let g = others[rng.random_range(0..others.len())];
        changes.push((vec![], vec![], vec![(line.course_id.as_str(), g)]));
    }
    for (add, drop, regrade) in changes {
        // Restate every kept course that is not letter-graded (the tool would reset it).
        let mut grading: Vec<(&str, GradingOption)> = reg
            .courses
            .iter()
            .filter(|c| c.grading_option != GradingOption::Letter)
            .filter(|c| !drop.contains(&c.course_id.as_str()))
            .filter(|c| !regrade.iter().any(|(id, _)| *id == c.course_id))
            .map(|c| (c.course_id.as_str(), c.grading_option))
            .collect();
        grading.extend(regrade);
        let mut args = json!({
            "registration_id": reg.registration_id,
            "add_course_ids": add,
            "drop_course_ids": drop,
        });
        if let Some(g) = grading_map(&grading) {
            args["grading_options"] = g;
        }
        let diff = difference(db, reg, &args);
        let method = preferred_method(owner, Some(reg));
        match (diff, method) {
            (d, Some(m)) if d > 0 => args["payment_id"] = json!(m),
            (d, Some(m)) if d < 0 && rng.random_bool(0.5) => args["payment_id"] = json!(m),
            (d, None) if d > 0 => continue,
            _ => {}
        }
        out.push(args);
    }
}
