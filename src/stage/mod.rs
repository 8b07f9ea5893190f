//! The stages, one module each, and their registry (in dependency order).
//!
//! Architecture invariant: a stage reads only artifacts (through `crate::artifact` and its
//! `StageContext`) and project source files it declares; it writes only into its own output
//! directory. It never rewrites another stage's artifact.

pub mod db;
pub mod graphs;
pub mod grounded;
pub mod refined;
pub mod tasks;
pub mod traces;

use crate::pipeline::Stage;

pub fn registry() -> &'static [&'static dyn Stage] {
    static STAGES: &[&dyn Stage] = &[
        &db::DbStage,
        &graphs::GraphsStage,
        &traces::TracesStage,
        &grounded::GroundedStage,
        &refined::RefinedStage,
        &tasks::TasksStage,
    ];
    STAGES
}
