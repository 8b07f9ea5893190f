//! The deterministic synthetic clinic at the paper's scale: 239 patients, 114 providers,
//! 214 appointments, 149 medical records, a 24-drug supplier catalogue, 5 interaction
//! tables, regimen plans, 130 monitoring devices and 189 daily uploads, all drawn from a
//! ChaCha8 stream seeded by the caller.
//!
//! Vocabulary and values are our own; the shapes follow the reference data (DOMAINS.md
//! 2.2): most providers work five weekdays with three to five bookable times a day and a
//! few work weekends; appointments are mostly scheduled in the weeks after [`CLOCK`](super::CLOCK), with
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

use super::db::*;
use super::generate_devices::telemetry;
use super::generate_medication::{catalogue, interactions, regimen_plans};
pub use super::generate_visits::{APPOINTMENTS, RECORDS};
use super::generate_visits::{appointments, records};
use super::generate_vocab::{conditions, pairs, pick, vocab, words};
use crate::domain::kit::clock::WEEKDAYS;
use crate::domain::kit::draw::digits;
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

pub const PATIENTS: usize = 239;
pub const PROVIDERS: usize = 114;

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

fn slug(s: &str) -> String {
    s.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
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
/// [`ACTIVE`](super::generate_vocab::ACTIVE) are in active care (they get the appointments, records, plans and devices).
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
