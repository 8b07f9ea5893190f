//! The task judge role: verification's rules leave some verdicts inconclusive (a value the
//! instruction may or may not let the customer give); the judge settles those and passes
//! every other verdict through. The scripted judge cannot read, so it never keeps an
//! inconclusive task; an endpoint judge answers ACCEPT or REJECT with a reason.

use super::{Call, run_all};
use crate::llm::{ChatMessage, ChatModel, ChatRequest, Prompt, RoleModel};
use crate::verify::{RejectKind, Rejection, reject};
use std::sync::Arc;

/// One task's verdict, with what the judge reads if it is inconclusive.
pub struct JudgeJob {
    pub verdict: Result<(), Rejection>,
    pub instruction: String,
    /// The reference actions as their column stores them (JSON text).
    pub actions: String,
    pub seed: u64,
}

pub trait TaskJudge {
    /// One verdict per job, in order: inconclusive ones settled, the others unchanged.
    fn settle(&self, jobs: Vec<JudgeJob>) -> Result<Vec<Result<(), Rejection>>, String>;
}

pub struct ScriptedJudge;

impl TaskJudge for ScriptedJudge {
    fn settle(&self, jobs: Vec<JudgeJob>) -> Result<Vec<Result<(), Rejection>>, String> {
        Ok(jobs
            .into_iter()
            .map(|j| match j.verdict {
                Err(r) if r.kind == RejectKind::Inconclusive => Err(reject(
                    RejectKind::Judge,
                    format!("inconclusive, rejected by the scripted judge: {}", r.reason),
                )),
                other => other,
            })
            .collect())
    }
}

pub struct EndpointJudge {
    pub model: Arc<dyn ChatModel>,
    /// `prompts/judge.md`.
    pub prompt: Arc<Prompt>,
}

/// The judge's request for one inconclusive task.
pub fn judge_request(
    prompt: &Prompt,
    instruction: &str,
    actions: &str,
    gap: &str,
    seed: u64,
) -> ChatRequest {
    let mut messages = prompt.messages(None);
    messages.push(ChatMessage::user(format!(
        "Instruction:\n{instruction}\n\nReference tool calls:\n{actions}\n\nNot found stated: {gap}"
    )));
    ChatRequest::new(messages).with_seed(seed)
}

/// The verdict a judge's answer gives: ACCEPT or REJECT on its first line; `None` for an
/// answer that says neither (or both), which is asked again.
fn verdict_of(text: &str) -> Option<bool> {
    let first = text.trim().lines().next().unwrap_or("").to_uppercase();
    match (first.contains("ACCEPT"), first.contains("REJECT")) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

impl TaskJudge for EndpointJudge {
    fn settle(&self, jobs: Vec<JudgeJob>) -> Result<Vec<Result<(), Rejection>>, String> {
        let calls: Vec<Call<Result<(), Rejection>>> = jobs
            .into_iter()
            .map(|j| match j.verdict {
                Err(r) if r.kind == RejectKind::Inconclusive => {
                    let model = Arc::clone(&self.model);
                    let mut req =
                        judge_request(&self.prompt, &j.instruction, &j.actions, &r.reason, j.seed);
                    Box::pin(async move {
                        // An empty, cut or unreadable answer is asked once more with another
                        // seed; twice is the request's error, not the task's.
                        let mut problem = String::new();
                        for attempt in 0..2u64 {
                            req = req.with_seed(j.seed.wrapping_add(attempt));
                            let answer = model.chat(req.clone()).await.map_err(|e| {
                                reject(RejectKind::EndpointError, format!("judge: {e}"))
                            })?;
                            let text = answer.message.content.clone().unwrap_or_default();
                            if let Some(p) = answer.incomplete() {
                                problem = p;
                                continue;
                            }
                            match verdict_of(&text) {
                                Some(true) => return Ok(()),
                                Some(false) => {
                                    return Err(reject(
                                        RejectKind::Judge,
                                        format!(
                                            "rejected by the {} judge: {}",
                                            answer.model,
                                            text.trim()
                                        ),
                                    ));
                                }
                                None => {
                                    problem = "the answer names neither ACCEPT nor REJECT on its first line".into();
                                }
                            }
                        }
                        Err(reject(
                            RejectKind::EndpointError,
                            format!("judge: unusable answer twice: {problem}"),
                        ))
                    }) as Call<_>
                }
                other => Box::pin(async move { other }) as Call<_>,
            })
            .collect();
        run_all(calls)
    }
}

/// The judge a role config opened (an endpoint sends `prompt`).
pub fn task_judge(model: &RoleModel, prompt: Arc<Prompt>) -> Box<dyn TaskJudge> {
    match model {
        RoleModel::Scripted(_) => Box::new(ScriptedJudge),
        RoleModel::Endpoint(m) => Box::new(EndpointJudge {
            model: Arc::clone(m),
            prompt,
        }),
    }
}
