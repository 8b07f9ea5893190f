//! The pipeline's model roles as traits, each with its built-in scripted implementation
//! (deterministic, offline) and its endpoint implementation (any OpenAI-compatible chat
//! model) side by side, so a newcomer finds both in one file:
//!
//! - [`Grounder`] (`grounder.rs`): turns a sampled trace into executed reference actions.
//! - [`Refiner`] (`refiner.rs`): turns the template draft into the customer's instruction.
//! - [`Feeler`] (`feeler/`): describes how the customer of a task most likely feels.
//! - [`TaskJudge`] (`judge.rs`): settles verification verdicts the rules leave inconclusive.
//!
//! The episode roles (agent, user simulator) are the harness's `Agent` and `User`
//! (`harness/agent/`, `harness/user.rs`, `harness/endpoint.rs`); the failure-analysis
//! judge is `analysis::judge`.
//!
//! Each trait takes a batch: endpoint implementations run its requests concurrently (the
//! model bounds its own concurrency), scripted ones in parallel on the CPU; results come
//! back in input order. Prompts and request bodies are fixed here, so cached responses keep
//! hitting across runs.
//!
//! Architecture invariant: knows the LLM layer, domains' `Environment`, the grounding search
//! and verification's rejection kinds; nothing of stages, artifacts' files or the CLI.

pub mod feeler;
pub mod grounder;
pub mod judge;
pub mod refiner;

pub use feeler::{EndpointFeeler, FeelJob, Feeler, FeelerInput, ScriptedFeeler};
pub use grounder::{EndpointGrounder, GroundJob, Grounder, ScriptedGrounder};
pub use judge::{EndpointJudge, JudgeJob, ScriptedJudge, TaskJudge};
pub use refiner::{EndpointRefiner, RefineJob, Refiner, ScriptedRefiner};

use std::future::Future;
use std::pin::Pin;

/// One role request in flight.
pub type Call<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Run `calls` concurrently on a runtime (the model bounds its own concurrency) and return
/// the results in input order.
pub fn run_all<T: Send + 'static>(futures: Vec<Call<T>>) -> Result<Vec<T>, String> {
    let rt = crate::llm::runtime()?;
    rt.block_on(async move {
        let mut set = tokio::task::JoinSet::new();
        for (i, f) in futures.into_iter().enumerate() {
            set.spawn(async move { (i, f.await) });
        }
        let mut out: Vec<Option<T>> = (0..set.len()).map(|_| None).collect();
        while let Some(done) = set.join_next().await {
            let (i, v) = done.map_err(|e| e.to_string())?;
            out[i] = Some(v);
        }
        Ok(out.into_iter().flatten().collect())
    })
}
