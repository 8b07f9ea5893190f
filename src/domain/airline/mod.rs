//! The airline domain (placeholder until its environment lands).

use super::{Domain, DomainError, Environment, Split, ToolSpec};
use std::path::Path;

pub struct Airline;

impl Domain for Airline {
    fn name(&self) -> &'static str {
        "airline"
    }
    fn tool_specs(&self) -> Vec<&'static ToolSpec> {
        Vec::new()
    }
    fn generate(&self, _seed: u64, _split: Split) -> Box<dyn Environment> {
        unimplemented!("airline environment not built yet")
    }
    fn import_tau_bench(&self, _dir: &Path) -> Result<Box<dyn Environment>, DomainError> {
        Err(DomainError::Other("airline import not built yet".into()))
    }
}
