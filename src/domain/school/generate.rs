//! The deterministic synthetic school databases, drawn from a ChaCha8 stream seeded by the
//! caller and the split: the evaluation database at the reference's scale (120 students,
//! 120 courses, 120 registrations) and the training database at the paper's (1,000
//! students, 120 courses, 1,345 registrations).
//!
//! Distributions follow the reference's `db.json` (about 9 in 10 courses in 2025-SPRING,
//! the rest in 2025-FALL; 3- and 4-credit courses; Tuesday/Thursday and Monday/Wednesday
//! patterns of 75 minutes dominating, with weekly three-hour seminars; about one course in
//! six full; three or four dated meeting records per course, about half held; one or two
//! saved payment methods per student; one to three courses per registration, mostly
//! letter-graded), with our own names, titles and places (`vocabulary.toml`).
//!
//! Unlike the reference data, ours is internally consistent: every tuition line is credits
//! x the rate of the registration's study level, the study level matches the degree, the
//! enrollment status matches the credits, every payment names one of the student's saved
//! methods, each course's enrollment covers the registrations that hold it, and new-term
//! (fall) courses carry only announced cancellations or reschedulings, never "held"
//! meetings after the clock. About four registrations in ten are part-paid (a balance is
//! due), so paying a balance is a task a customer can have. In the training database some
//! students hold a cancelled registration beside their active ones.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{
    Address, Contact, Course, EnrollmentStatus, FinancialAid, GradingOption, MethodInfo, Name,
    Payment, PaymentMethod, Program, RegisteredCourse, Registration, STANDARD_LOAD, SavedContact,
    SchoolDb, Student, StudyLevel, YesNo,
};
use super::generate_courses::generate_courses;
pub use super::generate_courses::{FALL, SPRING};
use super::generate_vocab::{VOCABULARY, contact, fresh_id, random_day};
use super::tools::{conflict, tuition};
use crate::domain::Split;
use crate::domain::kit::draw::{Scales, counts_summing_to, digits, pick, weighted};
use crate::domain::kit::rows::refund_all;
use crate::domain::kit::tau2::{day_of, short_date};
use crate::seed::derive_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Sizes of one database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
pub struct Scale {
    pub students: usize,
    pub courses: usize,
    pub registrations: usize,
}

/// The sizes per split (`[scale.eval]`, `[scale.train]` in `vocabulary.toml`).
pub static SCALES: LazyLock<Scales<Scale>> =
    LazyLock::new(|| Scales::read(include_str!("vocabulary.toml")));

/// The database of one split, at its size in [`SCALES`]; the training
/// one lets third registrations be cancelled ones.
pub fn generate(seed: u64, split: Split) -> SchoolDb {
    let scale = SCALES.of(split);
    let cancelled = split == Split::Train;
    let mut rng = derive_rng(seed, &["school", "db", split.as_str()]);
    let mut used = BTreeSet::new();
    let v = &*VOCABULARY;
    if v.departments.is_empty() || v.first_names.is_empty() {
        return SchoolDb::new(BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    }
    let mut courses = generate_courses(&mut rng, &mut used, scale.courses);
    let advisors: Vec<Contact> = (0..20).map(|_| contact(&mut rng)).collect();
    let mut students = BTreeMap::new();
    let mut order = Vec::new();
    for _ in 0..scale.students {
        let s = generate_student(&mut rng, &mut used);
        order.push(s.student_id.clone());
        students.insert(s.student_id.clone(), s);
    }
    // Registrations per student, adjusted to the exact total.
    let weights: &[(usize, u32)] = if cancelled {
        &[(0, 10), (1, 55), (2, 25), (3, 10)]
    } else {
        &[(0, 12), (1, 76), (2, 12)]
    };
    let counts = counts_summing_to(&mut rng, order.len(), weights, scale.registrations);
    let mut registrations = BTreeMap::new();
    let mut lines_per_course: BTreeMap<String, i64> = BTreeMap::new();
    for (sid, &count) in order.iter().zip(&counts) {
        let Some(student) = students.get_mut(sid) else {
            continue;
        };
        // One active registration per term: spring, then fall; a third is a cancelled one.
        // (Fall has a tenth of the courses, so in the larger training database half the
        // two-registration students hold a cancelled spring one instead of a fall one.)
        let plan: Vec<(&str, bool)> = match count {
            0 => vec![],
            1 => vec![(if rng.random_bool(0.1) { FALL } else { SPRING }, true)],
            2 if cancelled && rng.random_bool(0.5) => vec![(SPRING, false), (SPRING, true)],
            2 => vec![(SPRING, true), (FALL, true)],
            _ => vec![(SPRING, false), (SPRING, true), (FALL, true)],
        };
        for (term, active) in plan {
            let reg = generate_registration(
                &mut rng,
                &mut used,
                student,
                term,
                active,
                &courses,
                &mut lines_per_course,
                &advisors,
            );
            student.registrations.push(reg.registration_id.clone());
            registrations.insert(reg.registration_id.clone(), reg);
        }
    }
    settle_enrollment(&mut rng, &mut courses, &lines_per_course);
    SchoolDb::new(courses, students, registrations)
}

fn generate_student(rng: &mut ChaCha8Rng, used: &mut BTreeSet<String>) -> Student {
    let v = &*VOCABULARY;
    let level = weighted(
        rng,
        &[
            (StudyLevel::Undergraduate, 770),
            (StudyLevel::Graduate, 205),
            (StudyLevel::ContinuingEd, 25),
        ],
    );
    let first = pick(rng, &v.first_names).clone();
    let last = pick(rng, &v.last_names).clone();
    let (from, to) = match level {
        StudyLevel::Undergraduate => (2001, 2007),
        StudyLevel::Graduate => (1988, 2001),
        StudyLevel::ContinuingEd => (1965, 1995),
    };
    let born = random_day(rng, day_of(from, 1, 1), day_of(to, 12, 31));
    let (city, state, zip3) = pick(rng, &v.cities).clone();
    let mut payment_methods = BTreeMap::new();
    let mut lasts = BTreeSet::new();
    for _ in 0..weighted(rng, &[(1usize, 78), (2, 22)]) {
        let id = format!("PM-{}", fresh_id(rng, used, 6));
        let last_four = loop {
            let l = digits(rng, 4);
            if lasts.insert(l.clone()) {
                break l;
            }
        };
        let method = if rng.random_bool(0.75) {
            PaymentMethod {
                source: "credit_card".into(),
                payment_method_id: id.clone(),
                extra_info: MethodInfo {
                    brand: Some(pick(rng, &v.card_brands).clone()),
                    last_four: Some(last_four),
                },
            }
        } else {
            PaymentMethod {
                source: "bank_account".into(),
                payment_method_id: id.clone(),
                extra_info: MethodInfo {
                    brand: None,
                    last_four: Some(last_four),
                },
            }
        };
        payment_methods.insert(id, method);
    }
    let saved_contacts = (0..weighted(rng, &[(1usize, 92), (2, 8)]))
        .map(|_| {
            let relationship = pick(rng, &v.relationships).clone();
            let family = !matches!(relationship.as_str(), "friend" | "spouse");
            let contact_born = random_day(rng, day_of(1950, 1, 1), day_of(2000, 12, 31));
            SavedContact {
                first_name: pick(rng, &v.first_names).clone(),
                last_name: if family {
                    last.clone()
                } else {
                    pick(rng, &v.last_names).clone()
                },
                relationship,
                phone: format!("{}-555-{}", rng.random_range(201..990), digits(rng, 4)),
                date_of_birth: short_date(contact_born),
            }
        })
        .collect();
    let major = pick(rng, &v.departments).name.clone();
    let minor = rng
        .random_bool(0.7)
        .then(|| pick(rng, &v.departments).name.clone())
        .filter(|m| *m != major);
    let (school, degree) = match level {
        StudyLevel::Undergraduate => (
            pick(rng, &v.schools).clone(),
            pick(rng, &v.undergraduate_degrees).clone(),
        ),
        StudyLevel::Graduate => (
            v.graduate_school.clone(),
            pick(rng, &v.graduate_degrees).clone(),
        ),
        StudyLevel::ContinuingEd => (
            v.continuing_school.clone(),
            pick(rng, &v.continuing_degrees).clone(),
        ),
    };
    let membership = if rng.random_bool(0.98) {
        Some(pick(rng, &v.memberships).clone())
    } else {
        None
    };
    let student_id = fresh_id(rng, used, 7);
    Student {
        email: format!(
            "{}.{}{}@{}",
            first.to_lowercase(),
            last.to_lowercase(),
            digits(rng, 2),
            v.university_domain
        ),
        student_id,
        name: Name {
            first_name: first,
            last_name: last,
        },
        address: Address {
            street: format!("{} {}", rng.random_range(10..1999), pick(rng, &v.streets)),
            city,
            country: "USA".into(),
            state,
            zip: format!("{zip3}{}", digits(rng, 2)),
        },
        dob: short_date(born),
        payment_methods,
        saved_contacts,
        program: Program {
            school,
            degree,
            major,
            minor,
        },
        membership,
        registrations: Vec::new(),
    }
}

/// The study level a degree implies (the policy's rule, and the generator's choice).
pub fn level_of_degree(degree: &str) -> StudyLevel {
    let v = &*VOCABULARY;
    if v.graduate_degrees.iter().any(|d| d == degree) {
        StudyLevel::Graduate
    } else if v.continuing_degrees.iter().any(|d| d == degree) {
        StudyLevel::ContinuingEd
    } else {
        StudyLevel::Undergraduate
    }
}

#[allow(clippy::too_many_arguments)]
fn generate_registration(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    student: &Student,
    term: &str,
    active: bool,
    courses: &BTreeMap<String, Course>,
    lines_per_course: &mut BTreeMap<String, i64>,
    advisors: &[Contact],
) -> Registration {
    let level = level_of_degree(&student.program.degree);
    let wanted = weighted(rng, &[(1usize, 15), (2, 55), (3, 20), (4, 10)]);
    // Only active registrations hold seats; a cancelled one gave its seats back.
    let mut open: Vec<&Course> = courses
        .values()
        .filter(|c| c.term == term)
        .filter(|c| {
            !active || lines_per_course.get(&c.course_id).copied().unwrap_or(0) < c.capacity - 1
        })
        .collect();
    let mut chosen: Vec<&Course> = Vec::new();
    while chosen.len() < wanted && !open.is_empty() {
        let c = open.swap_remove(rng.random_range(0..open.len()));
        if chosen.iter().all(|x| !conflict(x, c).unwrap_or(true)) {
            chosen.push(c);
        }
    }
    if active && chosen.is_empty() {
        // The term is full: the student tried and cancelled.
        return generate_registration(
            rng,
            used,
            student,
            term,
            false,
            courses,
            lines_per_course,
            advisors,
        );
    }
    let lines: Vec<RegisteredCourse> = chosen
        .iter()
        .map(|c| RegisteredCourse {
            course_id: c.course_id.clone(),
            course_code: c.course_code.clone(),
            section: weighted(rng, &[("001", 6), ("002", 3), ("003", 1)]).to_string(),
            title: c.title.clone(),
            credits: c.credits,
            grading_option: weighted(
                rng,
                &[
                    (GradingOption::Letter, 75),
                    (GradingOption::PassFail, 15),
                    (GradingOption::Audit, 10),
                ],
            ),
            tuition: tuition(c, level),
        })
        .collect();
    let insurance = if rng.random_bool(0.6) {
        YesNo::Yes
    } else {
        YesNo::No
    };
    let methods: Vec<&String> = student.payment_methods.keys().collect();
    let mut reg = Registration {
        registration_id: fresh_id(rng, used, 7),
        student_id: student.student_id.clone(),
        campus: chosen
            .first()
            .map_or_else(|| "Central".to_string(), |c| c.location.campus.clone()),
        program: format!("{} {}", student.program.degree, student.program.major),
        study_level: level,
        term: term.to_string(),
        status: EnrollmentStatus::PartTime,
        courses: lines,
        advisors: (0..weighted(rng, &[(1usize, 6), (2, 4)]))
            .map(|_| pick(rng, advisors).clone())
            .collect(),
        payment_history: Vec::new(),
        created_at: String::new(),
        total_credits: 0,
        overload_credits: 0,
        financial_aid: FinancialAid {
            scholarships: weighted(rng, &[(0, 3), (500, 2), (1000, 3), (1500, 1), (2500, 1)]),
            grants: weighted(rng, &[(0, 4), (250, 1), (500, 3), (1000, 2)]),
            loans: weighted(rng, &[(0, 3), (1000, 2), (2000, 3), (3500, 1)]),
        },
        health_insurance: insurance,
    };
    let due = reg.total_due();
    let part_paid = rng.random_bool(0.4) && due >= 400;
    let paid = if part_paid {
        due - 100 * rng.random_range(1..=(due / 200).max(1))
    } else {
        due
    };
    reg.payment_history = if methods.len() > 1 && rng.random_bool(0.4) && paid >= 200 {
        let first = 100 * rng.random_range(1..paid / 100);
        vec![
            Payment::new(methods[0], first),
            Payment::new(methods[1], paid - first),
        ]
    } else {
        vec![Payment::new(*pick(rng, &methods), paid)]
    };
    let (from, to) = match (term, active) {
        (_, false) => (day_of(2024, 10, 15), day_of(2024, 11, 30)),
        (FALL, _) => (day_of(2025, 4, 1), day_of(2025, 5, 14)),
        _ => (day_of(2024, 12, 1), day_of(2025, 1, 10)),
    };
    reg.created_at = short_date(random_day(rng, from, to));
    if active {
        for c in &reg.courses {
            *lines_per_course.entry(c.course_id.clone()).or_default() += 1;
        }
        let credits: i64 = reg.courses.iter().map(|c| c.credits).sum();
        reg.total_credits = credits;
        reg.overload_credits = (credits - STANDARD_LOAD).max(0);
        reg.status = EnrollmentStatus::for_credits(credits);
    } else {
        // A cancelled registration: every payment refunded, no courses left.
        refund_all(&mut reg.payment_history);
        reg.courses.clear();
    }
    reg
}

/// Enrollment covers every registration that holds a course; about one course in six is
/// full, the others a few seats short (some far from full).
fn settle_enrollment(
    rng: &mut ChaCha8Rng,
    courses: &mut BTreeMap<String, Course>,
    lines: &BTreeMap<String, i64>,
) {
    for c in courses.values_mut() {
        let held = lines.get(&c.course_id).copied().unwrap_or(0);
        let target = if rng.random_bool(0.16) {
            c.capacity
        } else if rng.random_bool(0.6) {
            c.capacity - weighted(rng, &[(1, 1), (2, 6), (3, 2), (5, 2), (6, 1)])
        } else {
            c.capacity - rng.random_range(7..=c.capacity / 2 + 7)
        };
        c.current_enrollment = target.clamp(held, c.capacity);
        c.current_waitlist = if c.is_full() {
            rng.random_range(1..=c.waitlist_capacity)
        } else if rng.random_bool(0.3) {
            rng.random_range(1..=3.min(c.waitlist_capacity))
        } else {
            0
        };
    }
}
