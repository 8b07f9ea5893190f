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
//! Architecture invariant: tools see only the database and their validated arguments;
//! policy rules the tools do not enforce live in `hooks.rs`.

use super::db::{
    Appointment, Interaction, MedicalRecord, Provider, RecordNote, SupplierChoice, SupplierDetail,
    TelehealthDb,
};
use crate::domain::kit::pyjson::dumps;
use crate::domain::kit::pytext::render;
use crate::domain::kit::strptime::{parse_ymd, strptime};
use crate::domain::kit::text::{title_case, words};
use crate::domain::kit::{calc, clock, ids, specs};
use crate::domain::{Args, Tool, ToolFn, plain_error};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// All tools, in the reference's order.
pub fn all() -> &'static [Tool<TelehealthDb>] {
    static TOOLS: LazyLock<Vec<Tool<TelehealthDb>>> = LazyLock::new(build);
    &TOOLS
}

static OUTPUTS: LazyLock<BTreeMap<String, String>> =
    LazyLock::new(|| toml::from_str(include_str!("outputs.toml")).unwrap_or_default());

/// The `outputs.toml` template `name` rendered over `row` (a serialisable row, with
/// `extra` fields added at its top level).
fn text(name: &str, row: impl Serialize, extra: Value) -> Result<String, String> {
    let mut row = serde_json::to_value(row).map_err(|e| e.to_string())?;
    if let (Value::Object(r), Value::Object(x)) = (&mut row, extra) {
        r.extend(x);
    }
    render(OUTPUTS.get(name).map_or("", String::as_str), &row)
}

/// Python's `f"{x:.2f}"`.
fn money(x: f64) -> String {
    format!("{x:.2}")
}

/// Python's `.replace('_', ' ').title()`.
fn readable(s: &str) -> String {
    title_case(&words(s))
}

fn patient_name(db: &TelehealthDb, id: &str) -> String {
    db.patients.get(id).map_or("Unknown Patient".into(), |p| {
        format!("{} {}", p.name.first_name, p.name.last_name)
    })
}

/// "Dr. Last" as the reference's confirmations name a provider.
fn dr(provider: Option<&Provider>) -> String {
    format!(
        "Dr. {}",
        provider.map_or("Unknown Provider", |p| &p.name.last_name)
    )
}

fn not_found(what: &str, id: &str) -> String {
    plain_error(format!("{what} with ID {id} not found."))
}

/// Whether `provider` sees patients at `time` on `date`, as scheduling checks it; `Err` is
/// the reference's refusal sentence.
pub fn check_slot(provider: &Provider, date: &str, time: &str) -> Result<(), String> {
    let id = &provider.provider_id;
    let day = parse_ymd(date)
        .map(|d| clock::WEEKDAYS[clock::weekday(d)])
        .ok_or_else(|| format!("Invalid date format: {date}. Please use YYYY-MM-DD format."))?;
    let Some(times) = provider.schedule.get(day) else {
        return Err(format!(
            "Provider {id} does not work on {}.",
            title_case(day)
        ));
    };
    if times.iter().any(|t| t == time) {
        return Ok(());
    }
    let list = if times.is_empty() {
        "None".into()
    } else {
        times.join(", ")
    };
    Err(format!(
        "Provider {id} is not available at {time} on {}. Available times: {list}",
        title_case(day)
    ))
}

/// The active appointment (other than `except`) holding the provider's slot, if any.
pub fn slot_taken<'a>(
    db: &'a TelehealthDb,
    provider: &str,
    date: &str,
    time: &str,
    except: Option<&str>,
) -> Option<&'a str> {
    let holds = |(id, a): &(&str, &Appointment)| {
        Some(*id) != except && a.is_active() && a.provider_id == provider && a.date == date
    };
    let mut rows = db.appointments.iter().filter(holds);
    rows.find(|(_, a)| a.time == time).map(|(id, _)| id)
}

/// One past the largest number of `APPTnnn` / `APPT_tracer_nnn`, skipping numbers either
/// family already uses.
pub fn next_appointment_number(db: &TelehealthDb) -> u64 {
    let keys = db.appointments.keys();
    let mut n = ids::max_numeric_suffix(keys, &["APPT_tracer_", "APPT"]) + 1;
    let used =
        |n| ["APPT", "APPT_tracer_"].map(|p| db.appointments.contains(&ids::counter_id(p, 3, n)));
    while used(n).contains(&true) {
        n += 1;
    }
    n
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

fn schedule_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (patient_id, provider_id) = (args.str("patient_id")?, args.str("provider_id")?);
    let (date, time, kind) = (
        args.str("date")?,
        args.str("time")?,
        args.str("appointment_type")?,
    );
    let insured = args.value("bill_insurance").is_none() || args.bool("bill_insurance")?;
    let (voucher, notes) = (args.opt_str("voucher_id"), args.opt_str("payment_notes"));
    let patient = db
        .patients
        .get(patient_id)
        .ok_or_else(|| not_found("Patient", patient_id))?;
    let provider = db
        .providers
        .get(provider_id)
        .ok_or_else(|| not_found("Provider", provider_id))?;
    check_slot(provider, date, time).map_err(plain_error)?;
    if slot_taken(db, provider_id, date, time, None).is_some() {
        return Err(plain_error(format!(
            "Provider {provider_id} already has an appointment scheduled at {time} on {date}."
        )));
    }
    let n = next_appointment_number(db);
    let id = ids::counter_id("APPT", 3, n);
    let plan = &patient.insurance.primary;
    let primary_care = provider.specialty == "Primary Care";
    let copay = if primary_care {
        plan.copay_primary
    } else {
        plan.copay_specialist
    };
    let method = match (insured, voucher.is_some_and(|v| !v.is_empty())) {
        (true, _) => "insurance",
        (false, true) => "telehealth_voucher",
        (false, false) => "self_pay",
    };
    let row = Appointment {
        appointment_id: id.clone(),
        patient_id: patient_id.into(),
        provider_id: provider_id.into(),
        date: date.into(),
        time: time.into(),
        duration_minutes: 30,
        kind: kind.into(),
        status: "scheduled".into(),
        notes: notes.unwrap_or("").into(),
        insurance_authorization: insured.then(|| ids::counter_id("AUTH", 6, n)),
        copay_amount: if insured { copay } else { 0.0 },
        meeting_link: Some(format!("https://telehealth.healthcenter.com/room/{id}")),
        payment_method: Some(method.into()),
        voucher_id: Some(voucher.filter(|_| !insured).map(str::to_string)),
        insurance_billed: Some(insured),
        ..Default::default()
    };
    let extra = json!({"patient_name": patient_name(db, patient_id),
        "provider_last": provider.name.last_name, "specialty": provider.specialty});
    let parts = [
        ("scheduled", true),
        ("scheduled_insured", insured),
        ("scheduled_self_pay", !insured),
        (
            "scheduled_voucher",
            !insured && voucher.is_some_and(|v| !v.is_empty()),
        ),
        ("scheduled_due", !insured),
        (
            "scheduled_notes",
            !insured && notes.is_some_and(|v| !v.is_empty()),
        ),
        ("scheduled_end", true),
    ];
    let mut out = String::new();
    for (part, _) in parts.iter().filter(|(_, shown)| *shown) {
        out.push_str(&text(part, &row, extra.clone())?);
    }
    db.appointments.insert(id, row);
    Ok(out)
}

/// An appointment a change may touch, or the reference's refusal for its status.
fn changeable<'a>(db: &'a TelehealthDb, id: &str, verb: &str) -> Result<&'a Appointment, String> {
    let a = db
        .appointments
        .get(id)
        .ok_or_else(|| not_found("Appointment", id))?;
    let refusal = match (a.status.as_str(), verb) {
        ("cancelled", "cancel") => format!("Appointment {id} is already cancelled."),
        ("cancelled", _) => {
            format!("Cannot {verb} appointment {id} - appointment has been cancelled.")
        }
        ("completed", _) => {
            format!("Cannot {verb} appointment {id} - appointment has already been completed.")
        }
        _ => return Ok(a),
    };
    Err(plain_error(refusal))
}

fn cancel_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("appointment_id")?;
    let a = changeable(db, id, "cancel")?;
    let provider = db.providers.get(&a.provider_id);
    let extra =
        json!({"patient_name": patient_name(db, &a.patient_id), "provider_name": dr(provider)});
    let Some(a) = db.appointments.get_mut(id) else {
        return Err(not_found("Appointment", id));
    };
    a.status = "cancelled".into();
    a.cancellation_reason = Some("patient_cancelled".into());
    a.cancellation_date = Some(super::CLOCK.today().into());
    text("cancelled", &*a, extra)
}

fn reschedule_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("appointment_id")?;
    let (new_date, new_time) = (args.str("new_date")?, args.str("new_time")?);
    let a = changeable(db, id, "reschedule")?;
    let provider = db
        .providers
        .get(&a.provider_id)
        .ok_or_else(|| format!("'{}'", a.provider_id))?;
    check_slot(provider, new_date, new_time).map_err(plain_error)?;
    if slot_taken(db, &a.provider_id, new_date, new_time, Some(id)).is_some() {
        return Err(plain_error(format!(
            "Provider {} already has an appointment scheduled at {new_time} on {new_date}.",
            a.provider_id
        )));
    }
    let extra = json!({"patient_name": patient_name(db, &a.patient_id), "old_date": a.date,
        "old_time": a.time, "provider_last": provider.name.last_name,
        "specialty": provider.specialty});
    let Some(a) = db.appointments.get_mut(id) else {
        return Err(not_found("Appointment", id));
    };
    a.date = new_date.into();
    a.time = new_time.into();
    text("rescheduled", &*a, extra)
}

/// The prescription `update_prescription_supplier` edits: an exact (trimmed, lower-case)
/// name match, else the first name that is a prefix of the request or has it as a prefix.
/// Names are deduplicated as a dict would: a name keeps its first position, its value is
/// the last prescription of that name.
fn match_prescription(record: &MedicalRecord, medication: &str) -> Option<usize> {
    let mut keys: Vec<(String, usize)> = Vec::new();
    for (i, p) in record.prescriptions().iter().enumerate() {
        let key = p.medication.trim().to_lowercase();
        match keys.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = i,
            None => keys.push((key, i)),
        }
    }
    let wanted = medication.trim().to_lowercase();
    let prefix = |k: &str| wanted.starts_with(k) || k.starts_with(wanted.as_str());
    let exact = keys.iter().find(|(k, _)| *k == wanted);
    exact
        .or_else(|| keys.iter().find(|(k, _)| prefix(k)))
        .map(|(_, i)| *i)
}

fn update_prescription_supplier(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (record_id, medication) = (args.str("record_id")?, args.str("medication")?);
    let (company, brand) = (args.str("supplier_company")?, args.str("brand_name")?);
    let (price, currency) = (
        args.f64("price_usd")?,
        args.opt_str("currency").unwrap_or("USD"),
    );
    let record = db
        .medical_records
        .get_mut(record_id)
        .ok_or("medical record not found")?;
    if record.prescriptions().is_empty() {
        return Err("medical record has no prescriptions".into());
    }
    let index = match_prescription(record, medication)
        .ok_or_else(|| format!("medication {medication} not found in record {record_id}"))?;
    if let Some(p) = record
        .prescriptions
        .as_mut()
        .and_then(|ps| ps.get_mut(index))
    {
        p.pharmacy = Some(format!("{company} ({brand})"));
        p.supplier = Some(SupplierChoice::Detail(SupplierDetail {
            company: Some(company.into()),
            brand_name: Some(brand.into()),
            price_usd: Some(price),
            country: None,
            currency: Some(currency.into()),
        }));
    }
    Ok(dumps(&*record))
}

fn update_medical_record_note(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (record_id, note) = (args.str("record_id")?, args.str("note")?);
    let record = db.medical_records.get_mut(record_id);
    let record = record.ok_or_else(|| format!("medical record {record_id} not found"))?;
    let notes = record.notes.get_or_insert_with(Vec::new);
    notes.push(RecordNote { note: note.into() });
    Ok(dumps(&*record))
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

/// Each tool function by name; `tools.toml` describes them.
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
