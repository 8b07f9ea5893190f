//! The oracle agent: a deterministic stand-in for an agent model, for offline runs and
//! tests (model id `scripted:oracle-agent`; never presented as model output). It follows
//! the policy procedure — verify identity, confirm before every write, report results and
//! ask whether anything else is needed — and executes the task's reference actions, with
//! configurable error rates so offline rollouts yield a realistic mix of rewards:
//! a skipped confirmation, a redundant identity question, a wrong argument on a write, a
//! premature transfer to a human. Its reasoning content says what it is about to do.
//!
//! It knows the reference actions, but it uses no id the conversation has not shown it:
//! before an action whose arguments carry an id the customer never says (a payment
//! method's id, a guest's internal reference, a flight number), it makes the lookups that
//! show it ([`discovery_plan`](super::discovery::discovery_plan)), as an agent model has to; a row that teaches a model to
//! guess ids is not training data (the failure analysis's `unseen_id` detector).
//!
//! The agent's state and what it answers with are here; its turns (what it says or calls
//! next, and what it reports after a tool result) are `turns.rs`.

mod turns;

use super::MessageRole;
use super::pacing;
use super::readback::{Heard, customer_words, summarise_write_as};
use super::{Agent, BoxFuture, ChatMessage, HarnessError, ToolCall, Usage};
use crate::artifact::TaskRecord;
use crate::seed::derive_rng;
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
    /// Per reference action, the customer turn that asks for it ([`pacing::turns`]): the
    /// agent reports and hands back when a turn's actions are done.
    turns: Vec<i32>,
    requests: Vec<Option<String>>,
    outputs: Vec<String>,
    /// Outputs seen in tool results of the current request, to tell at its end, each with
    /// the field it was found under (when the result was JSON) and the tool that showed it.
    found: Vec<(String, Option<String>, String)>,
    /// A line acknowledging how the customer said they feel, said once with the first reply.
    acknowledgement: Option<&'static str>,
    /// Every output's field as last seen, for the closing summary.
    labels: Vec<(String, String)>,
    /// Draws for wording only (never for what the agent does).
    words: rand_chacha::ChaCha8Rng,
    /// Outputs told so far.
    told: Vec<String>,
    /// Every tool result from its first reference action on: the agent tells only what
    /// one showed.
    shown: String,
    /// The lookup that identifies the customer, when the reference actions make none
    /// before their first write (`identify_call`); made once, right after authentication.
    identify: Option<(String, Value)>,
    /// Per reference action, the lookups that show the ids it uses (`discovery_plan`),
    /// made just before it; and whether the last call was one of them.
    discover: Vec<Vec<(String, Value)>>,
    discovering: bool,
    /// The call awaiting its result, and the results of the lookups made since the last
    /// change (`tool`, arguments, output): a reference lookup that repeats one is answered
    /// from it.
    pending: Option<(String, Value)>,
    answers: Vec<(String, Value, String)>,
    /// The customer's own id and identity values: never read back in a confirmation, and
    /// recognised when the customer states them unasked.
    customer: Vec<String>,
    /// Ids the customer knows by other words (a card by its brand and last digits), from
    /// the task's facts that resolve exactly one id.
    known_as: Vec<(String, String)>,
    /// What the conversation has shown so far (an id the customer never said is read back
    /// by the words a tool result gives it).
    heard: Heard,
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
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        task: &TaskRecord,
        rates: &ErrorRates,
        transfer_tool: Option<String>,
        identify: Option<(String, Value)>,
        discover: Vec<Vec<(String, Value)>>,
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
        let mut actions: Vec<(String, Value, bool)> = task
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
            turns: pacing::turns(&task.action_intents, &task.requests),
            requests: task.requests.clone(),
            outputs: task.outputs.clone(),
            found: Vec::new(),
            labels: Vec::new(),
            acknowledgement: None,
            words: derive_rng(seed, &["agent-words", &task.task_id, &trial.to_string()]),
            told: Vec::new(),
            shown: String::new(),
            identify,
            discover,
            discovering: false,
            pending: None,
            answers: Vec::new(),
            customer: std::iter::once(task.user_id.clone())
                .chain(
                    task.user_facts
                        .iter()
                        .filter(|f| f.kind == "identity")
                        .flat_map(|f| f.values.iter().cloned()),
                )
                .filter(|v| !v.is_empty())
                .collect(),
            known_as: task
                .user_facts
                .iter()
                .filter_map(|f| match f.ids.as_slice() {
                    [id] => customer_words(&f.text).map(|w| (id.clone(), w)),
                    _ => None,
                })
                .collect(),
            heard: Heard::default(),
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

    /// One of `options`, for wording only.
    fn choose(&mut self, options: &[&'static str]) -> &'static str {
        options[self.words.random_range(0..options.len())]
    }

    /// The hand-back question (every variant asks "anything else", which users listen for).
    fn anything_else(&mut self) -> &'static str {
        self.choose(&[
            "Is there anything else I can help you with?",
            "Is there anything else you need today?",
            "Can I help with anything else?",
        ])
    }

    /// The field an output was last seen under, else a field of any result holding it whole
    /// (a lookup's result is not read for answers as it comes).
    fn label_of(&self, output: &str) -> Option<String> {
        self.labels
            .iter()
            .rev()
            .find(|(o, _)| o == output)
            .map(|(_, l)| l.clone())
            .or_else(|| self.heard.field_of(output))
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
        self.pending = Some((name.to_string(), args.clone()));
        let call = ToolCall {
            id: format!("call_{}", self.calls),
            name: name.to_string(),
            arguments: args.to_string(),
        };
        ChatMessage::assistant_tool_calls(None, vec![call]).with_reasoning(reasoning)
    }

    /// What a write will do, in the agent's words (see [`summarise_write_as`]).
    fn summarise(&self, name: &str, args: &Value) -> String {
        summarise_write_as(
            name,
            args,
            &self.customer,
            &self.known_as,
            Some(&self.heard),
        )
    }

    /// The reasoning behind a tool call: the policy step it takes, never a reference.
    fn reasoning_for(&self, name: &str, write: bool, requested: bool) -> String {
        let step = if write {
            "The customer has confirmed, so I make the change they asked for"
        } else if requested {
            "The customer asked to hear this, so I look it up and will tell them what it shows"
        } else {
            "I need this information before I can act on the request"
        };
        format!("{step}: calling {name}.")
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
            self.heard.update(transcript);
            // A customer who stated who they are unasked is not asked again.
            if !self.asked_identity
                && transcript.iter().any(|m| {
                    m.role == MessageRole::User
                        && m.content.as_deref().is_some_and(|t| {
                            let identity = &self.customer[self.customer.len().min(1)..];
                            (!identity.is_empty()
                                && identity.iter().all(|v| t.contains(v.as_str())))
                                || self
                                    .customer
                                    .first()
                                    .is_some_and(|id| t.contains(id.as_str()))
                                // With no lookup to identify them by, any id they
                                // identify with (one of a moviegoer's bookings) is enough.
                                || (self.identify.is_none()
                                    && identity.iter().any(|v| {
                                        crate::domain::kit::text::id_like(v)
                                            && t.contains(v.as_str())
                                    }))
                        })
                })
            {
                self.asked_identity = true;
            }
            if !self.asked_identity && self.acknowledgement.is_none() {
                let first_user = transcript
                    .iter()
                    .find(|m| m.role == MessageRole::User)
                    .and_then(|m| m.content.as_deref())
                    .unwrap_or_default();
                self.acknowledgement = acknowledge(first_user);
            }
            let after_tool = transcript
                .last()
                .is_some_and(|m| m.role == MessageRole::Tool);
            if after_tool && self.next == 0 {
                // A lookup before the first action (who the customer is, an id it needs) is
                // done with; the first action's own result is read when it comes.
                self.discovering = false;
            }
            let result = transcript.last().filter(|_| after_tool);
            let output = result.and_then(|m| m.content.clone()).unwrap_or_default();
            if let Some((name, args)) = self.pending.take().filter(|_| after_tool) {
                self.answers.push((name, args, output.clone()));
            }
            let tool = result.and_then(|m| m.name.clone()).unwrap_or_default();
            if after_tool
                && self.next > 0
                && let Some(m) = self.after_tool(&tool, &output)
            {
                return Ok((m, Usage::default()));
            }
            Ok((self.decide(), Usage::default()))
        })
    }
}

/// A line acknowledging the feeling a customer voiced in their opening, read from a few
/// plain words (the agent sees only what the customer says).
pub fn acknowledge(text: &str) -> Option<&'static str> {
    let t = text.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if has(&[
        "worried",
        "anxious",
        "nervous",
        "uneasy",
        "scared",
        "dread",
        "desperate",
    ]) {
        Some("I understand this is stressful; let's get it sorted together.")
    } else if has(&[
        "frustrat",
        "fed up",
        "irritat",
        "annoyance",
        "enough of",
        "resent",
        "patience",
        "runaround",
        "expected better",
        "argue",
    ]) {
        Some("I'm sorry for the trouble, and I'll do my best to fix this quickly.")
    } else if has(&[
        "disappoint",
        "let down",
        "sad ",
        "down at",
        "helpless",
        "hopeless",
        "discouraged",
    ]) {
        Some("I'm sorry to hear that; I'll help you with this.")
    } else if has(&[
        "not happy",
        "don't like",
        "bad taste",
        "off-putting",
        "appalling",
        "disgust",
        "rid of",
        "nothing more to do",
    ]) {
        Some("I'm sorry this has not been a good experience.")
    } else if has(&[
        "excited",
        "looking forward",
        "relieved",
        "relief",
        "pleased",
        "proud",
    ]) {
        Some("Glad to hear it!")
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
