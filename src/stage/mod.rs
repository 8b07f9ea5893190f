//! The stages, one module each, and their registry (in dependency order).
//!
//! Architecture invariant: a stage reads only artifacts (through `crate::artifact` and its
//! `StageContext`) and project source files it declares; it writes only into its own output
//! directory. It never rewrites another stage's artifact.

pub mod db;
pub mod emotions;
pub mod feelings;
pub mod graphs;
pub mod grounded;
pub mod refined;
pub mod roles;
pub mod rollouts;
pub mod tasks;
pub mod traces;
pub mod trajectories;

use crate::pipeline::Stage;

/// The stage DAG the CLI runs: the registry below, handed to the pipeline.
pub fn dag() -> crate::pipeline::Dag {
    crate::pipeline::Dag::new(registry())
}

/// The registry: one line per stage, in a topological order.
pub fn registry() -> &'static [&'static dyn Stage] {
    static STAGES: &[&dyn Stage] = &[
        &db::DbStage,
        &graphs::GraphsStage,
        &traces::TracesStage,
        &grounded::GroundedStage,
        &refined::RefinedStage,
        &feelings::FeelingsStage,
        &emotions::EmotionsStage,
        &tasks::TasksStage,
        &rollouts::ROLLOUTS,
        &trajectories::TrajectoriesStage,
        &rollouts::EVAL,
    ];
    STAGES
}
