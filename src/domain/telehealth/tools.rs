//! The 23 telehealth tools' behaviour, API-compatible with tau-emotion-bench's telehealth
//! environment: same names, arguments, texts and error strings. Specs (descriptions in our
//! own words) are in `tools.toml`; the multi-line texts are templates in `outputs.toml`,
//! rendered over the row a tool reads as a Python f-string would be ([`pytext`]), so a key
//! the reference's code would miss fails with the same `Error: 'key'`.
//!
//! Failures take the reference's three forms: a plain sentence for an unknown id or a
//! refused appointment change (observed verbatim via [`plain_error`], still an error to
//! grounding and replay), `Error: ...` for the two record updates, and `Error: 'key'` for a
//! missing key. An empty listing or search is an answer, not an error. Where the reference
//! iterates a dict, ours iterates the table in key order, the order of the files we write.
//! Checks run before any mutation, except where the reference mutates first
//! (`reschedule_appointment` on a row without a meeting link is moved, then fails).
//!
//! Departure: `cancel_appointment` stamps the simulation clock's date ([`super::CLOCK`]),
//! not the wall clock.
//!
//! The tools of kind `write` are `tools_write.rs`'s, the answer texts `outputs.rs`'s; this
//! file holds the lookups, the generic tools and the table of all of them.
//!
//! Architecture invariant: tools see only the database and their validated arguments;
//! policy rules the tools do not enforce live in `hooks.rs`.

use super::db::{Appointment, Interaction, MedicalRecord, Provider, TelehealthDb};
use super::outputs::{dr, not_found, patient_name, text};
use super::tools_write::{
    cancel_appointment, reschedule_appointment, schedule_appointment, update_medical_record_note,
    update_prescription_supplier,
};
pub use super::tools_write::{check_slot, slot_taken};
use crate::domain::kit::pyjson::dumps;
use crate::domain::kit::strptime::{parse_ymd, strptime};
use crate::domain::kit::text::{title_case, words};
use crate::domain::kit::{calc, specs};
use crate::domain::{Args, Tool, ToolFn, plain_error};
use serde_json::{Value, json};
use std::collections::BTreeMap;

crate::domain::kit::glue::tool_list!(TelehealthDb);

/// Python's `f"{x:.2f}"`.
fn money(x: f64) -> String {
    format!("{x:.2}")
}

/// Python's `.replace('_', ' ').title()`.
fn readable(s: &str) -> String {
    title_case(&words(s))
}

/// Python's `if limit is not None and limit > 0: items = items[:limit]`. The schema lets an
/// integral float such as `5.0` through as an integer; Python refuses to slice with it, so
/// a positive float fails here, where the reference's slice would.
fn take<T>(items: &mut Vec<T>, args: &Args) -> Result<(), String> {
    let Some(v) = args.value("limit") else {
        return Ok(());
    };
    if v.as_f64().is_none_or(|x| x <= 0.0) {
        return Ok(());
    }
    if v.is_f64() {
        return Err("slice indices must be integers or None or have an __index__ method".into());
    }
    items.truncate(usize::try_from(args.i64("limit")?).unwrap_or(usize::MAX));
    Ok(())
}

/// An optional string argument, `None` when absent or empty (Python's falsy check).
fn opt<'a>(args: &Args<'a>, key: &str) -> Option<&'a str> {
    args.opt_str(key).filter(|s| !s.is_empty())
}

fn same(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

fn find_patient_by_email(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let email = args.str("email")?;
    let mut rows = db.patients.iter();
    let found = rows.find(|(_, p)| p.demographics.email == email);
    found
        .map(|(id, _)| id.to_string())
        .ok_or_else(|| plain_error(format!("No patient found with email: {email}")))
}

fn find_patient_by_name_dob(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (first, last) = (args.str("first_name")?, args.str("last_name")?);
    let dob = args.str("date_of_birth")?;
    let matches = |p: &super::db::Patient| {
        same(&p.name.first_name, first)
            && same(&p.name.last_name, last)
            && p.demographics.date_of_birth == dob
    };
    let mut rows = db.patients.iter();
    let found = rows.find(|(_, p)| matches(p)).map(|(id, _)| id.to_string());
    found.ok_or_else(|| {
        plain_error(format!(
            "No patient found with name: {first} {last} and DOB: {dob}"
        ))
    })
}

fn get_patient_details(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    let p = db
        .patients
        .get(id)
        .ok_or_else(|| not_found("Patient", id))?;
    let meds = p.medical_history.medications.iter();
    let meds: Vec<String> = meds
        .map(|m| format!("{} {} {}", m.name, m.dosage, m.frequency))
        .collect();
    text(
        "patient_details",
        p,
        json!({"patient_id": id, "medications": meds}),
    )
}

fn get_appointment_details(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("appointment_id")?;
    let a = db
        .appointments
        .get(id)
        .ok_or_else(|| not_found("Appointment", id))?;
    let provider = db.providers.get(&a.provider_id);
    let extra = json!({
        "appointment_id": id,
        "patient_name": patient_name(db, &a.patient_id),
        "provider_name": dr(provider),
        "specialty": provider.map_or("Unknown", |p| &p.specialty),
    });
    let mut out = text("appointment_details", a, extra)?;
    let blocks = [
        ("appointment_prescription", a.prescription_issued.is_some()),
        ("appointment_referral", a.referral_from.is_some()),
        ("appointment_cancellation", a.cancellation_reason.is_some()),
    ];
    for (block, _) in blocks.iter().filter(|(_, present)| *present) {
        out.push_str(&text(block, a, json!({}))?);
    }
    Ok(out)
}

fn get_provider_details(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("provider_id")?;
    let p = db
        .providers
        .get(id)
        .ok_or_else(|| not_found("Provider", id))?;
    let mut out = text("provider_details", p, json!({"provider_id": id}))?;
    for (day, times) in &p.schedule {
        let slots = if times.is_empty() {
            "Not available".into()
        } else {
            times.join(", ")
        };
        out.push_str(&format!("\n- {}: {slots}", title_case(day)));
    }
    Ok(out)
}

fn get_medical_record(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let record = match (opt(args, "record_id"), opt(args, "appointment_id")) {
        (Some(id), _) => db
            .medical_records
            .get(id)
            .ok_or_else(|| plain_error(format!("Medical record with ID {id} not found.")))?,
        (None, Some(appt)) => {
            // A search by appointment: finding nothing is an answer, not a failed lookup.
            let mut rows = db.medical_records.iter().map(|(_, r)| r);
            match rows.find(|r| r.appointment_id.as_deref() == Some(appt)) {
                Some(r) => r,
                None => {
                    return Ok(format!(
                        "No medical record found for appointment ID {appt}."
                    ));
                }
            }
        }
        (None, None) => {
            return Err(plain_error(
                "Please provide a record_id or appointment_id to look up the medical record.",
            ));
        }
    };
    let named = |parts: &[&str], fallback: &str| {
        let parts: Vec<&str> = parts.iter().copied().filter(|s| !s.is_empty()).collect();
        Some(parts.join(" ").trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or(fallback.into())
    };
    let patient = db
        .patients
        .get(&record.patient_id)
        .map(|p| [&p.name.first_name[..], &p.name.last_name]);
    let patient = named(&patient.unwrap_or_default(), "Unknown Patient");
    let provider = db.providers.get(&record.provider_id).map(|p| {
        [
            p.name.title.as_deref().unwrap_or(""),
            &p.name.first_name,
            &p.name.last_name,
        ]
    });
    let provider = named(&provider.unwrap_or_default(), "Unknown Provider");
    let mut lines = vec![
        format!("Medical Record (ID: {})", record.record_id),
        format!("Patient: {patient} (ID: {})", record.patient_id),
        format!("Provider: {provider} (ID: {})", record.provider_id),
    ];
    let appt = record
        .appointment_id
        .as_deref()
        .and_then(|id| db.appointments.get(id));
    if let Some(a) = appt {
        let (id, date, time) = (&a.appointment_id, &a.date, &a.time);
        lines.push(format!("Related Appointment: {id} on {date} at {time}"));
    }
    lines.push(format!("Date: {}", record.date));
    lines.push(format!("Type: {}", record.kind));
    let soap = [
        &record.subjective,
        &record.objective,
        &record.assessment,
        &record.plan,
    ];
    for (key, value) in ["Subjective", "Objective", "Assessment", "Plan"]
        .iter()
        .zip(soap)
    {
        lines.push(format!("{key}: {value}"));
    }
    if let Some(recs) = record.recommendations.as_ref().filter(|r| !r.is_empty()) {
        lines.push("Recommendations:".into());
        lines.extend(recs.iter().map(|r| format!("- {r}")));
    }
    Ok(lines.join("\n"))
}

fn get_regimen_options(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    let Some(plan) = db.regimen_plans.get(id) else {
        return Ok(format!(
            "No regimen optimization data available for patient {id}."
        ));
    };
    let row = |name: &str, v: Value| text(name, v, json!({}));
    let cur = &plan.current_regimen;
    let mut lines = vec!["Current regimen components:".to_string()];
    for c in &cur.components {
        lines.push(format!("- {}", row("regimen_component", json!(c))?));
    }
    if let Some(b) = &cur.pill_burden {
        lines.push(format!(
            "Current pill burden: {}",
            row("pill_burden", json!(b))?
        ));
    }
    if !cur.notes.is_empty() {
        lines.push("Current regimen notes:".into());
        lines.extend(cur.notes.iter().map(|n| format!("  * {n}")));
    }
    lines.push("Optimized regimen options:".into());
    for (i, r) in plan.optimized_regimens.iter().enumerate() {
        lines.push(format!(
            "Option {}: {}\n  Focus: {}",
            i + 1,
            r.name,
            r.focus
        ));
        for c in &r.components {
            lines.push(format!("  - {}", row("regimen_component", json!(c))?));
        }
        if let Some(b) = &r.pill_burden {
            lines.push(format!("  Pill burden: {}", row("pill_burden", json!(b))?));
        }
        if !r.synergy_notes.is_empty() {
            lines.push("  Synergy notes:".into());
            lines.extend(r.synergy_notes.iter().map(|n| format!("    - {n}")));
        }
    }
    Ok(lines.join("\n"))
}

fn list_patient_medical_records(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    let mut records: Vec<(i64, &MedicalRecord)> = Vec::new();
    for (_, r) in db
        .medical_records
        .iter()
        .filter(|(_, r)| r.patient_id == id)
    {
        let bad = || format!("time data '{}' does not match format '%Y-%m-%d'", r.date);
        records.push((parse_ymd(&r.date).ok_or_else(bad)?, r));
    }
    if records.is_empty() {
        return Ok(format!("No medical records found for patient {id}."));
    }
    // Newest first; the stable sort keeps ties in table order, as Python's does.
    records.sort_by_key(|r| std::cmp::Reverse(r.0));
    take(&mut records, args)?;
    let mut out = String::from("Medical records (newest first):");
    for (_, r) in records {
        let meds: Vec<&str> = r
            .prescriptions()
            .iter()
            .map(|p| p.medication.as_str())
            .collect();
        let meds = if meds.is_empty() {
            "None recorded".into()
        } else {
            meds.join(", ")
        };
        let appt = r.appointment_id.as_deref().unwrap_or("None");
        out.push_str(&format!(
            "\nrecord_id={} | date={} | appointment_id={appt} | medications={meds}",
            r.record_id, r.date
        ));
    }
    Ok(out)
}

fn list_available_providers(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let specialty = args.opt_str("specialty");
    let chosen = db
        .providers
        .iter()
        .filter(|(_, p)| specialty.is_none_or(|s| same(&p.specialty, s)));
    let chosen: Vec<(&str, &Provider)> = chosen.collect();
    let named = specialty.filter(|s| !s.is_empty());
    if chosen.is_empty() {
        return Ok(match named {
            Some(s) => format!("No providers found with specialty: {s}"),
            None => "No providers found.".into(),
        });
    }
    let mut out = format!(
        "Available Providers{}:\n\n",
        named.map(|s| format!(" - {s}")).unwrap_or_default()
    );
    for (id, p) in chosen {
        out.push_str(&text("provider_entry", p, json!({"provider_id": id}))?);
    }
    Ok(out.trim().to_string())
}

fn list_patient_appointments(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    if !db.patients.contains(id) {
        return Err(not_found("Patient", id));
    }
    let filter = opt(args, "status_filter");
    let mut rows: Vec<(&str, &Appointment)> = db
        .appointments
        .iter()
        .filter(|(_, a)| a.patient_id == id && filter.is_none_or(|f| same(&a.status, f)))
        .collect();
    if rows.is_empty() {
        return Ok(match filter {
            Some(f) => format!("No appointments found for patient {id} with status {f}."),
            None => format!("No appointments found for patient {id}."),
        });
    }
    // (datetime, id); an unparsable date sorts first, as Python's `datetime.min` does.
    let when = |a: &Appointment| strptime(&format!("{} {}", a.date, a.time), "%Y-%m-%d %H:%M");
    rows.sort_by_cached_key(|(appt_id, a)| (when(a), appt_id.to_string()));
    let with = filter
        .map(|f| format!(" with status {f}"))
        .unwrap_or_default();
    let mut out = format!("Appointments for {} (ID: {id}){with}", patient_name(db, id));
    for (appt_id, a) in rows {
        let (label, specialty) = match db.providers.get(&a.provider_id) {
            Some(p) => (p.titled_last(), p.specialty.as_str()),
            None => ("Dr. Unknown".to_string(), "Unknown Specialty"),
        };
        let (status, kind) = (readable(&a.status), readable(&a.kind));
        out.push_str(&format!(
            "\n- {appt_id}: {} at {} with {label} ({specialty}) [{status}, Type: {kind}]",
            a.date, a.time
        ));
    }
    Ok(out)
}

fn list_medication_suppliers(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let medication = args.str("medication")?;
    let country = opt(args, "country_filter");
    // Matched case-insensitively; on a clash of spellings the last key wins, as in a dict
    // comprehension.
    let key = db
        .medication_suppliers
        .keys()
        .filter(|k| same(k, medication))
        .last();
    let Some(offers) = key.and_then(|k| db.medication_suppliers.get(k)) else {
        let tip = "(Tip: ensure the medication name matches the catalog)";
        return Ok(format!(
            "No supplier information found for {medication}. {tip}"
        ));
    };
    if offers.is_empty() {
        return Ok(format!("No supplier information found for {medication}."));
    }
    let mut chosen: Vec<_> = offers
        .iter()
        .filter(|o| country.is_none_or(|c| same(&o.country, c)))
        .collect();
    if let (Some(c), true) = (country, chosen.is_empty()) {
        return Ok(format!("No suppliers in {c} for {medication}."));
    }
    chosen.sort_by(|a, b| a.price_usd.total_cmp(&b.price_usd));
    take(&mut chosen, args)?;
    let mut out = format!("Suppliers for {medication}:");
    for o in chosen {
        let (company, country, brand) = (&o.company, &o.country, &o.brand_name);
        let price = money(o.price_usd);
        out.push_str(&format!(
            "\n{company} ({country}) | brand={brand} | price_usd={price}"
        ));
    }
    Ok(out)
}

fn list_telemetry_uploads(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let device = args.str("device_id")?;
    let (start, end) = (opt(args, "start_date"), opt(args, "end_date"));
    let in_window = |d: &str| start.is_none_or(|s| d >= s) && end.is_none_or(|e| d <= e);
    let uploads = db.telemetry_uploads.iter().map(|(_, u)| u);
    let mut chosen: Vec<_> = uploads
        .filter(|u| u.device_id == device && in_window(&u.date))
        .collect();
    chosen.sort_by(|a, b| a.date.cmp(&b.date));
    take(&mut chosen, args)?;
    if chosen.is_empty() {
        return Ok(format!(
            "No telemetry uploads found for device {device} in the specified window."
        ));
    }
    Ok(dumps(&chosen))
}

fn list_telemetry_devices(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let status = opt(args, "status_filter");
    if db.telemetry_inventory.is_empty() {
        return Ok("Telemetry inventory is empty.".into());
    }
    let devices = db.telemetry_inventory.iter().map(|(_, d)| d);
    let mut chosen: Vec<_> = devices
        .filter(|d| status.is_none_or(|s| same(&d.status, s)))
        .collect();
    if let (Some(s), true) = (status, chosen.is_empty()) {
        return Ok(format!("No telemetry devices with status {s}."));
    }
    chosen.sort_by(|a, b| a.device_id.cmp(&b.device_id));
    take(&mut chosen, args)?;
    let mut out = String::from("Telemetry devices:");
    for d in chosen {
        let (id, status, audit, notes) = (&d.device_id, &d.status, &d.last_audit, &d.notes);
        out.push_str(&format!(
            "\n{id} | status={status} | last_audit={audit} | notes={notes}"
        ));
    }
    Ok(out)
}

fn get_telemetry_upload(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (device, date) = (args.str("device_id")?, args.str("date")?);
    let mut uploads = db.telemetry_uploads.iter().map(|(_, u)| u);
    let found = uploads.find(|u| u.device_id == device && u.date == date);
    Ok(found
        .map(dumps)
        .unwrap_or_else(|| format!("No telemetry upload found for device {device} on {date}.")))
}

/// The reference's interaction check: the primary drug against each current one, then every
/// pair of current drugs; names resolve case-insensitively to the table's spelling (first
/// seen wins), and a pair is found under either drug.
fn check_drug_interactions(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let primary = args.str("primary_medication")?;
    let current = args.str_list("current_medications")?;
    let table: Vec<(&str, &BTreeMap<String, Interaction>)> = db.drug_interactions.iter().collect();
    let mut spelling: Vec<&str> = Vec::new();
    for (outer, inner) in &table {
        for name in std::iter::once(*outer).chain(inner.keys().map(String::as_str)) {
            if !spelling.iter().any(|s| same(s, name)) {
                spelling.push(name);
            }
        }
    }
    let canon = |m: &str| {
        spelling
            .iter()
            .find(|s| same(s, m))
            .map_or(m.to_string(), |s| s.to_string())
    };
    let find = |outer: &str, other: &str| -> Option<&Interaction> {
        let (_, inner) = table.iter().find(|(k, _)| *k == outer)?;
        inner.iter().find(|(c, _)| same(c, other)).map(|(_, d)| d)
    };
    let mut pairs: Vec<(&str, &str)> = current.iter().map(|m| (primary, *m)).collect();
    for (i, a) in current.iter().enumerate() {
        pairs.extend(current[i + 1..].iter().map(|b| (*a, *b)));
    }
    let rank = |s: &str| {
        ["low", "moderate", "high"]
            .iter()
            .position(|r| *r == s)
            .map_or(0, |i| i + 1)
    };
    let (mut lines, mut skip, mut emergency, mut overlap) = (Vec::new(), Vec::new(), false, 0);
    let mut highest: Option<(String, String)> = None;
    for (a, b) in pairs {
        let (a, b) = (canon(a), canon(b));
        let Some(d) = find(&a, &b).or_else(|| find(&b, &a)) else {
            continue;
        };
        for s in &d.skip {
            if !skip.contains(s) {
                skip.push(s.clone());
            }
        }
        emergency |= d.emergency;
        overlap = overlap.max(d.time_overlap_hours);
        let (severity, risk, hours) = (&d.severity, d.risk_score, d.time_overlap_hours);
        lines.push(format!(
            "{a} + {b}: severity={severity}, risk_score={risk}, overlap_hours={hours}. {}",
            d.action
        ));
        if rank(severity) > highest.as_ref().map_or(0, |(s, _)| rank(s)) {
            highest = Some((severity.clone(), format!("{a} + {b}")));
        }
    }
    if lines.is_empty() {
        let none = "No documented high-risk interactions found for the supplied medications.";
        return Ok(format!("{none} Continue monitoring as per care plan."));
    }
    skip.sort();
    let hold = if skip.is_empty() {
        "None".into()
    } else {
        skip.join(", ")
    };
    lines.insert(0, "Drug interaction analysis:".into());
    lines.push(format!("\nMedications to hold today: {hold}"));
    let escalate = if emergency { "Yes" } else { "No" };
    lines.push(format!("Emergency escalation required: {escalate}"));
    lines.push(format!("Peak overlap risk window (hours): {overlap}"));
    if let Some((severity, pair)) = highest {
        lines.push(format!("Highest severity interaction: {pair} ({severity})"));
    }
    Ok(lines.join("\n"))
}

fn calculate(_: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    calc::evaluate(args.str("expression")?)
}

fn think(_: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    args.str("thought").map(|_| String::new())
}

fn transfer_to_human_support(_: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    text(
        "transfer",
        json!({"reason": args.str("reason")?}),
        json!({}),
    )
}

/// Each tool function by name, in the reference's order; `tools.toml` describes them.
fn build() -> Vec<Tool<TelehealthDb>> {
    let runs: [(&str, ToolFn<TelehealthDb>); 23] = [
        ("find_patient_by_email", find_patient_by_email),
        ("find_patient_by_name_dob", find_patient_by_name_dob),
        ("get_patient_details", get_patient_details),
        ("get_appointment_details", get_appointment_details),
        ("get_provider_details", get_provider_details),
        ("get_medical_record", get_medical_record),
        ("get_regimen_options", get_regimen_options),
        ("list_patient_medical_records", list_patient_medical_records),
        ("list_available_providers", list_available_providers),
        ("list_patient_appointments", list_patient_appointments),
        ("list_medication_suppliers", list_medication_suppliers),
        ("list_telemetry_uploads", list_telemetry_uploads),
        ("check_drug_interactions", check_drug_interactions),
        ("schedule_appointment", schedule_appointment),
        ("cancel_appointment", cancel_appointment),
        ("reschedule_appointment", reschedule_appointment),
        ("calculate", calculate),
        ("think", think),
        ("transfer_to_human_support", transfer_to_human_support),
        ("update_prescription_supplier", update_prescription_supplier),
        ("list_telemetry_devices", list_telemetry_devices),
        ("get_telemetry_upload", get_telemetry_upload),
        ("update_medical_record_note", update_medical_record_note),
    ];
    specs::builtin(include_str!("tools.toml"), &runs)
}
