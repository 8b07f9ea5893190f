//! The telehealth database: typed rows mirroring tau-emotion-bench's telehealth data files
//! (seven JSON objects keyed by id or drug name, and the two telemetry lists), the
//! copy-on-write tables that hold them, and import/export of that directory.
//!
//! Field names, nesting and optional keys follow the reference files, so an imported
//! directory exports back to the same keys and values: keys a row may lack are `Option`s
//! skipped when absent, keys that may be `null` are always written, and `voucher_id` (absent
//! on seeded rows, `null` or a string on booked ones) keeps all three states. Field order
//! follows the reference's dict order, so `json.dumps`-style outputs print alike. Unknown
//! keys are refused on import (naming the file and row), so nothing is silently dropped. The two
//! list files become tables keyed by a zero-padded position, which keeps their order.
//!
//! Architecture invariant: data and file formats only; tool behaviour lives in `tools.rs`,
//! grounding and refinement hooks in `hooks.rs`.

use crate::domain::{DomainError, StateHash, Table, parse_table, read_json_file};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The data files, by stem, in the order the reference's loader reads them.
pub const FILES: [&str; 9] = [
    "patients",
    "providers",
    "appointments",
    "medical_records",
    "medication_suppliers",
    "drug_interactions",
    "telemetry_inventory",
    "telemetry_uploads",
    "regimen_plans",
];

/// `Some(None)` for a key present as `null` (with `#[serde(default)]`, `None` when absent).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Name {
    pub first_name: String,
    pub last_name: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demographics {
    pub date_of_birth: String,
    pub gender: String,
    pub phone: String,
    pub email: String,
}

pub use crate::domain::kit::rows::StreetAddress as Address;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsurancePlan {
    pub provider: String,
    pub policy_number: String,
    pub group_number: String,
    pub copay_primary: f64,
    pub copay_specialist: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Insurance {
    pub primary: InsurancePlan,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Medication {
    pub name: String,
    pub dosage: String,
    pub frequency: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Surgery {
    pub date: String,
    pub procedure: String,
    pub surgeon: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MedicalHistory {
    pub conditions: Vec<String>,
    pub allergies: Vec<String>,
    pub medications: Vec<Medication>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surgeries: Option<Vec<Surgery>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmergencyContact {
    pub name: String,
    pub relationship: String,
    pub phone: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patient {
    pub patient_id: String,
    pub name: Name,
    pub demographics: Demographics,
    pub address: Address,
    pub insurance: Insurance,
    pub medical_history: MedicalHistory,
    pub emergency_contact: EmergencyContact,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderName {
    pub first_name: String,
    pub last_name: String,
    /// The reference prints "Dr." where a provider has no title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    pub phone: String,
    pub email: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    pub provider_id: String,
    pub name: ProviderName,
    pub specialty: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license_number: Option<String>,
    pub credentials: Vec<String>,
    pub contact: Contact,
    /// Lower-case weekday -> bookable `HH:MM` slots. Key order is the files' (sorted) order.
    pub schedule: BTreeMap<String, Vec<String>>,
    pub consultation_fee: f64,
    pub languages: Vec<String>,
    pub years_experience: i64,
}

impl Provider {
    /// "Dr. Lewis" / "MD Lewis": how listings of the reference name a provider by title.
    pub fn titled_last(&self) -> String {
        format!(
            "{} {}",
            self.name.title.as_deref().unwrap_or("Dr."),
            self.name.last_name
        )
    }

    pub fn full_name(&self) -> String {
        format!("{} {}", self.name.first_name, self.name.last_name)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrescriptionIssued {
    pub medication: String,
    pub dosage: String,
    pub frequency: String,
    pub quantity: String,
    pub refills: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Appointment {
    pub appointment_id: String,
    pub patient_id: String,
    pub provider_id: String,
    pub date: String,
    pub time: String,
    pub duration_minutes: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chief_complaint: Option<String>,
    pub notes: String,
    /// `null` on appointments booked without insurance.
    pub insurance_authorization: Option<String>,
    pub copay_amount: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meeting_link: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_method: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub voucher_id: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insurance_billed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prescription_issued: Option<PrescriptionIssued>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub referral_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancellation_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancellation_date: Option<String>,
}

impl Appointment {
    /// Scheduled or pending approval: the only appointments the policy lets an agent act on.
    pub fn is_active(&self) -> bool {
        matches!(self.status.as_str(), "scheduled" | "pending_approval")
    }
}

/// A supplier chosen for a prescription. Two rows of the reference name the supplier as
/// plain text; the rest (and every update) store the details.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SupplierChoice {
    Detail(SupplierDetail),
    Text(String),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupplierDetail {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prescription {
    pub medication: String,
    pub dosage: String,
    pub frequency: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refills: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pharmacy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supplier: Option<SupplierChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_cost_usd: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordNote {
    pub note: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MedicalRecord {
    pub record_id: String,
    /// `null` for records written outside a visit.
    pub appointment_id: Option<String>,
    pub patient_id: String,
    pub provider_id: String,
    pub date: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vital_signs: Option<BTreeMap<String, String>>,
    pub subjective: String,
    pub objective: String,
    pub assessment: String,
    pub plan: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab_orders: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prescriptions: Option<Vec<Prescription>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendations: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_appointment: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<RecordNote>>,
}

impl MedicalRecord {
    pub fn prescriptions(&self) -> &[Prescription] {
        self.prescriptions.as_deref().unwrap_or(&[])
    }
}

/// One supplier's offer for a medication (`medication_suppliers.json`: name -> offers).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupplierOffer {
    pub company: String,
    pub country: String,
    pub brand_name: String,
    pub price_usd: f64,
}

/// One documented interaction (`drug_interactions.json`: drug -> other drug -> this).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    pub severity: String,
    pub risk_score: i64,
    pub time_overlap_hours: i64,
    pub action: String,
    pub skip: Vec<String>,
    pub emergency: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegimenComponent {
    pub medication: String,
    pub dosage: String,
    pub daily_dose: i64,
    pub monthly_units: i64,
    pub unit_type: String,
    pub preferred_brand: String,
    pub supplier: String,
    pub unit_cost_usd: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PillBurden {
    pub tablets_per_day: i64,
    pub devices_per_month: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurrentRegimen {
    pub components: Vec<RegimenComponent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pill_burden: Option<PillBurden>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimizedRegimen {
    pub name: String,
    pub focus: String,
    pub components: Vec<RegimenComponent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pill_burden: Option<PillBurden>,
    pub synergy_notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegimenPlan {
    pub patient_id: String,
    pub current_regimen: CurrentRegimen,
    pub optimized_regimens: Vec<OptimizedRegimen>,
}

/// A remote-monitoring device of the clinic's inventory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub device_id: String,
    pub device_type: String,
    pub status: String,
    pub last_audit: String,
    /// The patient the device is lent to, if any.
    pub assigned_to: Option<String>,
    pub notes: String,
}

/// One day's upload (or missing upload) of a device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upload {
    pub device_id: String,
    pub date: String,
    pub usage_hours: f64,
    pub synced_at: Option<String>,
    pub event: String,
    pub alerts: Vec<String>,
}

/// The whole telehealth state.
#[derive(Clone)]
pub struct TelehealthDb {
    pub patients: Table<Patient>,
    pub providers: Table<Provider>,
    pub appointments: Table<Appointment>,
    pub medical_records: Table<MedicalRecord>,
    pub medication_suppliers: Table<Vec<SupplierOffer>>,
    pub drug_interactions: Table<BTreeMap<String, Interaction>>,
    pub regimen_plans: Table<RegimenPlan>,
    /// Keyed by zero-padded position in the list file.
    pub telemetry_inventory: Table<Device>,
    /// Keyed by zero-padded position in the list file.
    pub telemetry_uploads: Table<Upload>,
}

/// The key of the `i`-th element of a list file.
pub fn position_key(i: usize) -> String {
    format!("{i:06}")
}

/// The rows of every table, as the reference files hold them.
pub struct Rows {
    pub patients: BTreeMap<String, Patient>,
    pub providers: BTreeMap<String, Provider>,
    pub appointments: BTreeMap<String, Appointment>,
    pub medical_records: BTreeMap<String, MedicalRecord>,
    pub medication_suppliers: BTreeMap<String, Vec<SupplierOffer>>,
    pub drug_interactions: BTreeMap<String, BTreeMap<String, Interaction>>,
    pub regimen_plans: BTreeMap<String, RegimenPlan>,
    pub telemetry_inventory: Vec<Device>,
    pub telemetry_uploads: Vec<Upload>,
}

impl TelehealthDb {
    pub fn new(rows: Rows) -> Self {
        fn listed<T>(items: Vec<T>) -> BTreeMap<String, T> {
            let keyed = items.into_iter().enumerate();
            keyed.map(|(i, x)| (position_key(i), x)).collect()
        }
        TelehealthDb {
            patients: Table::new("patients", rows.patients),
            providers: Table::new("providers", rows.providers),
            appointments: Table::new("appointments", rows.appointments),
            medical_records: Table::new("medical_records", rows.medical_records),
            medication_suppliers: Table::new("medication_suppliers", rows.medication_suppliers),
            drug_interactions: Table::new("drug_interactions", rows.drug_interactions),
            regimen_plans: Table::new("regimen_plans", rows.regimen_plans),
            telemetry_inventory: Table::new(
                "telemetry_inventory",
                listed(rows.telemetry_inventory),
            ),
            telemetry_uploads: Table::new("telemetry_uploads", listed(rows.telemetry_uploads)),
        }
    }

    pub fn hash(&self) -> StateHash {
        [
            self.patients.state_hash(),
            self.providers.state_hash(),
            self.appointments.state_hash(),
            self.medical_records.state_hash(),
            self.medication_suppliers.state_hash(),
            self.drug_interactions.state_hash(),
            self.regimen_plans.state_hash(),
            self.telemetry_inventory.state_hash(),
            self.telemetry_uploads.state_hash(),
        ]
        .into_iter()
        .fold(StateHash::default(), StateHash::combine)
    }

    /// Every table's rows as JSON, in [`FILES`] order.
    fn json_rows(&self) -> [Vec<(String, Value)>; 9] {
        [
            self.patients.to_json_rows(),
            self.providers.to_json_rows(),
            self.appointments.to_json_rows(),
            self.medical_records.to_json_rows(),
            self.medication_suppliers.to_json_rows(),
            self.drug_interactions.to_json_rows(),
            self.telemetry_inventory.to_json_rows(),
            self.telemetry_uploads.to_json_rows(),
            self.regimen_plans.to_json_rows(),
        ]
    }

    /// Rows as (table, key -> JSON object) for Parquet; a drug's supplier list or
    /// interaction map is wrapped in an object (`suppliers` / `interactions`).
    pub fn json_tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)> {
        let wrap = |field: &str, rows: Vec<(String, Value)>| -> Vec<(String, Value)> {
            let one = |v: Value| Value::Object(Map::from_iter([(field.to_string(), v)]));
            rows.into_iter().map(|(k, v)| (k, one(v))).collect()
        };
        FILES
            .into_iter()
            .zip(self.json_rows())
            .map(|(stem, rows)| match stem {
                "medication_suppliers" => (stem, wrap("suppliers", rows)),
                "drug_interactions" => (stem, wrap("interactions", rows)),
                _ => (stem, rows),
            })
            .collect()
    }

    /// The reference's data files: stem -> JSON (objects keyed by id or drug; the two
    /// telemetry files as lists).
    pub fn export(&self) -> BTreeMap<String, Value> {
        FILES
            .into_iter()
            .zip(self.json_rows())
            .map(|(stem, rows)| {
                let file = if stem.starts_with("telemetry_") {
                    Value::Array(rows.into_iter().map(|(_, v)| v).collect())
                } else {
                    Value::Object(rows.into_iter().collect())
                };
                (stem.to_string(), file)
            })
            .collect()
    }
}

fn import_error(dir: &Path, stem: &str, message: String) -> DomainError {
    DomainError::Import {
        path: dir.join(format!("{stem}.json")).display().to_string(),
        message,
    }
}

/// A list file (`telemetry_*.json`): typed elements, naming the bad position on error.
fn parse_list<T: serde::de::DeserializeOwned>(
    dir: &Path,
    stem: &str,
) -> Result<Vec<T>, DomainError> {
    let Value::Array(items) = read_json_file(dir, stem)? else {
        return Err(import_error(dir, stem, "expected a JSON list".into()));
    };
    let parse = |(i, v)| serde_json::from_value(v).map_err(|e| format!("element {i}: {e}"));
    items
        .into_iter()
        .enumerate()
        .map(parse)
        .collect::<Result<_, _>>()
        .map_err(|e| import_error(dir, stem, e))
}

/// Rows as (key, the id the row carries, the patient it names): the id must equal the key
/// and the patient must exist.
fn check_rows<'a>(
    dir: &Path,
    stem: &str,
    rows: impl Iterator<Item = (&'a String, &'a str, Option<&'a str>)>,
    patients: &BTreeMap<String, Patient>,
) -> Result<(), DomainError> {
    for (key, id, patient) in rows {
        let message = if key != id {
            format!("row '{key}': id '{id}' differs from its key")
        } else if let Some(p) = patient.filter(|p| !patients.contains_key(*p)) {
            format!("row '{key}': unknown patient_id '{p}'")
        } else {
            continue;
        };
        return Err(import_error(dir, stem, message));
    }
    Ok(())
}

/// Read a reference data directory. Keyed rows must carry their key as their id, and
/// appointments, records and plans must name a patient that exists, so tools never meet a
/// dangling id they could not explain.
pub fn import(dir: &Path) -> Result<TelehealthDb, DomainError> {
    let rows = Rows {
        patients: parse_table(dir, "patients")?,
        providers: parse_table(dir, "providers")?,
        appointments: parse_table(dir, "appointments")?,
        medical_records: parse_table(dir, "medical_records")?,
        medication_suppliers: parse_table(dir, "medication_suppliers")?,
        drug_interactions: parse_table(dir, "drug_interactions")?,
        regimen_plans: parse_table(dir, "regimen_plans")?,
        telemetry_inventory: parse_list(dir, "telemetry_inventory")?,
        telemetry_uploads: parse_list(dir, "telemetry_uploads")?,
    };
    let p = &rows.patients;
    check_rows(
        dir,
        "patients",
        p.iter().map(|(k, x)| (k, x.patient_id.as_str(), None)),
        p,
    )?;
    let providers = rows
        .providers
        .iter()
        .map(|(k, x)| (k, x.provider_id.as_str(), None));
    check_rows(dir, "providers", providers, p)?;
    let appts = rows.appointments.iter();
    let appts = appts.map(|(k, a)| (k, a.appointment_id.as_str(), Some(a.patient_id.as_str())));
    check_rows(dir, "appointments", appts, p)?;
    let records = rows.medical_records.iter();
    let records = records.map(|(k, r)| (k, r.record_id.as_str(), Some(r.patient_id.as_str())));
    check_rows(dir, "medical_records", records, p)?;
    let plans = rows
        .regimen_plans
        .iter()
        .map(|(k, x)| (k, x.patient_id.as_str(), None));
    check_rows(dir, "regimen_plans", plans, p)?;
    Ok(TelehealthDb::new(rows))
}

/// Today on the domain's simulation clock, as a day number.
pub fn today() -> i64 {
    crate::domain::kit::clock::parse_date(super::CLOCK.today()).unwrap_or_default()
}
