//! The refiner role: the instruction a simulated customer follows. The scripted refiner
//! keeps the deterministic draft the refinement stage composed from the domain's request
//! sentences; an endpoint refiner rewrites that draft in natural words, keeping every value.

use super::{Call, run_all};
use crate::domain::UserFact;
use crate::llm::{ChatMessage, ChatModel, ChatRequest};
use std::sync::Arc;

/// The LLM refiner's instructions (our own words).
pub const REFINER_PROMPT: &str = "You write the instruction that a simulated customer will \
follow when contacting customer support. You get a draft and the facts the customer knows. \
Rewrite the draft so it reads naturally, in the second person (\"You ...\"), keeping the goals \
in the same order and every concrete value (reservation or order numbers, dates, names, \
places, card endings, amounts) exactly as written. Keep a feasible preference or some natural \
vagueness if the draft has one. Do not add facts, do not mention internal identifiers, do not \
address the agent. Answer with the instruction only.";

/// One task to refine: its draft (or why none could be written), the facts the customer
/// knows, and the request seed.
pub struct RefineJob {
    pub draft: Result<String, String>,
    pub facts: Vec<UserFact>,
    pub seed: u64,
}

pub trait Refiner {
    /// The id recorded in each task's `refiner` column.
    fn model_id(&self) -> String;
    /// One instruction per job, in order; `Err` per job is its rejection reason
    /// (`<kind>: <detail>`), the outer `Err` a runtime failure.
    fn refine(&self, jobs: Vec<RefineJob>) -> Result<Vec<Result<String, String>>, String>;
}

/// The built-in refiner: the draft is the instruction.
pub struct ScriptedRefiner {
    pub id: String,
}

impl Refiner for ScriptedRefiner {
    fn model_id(&self) -> String {
        self.id.clone()
    }
    fn refine(&self, jobs: Vec<RefineJob>) -> Result<Vec<Result<String, String>>, String> {
        Ok(jobs.into_iter().map(|j| j.draft).collect())
    }
}

pub struct EndpointRefiner {
    pub model: Arc<dyn ChatModel>,
}

/// The request the LLM refiner gets for one task.
pub fn refiner_request(draft: &str, facts: &[UserFact], seed: u64) -> ChatRequest {
    let known: Vec<String> = facts.iter().map(|f| format!("- {}", f.text)).collect();
    ChatRequest::new(vec![
        ChatMessage::system(REFINER_PROMPT),
        ChatMessage::user(format!(
            "Draft:\n{draft}\n\nFacts the customer knows:\n{}",
            known.join("\n")
        )),
    ])
    .with_seed(seed)
}

impl Refiner for EndpointRefiner {
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }
    fn refine(&self, jobs: Vec<RefineJob>) -> Result<Vec<Result<String, String>>, String> {
        let calls: Vec<Call<Result<String, String>>> = jobs
            .into_iter()
            .map(|job| {
                let model = Arc::clone(&self.model);
                let req = job
                    .draft
                    .as_ref()
                    .ok()
                    .map(|d| refiner_request(d, &job.facts, job.seed));
                let draft = job.draft;
                Box::pin(async move {
                    let req = req.ok_or(draft.err().unwrap_or_default())?;
                    let r = model
                        .chat(req)
                        .await
                        .map_err(|e| format!("endpoint_error: {e}"))?;
                    Ok(r.message.content.unwrap_or_default().trim().to_string())
                }) as Call<_>
            })
            .collect();
        run_all(calls)
    }
}

/// The refiner a role config opened: scripted or endpoint-backed.
pub fn refiner(model: &crate::llm::RoleModel) -> Box<dyn Refiner> {
    match model {
        crate::llm::RoleModel::Scripted(_) => Box::new(ScriptedRefiner {
            id: model.model_id(),
        }),
        crate::llm::RoleModel::Endpoint(m) => Box::new(EndpointRefiner {
            model: Arc::clone(m),
        }),
    }
}
