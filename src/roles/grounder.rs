//! The grounder role: a sampled trace (tool names per intent) becomes reference actions
//! that execute on the split's database. The scripted grounder is the kit-driven search
//! (`grounding::ground_trace`: the domain proposes arguments, the search dry-runs them on
//! forks); an endpoint grounder lets a tool-calling model fill the arguments on a fork
//! (`grounding::llm_ground_trace`). Either way only calls that execute and obey the policy
//! advance the trace, so the result replays by construction.

use super::{Call, run_all};
use crate::domain::Environment;
use crate::grounding::{GroundFailure, Grounding, SearchLimits, ground_trace, llm_ground_trace};
use crate::llm::{ChatModel, Prompt, RoleModel};
use crate::parallel::parallel_map;
use crate::seed::{derive_rng, derive_seed};
use rand::RngExt;
use std::sync::Arc;

/// One trace to ground, with the database of its split.
pub struct GroundJob {
    pub env: Arc<dyn Environment>,
    pub domain: String,
    pub trace_id: String,
    pub intents: Vec<Vec<String>>,
}

pub trait Grounder {
    /// The id recorded in each task's `grounder` column.
    fn model_id(&self) -> String;
    /// One grounding per job, in order; `Err` per job is the rejection (its reason, and the
    /// policy rule behind it when one dominates), the outer
    /// `Err` a runtime failure. `seed` is the stage's; each job derives its own streams
    /// from it and its trace id, so results do not depend on order or thread count.
    fn ground(
        &self,
        jobs: &[GroundJob],
        seed: u64,
    ) -> Result<Vec<Result<Grounding, GroundFailure>>, String>;
}

/// The built-in grounder: the bounded search over the domain's proposals.
pub struct ScriptedGrounder {
    pub id: String,
    pub limits: SearchLimits,
}

impl Grounder for ScriptedGrounder {
    fn model_id(&self) -> String {
        self.id.clone()
    }
    fn ground(
        &self,
        jobs: &[GroundJob],
        seed: u64,
    ) -> Result<Vec<Result<Grounding, GroundFailure>>, String> {
        Ok(parallel_map(jobs, |j| {
            ground_trace(
                j.env.as_ref(),
                &j.domain,
                &j.trace_id,
                &j.intents,
                seed,
                &self.limits,
            )
        }))
    }
}

pub struct EndpointGrounder {
    pub model: Arc<dyn ChatModel>,
    /// `prompts/grounder.md`.
    pub prompt: Arc<Prompt>,
}

impl Grounder for EndpointGrounder {
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }
    fn ground(
        &self,
        jobs: &[GroundJob],
        seed: u64,
    ) -> Result<Vec<Result<Grounding, GroundFailure>>, String> {
        let calls: Vec<Call<Result<Grounding, GroundFailure>>> = jobs
            .iter()
            .map(|j| {
                // The customer is drawn from the trace's own stream, as in the scripted search.
                let customers = j.env.customers();
                let mut rng = derive_rng(seed, &["grounded", &j.domain, &j.trace_id]);
                let user = customers
                    .get(rng.random_range(0..customers.len().max(1)))
                    .cloned()
                    .unwrap_or_default();
                let item_seed = derive_seed(seed, &["llm-grounder", &j.trace_id]);
                let grounding = llm_ground_trace(
                    Arc::clone(&self.model),
                    Arc::clone(&j.env),
                    j.intents.clone(),
                    user,
                    item_seed,
                    Arc::clone(&self.prompt),
                );
                Box::pin(async move { grounding.await.map_err(GroundFailure::from) }) as Call<_>
            })
            .collect();
        run_all(calls)
    }
}

/// The grounder a role config opened: scripted (with the stage's search limits) or
/// endpoint-backed (sending `prompt`).
pub fn grounder(model: &RoleModel, limits: SearchLimits, prompt: Arc<Prompt>) -> Box<dyn Grounder> {
    match model {
        RoleModel::Scripted(_) => Box::new(ScriptedGrounder {
            id: model.model_id(),
            limits,
        }),
        RoleModel::Endpoint(m) => Box::new(EndpointGrounder {
            model: Arc::clone(m),
            prompt,
        }),
    }
}
