//! Tracer: a DAG of stages that manufactures verified, emotion-conditioned tool-use tasks
//! and agent trajectories as Parquet.
//!
//! Code map (docs/architecture.md says the same in prose):
//! - [`emotion`]: emotion taxonomy, anchors, embedders, classifier and nearest-anchor mapper.
//! - [`domain`]: the domain contract (typed copy-on-write databases, tools, generators,
//!   grounding hooks) and the domain registry; one module per domain.
//! - [`graph`]: tool dependency graphs: load, structural checks, executable edge
//!   demonstration, candidate building, DOT, statistics.
//! - [`artifact`]: record types <-> Arrow <-> Parquet, provenance, atomic writes.
//! - [`pipeline`]: the stage DAG: ordering, staleness, manifests, crash-safe output swap,
//!   the output lock, keyed journals, the shared validation path.
//! - [`stage`]: one module per stage (db, graphs, traces, ...).
//! - [`project`]: the project's data outside a stage's own code: the generated databases,
//!   a domain's policy text, the shard response caches.
//! - [`config`]: stage TOML files -> typed settings; environment variable names.
//! - [`split`]: train or eval, the database a task runs against; [`task`]: a task's
//!   reference actions and user facts; [`message`]: the chat message a role sends and a
//!   transcript holds (leaves every layer may use).
//! - [`seed`]: per-item seed derivation; [`parallel`]: order-preserving parallel map.
//! - [`grounding`]: the grounding search and the LLM grounder (trace -> reference calls).
//! - [`roles`]: the grounder, refiner and task judge as traits, scripted and endpoint
//!   implementations side by side.
//! - [`quality`]: data quality: coherence, knowable ids, language, clean SFT rows, and
//!   the `tracer quality` table.
//! - [`verify`]: task verification (replay, policy, internal ids, information).
//! - [`rollout`]: tasks rolled out under a journal: the one run path of the rollout stages
//!   and `tracer rollout`.
//! - [`harness`]: episodes (agent x user x environment), reward, the offline roles.
//! - [`analysis`]: why episodes fail: fault detectors over replayed trajectories, the judge.
//! - [`replay`]: tau-bench task files and gold-action replay.
//! - [`review`]: manual review decisions (`reviews/<domain>.jsonl`): states, edits, their
//!   verification and kinds; [`review_app`]: `tracer review`, the local web app for them.
//! - [`serve`]: `tracer serve`, the environments and verified tasks as an RL environment
//!   server (reset / step / verify over HTTP, the tools over MCP) on [`http`], a small
//!   HTTP/1.1 server (a leaf, also under `tracer review`).
//! - [`bench`]: the benchmarks behind `make bench`.
//! - [`stats`]: the funnel and other reports of `tracer stats`.
//! - [`plan`]: `tracer plan`, what a run will cost before it runs (from an offline run's
//!   measurements, or extrapolated from a pilot on the real endpoints).
//! - [`compare`]: `tracer compare`, two evaluations paired by task, with the noise of
//!   each difference.
//! - [`card`]: `tracer card`, the Hugging Face dataset card of a fresh run.
//! - [`llm`]: LLM roles (scripted or OpenAI-compatible endpoint), response cache, limits.
//! - [`cost`]: token usage, per-role prices and the dollars between them (a leaf every layer
//!   may use).

pub mod analysis;
pub mod artifact;
pub mod bench;
pub mod card;
pub mod cli;
pub mod compare;
pub mod config;
pub mod cost;
pub mod docs;
pub mod domain;
pub mod emotion;
pub mod graph;
pub mod grounding;
pub mod harness;
pub mod http;
pub mod llm;
pub mod message;
pub mod parallel;
pub mod pipeline;
pub mod plan;
pub mod project;
pub mod quality;
pub mod remote;
pub mod replay;
pub mod review;
pub mod review_app;
pub mod roles;
pub mod rollout;
pub mod scaffold;
pub mod seed;
pub mod serve;
pub mod split;
pub mod stage;
pub mod stats;
pub mod task;
pub mod verify;
