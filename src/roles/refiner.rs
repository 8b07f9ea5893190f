//! The refiner role: the instruction a simulated customer follows. The scripted refiner
//! keeps the deterministic draft the refinement stage composed from the domain's request
//! sentences; an endpoint refiner rewrites that draft in natural words, keeping every value.
//!
//! A model's answer is checked where it arrives: the stage hands in a checker that applies
//! every gate the task meets later (`verify::check_instruction`). An answer the checker
//! refuses is asked again once, with the refusal's reason in the conversation; an empty
//! answer or one cut at the token cap is asked again once with another seed. What becomes of
//! each job is a [`Refined`]: the caller decides whether two refusals fall back to the draft
//! or drop the task, and an endpoint failure is errored, never a rejection.

use super::{Call, run_all};
use crate::domain::UserFact;
use crate::llm::{ChatMessage, ChatModel, ChatRequest, Prompt};
use std::sync::Arc;

/// One task to refine: its draft (or why none could be written), the facts the customer
/// knows, its domain (which examples of the prompt it is sent) and the request seed.
pub struct RefineJob {
    pub draft: Result<String, String>,
    pub facts: Vec<UserFact>,
    pub domain: String,
    pub seed: u64,
}

/// What became of one job.
#[derive(Clone, Debug, PartialEq)]
pub enum Refined {
    /// An instruction that passed the checker (`retried`: on the second ask).
    Answer { text: String, retried: bool },
    /// Two answers refused by the checker, or two that were unusable (empty, cut at the
    /// token cap); the reasons, in order. The task falls back to its draft or is dropped.
    Refused(Vec<String>),
    /// No draft to refine: why (`<kind>: <detail>`).
    NoDraft(String),
    /// The endpoint failed after its own retries: not the task's fault, so never a
    /// rejection (the item is asked again on a rerun).
    Errored(String),
}

/// Checks job `i`'s instruction; `Err` is the reason, as the model will read it.
pub type Checker = dyn Fn(usize, &str) -> Result<(), String> + Send + Sync;

pub trait Refiner {
    /// The id recorded in each task's `refiner` column.
    fn model_id(&self) -> String;
    /// One outcome per job, in order; the outer `Err` is a runtime failure.
    fn refine(&self, jobs: Vec<RefineJob>, check: Arc<Checker>) -> Result<Vec<Refined>, String>;
}

/// The built-in refiner: the draft is the instruction (the stage checks drafts itself).
pub struct ScriptedRefiner {
    pub id: String,
}

impl Refiner for ScriptedRefiner {
    fn model_id(&self) -> String {
        self.id.clone()
    }
    fn refine(&self, jobs: Vec<RefineJob>, _: Arc<Checker>) -> Result<Vec<Refined>, String> {
        Ok(jobs
            .into_iter()
            .map(|j| match j.draft {
                Ok(text) => Refined::Answer {
                    text,
                    retried: false,
                },
                Err(why) => Refined::NoDraft(why),
            })
            .collect())
    }
}

pub struct EndpointRefiner {
    pub model: Arc<dyn ChatModel>,
    pub prompt: Arc<Prompt>,
}

/// The request the LLM refiner gets for one task: the prompt (with its examples for the
/// task's domain), then the draft and the facts.
pub fn refiner_request(
    prompt: &Prompt,
    domain: &str,
    draft: &str,
    facts: &[UserFact],
    seed: u64,
) -> ChatRequest {
    let known: Vec<String> = facts.iter().map(|f| format!("- {}", f.text)).collect();
    let mut messages = prompt.messages(Some(domain));
    messages.push(ChatMessage::user(format!(
        "Draft:\n{draft}\n\nFacts the customer knows:\n{}",
        known.join("\n")
    )));
    ChatRequest::new(messages).with_seed(seed)
}

/// What the model is told when its answer was refused.
pub fn refusal_note(reason: &str) -> String {
    format!(
        "An automatic check refused that instruction: {reason}. Write the instruction again, \
         following every rule, and answer with the instruction only."
    )
}

/// The text of an answer, or why it cannot be used (empty, cut at the token cap).
async fn ask(model: &dyn ChatModel, req: ChatRequest) -> Result<Result<String, String>, String> {
    let r = model.chat(req).await.map_err(|e| e.to_string())?;
    Ok(match r.incomplete() {
        Some(why) => Err(why),
        None => Ok(r.message.content.unwrap_or_default().trim().to_string()),
    })
}

/// One job's loop: ask; an unusable answer is asked once more with another seed; a refused
/// answer once more with the reason.
async fn refine_one(
    model: Arc<dyn ChatModel>,
    first: ChatRequest,
    check: impl Fn(&str) -> Result<(), String>,
) -> Refined {
    let mut req = first;
    let mut refusals: Vec<String> = Vec::new();
    let mut unusable: Option<String> = None;
    for _ in 0..3 {
        let text = match ask(model.as_ref(), req.clone()).await {
            Err(e) => return Refined::Errored(format!("endpoint_error: {e}")),
            Ok(Err(why)) => {
                if unusable.is_some() {
                    // The draft is known to pass: a model that twice answers nothing
                    // usable (a deterministic one would on every rerun) leaves it.
                    refusals.push(format!("unusable_answer: {why} (asked twice)"));
                    return Refined::Refused(refusals);
                }
                unusable = Some(why);
                let seed = req.sampling.seed.unwrap_or(0).wrapping_add(1);
                req = req.with_seed(seed);
                continue;
            }
            Ok(Ok(text)) => text,
        };
        match check(&text) {
            Ok(()) => {
                return Refined::Answer {
                    text,
                    retried: !refusals.is_empty(),
                };
            }
            Err(reason) => {
                refusals.push(reason.clone());
                if refusals.len() == 2 {
                    return Refined::Refused(refusals);
                }
                req.messages.push(ChatMessage::assistant(text));
                req.messages.push(ChatMessage::user(refusal_note(&reason)));
            }
        }
    }
    // Three asks: an unusable answer, then two more that were each unusable or refused once.
    if refusals.is_empty() {
        refusals.push("unusable_answer: asked three times".to_string());
    }
    Refined::Refused(refusals)
}

impl Refiner for EndpointRefiner {
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }
    fn refine(&self, jobs: Vec<RefineJob>, check: Arc<Checker>) -> Result<Vec<Refined>, String> {
        let calls: Vec<Call<Refined>> = jobs
            .into_iter()
            .enumerate()
            .map(|(i, job)| {
                let model = Arc::clone(&self.model);
                let check = Arc::clone(&check);
                match job.draft {
                    Err(why) => Box::pin(async move { Refined::NoDraft(why) }) as Call<_>,
                    Ok(draft) => {
                        let req = refiner_request(
                            &self.prompt,
                            &job.domain,
                            &draft,
                            &job.facts,
                            job.seed,
                        );
                        Box::pin(refine_one(model, req, move |text| check(i, text))) as Call<_>
                    }
                }
            })
            .collect();
        run_all(calls)
    }
}

/// The refiner a role config opened: scripted or endpoint-backed (sending `prompt`).
pub fn refiner(model: &crate::llm::RoleModel, prompt: Arc<Prompt>) -> Box<dyn Refiner> {
    match model {
        crate::llm::RoleModel::Scripted(_) => Box::new(ScriptedRefiner {
            id: model.model_id(),
        }),
        crate::llm::RoleModel::Endpoint(m) => Box::new(EndpointRefiner {
            model: Arc::clone(m),
            prompt,
        }),
    }
}
