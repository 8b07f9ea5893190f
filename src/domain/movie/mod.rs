//! The movie domain: a chain of movie theaters (movies, theaters with auditoriums, seat
//! maps, prices and schedules, and bookings), with the fifteen tools of ToolOrchestra's
//! tau2-style movie environment (same names, arguments, result shapes and error strings)
//! and the kit's `think` (16 tools: 13 read, 3 write, the paper's split), and the policy in
//! `policies/movie.md`.
//!
//! Code map:
//! - `db.rs`: the typed rows (pydantic field order, `model_dump()` form), the `MovieDb`
//!   tables, import of the reference's `db.json` (`mod.rs`: the `Database` glue).
//! - `tools.rs`: tool specs and behaviour; the price oracle ([`tools::quote`]) of bookings
//!   and seat changes; the fixed clock and the `BKG001`..`BKG003` slots.
//! - `generate.rs`: the evaluation database (51 movies / 51 theaters / 51 bookings, the
//!   reference's scale) and the training database (51 / 51 / 1,001 bookings by 752
//!   customers, the paper's), from `vocabulary.toml`.
//! - `ground.rs`: grounding proposals (bookings that pay exactly, seat changes that settle
//!   exactly) and id learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `hooks.rs` + `requests.toml`: user facts, request sentences, required outputs and the
//!   records an agent can look up (internal ids: `tools.toml`).
//!
//! There is no customer table and no authentication: a customer is the person named on
//! bookings (keyed by email) and names their booking by its id.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod ground;
mod hooks;
mod policy;
pub mod tools;

#[cfg(test)]
mod tests;

pub use db::MovieDb;

pub struct Movie;

crate::domain::kit::glue::tau2_domain!(Movie, "movie", MovieDb);

impl crate::domain::Database for MovieDb {
    crate::domain::kit::glue::tau2_database!(tables: [movies, theaters, bookings]);
}

impl crate::domain::Hooks for MovieDb {
    crate::domain::kit::glue::database_hooks!(required_outputs: hooks::required_outputs);

    /// No account to sign in to: a moviegoer names a booking by its id (policies/movie.md).
    fn identifies_customer(&self) -> bool {
        false
    }

    /// The people named on bookings, by email (lower case), in order.
    fn customers(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .bookings
            .iter()
            .map(|(_, b)| b.customer.email.to_lowercase())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}
