//! The feeler role: per task, a free-text description of how the customer most likely
//! feels, written from the user context and the requested actions only (the feeler cannot
//! see the database: a [`FeelerInput`] holds plain strings and intent tags).
//!
//! The scripted feeler reads what the customer asks for the way the paper's feeler does —
//! every requested action and the customer's own words — and never a tool's name: each
//! requested tool maps, through its domain's tool specs, to its [`Intent`] tag (cancel,
//! return, change, book, report, pay, lookup, ...), so any registered domain works without
//! changes here. The kinds of request lean the emotion family (a return towards disgust, a
//! payment towards fear), cues in the instruction ("cancelled by the airline", "passed
//! away", "no rush", "double-check", "again") lean the family and decide urgency and trust;
//! half of each family draw is spread evenly, so all 22 emotions and all 27 behaviour
//! combinations occur in every domain while the mix still follows the requests. The cause
//! names what the customer is doing in domain-neutral words; only a cue in the customer's
//! words lets it speak of something that happened (a fault, a loss, an occasion). Sentences
//! are third person with singular verbs for the customer and plural ones for "they".
//! The endpoint feeler asks a chat model for the same two or three sentences.
//!
//! The role (its input, trait, both implementations and the endpoint's request) is here;
//! the scripted feeler's reading of a task is `reading.rs`, its words `words.rs`, and its
//! draws of the feeling and its labels `scripted.rs`.

mod reading;
mod scripted;
mod words;

use super::{Call, run_all};
use crate::domain::Intent;
use crate::llm::{ChatMessage, ChatModel, ChatRequest, Prompt};
use crate::seed::{derive_rng, derive_seed};
use std::sync::Arc;

#[cfg(test)]
pub(crate) use reading::cue_words;
pub use scripted::{ScriptedFeeling, scripted_feeling, scripted_feeling_labelled};

/// Everything the feeler may know: who the customer says they are and what they ask for.
#[derive(Clone, Debug, PartialEq)]
pub struct FeelerInput {
    /// The user instruction (goals, context, preferences).
    pub instruction: String,
    /// Tool names of the requested actions, in order (what the customer wants done).
    pub requested_tools: Vec<String>,
    /// The intent of each requested tool (from its domain's tool specs), in order.
    pub intents: Vec<Intent>,
}

/// One task to describe: what the feeler may know, and the task's domain and id (the
/// request seed and the scripted feeler's draws derive from them).
pub struct FeelJob {
    pub input: FeelerInput,
    pub domain: String,
    pub task_id: String,
}

pub trait Feeler {
    /// The id recorded with the stage's summary (`scripted` or the endpoint's model).
    fn model_id(&self) -> String;
    /// One feeling per job, in order; `Err` per job is that request's failure, the outer
    /// `Err` a runtime failure.
    fn feel(&self, jobs: Vec<FeelJob>) -> Result<Vec<Result<String, String>>, String>;
}

/// The built-in feeler: [`scripted_feeling`] with draws seeded per domain and task.
pub struct ScriptedFeeler {
    pub id: String,
    pub seed: u64,
}

impl Feeler for ScriptedFeeler {
    fn model_id(&self) -> String {
        self.id.clone()
    }
    fn feel(&self, jobs: Vec<FeelJob>) -> Result<Vec<Result<String, String>>, String> {
        Ok(jobs
            .iter()
            .map(|j| {
                let mut rng = derive_rng(self.seed, &["feelings", &j.domain, &j.task_id]);
                Ok(scripted_feeling(&j.input, &mut rng))
            })
            .collect())
    }
}

pub struct EndpointFeeler {
    pub model: Arc<dyn ChatModel>,
    pub seed: u64,
    /// `prompts/feeler.md`.
    pub prompt: Arc<Prompt>,
}

/// The request the LLM feeler gets for one task of `domain`.
pub fn feeler_request(
    prompt: &Prompt,
    domain: &str,
    input: &FeelerInput,
    seed: u64,
) -> ChatRequest {
    let actions: Vec<String> = input
        .requested_tools
        .iter()
        .zip(&input.intents)
        .map(|(t, i)| format!("{t} ({})", i.as_str()))
        .collect();
    let mut messages = prompt.messages(Some(domain));
    messages.push(ChatMessage::user(format!(
        "What the customer wants:\n{}\n\nRequested actions: {}",
        input.instruction,
        actions.join(", ")
    )));
    ChatRequest::new(messages).with_seed(seed)
}

/// Why a feeling cannot be used as it is: labels instead of a description (the mapper must
/// read a person, not a category it was handed), or markup.
pub fn feeling_problem(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    for label in [
        "emotion:",
        "politeness:",
        "urgency:",
        "trust:",
        "emotion family",
        "<think>",
        "**",
        "\n- ",
        "\n# ",
    ] {
        if lower.contains(label) || lower.starts_with(label.trim_start_matches('\n')) {
            return Some(format!(
                "the feeling carries labels or markup (\"{}\") instead of a description",
                label.trim()
            ));
        }
    }
    None
}

/// Asks of one feeling before it errors.
const FEEL_ASKS: usize = 3;

/// One feeler request with its checks: an empty or cut answer, or one carrying labels, is
/// asked again with the next seed, up to [`FEEL_ASKS`] times; then it is the item's error
/// (a model seeded as before answers a rerun the same, so the asks are spent here).
async fn feel_one(model: Arc<dyn ChatModel>, req: ChatRequest) -> Result<String, String> {
    let mut req = req;
    let mut problem = String::new();
    for attempt in 0..FEEL_ASKS {
        if attempt > 0 {
            let seed = req.sampling.seed.unwrap_or(0).wrapping_add(1);
            req = req.with_seed(seed);
        }
        let r = model.chat(req.clone()).await.map_err(|e| e.to_string())?;
        let text = r
            .message
            .content
            .clone()
            .unwrap_or_default()
            .trim()
            .to_string();
        match r.incomplete().or_else(|| feeling_problem(&text)) {
            None => return Ok(text),
            Some(p) => problem = p,
        }
    }
    Err(format!(
        "unusable_answer: {problem} (asked {FEEL_ASKS} times)"
    ))
}

impl Feeler for EndpointFeeler {
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }
    fn feel(&self, jobs: Vec<FeelJob>) -> Result<Vec<Result<String, String>>, String> {
        let calls: Vec<Call<Result<String, String>>> = jobs
            .iter()
            .map(|j| {
                let model = Arc::clone(&self.model);
                let req = feeler_request(
                    &self.prompt,
                    &j.domain,
                    &j.input,
                    derive_seed(self.seed, &["feelings", &j.task_id]),
                );
                Box::pin(feel_one(model, req)) as Call<_>
            })
            .collect();
        run_all(calls)
    }
}

/// The feeler a role config opened: scripted or endpoint-backed (sending `prompt`); `seed`
/// is the run's.
pub fn feeler(model: &crate::llm::RoleModel, seed: u64, prompt: Arc<Prompt>) -> Box<dyn Feeler> {
    match model {
        crate::llm::RoleModel::Scripted(_) => Box::new(ScriptedFeeler {
            id: model.model_id(),
            seed,
        }),
        crate::llm::RoleModel::Endpoint(m) => Box::new(EndpointFeeler {
            model: Arc::clone(m),
            seed,
            prompt,
        }),
    }
}

/// The feeler's view of a task: its instruction and its actions' tools and intents.
/// A tool its domain does not list is an error naming the task and the tool.
pub fn feeler_input(task: &crate::artifact::TaskRecord) -> Result<FeelerInput, String> {
    let domain = crate::domain::find(&task.domain).map_err(|e| e.to_string())?;
    let specs = domain.tool_specs();
    let mut input = FeelerInput {
        instruction: task.instruction.clone().unwrap_or_default(),
        requested_tools: Vec::new(),
        intents: Vec::new(),
    };
    for a in &task.actions {
        let name = a.name.as_str();
        let spec = specs.iter().find(|s| s.name == name).ok_or_else(|| {
            format!(
                "task {}: tool '{name}' is not a {} tool",
                task.task_id, task.domain
            )
        })?;
        input.requested_tools.push(name.to_string());
        input.intents.push(spec.intent);
    }
    Ok(input)
}

#[cfg(test)]
mod tests;
