//! The skeleton domain: a small lending library — members, the books of its catalogue and
//! the loans between them — with seven tools of its own (5 read, 2 write) and the kit's
//! `transfer_to_human_agents` and `think`, and the policy in `policies/skeleton.md`.
//!
//! `tracer scaffold domain <name>` copies this folder to `src/domain/<name>/` with the
//! names replaced, so a new domain starts from code that compiles and passes the
//! conformance suite (which runs over this skeleton in the crate's own tests). Replace the
//! library with the new domain file by file; keep the file names and the functions the
//! glue macros call (docs/adding-a-domain.md).
//!
//! Code map:
//! - `db.rs`: the typed rows, the `SkeletonDb` tables, import of a `db.json`.
//! - `tools.rs` + `tools.toml`: tool behaviour and specs (`kit::specs`), with what the
//!   pipeline must know of their values (`internal`, `internal_fields`, `tells`).
//! - `generate.rs` + `vocabulary.toml`: the evaluation and training databases.
//! - `ground.rs`: grounding proposals and id learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `hooks.rs` + `requests.toml`: user facts, request sentences, required outputs and the
//!   records an agent can look up (internal ids and fields, and what a read tells where a
//!   pointer selects it: `tools.toml`).
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

pub use db::SkeletonDb;

pub struct Skeleton;

crate::domain::kit::glue::tau2_domain!(Skeleton, "skeleton", SkeletonDb, reference: "none");

impl crate::domain::Database for SkeletonDb {
    crate::domain::kit::glue::tau2_database!(tables: [members, books, loans]);
}

impl crate::domain::Hooks for SkeletonDb {
    crate::domain::kit::glue::database_hooks!(required_outputs: hooks::required_outputs);

    /// Members with at least one loan: every request is about a loan or a book.
    fn customers(&self) -> Vec<String> {
        self.members
            .iter()
            .filter(|(_, m)| !m.loans.is_empty())
            .map(|(id, _)| id.to_string())
            .collect()
    }
}
