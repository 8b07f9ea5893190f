//! School tests: tool behaviour on a small hand-built `db.json` (expected texts are what the
//! reference's own tools print for the same calls), the generators' scale and invariants,
//! import/export, the policy rules, grounding proposals, the refinement hooks and (opt-in)
//! the reference's tools replayed on the reference's own database.

use super::School;
use super::db::{EnrollmentStatus, GradingOption, SchoolDb, StudyLevel};
use super::generate::{self, SCALES, level_of_degree};
use crate::domain::Hooks;
use crate::domain::{Database, Domain, GroundingContext, Split, ToolKind};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tau2/school/db.json")
}

/// Two students, five courses (one full, two that clash, one in the fall), one
/// registration with a $300 balance due (our own values, the reference's shape).
fn fixture() -> SchoolDb {
    let path = fixture_path();
    let text = std::fs::read_to_string(&path).unwrap();
    let tables: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    SchoolDb::import(&tables, &path).expect("fixture imports")
}

fn call(db: &mut SchoolDb, tool: &str, args: Value) -> (String, bool) {
    let out = crate::domain::Environment::invoke(db, tool, &args);
    (out.text, out.is_error)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

const INES: &str = "S1XXXXX";
const PAUL: &str = "S2ZZZZZ";
const REG: &str = "R1YYYYY";

// ---------- tools ----------

#[test]
fn thirteen_tools_nine_read_four_write_with_customer_intents() {
    use crate::domain::Intent::*;
    let specs = School.tool_specs();
    let reads = specs.iter().filter(|s| s.kind == ToolKind::Read).count();
    assert_eq!((specs.len(), reads), (13, 9));
    let intent = |name: &str| specs.iter().find(|s| s.name == name).unwrap().intent;
    for (name, want) in [
        ("get_student_details", Lookup),
        ("search_courses", Lookup),
        ("get_course_meeting_status", Lookup),
        ("register_courses", Book),
        ("update_registration_courses", Change),
        ("cancel_registration", Cancel),
        ("pay_registration", Pay),
        ("think", Helper),
        ("transfer_to_human_agents", Transfer),
    ] {
        assert_eq!(intent(name), want, "{name}");
    }
    let transfer = specs
        .iter()
        .find(|s| s.name == "transfer_to_human_agents")
        .unwrap();
    assert!(transfer.terminates);
}

#[test]
fn lookups_print_tau2_json_and_reference_errors() {
    let mut db = fixture();
    // Plain lists print their scalars as strings; models keep their numbers.
    assert_eq!(
        call(&mut db, "list_departments", json!({})).0,
        r#"["Biology", "Economics", "History"]"#
    );
    let (out, err) = call(
        &mut db,
        "get_course_details",
        json!({"course_id": "C1AAAAA"}),
    );
    assert!(!err);
    assert_eq!(json_of(&out)["credits"], json!(4));
    assert!(out.starts_with(r#"{"course_id": "C1AAAAA", "department": "Biology""#));
    assert_eq!(
        call(
            &mut db,
            "get_course_meeting_status",
            json!({"course_id": "C1AAAAA", "date": "25-01-29"})
        )
        .0,
        r#"{"status": "canceled", "topic": "Transport", "notes": "Instructor ill."}"#
    );
    assert_eq!(
        call(
            &mut db,
            "get_course_meeting_status",
            json!({"course_id": "C1AAAAA", "date": "25-01-30"})
        ),
        (
            "Error: No record for course C1AAAAA on date 25-01-30".to_string(),
            true
        )
    );
    for (tool, key, msg) in [
        ("get_student_details", "student_id", "Student X not found"),
        ("get_course_details", "course_id", "Course X not found"),
        (
            "get_registration_details",
            "registration_id",
            "Registration X not found",
        ),
    ] {
        assert_eq!(
            call(&mut db, tool, json!({ key: "X" })),
            (format!("Error: {msg}"), true)
        );
    }
    // The saved contact's date of birth is exported under its field name.
    let (out, _) = call(&mut db, "get_student_details", json!({"student_id": INES}));
    assert!(out.contains(r#""date_of_birth": "72-11-02""#), "{out}");
    assert_eq!(
        call(
            &mut db,
            "list_courses_by_term",
            json!({"term": "2025-FALL"})
        )
        .0,
        r#"[{"course_id": "C5EEEEE", "course_code": "ECO-1000", "title": "Markets"}]"#
    );
    assert_eq!(
        call(
            &mut db,
            "list_courses_by_term",
            json!({"term": "1999-FALL"})
        )
        .0,
        "[]"
    );
}

#[test]
fn search_filters_compare_times_as_the_reference_parses_them() {
    let mut db = fixture();
    let ids = |db: &mut SchoolDb, args: Value| -> Vec<String> {
        let (out, err) = call(db, "search_courses", args);
        assert!(!err, "{out}");
        json_of(&out)
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["course_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ids(&mut db, json!({"term": "2025-SPRING", "open_only": true})),
        ["C1AAAAA", "C2BBBBB", "C4DDDDD"]
    );
    assert_eq!(
        ids(
            &mut db,
            json!({"term": "2025-SPRING", "department": "Biology", "day": "Monday", "start_after": "09-30"})
        ),
        ["C2BBBBB"]
    );
    assert_eq!(
        ids(
            &mut db,
            json!({"term": "2025-SPRING", "end_before": "11-00"})
        ),
        ["C1AAAAA"]
    );
    assert_eq!(
        call(
            &mut db,
            "search_courses",
            json!({"term": "2025-SPRING", "start_after": "9:00"})
        )
        .0,
        "Error: Invalid time format: 9:00"
    );
    assert_eq!(
        call(
            &mut db,
            "search_courses",
            json!({"term": "2025-SPRING", "start_after": "ab-00"})
        )
        .0,
        "Error: invalid literal for int() with base 10: 'ab'"
    );
}

#[test]
fn register_checks_in_the_reference_order_and_mints_three_slots() {
    let mut db = fixture();
    let reg = |courses: Value, extra: Value| {
        let mut a = json!({"student_id": INES, "term": "2025-SPRING", "course_ids": courses,
            "study_level": "undergraduate"});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    let before = db.state_hash();
    for (args, msg) in [
        (
            reg(json!(["C5EEEEE"]), json!({})),
            "Course C5EEEEE term 2025-FALL does not match requested term 2025-SPRING",
        ),
        (
            reg(json!(["C3CCCCC"]), json!({})),
            "Course HIS-1010 is full",
        ),
        (
            reg(json!(["C1AAAAA", "C2BBBBB"]), json!({})),
            "Schedule conflict between courses BIO-1100 and BIO-2200",
        ),
        (
            reg(
                json!(["C4DDDDD"]),
                json!({"payment_methods": [{"payment_id": "PM-AMEX", "amount": 1500}]}),
            ),
            "Payment method PM-AMEX not found for student S1XXXXX",
        ),
        (
            reg(
                json!(["C4DDDDD"]),
                json!({"health_insurance": "yes", "payment_methods": [{"payment_id": "PM-VISA", "amount": 1500}]}),
            ),
            "Payment amount does not add up, total due is 1800, but paid 1500",
        ),
    ] {
        assert_eq!(
            call(&mut db, "register_courses", args),
            (format!("Error: {msg}"), true)
        );
    }
    assert_eq!(db.state_hash(), before, "a refused call changes nothing");

    // Tuition = credits x the level's rate, + $300 insurance; exact split payments pass.
    let args = reg(
        json!(["C4DDDDD", "C2BBBBB"]),
        json!({"grading_options": {"C2BBBBB": "audit"}, "health_insurance": "yes",
               "payment_methods": [{"payment_id": "PM-VISA", "amount": 3000}, {"payment_id": "PM-BANK", "amount": 300}]}),
    );
    let (out, err) = call(&mut db, "register_courses", args.clone());
    assert!(!err, "{out}");
    let v = json_of(&out);
    assert_eq!(v["registration_id"], "REG001");
    assert_eq!(
        v["created_at"], "25-05-15",
        "the simulation clock, not the wall clock"
    );
    assert_eq!(v["courses"][1]["grading_option"], "audit");
    assert_eq!(v["courses"][0]["tuition"], json!(1500));
    assert_eq!(
        (v["total_credits"].clone(), v["status"].clone()),
        (json!(6), json!("part-time"))
    );
    assert_eq!(db.courses.get("C2BBBBB").unwrap().current_enrollment, 6);
    assert_eq!(
        db.students.get(INES).unwrap().registrations,
        [REG, "REG001"]
    );
    // Paul is a graduate: $800 a credit.
    let (out, err) = call(
        &mut db,
        "register_courses",
        json!({"student_id": PAUL, "term": "2025-FALL", "course_ids": ["C5EEEEE"], "study_level": "graduate",
               "payment_methods": [{"payment_id": "PM-AMEX", "amount": 3200}]}),
    );
    assert!(!err, "{out}");
    assert_eq!(json_of(&out)["registration_id"], "REG002");
    let (out, _) = call(&mut db, "register_courses", reg(json!([]), json!({})));
    assert_eq!(json_of(&out)["registration_id"], "REG003");
    // A fourth new registration in one conversation is the reference's error.
    assert_eq!(
        call(&mut db, "register_courses", reg(json!([]), json!({}))).0,
        "Error: Too many registrations created in this session"
    );
}

#[test]
fn updates_charge_or_refund_the_tuition_difference() {
    let mut db = fixture();
    // Adding BIO-2200 clashes with BIO-1100 unless BIO-1100 is dropped.
    assert_eq!(
        call(
            &mut db,
            "update_registration_courses",
            json!({"registration_id": REG, "add_course_ids": ["C2BBBBB"], "drop_course_ids": []})
        )
        .0,
        "Error: Schedule conflict between courses BIO-1100 and BIO-2200"
    );
    // Swap 4 credits for 3: a $500 refund to the last payment's method when none is named;
    // the unnamed HIS-3300 goes back to letter grading, as the reference does.
    let (out, err) = call(
        &mut db,
        "update_registration_courses",
        json!({"registration_id": REG, "add_course_ids": ["C2BBBBB"], "drop_course_ids": ["C1AAAAA"]}),
    );
    assert!(!err, "{out}");
    let v = json_of(&out);
    assert_eq!(
        v["payment_history"][2],
        json!({"payment_id": "PM-BANK", "amount": -500})
    );
    assert_eq!(v["courses"][0]["grading_option"], "letter");
    assert_eq!(db.courses.get("C1AAAAA").unwrap().current_enrollment, 9);
    assert_eq!(db.courses.get("C2BBBBB").unwrap().current_enrollment, 6);
    // Adding tuition needs a payment method, and a saved one.
    let add = json!({"registration_id": REG, "add_course_ids": ["C1AAAAA"], "drop_course_ids": ["C2BBBBB"]});
    assert_eq!(
        call(&mut db, "update_registration_courses", add.clone()).0,
        "Error: payment_id is required for additional charges"
    );
    let mut bad = add.clone();
    bad["payment_id"] = json!("PM-AMEX");
    assert_eq!(
        call(&mut db, "update_registration_courses", bad).0,
        "Error: Payment method PM-AMEX not found for student S1XXXXX"
    );
    let mut good = add;
    good["payment_id"] = json!("PM-VISA");
    let (out, err) = call(&mut db, "update_registration_courses", good);
    assert!(!err, "{out}");
    assert_eq!(
        json_of(&out)["payment_history"][3],
        json!({"payment_id": "PM-VISA", "amount": 500})
    );
}

#[test]
fn cancel_refunds_once_and_a_second_cancel_is_refused() {
    let mut db = fixture();
    let (out, err) = call(
        &mut db,
        "cancel_registration",
        json!({"registration_id": REG}),
    );
    assert!(!err, "{out}");
    let r = db.registrations.get(REG).unwrap();
    assert_eq!(r.net_paid(), 0);
    assert_eq!(r.payment_history.len(), 4);
    assert!(r.courses.is_empty());
    assert_eq!((r.total_credits, r.status), (0, EnrollmentStatus::PartTime));
    assert_eq!(db.courses.get("C4DDDDD").unwrap().current_enrollment, 2);
    let before = db.state_hash();
    // Departure: the reference negates the whole history again (refunding the refunds).
    assert_eq!(
        call(
            &mut db,
            "cancel_registration",
            json!({"registration_id": REG})
        ),
        (
            "Error: Registration R1YYYYY is already cancelled".to_string(),
            true
        )
    );
    assert_eq!(db.state_hash(), before);
}

#[test]
fn pay_records_any_saved_method_and_refuses_others() {
    let mut db = fixture();
    assert_eq!(
        call(
            &mut db,
            "pay_registration",
            json!({"registration_id": REG, "payment": {"payment_id": "PM-AMEX", "amount": 300}})
        )
        .0,
        "Error: Payment method PM-AMEX not found for student S1XXXXX"
    );
    let (out, err) = call(
        &mut db,
        "pay_registration",
        json!({"registration_id": REG, "payment": {"payment_id": "PM-BANK", "amount": 300}}),
    );
    assert!(!err, "{out}");
    assert_eq!(db.registrations.get(REG).unwrap().balance_due(), 0);
    let (out, err) = call(
        &mut db,
        "pay_registration",
        json!({"registration_id": REG, "payment": {"payment_id": "PM-BANK", "amount": 12.5}}),
    );
    assert!(err, "a fractional amount is not an int: {out}");
    let (out, err) = call(&mut db, "think", json!({"thought": "check the balance"}));
    assert_eq!((out.as_str(), err), ("", false));
}

// ---------- databases ----------

#[test]
fn import_accepts_the_alias_names_the_row_and_exports_model_dump_form() {
    let db = fixture();
    let exported = db.to_tau_bench();
    assert_eq!(
        exported.keys().collect::<Vec<_>>(),
        ["courses", "registrations", "students"]
    );
    let contact = &exported["students"][INES]["saved_contacts"][0];
    assert_eq!(contact["date_of_birth"], "72-11-02");
    assert!(contact.get("date-of-birth").is_none());
    // Optional fields are written as null, as model_dump fills them in.
    assert_eq!(exported["students"][PAUL]["program"]["minor"], Value::Null);
    // The export imports back to the same state.
    let path = Path::new("export");
    let again = SchoolDb::import(&exported, path).unwrap();
    assert_eq!(again.state_hash(), db.state_hash());
    // A bad enumerated value is an error naming the file, table and row.
    let mut bad = exported.clone();
    bad.get_mut("registrations").unwrap()[REG]["study_level"] = json!("doctoral");
    let e = SchoolDb::import(&bad, Path::new("db.json"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.starts_with("db.json: registrations['R1YYYYY']: "), "{e}");
    let mut dangling = exported;
    dangling.get_mut("registrations").unwrap()[REG]["student_id"] = json!("NOPE");
    let e = SchoolDb::import(&dangling, Path::new("db.json"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown student_id 'NOPE'"), "{e}");
}

#[test]
fn generators_have_both_scales_and_consistent_money() {
    for (split, scale) in [(Split::Eval, SCALES.eval), (Split::Train, SCALES.train)] {
        let db = generate::generate(7, split);
        assert_eq!(
            (db.students.len(), db.courses.len(), db.registrations.len()),
            (scale.students, scale.courses, scale.registrations),
            "{split:?}"
        );
        assert_eq!(db.state_hash(), generate::generate(7, split).state_hash());
        let mut lines: BTreeMap<&str, i64> = BTreeMap::new();
        let mut balance_due = 0;
        for (id, r) in db.registrations.iter() {
            let s = db.students.get(&r.student_id).unwrap();
            assert!(s.registrations.iter().any(|x| x == id));
            assert!(!id.starts_with("REG"), "the three new-id slots stay free");
            assert_eq!(r.study_level, level_of_degree(&s.program.degree));
            assert_eq!(r.status, EnrollmentStatus::for_credits(r.total_credits));
            for c in &r.courses {
                let course = db.courses.get(&c.course_id).unwrap();
                assert_eq!(course.term, r.term);
                assert_eq!(c.tuition, course.credits * r.study_level.rate());
                *lines.entry(&c.course_id).or_default() += 1;
            }
            assert!(
                r.payment_history
                    .iter()
                    .all(|p| s.payment_methods.contains_key(&p.payment_id))
            );
            balance_due += usize::from(r.is_active() && r.balance_due() > 0);
            assert!(r.balance_due() >= 0, "{id} is overpaid");
        }
        for (id, n) in lines {
            assert!(db.courses.get(id).unwrap().current_enrollment >= n, "{id}");
        }
        let spring = db
            .courses
            .iter()
            .filter(|(_, c)| c.term == "2025-SPRING")
            .count();
        let full = db.courses.iter().filter(|(_, c)| c.is_full()).count();
        assert!((95..=115).contains(&spring), "{spring} spring courses");
        assert!((10..=30).contains(&full), "{full} full courses");
        assert!(
            balance_due * 5 >= db.registrations.len(),
            "{balance_due} registrations owe money"
        );
    }
    assert_ne!(
        generate::generate(7, Split::Eval).state_hash(),
        generate::generate(8, Split::Eval).state_hash()
    );
}

// ---------- policy, grounding, hooks ----------

fn rule(db: &SchoolDb, tool: &str, args: Value) -> Option<&'static str> {
    db.check_policy(tool, &args).err().map(|v| v.rule)
}

#[test]
fn policy_rules_name_what_the_tools_allow_but_the_policy_forbids() {
    let db = fixture();
    let register = |courses: Value, level: &str| {
        json!({"student_id": INES, "term": "2025-FALL", "course_ids": courses, "study_level": level,
               "payment_methods": [{"payment_id": "PM-VISA", "amount": 2000}]})
    };
    assert_eq!(
        rule(
            &db,
            "register_courses",
            register(json!(["C5EEEEE"]), "undergraduate")
        ),
        None
    );
    assert_eq!(
        rule(
            &db,
            "register_courses",
            register(json!([]), "undergraduate")
        ),
        Some("at_least_one_course")
    );
    assert_eq!(
        rule(
            &db,
            "register_courses",
            register(json!(["C5EEEEE"]), "continuing_ed")
        ),
        Some("study_level_of_program")
    );
    let mut spring = register(json!(["C2BBBBB"]), "undergraduate");
    spring["term"] = json!("2025-SPRING");
    assert_eq!(
        rule(&db, "register_courses", spring),
        Some("one_registration_per_term")
    );
    let mut negative = register(json!(["C5EEEEE"]), "undergraduate");
    negative["payment_methods"] = json!([{"payment_id": "PM-VISA", "amount": 2500}, {"payment_id": "PM-BANK", "amount": -500}]);
    assert_eq!(
        rule(&db, "register_courses", negative),
        Some("positive_payments")
    );

    let update = |add: Value, drop: Value, extra: Value| {
        let mut a = json!({"registration_id": REG, "add_course_ids": add, "drop_course_ids": drop});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    let keep_pf = json!({"grading_options": {"C4DDDDD": "pass/fail"}});
    assert_eq!(
        rule(
            &db,
            "update_registration_courses",
            update(json!(["C2BBBBB"]), json!(["C1AAAAA"]), keep_pf.clone())
        ),
        None
    );
    assert_eq!(
        rule(
            &db,
            "update_registration_courses",
            update(json!(["C2BBBBB"]), json!(["C1AAAAA"]), json!({}))
        ),
        Some("grading_kept")
    );
    assert_eq!(
        rule(
            &db,
            "update_registration_courses",
            update(json!([]), json!(["C2BBBBB"]), keep_pf.clone())
        ),
        Some("drops_are_registered")
    );
    assert_eq!(
        rule(
            &db,
            "update_registration_courses",
            update(json!(["C1AAAAA"]), json!([]), keep_pf.clone())
        ),
        Some("adds_are_new")
    );
    assert_eq!(
        rule(
            &db,
            "update_registration_courses",
            update(json!([]), json!(["C1AAAAA", "C4DDDDD"]), json!({}))
        ),
        Some("keeps_a_course")
    );
    assert_eq!(
        rule(
            &db,
            "update_registration_courses",
            update(json!([]), json!([]), keep_pf)
        ),
        Some("real_change")
    );
    assert_eq!(
        rule(
            &db,
            "update_registration_courses",
            update(
                json!(["C2BBBBB"]),
                json!(["C1AAAAA"]),
                json!({"grading_options": {"C4DDDDD": "pass/fail"}, "payment_id": "PM-AMEX"})
            )
        ),
        Some("refund_to_saved_method")
    );
    let pay = |amount: i64| json!({"registration_id": REG, "payment": {"payment_id": "PM-VISA", "amount": amount}});
    assert_eq!(rule(&db, "pay_registration", pay(300)), None);
    assert_eq!(
        rule(&db, "pay_registration", pay(301)),
        Some("pays_balance_due")
    );
    let mut cancelled = db.clone();
    call(
        &mut cancelled,
        "cancel_registration",
        json!({"registration_id": REG}),
    );
    assert_eq!(
        rule(&cancelled, "pay_registration", pay(300)),
        Some("registration_is_active")
    );
    assert_eq!(
        rule(
            &cancelled,
            "cancel_registration",
            json!({"registration_id": REG})
        ),
        Some("registration_is_active")
    );
}

#[test]
fn proposals_pay_exactly_and_obey_the_policy_for_every_tool() {
    let db = generate::generate(11, Split::Eval);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut succeeded: BTreeMap<&str, usize> = BTreeMap::new();
    for id in db.students.keys().take(60) {
        let ctx = GroundingContext::for_user(id);
        for spec in School.tool_specs() {
            for args in db.propose_calls(spec.name, &ctx, &mut rng) {
                assert!(
                    db.check_policy(spec.name, &args).is_ok(),
                    "{}: {args}",
                    spec.name
                );
                let out = crate::domain::Environment::invoke(&mut db.clone(), spec.name, &args);
                assert!(!out.is_error, "{} {args}: {}", spec.name, out.text);
                *succeeded.entry(spec.name).or_default() += 1;
                if let Some(sid) = args.get("student_id") {
                    assert_eq!(sid, id);
                }
                if let Some(r) = args.get("registration_id").and_then(Value::as_str) {
                    assert_eq!(db.registrations.get(r).unwrap().student_id, *id);
                }
            }
        }
    }
    for spec in School.tool_specs() {
        assert!(
            succeeded.get(spec.name).copied().unwrap_or(0) > 0,
            "{} never proposed",
            spec.name
        );
    }
    assert!(succeeded["register_courses"] >= 60, "{succeeded:?}");
}

#[test]
fn observe_learns_the_new_registration_and_the_terms() {
    let mut db = fixture();
    let mut ctx = GroundingContext::for_user(PAUL);
    let args = json!({"student_id": PAUL, "term": "2025-FALL", "course_ids": ["C5EEEEE"],
        "study_level": "graduate", "payment_methods": [{"payment_id": "PM-AMEX", "amount": 3200}]});
    let (out, _) = call(&mut db, "register_courses", args.clone());
    db.observe("register_courses", &args, &out, &mut ctx);
    assert_eq!(ctx.values("registration_id"), ["REG001"]);
    assert_eq!(ctx.values("term"), ["2025-FALL"]);
    // The next proposals work on what the conversation created.
    let pays = db.propose_calls(
        "update_registration_courses",
        &ctx,
        &mut ChaCha8Rng::seed_from_u64(1),
    );
    assert!(
        pays.iter().all(|a| a["registration_id"] == "REG001"),
        "{pays:?}"
    );
}

#[test]
fn facts_requests_and_ids_speak_as_the_student() {
    let db = fixture();
    let facts = db.user_facts(INES);
    assert_eq!(facts[0].kind, "identity");
    assert!(facts[0].text.contains(INES));
    let payment: Vec<&str> = facts
        .iter()
        .filter(|f| f.kind == "payment")
        .map(|f| f.text.as_str())
        .collect();
    assert!(
        payment
            .iter()
            .any(|t| t.contains("Visa credit card ending in 1234")),
        "{payment:?}"
    );
    assert!(
        payment
            .iter()
            .any(|t| t.contains("bank account ending in 0912")),
        "{payment:?}"
    );
    let args = json!({"registration_id": REG, "add_course_ids": ["C2BBBBB"], "drop_course_ids": ["C1AAAAA"],
        "grading_options": {"C4DDDDD": "pass/fail"}, "payment_id": "PM-VISA"});
    let text = db
        .describe_request("update_registration_courses", &args, "")
        .unwrap();
    for want in [
        "add BIO-2200 Field Ecology",
        "drop BIO-1100",
        "keeping HIS-3300 pass/fail",
        "$500",
        "Visa credit card ending in 1234",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(!text.contains("PM-VISA"), "{text}");
    assert_eq!(
        db.internal_ids("update_registration_courses", &args),
        ["PM-VISA"]
    );
    let pay = json!({"registration_id": REG, "payment": {"payment_id": "PM-BANK", "amount": 300}});
    let text = db.describe_request("pay_registration", &pay, "").unwrap();
    assert!(
        text.contains("$300") && text.contains("ending in 0912"),
        "{text}"
    );
    let status = json!({"course_id": "C1AAAAA", "date": "25-02-03"});
    let text = db
        .describe_request("get_course_meeting_status", &status, "")
        .unwrap();
    assert!(text.contains("2025-02-03"), "{text}");
    assert_eq!(
        db.required_outputs(
            "get_course_meeting_status",
            &status,
            r#"{"status": "rescheduled"}"#
        ),
        ["rescheduled"]
    );
    // What the agent can look up covers the course codes a student says.
    let records = db.customer_records(INES).join("\n");
    assert!(records.contains("BIO-2200") && records.contains("ECO-1000"));
    assert_eq!(
        StudyLevel::parse("graduate").map(StudyLevel::rate),
        Some(800)
    );
    assert_eq!(
        GradingOption::parse("pass/fail"),
        Some(GradingOption::PassFail)
    );
}

/// The enums written in `tools.toml` are the ones the tools and generator use.
#[test]
fn spec_enums_match_the_database_types() {
    let props = |tool: &str| {
        super::tools::all()
            .iter()
            .find(|t| t.spec.name == tool)
            .map(|t| t.spec.parameters["properties"].clone())
            .unwrap_or_default()
    };
    for tool in ["register_courses", "update_registration_courses"] {
        assert_eq!(
            props(tool)["grading_options"]["additionalProperties"]["enum"],
            json!(GradingOption::NAMES),
            "{tool}"
        );
    }
    assert_eq!(
        props("register_courses")["study_level"]["enum"],
        json!(StudyLevel::NAMES)
    );
}
