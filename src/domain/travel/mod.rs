//! The travel domain: a travel agency's packages, travelers (with their bookings) and
//! agents, with the thirteen tools of ToolOrchestra's tau2-style travel environment (same
//! names, arguments, result shapes and error strings), its generic `calculate` and
//! `transfer_to_human_agents`, and the kit's `think` (16 tools: 9 read, 7 write, the
//! paper's split), and the policy in `policies/travel.md`.
//!
//! Code map:
//! - `db.rs`: the typed rows (pydantic field order, `model_dump()` form), the `TravelDb`
//!   tables with the reference's scanning order, import of `db.json` (`mod.rs`: the
//!   `Database` glue).
//! - `tools.rs`: tool specs and behaviour; the price oracle; the simulation clock.
//! - `generate.rs`: the evaluation database (87 travelers / 87 packages / 87 agents, the
//!   reference's scale) and the training database (1,000 / 87 / 87, the paper's), from
//!   `vocabulary.toml`: agents, travelers and bookings there, packages in
//!   `generate_packages.rs`, the vocabulary and the draws both share in `generate_vocab.rs`.
//! - `ground.rs`: grounding proposals (paying exactly) and id learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `hooks.rs` + `requests.toml`: user facts, request sentences and the records an agent
//!   can look up (internal ids, internal fields and required outputs: `tools.toml`).
//!
//! New ids: `book_package` takes the first free of `TAU001`..`TAU003`, as the reference
//! does; a fourth booking in one conversation is refused with the reference's error ("Too
//! many bookings created"), grounding never proposes it, and the generator never uses those
//! ids, so the three slots are free at the start of every task.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod generate_packages;
mod generate_vocab;
mod ground;
mod hooks;
mod policy;
mod tools;

#[cfg(test)]
mod tests;

pub use db::TravelDb;
pub use tools::CLOCK;

pub struct Travel;

crate::domain::kit::glue::tau2_domain!(Travel, "travel", TravelDb);

impl crate::domain::Database for TravelDb {
    crate::domain::kit::glue::tau2_database!(tables: [packages, travelers, agents]);
}

impl crate::domain::Hooks for TravelDb {
    crate::domain::kit::glue::database_hooks!(customers: travelers);
}
