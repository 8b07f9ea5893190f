//! Refinement hooks for telehealth: user facts, request sentences, required outputs (the
//! lines a text output tells; an upload's hours are declared in `tools.toml`, with the
//! internal ids) and the records an agent can look up.
//!
//! What a patient knows: their email (or name and date of birth), names, dates and times
//! of their visits, their providers' names, their medications, their device ids, and their
//! appointment ids (printed on every booking confirmation). Internal are the patient id and
//! medical record ids: a patient names a record by the visit it documents ("your visit of
//! 2025-10-14 with Dr. Lee"), which the record fact resolves. Supplier offers are told by
//! company, brand and price. Provider ids come from the clinic's public directory (a
//! lookup the agent can make), so they are not the patient's to state.
//!
//! Architecture invariant: reads the state only; phrasing varies with the call's content
//! (no RNG), so grounding stays reproducible.

use super::db::{Appointment, MedicalRecord, Provider, TelehealthDb};
use super::ground::{captures, own_appointments, own_records, own_uploads};
use crate::domain::kit::facts::{self, Identity};
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_list, arg_str, join_and, variant, words};
use crate::domain::{Environment, UserFact};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

static TEMPLATES: LazyLock<Templates> =
    LazyLock::new(|| Templates::builtin(include_str!("requests.toml")));

/// The appointment types the policy names (agents read them there).
pub const VISIT_TYPES: [&str; 6] = [
    "routine_checkup",
    "follow_up",
    "consultation",
    "specialist_consultation",
    "sick_visit",
    "medication_review",
];

// ---------- refinement ----------

/// How a patient names a provider: "Dr. Ana Ruiz" (physicians), "Ana Ruiz, RN" (others).
fn provider_name(p: &Provider) -> String {
    match p.name.title.as_deref() {
        None | Some("MD" | "Dr." | "PhD" | "PharmD" | "DPT") => format!("Dr. {}", p.full_name()),
        Some(title) => format!("{}, {title}", p.full_name()),
    }
}

/// The visit a record documents, as a patient says it: "your visit of 2025-10-14 with
/// Dr. Ana Ruiz".
fn record_visit(db: &TelehealthDb, r: &MedicalRecord) -> String {
    match db.providers.get(&r.provider_id) {
        Some(p) => format!("your visit of {} with {}", r.date, provider_name(p)),
        None => format!("your visit of {}", r.date),
    }
}

pub fn user_facts(db: &TelehealthDb, uid: &str) -> Vec<UserFact> {
    let Some(p) = db.patients.get(uid) else {
        return Vec::new();
    };
    let (first, last) = (p.name.first_name.as_str(), p.name.last_name.as_str());
    // One patient in four authenticates by name and date of birth, the rest by email.
    let id = if variant(uid, 4) == 0 || p.demographics.email.is_empty() {
        Identity::NameDob {
            first,
            last,
            dob: &p.demographics.date_of_birth,
        }
    } else {
        Identity::Email(&p.demographics.email)
    };
    let mut out = vec![facts::identity(id, &[uid]), facts::name(first, last)];
    for r in own_records(db, uid) {
        let meds: Vec<String> = r
            .prescriptions()
            .iter()
            .map(|x| x.medication.clone())
            .collect();
        let what = if meds.is_empty() {
            String::new()
        } else {
            format!(", which prescribed {}", join_and(&meds))
        };
        out.push(facts::fact(
            "record",
            format!(
                "You have a medical record from {}{what}.",
                record_visit(db, r)
            ),
            vec![r.date.clone()],
            &[&r.record_id],
        ));
    }
    out
}

/// Template variables describing an appointment.
fn appointment_vars(db: &TelehealthDb, a: &Appointment, vars: &mut BTreeMap<&'static str, String>) {
    vars.insert("kind", words(&a.kind));
    vars.insert("date", a.date.clone());
    vars.insert("time", a.time.clone());
    if let Some(p) = db.providers.get(&a.provider_id) {
        vars.insert("provider", provider_name(p));
        vars.insert("specialty", p.specialty.clone());
    }
}

pub fn describe_request(
    db: &TelehealthDb,
    tool: &str,
    args: &Value,
    _output: &str,
) -> Option<String> {
    let mut vars: BTreeMap<&'static str, String> = BTreeMap::new();
    let mut key = tool.to_string();
    let appt = db.appointments.get(arg_str(args, "appointment_id"));
    let record = db.medical_records.get(arg_str(args, "record_id"));
    match tool {
        "find_patient_by_email" | "find_patient_by_name_dob" | "calculate" | "think" => {
            return None;
        }
        "get_appointment_details" => {
            let a = appt?;
            if a.date.as_str() < super::CLOCK.today() {
                key = "get_appointment_details_past".into();
            }
            appointment_vars(db, a, &mut vars)
        }
        "cancel_appointment" => appointment_vars(db, appt?, &mut vars),
        "reschedule_appointment" => appointment_vars(db, appt?, &mut vars),
        "get_medical_record" => match (record, appt) {
            (Some(r), _) => {
                key = "get_medical_record_by_visit".into();
                vars.insert("visit", record_visit(db, r));
            }
            (None, Some(a)) => {
                // Most records are filed against a visit still to come (as in the
                // reference's data): asked for as what is on file, not as a write-up.
                if a.date.as_str() > super::CLOCK.today() {
                    key = "get_medical_record_upcoming".into();
                }
                appointment_vars(db, a, &mut vars)
            }
            _ => return None,
        },
        "update_prescription_supplier" | "update_medical_record_note" => {
            vars.insert("visit", record_visit(db, record?));
            let price = args.get("price_usd").and_then(Value::as_f64).unwrap_or(0.0);
            vars.insert("price", format!("${price:.2}"));
        }
        "get_provider_details" | "schedule_appointment" => {
            let p = db.providers.get(arg_str(args, "provider_id"))?;
            vars.insert("provider", provider_name(p));
            vars.insert("specialty", p.specialty.clone());
            vars.insert("kind", words(arg_str(args, "appointment_type")));
            if args.get("bill_insurance") == Some(&json!(false)) {
                key = "schedule_appointment_self_pay".into();
            }
        }
        "check_drug_interactions" => {
            let current: Vec<String> = arg_list(args, "current_medications")
                .iter()
                .map(|s| s.to_string())
                .collect();
            vars.insert("current", join_and(&current));
        }
        "list_available_providers" | "list_patient_appointments" | "list_telemetry_devices" => {
            let filter = ["specialty", "status_filter"]
                .iter()
                .find_map(|k| args.get(*k)?.as_str());
            match filter {
                // A device status reads after "are": "in maintenance", "deployed".
                Some("maintenance") => {
                    vars.insert("filter", "in maintenance".into());
                }
                Some(f) => {
                    vars.insert("filter", words(f));
                }
                None => key = format!("{tool}_all"),
            }
        }
        "list_medication_suppliers" if args.get("country_filter").is_some() => {
            key = format!("{tool}_country")
        }
        "list_telemetry_uploads" | "get_telemetry_upload" => {
            let device = db
                .telemetry_inventory
                .iter()
                .find(|(_, d)| d.device_id == arg_str(args, "device_id"))?;
            vars.insert(
                "device",
                format!("{} ({})", device.1.device_type, device.1.device_id),
            );
            if args.get("start_date").is_some() {
                key = format!("{tool}_window");
            }
        }
        _ => {}
    }
    TEMPLATES.render(&key, args, &vars)
}

/// A list short enough to read out to a patient (at most five names), else nothing to tell.
fn read_out(items: Vec<String>) -> Vec<String> {
    if items.len() <= 5 { items } else { Vec::new() }
}

pub fn required_outputs(db: &TelehealthDb, tool: &str, args: &Value, output: &str) -> Vec<String> {
    let line_values = |prefix: &str| -> Vec<String> {
        captures(output, prefix, &['\n'])
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let mut out: Vec<String> = match tool {
        "get_patient_details" => ["Primary Care Copay: ", "Specialist Copay: "]
            .iter()
            .flat_map(|p| line_values(p))
            .collect(),
        "get_appointment_details" => line_values("Meeting Link: "),
        // What the visit found: the assessment's first finding.
        "get_medical_record" => line_values("Assessment: ")
            .into_iter()
            .filter_map(|a| {
                let first = a.split(';').next()?.trim().trim_end_matches('.');
                (!first.is_empty()).then(|| first.to_string())
            })
            .take(1)
            .collect(),
        // A short list is read out device by device; a long one has nothing to tell.
        "list_telemetry_devices" => {
            let ids: Vec<String> = output
                .lines()
                .filter_map(|l| {
                    l.split_once(" | status=")
                        .map(|(id, _)| id.trim().to_string())
                })
                .collect();
            read_out(ids)
        }
        "get_provider_details" => line_values("Consultation Fee: "),
        // Each option by name, then what each costs: its medications' unit costs (the
        // output prints no total).
        "get_regimen_options" => {
            let options = output
                .split_once("Optimized regimen options:")
                .map_or("", |(_, o)| o);
            let names = captures(options, "Option ", &['\n'])
                .into_iter()
                .filter_map(|s| s.split_once(": ").map(|(_, name)| name.to_string()));
            let mut costs: Vec<String> = Vec::new();
            for c in captures(options, "unit_cost_usd=", &['\n', ' ']) {
                if !costs.iter().any(|x| x == c) {
                    costs.push(c.to_string());
                }
            }
            names.chain(costs).collect()
        }
        "list_patient_medical_records" => captures(output, "date=", &[' '])
            .into_iter()
            .take(1)
            .map(str::to_string)
            .collect(),
        "list_patient_appointments" => {
            let dates: Vec<String> = captures(output, "\n- ", &['\n'])
                .into_iter()
                .filter_map(|l| {
                    l.split(": ")
                        .nth(1)?
                        .split(" at ")
                        .next()
                        .map(str::to_string)
                })
                .collect();
            dates.into_iter().take(4).collect()
        }
        "list_available_providers" => {
            let names: Vec<String> = captures(output, "(ID: ", &[')'])
                .into_iter()
                .filter_map(|id| db.providers.get(id).map(Provider::full_name))
                .collect();
            read_out(names)
        }
        "list_medication_suppliers" => captures(output, ":\n", &['(', '|'])
            .into_iter()
            .take(1)
            .map(|s| s.trim().to_string())
            .chain(
                captures(output, "price_usd=", &['\n'])
                    .into_iter()
                    .take(1)
                    .map(str::to_string),
            )
            .collect(),
        "check_drug_interactions" => line_values("Medications to hold today: ")
            .into_iter()
            .filter(|v| v != "None")
            .collect(),
        "list_telemetry_uploads" => match serde_json::from_str::<Value>(output) {
            Ok(Value::Array(items)) => items
                .iter()
                .filter(|u| u["event"] == "upload_missing")
                .filter_map(|u| u["date"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let _ = args;
    out.dedup();
    out
}

pub fn customer_records(db: &TelehealthDb, uid: &str) -> Vec<String> {
    if !db.patients.contains(uid) {
        return Vec::new();
    }
    let mut env = db.clone();
    let mut run = |tool: &str, args: Value| Environment::invoke(&mut env, tool, &args).text;
    let mut out = vec![
        uid.to_string(),
        run("get_patient_details", json!({"patient_id": uid})),
        run("list_patient_appointments", json!({"patient_id": uid})),
        run("list_patient_medical_records", json!({"patient_id": uid})),
        run("get_regimen_options", json!({"patient_id": uid})),
        run("list_available_providers", json!({})),
        format!("Appointment types: {}", VISIT_TYPES.join(", ")),
    ];
    for a in own_appointments(db, uid) {
        out.push(run(
            "get_appointment_details",
            json!({"appointment_id": a.appointment_id}),
        ));
    }
    for r in own_records(db, uid) {
        out.push(run("get_medical_record", json!({"record_id": r.record_id})));
    }
    for (device, _, _) in own_uploads(db, uid) {
        out.push(run("list_telemetry_uploads", json!({"device_id": device})));
    }
    out
}
