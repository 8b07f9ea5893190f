//! Tracer: a DAG of stages that manufactures verified, emotion-conditioned tool-use tasks
//! and agent trajectories as Parquet.
//!
//! Code map (the README's Architecture section says the same in prose):
//! - [`domain`]: the domain contract (typed databases, tools, generators) and the registry.

pub mod domain;
