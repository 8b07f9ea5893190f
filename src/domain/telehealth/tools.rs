//! The 23 telehealth tools: specs and behaviour, API-compatible with tau-emotion-bench's
//! telehealth environment (same names, arguments, texts and error strings; descriptions are
//! our own words).
//!
//! Most tools answer with multi-line text, reproduced character for character; a few answer
//! with `json.dumps` of rows ([`dumps`]). Failures follow the reference's three forms: a
//! plain sentence for an unknown id or a refused appointment change (observed verbatim via
//! [`plain_error`], but still an error to grounding and replay), an `Error: ...` string for
//! the two record updates, and `Error: 'key'` where the reference's code hits a missing key
//! (a `KeyError`). An empty listing or search is an answer, not an error. Where the
//! reference iterates a dict, ours iterates the table in key order, which is the order of
//! the files we write. Checks run before any mutation except where the reference itself
//! mutates first (`reschedule_appointment` on a row without a meeting link).
//!
//! Departure: `cancel_appointment` stamps the simulation clock's date ([`super::CLOCK`]),
//! not the wall clock.
//!
//! Architecture invariant: tools see only the database and their validated arguments;
//! policy rules the tools do not enforce live in `hooks.rs`.

use super::db::{
    Appointment, Interaction, MedicalRecord, Patient, Provider, RecordNote, RegimenComponent,
    SupplierChoice, SupplierDetail, TelehealthDb,
};
use crate::domain::kit::pyjson::dumps;
use crate::domain::kit::strptime::{parse_ymd, strptime};
use crate::domain::kit::text::{title_case, words};
use crate::domain::kit::{calc, clock, ids, specs};
use crate::domain::{Args, Tool, plain_error};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// All tools, in the reference's order.
pub fn all() -> &'static [Tool<TelehealthDb>] {
    static TOOLS: LazyLock<Vec<Tool<TelehealthDb>>> = LazyLock::new(build);
    &TOOLS
}

/// Python's `.replace('_', ' ').title()` of a status or type.
fn readable(s: &str) -> String {
    title_case(&words(s))
}

/// Python's `f"{x:.2f}"`.
fn money(x: f64) -> String {
    format!("{x:.2}")
}

/// A missing key, as the reference harness reports Python's `KeyError`.
fn key_error(key: &str) -> String {
    format!("'{key}'")
}

/// The lower-case English weekday of a `%Y-%m-%d` date, or `None` where Python's
/// `strptime` raises.
fn weekday_of(date: &str) -> Option<&'static str> {
    parse_ymd(date).map(|d| clock::WEEKDAYS[clock::weekday(d)])
}

fn patient_name(p: Option<&Patient>) -> String {
    match p {
        Some(p) => format!("{} {}", p.name.first_name, p.name.last_name),
        None => "Unknown Patient".into(),
    }
}

fn provider_dr_last(p: Option<&Provider>) -> String {
    match p {
        Some(p) => format!("Dr. {}", p.name.last_name),
        None => "Dr. Unknown Provider".into(),
    }
}

/// Whether `provider` sees patients at `time` on `date`, as schedule and reschedule check
/// it; `Err` is the reference's refusal sentence.
pub fn check_slot(provider: &Provider, date: &str, time: &str) -> Result<(), String> {
    let id = &provider.provider_id;
    let day = weekday_of(date)
        .ok_or_else(|| format!("Invalid date format: {date}. Please use YYYY-MM-DD format."))?;
    let Some(times) = provider.schedule.get(day) else {
        return Err(format!(
            "Provider {id} does not work on {}.",
            title_case(day)
        ));
    };
    if !times.iter().any(|t| t == time) {
        let list = if times.is_empty() {
            "None".to_string()
        } else {
            times.join(", ")
        };
        return Err(format!(
            "Provider {id} is not available at {time} on {}. Available times: {list}",
            title_case(day)
        ));
    }
    Ok(())
}

/// The active appointment (other than `except`) that holds the provider's slot, if any.
pub fn slot_taken<'a>(
    db: &'a TelehealthDb,
    provider_id: &str,
    date: &str,
    time: &str,
    except: Option<&str>,
) -> Option<&'a str> {
    db.appointments
        .iter()
        .find(|(id, a)| {
            Some(*id) != except
                && a.provider_id == provider_id
                && a.date == date
                && a.time == time
                && a.is_active()
        })
        .map(|(id, _)| id)
}

/// The next appointment number: one past the largest of `APPTnnn` / `APPT_tracer_nnn`,
/// skipping numbers either family already uses.
pub fn next_appointment_number(db: &TelehealthDb) -> u64 {
    let mut n = ids::max_numeric_suffix(db.appointments.keys(), &["APPT_tracer_", "APPT"]) + 1;
    while db.appointments.contains(&ids::counter_id("APPT", 3, n))
        || db
            .appointments
            .contains(&ids::counter_id("APPT_tracer_", 3, n))
    {
        n += 1;
    }
    n
}

fn find_patient_by_email(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let email = args.str("email")?;
    db.patients
        .iter()
        .find(|(_, p)| p.demographics.email == email)
        .map(|(id, _)| id.to_string())
        .ok_or_else(|| plain_error(format!("No patient found with email: {email}")))
}

fn find_patient_by_name_dob(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (first, last, dob) = (
        args.str("first_name")?,
        args.str("last_name")?,
        args.str("date_of_birth")?,
    );
    db.patients
        .iter()
        .find(|(_, p)| {
            p.name.first_name.to_lowercase() == first.to_lowercase()
                && p.name.last_name.to_lowercase() == last.to_lowercase()
                && p.demographics.date_of_birth == dob
        })
        .map(|(id, _)| id.to_string())
        .ok_or_else(|| {
            plain_error(format!(
                "No patient found with name: {first} {last} and DOB: {dob}"
            ))
        })
}

fn or_none(items: &[String]) -> String {
    if items.is_empty() {
        "None".into()
    } else {
        items.join(", ")
    }
}

fn get_patient_details(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    let p = db
        .patients
        .get(id)
        .ok_or_else(|| plain_error(format!("Patient with ID {id} not found.")))?;
    let (d, a, i, h, e) = (
        &p.demographics,
        &p.address,
        &p.insurance.primary,
        &p.medical_history,
        &p.emergency_contact,
    );
    let meds: Vec<String> = h
        .medications
        .iter()
        .map(|m| format!("{} {} {}", m.name, m.dosage, m.frequency))
        .collect();
    Ok(format!(
        "Patient Details for {name} (ID: {id})\n\nDemographics:\n- Date of Birth: {dob}\n- Gender: {gender}\n- Phone: {phone}\n- Email: {email}\n\nAddress:\n- {a1}\n- {a2}\n- {city}, {state} {zip}\n- {country}\n\nInsurance:\n- Provider: {ins}\n- Policy Number: {policy}\n- Primary Care Copay: ${cp}\n- Specialist Copay: ${cs}\n\nMedical History:\n- Conditions: {cond}\n- Allergies: {allergies}\n- Current Medications: {meds}\n\nEmergency Contact:\n- {ename} ({rel})\n- Phone: {ephone}",
        name = patient_name(Some(p)),
        dob = d.date_of_birth,
        gender = d.gender,
        phone = d.phone,
        email = d.email,
        a1 = a.address1,
        a2 = a.address2,
        city = a.city,
        state = a.state,
        zip = a.zip,
        country = a.country,
        ins = i.provider,
        policy = i.policy_number,
        cp = money(i.copay_primary),
        cs = money(i.copay_specialist),
        cond = or_none(&h.conditions),
        allergies = or_none(&h.allergies),
        meds = or_none(&meds),
        ename = e.name,
        rel = e.relationship,
        ephone = e.phone,
    ))
}

fn get_appointment_details(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("appointment_id")?;
    let a = db
        .appointments
        .get(id)
        .ok_or_else(|| plain_error(format!("Appointment with ID {id} not found.")))?;
    let provider = db.providers.get(&a.provider_id);
    let patient = match db.patients.get(&a.patient_id) {
        Some(p) => patient_name(Some(p)),
        None => "Unknown Patient".into(),
    };
    // The reference reads these keys in this order inside one f-string.
    let complaint = a
        .chief_complaint
        .as_deref()
        .ok_or_else(|| key_error("chief_complaint"))?;
    let link = a
        .meeting_link
        .as_deref()
        .ok_or_else(|| key_error("meeting_link"))?;
    let mut out = format!(
        "Appointment Details (ID: {id})\n\nPatient: {patient} (ID: {pid})\nProvider: {dr} - {spec} (ID: {prid})\n\nAppointment Information:\n- Date: {date}\n- Time: {time}\n- Duration: {dur} minutes\n- Type: {kind}\n- Status: {status}\n\nClinical Information:\n- Chief Complaint: {complaint}\n- Notes: {notes}\n\nBilling Information:\n- Insurance Authorization: {auth}\n- Copay Amount: ${copay}\n\nMeeting Information:\n- Meeting Link: {link}",
        pid = a.patient_id,
        dr = provider_dr_last(provider),
        spec = provider.map_or("Unknown", |p| p.specialty.as_str()),
        prid = a.provider_id,
        date = a.date,
        time = a.time,
        dur = a.duration_minutes,
        kind = readable(&a.kind),
        status = readable(&a.status),
        notes = a.notes,
        auth = a.insurance_authorization.as_deref().unwrap_or("None"),
        copay = money(a.copay_amount),
    );
    if let Some(rx) = &a.prescription_issued {
        out.push_str(&format!(
            "\n\nPrescription Issued:\n- {} {} {}\n- Quantity: {}, Refills: {}",
            rx.medication, rx.dosage, rx.frequency, rx.quantity, rx.refills
        ));
    }
    if let Some(from) = &a.referral_from {
        out.push_str(&format!("\n\nReferral from: {from}"));
    }
    if let Some(reason) = &a.cancellation_reason {
        let date = a
            .cancellation_date
            .as_deref()
            .ok_or_else(|| key_error("cancellation_date"))?;
        out.push_str(&format!(
            "\n\nCancellation Details:\n- Reason: {}\n- Date: {date}",
            readable(reason)
        ));
    }
    Ok(out)
}

fn get_provider_details(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("provider_id")?;
    let p = db
        .providers
        .get(id)
        .ok_or_else(|| plain_error(format!("Provider with ID {id} not found.")))?;
    let license = p
        .license_number
        .as_deref()
        .ok_or_else(|| key_error("license_number"))?;
    let mut out = format!(
        "Provider Details (ID: {id})\n\nName: {title} {first} {last}\nSpecialty: {spec}\nLicense Number: {license}\nCredentials: {cred}\nYears of Experience: {years}\n\nContact Information:\n- Phone: {phone}\n- Email: {email}\n\nLanguages: {langs}\nConsultation Fee: ${fee}\n\nWeekly Schedule:",
        title = p.name.title.as_deref().unwrap_or("Dr."),
        first = p.name.first_name,
        last = p.name.last_name,
        spec = p.specialty,
        cred = p.credentials.join(", "),
        years = p.years_experience,
        phone = p.contact.phone,
        email = p.contact.email,
        langs = p.languages.join(", "),
        fee = money(p.consultation_fee),
    );
    for (day, times) in &p.schedule {
        let slots = if times.is_empty() {
            "Not available".to_string()
        } else {
            times.join(", ")
        };
        out.push_str(&format!("\n- {}: {slots}", title_case(day)));
    }
    Ok(out)
}

fn get_medical_record(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let record_id = args.opt_str("record_id").unwrap_or("");
    let appointment_id = args.opt_str("appointment_id").unwrap_or("");
    if record_id.is_empty() && appointment_id.is_empty() {
        return Err(plain_error(
            "Please provide a record_id or appointment_id to look up the medical record.",
        ));
    }
    let record: &MedicalRecord = if !record_id.is_empty() {
        db.medical_records
            .get(record_id)
            .ok_or_else(|| plain_error(format!("Medical record with ID {record_id} not found.")))?
    } else {
        // A search by appointment: finding nothing is an answer, not a failed lookup.
        let found = db
            .medical_records
            .iter()
            .map(|(_, r)| r)
            .find(|r| r.appointment_id.as_deref() == Some(appointment_id));
        match found {
            Some(r) => r,
            None => {
                return Ok(format!(
                    "No medical record found for appointment ID {appointment_id}."
                ));
            }
        }
    };
    let joined = |parts: &[&str], fallback: &str| {
        let s: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
        let s = s.join(" ");
        if s.trim().is_empty() {
            fallback.to_string()
        } else {
            s.trim().to_string()
        }
    };
    let patient = db.patients.get(&record.patient_id).map_or_else(
        || "Unknown Patient".to_string(),
        |p| joined(&[&p.name.first_name, &p.name.last_name], "Unknown Patient"),
    );
    let provider = db.providers.get(&record.provider_id).map_or_else(
        || "Unknown Provider".to_string(),
        |p| {
            joined(
                &[
                    p.name.title.as_deref().unwrap_or(""),
                    &p.name.first_name,
                    &p.name.last_name,
                ],
                "Unknown Provider",
            )
        },
    );
    let mut lines = vec![
        format!("Medical Record (ID: {})", record.record_id),
        format!("Patient: {patient} (ID: {})", record.patient_id),
        format!("Provider: {provider} (ID: {})", record.provider_id),
    ];
    if let Some(a) = record
        .appointment_id
        .as_deref()
        .and_then(|id| db.appointments.get(id))
    {
        lines.push(format!(
            "Related Appointment: {} on {} at {}",
            a.appointment_id, a.date, a.time
        ));
    }
    lines.push(format!("Date: {}", record.date));
    lines.push(format!("Type: {}", record.kind));
    for (key, text) in [
        ("Subjective", &record.subjective),
        ("Objective", &record.objective),
        ("Assessment", &record.assessment),
        ("Plan", &record.plan),
    ] {
        lines.push(format!("{key}: {text}"));
    }
    if let Some(recs) = record.recommendations.as_ref().filter(|r| !r.is_empty()) {
        lines.push("Recommendations:".into());
        lines.extend(recs.iter().map(|r| format!("- {r}")));
    }
    Ok(lines.join("\n"))
}

fn component_line(c: &RegimenComponent) -> String {
    format!(
        "{} | dosage={} | daily_dose={} | monthly_units={} | unit_type={} | brand={} | supplier={} | unit_cost_usd={}",
        c.medication,
        c.dosage,
        c.daily_dose,
        c.monthly_units,
        c.unit_type,
        c.preferred_brand,
        c.supplier,
        money(c.unit_cost_usd)
    )
}

fn get_regimen_options(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    let Some(plan) = db.regimen_plans.get(id) else {
        return Ok(format!(
            "No regimen optimization data available for patient {id}."
        ));
    };
    let cur = &plan.current_regimen;
    let mut lines = vec!["Current regimen components:".to_string()];
    lines.extend(
        cur.components
            .iter()
            .map(|c| format!("- {}", component_line(c))),
    );
    if let Some(b) = &cur.pill_burden {
        lines.push(format!(
            "Current pill burden: tablets_per_day={} | devices_per_month={}",
            b.tablets_per_day, b.devices_per_month
        ));
    }
    if !cur.notes.is_empty() {
        lines.push("Current regimen notes:".into());
        lines.extend(cur.notes.iter().map(|n| format!("  * {n}")));
    }
    lines.push("Optimized regimen options:".into());
    for (i, r) in plan.optimized_regimens.iter().enumerate() {
        lines.push(format!("Option {}: {}", i + 1, r.name));
        lines.push(format!("  Focus: {}", r.focus));
        lines.extend(
            r.components
                .iter()
                .map(|c| format!("  - {}", component_line(c))),
        );
        if let Some(b) = &r.pill_burden {
            lines.push(format!(
                "  Pill burden: tablets_per_day={} | devices_per_month={}",
                b.tablets_per_day, b.devices_per_month
            ));
        }
        if !r.synergy_notes.is_empty() {
            lines.push("  Synergy notes:".into());
            lines.extend(r.synergy_notes.iter().map(|n| format!("    - {n}")));
        }
    }
    Ok(lines.join("\n"))
}

/// Python's `limit is not None and limit > 0`.
fn limit(args: &Args) -> Result<Option<usize>, String> {
    match args.value("limit") {
        None => Ok(None),
        Some(_) => {
            let n = args.i64("limit")?;
            Ok((n > 0).then(|| usize::try_from(n).unwrap_or(usize::MAX)))
        }
    }
}

fn list_patient_medical_records(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    let limit = limit(args)?;
    let mut records: Vec<(i64, &MedicalRecord)> = Vec::new();
    for (_, r) in db
        .medical_records
        .iter()
        .filter(|(_, r)| r.patient_id == id)
    {
        let day = parse_ymd(&r.date)
            .ok_or_else(|| format!("time data '{}' does not match format '%Y-%m-%d'", r.date))?;
        records.push((day, r));
    }
    if records.is_empty() {
        return Ok(format!("No medical records found for patient {id}."));
    }
    // Newest first; a stable sort keeps ties in table order, as Python's does.
    records.sort_by_key(|r| std::cmp::Reverse(r.0));
    if let Some(n) = limit {
        records.truncate(n);
    }
    let lines: Vec<String> = records
        .iter()
        .map(|(_, r)| {
            let meds: Vec<&str> = r
                .prescriptions()
                .iter()
                .map(|p| p.medication.as_str())
                .collect();
            format!(
                "record_id={} | date={} | appointment_id={} | medications={}",
                r.record_id,
                r.date,
                r.appointment_id.as_deref().unwrap_or("None"),
                if meds.is_empty() {
                    "None recorded".to_string()
                } else {
                    meds.join(", ")
                }
            )
        })
        .collect();
    Ok(format!(
        "Medical records (newest first):\n{}",
        lines.join("\n")
    ))
}

fn list_available_providers(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let specialty = args.opt_str("specialty");
    let chosen: Vec<(&str, &Provider)> = db
        .providers
        .iter()
        .filter(|(_, p)| specialty.is_none_or(|s| p.specialty.to_lowercase() == s.to_lowercase()))
        .collect();
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
        out.push_str(&format!(
            "• {} {} (ID: {id})\n  Specialty: {}\n  Experience: {} years\n  Languages: {}\n  Consultation Fee: ${}\n  Phone: {}\n\n",
            p.name.title.as_deref().unwrap_or("Dr."),
            p.full_name(),
            p.specialty,
            p.years_experience,
            p.languages.join(", "),
            money(p.consultation_fee),
            p.contact.phone
        ));
    }
    Ok(out.trim().to_string())
}

fn list_patient_appointments(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("patient_id")?;
    let Some(patient) = db.patients.get(id) else {
        return Err(plain_error(format!("Patient with ID {id} not found.")));
    };
    let filter = args.opt_str("status_filter").filter(|s| !s.is_empty());
    let wanted = filter.map(str::to_lowercase);
    let mut rows: Vec<(&str, &Appointment)> = db
        .appointments
        .iter()
        .filter(|(_, a)| a.patient_id == id)
        .filter(|(_, a)| {
            wanted
                .as_ref()
                .is_none_or(|w| &a.status.to_lowercase() == w)
        })
        .collect();
    if rows.is_empty() {
        return Ok(match filter {
            Some(f) => format!("No appointments found for patient {id} with status {f}."),
            None => format!("No appointments found for patient {id}."),
        });
    }
    // (datetime, id); an unparsable date sorts first, as Python's `datetime.min` does.
    rows.sort_by_cached_key(|(appt_id, a)| {
        (
            strptime(&format!("{} {}", a.date, a.time), "%Y-%m-%d %H:%M"),
            appt_id.to_string(),
        )
    });
    let mut lines = vec![format!(
        "Appointments for {} (ID: {id}){}",
        patient_name(Some(patient)),
        filter
            .map(|f| format!(" with status {f}"))
            .unwrap_or_default()
    )];
    for (appt_id, a) in rows {
        let (label, specialty) = match db.providers.get(&a.provider_id) {
            Some(p) => (p.titled_last(), p.specialty.as_str()),
            None => ("Dr. Unknown".to_string(), "Unknown Specialty"),
        };
        lines.push(format!(
            "- {appt_id}: {} at {} with {label} ({specialty}) [{}, Type: {}]",
            a.date,
            a.time,
            readable(&a.status),
            readable(&a.kind)
        ));
    }
    Ok(lines.join("\n"))
}

fn list_medication_suppliers(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let medication = args.str("medication")?;
    let country = args.opt_str("country_filter").filter(|c| !c.is_empty());
    let limit = limit(args)?;
    // Case-insensitive lookup; on a clash of spellings the last key wins, as in a dict
    // comprehension.
    let key = db
        .medication_suppliers
        .keys()
        .filter(|k| k.to_lowercase() == medication.to_lowercase())
        .last();
    let Some(offers) = key.and_then(|k| db.medication_suppliers.get(k)) else {
        return Ok(format!(
            "No supplier information found for {medication}. (Tip: ensure the medication name matches the catalog)"
        ));
    };
    if offers.is_empty() {
        return Ok(format!("No supplier information found for {medication}."));
    }
    let mut chosen: Vec<_> = offers
        .iter()
        .filter(|o| country.is_none_or(|c| o.country.to_lowercase() == c.to_lowercase()))
        .collect();
    if let (Some(c), true) = (country, chosen.is_empty()) {
        return Ok(format!("No suppliers in {c} for {medication}."));
    }
    chosen.sort_by(|a, b| a.price_usd.total_cmp(&b.price_usd));
    if let Some(n) = limit {
        chosen.truncate(n);
    }
    let lines: Vec<String> = chosen
        .iter()
        .map(|o| {
            format!(
                "{} ({}) | brand={} | price_usd={}",
                o.company,
                o.country,
                o.brand_name,
                money(o.price_usd)
            )
        })
        .collect();
    Ok(format!("Suppliers for {medication}:\n{}", lines.join("\n")))
}

fn list_telemetry_uploads(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let device = args.str("device_id")?;
    let start = args.opt_str("start_date").filter(|s| !s.is_empty());
    let end = args.opt_str("end_date").filter(|s| !s.is_empty());
    let limit = limit(args)?;
    let mut chosen: Vec<_> = db
        .telemetry_uploads
        .iter()
        .map(|(_, u)| u)
        .filter(|u| u.device_id == device)
        .filter(|u| start.is_none_or(|s| u.date.as_str() >= s))
        .filter(|u| end.is_none_or(|e| u.date.as_str() <= e))
        .collect();
    chosen.sort_by(|a, b| a.date.cmp(&b.date));
    if let Some(n) = limit {
        chosen.truncate(n);
    }
    if chosen.is_empty() {
        return Ok(format!(
            "No telemetry uploads found for device {device} in the specified window."
        ));
    }
    Ok(dumps(&chosen))
}

fn list_telemetry_devices(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let status = args.opt_str("status_filter").filter(|s| !s.is_empty());
    let limit = limit(args)?;
    if db.telemetry_inventory.is_empty() {
        return Ok("Telemetry inventory is empty.".into());
    }
    let mut chosen: Vec<_> = db
        .telemetry_inventory
        .iter()
        .map(|(_, d)| d)
        .filter(|d| status.is_none_or(|s| d.status.to_lowercase() == s.to_lowercase()))
        .collect();
    if let (Some(s), true) = (status, chosen.is_empty()) {
        return Ok(format!("No telemetry devices with status {s}."));
    }
    chosen.sort_by(|a, b| a.device_id.cmp(&b.device_id));
    if let Some(n) = limit {
        chosen.truncate(n);
    }
    let lines: Vec<String> = chosen
        .iter()
        .map(|d| {
            format!(
                "{} | status={} | last_audit={} | notes={}",
                d.device_id, d.status, d.last_audit, d.notes
            )
        })
        .collect();
    Ok(format!("Telemetry devices:\n{}", lines.join("\n")))
}

fn get_telemetry_upload(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (device, date) = (args.str("device_id")?, args.str("date")?);
    Ok(db
        .telemetry_uploads
        .iter()
        .map(|(_, u)| u)
        .find(|u| u.device_id == device && u.date == date)
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
    let mut spelling: Vec<(String, &str)> = Vec::new();
    for name in table
        .iter()
        .flat_map(|(outer, inner)| std::iter::once(*outer).chain(inner.keys().map(String::as_str)))
    {
        let lower = name.to_lowercase();
        if !spelling.iter().any(|(l, _)| *l == lower) {
            spelling.push((lower, name));
        }
    }
    let canon = |med: &str| -> String {
        let lower = med.to_lowercase();
        spelling
            .iter()
            .find(|(l, _)| *l == lower)
            .map_or_else(|| med.to_string(), |(_, s)| s.to_string())
    };
    let find = |outer: &str, other: &str| -> Option<&Interaction> {
        let (_, inner) = table.iter().find(|(k, _)| *k == outer)?;
        let other = other.to_lowercase();
        inner
            .iter()
            .find(|(c, _)| c.to_lowercase() == other)
            .map(|(_, d)| d)
    };
    let lookup = |a: &str, b: &str| {
        let (ka, kb) = (canon(a), canon(b));
        find(&ka, &kb).or_else(|| find(&kb, &ka))
    };
    let mut lines: Vec<String> = Vec::new();
    let mut skip: Vec<String> = Vec::new();
    let mut emergency = false;
    let mut max_overlap = 0i64;
    let rank = |s: &str| match s {
        "low" => 1,
        "moderate" => 2,
        "high" => 3,
        _ => 0,
    };
    let mut highest = "none".to_string();
    let mut reason: Option<String> = None;
    let mut pairs: Vec<(&str, &str)> = current.iter().map(|m| (primary, *m)).collect();
    for (i, a) in current.iter().enumerate() {
        for b in &current[i + 1..] {
            pairs.push((a, b));
        }
    }
    for (a, b) in pairs {
        let Some(d) = lookup(a, b) else {
            continue;
        };
        for s in &d.skip {
            if !skip.contains(s) {
                skip.push(s.clone());
            }
        }
        emergency |= d.emergency;
        max_overlap = max_overlap.max(d.time_overlap_hours);
        let (da, db_) = (canon(a), canon(b));
        lines.push(format!(
            "{da} + {db_}: severity={}, risk_score={}, overlap_hours={}. {}",
            d.severity, d.risk_score, d.time_overlap_hours, d.action
        ));
        if rank(&d.severity) > rank(&highest) {
            highest = d.severity.clone();
            reason = Some(format!("{da} + {db_}"));
        }
    }
    if lines.is_empty() {
        return Ok("No documented high-risk interactions found for the supplied medications. Continue monitoring as per care plan.".into());
    }
    skip.sort();
    let mut out = vec!["Drug interaction analysis:".to_string()];
    out.extend(lines);
    out.push(String::new());
    out.push(format!(
        "Medications to hold today: {}",
        if skip.is_empty() {
            "None".to_string()
        } else {
            skip.join(", ")
        }
    ));
    out.push(format!(
        "Emergency escalation required: {}",
        if emergency { "Yes" } else { "No" }
    ));
    out.push(format!("Peak overlap risk window (hours): {max_overlap}"));
    if let Some(r) = reason {
        out.push(format!("Highest severity interaction: {r} ({highest})"));
    }
    Ok(out.join("\n"))
}

fn schedule_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (patient_id, provider_id) = (args.str("patient_id")?, args.str("provider_id")?);
    let (date, time, kind) = (
        args.str("date")?,
        args.str("time")?,
        args.str("appointment_type")?,
    );
    let bill_insurance = match args.value("bill_insurance") {
        Some(_) => args.bool("bill_insurance")?,
        None => true,
    };
    let voucher = args.opt_str("voucher_id");
    let payment_notes = args.opt_str("payment_notes");
    let patient = db
        .patients
        .get(patient_id)
        .ok_or_else(|| plain_error(format!("Patient with ID {patient_id} not found.")))?;
    let provider = db
        .providers
        .get(provider_id)
        .ok_or_else(|| plain_error(format!("Provider with ID {provider_id} not found.")))?;
    check_slot(provider, date, time).map_err(plain_error)?;
    if slot_taken(db, provider_id, date, time, None).is_some() {
        return Err(plain_error(format!(
            "Provider {provider_id} already has an appointment scheduled at {time} on {date}."
        )));
    }
    let n = next_appointment_number(db);
    let id = ids::counter_id("APPT", 3, n);
    let plan = &patient.insurance.primary;
    let base_copay = if provider.specialty == "Primary Care" {
        plan.copay_primary
    } else {
        plan.copay_specialist
    };
    let has_voucher = voucher.is_some_and(|v| !v.is_empty());
    let (copay, method, auth) = if bill_insurance {
        (base_copay, "insurance", Some(ids::counter_id("AUTH", 6, n)))
    } else if has_voucher {
        (0.0, "telehealth_voucher", None)
    } else {
        (0.0, "self_pay", None)
    };
    let link = format!("https://telehealth.healthcenter.com/room/{id}");
    let mut lines = vec![
        "Appointment successfully scheduled!".to_string(),
        String::new(),
        format!("Appointment ID: {id}"),
        format!("Patient: {}", patient_name(Some(patient))),
        format!(
            "Provider: Dr. {} - {}",
            provider.name.last_name, provider.specialty
        ),
        format!("Date: {date}"),
        format!("Time: {time}"),
        format!("Type: {}", readable(kind)),
    ];
    if bill_insurance {
        lines.push(format!("Copay: ${}", money(copay)));
        lines.push(format!(
            "Insurance Authorization: {}",
            auth.as_deref().unwrap_or("None")
        ));
    } else {
        lines.push("Insurance Billing: Skipped".into());
        lines.push(format!("Payment Method: {}", readable(method)));
        if let Some(v) = voucher.filter(|v| !v.is_empty()) {
            lines.push(format!("Voucher Applied: {v}"));
        }
        lines.push(format!("Amount Due Today: ${}", money(copay)));
        if let Some(n) = payment_notes.filter(|n| !n.is_empty()) {
            lines.push(format!("Billing Notes: {n}"));
        }
    }
    lines.push(format!("Meeting Link: {link}"));
    lines.push(String::new());
    lines.push("Please save your appointment ID for future reference.".into());
    let row = Appointment {
        appointment_id: id.clone(),
        patient_id: patient_id.to_string(),
        provider_id: provider_id.to_string(),
        date: date.to_string(),
        time: time.to_string(),
        duration_minutes: 30,
        kind: kind.to_string(),
        status: "scheduled".into(),
        chief_complaint: None,
        notes: payment_notes.unwrap_or("").to_string(),
        insurance_authorization: auth,
        copay_amount: copay,
        meeting_link: Some(link),
        payment_method: Some(method.to_string()),
        voucher_id: Some(if bill_insurance {
            None
        } else {
            voucher.map(str::to_string)
        }),
        insurance_billed: Some(bill_insurance),
        prescription_issued: None,
        referral_from: None,
        cancellation_reason: None,
        cancellation_date: None,
    };
    db.appointments.insert(id, row);
    Ok(lines.join("\n"))
}

fn cancel_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("appointment_id")?;
    let a = db
        .appointments
        .get(id)
        .ok_or_else(|| plain_error(format!("Appointment with ID {id} not found.")))?;
    match a.status.as_str() {
        "cancelled" => {
            return Err(plain_error(format!(
                "Appointment {id} is already cancelled."
            )));
        }
        "completed" => {
            return Err(plain_error(format!(
                "Cannot cancel appointment {id} - appointment has already been completed."
            )));
        }
        _ => {}
    }
    let patient = patient_name(db.patients.get(&a.patient_id));
    let provider = provider_dr_last(db.providers.get(&a.provider_id));
    let (date, time) = (a.date.clone(), a.time.clone());
    let today = super::CLOCK.today().to_string();
    if let Some(a) = db.appointments.get_mut(id) {
        a.status = "cancelled".into();
        a.cancellation_reason = Some("patient_cancelled".into());
        a.cancellation_date = Some(today.clone());
    }
    Ok(format!(
        "Appointment successfully cancelled.\n\nAppointment ID: {id}\nPatient: {patient}\nProvider: {provider}\nOriginal Date/Time: {date} at {time}\nCancellation Reason: Patient Cancelled\nCancellation Date: {today}\n\nThe appointment slot is now available for other patients. If this was a patient cancellation, please remind them of the cancellation policy."
    ))
}

fn reschedule_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let id = args.str("appointment_id")?;
    let (new_date, new_time) = (args.str("new_date")?, args.str("new_time")?);
    let a = db
        .appointments
        .get(id)
        .ok_or_else(|| plain_error(format!("Appointment with ID {id} not found.")))?;
    match a.status.as_str() {
        "cancelled" => {
            return Err(plain_error(format!(
                "Cannot reschedule appointment {id} - appointment has been cancelled."
            )));
        }
        "completed" => {
            return Err(plain_error(format!(
                "Cannot reschedule appointment {id} - appointment has already been completed."
            )));
        }
        _ => {}
    }
    let provider_id = a.provider_id.clone();
    let provider = db
        .providers
        .get(&provider_id)
        .ok_or_else(|| key_error(&provider_id))?;
    check_slot(provider, new_date, new_time).map_err(plain_error)?;
    if slot_taken(db, &provider_id, new_date, new_time, Some(id)).is_some() {
        return Err(plain_error(format!(
            "Provider {provider_id} already has an appointment scheduled at {new_time} on {new_date}."
        )));
    }
    let patient = patient_name(db.patients.get(&a.patient_id));
    let provider_line = format!("Dr. {} - {}", provider.name.last_name, provider.specialty);
    let (old_date, old_time, link) = (a.date.clone(), a.time.clone(), a.meeting_link.clone());
    if let Some(a) = db.appointments.get_mut(id) {
        a.date = new_date.to_string();
        a.time = new_time.to_string();
    }
    // The reference moves the appointment before it reads the link, so a row without one
    // is moved and the call still fails.
    let link = link.ok_or_else(|| key_error("meeting_link"))?;
    Ok(format!(
        "Appointment successfully rescheduled.\n\nAppointment ID: {id}\nPatient: {patient}\nProvider: {provider_line}\n\nPrevious Date/Time: {old_date} at {old_time}\nNew Date/Time: {new_date} at {new_time}\n\nMeeting Link: {link}\n\nPlease update your calendar with the new appointment time."
    ))
}

/// The prescription `update_prescription_supplier` edits: an exact (trimmed, lower-case)
/// name match, else the first name that is a prefix of the request or has it as a prefix.
/// Names are deduplicated as a dict would: the key keeps its first position, the value is
/// the last prescription of that name.
pub fn match_prescription(record: &MedicalRecord, medication: &str) -> Option<usize> {
    let mut keys: Vec<(String, usize)> = Vec::new();
    for (i, p) in record.prescriptions().iter().enumerate() {
        let key = p.medication.trim().to_lowercase();
        match keys.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = i,
            None => keys.push((key, i)),
        }
    }
    let wanted = medication.trim().to_lowercase();
    keys.iter()
        .find(|(k, _)| *k == wanted)
        .or_else(|| {
            keys.iter()
                .find(|(k, _)| wanted.starts_with(k.as_str()) || k.starts_with(wanted.as_str()))
        })
        .map(|(_, i)| *i)
}

fn update_prescription_supplier(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (record_id, medication) = (args.str("record_id")?, args.str("medication")?);
    let (company, brand) = (args.str("supplier_company")?, args.str("brand_name")?);
    let price = args.f64("price_usd")?;
    let currency = args.opt_str("currency").unwrap_or("USD");
    let record = db
        .medical_records
        .get(record_id)
        .ok_or("medical record not found")?;
    if record.prescriptions().is_empty() {
        return Err("medical record has no prescriptions".into());
    }
    let index = match_prescription(record, medication)
        .ok_or_else(|| format!("medication {medication} not found in record {record_id}"))?;
    let record = db
        .medical_records
        .get_mut(record_id)
        .ok_or("medical record not found")?;
    if let Some(p) = record
        .prescriptions
        .as_mut()
        .and_then(|ps| ps.get_mut(index))
    {
        p.pharmacy = Some(format!("{company} ({brand})"));
        p.supplier = Some(SupplierChoice::Detail(SupplierDetail {
            company: Some(company.to_string()),
            brand_name: Some(brand.to_string()),
            price_usd: Some(price),
            country: None,
            currency: Some(currency.to_string()),
        }));
    }
    Ok(dumps(&*record))
}

fn update_medical_record_note(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let (record_id, note) = (args.str("record_id")?, args.str("note")?);
    let record = db
        .medical_records
        .get_mut(record_id)
        .ok_or_else(|| format!("medical record {record_id} not found"))?;
    record.notes.get_or_insert_with(Vec::new).push(RecordNote {
        note: note.to_string(),
    });
    Ok(dumps(&*record))
}

fn calculate(_: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    calc::evaluate(args.str("expression")?)
}

fn think(_: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    args.str("thought")?;
    Ok(String::new())
}

fn transfer_to_human_support(_: &mut TelehealthDb, args: &Args) -> Result<String, String> {
    let reason = args.str("reason")?;
    Ok(format!(
        "Transferring you to a human support representative.\n\nReason for transfer: {reason}\n\nPlease hold while we connect you to a member of our support team. They will be able to assist you with your request.\n\nEstimated wait time: 2-3 minutes.\n\nThank you for your patience."
    ))
}

/// Each tool function by name; `tools.toml` describes them.
fn build() -> Vec<Tool<TelehealthDb>> {
    let runs: [(&str, crate::domain::ToolFn<TelehealthDb>); 23] = [
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
