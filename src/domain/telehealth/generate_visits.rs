//! The clinic's visits: appointments on free bookable times of their providers (ids in
//! the reference's two families, `APPTnnn` / `APPT_tracer_nnn`) and the medical records
//! written for them, with their prescriptions.
//!
//! Architecture invariant: generation is pure — same seed, same database; no clock, no I/O.

use super::db::*;
use super::generate_vocab::{ACTIVE, conditions, pick, today, vocab, words};
use crate::domain::kit::clock::{WEEKDAYS, format_date, parse_date, weekday};
use crate::domain::kit::draw::digits;
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

pub const APPOINTMENTS: usize = 214;
pub const RECORDS: usize = 149;

/// Appointment types a provider of `specialty` books.
fn visit_types(specialty: &str) -> Vec<&'static str> {
    words(match specialty {
        "Primary Care" => "follow_up medication_review routine_checkup sick_visit",
        "Device Coaching" => "device_coaching",
        "Care Coordination" => "care_coordination family_consultation",
        "Psychiatry" => "therapy_session follow_up medication_review",
        _ => "follow_up specialist_consultation medication_review consultation",
    })
}

/// Slots already held: (provider or patient id, date, time).
type Held = BTreeSet<(String, String, String)>;

/// A bookable time of `provider` on a day in `from..=to` that neither the provider nor the
/// patient holds yet.
fn free_slot(
    rng: &mut ChaCha8Rng,
    provider: &Provider,
    (from, to): (i64, i64),
    held: &Held,
    patient: &str,
) -> Option<(String, String)> {
    for _ in 0..60 {
        let day = rng.random_range(from..=to);
        let Some(time) = provider
            .schedule
            .get(WEEKDAYS[weekday(day)])
            .and_then(|times| times.choose(rng))
        else {
            continue;
        };
        let date = format_date(day);
        let key = |who: &str| (who.to_string(), date.clone(), time.clone());
        if !held.contains(&key(&provider.provider_id)) && !held.contains(&key(patient)) {
            return Some((date, time.clone()));
        }
    }
    None
}

/// One appointment for `patient`, or `None` when the drawn provider had no free slot.
fn appointment(
    rng: &mut ChaCha8Rng,
    (patient, conds): &(Patient, Vec<usize>),
    providers: &BTreeMap<String, Provider>,
    held: &mut Held,
) -> Option<Appointment> {
    let condition = conds.choose(rng).map(|&c| &conditions()[c]);
    let roll = rng.random_range(0..100);
    let specialty = match condition {
        Some(c) if roll < 65 => c.specialty,
        Some(c) if roll < 80 && c.device.is_some() => "Device Coaching",
        _ if roll < 88 => "Care Coordination",
        _ => "Primary Care",
    };
    let pool: Vec<&Provider> = providers
        .values()
        .filter(|p| p.specialty == specialty)
        .collect();
    let provider = *pool.choose(rng)?;
    let status = match rng.random_range(0..100) {
        0..=85 => "scheduled",
        86..=92 => "completed",
        93..=97 => "pending_approval",
        _ => "cancelled",
    };
    let t0 = today();
    let window = match status {
        "completed" => (t0 - 90, t0 - 3),
        "cancelled" => (t0 - 30, t0 + 30),
        _ => (t0 + 1, t0 + 56),
    };
    let (date, time) = free_slot(rng, provider, window, held, &patient.patient_id)?;
    if status != "cancelled" {
        for who in [&provider.provider_id, &patient.patient_id] {
            held.insert((who.clone(), date.clone(), time.clone()));
        }
    }
    let plan = &patient.insurance.primary;
    let mut a = Appointment {
        patient_id: patient.patient_id.clone(),
        provider_id: provider.provider_id.clone(),
        date,
        time,
        duration_minutes: 30,
        kind: pick(rng, &visit_types(specialty)).to_string(),
        status: status.into(),
        chief_complaint: Some(condition.map_or("Routine review", |c| c.complaint).into()),
        notes: pick(
            rng,
            &vocab().appointment_notes.split('|').collect::<Vec<_>>(),
        )
        .to_string(),
        insurance_authorization: Some(if status == "pending_approval" {
            "PENDING".to_string()
        } else {
            format!("AUTH{}", digits(rng, 6))
        }),
        copay_amount: if specialty == "Primary Care" {
            plan.copay_primary
        } else {
            plan.copay_specialist
        },
        ..Default::default()
    };
    if status == "cancelled" {
        let reason = pick(rng, &["patient_cancelled", "provider_unavailable"]);
        a.cancellation_reason = Some(reason.to_string());
        a.cancellation_date = Some(format_date(t0 - rng.random_range(2..=20)));
    }
    if status == "completed"
        && let Some(m) = patient.medical_history.medications.first()
    {
        a.prescription_issued = Some(PrescriptionIssued {
            medication: m.name.clone(),
            dosage: m.dosage.clone(),
            frequency: m.frequency.clone(),
            quantity: "30 tablets".into(),
            refills: rng.random_range(0..=3),
        });
    }
    if specialty != "Primary Care" && rng.random_bool(0.05) {
        let gps: Vec<&Provider> = providers
            .values()
            .filter(|p| p.specialty == "Primary Care")
            .collect();
        a.referral_from = gps
            .choose(rng)
            .map(|p| format!("Dr. {} (Primary Care)", p.name.last_name));
    }
    Some(a)
}

pub(super) fn appointments(
    rng: &mut ChaCha8Rng,
    patients: &[(Patient, Vec<usize>)],
    providers: &BTreeMap<String, Provider>,
) -> Vec<Appointment> {
    // Each patient in active care gets one visit; the rest are spread over them.
    let mut counts = vec![1usize; ACTIVE];
    while counts.iter().sum::<usize>() < APPOINTMENTS {
        let i = rng.random_range(0..ACTIVE);
        if counts[i] < 4 {
            counts[i] += 1;
        }
    }
    let mut held = Held::new();
    let mut out = Vec::with_capacity(APPOINTMENTS);
    for (patient, count) in patients.iter().zip(counts) {
        for _ in 0..count {
            // A provider without a free slot is redrawn.
            if let Some(a) = (0..20).find_map(|_| appointment(rng, patient, providers, &mut held)) {
                out.push(a);
            }
        }
    }
    // Ids in date order, in the reference's two families: APPT001..049, then
    // APPT_tracer_nnn ending at 223, so the next booking is APPT224 as there.
    out.sort_by(|a, b| (&a.date, &a.time, &a.patient_id).cmp(&(&b.date, &b.time, &b.patient_id)));
    let first_tracer = 224 - out.len().saturating_sub(49);
    for (i, a) in out.iter_mut().enumerate() {
        a.appointment_id = if i < 49 {
            format!("APPT{:03}", i + 1)
        } else {
            format!("APPT_tracer_{:03}", first_tracer + i - 49)
        };
        a.meeting_link = Some(format!(
            "https://telehealth.healthcenter.com/room/{}",
            a.appointment_id
        ));
    }
    // Two gaps the reference data has too: a visit without a meeting link, one without a
    // chief complaint.
    let mut scheduled = out.iter_mut().filter(|a| a.status == "scheduled");
    if let Some(a) = scheduled.nth(4) {
        a.meeting_link = None;
    }
    if let Some(a) = scheduled.nth(2) {
        a.chief_complaint = None;
    }
    out
}

fn prescription(
    rng: &mut ChaCha8Rng,
    m: &Medication,
    catalogue: &BTreeMap<String, Vec<SupplierOffer>>,
    plain_supplier: bool,
) -> Prescription {
    let mut p = Prescription {
        medication: m.name.clone(),
        dosage: m.dosage.clone(),
        frequency: m.frequency.clone(),
        ..Default::default()
    };
    let offer = catalogue.get(&m.name).and_then(|l| l.choose(rng));
    match (rng.random_range(0..10), offer) {
        (_, Some(o)) if plain_supplier => {
            p.supplier = Some(SupplierChoice::Text(o.company.clone()))
        }
        (0 | 1, _) => {
            p.quantity = Some("30 tablets".into());
            p.refills = Some(rng.random_range(0..=5));
            p.pharmacy = Some(format!(
                "{} Community Pharmacy",
                pick(rng, &words(&vocab().streets))
            ));
        }
        (2..=4, Some(o)) => {
            p.supplier = Some(SupplierChoice::Detail(SupplierDetail {
                company: Some(o.company.clone()),
                brand_name: Some(o.brand_name.clone()),
                price_usd: Some(o.price_usd),
                country: Some(o.country.clone()),
                currency: None,
            }))
        }
        (5, _) => p.duration = Some("90 days".into()),
        _ => {}
    }
    p
}

pub(super) fn records(
    rng: &mut ChaCha8Rng,
    patients: &[(Patient, Vec<usize>)],
    appts: &[Appointment],
    catalogue: &BTreeMap<String, Vec<SupplierOffer>>,
) -> Vec<MedicalRecord> {
    let by_id: BTreeMap<&str, &(Patient, Vec<usize>)> = patients
        .iter()
        .map(|p| (p.0.patient_id.as_str(), p))
        .collect();
    // Completed visits first, then the others in a seeded order; one record per visit.
    let mut chosen: Vec<&Appointment> = appts.iter().filter(|a| a.status == "completed").collect();
    let mut rest: Vec<&Appointment> = appts.iter().filter(|a| a.status != "completed").collect();
    rest.shuffle(rng);
    chosen.extend(rest);
    let soap: Vec<Vec<&str>> = vocab()
        .soap
        .lines()
        .map(|l| l.split('|').collect())
        .collect();
    let t0 = today();
    let mut dates = BTreeSet::new();
    let mut out = Vec::with_capacity(RECORDS);
    for (i, a) in chosen.into_iter().enumerate() {
        if out.len() == RECORDS {
            break;
        }
        let (patient, conds) = by_id[a.patient_id.as_str()];
        let day = parse_date(&a.date)
            .unwrap_or(t0)
            .min(t0 - rng.random_range(1..=40));
        let date = format_date(day);
        // One record per patient and day, so a patient can name a record by its date.
        if !dates.insert((a.patient_id.clone(), date.clone())) {
            continue;
        }
        let condition = conds
            .first()
            .map_or("General health", |&c| conditions()[c].name);
        let note = pick(rng, &soap).clone();
        let meds = &patient.medical_history.medications;
        let take = rng.random_range(1..=2);
        let prescriptions: Vec<Prescription> = meds
            .iter()
            .take(take)
            .map(|m| prescription(rng, m, catalogue, i % 70 == 9))
            .collect();
        out.push(MedicalRecord {
            appointment_id: (i % 50 != 17).then(|| a.appointment_id.clone()),
            patient_id: a.patient_id.clone(),
            provider_id: a.provider_id.clone(),
            date,
            kind: pick(rng, &words(&vocab().record_types)).to_string(),
            subjective: note[0].replace("{c}", condition),
            objective: note[1].into(),
            assessment: note[2].replace("{c}", condition),
            plan: note[3].into(),
            recommendations: (prescriptions.is_empty() || i % 60 == 7).then(|| {
                vec![
                    "Keep a symptom diary until the next visit.".to_string(),
                    "Call the clinic if symptoms get worse.".to_string(),
                ]
            }),
            prescriptions: (!prescriptions.is_empty()).then_some(prescriptions),
            next_appointment: (i % 45 == 5).then(|| format_date(t0 + 60)),
            notes: match rng.random_range(0..10) {
                0 | 1 => None,
                2 => Some(vec![RecordNote {
                    note: "Visit summary sent to the patient portal.".into(),
                }]),
                _ => Some(Vec::new()),
            },
            ..Default::default()
        });
    }
    out.sort_by(|a, b| (&a.date, &a.patient_id).cmp(&(&b.date, &b.patient_id)));
    for (i, r) in out.iter_mut().enumerate() {
        r.record_id = if i < 27 {
            format!("REC{:03}", i + 1)
        } else {
            format!("REC_tracer_{:03}", i - 26)
        };
    }
    out
}
