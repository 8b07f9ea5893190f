//! Grounding, policy and refinement hooks for telehealth.
//!
//! Proposals act on the authenticated patient's own entities: their appointments (only
//! scheduled or pending approval ones for changes), their records and prescriptions, their
//! lent devices, and free bookable slots of providers for new or moved visits. Ids an
//! earlier call revealed come first ([`propose::ranked`]). A few write proposals at the end
//! of a list are boundary calls the policy refuses (a completed visit, a time the provider
//! does not work): every consumer filters by `check_policy`, and the differential test's
//! sampler, which does not, uses them to exercise the tools' refusals.
//!
//! What a patient knows: their email (or name and date of birth), names, dates and times
//! of their visits, their providers' names, their medications, their device ids, and their
//! appointment ids (printed on every booking confirmation). Internal are the patient id and
//! medical record ids: a patient names a record by the visit it documents ("your visit of
//! 2025-10-14 with Dr. Lee"), which the record fact resolves. Supplier offers are told by
//! company, brand and price. Provider ids come from the clinic's public directory (a
//! lookup the agent can make), so they are not the patient's to state.
//!
//! The policy rules the tools do not enforce themselves are [`RULES`]. Acting only for the
//! authenticated patient cannot be checked per call (a call does not say who asked); the
//! proposals enforce it and verification checks every value against that patient's facts
//! and records.
//!
//! Architecture invariant: reads the state only; phrasing varies with the call's content
//! (no RNG), so grounding stays reproducible.

use super::db::{
    Appointment, MedicalRecord, Prescription, Provider, SupplierChoice, SupplierOffer, TelehealthDb,
};
use super::tools::{check_slot, slot_taken};
use crate::domain::kit::facts::{self, Identity};
use crate::domain::kit::policy::Rule;
use crate::domain::kit::propose::{ranked, shuffled};
use crate::domain::kit::pyjson::py_float_repr;
use crate::domain::kit::templates::Templates;
use crate::domain::kit::text::{arg_list, arg_str, join_and, variant, words};
use crate::domain::kit::{clock, strptime};
use crate::domain::{Environment, GroundingContext, UserFact};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
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

/// Notes a patient asks to have added to a record.
const NOTES: [&str; 4] = [
    "Patient asked for a copy of this visit summary.",
    "Patient compared supplier prices before the change.",
    "Patient confirmed the medication list is current.",
    "Patient requested that their caregiver be copied on updates.",
];

/// Days after the clock in which proposals book or move visits.
const HORIZON: i64 = 28;

fn today() -> i64 {
    clock::parse_date(super::CLOCK.today()).unwrap_or_default()
}

// ---------- policy ----------

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

// ---------- the patient's entities ----------

fn own_appointments<'a>(db: &'a TelehealthDb, pid: &str) -> Vec<&'a Appointment> {
    db.appointments
        .iter()
        .map(|(_, a)| a)
        .filter(|a| a.patient_id == pid)
        .collect()
}

fn own_records<'a>(db: &'a TelehealthDb, pid: &str) -> Vec<&'a MedicalRecord> {
    db.medical_records
        .iter()
        .map(|(_, r)| r)
        .filter(|r| r.patient_id == pid)
        .collect()
}

/// The patient's devices that have uploads: (id, type, upload dates).
fn own_uploads(db: &TelehealthDb, pid: &str) -> Vec<(String, String, Vec<String>)> {
    let own = db
        .telemetry_inventory
        .iter()
        .filter(|(_, d)| d.assigned_to.as_deref() == Some(pid));
    let mut out: Vec<_> = own
        .map(|(_, d)| (d.device_id.clone(), d.device_type.clone(), vec![]))
        .collect();
    for (_, u) in db.telemetry_uploads.iter() {
        if let Some(entry) = out.iter_mut().find(|e| e.0 == u.device_id) {
            entry.2.push(u.date.clone());
        }
    }
    out.retain(|e| !e.2.is_empty());
    out
}

/// Medication names the patient takes or has been prescribed, in the supplier catalogue.
fn own_catalogue_meds(db: &TelehealthDb, pid: &str) -> Vec<String> {
    let records = own_records(db, pid);
    let prescribed = records
        .iter()
        .flat_map(|r| r.prescriptions())
        .map(|p| &p.medication);
    let taken = db
        .patients
        .get(pid)
        .map(|p| &p.medical_history.medications[..])
        .unwrap_or_default();
    let mut meds: Vec<String> = Vec::new();
    for m in prescribed.chain(taken.iter().map(|m| &m.name)) {
        if db.medication_suppliers.contains(m) && !meds.contains(m) {
            meds.push(m.clone());
        }
    }
    meds
}

/// Up to `n` free (date, time) slots of `provider` in the next [`HORIZON`] days that
/// neither the provider nor the patient holds (ignoring `moving`), in a seeded order.
fn free_slots(
    db: &TelehealthDb,
    provider: &Provider,
    pid: &str,
    moving: Option<&str>,
    n: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<(String, String)> {
    let held: BTreeSet<(&str, &str, &str)> = db
        .appointments
        .iter()
        .filter(|(id, a)| a.is_active() && Some(*id) != moving)
        .flat_map(|(_, a)| {
            [
                (a.provider_id.as_str(), a.date.as_str(), a.time.as_str()),
                (a.patient_id.as_str(), a.date.as_str(), a.time.as_str()),
            ]
        })
        .collect();
    let mut slots = Vec::new();
    for day in today() + 1..=today() + HORIZON {
        let date = clock::format_date(day);
        for time in provider
            .schedule
            .get(clock::WEEKDAYS[clock::weekday(day)])
            .into_iter()
            .flatten()
        {
            if !held.contains(&(provider.provider_id.as_str(), &date, time))
                && !held.contains(&(pid, &date, time))
            {
                slots.push((date.clone(), time.clone()));
            }
        }
    }
    shuffled(slots, rng).into_iter().take(n).collect()
}

/// Providers for a patient: those the context revealed, then the patient's own providers
/// and those of the specialties their conditions need, then `extra` others.
fn candidate_providers<'a>(
    db: &'a TelehealthDb,
    pid: &str,
    ctx: &GroundingContext,
    extra: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<&'a Provider> {
    let own: Vec<String> = own_appointments(db, pid)
        .iter()
        .map(|a| a.provider_id.clone())
        .collect();
    let mut ids = ranked(ctx, "provider_id", own, |id| db.providers.contains(id), rng);
    let others: Vec<String> = shuffled(
        db.providers
            .keys()
            .filter(|k| !ids.iter().any(|i| i == k))
            .map(str::to_string)
            .collect(),
        rng,
    );
    ids.extend(others.into_iter().take(extra));
    ids.iter().filter_map(|id| db.providers.get(id)).collect()
}

/// A visit type that suits a provider.
fn visit_type(p: &Provider, k: usize) -> &'static str {
    let options = match p.specialty.as_str() {
        "Primary Care" => [
            "routine_checkup",
            "follow_up",
            "sick_visit",
            "medication_review",
        ],
        _ => [
            "follow_up",
            "specialist_consultation",
            "consultation",
            "medication_review",
        ],
    };
    options[k % options.len()]
}

// ---------- proposals ----------

/// What proposals for one patient draw on.
struct Patient<'a> {
    db: &'a TelehealthDb,
    id: &'a str,
    ctx: &'a GroundingContext,
    appts: Vec<&'a Appointment>,
    records: Vec<&'a MedicalRecord>,
}

impl Patient<'_> {
    /// The patient's appointment ids passing `keep`, those the context knows first.
    fn appointment_ids(&self, keep: impl Fn(&Appointment) -> bool, rng: &mut Rng) -> Vec<String> {
        let own = self
            .appts
            .iter()
            .filter(|a| keep(a))
            .map(|a| a.appointment_id.clone());
        ranked(self.ctx, "appointment_id", own.collect(), |_| true, rng)
            .into_iter()
            .filter(|id| {
                self.appts
                    .iter()
                    .any(|a| a.appointment_id == *id && keep(a))
            })
            .collect()
    }

    fn record_ids(&self, keep: impl Fn(&MedicalRecord) -> bool, rng: &mut Rng) -> Vec<String> {
        let own = self
            .records
            .iter()
            .filter(|r| keep(r))
            .map(|r| r.record_id.clone());
        ranked(self.ctx, "record_id", own.collect(), |_| true, rng)
            .into_iter()
            .filter(|id| self.records.iter().any(|r| r.record_id == *id && keep(r)))
            .collect()
    }

    fn book(&self, rng: &mut Rng) -> Vec<Value> {
        let (db, pid) = (self.db, self.id);
        let mut out = Vec::new();
        let providers = candidate_providers(db, pid, self.ctx, 3, rng);
        for (k, p) in providers.iter().enumerate().take(6) {
            for (date, time) in free_slots(db, p, pid, None, 2, rng) {
                let kind = visit_type(p, k + variant(&date, 4));
                let mut call = book(pid, &p.provider_id, &date, &time, kind);
                if variant(&format!("{pid}{date}{time}"), 6) == 0 {
                    call["bill_insurance"] = json!(false);
                }
                out.push(call);
            }
        }
        // Boundaries: a time no provider lists; a slot another visit holds.
        if let Some(p) = providers.first() {
            let date = clock::format_date(today() + 7);
            out.push(book(pid, &p.provider_id, &date, "12:15", "follow_up"));
        }
        let mut others = db.appointments.iter().map(|(_, a)| a);
        if let Some(a) = others.find(|a| a.is_active() && a.patient_id != pid) {
            out.push(book(pid, &a.provider_id, &a.date, &a.time, "consultation"));
        }
        out
    }

    fn reschedule(&self, rng: &mut Rng) -> Vec<Value> {
        let db = self.db;
        let mut out = Vec::new();
        let movable = |a: &Appointment| a.is_active() && a.meeting_link.is_some();
        for id in self.appointment_ids(movable, rng).into_iter().take(4) {
            let provider = db
                .appointments
                .get(&id)
                .and_then(|a| db.providers.get(&a.provider_id));
            if let Some(p) = provider {
                for (date, time) in free_slots(db, p, self.id, Some(&id), 3, rng) {
                    out.push(json!({"appointment_id": id, "new_date": date, "new_time": time}));
                }
            }
        }
        // Boundaries: a visit that cannot move; a time the provider does not list; a slot
        // another visit of the provider holds.
        let later = |days| clock::format_date(today() + days);
        if let Some(a) = self.appts.iter().find(|a| !a.is_active()) {
            let id = &a.appointment_id;
            out.push(json!({"appointment_id": id, "new_date": later(8), "new_time": a.time}));
        }
        if let Some(a) = self.appts.iter().find(|a| a.is_active()) {
            let id = &a.appointment_id;
            out.push(json!({"appointment_id": id, "new_date": later(9), "new_time": "12:15"}));
            let mut same_provider = db.appointments.iter().map(|(_, b)| b);
            let taken = same_provider.find(|b| {
                b.is_active() && b.provider_id == a.provider_id && b.appointment_id != *id
            });
            if let Some(b) = taken {
                out.push(json!({"appointment_id": id, "new_date": b.date, "new_time": b.time}));
            }
        }
        out
    }

    fn supply(&self, rng: &mut Rng) -> Vec<Value> {
        let db = self.db;
        let wanted = self.ctx.values("medication");
        let mut out = Vec::new();
        let in_catalogue = |p: &&Prescription| db.medication_suppliers.contains(&p.medication);
        let with_catalogue = |r: &MedicalRecord| r.prescriptions().iter().any(|p| in_catalogue(&p));
        for id in self.record_ids(with_catalogue, rng).into_iter().take(4) {
            let record = db.medical_records.get(&id);
            let mut lines: Vec<_> = record.iter().flat_map(|r| r.prescriptions()).collect();
            lines.sort_by_key(|p| !wanted.contains(&p.medication));
            for p in lines {
                let mut offers: Vec<_> = db
                    .medication_suppliers
                    .get(&p.medication)
                    .into_iter()
                    .flatten()
                    .collect();
                offers.sort_by(|a, b| a.price_usd.total_cmp(&b.price_usd));
                for o in offers.into_iter().take(2) {
                    out.push(supply(
                        &id,
                        &p.medication,
                        &o.company,
                        &o.brand_name,
                        o.price_usd,
                    ));
                }
            }
        }
        // Boundaries: a record without prescriptions; a medication the record lacks.
        if let Some(r) = self.records.iter().find(|r| r.prescriptions().is_empty()) {
            out.push(supply(
                &r.record_id,
                "Metformin",
                "Lakeshore Generics",
                "Metforl",
                0.2,
            ));
        }
        if let Some(r) = self.records.iter().find(|r| !r.prescriptions().is_empty()) {
            out.push(supply(
                &r.record_id,
                "Ezetimibe",
                "Lakeshore Generics",
                "Ezetiol",
                0.8,
            ));
        }
        out
    }
}

type Rng = ChaCha8Rng;

fn book(pid: &str, provider: &str, date: &str, time: &str, kind: &str) -> Value {
    json!({"patient_id": pid, "provider_id": provider, "date": date, "time": time,
        "appointment_type": kind})
}

fn supply(record: &str, medication: &str, company: &str, brand: &str, price: f64) -> Value {
    json!({"record_id": record, "medication": medication, "supplier_company": company,
        "brand_name": brand, "price_usd": price})
}

pub fn propose_calls(
    db: &TelehealthDb,
    tool: &str,
    ctx: &GroundingContext,
    rng: &mut ChaCha8Rng,
) -> Vec<Value> {
    let Some((pid, row)) = ctx
        .user_id
        .as_deref()
        .and_then(|id| Some((id, db.patients.get(id)?)))
    else {
        return Vec::new();
    };
    let (appts, records) = (own_appointments(db, pid), own_records(db, pid));
    let me = Patient {
        db,
        id: pid,
        ctx,
        appts,
        records,
    };
    let id_calls = |key: &str, ids: Vec<String>| -> Vec<Value> {
        ids.into_iter().map(|id| json!({ key: id })).collect()
    };
    let mut out: Vec<Value> = Vec::new();
    match tool {
        "find_patient_by_email" if !row.demographics.email.is_empty() => {
            out.push(json!({"email": row.demographics.email}));
        }
        "find_patient_by_name_dob" => out.push(json!({"first_name": row.name.first_name,
            "last_name": row.name.last_name, "date_of_birth": row.demographics.date_of_birth})),
        "get_patient_details" => out.push(json!({"patient_id": pid})),
        "get_appointment_details" => {
            // Rows the tool cannot print (a missing key) go last.
            let complete =
                |a: &Appointment| a.chief_complaint.is_some() && a.meeting_link.is_some();
            out = id_calls("appointment_id", me.appointment_ids(complete, rng));
            out.extend(id_calls(
                "appointment_id",
                me.appointment_ids(|a| !complete(a), rng),
            ));
        }
        "get_provider_details" => {
            let mut ps = candidate_providers(db, pid, ctx, 3, rng);
            ps.sort_by_key(|p| p.license_number.is_none());
            out = id_calls(
                "provider_id",
                ps.iter().map(|p| p.provider_id.clone()).collect(),
            );
        }
        "get_medical_record" => {
            let documented: BTreeSet<&str> = me
                .records
                .iter()
                .filter_map(|r| r.appointment_id.as_deref())
                .collect();
            let by_appt = me.appointment_ids(|a| documented.contains(&a.appointment_id[..]), rng);
            let (known, other): (Vec<_>, Vec<_>) = by_appt
                .into_iter()
                .partition(|id| ctx.values("appointment_id").contains(id));
            out = id_calls("appointment_id", known);
            out.extend(id_calls("record_id", me.record_ids(|_| true, rng)));
            out.extend(id_calls("appointment_id", other));
            // Boundary: neither id (the tool asks for one).
            if !out.is_empty() {
                out.push(json!({}));
            }
        }
        "get_regimen_options" if db.regimen_plans.contains(pid) => {
            out.push(json!({"patient_id": pid}));
        }
        "list_patient_medical_records" if !me.records.is_empty() => {
            out.push(json!({"patient_id": pid}));
            out.push(json!({"patient_id": pid, "limit": 2}));
        }
        "list_available_providers" => {
            let mut specialties: Vec<String> = Vec::new();
            for p in candidate_providers(db, pid, ctx, 2, rng) {
                if !specialties.contains(&p.specialty) {
                    specialties.push(p.specialty.clone());
                }
            }
            out = id_calls("specialty", specialties);
            // The whole directory is long; only some patients ask for all of it.
            if variant(pid, 12) == 0 {
                out.push(json!({}));
            }
        }
        "list_patient_appointments" if !me.appts.is_empty() => {
            out.push(json!({"patient_id": pid}));
            out.push(json!({"patient_id": pid, "status_filter": "scheduled"}));
        }
        "list_medication_suppliers" => {
            let catalogue = &db.medication_suppliers;
            let own = own_catalogue_meds(db, pid);
            let meds = ranked(ctx, "medication", own, |m| catalogue.contains(m), rng);
            for m in meds.iter().take(3) {
                out.push(json!({"medication": m}));
                if let Some(o) = catalogue.get(m).and_then(|o| o.first()) {
                    out.push(json!({"medication": m, "country_filter": o.country}));
                }
                out.push(json!({"medication": m, "limit": 3}));
            }
        }
        "check_drug_interactions" => {
            let current: Vec<&str> = row
                .medical_history
                .medications
                .iter()
                .map(|m| &m.name[..])
                .collect();
            // Drugs with a documented interaction with what the patient takes come first.
            let touches = |drug: &str, inner: &BTreeMap<String, _>| {
                current.iter().any(|c| inner.contains_key(*c) || *c == drug)
            };
            let table = db.drug_interactions.iter();
            let mut primaries: Vec<(bool, &str)> = table
                .map(|(drug, inner)| (!touches(drug, inner), drug))
                .collect();
            primaries.sort();
            for (_, p) in primaries.iter().take(3).filter(|_| !current.is_empty()) {
                out.push(json!({"primary_medication": p, "current_medications": current}));
            }
        }
        "list_telemetry_devices" => {
            let mut devices = db.telemetry_inventory.iter().map(|(_, d)| d);
            let own = devices.find(|d| d.assigned_to.as_deref() == Some(pid));
            out.push(json!({"status_filter": own.map_or("deployed", |d| &d.status[..])}));
            out.push(json!({"status_filter": "maintenance"}));
            out.push(json!({"status_filter": "available", "limit": 5}));
        }
        "list_telemetry_uploads" => {
            for (device, _, dates) in own_uploads(db, pid) {
                out.push(json!({"device_id": device}));
                if let (Some(a), Some(b)) = (dates.get(2), dates.get(5)) {
                    out.push(json!({"device_id": device, "start_date": a, "end_date": b}));
                }
            }
        }
        "get_telemetry_upload" => {
            for (device, _, dates) in own_uploads(db, pid) {
                let known = |d: &str| dates.iter().any(|x| x == d);
                let dates = ranked(ctx, "date", dates.clone(), known, rng);
                out.extend(
                    dates
                        .iter()
                        .take(3)
                        .map(|d| json!({"device_id": device, "date": d})),
                );
            }
        }
        "schedule_appointment" => out = me.book(rng),
        "reschedule_appointment" => out = me.reschedule(rng),
        "cancel_appointment" => {
            out = id_calls(
                "appointment_id",
                me.appointment_ids(Appointment::is_active, rng),
            );
            // Boundary: a visit that is over or already cancelled.
            if let Some(a) = me.appts.iter().find(|a| !a.is_active()) {
                out.push(json!({"appointment_id": a.appointment_id}));
            }
        }
        "update_prescription_supplier" => out = me.supply(rng),
        "update_medical_record_note" => {
            for id in me.record_ids(|_| true, rng).into_iter().take(3) {
                for k in 0..2 {
                    let note = NOTES[(variant(&id, NOTES.len()) + k) % NOTES.len()];
                    out.push(json!({"record_id": id, "note": note}));
                }
            }
        }
        "calculate" => {
            let plan = &row.insurance.primary;
            let primary = py_float_repr(plan.copay_primary);
            let specialist = py_float_repr(plan.copay_specialist);
            out.push(json!({"expression": format!("{specialist} - {primary}")}));
            out.push(json!({"expression": format!("{specialist} * 3 / 4")}));
        }
        "think" => {
            let thought = "The patient is verified; next, the provider's free slots.";
            out.push(json!({ "thought": thought }));
        }
        "transfer_to_human_support" => {
            let reason = "The patient cannot join video visits: the meeting page does not load.";
            out.push(json!({ "reason": reason }));
        }
        _ => {}
    }
    out
}

// ---------- learning ids from outputs ----------

/// Every substring of `text` that follows `start` up to the first of `ends`.
fn captures<'a>(text: &'a str, start: &str, ends: &[char]) -> Vec<&'a str> {
    text.match_indices(start)
        .filter_map(|(i, _)| {
            let rest = &text[i + start.len()..];
            let end = rest.find(ends).unwrap_or(rest.len());
            (end > 0).then(|| &rest[..end])
        })
        .collect()
}

/// Learn the ids of a successful call: those of its arguments, every appointment, record and
/// provider id its output names, the patient a lookup found, medications the patient has
/// been looking into, and upload dates.
pub fn observe(
    db: &TelehealthDb,
    tool: &str,
    args: &Value,
    output: &str,
    ctx: &mut GroundingContext,
) {
    for key in [
        "patient_id",
        "provider_id",
        "appointment_id",
        "record_id",
        "device_id",
    ] {
        if let Some(v) = args.get(key).and_then(Value::as_str) {
            ctx.learn(key, v);
        }
    }
    if tool.starts_with("find_patient") && db.patients.contains(output) {
        ctx.learn("patient_id", output);
    }
    let id_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    for token in output.split(|c: char| !id_char(c)).filter(|t| t.len() > 3) {
        let tables = [
            ("appointment_id", db.appointments.contains(token)),
            ("record_id", db.medical_records.contains(token)),
            ("provider_id", db.providers.contains(token)),
        ];
        for (key, _) in tables.iter().filter(|(_, named)| *named) {
            ctx.learn(key, token);
        }
    }
    let medications = match tool {
        "list_medication_suppliers" => vec![arg_str(args, "medication")],
        "check_drug_interactions" => vec![arg_str(args, "primary_medication")],
        "get_regimen_options" => captures(output, "\n- ", &['|'])
            .into_iter()
            .map(str::trim)
            .collect(),
        _ => Vec::new(),
    };
    for m in medications {
        ctx.learn("medication", m);
    }
    if tool == "list_telemetry_uploads" {
        for date in captures(output, "\"date\": \"", &['"']) {
            ctx.learn("date", date);
        }
    }
}

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
        "get_appointment_details" | "cancel_appointment" => appointment_vars(db, appt?, &mut vars),
        "reschedule_appointment" => appointment_vars(db, appt?, &mut vars),
        "get_medical_record" => match (record, appt) {
            (Some(r), _) => {
                key = "get_medical_record_by_visit".into();
                vars.insert("visit", record_visit(db, r));
            }
            (None, Some(a)) => appointment_vars(db, a, &mut vars),
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

pub fn internal_ids(_tool: &str, args: &Value) -> Vec<String> {
    ["patient_id", "record_id"]
        .iter()
        .filter_map(|k| args.get(*k)?.as_str())
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
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
        "get_regimen_options" => captures(output, "Option ", &['\n'])
            .into_iter()
            .filter_map(|s| s.split_once(": ").map(|(_, name)| name.to_string()))
            .collect(),
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
        "get_telemetry_upload" => serde_json::from_str::<Value>(output)
            .ok()
            .and_then(|u| u["usage_hours"].as_f64())
            .map(|h| vec![py_float_repr(h)])
            .unwrap_or_default(),
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
