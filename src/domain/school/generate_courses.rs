//! The school's courses in their two terms: department titles at a level, meeting
//! patterns and times in the reference's mix, dated meeting records (held, cancelled or
//! rescheduled; only announced changes in the fall term, after the clock), a room and a
//! capacity.
//!
//! Architecture invariant: generation is pure — same seed and split, same database; no
//! clock, no I/O.

use super::db::{Course, Location, MeetingPattern, MeetingRecord, Weekday};
use super::generate_vocab::{Department, VOCABULARY, contact, fresh_id};
use crate::domain::kit::clock::weekday;
use crate::domain::kit::draw::{digits, pick, weighted};
use crate::domain::kit::tau2::{day_of, short_date};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

pub const SPRING: &str = "2025-SPRING";
pub const FALL: &str = "2025-FALL";

/// `HH-MM` from minutes.
fn clock_text(minutes: i64) -> String {
    format!("{:02}-{:02}", minutes / 60, minutes % 60)
}

/// `YY-MM-DD-HH-MM`.
fn stamp(day: i64, minutes: i64) -> String {
    format!("{}-{}", short_date(day), clock_text(minutes))
}

fn weekday_of(day: i64) -> Weekday {
    Weekday::ALL[weekday(day)]
}

pub(super) fn generate_courses(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    count: usize,
) -> BTreeMap<String, Course> {
    let v = &*VOCABULARY;
    let fall = (count as f64 * 0.1).round() as usize;
    let mut taken: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut codes: BTreeSet<String> = BTreeSet::new();
    let capacity_titles: usize = v.departments.iter().map(|d| d.titles.len()).sum();
    let mut out = BTreeMap::new();
    for i in 0..count.min(capacity_titles) {
        let term = if i < count - fall { SPRING } else { FALL };
        let (d, t) = loop {
            let d = rng.random_range(0..v.departments.len());
            let t = rng.random_range(0..v.departments[d].titles.len());
            if taken.insert((d, t)) {
                break (d, t);
            }
        };
        let dept = &v.departments[d];
        let level = 1 + t * 4 / dept.titles.len();
        let code = loop {
            let code = format!("{}-{}{}", dept.code, level, digits(rng, 3));
            if codes.insert(code.clone()) {
                break code;
            }
        };
        let course = generate_course(rng, used, dept, &dept.titles[t], code, term);
        out.insert(course.course_id.clone(), course);
    }
    out
}

fn generate_course(
    rng: &mut ChaCha8Rng,
    used: &mut BTreeSet<String>,
    dept: &Department,
    title: &str,
    course_code: String,
    term: &str,
) -> Course {
    use Weekday::*;
    let v = &*VOCABULARY;
    // (days, length in minutes), the reference's mix.
    let patterns: &[(&[Weekday], &[i64], u32)] = &[
        (&[Tuesday, Thursday], &[75], 37),
        (&[Monday, Wednesday], &[75, 75, 50], 33),
        (&[Friday], &[150, 165], 11),
        (&[Monday, Wednesday, Friday], &[50], 10),
        (&[Wednesday], &[110, 150], 4),
        (&[Tuesday], &[110, 165], 2),
        (&[Thursday], &[90, 150], 2),
        (&[Monday], &[150], 1),
    ];
    let index = weighted(
        rng,
        &patterns
            .iter()
            .enumerate()
            .map(|(i, p)| (i, p.2))
            .collect::<Vec<_>>(),
    );
    let (days, lengths, _) = patterns[index];
    let length = *pick(rng, lengths);
    let start = weighted(
        rng,
        &[
            (9 * 60, 24),
            (11 * 60, 24),
            (14 * 60, 17),
            (9 * 60 + 30, 10),
            (13 * 60 + 30, 7),
            (13 * 60, 6),
            (10 * 60, 4),
            (15 * 60, 3),
            (10 * 60 + 30, 3),
            (18 * 60, 2),
            (15 * 60 + 30, 2),
        ],
    );
    let end = start + length;
    let (term_start, weeks) = if term == FALL {
        (day_of(2025, 9, 2), 15)
    } else {
        (day_of(2025, 1, 13), 15)
    };
    let meets = |day: i64| days.contains(&weekday_of(day));
    let first = (term_start + rng.random_range(0..3)..term_start + 14)
        .find(|d| meets(*d))
        .unwrap_or(term_start);
    let last = (first + weeks * 7 - 7..first + weeks * 7)
        .rev()
        .find(|d| meets(*d))
        .unwrap_or(first + weeks * 7);
    let meeting_days: Vec<i64> = (first..first + 35).filter(|d| meets(*d)).collect();
    let records = if rng.random_bool(0.03) { 4 } else { 3 };
    let mut dates = BTreeMap::new();
    let mut k = 0;
    for &day in &meeting_days {
        if dates.len() == records {
            break;
        }
        k += 1;
        // Records skip a meeting now and then, as the reference's do.
        if k > 1 && rng.random_bool(0.2) {
            continue;
        }
        let topic = pick(rng, &v.topics).clone();
        let future = term == FALL;
        let status = if future {
            weighted(rng, &[("canceled", 1), ("rescheduled", 1)])
        } else {
            weighted(rng, &[("held", 54), ("canceled", 23), ("rescheduled", 23)])
        };
        let note = |rng: &mut ChaCha8Rng, bank: &[String]| {
            rng.random_bool(0.85).then(|| pick(rng, bank).clone())
        };
        let record = match status {
            "held" => {
                let late = weighted(rng, &[(0, 6), (2, 2), (5, 1)]);
                let early = weighted(rng, &[(0, 7), (5, 2), (10, 1)]);
                MeetingRecord::Held {
                    topic,
                    actual_start_time_est: stamp(day, start + late),
                    actual_end_time_est: stamp(day, end - early),
                    notes: note(rng, &v.held_notes),
                }
            }
            "canceled" => MeetingRecord::Canceled {
                topic,
                notes: note(rng, &v.canceled_notes),
            },
            _ => {
                let moved = day + rng.random_range(1..=3);
                let shift = weighted(rng, &[(0, 2), (60, 1), (120, 1)]);
                MeetingRecord::Rescheduled {
                    topic,
                    actual_start_time_est: stamp(moved, start + shift),
                    actual_end_time_est: stamp(moved, end + shift),
                    notes: note(rng, &v.rescheduled_notes),
                }
            }
        };
        dates.insert(short_date(day), record);
    }
    let campus = if rng.random_bool(0.7) {
        v.campuses[0].clone()
    } else {
        pick(rng, &v.campuses).clone()
    };
    let building = pick(rng, &dept.buildings).clone();
    let initials: String = building
        .split_whitespace()
        .filter_map(|w| w.chars().next())
        .collect();
    let capacity = weighted(
        rng,
        &[
            (15, 1),
            (18, 3),
            (20, 7),
            (24, 3),
            (25, 15),
            (28, 2),
            (30, 20),
            (35, 9),
            (40, 18),
            (45, 5),
            (50, 5),
            (60, 16),
            (70, 1),
            (80, 8),
            (100, 2),
            (120, 4),
        ],
    );
    Course {
        course_id: fresh_id(rng, used, 7),
        department: dept.name.clone(),
        course_code,
        title: title.to_string(),
        credits: weighted(rng, &[(3, 55), (4, 43), (5, 2)]),
        term: term.to_string(),
        instructor: contact(rng),
        location: Location {
            campus,
            building,
            room: format!("{initials}-{}", rng.random_range(100..420)),
        },
        scheduled_first_meeting_est: stamp(first, start),
        scheduled_last_meeting_est: stamp(last, end),
        meeting_pattern: MeetingPattern {
            days: days.to_vec(),
            start_time_est: clock_text(start),
            end_time_est: clock_text(end),
        },
        dates,
        capacity,
        waitlist_capacity: weighted(rng, &[(5, 4), (8, 2), (10, 5), (12, 1), (15, 2), (20, 1)]),
        current_enrollment: 0,
        current_waitlist: 0,
    }
}
