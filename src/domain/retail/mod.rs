//! The retail domain (placeholder until its environment lands).

use super::{Domain, DomainError, Environment, Split, ToolSpec};
use std::path::Path;

pub struct Retail;

impl Domain for Retail {
    fn name(&self) -> &'static str {
        "retail"
    }
    fn tool_specs(&self) -> Vec<&'static ToolSpec> {
        Vec::new()
    }
    fn generate(&self, _seed: u64, _split: Split) -> Box<dyn Environment> {
        unimplemented!("retail environment not built yet")
    }
    fn import_tau_bench(&self, _dir: &Path) -> Result<Box<dyn Environment>, DomainError> {
        Err(DomainError::Other("retail import not built yet".into()))
    }
}
