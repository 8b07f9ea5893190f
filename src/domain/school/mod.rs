//! The school domain: a university registrar's courses, students and registrations, with
//! the eleven tools of ToolOrchestra's tau2-style school environment (same names,
//! arguments, result shapes and error strings), the kit's `think` and
//! `transfer_to_human_agents` (13 tools: 9 read, 4 write, the paper's split), and the
//! policy in `policies/school.md`.
//!
//! Code map:
//! - `db.rs`: the typed rows (pydantic field order, `model_dump()` form), the `SchoolDb`
//!   tables, import of the reference's `db.json` tables (`mod.rs`: the
//!   `Database` glue).
//! - `tools.rs`: tool specs and behaviour; the tuition oracle; the simulation clock.
//! - `generate.rs`: the evaluation database (120 students / 120 courses / 120
//!   registrations, the reference's scale) and the training database (1,000 / 120 / 1,345,
//!   the paper's), from `vocabulary.toml`: students and registrations there, courses in
//!   `generate_courses.rs`, the vocabulary and the draws both share in `generate_vocab.rs`.
//! - `ground.rs`: grounding proposals (paying exactly) and id learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `hooks.rs` + `requests.toml`: user facts, request sentences and the records an agent
//!   can look up (internal ids, internal fields and required outputs: `tools.toml`).
//!
//! New ids: `register_courses` takes the first free of `REG001`..`REG003`, as the
//! reference does (its tasks refer to those ids). Every task replays on a fresh copy of the
//! database, so a conversation can create three registrations; a fourth is refused with the
//! reference's error ("Too many registrations created in this session"), grounding never
//! proposes it, and a trace that needs four registrations is rejected at grounding. The
//! generator never uses `REG` ids, so the three slots are always free at the start.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod generate_courses;
mod generate_vocab;
mod ground;
mod hooks;
mod policy;
mod tools;

#[cfg(test)]
mod tests;

pub use db::SchoolDb;
pub use tools::CLOCK;

pub struct School;

crate::domain::kit::glue::tau2_domain!(School, "school", SchoolDb);

impl crate::domain::Database for SchoolDb {
    crate::domain::kit::glue::tau2_database!(tables: [courses, students, registrations]);
}

impl crate::domain::Hooks for SchoolDb {
    crate::domain::kit::glue::database_hooks!(customers: students);
}
