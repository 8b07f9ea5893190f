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
    /// Outputs seen in tool results of the current request, to tell at its end.
    found: Vec<String>,
    /// Outputs told so far.
    told: Vec<String>,
    /// The lookup that identifies the customer, when the reference actions make none
    /// before their first write (`identify_call`); made once, right after authentication.
    identify: Option<(String, Value)>,
    /// The customer's own id and identity values: never read back in a confirmation, and
    /// recognised when the customer states them unasked.
    customer: Vec<String>,
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
        parts: &TaskParts,
        rates: &ErrorRates,
        transfer_tool: Option<String>,
        identify: Option<(String, Value)>,
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
            found: Vec::new(),
            told: Vec::new(),
            identify,
            customer: std::iter::once(task.user_id.clone())
                .chain(
                    parts
                        .user_facts
                        .iter()
                        .filter(|f| f.kind == "identity")
                        .flat_map(|f| f.values.iter().cloned()),
                )
                .filter(|v| !v.is_empty())
                .collect(),
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

    /// What a write will do, in the agent's words (see [`summarise_write`]).
    fn summarise(&self, name: &str, args: &Value) -> String {
        summarise_write(name, args, &self.customer)
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
            if let Some((name, args)) = self.identify.take() {
                return self.call(
                    &name,
                    &args,
                    "Policy: identify the customer with a lookup before taking any action.".into(),
                );
            }
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
            // Whatever the customer asked to hear and has not heard yet, said once at the end.
            let untold: Vec<String> = self
                .outputs
                .iter()
                .filter(|o| !self.told.contains(o))
                .cloned()
                .collect();
            if !untold.is_empty() {
                self.told.extend(untold.iter().cloned());
                return Self::say(
                    format!(
                        "To sum up what you asked about: {}. Is there anything else I can help you with?",
                        untold.join(", ")
                    ),
                    "Every request is handled; I make sure the customer heard each answer.",
                );
            }
            return Self::say(
                "Everything you asked for is done. Is there anything else I can help you with?",
                "Every request is handled; I hand back to the customer.",
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
            let what = self.summarise(&name, &args);
            return Self::say(
                format!(
                    "Before I go ahead, please confirm: I will {what}. Shall I proceed (yes/no)?"
                ),
                format!(
                    "Policy: describe the change and get an explicit yes before calling {name}."
                ),
            );
        }
        if write && !self.awaiting_confirmation {
            self.made("skip_confirmation");
        }
        if self.perturbed == Some(self.next) {
            self.made("wrong_argument");
        }
        self.awaiting_confirmation = false;
        let requested = self.requests.get(self.next).is_some_and(Option::is_some);
        let reasoning = self.reasoning_for(&name, write, requested);
        self.next += 1;
        self.call(&name, &args, reasoning)
    }

    /// After a tool result: report when an intent is complete, else keep acting.
    fn after_tool(&mut self, transcript: &[ChatMessage]) -> Option<ChatMessage> {
        let last_output = transcript
            .last()
            .and_then(|m| m.content.clone())
            .unwrap_or_default();
        for o in &self.outputs {
            if last_output.contains(o.as_str()) && !self.found.contains(o) {
                self.found.push(o.clone());
            }
        }
        let done_intent = self.action_intents.get(self.next - 1).copied();
        let next_intent = self.action_intents.get(self.next).copied();
        if done_intent == next_intent {
            return None;
        }
        let mut told = std::mem::take(&mut self.found);
        if self.next == self.actions.len() {
            // The last request: whatever else the customer asked to hear, said now.
            for o in &self.outputs {
                if !self.told.contains(o) && !told.contains(o) {
                    told.push(o.clone());
                }
            }
        }
        self.told.extend(told.iter().cloned());
        let report = if told.is_empty() {
            "That is done.".to_string()
        } else {
            format!(
                "I have checked that for you. Here is what you asked about: {}.",
                told.join(", ")
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
                        })
                })
            {
                self.asked_identity = true;
            }
            let after_tool = transcript
                .last()
                .is_some_and(|m| m.role == MessageRole::Tool)
                && self.next > 0;
            if after_tool
                && self.next > 0
                && let Some(m) = self.after_tool(transcript)
            {
                return Ok((m, Usage::default()));
            }
            Ok((self.decide(), Usage::default()))
        })
    }
}

/// The lookup that identifies the customer before the first write, when the reference
/// actions make none: the first read tool whose required arguments the customer's identity
/// fills (an email, a phone number, a name with a zip code or birth date, or the user id)
/// and that succeeds on `env` for this customer. `None` when a reference read already
/// carries an identity value before the first write, or when no tool fits.
pub fn identify_call(
    env: &dyn crate::domain::Environment,
    task: &TaskRecord,
    parts: &TaskParts,
) -> Option<(String, Value)> {
    use crate::domain::ToolKind;
    let specs = env.tool_specs();
    let kind = |name: &str| specs.iter().find(|s| s.name == name).map(|s| s.kind);
    let identity: Vec<String> = parts
        .user_facts
        .iter()
        .filter(|f| f.kind == "identity")
        .flat_map(|f| f.values.iter().cloned())
        .collect();
    let carries = |args: &Value| {
        let text = args.to_string();
        identity
            .iter()
            .chain(std::iter::once(&task.user_id))
            .any(|v| !v.is_empty() && text.contains(&format!("\"{v}\"")))
    };
    for a in &parts.actions {
        match kind(&a.name) {
            Some(ToolKind::Write) => break,
            Some(ToolKind::Read) if carries(&a.kwargs) => return None,
            _ => {}
        }
    }
    if !parts
        .actions
        .iter()
        .any(|a| kind(&a.name) == Some(ToolKind::Write))
    {
        return None;
    }
    let by_id = identity.iter().any(|v| v == &task.user_id);
    let fill = |param: &str| -> Option<String> {
        let p = param.to_lowercase();
        let find = |pred: &dyn Fn(&str) -> bool| identity.iter().find(|v| pred(v)).cloned();
        if p.contains("email") {
            find(&|v| v.contains('@'))
        } else if p.contains("phone") {
            find(&|v| v.chars().filter(char::is_ascii_digit).count() >= 7 && !v.contains('@'))
        } else if p.contains("first") {
            identity.first().cloned().filter(|_| identity.len() == 3)
        } else if p.contains("last") {
            identity.get(1).cloned().filter(|_| identity.len() == 3)
        } else if p.contains("zip") || p.contains("postal") || p.contains("birth") || p == "dob" {
            identity.get(2).cloned().filter(|_| identity.len() == 3)
        } else if p.ends_with("id") && by_id {
            Some(task.user_id.clone())
        } else {
            None
        }
    };
    for spec in specs.iter().filter(|s| s.kind == ToolKind::Read) {
        let required: Vec<&str> = spec.parameters["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if required.is_empty() {
            continue;
        }
        let mut args = serde_json::Map::new();
        for p in &required {
            match fill(p) {
                Some(v) => {
                    args.insert(p.to_string(), Value::String(v));
                }
                None => break,
            }
        }
        if args.len() != required.len() {
            continue;
        }
        let args = Value::Object(args);
        let out = env.fork().invoke(spec.name, &args);
        if !out.is_error && (out.text.contains(&task.user_id) || carries(&args)) {
            return Some((spec.name.to_string(), args));
        }
    }
    None
}

/// What a write will do, from its tool name and arguments, in the agent's words:
/// "cancel reservation (reservation id 4WQ150; reason change of plan)". The customer's own
/// ids are left out (reading them back would sound like another identity question), and so
/// are nested objects and values nothing was chosen for.
pub fn summarise_write(name: &str, args: &Value, customer: &[String]) -> String {
    let action = name.replace('_', " ");
    let mut details = Vec::new();
    if let Value::Object(m) = args {
        for (k, v) in m {
            if v.as_str().is_some_and(|s| customer.iter().any(|c| c == s)) {
                continue;
            }
            let value = match v {
                // Nothing chosen is nothing to read back ("insurance null", "add ons ").
                Value::Null | Value::Object(_) => continue,
                Value::Array(items) if items.is_empty() => "none".to_string(),
                Value::String(s) => s.replace('_', " "),
                Value::Array(items) if items.iter().all(Value::is_string) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                Value::Array(items) if items.len() == 1 => "one entry".to_string(),
                Value::Array(items) => format!("{} entries", items.len()),
                other => other.to_string(),
            };
            details.push(format!("{} {value}", k.replace('_', " ")));
        }
    }
    if details.is_empty() {
        action
    } else {
        format!("{action} ({})", details.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::summarise_write;
    use serde_json::json;

    #[test]
    fn a_confirmation_reads_back_choices_not_blanks_or_the_customer() {
        let args = json!({
            "add_ons": [],
            "departure_date": "24-12-02",
            "insurance": null,
            "rooming": {"room_type": "single"},
            "travelers": [{"first_name": "Q"}],
            "traveler_id": "F8XHQCG",
        });
        assert_eq!(
            summarise_write("book_package", &args, &["F8XHQCG".to_string()]),
            "book package (add ons none; departure date 24-12-02; travelers one entry)"
        );
        assert_eq!(summarise_write("cancel_all", &json!({}), &[]), "cancel all");
    }
}
