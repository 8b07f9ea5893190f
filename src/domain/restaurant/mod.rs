//! The restaurant domain: a restaurant's menu, patrons and service tickets (orders for
//! dine-in, takeout or delivery), with the fourteen tools of ToolOrchestra's tau2-style
//! restaurant environment (same names, arguments, result shapes and error strings) and the
//! kit's `think` (15 tools: 9 read, 6 write, the paper's split), and the policy in
//! `policies/restaurant.md`.
//!
//! Code map:
//! - `db.rs`: the typed rows (pydantic field order, `model_dump()` form), the
//!   `RestaurantDb` tables, import of the reference's `db.json` tables (`mod.rs`: the
//!   `Database` glue).
//! - `tools.rs` + `tools.toml`: tool behaviour and specs (`kit::specs`); the price oracle
//!   of item changes and what a cancellation refunds.
//! - `generate.rs`: the evaluation database (200 patrons / 207 dishes / 207 tickets, the
//!   reference's scale) and the training database (1,000 / 207 / 1,564, the paper's), from
//!   `vocabulary.toml`. Unlike the reference's data (about one plate per dish, one
//!   instrument per patron), dishes offer several plates and many patrons save several
//!   instruments, so item swaps and instrument changes can be asked for.
//! - `ground.rs`: grounding proposals and id learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `hooks.rs` + `requests.toml`: user facts, request sentences and the records an agent
//!   can look up (internal ids and required outputs: `tools.toml`).
//!
//! No tool reads a clock and no tool mints ids, so the domain needs neither.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod ground;
mod hooks;
mod policy;
mod tools;

#[cfg(test)]
mod tests;

pub use db::RestaurantDb;

pub struct Restaurant;

crate::domain::kit::glue::tau2_domain!(Restaurant, "restaurant", RestaurantDb);

impl crate::domain::Database for RestaurantDb {
    crate::domain::kit::glue::tau2_database!(tables: [menu_board, patron_registry, service_tickets]);
}

impl crate::domain::Hooks for RestaurantDb {
    crate::domain::kit::glue::database_hooks!();

    /// Patrons who hold a ticket: every write (and every request but a menu question) is
    /// about one, so a patron without tickets is no one a task can be about.
    fn customers(&self) -> Vec<String> {
        self.patron_registry
            .iter()
            .filter(|(_, p)| !p.ticket_log.is_empty())
            .map(|(id, _)| id.to_string())
            .collect()
    }
}
