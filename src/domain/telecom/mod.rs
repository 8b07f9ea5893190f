//! The telecom domain: a carrier's customers, their service plans, devices, billing and
//! support tickets, with the eighteen tools of tau-emotion-bench's telecom environment
//! (12 read, counting calculate and think, and 6 write) and the policy in
//! `policies/telecom.md`.
//!
//! Code map:
//! - `db.rs`: typed rows in the reference's key order, the state, import/export of the
//!   reference's `data/*.json`.
//! - `tools.rs`: tool specs and behaviour (outputs as `json.dumps` prints them).
//! - `generate.rs`: the deterministic database (500 customers, 15 plans, 19 device models,
//!   240 tickets).
//! - `hooks.rs`: grounding proposals, id learning, the named policy rules, user facts,
//!   request sentences (`requests.toml`), required outputs and customer records.
//!
//! Architecture invariant: knows nothing about stages, artifacts, LLMs or the CLI.

pub mod db;
pub mod generate;
pub mod hooks;
pub mod tools;

#[cfg(test)]
mod tests;

pub use db::TelecomDb;

use super::{
    Database, Domain, DomainError, Environment, GroundingContext, PolicyViolation, Split,
    StateHash, Tool, ToolSpec, UserFact,
};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The domain's "now": payments are dated today, and the generator places last payments
/// in the month before and next bills in the month after.
pub const SIMULATION_CLOCK: &str = "2025-07-16T10:00:00";

pub struct Telecom;

impl Domain for Telecom {
    fn name(&self) -> &'static str {
        "telecom"
    }

    fn tool_specs(&self) -> Vec<&'static ToolSpec> {
        tools::all().iter().map(|t| &t.spec).collect()
    }

    /// One database for every split, as the reference keeps one for its test and train
    /// tasks.
    fn generate(&self, seed: u64, _split: Split) -> Box<dyn Environment> {
        Box::new(generate::generate(seed))
    }

    fn import_tau_bench(&self, dir: &Path) -> Result<Box<dyn Environment>, DomainError> {
        Ok(Box::new(db::import(dir)?))
    }
}

impl Database for TelecomDb {
    fn tools() -> &'static [Tool<Self>] {
        tools::all()
    }

    fn state_hash(&self) -> StateHash {
        TelecomDb::state_hash(self)
    }

    fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)> {
        TelecomDb::tables(self)
    }

    fn to_tau_bench(&self) -> BTreeMap<String, Value> {
        self.export()
    }

    fn customers(&self) -> Vec<String> {
        self.customers.keys().map(str::to_string).collect()
    }

    fn propose_calls(
        &self,
        tool: &str,
        ctx: &GroundingContext,
        rng: &mut ChaCha8Rng,
    ) -> Vec<Value> {
        hooks::propose_calls(self, tool, ctx, rng)
    }

    fn observe(&self, tool: &str, args: &Value, output: &str, ctx: &mut GroundingContext) {
        hooks::observe(self, tool, args, output, ctx)
    }

    fn check_policy(&self, tool: &str, args: &Value) -> Result<(), PolicyViolation> {
        hooks::check_policy(self, tool, args)
    }

    fn user_facts(&self, user_id: &str) -> Vec<UserFact> {
        hooks::user_facts(self, user_id)
    }

    fn describe_request(&self, tool: &str, args: &Value, _output: &str) -> Option<String> {
        hooks::describe_request(self, tool, args)
    }

    fn required_outputs(&self, tool: &str, _args: &Value, output: &str) -> Vec<String> {
        hooks::required_outputs(tool, output)
    }

    fn customer_records(&self, user_id: &str) -> Vec<String> {
        hooks::customer_records(self, user_id)
    }
}
