//! Grounding for telehealth. Proposals act on the authenticated patient's own entities:
//! their appointments (only scheduled or pending approval ones for changes), their records
//! and prescriptions, their lent devices, and free bookable slots of providers for new or
//! moved visits. Ids an earlier call revealed come first ([`propose::ranked`]). A few write
//! proposals at the end of a list are boundary calls the policy refuses (a completed visit,
//! a time the provider does not work): every consumer filters by `check_policy`, and the
//! differential test's sampler, which does not, uses them to exercise the tools' refusals.
//! `observe` learns the ids a successful call reveals.
//!
//! Architecture invariant: reads the state only; never mutates it or calls tools.

use super::db::{Appointment, MedicalRecord, Prescription, Provider, TelehealthDb, today};
use crate::domain::GroundingContext;
use crate::domain::kit::clock;
use crate::domain::kit::propose::{ranked, shuffled};
use crate::domain::kit::pyjson::py_float_repr;
use crate::domain::kit::text::{arg_str, variant};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Notes a patient asks to have added to a record.
const NOTES: [&str; 4] = [
    "Patient asked for a copy of this visit summary.",
    "Patient compared supplier prices before the change.",
    "Patient confirmed the medication list is current.",
    "Patient requested that their caregiver be copied on updates.",
];

/// Days after the clock in which proposals book or move visits.
const HORIZON: i64 = 28;

// ---------- the patient's entities ----------

pub(super) fn own_appointments<'a>(db: &'a TelehealthDb, pid: &str) -> Vec<&'a Appointment> {
    db.appointments
        .iter()
        .map(|(_, a)| a)
        .filter(|a| a.patient_id == pid)
        .collect()
}

pub(super) fn own_records<'a>(db: &'a TelehealthDb, pid: &str) -> Vec<&'a MedicalRecord> {
    db.medical_records
        .iter()
        .map(|(_, r)| r)
        .filter(|r| r.patient_id == pid)
        .collect()
}

/// The patient's devices that have uploads: (id, type, upload dates).
pub(super) fn own_uploads(db: &TelehealthDb, pid: &str) -> Vec<(String, String, Vec<String>)> {
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
pub(super) fn captures<'a>(text: &'a str, start: &str, ends: &[char]) -> Vec<&'a str> {
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
