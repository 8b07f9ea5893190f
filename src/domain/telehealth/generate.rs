//! The deterministic synthetic clinic at the paper's scale: 239 patients, 114 providers,
//! 214 appointments, 149 medical records, a 24-drug supplier catalogue, 5 interaction
//! tables, regimen plans, 130 monitoring devices and 189 daily uploads, all drawn from a
//! ChaCha8 stream seeded by the caller.
//!
//! Vocabulary and values are our own; the shapes follow the reference data (DOMAINS.md
//! 2.2): most providers work five weekdays with three to five bookable times a day and a
//! few work weekends; appointments are mostly scheduled in the weeks after [`CLOCK`], with
//! some completed, pending approval or cancelled; ids come in the reference's two families
//! (`APPTnnn` / `APPT_tracer_nnn`, largest 223, and `RECnnn` / `REC_tracer_nnn`). The data
//! is consistent: every appointment sits on a bookable time of its provider with no two
//! active ones on a provider's or a patient's slot, copays follow the patient's plan and
//! the provider's specialty, prescriptions name the patient's medications (all in the
//! supplier catalogue), devices with uploads are deployed to patients whose conditions
//! call for them. Patients with appointments also hold most records, plans and devices,
//! so multi-intent tasks find a patient who can carry them. A few rows keep the reference
//! data's gaps on purpose (a provider without a title, some without a license number, an
//! appointment without a meeting link or a chief complaint) so tools meet them as there.
//!
//! Architecture invariant: generation is pure — same seed, same database; no clock, no I/O.

use super::CLOCK;
use super::db::*;
use crate::domain::kit::calc::py_round;
use crate::domain::kit::clock::{WEEKDAYS, format_date, parse_date, weekday};
use crate::domain::kit::draw::digits;
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

pub const PATIENTS: usize = 239;
pub const PROVIDERS: usize = 114;
pub const APPOINTMENTS: usize = 214;
pub const RECORDS: usize = 149;

/// The clinic's vocabulary (`vocabulary.toml`): names, places, conditions, specialties, the
/// supplier catalogue, interactions and note texts, as compact text tables.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Vocabulary {
    first_names: String,
    last_names: String,
    streets: String,
    street_kinds: String,
    cities: String,
    mail_hosts: String,
    relations: String,
    insurers: String,
    allergies: String,
    conditions: String,
    specialties: String,
    times: String,
    languages: String,
    catalogue: String,
    companies: String,
    brand_endings: String,
    interactions: String,
    appointment_notes: String,
    soap: String,
    record_types: String,
}

/// The built-in vocabulary. It is compiled in, so a broken file is a bug of this crate,
/// reported by the domain's tests before any generator runs.
fn vocab() -> &'static Vocabulary {
    static V: LazyLock<Vocabulary> = LazyLock::new(|| {
        toml::from_str(include_str!("vocabulary.toml")).expect("vocabulary.toml parses")
    });
    &V
}

/// (primary care, specialist) copays.
const COPAYS: [(f64, f64); 7] = [
    (10., 35.),
    (15., 40.),
    (20., 45.),
    (25., 50.),
    (30., 55.),
    (20., 60.),
    (35., 65.),
];

/// A parsed line of the vocabulary's conditions.
struct Condition {
    name: &'static str,
    specialty: &'static str,
    meds: Vec<(&'static str, &'static str, &'static str)>,
    device: Option<&'static str>,
    complaint: &'static str,
}

fn conditions() -> &'static [Condition] {
    static PARSED: LazyLock<Vec<Condition>> = LazyLock::new(|| {
        vocab()
            .conditions
            .lines()
            .map(|line| {
                let f: Vec<&str> = line.split('|').collect();
                let meds = f[2]
                    .split(';')
                    .filter(|m| !m.is_empty())
                    .map(|m| {
                        let p: Vec<&str> = m.split(':').collect();
                        (p[0], p[1], p[2])
                    })
                    .collect();
                Condition {
                    name: f[0],
                    specialty: f[1],
                    meds,
                    device: (!f[3].is_empty()).then_some(f[3]),
                    complaint: f[4],
                }
            })
            .collect()
    });
    &PARSED
}

/// `a|b` pairs of a table, split on `sep`.
fn pairs(table: &'static str, sep: char) -> Vec<(&'static str, &'static str)> {
    table
        .split(sep)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .filter_map(|r| r.split_once('|'))
        .collect()
}

fn words(list: &'static str) -> Vec<&'static str> {
    list.split_whitespace().collect()
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[rng.random_range(0..items.len())]
}

fn slug(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

fn today() -> i64 {
    parse_date(CLOCK.today()).unwrap_or_default()
}

fn providers(rng: &mut ChaCha8Rng) -> BTreeMap<String, Provider> {
    let (first, last, times) = (
        words(&vocab().first_names),
        words(&vocab().last_names),
        words(&vocab().times),
    );
    let mut out = BTreeMap::new();
    for line in vocab().specialties.lines() {
        let f: Vec<&str> = line.split('|').collect();
        let (specialty, count, title) = (f[0], f[1].parse::<usize>().unwrap_or(1), f[2]);
        let fee: f64 = f[3].parse().unwrap_or(100.0);
        let target = out.len() + count;
        while out.len() < target {
            // The provider's position drives the few fixed irregularities (weekend work,
            // a missing title or license), so every seed has them.
            let n = out.len();
            let (given, family) = (*pick(rng, &first), *pick(rng, &last));
            let (g, f) = (given.to_lowercase(), family.to_lowercase());
            let mut id = format!("dr_{f}_{}", slug(specialty));
            if out.contains_key(&id) {
                id = format!("dr_{g}_{f}_{}", slug(specialty));
            }
            if out.contains_key(&id) {
                continue;
            }
            let mut schedule = BTreeMap::new();
            for (d, day) in WEEKDAYS.iter().enumerate() {
                let works = match d {
                    0 if n == 17 => false,
                    0..=4 => rng.random_bool(0.93),
                    5 => n % 23 == 5,
                    _ => n % 41 == 8,
                };
                if works {
                    let k = rng.random_range(2..=5);
                    let mut slots: Vec<String> =
                        times.sample(rng, k).map(|t| t.to_string()).collect();
                    slots.sort_unstable();
                    schedule.insert(day.to_string(), slots);
                }
            }
            let mut credentials: Vec<String> = title.split(", ").map(str::to_string).collect();
            if title == "MD" && rng.random_bool(0.3) {
                credentials.push(format!("FA{}", slug(specialty)[..2].to_uppercase()));
            }
            let mut languages = vec!["English".to_string()];
            if rng.random_bool(0.6) {
                languages.push(pick(rng, &words(&vocab().languages)).to_string());
            }
            let prefix: String = title
                .chars()
                .filter(char::is_ascii_uppercase)
                .take(2)
                .collect();
            let provider = Provider {
                provider_id: id.clone(),
                name: ProviderName {
                    first_name: given.into(),
                    last_name: family.into(),
                    title: (n % 57 != 3).then(|| title.to_string()),
                },
                specialty: specialty.into(),
                license_number: (n % 38 != 11).then(|| format!("{prefix}{}", digits(rng, 6))),
                credentials,
                contact: Contact {
                    phone: format!("(555) 2{}-{}", digits(rng, 2), digits(rng, 4)),
                    email: format!("{g}.{f}@clinic.example.org"),
                },
                schedule,
                consultation_fee: fee + 5.0 * f64::from(rng.random_range(0..8u8)),
                languages,
                years_experience: rng.random_range(3..=32),
            };
            out.insert(id, provider);
        }
    }
    out
}

/// Patients in generation order, each with the indices of its conditions. The first
/// [`ACTIVE`] are in active care (they get the appointments, records, plans and devices).
fn patients(rng: &mut ChaCha8Rng) -> Vec<(Patient, Vec<usize>)> {
    let (first, last, streets) = (
        words(&vocab().first_names),
        words(&vocab().last_names),
        words(&vocab().streets),
    );
    let cities: Vec<Vec<&str>> = words(&vocab().cities)
        .iter()
        .map(|c| c.split('|').collect())
        .collect();
    let insurers = pairs(&vocab().insurers, '\n');
    let allergy_list: Vec<&str> = vocab().allergies.split('|').collect();
    let mut seen = BTreeSet::new();
    let mut out: Vec<(Patient, Vec<usize>)> = Vec::with_capacity(PATIENTS);
    while out.len() < PATIENTS {
        let n = out.len();
        let (given, family) = (*pick(rng, &first), *pick(rng, &last));
        let (g, f) = (given.to_lowercase(), family.to_lowercase());
        let id = format!("{g}_{f}_{}", digits(rng, 4));
        let email = format!(
            "{g}.{f}{}@{}",
            digits(rng, 2),
            pick(rng, &words(&vocab().mail_hosts))
        );
        let born = if n % 12 == 7 {
            rng.random_range(2010..=2019)
        } else {
            rng.random_range(1942..=2003)
        };
        let dob = format!(
            "{born}-{:02}-{:02}",
            rng.random_range(1..=12),
            rng.random_range(1..=28)
        );
        // Ids, emails and name + birth date each identify one patient.
        if !seen.insert(id.clone())
            || !seen.insert(email.clone())
            || !seen.insert(format!("{g} {f} {dob}"))
        {
            continue;
        }
        let mut conds: Vec<usize> = (0..conditions().len()).collect();
        conds.shuffle(rng);
        conds.truncate(rng.random_range(1..=3));
        conds.sort_unstable();
        let mut medications: Vec<Medication> = Vec::new();
        for &c in &conds {
            if let Some((name, dosage, frequency)) = conditions()[c].meds.choose(rng)
                && !medications.iter().any(|m| m.name == *name)
            {
                medications.push(Medication {
                    name: name.to_string(),
                    dosage: dosage.to_string(),
                    frequency: frequency.to_string(),
                });
            }
        }
        let city = pick(rng, &cities).clone();
        let (insurer, code) = *pick(rng, &insurers);
        let (copay_primary, copay_specialist) = *pick(rng, &COPAYS);
        let k = rng.random_range(0..=2);
        let mut allergies: Vec<String> =
            allergy_list.sample(rng, k).map(|s| s.to_string()).collect();
        allergies.sort();
        let phone = format!("(555) {}-{}", digits(rng, 3), digits(rng, 4));
        let address1 = format!(
            "{} {} {}",
            rng.random_range(12..=9899),
            pick(rng, &streets),
            pick(rng, &words(&vocab().street_kinds))
        );
        let address2 = if rng.random_bool(0.3) {
            format!(
                "Apt {}{}",
                rng.random_range(1..=12),
                pick(rng, &['A', 'B', 'C'])
            )
        } else {
            String::new()
        };
        let surgeries = (n % 80 == 13).then(|| {
            vec![Surgery {
                date: format!(
                    "{}-{:02}-15",
                    rng.random_range(2005..=2022),
                    rng.random_range(1..=12)
                ),
                procedure: pick(
                    rng,
                    &["Appendectomy", "Knee arthroscopy", "Cholecystectomy"],
                )
                .to_string(),
                surgeon: format!("Dr. {}", pick(rng, &last)),
            }]
        });
        let patient = Patient {
            patient_id: id,
            name: Name {
                first_name: given.into(),
                last_name: family.into(),
            },
            demographics: Demographics {
                date_of_birth: dob,
                gender: match n % 50 {
                    9 => "Non-binary",
                    k if k % 2 == 0 => "Female",
                    _ => "Male",
                }
                .into(),
                phone,
                email,
            },
            address: Address {
                address1,
                address2,
                city: city[0].into(),
                state: city[1].into(),
                zip: format!("{}{}", city[2], digits(rng, 2)),
                country: "USA".into(),
            },
            insurance: Insurance {
                primary: InsurancePlan {
                    provider: insurer.into(),
                    policy_number: format!("{code}{}", digits(rng, 9)),
                    group_number: format!("GRP{}", digits(rng, 4)),
                    copay_primary,
                    copay_specialist,
                },
            },
            medical_history: MedicalHistory {
                conditions: conds
                    .iter()
                    .map(|&c| conditions()[c].name.to_string())
                    .collect(),
                allergies,
                medications,
                surgeries,
            },
            emergency_contact: EmergencyContact {
                name: format!("{} {family}", pick(rng, &first)),
                relationship: pick(rng, &words(&vocab().relations)).to_string(),
                phone: format!("(555) {}-{}", digits(rng, 3), digits(rng, 4)),
            },
        };
        out.push((patient, conds));
    }
    out
}

/// Patients in active care (the first ones generated).
const ACTIVE: usize = 150;

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

fn appointments(
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

fn catalogue(rng: &mut ChaCha8Rng) -> BTreeMap<String, Vec<SupplierOffer>> {
    let companies = pairs(&vocab().companies, '\n');
    words(&vocab().catalogue)
        .iter()
        .enumerate()
        .filter_map(|(i, entry)| {
            let (item, base) = entry.split_once('|')?;
            let base: f64 = base.parse().ok()?;
            let item = item.replace('_', " ");
            let n = if i < 8 {
                rng.random_range(6..=9)
            } else {
                rng.random_range(3..=5)
            };
            let stem: String = item
                .chars()
                .filter(char::is_ascii_alphabetic)
                .take(5)
                .collect();
            let mut endings = words(&vocab().brand_endings);
            endings.shuffle(rng);
            let offers = companies
                .sample(rng, n)
                .zip(endings)
                .map(|((company, country), end)| SupplierOffer {
                    company: company.to_string(),
                    country: country.to_string(),
                    brand_name: format!("{stem}{end}"),
                    price_usd: py_round(base * rng.random_range(0.6..1.6), 2).max(0.01),
                })
                .collect();
            Some((item, offers))
        })
        .collect()
}

fn interactions() -> BTreeMap<String, BTreeMap<String, Interaction>> {
    let mut out: BTreeMap<String, BTreeMap<String, Interaction>> = BTreeMap::new();
    for line in vocab().interactions.lines() {
        let f: Vec<&str> = line.split('|').collect();
        out.entry(f[0].to_string()).or_default().insert(
            f[1].to_string(),
            Interaction {
                severity: f[2].into(),
                risk_score: f[3].parse().unwrap_or(1),
                time_overlap_hours: f[4].parse().unwrap_or(0),
                action: f[5].into(),
                skip: f[6]
                    .split(';')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
                emergency: f[7] == "yes",
            },
        );
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

fn records(
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

fn component(m: &Medication, offer: &SupplierOffer, once_daily: bool) -> RegimenComponent {
    let unit = if m.name.contains("Insulin") {
        "pen"
    } else if m.name.contains("Inhaler") {
        "inhaler"
    } else {
        "tablet"
    };
    let daily = if once_daily || !m.frequency.contains("twice") {
        1
    } else {
        2
    };
    RegimenComponent {
        medication: m.name.clone(),
        dosage: if once_daily {
            format!("{} ER", m.dosage)
        } else {
            m.dosage.clone()
        },
        daily_dose: daily,
        monthly_units: daily * 30,
        unit_type: unit.into(),
        preferred_brand: offer.brand_name.clone(),
        supplier: offer.company.clone(),
        unit_cost_usd: offer.price_usd,
    }
}

fn burden(components: &[RegimenComponent]) -> Option<PillBurden> {
    Some(PillBurden {
        tablets_per_day: components
            .iter()
            .filter(|c| c.unit_type == "tablet")
            .map(|c| c.daily_dose)
            .sum(),
        devices_per_month: components
            .iter()
            .filter(|c| c.unit_type != "tablet")
            .count() as i64,
    })
}

fn regimen_plans(
    rng: &mut ChaCha8Rng,
    patients: &[(Patient, Vec<usize>)],
    catalogue: &BTreeMap<String, Vec<SupplierOffer>>,
) -> BTreeMap<String, RegimenPlan> {
    let mut out = BTreeMap::new();
    for (patient, _) in patients.iter().take(ACTIVE) {
        if out.len() == 40 || !rng.random_bool(0.35) {
            continue;
        }
        let (mut current, mut cheapest, mut simple) = (Vec::new(), Vec::new(), Vec::new());
        for m in &patient.medical_history.medications {
            let Some(offers) = catalogue.get(&m.name).filter(|o| !o.is_empty()) else {
                continue;
            };
            let now = pick(rng, offers);
            let low = offers
                .iter()
                .min_by(|a, b| a.price_usd.total_cmp(&b.price_usd))
                .unwrap_or(now);
            current.push(component(m, now, false));
            cheapest.push(component(m, low, false));
            simple.push(component(m, now, true));
        }
        if current.is_empty() {
            continue;
        }
        let plan = RegimenPlan {
            patient_id: patient.patient_id.clone(),
            current_regimen: CurrentRegimen {
                pill_burden: burden(&current),
                components: current,
                notes: vec![
                    "Doses taken as prescribed per patient report".into(),
                    "Cost is the main concern raised".into(),
                ],
            },
            optimized_regimens: vec![
                OptimizedRegimen {
                    name: "Lowest-cost suppliers".into(),
                    focus: "Same medications from the cheapest catalogue supplier".into(),
                    pill_burden: burden(&cheapest),
                    components: cheapest,
                    synergy_notes: vec![
                        "Same active ingredients and doses".into(),
                        "Largest monthly saving".into(),
                    ],
                },
                OptimizedRegimen {
                    name: "Once-daily schedule".into(),
                    focus: "Extended-release forms taken once a day".into(),
                    pill_burden: burden(&simple),
                    components: simple,
                    synergy_notes: vec!["One daily routine supports adherence".into()],
                },
            ],
        };
        out.insert(patient.patient_id.clone(), plan);
    }
    out
}

const DEVICE_KINDS: [(&str, &str); 4] = [
    ("Cardiac Event Monitor", "CEM"),
    ("Continuous Glucose Monitor", "CGM"),
    ("Home Ventilator", "VNT"),
    ("Wearable EEG", "EEG"),
];

fn device(
    rng: &mut ChaCha8Rng,
    number: u32,
    kind: usize,
    status: &str,
    owner: Option<&str>,
) -> Device {
    let (name, prefix) = DEVICE_KINDS[kind];
    let notes: String = match (status, owner) {
        (_, Some(_)) => "Lent to a patient".into(),
        ("available", _) => "Ready to ship".into(),
        ("inspection", _) => "Awaiting safety check".into(),
        ("shipped", _) => "In transit".into(),
        ("maintenance", _) => "Battery replacement".into(),
        _ => "Not returned; follow up".into(),
    };
    Device {
        device_id: format!("{prefix}-{number}"),
        device_type: name.into(),
        status: status.into(),
        last_audit: format_date(today() - rng.random_range(3..=60)),
        assigned_to: owner.map(str::to_string),
        notes,
    }
}

fn upload(rng: &mut ChaCha8Rng, device_id: &str, date: String) -> Upload {
    if rng.random_bool(0.13) {
        return Upload {
            device_id: device_id.into(),
            date,
            usage_hours: 0.0,
            synced_at: None,
            event: "upload_missing".into(),
            alerts: vec![
                "No upload received".into(),
                "Usage under the compliance minimum".into(),
            ],
        };
    }
    Upload {
        device_id: device_id.into(),
        synced_at: Some(format!("{date}T06:{:02}:00Z", rng.random_range(0..60))),
        date,
        usage_hours: f64::from(rng.random_range(40..96u32)) / 10.0,
        event: "normal".into(),
        alerts: Vec::new(),
    }
}

/// Devices and uploads. `engaged` ranks patients by how much of their care is on file
/// (records, a regimen plan), so the devices that upload go to patients whose other data
/// tasks also touch.
fn telemetry(
    rng: &mut ChaCha8Rng,
    patients: &[(Patient, Vec<usize>)],
    engaged: impl Fn(&str) -> usize,
) -> (Vec<Device>, Vec<Upload>) {
    let mut numbers = [100u32, 300, 500, 700];
    let mut next = |rng: &mut ChaCha8Rng, kind: usize| {
        numbers[kind] += rng.random_range(1..=4);
        numbers[kind]
    };
    let mut devices = Vec::new();
    // Patients in active care whose conditions call for a device have one lent to them.
    let mut active: Vec<&(Patient, Vec<usize>)> = patients.iter().take(ACTIVE).collect();
    active.sort_by_key(|(p, _)| std::cmp::Reverse(engaged(&p.patient_id)));
    for (p, conds) in active {
        let Some(kind) = conds.iter().find_map(|&c| conditions()[c].device) else {
            continue;
        };
        if devices.len() == 48 {
            break;
        }
        let k = DEVICE_KINDS
            .iter()
            .position(|(n, _)| *n == kind)
            .unwrap_or(0);
        let status = if rng.random_bool(0.8) {
            "deployed"
        } else {
            "shipped"
        };
        let number = next(rng, k);
        devices.push(device(rng, number, k, status, Some(&p.patient_id)));
    }
    while devices.len() < 130 {
        let status = match rng.random_range(0..100) {
            0..=59 => "available",
            60..=85 => "inspection",
            86..=96 => "shipped",
            97..=98 => "maintenance",
            _ => "missing_overdue",
        };
        let k = rng.random_range(0..DEVICE_KINDS.len());
        let number = next(rng, k);
        devices.push(device(rng, number, k, status, None));
    }
    // A week of uploads for 27 deployed devices (189 rows, as in the reference).
    let t0 = today();
    let mut uploads = Vec::new();
    for d in devices.iter().filter(|d| d.status == "deployed").take(27) {
        for back in (1..=7).rev() {
            uploads.push(upload(rng, &d.device_id, format_date(t0 - back)));
        }
    }
    (devices, uploads)
}

/// The synthetic clinic for `seed`.
pub fn generate(seed: u64) -> TelehealthDb {
    let mut rng = derive_rng(seed, &["db", "telehealth"]);
    let providers = providers(&mut rng);
    let patients = patients(&mut rng);
    let appts = appointments(&mut rng, &patients, &providers);
    let catalogue = catalogue(&mut rng);
    let records = records(&mut rng, &patients, &appts, &catalogue);
    let plans = regimen_plans(&mut rng, &patients, &catalogue);
    let engaged = |pid: &str| {
        usize::from(records.iter().any(|r| r.patient_id == pid))
            + usize::from(plans.contains_key(pid))
    };
    let (devices, uploads) = telemetry(&mut rng, &patients, engaged);
    TelehealthDb::new(Rows {
        patients: patients
            .into_iter()
            .map(|(p, _)| (p.patient_id.clone(), p))
            .collect(),
        providers,
        appointments: appts
            .into_iter()
            .map(|a| (a.appointment_id.clone(), a))
            .collect(),
        medical_records: records
            .into_iter()
            .map(|r| (r.record_id.clone(), r))
            .collect(),
        medication_suppliers: catalogue,
        drug_interactions: interactions(),
        regimen_plans: plans,
        telemetry_inventory: devices,
        telemetry_uploads: uploads,
    })
}
