//! The one integration-test binary: drives the real `tracer` binary on temporary output
//! directories and reads every artifact back with a real Parquet reader (pyarrow).

mod common;

mod cli_graphs;
mod cli_pipeline;
mod cli_replay;
mod cli_rulesets;
mod cli_trajectories;
mod emotion;
mod endpoint_roles;
mod llm;
mod reference;

#[path = "support/openai_server.rs"]
mod openai_server;
