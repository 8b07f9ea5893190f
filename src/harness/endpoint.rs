//! Endpoint-backed agent and user roles: the harness's `Agent` / `User` over any
//! OpenAI-compatible chat model from the LLM layer. The agent gets the domain policy as its
//! system prompt and the domain's tools; the user simulator gets our own rules
//! (`prompts/user.md`), the task instruction and (for emotion-conditioned runs) the emotion
//! instruction — never labels.
//!
//! An answer that is empty or cut at the token cap (a thinking model that spent its
//! `max_tokens` thinking) is never passed on as a turn: the request is asked once more with
//! another seed, and a second such answer ends the episode as an endpoint error (errored,
//! left out of the scores and of the training data, asked again on a rerun).

use super::{Agent, BoxFuture, HarnessError, Usage, User};
use crate::llm::{ChatMessage, ChatModel, ChatRequest, ChatResponse, LlmError, Prompt};
use serde_json::Value;
use std::sync::Arc;

/// An agent's LLM error as the harness counts it: a malformed answer is the agent's fault,
/// an overflowing conversation ends the episode as `context_exceeded`, everything else
/// (a server without a tool-call parser included) is infrastructure.
fn to_harness(e: LlmError) -> HarnessError {
    match e {
        LlmError::Malformed { .. } => HarnessError::Agent(e.to_string()),
        other => user_error(other),
    }
}

fn user_error(e: LlmError) -> HarnessError {
    match e {
        LlmError::ContextExceeded { .. } => HarnessError::ContextExceeded(e.to_string()),
        other => HarnessError::Endpoint(other.to_string()),
    }
}

/// Ask `req`; an incomplete answer is asked once more with the next seed; a second one is
/// an endpoint error naming `who` and why.
async fn ask_complete(
    model: &dyn ChatModel,
    req: ChatRequest,
    seed: u64,
    who: &str,
    map: fn(LlmError) -> HarnessError,
    problem: fn(&ChatResponse) -> Option<String>,
) -> Result<ChatResponse, HarnessError> {
    let first = model.chat(req.clone().with_seed(seed)).await.map_err(map)?;
    let Some(why) = problem(&first) else {
        return Ok(first);
    };
    let second = model
        .chat(req.with_seed(seed.wrapping_add(1)))
        .await
        .map_err(map)?;
    match problem(&second) {
        None => Ok(second),
        Some(again) => Err(HarnessError::Endpoint(format!(
            "{who} answered unusably twice: {why}; then {again}"
        ))),
    }
}

/// What makes a user simulator's answer unusable: [`ChatResponse::incomplete`], except an
/// empty reply whose (uncut) thinking ends on an end token: the model decided there.
fn user_problem(r: &ChatResponse) -> Option<String> {
    let why = r.incomplete()?;
    let decided_in_thinking = r.finish_reason.as_deref() != Some("length")
        && r.message
            .reasoning_content
            .as_deref()
            .and_then(super::last_marker)
            .is_some();
    (!decided_in_thinking).then_some(why)
}

pub struct EndpointAgent {
    pub model: Arc<dyn ChatModel>,
    pub tools: Arc<[Value]>,
    /// Per (task, trial): distinct trials are distinct samples, a re-run hits the cache.
    pub seed: u64,
}

impl Agent for EndpointAgent {
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }

    fn respond<'a>(
        &'a mut self,
        transcript: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(ChatMessage, Usage), HarnessError>> {
        Box::pin(async move {
            // Thinking stays in the transcript; the role's `send_reasoning` decides what of
            // it goes back.
            let req = ChatRequest::new(transcript.to_vec()).with_tools(Arc::clone(&self.tools));
            let r = ask_complete(
                self.model.as_ref(),
                req,
                self.seed,
                "the agent",
                to_harness,
                ChatResponse::incomplete,
            )
            .await?;
            let mut msg = ChatMessage::assistant_tool_calls(
                r.message.content.clone(),
                r.message.tool_calls.clone(),
            );
            msg.reasoning_content = r.message.reasoning_content.clone();
            Ok((msg, r.usage))
        })
    }
}

pub struct EndpointUser {
    model: Arc<dyn ChatModel>,
    history: Vec<ChatMessage>,
    seed: u64,
}

impl EndpointUser {
    /// `rules` is the user simulator's prompt (`prompts/user.md`: its instructions; worked
    /// examples, if a file has any, are not sent, as the simulator's conversation is the
    /// agent's turned around); `emotion_instruction = None` is the no-emotion variant.
    pub fn new(
        model: Arc<dyn ChatModel>,
        rules: &Prompt,
        instruction: &str,
        emotion_instruction: Option<&str>,
        seed: u64,
    ) -> EndpointUser {
        let mut system = format!("{}\n\n## Instruction\n{instruction}", rules.system);
        if let Some(e) = emotion_instruction {
            system.push_str("\n\n## How you feel and communicate\n");
            system.push_str(e);
        }
        EndpointUser {
            model,
            history: vec![ChatMessage::system(system)],
            seed,
        }
    }
}

impl User for EndpointUser {
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }

    fn reply<'a>(
        &'a mut self,
        agent_text: &'a str,
    ) -> BoxFuture<'a, Result<(String, Usage), HarnessError>> {
        Box::pin(async move {
            // The simulator plays the customer: the agent's words are its "user" turns.
            self.history.push(ChatMessage::user(agent_text));
            let req = ChatRequest::new(self.history.clone());
            let r = ask_complete(
                self.model.as_ref(),
                req,
                self.seed,
                "the user simulator",
                user_error,
                user_problem,
            )
            .await?;
            let text = r.message.content.clone().unwrap_or_default();
            // A model that decided inside its thinking and said nothing: its end token counts.
            let text = match (&r.message.reasoning_content, text.trim().is_empty()) {
                (Some(thinking), true) => super::last_marker(thinking)
                    .map(str::to_string)
                    .unwrap_or(text),
                _ => text,
            };
            self.history.push(ChatMessage::assistant(text.clone()));
            Ok((text, r.usage))
        })
    }
}
