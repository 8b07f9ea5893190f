//! The basketball domain: clubs with rosters and arenas, players with contracts, and games
//! with box scores and scoring histories, with the nineteen tools of ToolOrchestra's
//! tau2-style basketball environment (same names, arguments, result shapes and error
//! strings) and the kit's `think` (20 tools: 17 read, 3 write, the paper's split), and the
//! policy in `policies/basketball.md`.
//!
//! Code map:
//! - `db.rs`: the typed rows (pydantic field order, `model_dump()` form), the
//!   `BasketballDb` tables, import of the reference's `db.json` tables (`mod.rs`: the
//!   `Database` glue).
//! - `tools.rs` + `tools.toml`: tool behaviour and specs (`kit::specs`); the status
//!   transition table and the points of each scoring event type.
//! - `generate.rs`: the evaluation database (300 players / 240 clubs / 300 games, the
//!   reference's scale) and the training database (1,000 / 240 / 1,468, the paper's), from
//!   `vocabulary.toml`, with more open games than the reference's data so every write has
//!   something to apply to.
//! - `ground.rs`: grounding proposals and id learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `hooks.rs` + `requests.toml`: user facts, request sentences, required outputs and the
//!   records an agent can look up (internal ids: `tools.toml`).
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

pub use db::BasketballDb;

pub struct Basketball;

crate::domain::kit::glue::tau2_domain!(Basketball, "basketball", BasketballDb);

impl crate::domain::Database for BasketballDb {
    crate::domain::kit::glue::tau2_database!(tables: [clubs, players, games]);
}

impl crate::domain::Hooks for BasketballDb {
    crate::domain::kit::glue::database_hooks!(required_outputs: hooks::required_outputs);

    /// Players (the people the policy authenticates) who are on a club's roster: every
    /// write a task asks for concerns such a player, their club or its games.
    fn customers(&self) -> Vec<String> {
        let rostered: std::collections::BTreeSet<&str> = self
            .clubs
            .iter()
            .flat_map(|(_, c)| c.roster.keys().map(String::as_str))
            .collect();
        self.players
            .keys()
            .filter(|id| rostered.contains(id))
            .map(str::to_string)
            .collect()
    }
}
