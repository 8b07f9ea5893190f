//! The telehealth tools of kind `write`: scheduling, cancelling and rescheduling an
//! appointment (with the slot checks scheduling makes, which the policy rules use too), and
//! the two medical-record updates (a prescription's supplier, a note).
//!
//! Architecture invariant: tools see only the database and their validated arguments;
//! policy rules the tools do not enforce live in `hooks.rs`.

use super::db::{
    Appointment, MedicalRecord, Provider, RecordNote, SupplierChoice, SupplierDetail, TelehealthDb,
};
use super::outputs::{dr, not_found, patient_name, text};
use crate::domain::kit::pyjson::dumps;
use crate::domain::kit::strptime::parse_ymd;
use crate::domain::kit::text::title_case;
use crate::domain::kit::{clock, ids};
use crate::domain::{Args, plain_error};
use serde_json::json;

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

pub(super) fn schedule_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
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

pub(super) fn cancel_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
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

pub(super) fn reschedule_appointment(db: &mut TelehealthDb, args: &Args) -> Result<String, String> {
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

pub(super) fn update_prescription_supplier(
    db: &mut TelehealthDb,
    args: &Args,
) -> Result<String, String> {
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

pub(super) fn update_medical_record_note(
    db: &mut TelehealthDb,
    args: &Args,
) -> Result<String, String> {
    let (record_id, note) = (args.str("record_id")?, args.str("note")?);
    let record = db.medical_records.get_mut(record_id);
    let record = record.ok_or_else(|| format!("medical record {record_id} not found"))?;
    let notes = record.notes.get_or_insert_with(Vec::new);
    notes.push(RecordNote { note: note.into() });
    Ok(dumps(&*record))
}
