//! The clinic's remote-monitoring devices and their daily uploads: devices lent to
//! patients whose conditions call for one, the rest in stock, and a week of uploads for
//! some deployed ones.
//!
//! Architecture invariant: generation is pure — same seed, same database; no clock, no I/O.

use super::db::*;
use super::generate_vocab::{ACTIVE, conditions, today};
use crate::domain::kit::clock::format_date;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

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
pub(super) fn telemetry(
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
