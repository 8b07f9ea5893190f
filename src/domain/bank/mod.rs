//! The bank domain: clients with their accounts and cards (nested as the reference nests
//! them), transactions, loans and beneficiaries, with the nineteen tools of ToolOrchestra's
//! tau2-style bank environment (same names, arguments, result shapes and error strings),
//! its generic `calculate` and `transfer_to_human_agents`, and the kit's `think` (22 tools:
//! 13 read, 9 write, the paper's split), and the policy in `policies/bank.md`.
//!
//! Code map:
//! - `db.rs`: the typed rows (pydantic field order, `model_dump()` form), the `BankDb`
//!   tables with the reference's scanning order, import of `db.json`; `mod.rs` the `Database`
//!   glue.
//! - `tools.rs`: tool specs and behaviour; transaction ids; the simulation clock.
//! - `generate.rs`: the evaluation database (297 clients / 297 loans / 297 beneficiaries /
//!   297 transactions, the reference's scale) and the training database (1,000 / 768 / 951
//!   / 1,000, the paper's), from `vocabulary.toml`: loans, beneficiaries and transactions
//!   there, clients with their accounts and cards in `generate_clients.rs`, the vocabulary
//!   and the draws both share in `generate_vocab.rs`.
//! - `ground.rs`: grounding proposals (loan payments of exactly the installment due) and id
//!   learning.
//! - `policy.rs`: the machine-checkable policy rules, as named kit rows per write tool.
//! - `hooks.rs` + `requests.toml`: user facts, request sentences, required outputs and the
//!   records an agent can look up (internal ids: `tools.toml`).
//!
//! The reference stamps `datetime.utcnow()`; every stamp here is the simulation clock's
//! ([`CLOCK`], 2025-10-20T09:00:00Z), so replays and state hashes are deterministic.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
mod generate_clients;
mod generate_vocab;
mod ground;
mod hooks;
mod policy;
mod tools;

#[cfg(test)]
mod tests;

pub use db::BankDb;
pub use tools::CLOCK;

pub struct Bank;

crate::domain::kit::glue::tau2_domain!(Bank, "bank", BankDb);

impl crate::domain::Database for BankDb {
    crate::domain::kit::glue::tau2_database!(tables: [clients, transactions, loans, beneficiaries]);
}

impl crate::domain::Hooks for BankDb {
    crate::domain::kit::glue::database_hooks!(required_outputs: hooks::required_outputs);

    /// Clients with at least one account (every request is about one of their entities).
    fn customers(&self) -> Vec<String> {
        self.clients
            .iter()
            .filter(|(_, c)| !c.accounts.is_empty())
            .map(|(id, _)| id.to_string())
            .collect()
    }
}
