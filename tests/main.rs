//! The one integration-test binary: drives the real `tracer` binary on temporary output
//! directories and reads every artifact back with a real Parquet reader (pyarrow).

mod common;

mod chaos;
mod cli_analysis;
mod cli_card;
mod cli_compare;
mod cli_graphs;
mod cli_pipeline;
mod cli_replay;
mod cli_rulesets;
mod cli_shards;
mod cli_trajectories;
mod cost;
mod doc_figures;
mod emotion;
mod endpoint_roles;
mod layers;
mod llm;
mod plan;
mod preflight;
mod real_models;
mod reference;
mod remote;
mod review;
mod schemas;
mod serve;
mod serve_attacks;
mod serve_openenv;
#[cfg(feature = "tls")]
mod tls;

#[path = "support/openai_server.rs"]
mod openai_server;
#[path = "support/test_model.rs"]
mod test_model;
