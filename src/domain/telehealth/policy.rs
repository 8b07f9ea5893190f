//! The policy rules of `policies/telehealth.md` that the tools do not enforce themselves,
//! as named rules ([`RULES`]). Acting only for the authenticated patient cannot be checked
//! per call (a call does not say who asked); the proposals enforce it and verification
//! checks every value against that patient's facts and records.

use super::db::{
    Appointment, Prescription, Provider, SupplierChoice, SupplierOffer, TelehealthDb, today,
};
use super::tools::{check_slot, slot_taken};
use crate::domain::kit::policy::Rule;
use crate::domain::kit::strptime;
use crate::domain::kit::text::arg_str;
use serde_json::Value;

/// `Ok` when `holds`, else the detail.
fn ensure(holds: bool, detail: impl FnOnce() -> String) -> Result<(), String> {
    if holds { Ok(()) } else { Err(detail()) }
}

fn appointment<'a>(db: &'a TelehealthDb, args: &Value) -> Result<&'a Appointment, String> {
    let id = arg_str(args, "appointment_id");
    db.appointments
        .get(id)
        .ok_or_else(|| format!("appointment {id} does not exist"))
}

/// (provider, date, time, patient, appointment being moved) of a booking or a move.
type Target<'a> = (&'a Provider, &'a str, &'a str, &'a str, Option<&'a str>);

fn target<'a>(db: &'a TelehealthDb, tool: &str, args: &'a Value) -> Result<Target<'a>, String> {
    let (provider, date, time, patient, moved) = if tool == SCHEDULE {
        let (date, time) = (arg_str(args, "date"), arg_str(args, "time"));
        (
            arg_str(args, "provider_id"),
            date,
            time,
            arg_str(args, "patient_id"),
            None,
        )
    } else {
        let a = appointment(db, args)?;
        let (date, time) = (arg_str(args, "new_date"), arg_str(args, "new_time"));
        (
            a.provider_id.as_str(),
            date,
            time,
            a.patient_id.as_str(),
            Some(a.appointment_id.as_str()),
        )
    };
    let p = db
        .providers
        .get(provider)
        .ok_or_else(|| format!("provider {provider} does not exist"))?;
    Ok((p, date, time, patient, moved))
}

fn known_patient(db: &TelehealthDb, args: &Value) -> Result<(), String> {
    let id = arg_str(args, "patient_id");
    ensure(db.patients.contains(id), || {
        format!("patient {id} does not exist")
    })
}

fn provider_hours(db: &TelehealthDb, tool: &str, args: &Value) -> Result<(), String> {
    let (p, date, time, _, _) = target(db, tool, args)?;
    check_slot(p, date, time)
}

fn future_visit(date: &str) -> Result<(), String> {
    let later = strptime::parse_ymd(date).is_some_and(|d| d > today());
    ensure(later, || {
        format!(
            "visits are booked after today ({}), not on {date}",
            super::CLOCK.today()
        )
    })
}

fn free_for_both(db: &TelehealthDb, tool: &str, args: &Value) -> Result<(), String> {
    let (p, date, time, patient, moved) = target(db, tool, args)?;
    if let Some(other) = slot_taken(db, &p.provider_id, date, time, moved) {
        return Err(format!(
            "{} is already booked at {date} {time} ({other})",
            p.provider_id
        ));
    }
    let clash = |(id, a): &(&str, &Appointment)| {
        Some(*id) != moved && a.is_active() && a.patient_id == patient && a.date == date
    };
    let mut own = db.appointments.iter().filter(clash);
    match own.find(|(_, a)| a.time == time) {
        Some((id, _)) => Err(format!("the patient already has {id} at {date} {time}")),
        None => Ok(()),
    }
}

fn active(db: &TelehealthDb, args: &Value) -> Result<(), String> {
    let a = appointment(db, args)?;
    ensure(a.is_active(), || {
        format!(
            "only scheduled or pending_approval visits change; {} is {}",
            a.appointment_id, a.status
        )
    })
}

/// The prescription an update names (exactly, case-insensitively).
fn prescription<'a>(db: &'a TelehealthDb, args: &Value) -> Result<&'a Prescription, String> {
    let id = arg_str(args, "record_id");
    let record = db
        .medical_records
        .get(id)
        .ok_or_else(|| format!("record {id} does not exist"))?;
    let wanted = arg_str(args, "medication").trim().to_lowercase();
    let mut lines = record.prescriptions().iter();
    let found = lines.find(|p| p.medication.trim().to_lowercase() == wanted);
    found.ok_or_else(|| format!("record {id} prescribes no {wanted}"))
}

fn catalogue_offer(db: &TelehealthDb, args: &Value) -> Result<(), String> {
    let p = prescription(db, args)?;
    let (company, brand) = (
        arg_str(args, "supplier_company"),
        arg_str(args, "brand_name"),
    );
    let price = args.get("price_usd").and_then(Value::as_f64);
    let usd = args.get("currency").is_none_or(|c| c == "USD");
    let offered = |o: &&SupplierOffer| {
        o.company == company && o.brand_name == brand && Some(o.price_usd) == price
    };
    let listed = db
        .medication_suppliers
        .get(&p.medication)
        .is_some_and(|l| l.iter().any(|o| offered(&o)));
    ensure(listed && usd, || {
        format!(
            "{company} {brand} at {price:?} USD is not a catalogue offer for {}",
            p.medication
        )
    })
}

fn new_supplier(db: &TelehealthDb, args: &Value) -> Result<(), String> {
    let p = prescription(db, args)?;
    let same = matches!(&p.supplier, Some(SupplierChoice::Detail(d))
        if d.company.as_deref() == Some(arg_str(args, "supplier_company"))
            && d.brand_name.as_deref() == Some(arg_str(args, "brand_name")));
    ensure(!same, || {
        format!("{} already comes from that supplier", p.medication)
    })
}

const fn rule(
    tool: &'static str,
    name: &'static str,
    check: fn(&TelehealthDb, &Value) -> Result<(), String>,
) -> Rule<TelehealthDb> {
    Rule { tool, name, check }
}

const SCHEDULE: &str = "schedule_appointment";
const RESCHEDULE: &str = "reschedule_appointment";
const SUPPLIER: &str = "update_prescription_supplier";
const NOTE: &str = "update_medical_record_note";

/// The machine-checkable rules of `policies/telehealth.md`, per write tool.
pub static RULES: &[Rule<TelehealthDb>] = &[
    rule(SCHEDULE, "known_patient", known_patient),
    rule(SCHEDULE, "provider_hours", |db, a| {
        provider_hours(db, SCHEDULE, a)
    }),
    rule(SCHEDULE, "future_visit", |_, a| {
        future_visit(arg_str(a, "date"))
    }),
    rule(SCHEDULE, "slot_free", |db, a| {
        free_for_both(db, SCHEDULE, a)
    }),
    rule("cancel_appointment", "active_appointment", active),
    rule(RESCHEDULE, "active_appointment", active),
    rule(RESCHEDULE, "provider_hours", |db, a| {
        provider_hours(db, RESCHEDULE, a)
    }),
    rule(RESCHEDULE, "future_visit", |_, a| {
        future_visit(arg_str(a, "new_date"))
    }),
    rule(RESCHEDULE, "slot_free", |db, a| {
        free_for_both(db, RESCHEDULE, a)
    }),
    rule(RESCHEDULE, "real_change", real_change),
    rule(SUPPLIER, "prescribed_medication", |db, a| {
        prescription(db, a).map(drop)
    }),
    rule(SUPPLIER, "catalogue_offer", catalogue_offer),
    rule(SUPPLIER, "new_supplier", new_supplier),
    rule(NOTE, "known_record", known_record),
    rule(NOTE, "note_text", |_, a| {
        ensure(!arg_str(a, "note").trim().is_empty(), || {
            "a note needs text".into()
        })
    }),
];

fn real_change(db: &TelehealthDb, args: &Value) -> Result<(), String> {
    let a = appointment(db, args)?;
    let same = a.date == arg_str(args, "new_date") && a.time == arg_str(args, "new_time");
    ensure(!same, || {
        "the new date and time are the current ones".into()
    })
}

fn known_record(db: &TelehealthDb, args: &Value) -> Result<(), String> {
    let id = arg_str(args, "record_id");
    ensure(db.medical_records.contains(id), || {
        format!("record {id} does not exist")
    })
}
