//! The airline domain: book, change and cancel flight reservations (tau-bench's airline,
//! as the authors' tau-emotion-bench ships it).
//!
//! Code map:
//! - `db.rs`: the typed state (users, flights with per-date status, reservations), money in
//!   cents, the free bag allowance and the simulation clock, 2024-05-15 15:00 EST.
//! - `tools.rs`: the 14 tools with tau-bench's names, arguments, outputs and errors.
//! - `generate.rs`: the deterministic synthetic database (500 users, 300 flights, 2,000
//!   reservations); its vocabulary (names, cities, airports) is data in `vocabulary.toml`.
//! - `tau_bench.rs`: import / export of tau-bench's `users.json`, `flights.json`,
//!   `reservations.json`.
//! - `ground.rs`: grounding hooks: call proposals and id learning.
//! - `policy.rs`: the machine-checkable rules of `policies/airline.md`, as named kit rows.
//! - `requests.toml`: the request sentences a customer says for each tool.
//! - `hooks.rs`: refinement hooks: user facts, request sentences, required outputs and the
//!   customer's records (the internal ids are declared in `tools.toml`).
//!
//! Architecture invariant: nothing here knows stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod ground;
mod ground_memory;
mod ground_trips;
mod hooks;
mod policy;
pub mod tau_bench;
pub mod tools;

#[cfg(test)]
mod tests;

pub use db::AirlineDb;

use super::{Database, Hooks};

pub struct Airline;

crate::domain::kit::glue::tau_bench_domain!(Airline, "airline", AirlineDb, reference: "tau-bench", import: tau_bench::import);

impl Database for AirlineDb {
    crate::domain::kit::glue::database_tables!(
        flights: flights,
        reservations: reservations,
        users: users;
        export: tau_bench::export,
    );
}

impl Hooks for AirlineDb {
    crate::domain::kit::glue::database_hooks!(
        customers: users,
        observe: ground::observe,
        required_outputs: hooks::required_outputs,
    );
}
