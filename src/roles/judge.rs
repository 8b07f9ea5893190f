//! The task judge role: verification's rules leave some verdicts inconclusive (a value the
//! instruction may or may not let the customer give); the judge settles those and passes
//! every other verdict through. The scripted judge cannot read, so it never keeps an
//! inconclusive task; an endpoint judge answers ACCEPT or REJECT with a reason.

use super::{Call, run_all};
use crate::llm::{ChatMessage, ChatModel, ChatRequest, RoleModel};
use crate::verify::{RejectKind, Rejection, reject};
use std::sync::Arc;

/// The LLM judge's instructions (our own words).
pub const JUDGE_PROMPT: &str = "You check whether a customer-service task can be carried out \
as specified. You get the customer's instruction, the reference tool calls an agent must \
make, and the value an automatic check could not find stated. Decide whether the customer, \
following the instruction, could give the agent that value, or the agent could look it up \
from what the customer says. Answer ACCEPT or REJECT on the first line, then one sentence \
of reason.";

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
}

/// The judge's request for one inconclusive task.
pub fn judge_request(instruction: &str, actions: &str, gap: &str, seed: u64) -> ChatRequest {
    ChatRequest::new(vec![
        ChatMessage::system(JUDGE_PROMPT),
        ChatMessage::user(format!(
            "Instruction:\n{instruction}\n\nReference tool calls:\n{actions}\n\nNot found stated: {gap}"
        )),
    ])
    .with_seed(seed)
}

impl TaskJudge for EndpointJudge {
    fn settle(&self, jobs: Vec<JudgeJob>) -> Result<Vec<Result<(), Rejection>>, String> {
        let calls: Vec<Call<Result<(), Rejection>>> = jobs
            .into_iter()
            .map(|j| match j.verdict {
                Err(r) if r.kind == RejectKind::Inconclusive => {
                    let model = Arc::clone(&self.model);
                    let req = judge_request(&j.instruction, &j.actions, &r.reason, j.seed);
                    Box::pin(async move {
                        let answer = model.chat(req).await.map_err(|e| {
                            reject(RejectKind::EndpointError, format!("judge: {e}"))
                        })?;
                        let text = answer.message.content.unwrap_or_default();
                        let first = text.lines().next().unwrap_or("").to_uppercase();
                        if first.contains("ACCEPT") && !first.contains("REJECT") {
                            Ok(())
                        } else {
                            Err(reject(
                                RejectKind::Judge,
                                format!("rejected by the {} judge: {}", answer.model, text.trim()),
                            ))
                        }
                    }) as Call<_>
                }
                other => Box::pin(async move { other }) as Call<_>,
            })
            .collect();
        run_all(calls)
    }
}

/// The judge a role config opened.
pub fn task_judge(model: &RoleModel) -> Box<dyn TaskJudge> {
    match model {
        RoleModel::Scripted(_) => Box::new(ScriptedJudge),
        RoleModel::Endpoint(m) => Box::new(EndpointJudge {
            model: Arc::clone(m),
        }),
    }
}
