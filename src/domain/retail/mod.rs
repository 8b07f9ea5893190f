//! The retail domain: an online store's customers, product catalogue and orders, with the
//! sixteen tools of tau-bench's public retail environment (same names, arguments, payloads
//! and error strings) and the policy in `policies/retail.md`.
//!
//! Code map:
//! - `db.rs`: the typed database (users, products, orders); `mod.rs` its `Database` impl.
//! - `tools.rs`: tool specs and behaviour; the calculator is the kit's.
//! - `generate.rs`: the deterministic synthetic database (527 users, 50 products, 1,075 orders).
//! - `tau_bench.rs`: import/export of tau-bench's `users/products/orders.json`.
//! - `ground.rs`: grounding proposals and id learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `requests.toml`: the request sentences a customer says for each tool.
//! - `hooks.rs`: refinement/verification hooks: user facts, request sentences, required
//!   outputs and the records an agent can look up (internal ids: `tools.toml`).
//!
//! New ids: no retail tool creates a row (cancel, modify, return and exchange all edit an
//! existing order or profile in place), so tools never mint ids; generated ids come from the
//! seeded stream, checked unique against every id drawn before.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod ground;
mod hooks;
mod policy;
pub mod tau_bench;
mod tools;

#[cfg(test)]
mod tests;

pub use db::RetailDb;

use super::Ruleset;

/// The simulation clock of this domain. tau-bench's retail logic has no dates, so nothing
/// reads it today; it is fixed so any future time-dependent rule stays deterministic.
pub const SIMULATION_CLOCK: &str = "2025-03-14T10:00:00-05:00";

pub struct Retail;

// The order lifecycle: the authors' harness first (the default), tau-bench's second (its own
// task files need it). Names are [`db::Lifecycle::name`]. One database for both splits (the
// paper reuses tau-bench's retail database).
crate::domain::kit::glue::tau_bench_domain!(Retail, "retail", RetailDb, reference: "tau-emotion-bench (tau-bench as a ruleset)", import: tau_bench::import, rulesets: &[
    Ruleset {
        name: "tau-emotion-bench",
        description: "modifying items keeps an order pending; returns and exchanges accept any 'delivered...' status",
    },
    Ruleset {
        name: "tau-bench",
        description: "modifying items is final ('pending (item modified)'); returns and exchanges need 'delivered'",
    },
]);

impl crate::domain::Database for RetailDb {
    crate::domain::kit::glue::database_tables!(
        users: users,
        products: products,
        orders: orders;
        export: tau_bench::export,
    );
}

impl crate::domain::Hooks for RetailDb {
    crate::domain::kit::glue::database_hooks!(
        customers: users,
        required_outputs: hooks::required_outputs,
    );

    fn ruleset(&self) -> Option<&'static str> {
        Some(self.lifecycle.name())
    }

    fn set_ruleset(&mut self, name: &str) -> Result<(), String> {
        self.lifecycle =
            db::Lifecycle::from_name(name).ok_or_else(|| format!("no ruleset '{name}'"))?;
        Ok(())
    }
}
