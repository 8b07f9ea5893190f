//! The telehealth domain: a virtual clinic's patients, providers and their weekly schedules,
//! appointments, medical records with prescriptions, a medication supplier catalogue, drug
//! interactions, regimen plans and remote-monitoring devices, with the 23 tools of
//! tau-emotion-bench's telehealth environment (same names, arguments, texts and error
//! strings) and the policy in `policies/telehealth.md`.
//!
//! Code map:
//! - `db.rs`: typed rows of the reference's nine data files, the tables, import/export.
//! - `tools.rs`: tool specs and behaviour (the calculator is the kit's); the tools of kind
//!   `write` in `tools_write.rs`, their answer texts (`outputs.toml`) in `outputs.rs`.
//! - `generate.rs`: the deterministic synthetic clinic (239 patients, 114 providers, 214
//!   appointments, 149 records, telemetry): providers and patients, and the whole database
//!   assembled; the other tables' generators beside it (`generate_visits.rs`: appointments
//!   and records; `generate_medication.rs`: suppliers, interactions, regimen plans;
//!   `generate_devices.rs`: devices and uploads), and what they all share in
//!   `generate_vocab.rs` (the vocabulary and drawing helpers).
//! - `ground.rs`: grounding proposals and id learning; `policy.rs`: the named policy rules;
//!   `hooks.rs`: user facts, request sentences (`requests.toml`), required outputs,
//!   customer records (internal ids: `tools.toml`).
//!
//! New ids: `schedule_appointment` mints `APPT{n:03d}` with `n` one past the largest number
//! of `APPTnnn` and `APPT_tracer_nnn` keys, and `AUTH{n:06d}` when insurance is billed,
//! as the reference does (the reference database gives APPT224).
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod generate_devices;
mod generate_medication;
mod generate_visits;
mod generate_vocab;
mod ground;
mod hooks;
mod outputs;
mod policy;
mod tools;
mod tools_write;

#[cfg(test)]
mod tests;

pub use db::TelehealthDb;

use super::kit::clock::SimClock;
use super::{Database, Hooks, StateHash, Tool};
use serde_json::Value;
use std::collections::BTreeMap;

/// The clinic's "now": a Monday morning. Generated visits lie around it, proposals book
/// after it, and `cancel_appointment` stamps its date where the reference reads the wall
/// clock.
pub const CLOCK: SimClock = SimClock::new("2025-12-01T09:00:00");

pub struct Telehealth;

crate::domain::kit::glue::tau_bench_domain!(Telehealth, "telehealth", TelehealthDb, reference: "tau-emotion-bench", import: db::import);

impl Database for TelehealthDb {
    fn tools() -> &'static [Tool<Self>] {
        tools::all()
    }

    fn state_hash(&self) -> StateHash {
        self.hash()
    }

    fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)> {
        self.json_tables()
    }

    fn to_tau_bench(&self) -> BTreeMap<String, Value> {
        self.export()
    }
}

impl Hooks for TelehealthDb {
    crate::domain::kit::glue::database_hooks!(
        customers: patients,
        observe: ground::observe,
        required_outputs: hooks::required_outputs,
    );
}
