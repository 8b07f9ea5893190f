//! The oracle agent: a deterministic stand-in for an agent model, for offline runs and
//! tests (model id `scripted:oracle-agent`; never presented as model output). It follows
//! the policy procedure — verify identity, confirm before every write, report results and
//! ask whether anything else is needed — and executes the task's reference actions, with
//! configurable error rates so offline rollouts yield a realistic mix of rewards:
//! a skipped confirmation, a redundant identity question, a wrong argument on a write, a
//! premature transfer to a human. Its reasoning content says what it is about to do.

use super::MessageRole;
use super::{Agent, BoxFuture, ChatMessage, HarnessError, ToolCall, Usage};
use crate::artifact::TaskRecord;
use crate::seed::derive_rng;
use crate::task::TaskParts;
use rand::RngExt;
use serde::Deserialize;
use serde_json::Value;

/// Per-episode probabilities of each scripted mistake.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErrorRates {
    #[serde(default)]
    pub skip_confirmation: f64,
    #[serde(default)]
    pub redundant_question: f64,
    #[serde(default)]
    pub wrong_argument: f64,
    #[serde(default)]
    pub premature_transfer: f64,
}

impl Default for ErrorRates {
    fn default() -> Self {
        ErrorRates {
            skip_confirmation: 0.1,
            redundant_question: 0.15,
            wrong_argument: 0.1,
            premature_transfer: 0.05,
        }
    }
}

struct Plan {
    skip_confirmation: bool,
    redundant_question: bool,
    wrong_argument: bool,
    premature_transfer: bool,
}

pub struct OracleAgent {
    actions: Vec<(String, Value, bool)>,
    action_intents: Vec<i32>,
    requests: Vec<Option<String>>,
    outputs: Vec<String>,
    transfer_tool: Option<String>,
    plan: Plan,
    next: usize,
    asked_identity: bool,
    authenticated: bool,
    asked_again: bool,
    awaiting_confirmation: bool,
    calls: usize,
    /// Index of the reference action whose arguments were perturbed (when they changed).
    perturbed: Option<usize>,
    /// The planned mistakes that actually happened, in the order they happened.
    made: Vec<&'static str>,
}

fn perturb(args: &mut Value) {
    // Drop the last element of the first list with more than one, else nudge a number,
    // else alter a string: a plausible wrong argument that changes the outcome.
    if let Value::Object(map) = args {
        if let Some(list) = map
            .values_mut()
            .find_map(|v| v.as_array_mut().filter(|a| a.len() > 1))
        {
            list.pop();
            return;
        }
        if let Some(n) = map.values_mut().find(|v| v.is_number()) {
            *n = Value::from(n.as_f64().unwrap_or(0.0) + 1.0);
            return;
        }
        if let Some(Value::String(s)) = map.values_mut().find(|v| v.is_string()) {
            s.push('0');
        }
    }
}

impl OracleAgent {
    pub fn new(
        task: &TaskRecord,
        parts: &TaskParts,
        rates: &ErrorRates,
        transfer_tool: Option<String>,
        seed: u64,
        trial: u32,
    ) -> OracleAgent {
        let domain = crate::domain::find(&task.domain).ok();
        let is_write = |name: &str| {
            domain
                .map(|d| {
                    d.tool_specs()
                        .iter()
                        .any(|s| s.name == name && s.kind == crate::domain::ToolKind::Write)
                })
                .unwrap_or(false)
        };
        let mut actions: Vec<(String, Value, bool)> = parts
            .actions
            .iter()
            .map(|a| (a.name.clone(), a.kwargs.clone(), is_write(&a.name)))
            .collect();
        let mut rng = derive_rng(seed, &["agent", &task.task_id, &trial.to_string()]);
        let plan = Plan {
            skip_confirmation: rng.random_bool(rates.skip_confirmation.clamp(0.0, 1.0)),
            redundant_question: rng.random_bool(rates.redundant_question.clamp(0.0, 1.0)),
            wrong_argument: rng.random_bool(rates.wrong_argument.clamp(0.0, 1.0)),
            premature_transfer: transfer_tool.is_some()
                && rng.random_bool(rates.premature_transfer.clamp(0.0, 1.0)),
        };
        let mut perturbed = None;
        if plan.wrong_argument
            && let Some((i, a)) = actions.iter_mut().enumerate().find(|(_, a)| a.2)
        {
            let before = a.1.clone();
            perturb(&mut a.1);
            perturbed = (a.1 != before).then_some(i);
        }
        OracleAgent {
            actions,
            action_intents: task.action_intents.clone(),
            requests: parts.requests.clone(),
            outputs: task.outputs.clone(),
            transfer_tool,
            plan,
            next: 0,
            asked_identity: false,
            authenticated: false,
            asked_again: false,
            awaiting_confirmation: false,
            calls: 0,
            perturbed,
            made: Vec::new(),
        }
    }

    fn made(&mut self, mistake: &'static str) {
        if !self.made.contains(&mistake) {
            self.made.push(mistake);
        }
    }

    fn say(text: impl Into<String>, reasoning: impl Into<String>) -> ChatMessage {
        ChatMessage::assistant(text).with_reasoning(reasoning)
    }

    fn call(&mut self, name: &str, args: &Value, reasoning: String) -> ChatMessage {
        self.calls += 1;
        let call = ToolCall {
            id: format!("call_{}", self.calls),
            name: name.to_string(),
            arguments: args.to_string(),
        };
        ChatMessage::assistant_tool_calls(None, vec![call]).with_reasoning(reasoning)
    }

    fn agent_voice(request: &str) -> String {
        let r = request.trim_end_matches('.');
        let r = r
            .strip_prefix("You want to ")
            .or_else(|| r.strip_prefix("You would like to "))
            .unwrap_or(r);
        r.replace(" your ", " the ").replace("Your ", "The ")
    }

    fn decide(&mut self) -> ChatMessage {
        if !self.authenticated {
            if !self.asked_identity {
                self.asked_identity = true;
                return Self::say(
                    "I can help with that. First, could you please verify your identity?",
                    "Policy: authenticate the customer before anything else.",
                );
            }
            self.authenticated = true;
        }
        if self.plan.redundant_question && !self.asked_again && self.next > 0 {
            self.asked_again = true;
            self.made("redundant_question");
            return Self::say(
                "Sorry, could you verify your identity once more?",
                "Asking again for identity (a scripted mistake: redundant question).",
            );
        }
        let Some((name, args, write)) = self.actions.get(self.next).cloned() else {
            return Self::say(
                "Everything you asked for is done. Is there anything else I can help you with?",
                "All reference actions are executed.",
            );
        };
        if self.plan.premature_transfer && self.next + 1 == self.actions.len() {
            self.plan.premature_transfer = false;
            if let Some(t) = self.transfer_tool.clone() {
                self.made("premature_transfer");
                return self.call(
                    &t,
                    &serde_json::json!({"summary": "Customer needs further help."}),
                    "Handing over to a human (a scripted mistake: premature transfer).".into(),
                );
            }
        }
        if write && !self.awaiting_confirmation && !self.plan.skip_confirmation {
            self.awaiting_confirmation = true;
            let what = self
                .requests
                .get(self.next)
                .cloned()
                .flatten()
                .map(|r| Self::agent_voice(&r))
                .unwrap_or_else(|| format!("run {name}"));
            return Self::say(
                format!("Here is what I will do: {what}. Shall I proceed (yes/no)?"),
                format!("Policy: confirm before the write {name}."),
            );
        }
        if write && !self.awaiting_confirmation {
            self.made("skip_confirmation");
        }
        if self.perturbed == Some(self.next) {
            self.made("wrong_argument");
        }
        self.awaiting_confirmation = false;
        let reasoning = format!(
            "Next reference action {}/{}: {name}.",
            self.next + 1,
            self.actions.len()
        );
        self.next += 1;
        self.call(&name, &args, reasoning)
    }

    /// After a tool result: report when an intent is complete, else keep acting.
    fn after_tool(&mut self, transcript: &[ChatMessage]) -> Option<ChatMessage> {
        let done_intent = self.action_intents.get(self.next - 1).copied();
        let next_intent = self.action_intents.get(self.next).copied();
        if done_intent == next_intent {
            return None;
        }
        let last_output = transcript
            .last()
            .and_then(|m| m.content.clone())
            .unwrap_or_default();
        let told: Vec<&String> = self
            .outputs
            .iter()
            .filter(|o| last_output.contains(o.as_str()))
            .collect();
        let report = if told.is_empty() {
            "That is done.".to_string()
        } else {
            format!(
                "That is done. Here is what you asked for: {}.",
                told.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Some(Self::say(
            format!("{report} Is there anything else I can help you with?"),
            "The current request is complete; report and hand back to the customer.",
        ))
    }
}

impl Agent for OracleAgent {
    fn model_id(&self) -> String {
        "scripted:oracle-agent".into()
    }

    fn injected_mistakes(&self) -> Option<Vec<String>> {
        Some(self.made.iter().map(|m| m.to_string()).collect())
    }

    fn respond<'a>(
        &'a mut self,
        transcript: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(ChatMessage, Usage), HarnessError>> {
        Box::pin(async move {
            let after_tool = transcript
                .last()
                .is_some_and(|m| m.role == MessageRole::Tool)
                && self.next > 0;
            if after_tool && let Some(m) = self.after_tool(transcript) {
                return Ok((m, Usage::default()));
            }
            Ok((self.decide(), Usage::default()))
        })
    }
}
