//! The school database: courses (with their weekly meeting pattern and per-date meeting
//! records), students (with saved payment methods) and registrations (courses taken in a
//! term, tuition per course, payment history).
//!
//! Rows mirror the reference's pydantic models field for field and in the same order, and
//! serialise in `model_dump()` form (optional fields as `null`, the saved contact's date of
//! birth as `date_of_birth`), so a tool output is tau2's text and an export is what tau2
//! hashes. Import also accepts the alias `date-of-birth` that the reference's `db.json`
//! uses. Enumerated fields are Rust enums, so a bad value in an imported file is an import
//! error naming the row, as pydantic's validation is.
//!
//! Architecture invariant: data and the `Database` glue only; tool behaviour lives in
//! `tools.rs`, grounding in `ground.rs`, refinement hooks in `hooks.rs`.

pub use crate::domain::kit::rows::{MethodInfo, Name};

use crate::domain::DomainError;
use crate::domain::kit::tau2;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The tables, as the top-level keys of `db.json`.
pub const TABLES: [&str; 3] = ["courses", "students", "registrations"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Weekday {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

impl Weekday {
    pub const ALL: [Weekday; 7] = [
        Weekday::Monday,
        Weekday::Tuesday,
        Weekday::Wednesday,
        Weekday::Thursday,
        Weekday::Friday,
        Weekday::Saturday,
        Weekday::Sunday,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Weekday::Monday => "Monday",
            Weekday::Tuesday => "Tuesday",
            Weekday::Wednesday => "Wednesday",
            Weekday::Thursday => "Thursday",
            Weekday::Friday => "Friday",
            Weekday::Saturday => "Saturday",
            Weekday::Sunday => "Sunday",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StudyLevel {
    Undergraduate,
    Graduate,
    ContinuingEd,
}

impl StudyLevel {
    pub const NAMES: [&'static str; 3] = ["undergraduate", "graduate", "continuing_ed"];

    pub fn name(self) -> &'static str {
        match self {
            StudyLevel::Undergraduate => "undergraduate",
            StudyLevel::Graduate => "graduate",
            StudyLevel::ContinuingEd => "continuing_ed",
        }
    }

    pub fn parse(s: &str) -> Option<StudyLevel> {
        [
            StudyLevel::Undergraduate,
            StudyLevel::Graduate,
            StudyLevel::ContinuingEd,
        ]
        .into_iter()
        .find(|l| l.name() == s)
    }

    /// Tuition per credit in dollars (the policy's rate table).
    pub fn rate(self) -> i64 {
        match self {
            StudyLevel::Undergraduate => 500,
            StudyLevel::Graduate => 800,
            StudyLevel::ContinuingEd => 400,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EnrollmentStatus {
    #[serde(rename = "full-time")]
    FullTime,
    #[serde(rename = "part-time")]
    PartTime,
}

impl EnrollmentStatus {
    /// Full-time from 12 credits.
    pub fn for_credits(credits: i64) -> EnrollmentStatus {
        if credits >= 12 {
            EnrollmentStatus::FullTime
        } else {
            EnrollmentStatus::PartTime
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EnrollmentStatus::FullTime => "full-time",
            EnrollmentStatus::PartTime => "part-time",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GradingOption {
    #[serde(rename = "letter")]
    Letter,
    #[serde(rename = "pass/fail")]
    PassFail,
    #[serde(rename = "audit")]
    Audit,
}

impl GradingOption {
    pub const NAMES: [&'static str; 3] = ["letter", "pass/fail", "audit"];

    pub fn name(self) -> &'static str {
        match self {
            GradingOption::Letter => "letter",
            GradingOption::PassFail => "pass/fail",
            GradingOption::Audit => "audit",
        }
    }

    pub fn parse(s: &str) -> Option<GradingOption> {
        [
            GradingOption::Letter,
            GradingOption::PassFail,
            GradingOption::Audit,
        ]
        .into_iter()
        .find(|g| g.name() == s)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum YesNo {
    Yes,
    No,
}

impl YesNo {
    pub fn name(self) -> &'static str {
        match self {
            YesNo::Yes => "yes",
            YesNo::No => "no",
        }
    }
}

/// The school health insurance fee, charged at registration when chosen.
pub const HEALTH_INSURANCE_FEE: i64 = 300;

/// Credits above this are overload.
pub const STANDARD_LOAD: i64 = 18;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contact {
    pub first_name: String,
    pub last_name: String,
    pub email: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    pub campus: String,
    pub building: String,
    pub room: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeetingPattern {
    pub days: Vec<Weekday>,
    /// `HH-MM`.
    pub start_time_est: String,
    pub end_time_est: String,
}

/// One dated meeting record, as the reference's three-way union (`status` first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum MeetingRecord {
    Held {
        topic: String,
        actual_start_time_est: String,
        actual_end_time_est: String,
        notes: Option<String>,
    },
    Canceled {
        topic: String,
        notes: Option<String>,
    },
    Rescheduled {
        topic: String,
        actual_start_time_est: String,
        actual_end_time_est: String,
        notes: Option<String>,
    },
}

impl MeetingRecord {
    pub fn status(&self) -> &'static str {
        match self {
            MeetingRecord::Held { .. } => "held",
            MeetingRecord::Canceled { .. } => "canceled",
            MeetingRecord::Rescheduled { .. } => "rescheduled",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Course {
    pub course_id: String,
    pub department: String,
    pub course_code: String,
    pub title: String,
    pub credits: i64,
    pub term: String,
    pub instructor: Contact,
    pub location: Location,
    pub scheduled_first_meeting_est: String,
    pub scheduled_last_meeting_est: String,
    pub meeting_pattern: MeetingPattern,
    /// `YY-MM-DD` -> record.
    pub dates: BTreeMap<String, MeetingRecord>,
    pub capacity: i64,
    pub waitlist_capacity: i64,
    pub current_enrollment: i64,
    pub current_waitlist: i64,
}

impl Course {
    pub fn is_full(&self) -> bool {
        self.current_enrollment >= self.capacity
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub country: String,
    pub state: String,
    pub zip: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentMethod {
    pub source: String,
    pub payment_method_id: String,
    pub extra_info: MethodInfo,
}

impl PaymentMethod {
    /// How the student names it, and the strings that reveals.
    pub fn phrase(&self) -> (String, Vec<String>) {
        tau2::saved_method(
            &self.source,
            self.extra_info.brand.as_deref(),
            self.extra_info.last_four.as_deref(),
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedContact {
    pub first_name: String,
    pub last_name: String,
    pub relationship: String,
    pub phone: String,
    /// `YY-MM-DD`; `date-of-birth` in the reference's `db.json`.
    #[serde(alias = "date-of-birth")]
    pub date_of_birth: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    pub school: String,
    pub degree: String,
    pub major: String,
    pub minor: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Student {
    pub student_id: String,
    pub name: Name,
    pub address: Address,
    pub email: String,
    /// `YY-MM-DD`.
    pub dob: String,
    pub payment_methods: BTreeMap<String, PaymentMethod>,
    pub saved_contacts: Vec<SavedContact>,
    pub program: Program,
    pub membership: Option<String>,
    pub registrations: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredCourse {
    pub course_id: String,
    pub course_code: String,
    pub section: String,
    pub title: String,
    pub credits: i64,
    pub grading_option: GradingOption,
    pub tuition: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinancialAid {
    pub scholarships: i64,
    pub grants: i64,
    pub loans: i64,
}

/// A payment or refund of a registration, in whole dollars.
pub type Payment = crate::domain::kit::rows::Payment<i64>;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub registration_id: String,
    pub student_id: String,
    pub campus: String,
    pub program: String,
    pub study_level: StudyLevel,
    pub term: String,
    pub status: EnrollmentStatus,
    pub courses: Vec<RegisteredCourse>,
    pub advisors: Vec<Contact>,
    pub payment_history: Vec<Payment>,
    /// `YY-MM-DD`.
    pub created_at: String,
    pub total_credits: i64,
    pub overload_credits: i64,
    pub financial_aid: FinancialAid,
    pub health_insurance: YesNo,
}

impl Registration {
    /// What the registration costs at its stored per-course tuition, insurance included.
    pub fn total_due(&self) -> i64 {
        let fee = match self.health_insurance {
            YesNo::Yes => HEALTH_INSURANCE_FEE,
            YesNo::No => 0,
        };
        self.courses.iter().map(|c| c.tuition).sum::<i64>() + fee
    }

    /// Net amount recorded in the payment history (refunds are negative).
    pub fn net_paid(&self) -> i64 {
        self.payment_history.iter().map(|p| p.amount).sum()
    }

    /// What is still owed (negative when overpaid).
    pub fn balance_due(&self) -> i64 {
        self.total_due() - self.net_paid()
    }

    /// A registration with courses; one without is cancelled (or emptied by drops).
    pub fn is_active(&self) -> bool {
        !self.courses.is_empty()
    }
}

crate::domain::kit::glue::database_struct! {
    /// The whole school state. Courses list in the order the reference lists them
    /// (`Table::in_order`: its `db.json` order; id order for a generated database).
    SchoolDb { courses: Course, students: Student, registrations: Registration }
}

impl SchoolDb {
    /// Read the reference's tables (`db.json` top-level keys) and check that references
    /// resolve, so a tool never meets an id it cannot explain. Courses keep the order the
    /// file at `origin` lists them in, when it is readable.
    pub fn import(tables: &BTreeMap<String, Value>, origin: &Path) -> Result<Self, DomainError> {
        let courses: BTreeMap<String, Course> = tau2::parse_table(tables, "courses", origin)?;
        let students: BTreeMap<String, Student> = tau2::parse_table(tables, "students", origin)?;
        let registrations: BTreeMap<String, Registration> =
            tau2::parse_table(tables, "registrations", origin)?;
        let err = |message: String| DomainError::Import {
            path: origin.display().to_string(),
            message,
        };
        for (id, r) in &registrations {
            if !students.contains_key(&r.student_id) {
                return Err(err(format!(
                    "registrations['{id}']: unknown student_id '{}'",
                    r.student_id
                )));
            }
            if let Some(c) = r
                .courses
                .iter()
                .find(|c| !courses.contains_key(&c.course_id))
            {
                return Err(err(format!(
                    "registrations['{id}']: unknown course_id '{}'",
                    c.course_id
                )));
            }
        }
        for (id, s) in &students {
            if let Some(r) = s
                .registrations
                .iter()
                .find(|r| !registrations.contains_key(*r))
            {
                return Err(err(format!("students['{id}']: unknown registration '{r}'")));
            }
        }
        let order = tau2::document_order(origin);
        let mut db = SchoolDb::new(courses, students, registrations);
        tau2::keep_document_order(&mut db.courses, &order);
        Ok(db)
    }

    /// The student's registrations, in the order their record lists them.
    pub fn registrations_of<'a>(&'a self, student: &'a Student) -> Vec<&'a Registration> {
        student
            .registrations
            .iter()
            .filter_map(|id| self.registrations.get(id))
            .collect()
    }

    /// Terms offered, in order.
    pub fn terms(&self) -> Vec<String> {
        let mut terms: Vec<String> = self.courses.iter().map(|(_, c)| c.term.clone()).collect();
        terms.sort();
        terms.dedup();
        terms
    }
}
