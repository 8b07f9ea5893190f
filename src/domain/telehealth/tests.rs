//! Telehealth tests: the hand-written fixture's edge cases answered and written exactly as
//! the reference tools answered them (recorded once from the reference), round trips of the
//! data files, import errors, the generator's scale and consistency, the policy rules one
//! by one, the grounding and refinement hooks, and two opt-in checks against the reference's
//! own database and gold tasks.

use super::db::{self, TelehealthDb};
use super::{CLOCK, Telehealth, generate};
use crate::domain::Hooks;
use crate::domain::kit::{specs, templates::Templates};
use crate::domain::reference::{changed_rows, json_equal, outputs_equal};
use crate::domain::{
    Database, Domain, Environment, GroundingContext, StateHash, ToolKind, ToolOutput,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tau_bench/telehealth")
}

fn fixture() -> TelehealthDb {
    db::import(&fixture_dir()).expect("fixture imports")
}

fn call(db: &mut TelehealthDb, tool: &str, args: Value) -> ToolOutput {
    Environment::invoke(db, tool, &args)
}

fn generated() -> TelehealthDb {
    generate::generate(20_261_129)
}

fn as_json(db: &TelehealthDb) -> Value {
    Value::Object(Database::to_tau_bench(db).into_iter().collect())
}

// ---------- tools ----------

#[test]
fn twenty_three_tools_eighteen_read_five_write() {
    let specs = Telehealth.tool_specs();
    assert_eq!(specs.len(), 23);
    let writes: BTreeSet<&str> = specs
        .iter()
        .filter(|s| s.kind == ToolKind::Write)
        .map(|s| s.name)
        .collect();
    let expected = [
        "cancel_appointment",
        "reschedule_appointment",
        "schedule_appointment",
        "update_medical_record_note",
        "update_prescription_supplier",
    ];
    assert_eq!(writes, expected.into_iter().collect());
    let transfer = specs.iter().find(|s| s.name == "transfer_to_human_support");
    assert!(transfer.is_some_and(|s| s.terminates && s.kind == ToolKind::Read));
    // The built-in spec and request files parse without a fallback hiding an error.
    let runs: Vec<(&str, crate::domain::ToolFn<TelehealthDb>)> = TelehealthDb::tools()
        .iter()
        .map(|t| (t.spec.name, t.run))
        .collect();
    assert_eq!(
        specs::parse(include_str!("tools.toml"), &runs)
            .unwrap()
            .len(),
        23
    );
    Templates::parse(include_str!("requests.toml")).unwrap();
}

/// The scripted feeler reads each tool's intent: a reschedule is a change, not a booking,
/// although its name holds `schedule`; every other read tool is a lookup.
#[test]
fn each_tool_carries_the_intent_a_patient_means() {
    use crate::domain::Intent;
    let intent = |name: &str| {
        let specs = Telehealth.tool_specs();
        specs.iter().find(|s| s.name == name).map(|s| s.intent)
    };
    let want = [
        ("schedule_appointment", Intent::Book),
        ("cancel_appointment", Intent::Cancel),
        ("reschedule_appointment", Intent::Change),
        ("update_prescription_supplier", Intent::Change),
        ("update_medical_record_note", Intent::Change),
        ("transfer_to_human_support", Intent::Transfer),
        ("calculate", Intent::Helper),
        ("think", Intent::Helper),
    ];
    for (name, expected) in want {
        assert_eq!(intent(name), Some(expected), "{name}");
    }
    for s in Telehealth.tool_specs() {
        if s.kind == ToolKind::Read && !want.iter().any(|(n, _)| *n == s.name) {
            assert_eq!(s.intent, Intent::Lookup, "{}", s.name);
        }
    }
}

/// Sequences on the hand-written fixture that reach the reference's edge cases (missing
/// keys, duplicate prescriptions, lenient dates, an empty weekday, case-insensitive names,
/// ties in sorting), with the outputs and changed rows the reference's own tools produced
/// on the same files (its clock frozen to ours).
#[test]
fn edge_cases_answer_and_write_as_the_reference_does() {
    let path = fixture_dir().with_file_name("telehealth_edge_cases.jsonl");
    let base = fixture();
    let initial = as_json(&base);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        let expected: Value = serde_json::from_str(line).unwrap();
        let mut db = base.clone();
        for (j, c) in expected["calls"].as_array().unwrap().iter().enumerate() {
            let ours = call(&mut db, c["name"].as_str().unwrap(), c["kwargs"].clone()).text;
            let theirs = expected["outputs"][j].as_str().unwrap();
            assert!(
                outputs_equal(&ours, theirs),
                "sequence {i} call {j} {c}\nours:   {ours}\ntheirs: {theirs}"
            );
            n += 1;
        }
        let changed = changed_rows(&initial, &as_json(&db));
        assert!(
            json_equal(&changed, &expected["changed"]),
            "sequence {i} changed rows\nours:   {changed}\ntheirs: {}",
            expected["changed"]
        );
    }
    assert!(n > 60, "{n} calls");
}

#[test]
fn not_found_sentences_are_errors_without_a_prefix_and_empty_results_are_answers() {
    let mut db = fixture();
    let miss = call(
        &mut db,
        "get_patient_details",
        json!({"patient_id": "nobody"}),
    );
    assert!(miss.is_error);
    assert_eq!(miss.text, "Patient with ID nobody not found.");
    let refused = call(
        &mut db,
        "cancel_appointment",
        json!({"appointment_id": "APPT008"}),
    );
    assert!(refused.is_error && refused.text == "Appointment APPT008 is already cancelled.");
    let none = call(
        &mut db,
        "get_regimen_options",
        json!({"patient_id": "pavel_stroud_2002"}),
    );
    assert!(!none.is_error, "an empty result is an answer");
    let quirk = call(
        &mut db,
        "get_appointment_details",
        json!({"appointment_id": "APPT005"}),
    );
    assert!(quirk.is_error && quirk.text == "Error: 'meeting_link'");
}

/// Python slices with `limit` only when it is positive, and cannot slice with a float: an
/// integral float passes our schema as an integer, so the tool itself must refuse it.
#[test]
fn a_positive_float_limit_fails_as_the_reference_slice_does() {
    let mut db = fixture();
    let all = call(&mut db, "list_telemetry_devices", json!({}));
    let two = call(&mut db, "list_telemetry_devices", json!({"limit": 2}));
    assert_eq!(two.text.lines().count(), 3, "a header and two devices");
    let float = call(&mut db, "list_telemetry_devices", json!({"limit": 2.0}));
    assert!(float.is_error);
    assert_eq!(
        float.text,
        "Error: slice indices must be integers or None or have an __index__ method"
    );
    let negative = call(&mut db, "list_telemetry_devices", json!({"limit": -2.0}));
    assert_eq!(
        negative.text, all.text,
        "no slice when the limit is not positive"
    );
}

#[test]
fn booking_mints_the_reference_ids_and_cancelling_stamps_the_simulation_clock() {
    let mut db = fixture();
    let args = json!({"patient_id": "ines_oduya_1001", "provider_id": "dr_okafor_cardiology",
        "date": "2025-12-11", "time": "11:00", "appointment_type": "follow_up"});
    let out = call(&mut db, "schedule_appointment", args);
    assert!(
        out.text.contains("Appointment ID: APPT043\n"),
        "{}",
        out.text
    );
    let row = db.appointments.get("APPT043").unwrap();
    assert_eq!(row.insurance_authorization.as_deref(), Some("AUTH000043"));
    assert_eq!(row.copay_amount, 45.0, "specialist copay");
    assert_eq!(row.voucher_id, Some(None), "voucher_id is present as null");
    // The generated clinic continues the reference's numbering.
    assert_eq!(
        super::tools_write::next_appointment_number(&generated()),
        224
    );
    let out = call(
        &mut db,
        "cancel_appointment",
        json!({"appointment_id": "APPT043"}),
    );
    assert!(!out.is_error);
    let row = db.appointments.get("APPT043").unwrap();
    assert_eq!(row.cancellation_date.as_deref(), Some(CLOCK.today()));
    assert_eq!(row.status, "cancelled");
}

// ---------- data files ----------

#[test]
fn fixture_and_generated_clinic_round_trip_through_the_data_files() {
    let files = Database::to_tau_bench(&fixture());
    assert_eq!(
        files.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        db::FILES.into_iter().collect()
    );
    for stem in db::FILES {
        let raw = std::fs::read_to_string(fixture_dir().join(format!("{stem}.json"))).unwrap();
        let file: Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(files[stem], file, "{stem}.json changed in a round trip");
    }
    let made = generated();
    let dir = std::env::temp_dir().join(format!("tracer-telehealth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (stem, value) in Database::to_tau_bench(&made) {
        std::fs::write(dir.join(format!("{stem}.json")), value.to_string()).unwrap();
    }
    let back = db::import(&dir).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(Database::state_hash(&back), Database::state_hash(&made));
    assert_eq!(as_json(&back), as_json(&made));
}

#[test]
fn import_names_the_file_and_row_that_is_wrong() {
    let copy = |label: &str, stem: &str, edit: &dyn Fn(&mut Value)| -> String {
        let dir = std::env::temp_dir().join(format!("tracer-th-{label}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for s in db::FILES {
            let src = fixture_dir().join(format!("{s}.json"));
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
            if s == stem {
                edit(&mut v);
            }
            std::fs::write(dir.join(format!("{s}.json")), v.to_string()).unwrap();
        }
        let e = db::import(&dir)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        std::fs::remove_dir_all(&dir).ok();
        e
    };
    let e = copy("field", "appointments", &|v| {
        v["APPT007"]["colour"] = json!("red")
    });
    assert!(
        e.contains("appointments.json") && e.contains("APPT007") && e.contains("colour"),
        "{e}"
    );
    let e = copy("owner", "medical_records", &|v| {
        v["REC003"]["patient_id"] = json!("ghost")
    });
    assert!(
        e.contains("medical_records.json") && e.contains("unknown patient_id 'ghost'"),
        "{e}"
    );
    let e = copy("key", "providers", &|v| {
        v["dr_rowe_primary_care"]["provider_id"] = json!("x")
    });
    assert!(
        e.contains("providers.json") && e.contains("differs from its key"),
        "{e}"
    );
    let e = copy("list", "telemetry_uploads", &|v| {
        v[1]["usage_hours"] = json!("lots")
    });
    assert!(
        e.contains("telemetry_uploads.json") && e.contains("element 1"),
        "{e}"
    );
}

// ---------- generator ----------

#[test]
fn generated_clinic_has_the_paper_scale_and_is_consistent() {
    let db = generated();
    assert_eq!(db.patients.len(), 239);
    assert_eq!(db.providers.len(), 114);
    assert_eq!(db.appointments.len(), 214);
    assert_eq!(db.medical_records.len(), 149);
    assert_eq!(
        (db.telemetry_inventory.len(), db.telemetry_uploads.len()),
        (130, 189)
    );
    assert_eq!(db.medication_suppliers.len(), 24);
    let ids: Vec<&str> = db.appointments.keys().collect();
    assert_eq!(ids.iter().filter(|k| !k.contains("tracer")).count(), 49);
    assert!(ids.contains(&"APPT_tracer_223") && ids.contains(&"APPT049"));
    let specialties: BTreeSet<&str> = db
        .providers
        .iter()
        .map(|(_, p)| p.specialty.as_str())
        .collect();
    assert!(specialties.len() >= 20);
    let emails: BTreeSet<&str> = db
        .patients
        .iter()
        .map(|(_, p)| p.demographics.email.as_str())
        .collect();
    assert_eq!(emails.len(), 239, "emails identify patients");
    let mut held = BTreeSet::new();
    let mut statuses = BTreeMap::<&str, usize>::new();
    for (id, a) in db.appointments.iter() {
        *statuses.entry(a.status.as_str()).or_default() += 1;
        let p = db.providers.get(&a.provider_id).unwrap();
        super::tools::check_slot(p, &a.date, &a.time).unwrap_or_else(|e| panic!("{id}: {e}"));
        let patient = db.patients.get(&a.patient_id).unwrap();
        let plan = &patient.insurance.primary;
        let copay = if p.specialty == "Primary Care" {
            plan.copay_primary
        } else {
            plan.copay_specialist
        };
        assert_eq!(a.copay_amount, copay, "{id}");
        if a.is_active() {
            assert!(
                held.insert((&a.provider_id, &a.date, &a.time)),
                "{id}: provider double-booked"
            );
            assert!(
                held.insert((&a.patient_id, &a.date, &a.time)),
                "{id}: patient double-booked"
            );
        }
    }
    assert!(statuses["scheduled"] > 150, "{statuses:?}");
    for s in ["completed", "pending_approval", "cancelled"] {
        assert!(statuses.get(s).is_some_and(|n| *n > 0), "{statuses:?}");
    }
    for (id, r) in db.medical_records.iter() {
        for p in r.prescriptions() {
            assert!(
                db.medication_suppliers.contains(&p.medication),
                "{id}: {}",
                p.medication
            );
        }
    }
    let deployed: BTreeSet<&str> = db
        .telemetry_inventory
        .iter()
        .filter(|(_, d)| d.status == "deployed" && d.assigned_to.is_some())
        .map(|(_, d)| d.device_id.as_str())
        .collect();
    assert!(
        db.telemetry_uploads
            .iter()
            .all(|(_, u)| deployed.contains(u.device_id.as_str()))
    );
    assert!(db.regimen_plans.keys().all(|k| db.patients.contains(k)));
    assert_ne!(
        Database::state_hash(&generate::generate(1)),
        StateHash::default()
    );
}

// ---------- policy ----------

#[test]
fn each_policy_rule_refuses_a_crafted_violation() {
    let db = fixture();
    let broken = |tool: &str, args: Value| -> &'static str {
        match Hooks::check_policy(&db, tool, &args) {
            Err(v) => v.rule,
            Ok(()) => panic!("{tool} {args} passed the policy"),
        }
    };
    let book = |p: &str, date: &str, time: &str| {
        json!({"patient_id": p, "provider_id": "dr_okafor_cardiology", "date": date,
            "time": time, "appointment_type": "follow_up"})
    };
    assert!(
        Hooks::check_policy(
            &db,
            "schedule_appointment",
            &book("pavel_stroud_2002", "2025-12-11", "11:00")
        )
        .is_ok()
    );
    assert_eq!(
        broken(
            "schedule_appointment",
            book("nobody", "2025-12-11", "11:00")
        ),
        "known_patient"
    );
    assert_eq!(
        broken(
            "schedule_appointment",
            book("pavel_stroud_2002", "2025-12-11", "09:00")
        ),
        "provider_hours"
    );
    assert_eq!(
        broken(
            "schedule_appointment",
            book("pavel_stroud_2002", "2025-11-27", "10:30")
        ),
        "future_visit"
    );
    assert_eq!(
        broken(
            "schedule_appointment",
            book("pavel_stroud_2002", "2025-12-08", "08:30")
        ),
        "slot_free"
    );
    // The patient already has a visit at that time with another provider.
    let clash = json!({"patient_id": "ines_oduya_1001", "provider_id": "dr_rowe_primary_care",
        "date": "2025-12-08", "time": "09:00", "appointment_type": "follow_up"});
    let mut moved = db.clone();
    moved.appointments.get_mut("APPT007").unwrap().time = "09:00".into();
    assert_eq!(
        Hooks::check_policy(&moved, "schedule_appointment", &clash)
            .unwrap_err()
            .rule,
        "slot_free"
    );
    assert_eq!(
        broken(
            "cancel_appointment",
            json!({"appointment_id": "APPT_tracer_012"})
        ),
        "active_appointment"
    );
    let mv = |id: &str, date: &str, time: &str| json!({"appointment_id": id, "new_date": date, "new_time": time});
    assert!(
        Hooks::check_policy(
            &db,
            "reschedule_appointment",
            &mv("APPT007", "2025-12-11", "11:00")
        )
        .is_ok()
    );
    assert_eq!(
        broken(
            "reschedule_appointment",
            mv("APPT008", "2025-12-11", "11:00")
        ),
        "active_appointment"
    );
    assert_eq!(
        broken(
            "reschedule_appointment",
            mv("APPT007", "2025-12-09", "11:00")
        ),
        "provider_hours"
    );
    assert_eq!(
        broken(
            "reschedule_appointment",
            mv("APPT007", "2025-12-15", "13:00")
        ),
        "slot_free"
    );
    assert_eq!(
        broken(
            "reschedule_appointment",
            mv("APPT007", "2025-12-08", "08:30")
        ),
        "real_change"
    );
    let supply = |med: &str, company: &str, brand: &str, price: f64| {
        json!({"record_id": "REC003", "medication": med, "supplier_company": company,
            "brand_name": brand, "price_usd": price})
    };
    assert!(
        Hooks::check_policy(
            &db,
            "update_prescription_supplier",
            &supply("Warfarin", "Deccan Biotech", "Warfagen", 0.22)
        )
        .is_ok()
    );
    assert_eq!(
        broken(
            "update_prescription_supplier",
            supply("Aspirin", "Deccan Biotech", "Warfagen", 0.22)
        ),
        "prescribed_medication"
    );
    assert_eq!(
        broken(
            "update_prescription_supplier",
            supply("Warfarin", "Deccan Biotech", "Warfagen", 0.1)
        ),
        "catalogue_offer"
    );
    assert_eq!(
        broken(
            "update_prescription_supplier",
            supply("Atorvastatin", "Harbor Labs", "Atorvagen", 0.61)
        ),
        "new_supplier"
    );
    assert_eq!(
        broken(
            "update_medical_record_note",
            json!({"record_id": "REC999", "note": "x"})
        ),
        "known_record"
    );
    assert_eq!(
        broken(
            "update_medical_record_note",
            json!({"record_id": "REC003", "note": " "})
        ),
        "note_text"
    );
}

// ---------- hooks ----------

/// Patients of the generated clinic with something of each kind, for hook tests.
fn patient_with(db: &TelehealthDb, want: impl Fn(&str) -> bool) -> String {
    db.patients
        .keys()
        .find(|p| want(p))
        .map(str::to_string)
        .expect("such a patient")
}

#[test]
fn first_proposals_obey_the_policy_and_execute_on_the_patients_own_entities() {
    let db = generated();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let busy = patient_with(&db, |p| {
        db.appointments
            .iter()
            .filter(|(_, a)| a.patient_id == p && a.is_active())
            .count()
            >= 2
            && db
                .medical_records
                .iter()
                .any(|(_, r)| r.patient_id == p && !r.prescriptions().is_empty())
    });
    let ctx = GroundingContext::for_user(&busy);
    for spec in Telehealth.tool_specs() {
        let proposals = Hooks::propose_calls(&db, spec.name, &ctx, &mut rng);
        let Some(first) = proposals.first() else {
            continue;
        };
        assert!(
            Hooks::check_policy(&db, spec.name, first).is_ok(),
            "{}: {first}",
            spec.name
        );
        let out = call(&mut db.clone(), spec.name, first.clone());
        assert!(!out.is_error, "{} {first}: {}", spec.name, out.text);
        // Ids in the arguments are the patient's own.
        if let Some(id) = first.get("appointment_id").and_then(Value::as_str) {
            assert_eq!(
                db.appointments.get(id).unwrap().patient_id,
                busy,
                "{}",
                spec.name
            );
        }
        if let Some(id) = first.get("record_id").and_then(Value::as_str) {
            assert_eq!(
                db.medical_records.get(id).unwrap().patient_id,
                busy,
                "{}",
                spec.name
            );
        }
    }
    for tool in ["schedule_appointment", "reschedule_appointment"] {
        let proposals = Hooks::propose_calls(&db, tool, &ctx, &mut rng);
        assert!(proposals.len() >= 2, "{tool}");
        // Boundary calls close the list; the policy refuses them.
        assert!(
            Hooks::check_policy(&db, tool, proposals.last().unwrap()).is_err(),
            "{tool}"
        );
    }
}

#[test]
fn facts_requests_and_outputs_speak_as_the_patient_knows_things() {
    let db = generated();
    let uid = patient_with(&db, |p| {
        db.medical_records.iter().any(|(_, r)| r.patient_id == p)
    });
    let facts = Hooks::user_facts(&db, &uid);
    assert_eq!(facts[0].kind, "identity");
    assert_eq!(facts[0].ids, vec![uid.clone()]);
    let record = facts
        .iter()
        .find(|f| f.kind == "record")
        .expect("a record fact");
    assert!(
        record
            .ids
            .iter()
            .all(|id| !record.text.contains(id.as_str())),
        "{}",
        record.text
    );
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut ctx = GroundingContext::for_user(&uid);
    let mut described = 0;
    for spec in Telehealth.tool_specs() {
        for args in Hooks::propose_calls(&db, spec.name, &ctx.clone(), &mut rng)
            .into_iter()
            .take(2)
        {
            let mut fork = db.clone();
            let out = call(&mut fork, spec.name, args.clone());
            if out.is_error {
                continue;
            }
            Hooks::observe(&fork, spec.name, &args, &out.text, &mut ctx);
            for value in Hooks::required_outputs(&db, spec.name, &args, &out.text) {
                assert!(
                    out.text.contains(&value),
                    "{}: '{value}' not in its output",
                    spec.name
                );
            }
            let Some(request) = Hooks::describe_request(&db, spec.name, &args, &out.text) else {
                assert!(
                    [
                        "find_patient_by_email",
                        "find_patient_by_name_dob",
                        "calculate",
                        "think"
                    ]
                    .contains(&spec.name),
                    "{} has no request sentence",
                    spec.name
                );
                continue;
            };
            described += 1;
            for id in Hooks::internal_ids(&db, spec.name, &args) {
                assert!(!request.contains(&id), "{}: {request}", spec.name);
            }
            assert!(!request.contains('{'), "unfilled placeholder: {request}");
        }
    }
    assert!(described > 10, "{described}");
    assert!(!ctx.values("patient_id").is_empty());
    let records = Hooks::customer_records(&db, &uid);
    assert!(
        records
            .iter()
            .any(|r| r.contains("Medical records (newest first)"))
    );
    assert!(
        records.iter().any(|r| r.contains("(ID: dr_")),
        "the directory names provider ids"
    );
}

// ---------- the reference's own database and gold tasks (opt-in) ----------

/// The directory `TRACER_REFERENCE_TODAY=2025-12-01 scripts/reference/gold.sh telehealth
/// <checkout> <dir>` writes: the reference's `data/`, and per split the gold actions
/// (`calls_<split>.jsonl`) and what the reference's own tools answered and changed for them
/// (`expected_<split>.jsonl`), its clock frozen to our simulation date.
fn gold_dir() -> PathBuf {
    PathBuf::from(
        std::env::var("TRACER_TELEHEALTH_GOLD_DIR").expect("set TRACER_TELEHEALTH_GOLD_DIR"),
    )
}

fn jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
#[ignore = "needs a gold.sh directory (TRACER_TELEHEALTH_GOLD_DIR)"]
fn reference_database_imports_and_exports_the_same_files() {
    let dir = gold_dir().join("data");
    let files = Database::to_tau_bench(&db::import(&dir).unwrap());
    for stem in db::FILES {
        let raw = std::fs::read_to_string(dir.join(format!("{stem}.json"))).unwrap();
        assert_eq!(
            files[stem],
            serde_json::from_str::<Value>(&raw).unwrap(),
            "{stem}.json"
        );
    }
}

/// Replays the reference's gold tasks (test and train) on our tools and compares every
/// output and the rows each task changed with the reference's replay of the same tasks
/// (`gold_dir`): `TRACER_TELEHEALTH_GOLD_DIR=<dir> cargo test --lib domain::telehealth --
/// --ignored`. Outputs that list rows in dict order (the whole provider directory and a
/// provider's weekly schedule) are compared as sets of lines: our tables keep keys sorted,
/// the reference's files do not.
#[test]
#[ignore = "needs a gold.sh directory (TRACER_TELEHEALTH_GOLD_DIR)"]
fn gold_tasks_replay_like_the_reference() {
    let dir = gold_dir();
    let base = db::import(&dir.join("data")).unwrap();
    let initial = as_json(&base);
    let lines = |s: &str| s.lines().map(str::to_string).collect::<BTreeSet<_>>();
    let (mut tasks, mut calls, mut reordered, mut failures) = (0, 0, 0, Vec::new());
    for split in ["test", "train"] {
        let sequences = jsonl(&dir.join(format!("calls_{split}.jsonl")));
        let expected = jsonl(&dir.join(format!("expected_{split}.jsonl")));
        assert_eq!(
            sequences.len(),
            expected.len(),
            "{split}: one answer per task"
        );
        for (index, (actions, task)) in sequences.iter().zip(&expected).enumerate() {
            tasks += 1;
            let label = format!("{split} #{index}");
            let mut db = base.clone();
            let outputs = task["outputs"].as_array().unwrap();
            for (action, theirs) in actions.as_array().unwrap().iter().zip(outputs) {
                calls += 1;
                let name = action["name"].as_str().unwrap();
                let ours = call(&mut db, name, action["kwargs"].clone()).text;
                let theirs = theirs.as_str().unwrap();
                if outputs_equal(&ours, theirs) {
                    continue;
                }
                if lines(&ours) == lines(theirs) {
                    reordered += 1;
                } else {
                    failures.push(format!(
                        "{label} {name}\n  ours:   {ours}\n  theirs: {theirs}"
                    ));
                }
            }
            let changed = changed_rows(&initial, &as_json(&db));
            if !json_equal(&changed, &task["changed"]) {
                failures.push(format!(
                    "{label} changed rows\n  ours:   {changed}\n  theirs: {}",
                    task["changed"]
                ));
            }
        }
    }
    eprintln!(
        "{tasks} gold tasks, {calls} calls, {reordered} outputs equal up to line order, {} mismatches",
        failures.len()
    );
    assert!(tasks > 0, "no gold tasks in {}", dir.display());
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(5)].join("\n")
    );
}

/// "Each regimen option and its cost": the reward checks every option's name and the unit
/// costs of its medications (the output prints no total), not the current regimen's.
#[test]
fn regimen_options_are_told_with_their_costs() {
    let db = generated();
    let (patient, plan) = db
        .regimen_plans
        .iter()
        .find(|(_, p)| !p.optimized_regimens.is_empty())
        .expect("a regimen plan");
    let args = json!({"patient_id": patient});
    let out = call(&mut db.clone(), "get_regimen_options", args.clone());
    let told = Hooks::required_outputs(&db, "get_regimen_options", &args, &out.text);
    for option in &plan.optimized_regimens {
        assert!(told.contains(&option.name), "{told:?}");
        for c in &option.components {
            let cost = crate::domain::kit::pyjson::py_float_repr(c.unit_cost_usd);
            assert!(told.contains(&cost), "{cost} not in {told:?}");
        }
    }
    let current_only: Vec<String> = plan
        .current_regimen
        .components
        .iter()
        .map(|c| crate::domain::kit::pyjson::py_float_repr(c.unit_cost_usd))
        .filter(|c| {
            plan.optimized_regimens
                .iter()
                .flat_map(|o| &o.components)
                .all(|o| crate::domain::kit::pyjson::py_float_repr(o.unit_cost_usd) != *c)
        })
        .collect();
    assert!(current_only.iter().all(|c| !told.contains(c)), "{told:?}");
}
