//! `tracer compare A B`: read two eval outputs, pair their tasks, print the table.

use super::CliError;
use crate::harness::metrics::DEFAULT_RESAMPLES;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first evaluation: an output directory (its eval/domain=*/part-*.parquet), its
    /// eval/ directory, one domain's directory, a `tracer rollout --out` directory, or an
    /// episodes Parquet file.
    pub a: PathBuf,
    /// The second evaluation, in any of the same forms.
    pub b: PathBuf,
    /// Bootstrap and permutation resamples per figure.
    #[arg(long, default_value_t = DEFAULT_RESAMPLES as u64,
          value_parser = clap::value_parser!(u64).range(1..=crate::config::MAX_RESAMPLES as u64))]
    pub resamples: u64,
    /// Seed of the resamples (default: derived from the run seeds recorded in A and B).
    #[arg(long)]
    pub seed: Option<u64>,
}

pub fn compare(args: CompareArgs) -> Result<(), CliError> {
    let a = crate::compare::load(&args.a)?;
    let b = crate::compare::load(&args.b)?;
    let comparison = crate::compare::compare(&a, &b, args.resamples as usize, args.seed)?;
    out!("{}", crate::compare::comparison_table(&comparison, &a, &b));
    Ok(())
}
