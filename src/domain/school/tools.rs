//! The thirteen school tools: the reference's eleven (same names, arguments, result shapes
//! and error strings, checks in the same order) plus the kit's `think` and
//! `transfer_to_human_agents` (the policy names a transfer; the reference has no tool for
//! it). Outputs are tau2's `to_json_str` of what the reference returns: models as
//! `model_dump()` JSON, plain lists with their scalars as strings. Descriptions are ours, in
//! `tools.toml` with the arguments.
//!
//! Money is exact integer dollars: tuition is credits x the per-credit rate of the study
//! level ([`StudyLevel::rate`]), plus [`HEALTH_INSURANCE_FEE`] when chosen. Every check runs
//! before any mutation, so a failing call leaves the state untouched.
//!
//! Departures (docs/domains/school.md, `tests/fixtures/reference/school/departures.json`):
//! a second `cancel_registration` of a registration with no courses and nothing left to
//! refund is refused instead of appending the negation of every refund again; enumerated
//! arguments (study level, health insurance, grading options) outside their values are
//! refused with our message before anything changes (the reference fails later, or on
//! another check).
//!
//! Architecture invariant: tools see only the `SchoolDb` and their validated arguments;
//! policy rules the tools do not enforce live in `policy.rs`.

use super::db::{
    Course, EnrollmentStatus, FinancialAid, GradingOption, HEALTH_INSURANCE_FEE, Payment,
    RegisteredCourse, Registration, STANDARD_LOAD, SchoolDb, Student, StudyLevel, YesNo,
};
use crate::domain::ToolFn;
use crate::domain::kit::clock::SimClock;
use crate::domain::kit::glue::read_tool;
use crate::domain::kit::ids::{first_free_slot, slot_list};
use crate::domain::kit::pyjson::Py;
use crate::domain::kit::rows::refund_all;
use crate::domain::kit::specs;
use crate::domain::kit::tau2::{py_int, short_today};
use crate::domain::{Args, Tool};
use serde_json::{Map, Value, json};

/// The school's fixed "now": the reference stamps new registrations `25-05-15`.
pub const CLOCK: SimClock = SimClock::new("2025-05-15T15:00:00");

/// New registrations take the first free of these ids (the reference's fixed slots).
pub const NEW_REGISTRATION_SLOTS: u64 = 3;

crate::domain::kit::glue::tool_list!(SchoolDb);

fn build() -> Vec<Tool<SchoolDb>> {
    let runs: [(&str, ToolFn<SchoolDb>); 11] = [
        ("get_student_details", read_tool!(student, "student_id")),
        ("get_course_details", read_tool!(course, "course_id")),
        (
            "get_registration_details",
            read_tool!(registration, "registration_id"),
        ),
        ("list_departments", |db, _| {
            let mut names: Vec<&str> = db
                .courses
                .iter()
                .map(|(_, c)| c.department.as_str())
                .collect();
            names.sort_unstable();
            names.dedup();
            Ok(Py::Plain(json!(names)).to_json_str())
        }),
        ("list_courses_by_term", |db, a| {
            Ok(term_listing(db, a.str("term")?).to_json_str())
        }),
        ("search_courses", search_courses),
        ("get_course_meeting_status", |db, a| {
            let id = a.str("course_id")?;
            let date = a.str("date")?;
            let record = course(db, id)?
                .dates
                .get(date)
                .ok_or_else(|| format!("No record for course {id} on date {date}"))?;
            Ok(Py::model(record).to_json_str())
        }),
        ("register_courses", register_courses),
        ("update_registration_courses", update_registration_courses),
        ("cancel_registration", cancel_registration),
        ("pay_registration", pay_registration),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}

/// A term's courses as the reference lists them: plain dicts (key order course_id,
/// course_code, title), so every value prints as a string.
pub fn term_listing(db: &SchoolDb, term: &str) -> Py {
    let row = |c: &Course| {
        Py::dict([
            ("course_id", Py::str(&c.course_id)),
            ("course_code", Py::str(&c.course_code)),
            ("title", Py::str(&c.title)),
        ])
    };
    Py::List(
        db.courses
            .in_order()
            .filter(|c| c.term == term)
            .map(row)
            .collect(),
    )
}

crate::domain::kit::glue::row_getters!(SchoolDb {
    student: students.get_named("Student") -> Student,
    course: courses.get_named("Course") -> Course,
    registration: registrations.get_named("Registration") -> Registration,
});

/// `HH-MM` -> minutes since midnight, with the reference's errors.
pub fn minutes(hhmm: &str) -> Result<i64, String> {
    match hhmm.split('-').collect::<Vec<_>>().as_slice() {
        [h, m] => Ok(py_int(h)? * 60 + py_int(m)?),
        _ => Err(format!("Invalid time format: {hhmm}")),
    }
}

/// Two courses conflict when they share a day and their times overlap.
pub fn conflict(a: &Course, b: &Course) -> Result<bool, String> {
    let (p, q) = (&a.meeting_pattern, &b.meeting_pattern);
    if !p.days.iter().any(|d| q.days.contains(d)) {
        return Ok(false);
    }
    let (a1, b1) = (minutes(&p.start_time_est)?, minutes(&p.end_time_est)?);
    let (a2, b2) = (minutes(&q.start_time_est)?, minutes(&q.end_time_est)?);
    Ok(a1 < b2 && a2 < b1)
}

/// The first pair (in list order) of conflicting courses, as the reference reports it.
pub fn check_conflicts(courses: &[&Course]) -> Result<(), String> {
    for (i, a) in courses.iter().enumerate() {
        for b in &courses[i + 1..] {
            if conflict(a, b)? {
                return Err(format!(
                    "Schedule conflict between courses {} and {}",
                    a.course_code, b.course_code
                ));
            }
        }
    }
    Ok(())
}

/// Tuition of one course at a study level.
pub fn tuition(course: &Course, level: StudyLevel) -> i64 {
    course.credits * level.rate()
}

/// The grading option a call gives a course (letter unless the map names it).
fn grading_for(
    grading: Option<&Map<String, Value>>,
    course_id: &str,
) -> Result<GradingOption, String> {
    match grading.and_then(|g| g.get(course_id)) {
        None => Ok(GradingOption::Letter),
        Some(v) => v.as_str().and_then(GradingOption::parse).ok_or_else(|| {
            format!("Invalid grading option {v} for course {course_id}: choose letter, pass/fail or audit")
        }),
    }
}

fn line(course: &Course, grading: GradingOption, level: StudyLevel) -> RegisteredCourse {
    RegisteredCourse {
        course_id: course.course_id.clone(),
        course_code: course.course_code.clone(),
        section: "001".into(),
        title: course.title.clone(),
        credits: course.credits,
        grading_option: grading,
        tuition: tuition(course, level),
    }
}

fn payments(a: &Args, key: &str) -> Result<Vec<Payment>, String> {
    match a.value(key) {
        None => Ok(Vec::new()),
        Some(_) => a.parse(key),
    }
}

fn saved_method_check(student: &Student, payment_id: &str) -> Result<(), String> {
    if student.payment_methods.contains_key(payment_id) {
        Ok(())
    } else {
        Err(format!(
            "Payment method {payment_id} not found for student {}",
            student.student_id
        ))
    }
}

fn search_courses(db: &mut SchoolDb, a: &Args) -> Result<String, String> {
    let term = a.str("term")?;
    let filter = |key: &str| a.opt_str(key).filter(|s| !s.is_empty());
    let (department, campus, day) = (filter("department"), filter("campus"), filter("day"));
    let (start_after, end_before) = (filter("start_after"), filter("end_before"));
    let open_only = a
        .value("open_only")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut found = Vec::new();
    for c in db.courses.in_order() {
        if c.term != term
            || department.is_some_and(|d| c.department != d)
            || campus.is_some_and(|x| c.location.campus != x)
            || day.is_some_and(|d| !c.meeting_pattern.days.iter().any(|w| w.name() == d))
        {
            continue;
        }
        if let Some(s) = start_after
            && minutes(&c.meeting_pattern.start_time_est)? < minutes(s)?
        {
            continue;
        }
        if let Some(e) = end_before
            && minutes(&c.meeting_pattern.end_time_est)? > minutes(e)?
        {
            continue;
        }
        if open_only && c.is_full() {
            continue;
        }
        found.push(c);
    }
    Ok(Py::models(found).to_json_str())
}

fn register_courses(db: &mut SchoolDb, a: &Args) -> Result<String, String> {
    let paid = payments(a, "payment_methods")?;
    let student_id = a.str("student_id")?;
    let student = student(db, student_id)?.clone();
    let term = a.str("term")?;
    let ids = a.str_list("course_ids")?;
    let courses = ids
        .iter()
        .map(|id| course(db, id))
        .collect::<Result<Vec<_>, _>>()?;
    for c in &courses {
        if c.term != term {
            return Err(format!(
                "Course {} term {} does not match requested term {term}",
                c.course_id, c.term
            ));
        }
    }
    if let Some(c) = courses.iter().find(|c| c.is_full()) {
        return Err(format!("Course {} is full", c.course_code));
    }
    check_conflicts(&courses)?;
    let level_name = a.str("study_level")?;
    let level = StudyLevel::parse(level_name).ok_or_else(|| format!("'{level_name}'"))?;
    let grading = a.value("grading_options").and_then(Value::as_object);
    let lines = courses
        .iter()
        .map(|c| Ok(line(c, grading_for(grading, &c.course_id)?, level)))
        .collect::<Result<Vec<_>, String>>()?;
    let credits: i64 = lines.iter().map(|l| l.credits).sum();
    let insurance = match a.opt_str("health_insurance").unwrap_or("no") {
        "yes" => YesNo::Yes,
        _ => YesNo::No,
    };
    let fee = if insurance == YesNo::Yes {
        HEALTH_INSURANCE_FEE
    } else {
        0
    };
    let total_due = lines.iter().map(|l| l.tuition).sum::<i64>() + fee;
    for p in &paid {
        saved_method_check(&student, &p.payment_id)?;
    }
    let total_paid: i64 = paid.iter().map(|p| p.amount).sum();
    if total_paid != total_due {
        return Err(format!(
            "Payment amount does not add up, total due is {total_due}, but paid {total_paid}"
        ));
    }
    let slots = slot_list("REG", NEW_REGISTRATION_SLOTS);
    let slots: Vec<&str> = slots.iter().map(String::as_str).collect();
    let id = first_free_slot(&slots, |s| db.registrations.contains(s))
        .ok_or("Too many registrations created in this session")?;
    let registration = Registration {
        registration_id: id.clone(),
        student_id: student_id.to_string(),
        campus: courses
            .first()
            .map_or_else(|| "Main".to_string(), |c| c.location.campus.clone()),
        program: format!("{} {}", student.program.degree, student.program.major),
        study_level: level,
        term: term.to_string(),
        status: EnrollmentStatus::for_credits(credits),
        courses: lines,
        advisors: Vec::new(),
        payment_history: paid,
        created_at: short_today(&CLOCK),
        total_credits: credits,
        overload_credits: (credits - STANDARD_LOAD).max(0),
        financial_aid: FinancialAid {
            scholarships: 0,
            grants: 0,
            loans: 0,
        },
        health_insurance: insurance,
    };
    let course_ids: Vec<String> = courses.iter().map(|c| c.course_id.clone()).collect();
    for cid in &course_ids {
        if let Some(c) = db.courses.get_mut(cid) {
            c.current_enrollment += 1;
        }
    }
    let out = Py::model(&registration).to_json_str();
    db.registrations.insert(id.clone(), registration);
    if let Some(s) = db.students.get_mut(student_id) {
        s.registrations.push(id);
    }
    Ok(out)
}

fn update_registration_courses(db: &mut SchoolDb, a: &Args) -> Result<String, String> {
    let reg = registration(db, a.str("registration_id")?)?.clone();
    let student = student(db, &reg.student_id)?.clone();
    let add = a.str_list("add_course_ids")?;
    let drop = a.str_list("drop_course_ids")?;
    let grading = a.value("grading_options").and_then(Value::as_object);
    let payment_id = a.opt_str("payment_id").unwrap_or("");
    let current: Vec<&str> = reg.courses.iter().map(|c| c.course_id.as_str()).collect();
    let mut target: Vec<&str> = current
        .iter()
        .copied()
        .filter(|id| !drop.contains(id))
        .collect();
    for id in &add {
        if !target.contains(id) {
            target.push(id);
        }
    }
    let current_courses = current
        .iter()
        .map(|id| course(db, id))
        .collect::<Result<Vec<_>, _>>()?;
    let target_courses = target
        .iter()
        .map(|id| course(db, id))
        .collect::<Result<Vec<_>, _>>()?;
    for c in &target_courses {
        if c.term != reg.term {
            return Err(format!(
                "Course {} term {} does not match registration term {}",
                c.course_id, c.term, reg.term
            ));
        }
    }
    for id in &add {
        let c = course(db, id)?;
        if c.is_full() {
            return Err(format!("Course {} is full", c.course_code));
        }
    }
    check_conflicts(&target_courses)?;
    let lines = target_courses
        .iter()
        .map(|c| {
            Ok(line(
                c,
                grading_for(grading, &c.course_id)?,
                reg.study_level,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let credits: i64 = lines.iter().map(|l| l.credits).sum();
    let difference = lines.iter().map(|l| l.tuition).sum::<i64>()
        - reg.courses.iter().map(|c| c.tuition).sum::<i64>();
    let entry = match difference {
        0 => None,
        d if d > 0 => {
            if payment_id.is_empty() {
                return Err("payment_id is required for additional charges".into());
            }
            saved_method_check(&student, payment_id)?;
            Some(Payment::new(payment_id, d))
        }
        d => {
            let to = if payment_id.is_empty() {
                reg.payment_history
                    .last()
                    .map_or("adjustment", |p| p.payment_id.as_str())
            } else {
                payment_id
            };
            Some(Payment::new(to, d))
        }
    };
    // Enrollment moves once per listed course, in list order, as the reference's loops do.
    let dropped: Vec<String> = current_courses
        .iter()
        .filter(|c| drop.contains(&c.course_id.as_str()))
        .map(|c| c.course_id.clone())
        .collect();
    let added: Vec<String> = target_courses
        .iter()
        .filter(|c| add.contains(&c.course_id.as_str()))
        .map(|c| c.course_id.clone())
        .collect();
    for id in &dropped {
        if let Some(c) = db.courses.get_mut(id) {
            c.current_enrollment = (c.current_enrollment - 1).max(0);
        }
    }
    for id in &added {
        if let Some(c) = db.courses.get_mut(id) {
            c.current_enrollment += 1;
        }
    }
    let Some(r) = db.registrations.get_mut(&reg.registration_id) else {
        return Err(format!("Registration {} not found", reg.registration_id));
    };
    r.payment_history.extend(entry);
    r.courses = lines;
    r.total_credits = credits;
    r.overload_credits = (credits - STANDARD_LOAD).max(0);
    r.status = EnrollmentStatus::for_credits(credits);
    Ok(Py::model(&*r).to_json_str())
}

fn cancel_registration(db: &mut SchoolDb, a: &Args) -> Result<String, String> {
    let reg = registration(db, a.str("registration_id")?)?.clone();
    // Departure: the reference negates the whole history again, refunding its own refunds.
    if !reg.is_active() && reg.net_paid() == 0 {
        return Err(format!(
            "Registration {} is already cancelled",
            reg.registration_id
        ));
    }
    for c in &reg.courses {
        course(db, &c.course_id)?;
    }
    for c in &reg.courses {
        if let Some(course) = db.courses.get_mut(&c.course_id) {
            course.current_enrollment = (course.current_enrollment - 1).max(0);
        }
    }
    let Some(r) = db.registrations.get_mut(&reg.registration_id) else {
        return Err(format!("Registration {} not found", reg.registration_id));
    };
    refund_all(&mut r.payment_history);
    r.courses.clear();
    r.total_credits = 0;
    r.overload_credits = 0;
    r.status = EnrollmentStatus::for_credits(0);
    Ok(Py::model(&*r).to_json_str())
}

fn pay_registration(db: &mut SchoolDb, a: &Args) -> Result<String, String> {
    let payment: Payment = a.parse("payment")?;
    let reg = registration(db, a.str("registration_id")?)?;
    let student = student(db, &reg.student_id)?;
    saved_method_check(student, &payment.payment_id)?;
    let id = reg.registration_id.clone();
    let Some(r) = db.registrations.get_mut(&id) else {
        return Err(format!("Registration {id} not found"));
    };
    r.payment_history.push(payment);
    Ok(Py::model(&*r).to_json_str())
}
