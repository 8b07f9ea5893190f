//! The telecom domain: a carrier's customers, their service plans, devices, billing and
//! support tickets, with the eighteen tools of tau-emotion-bench's telecom environment
//! (12 read, counting calculate and think, and 6 write) and the policy in
//! `policies/telecom.md`.
//!
//! Code map:
//! - `db.rs`: typed rows in the reference's key order, the state, import/export of the
//!   reference's `data/*.json` (`mod.rs`: the `Database` glue).
//! - `tools.rs` + `tools.toml`: tool behaviour (outputs as `json.dumps` prints them) and
//!   specs (`kit::specs`).
//! - `generate.rs`: the deterministic database (500 customers, 15 plans, 19 device models,
//!   240 tickets).
//! - `ground.rs`: grounding proposals and id learning; `policy.rs`: the named policy rules;
//!   `hooks.rs`: user facts, request sentences (`requests.toml`), required outputs and
//!   customer records.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod ground;
pub mod hooks;
mod policy;
pub mod tools;

#[cfg(test)]
mod tests;

pub use db::TelecomDb;

/// The domain's "now": payments are dated today, and the generator places last payments
/// in the month before and next bills in the month after.
pub const SIMULATION_CLOCK: &str = "2025-07-16T10:00:00";

pub struct Telecom;

crate::domain::kit::glue::tau_bench_domain!(Telecom, "telecom", TelecomDb, reference: "tau-emotion-bench", import: db::import);

impl crate::domain::Database for TelecomDb {
    crate::domain::kit::glue::database_tables!(
        customers: customers,
        billing: billing,
        services: services,
        devices: devices,
        support_tickets: tickets,
    );
}

impl crate::domain::Hooks for TelecomDb {
    crate::domain::kit::glue::database_hooks!(
        customers: customers,
        observe: ground::observe,
        required_outputs: hooks::required_outputs,
    );
}
