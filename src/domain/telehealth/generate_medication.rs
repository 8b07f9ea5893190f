//! The clinic's medication tables: the supplier catalogue, the drug-interaction tables
//! and the regimen plans (the current regimen and its cheaper and simpler alternatives).
//!
//! Architecture invariant: generation is pure — same seed, same database; no clock, no I/O.

use super::db::*;
use super::generate_vocab::{ACTIVE, pairs, pick, vocab, words};
use crate::domain::kit::calc::py_round;
use rand::RngExt;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

pub(super) fn catalogue(rng: &mut ChaCha8Rng) -> BTreeMap<String, Vec<SupplierOffer>> {
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

pub(super) fn interactions() -> BTreeMap<String, BTreeMap<String, Interaction>> {
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

pub(super) fn regimen_plans(
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
