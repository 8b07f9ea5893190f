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
//! show it ([`discovery_plan`]), as an agent model has to; a row that teaches a model to
//! guess ids is not training data (the failure analysis's `unseen_id` detector).

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
    /// Outputs seen in tool results of the current request, to tell at its end, each with
    /// the field it was found under (when the result was JSON).
    found: Vec<(String, Option<String>)>,
    /// A line acknowledging how the customer said they feel, said once with the first reply.
    acknowledgement: Option<&'static str>,
    /// Every output's field as last seen, for the closing summary.
    labels: Vec<(String, String)>,
    /// Draws for wording only (never for what the agent does).
    words: rand_chacha::ChaCha8Rng,
    /// Outputs told so far.
    told: Vec<String>,
    /// The lookup that identifies the customer, when the reference actions make none
    /// before their first write (`identify_call`); made once, right after authentication.
    identify: Option<(String, Value)>,
    /// Per reference action, the lookups that show the ids it uses (`discovery_plan`),
    /// made just before it; and whether the last call was one of them.
    discover: Vec<Vec<(String, Value)>>,
    discovering: bool,
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
        parts: &TaskParts,
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
            labels: Vec::new(),
            acknowledgement: None,
            words: derive_rng(seed, &["agent-words", &task.task_id, &trial.to_string()]),
            told: Vec::new(),
            identify,
            discover,
            discovering: false,
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
            known_as: parts
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

    /// The field an output was last seen under.
    fn label_of(&self, output: &str) -> Option<String> {
        self.labels
            .iter()
            .rev()
            .find(|(o, _)| o == output)
            .map(|(_, l)| l.clone())
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

    fn decide(&mut self) -> ChatMessage {
        if !self.authenticated {
            if !self.asked_identity {
                self.asked_identity = true;
                let ack = self
                    .acknowledgement
                    .take()
                    .map(|a| format!("{a} "))
                    .unwrap_or_default();
                let ask = self.choose(&[
                    "I can help with that. First, could you please verify your identity?",
                    "Happy to help. Before we start, could you verify your identity for me?",
                    "Sure. So that I can look into this, could you please verify your identity?",
                ]);
                return Self::say(
                    format!("{ack}{ask}"),
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
        if !self.awaiting_confirmation
            && let Some((name, args)) = self
                .discover
                .get_mut(self.next)
                .filter(|d| !d.is_empty())
                .map(|d| d.remove(0))
        {
            self.discovering = true;
            return self.call(
                &name,
                &args,
                format!("I need to look this up before I can act on the request: calling {name}."),
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
                let items: Vec<(String, Option<String>)> = untold
                    .into_iter()
                    .map(|o| {
                        let label = self.label_of(&o);
                        (o, label)
                    })
                    .collect();
                let anything = self.anything_else();
                return Self::say(
                    format!(
                        "To sum up what you asked about: {} {anything}",
                        tell(&items)
                    ),
                    "Every request is handled; I make sure the customer heard each answer.",
                );
            }
            let done = self.choose(&[
                "Everything you asked for is done.",
                "That takes care of everything you asked for.",
            ]);
            let anything = self.anything_else();
            return Self::say(
                format!("{done} {anything}"),
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
            let ask = self.choose(&[
                "Before I go ahead, please confirm: I will {what}. Shall I proceed (yes/no)?",
                "Here is the change I would make: {what}. Do you confirm (yes/no)?",
                "To confirm, I am about to {what}. Shall I proceed (yes/no)?",
            ]);
            return Self::say(
                ask.replace("{what}", &what),
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
        if std::mem::take(&mut self.discovering) {
            // A lookup made on the way to the next action: go on to it.
            return None;
        }
        let last = transcript.last();
        let last_output = last.and_then(|m| m.content.clone()).unwrap_or_default();
        let tool = last.and_then(|m| m.name.as_deref()).unwrap_or_default();
        let json = serde_json::from_str::<Value>(&last_output).is_ok();
        for o in &self.outputs {
            if last_output.contains(o.as_str()) && !self.found.iter().any(|(f, _)| f == o) {
                let label = field_of(&last_output, o);
                // A short value inside another one ("3" in "PIXQ9Q1") is not this result's
                // answer: it is told where a field holds it whole.
                if label.is_none() && json && o.chars().count() <= 3 {
                    continue;
                }
                // A value no field or heading names is what the tool reports ("the senior
                // discount is 130.0").
                let label = label.or_else(|| tool_words(tool));
                if let Some(l) = &label {
                    self.labels.push((o.clone(), l.clone()));
                }
                self.found.push((o.clone(), label));
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
            for o in self.outputs.clone() {
                if !self.told.contains(&o) && !told.iter().any(|(t, _)| *t == o) {
                    let label = self.label_of(&o);
                    told.push((o, label));
                }
            }
        }
        self.told.extend(told.iter().map(|(o, _)| o.clone()));
        let report = if told.is_empty() {
            self.choose(&[
                "That is done.",
                "All set, that change is made.",
                "Done, that went through.",
            ])
            .to_string()
        } else {
            let lead = self.choose(&[
                "I have checked that for you.",
                "Here is what I found.",
                "I looked that up for you.",
            ]);
            format!("{lead} {}", tell(&told))
        };
        let anything = self.anything_else();
        Some(Self::say(
            format!("{report} {anything}"),
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

/// The field of a JSON tool result whose value is `output` (the innermost key), if any.
fn field_of(result: &str, output: &str) -> Option<String> {
    // A field name ("status", "flight_number"), not an id used as a map key ("ZMI51TK3").
    let field = |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    fn walk(
        v: &Value,
        key: Option<&str>,
        output: &str,
        field: &dyn Fn(&str) -> bool,
    ) -> Option<String> {
        match v {
            Value::Object(m) => m
                .iter()
                .find_map(|(k, x)| walk(x, if field(k) { Some(k) } else { key }, output, field)),
            Value::Array(items) => items.iter().find_map(|x| walk(x, key, output, field)),
            Value::String(s) if s == output => key.map(str::to_string),
            Value::Number(n) if n.to_string() == output => key.map(str::to_string),
            Value::Bool(b) if b.to_string() == output => key.map(str::to_string),
            _ => None,
        }
    }
    let Ok(v) = serde_json::from_str::<Value>(result) else {
        return text_label(result, output);
    };
    walk(&v, None, output, &field).map(|k| k.replace('_', " "))
}

/// What a read tool reports, from its name: "get_senior_discount" -> "senior discount",
/// "price_preview" -> "price preview"; `None` for the generic helpers.
fn tool_words(tool: &str) -> Option<String> {
    if matches!(tool, "" | "calculate" | "think") {
        return None;
    }
    let rest = ["get_", "list_", "search_", "find_", "check_", "calculate_"]
        .iter()
        .find_map(|p| tool.strip_prefix(p))
        .unwrap_or(tool);
    Some(rest.replace('_', " "))
}

/// What a value of a plain-text result is: the label before it on its own line
/// ("Consultation Fee: $255.00" makes it the "consultation fee"), else the heading above
/// it ("Troubleshooting steps:" over "1) Restart device" makes it the "first
/// troubleshooting step").
fn text_label(result: &str, output: &str) -> Option<String> {
    let lines: Vec<&str> = result.lines().map(str::trim).collect();
    let at = lines.iter().position(|l| l.contains(output))?;
    if let Some((label, value)) = lines[at].split_once(": ")
        && value.contains(output)
    {
        let label = label.trim_start_matches(['-', '•', '*', ' ']);
        if !label.is_empty() && label.chars().all(|c| c.is_alphabetic() || c == ' ') {
            return Some(label.to_lowercase());
        }
    }
    let heading = lines[..at]
        .iter()
        .rev()
        .find_map(|l| l.strip_suffix(':'))
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_alphabetic() || c == ' '))?
        .to_lowercase();
    // "1) ..." or "1. ...": the item's place in the list.
    let number: Option<usize> = lines[at]
        .split([')', '.'])
        .next()
        .filter(|n| n.len() < lines[at].len())
        .and_then(|n| n.trim().parse().ok());
    let ordinal = number.and_then(|n| crate::domain::kit::text::ORDINALS.get(n.wrapping_sub(1)));
    match ordinal {
        Some(o) => {
            let one = heading
                .strip_suffix('s')
                .filter(|h| !h.ends_with('s'))
                .unwrap_or(&heading);
            Some(format!("{o} {one}"))
        }
        None => Some(heading),
    }
}

/// The values a customer asked to hear, in words: "The status is active, and the balance
/// is 146.5." Values found under one field are said together ("the games are A, B and
/// C"); a value found under no field is said as it is.
fn tell(items: &[(String, Option<String>)]) -> String {
    let mut groups: Vec<(Option<&str>, Vec<&str>)> = Vec::new();
    for (value, label) in items {
        match groups.iter_mut().find(|(l, _)| *l == label.as_deref()) {
            Some((_, values)) => values.push(value),
            None => groups.push((label.as_deref(), vec![value.as_str()])),
        }
    }
    let list = |items: &[String]| match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    };
    let parts: Vec<String> = groups
        .iter()
        .map(|(label, values)| {
            let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            let plural = |l: &str| l.ends_with('s') && !l.ends_with("ss") && !l.ends_with("us");
            match (label, values.len()) {
                // A field named by a participle or an adjective ("booked", "available")
                // is no noun to say "the booked is" of: "booked: R5-04".
                (Some(l), _) if ["ed", "able", "ible"].iter().any(|e| l.ends_with(e)) => {
                    format!("{l}: {}", list(&values))
                }
                // A plural field ("payees", "games") with one value: "the payees entry is".
                (Some(l), 1) if plural(l) => format!("the {l} entry is {}", values[0]),
                (Some(l), 1) => format!("the {l} is {}", values[0]),
                // Several values: "the games are ...", "the names are ...".
                (Some(l), _) if plural(l) => format!("the {l} are {}", list(&values)),
                (Some(l), _) if l.ends_with("ss") || l.ends_with("us") => {
                    format!("the {l} values are {}", list(&values))
                }
                (Some(l), _) => format!("the {l}s are {}", list(&values)),
                (None, _) => list(&values),
            }
        })
        .collect();
    let mut text = match parts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{}; and {last}", rest.join("; ")),
    };
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    format!("{text}.")
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
    let quoted =
        |args: &Value, v: &str| !v.is_empty() && args.to_string().contains(&format!("\"{v}\""));
    // What the customer says they are: their identity values (the user id among them where
    // they quote it). A user id they never say (a guest's internal reference) is one the
    // agent learns from a lookup, so a reference call carrying it needs one before it.
    let carries = |args: &Value| identity.iter().any(|v| quoted(args, v));
    let internal_id = !identity.contains(&task.user_id);
    let needs_identity = |a: &crate::task::Action| {
        kind(&a.name) == Some(ToolKind::Write) || internal_id && quoted(&a.kwargs, &task.user_id)
    };
    for a in &parts.actions {
        if kind(&a.name) == Some(ToolKind::Read) && carries(&a.kwargs) {
            return None;
        }
        if needs_identity(a) {
            break;
        }
    }
    if !parts.actions.iter().any(needs_identity) {
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

/// The lookups to make before each reference action so that every id it uses was shown
/// to the agent first: `plan[i]` are the reads before action `i`. A reference action
/// names records by ids (a payment method's `credit_card_7815826`, a guest's `31CYexc`, a
/// flight's `HAT163`) that the customer may never say; an agent learns them from a lookup
/// (the customer's profile, an order, a flight search). Simulated on a fork of `env` in
/// the reference's order (after `identify`, when there is one): an id that neither the
/// customer's words (instruction and facts) nor an earlier result shows is looked for with
/// the read tools whose required arguments what is known fills, one or two lookups deep;
/// the first (in tool order) that shows it is planned. An id no lookup shows stays unplanned
/// (the failure analysis then flags the call as `unseen_id`).
pub fn discovery_plan(
    env: &dyn crate::domain::Environment,
    task: &TaskRecord,
    parts: &TaskParts,
    identify: Option<&(String, Value)>,
) -> Vec<Vec<(String, Value)>> {
    use crate::domain::ToolKind;
    let specs = env.tool_specs();
    let reads: Vec<_> = specs.iter().filter(|s| s.kind == ToolKind::Read).collect();
    let mut state = env.fork();
    let mut known = Known::default();
    known.add_text(task.instruction.as_deref().unwrap_or_default());
    for f in &parts.user_facts {
        known.add_text(&f.text);
        for v in &f.values {
            known.add_value("", v);
        }
        if f.kind == "identity" {
            known.identity.extend(f.values.iter().cloned());
        }
    }
    if let Some((name, args)) = identify {
        let out = state.invoke(name, args);
        known.add_output(&out.text);
    }
    let mut plan = vec![Vec::new(); parts.actions.len()];
    for (i, action) in parts.actions.iter().enumerate() {
        let mut leaves = Vec::new();
        leaf_values("", &action.kwargs, &mut leaves);
        // What the customer states for this request (dates, places, cabins) fills a
        // search's arguments; the ids are what is looked for.
        let stated: Vec<&(String, String)> = leaves
            .iter()
            .filter(|(k, v)| !is_id(k, v) || known.shows(v))
            .collect();
        for (key, v) in stated {
            known.add_value(key, v);
        }
        for (_, id) in leaves.iter().filter(|(k, v)| is_id(k, v)) {
            if known.shows(id) {
                continue;
            }
            if let Some(found) = find_lookup(state.as_mut(), &reads, &known, id) {
                for (name, args, out) in found {
                    known.add_output(&out);
                    plan[i].push((name, args));
                }
            }
        }
        let out = state.invoke(&action.name, &action.kwargs);
        known.add_output(&out.text);
    }
    plan
}

/// Whether an argument value is an id the agent must have seen: one that reads as an id
/// (`id_like`), or a code of words under an id key (a plan's `tv_plus`, a provider's
/// `dr_lee_cardiology`), which a customer names by words ("the TV Plus package"), never so.
fn is_id(key: &str, value: &str) -> bool {
    crate::domain::kit::text::id_like(value)
        || (key.ends_with("_id") || key.ends_with("_ids"))
            && value.contains('_')
            && !value.contains(char::is_whitespace)
}

/// What the agent has seen: the text (lower-case, for "was it shown") and the values by
/// the key they came under (to fill a lookup's arguments).
#[derive(Clone, Default)]
struct Known {
    text: String,
    /// What the customer identifies with: an email, a phone number, or a first name, last
    /// name and zip code (or birth date).
    identity: Vec<String>,
    values: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl Known {
    fn add_text(&mut self, text: &str) {
        self.text.push(' ');
        self.text.push_str(&text.to_lowercase());
    }

    fn add_value(&mut self, key: &str, value: &str) {
        if !value.is_empty() && value.len() <= 80 {
            self.values
                .entry(key.to_string())
                .or_default()
                .insert(value.to_string());
        }
    }

    fn add_output(&mut self, output: &str) {
        self.add_text(output);
        match serde_json::from_str::<Value>(output) {
            Ok(v) => {
                let mut leaves = Vec::new();
                leaf_values("", &v, &mut leaves);
                for (k, x) in leaves {
                    self.add_value(&k, &x);
                }
            }
            // A one-token answer ("sara_doe_496"): an id for any id argument.
            Err(_) if !output.trim().contains(char::is_whitespace) => {
                self.add_value("", output.trim());
            }
            Err(_) => {}
        }
    }

    fn shows(&self, value: &str) -> bool {
        shows_id(&self.text, value)
    }

    /// Values for a parameter: those seen under a key of the same stem ("order_id" <-
    /// "orders", "order_id"), else, for an id parameter, every id seen.
    fn candidates(&self, param: &str) -> Vec<&str> {
        let p = param.to_lowercase();
        let stem = ["_ids", "_refs", "_id", "_ref", "_number", "_code"]
            .iter()
            .find_map(|s| p.strip_suffix(s))
            .unwrap_or(&p);
        let keyed: Vec<&str> = self
            .values
            .iter()
            .filter(|(k, _)| !k.is_empty() && (k.starts_with(stem) || k.as_str() == p))
            .flat_map(|(_, vs)| vs.iter().map(String::as_str))
            .collect();
        if !keyed.is_empty() {
            return keyed;
        }
        // A name with a zip code or birth date, as the customer identifies.
        let part = if p.contains("first") || p.contains("given") {
            Some(0)
        } else if p.contains("last") || p.contains("family") {
            Some(1)
        } else if p.contains("zip") || p.contains("postal") || p.contains("birth") || p == "dob" {
            Some(2)
        } else {
            None
        };
        if let Some(k) = part.filter(|_| self.identity.len() == 3) {
            return vec![self.identity[k].as_str()];
        }
        // Unkeyed values (what the customer says, one-token answers) by their shape.
        let fits: fn(&str) -> bool = if p.contains("email") {
            |v| v.contains('@')
        } else if p.contains("phone") {
            |v| v.chars().filter(char::is_ascii_digit).count() >= 7 && !v.contains('@')
        } else if stem.len() < p.len() || p == "id" || p.ends_with("id") {
            crate::domain::kit::text::id_like
        } else {
            return Vec::new();
        };
        let mut ids: Vec<&str> = self
            .values
            .values()
            .flatten()
            .map(String::as_str)
            .filter(|v| fits(v))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// Every string leaf of `v` (and every object key that reads as an id) with the key it
/// sits under (a list's items under the list's key).
fn leaf_values(key: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::String(s) => out.push((key.to_string(), s.clone())),
        Value::Number(n) => out.push((key.to_string(), n.to_string())),
        Value::Array(items) => items.iter().for_each(|x| leaf_values(key, x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                if crate::domain::kit::text::id_like(k) {
                    out.push((key.to_string(), k.clone()));
                }
                leaf_values(k, x, out);
            }
        }
        _ => {}
    }
}

/// A read made while planning: the tool, its arguments, its output.
type Read = (String, Value, String);

/// Lookups (name, arguments, output) that show `id`: one read, or two where the first
/// shows what fills the second. At most this many calls are tried per id.
const LOOKUP_BUDGET: usize = 400;

fn find_lookup(
    state: &mut dyn crate::domain::Environment,
    reads: &[&&'static crate::domain::ToolSpec],
    known: &Known,
    id: &str,
) -> Option<Vec<Read>> {
    let mut budget = LOOKUP_BUDGET;
    // Every successful read `known` can fill, in tool order, until one shows `id` (then
    // `Err` carries it) or the budget runs out.
    let mut try_reads = |known: &Known| -> Result<Vec<Read>, Read> {
        let mut seen = Vec::new();
        for spec in reads {
            for args in fillings(spec, known) {
                if budget == 0 {
                    return Ok(seen);
                }
                budget -= 1;
                let out = state.invoke(spec.name, &args);
                if out.is_error {
                    continue;
                }
                let read = (spec.name.to_string(), args, out.text);
                if shows_id(&read.2.to_lowercase(), id) {
                    return Err(read);
                }
                seen.push(read);
            }
        }
        Ok(seen)
    };
    let first_level = match try_reads(known) {
        Err(found) => return Some(vec![found]),
        Ok(seen) => seen,
    };
    for first in first_level {
        let mut more = known.clone();
        more.add_output(&first.2);
        if let Err(found) = try_reads(&more) {
            return Some(vec![first, found]);
        }
    }
    None
}

/// Whether lower-case `text` shows `id` (a leading '#' aside, as customers drop it).
fn shows_id(text: &str, id: &str) -> bool {
    text.contains(&id.trim_start_matches('#').to_lowercase())
}

/// The argument sets for a read whose required parameters all have candidates (at most 40
/// values tried per parameter; tools with more than two required parameters use the first
/// candidate of the rest).
fn fillings(spec: &crate::domain::ToolSpec, known: &Known) -> Vec<Value> {
    let required: Vec<&str> = spec.parameters["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if required.is_empty() {
        return vec![Value::Object(Default::default())];
    }
    let options: Vec<Vec<&str>> = required
        .iter()
        .map(|p| known.candidates(p).into_iter().take(40).collect())
        .collect();
    if options.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    let seconds: Vec<Option<&str>> = match options.get(1) {
        Some(o) => o.iter().map(|x| Some(*x)).collect(),
        None => vec![None],
    };
    let mut out = Vec::new();
    for a in &options[0] {
        for &b in &seconds {
            let mut m = serde_json::Map::new();
            m.insert(required[0].to_string(), Value::String(a.to_string()));
            if let Some(b) = b {
                m.insert(required[1].to_string(), Value::String(b.to_string()));
            }
            for (p, o) in required.iter().zip(&options).skip(2) {
                m.insert(p.to_string(), Value::String(o[0].to_string()));
            }
            out.push(Value::Object(m));
        }
    }
    out
}

/// An entry of a list argument as a person names it: a traveler or passenger by name, an
/// add-on or item by its description or name (with its type), a small record of plain
/// values by its fields ("room type single, occupancy 1"); `None` for what has no such
/// words (payment splits the customer knows no words for: ids and amounts). An entry
/// holding an id the customer knows by other words (`known_as`) is said in those words, with its amount ("your Visa credit card ending in 7846 ($36.86)"),
/// and a small record keyed by one id says the id with its other values ("R5-04 (adult)").
fn describe_entry_as(entry: &Value, known_as: &[(String, String)]) -> Option<String> {
    let m = entry.as_object()?;
    let text = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    if let Some(words) = m.values().find_map(|v| {
        let id = v.as_str()?;
        known_as.iter().find(|(k, _)| k == id).map(|(_, w)| w)
    }) {
        return Some(match m.get("amount").and_then(Value::as_f64) {
            Some(a) => format!("{words} (${a:.2})"),
            None => words.clone(),
        });
    }
    let ids: Vec<&str> = m
        .iter()
        .filter(|(k, _)| k.ends_with("_id"))
        .filter_map(|(_, v)| v.as_str())
        .collect();
    if ids.len() == 1 && m.len() <= 3 && m.values().all(Value::is_string) {
        let rest: Vec<String> = m
            .iter()
            .filter(|(k, _)| !k.ends_with("_id"))
            .filter_map(|(_, v)| v.as_str().map(|s| s.replace('_', " ")))
            .collect();
        return Some(if rest.is_empty() {
            ids[0].to_string()
        } else {
            format!("{} ({})", ids[0], rest.join(", "))
        });
    }
    if let (Some(first), Some(last)) = (text("first_name"), text("last_name")) {
        return Some(format!("{first} {last}"));
    }
    for key in ["description", "name", "title"] {
        if let Some(v) = text(key) {
            return Some(match text("type") {
                Some(kind) => format!("{v} ({})", kind.replace('_', " ")),
                None => v.to_string(),
            });
        }
    }
    let plain = m.len() <= 3
        && m.iter().all(|(k, v)| {
            !k.ends_with("_id") && (v.is_string() || v.is_number() || v.is_boolean())
        });
    plain.then(|| {
        m.iter()
            .map(|(k, v)| {
                let v = v
                    .as_str()
                    .map_or_else(|| v.to_string(), |s| s.replace('_', " "));
                format!("{} {v}", k.replace('_', " "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// Whether an argument names who the customer is (their account, their contact), not what
/// the action is about: a booking id the customer identified with is still read back when
/// it is the booking being cancelled.
fn names_the_customer(key: &str) -> bool {
    [
        "user",
        "client",
        "customer",
        "patient",
        "student",
        "traveler",
        "member",
        "guest",
        "email",
        "phone",
        "account_holder",
    ]
    .iter()
    .any(|w| key.contains(w))
}

/// A fact "You have a Visa credit card ending in 7846." (or "You hold a checking account
/// ...", "You pay with your VISA card ending in 3303.") as the agent says it back: "your Visa credit card ending in 7846"; `None` for a
/// fact of another shape.
fn customer_words(fact: &str) -> Option<String> {
    if let Some(own) = fact
        .strip_prefix("You pay with ")
        .and_then(|r| r.strip_prefix("your "))
    {
        let own = own.trim_end_matches('.');
        return (!own.is_empty()).then(|| format!("your {own}"));
    }
    let rest = fact
        .strip_prefix("You have ")
        .or_else(|| fact.strip_prefix("You hold "))?;
    let rest = rest
        .strip_prefix("an ")
        .or_else(|| rest.strip_prefix("a "))
        .unwrap_or(rest);
    let rest = rest.trim_end_matches('.');
    (!rest.is_empty()).then(|| format!("your {rest}"))
}

/// What a write will do, from its tool name and arguments, in the agent's words:
/// "cancel reservation (reservation: 4WQ150; reason: change of plan)", list entries by
/// what they are ("travelers: Ada Lee and Bo Lee"). The customer's own ids are left out
/// where they say who the customer is (reading them back would sound like another identity
/// question), and so are values nothing was chosen for.
pub fn summarise_write(name: &str, args: &Value, customer: &[String]) -> String {
    summarise_write_as(name, args, customer, &[], None)
}

/// What a conversation has shown so far: the customer's words and the tool results, kept
/// up to date message by message (each message is read once).
#[derive(Clone, Debug, Default)]
pub struct Heard {
    said: String,
    results: Vec<String>,
    upto: usize,
}

impl Heard {
    /// Read the messages added since the last call.
    pub fn update(&mut self, transcript: &[ChatMessage]) {
        if transcript.len() < self.upto {
            *self = Heard::default();
        }
        for m in &transcript[self.upto..] {
            let Some(text) = m.content.as_deref() else {
                continue;
            };
            match m.role {
                MessageRole::User => {
                    self.said.push_str(text);
                    self.said.push('\n');
                }
                MessageRole::Tool => self.results.push(text.to_string()),
                _ => {}
            }
        }
        self.upto = transcript.len();
    }

    /// Whether the customer said `id`.
    fn said(&self, id: &str) -> bool {
        self.said.contains(id)
    }

    /// The words the latest tool result that shows `id` gives the thing it names: its code
    /// and its title or name ("ENVS-3698 Soil and Water Science"); `None` when no result
    /// has such words for it. The thing is a record holding the id in an id field, not one
    /// that merely mentions it: a phone listed under a plan (`{"device_id": "1", "name":
    /// "Nokia G42", "service": "mobile_golden_years"}`) does not name the plan.
    fn words_for(&self, id: &str) -> Option<String> {
        fn own_id(m: &serde_json::Map<String, Value>, id: &str) -> bool {
            let id_key = |k: &str| {
                k == "id"
                    || k == "code"
                    || ["_id", "_ref", "_code", "_number"]
                        .iter()
                        .any(|s| k.ends_with(s))
            };
            m.iter().any(|(k, v)| id_key(k) && v.as_str() == Some(id))
        }
        fn find<'v>(v: &'v Value, id: &str) -> Option<&'v serde_json::Map<String, Value>> {
            match v {
                Value::Object(m) if own_id(m, id) => Some(m),
                Value::Object(m) => m.values().find_map(|x| find(x, id)),
                Value::Array(items) => items.iter().find_map(|x| find(x, id)),
                _ => None,
            }
        }
        self.results.iter().rev().find_map(|r| {
            if !r.contains(id) {
                return None;
            }
            let Ok(v) = serde_json::from_str::<Value>(r) else {
                return text_words_for(r, id);
            };
            let m = find(&v, id)?;
            let text = |k: &str| m.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
            let code = m
                .iter()
                .find(|(k, _)| k.ends_with("code"))
                .and_then(|(_, v)| v.as_str());
            let name = ["title", "name", "description"]
                .iter()
                .find_map(|k| text(k));
            match (code, name) {
                (Some(c), Some(n)) => Some(format!("{c} {n}")),
                (c, n) => c.or(n).map(str::to_string),
            }
        })
    }
}

/// The words a plain-text result gives the record it lists with `id`: the line's text
/// before "(ID: id)" ("• MD Horatio Marchetti (ID: dr_marchetti_anesthesiology)" gives
/// "MD Horatio Marchetti").
fn text_words_for(result: &str, id: &str) -> Option<String> {
    let tag = format!("(ID: {id})");
    let line = result.lines().find(|l| l.contains(&tag))?;
    let words = line[..line.find(&tag)?]
        .trim()
        .trim_start_matches(['-', '•', '*', ' '])
        .trim_end_matches([':', ' ']);
    (!words.is_empty()).then(|| words.to_string())
}

/// How an argument's key reads aloud as the label of its value: an id's key names the
/// thing ("order_id" as "order", "new_item_ids" as "new items"), "address1" reads "address
/// line 1", underscores as spaces.
fn key_words(k: &str) -> String {
    key_words_for(k, 2)
}

/// [`key_words`] for a key holding `n` values: a list of ids reads in the singular when it
/// holds one ("add course", "device").
fn key_words_for(k: &str, n: usize) -> String {
    if let Some(base) = k.strip_suffix("_ids") {
        let words = base.replace('_', " ");
        let one = words.strip_suffix('s').unwrap_or(&words);
        return if n == 1 {
            one.to_string()
        } else {
            format!("{one}s")
        };
    }
    if let Some(base) = k.strip_suffix("_id") {
        return base.replace('_', " ");
    }
    let base = k.trim_end_matches(|c: char| c.is_ascii_digit());
    let words = base.replace('_', " ");
    if base.len() < k.len() && !base.is_empty() {
        format!("{words} line {}", &k[base.len()..])
    } else {
        words
    }
}

/// The id values of an `_id` / `_ids` argument, for checking whether the customer said them.
fn id_values(k: &str, v: &Value) -> Vec<String> {
    if !(k.ends_with("_id") || k.ends_with("_ids")) {
        return Vec::new();
    }
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// [`summarise_write`], where an id the customer knows by other words (`known_as`: id and
/// words, "your Visa credit card ending in 7846") is read back in those words
/// ("payment: your Visa credit card ending in 7846", not "payment id credit card 8509532"),
/// and, given what the conversation has shown (`heard`), ids the customer never said (a
/// course, a show the customer named by its title) are read back by the words a tool result
/// gives them ("add course: ENVS-3698 Soil and Water Science"), or as ids when no result
/// has words for every one of them.
pub fn summarise_write_as(
    name: &str,
    args: &Value,
    customer: &[String],
    known_as: &[(String, String)],
    heard: Option<&Heard>,
) -> String {
    let action = name.replace('_', " ");
    let mut details = Vec::new();
    if let Value::Object(m) = args {
        for (k, v) in m {
            if v.as_str().is_some_and(|s| customer.iter().any(|c| c == s)) && names_the_customer(k)
            {
                continue;
            }
            if let Some((_, words)) = v
                .as_str()
                .and_then(|s| known_as.iter().find(|(id, _)| id == s))
            {
                details.push(format!("{}: {words}", key_words(k)));
                continue;
            }
            let ids = id_values(k, v);
            if let Some(heard) = heard
                && !ids.is_empty()
                && ids.iter().all(|id| !heard.said(id))
                && let Some(words) = ids
                    .iter()
                    .map(|id| heard.words_for(id))
                    .collect::<Option<Vec<String>>>()
            {
                details.push(format!(
                    "{}: {}",
                    key_words_for(k, words.len()),
                    crate::domain::kit::text::join_and(&words)
                ));
                continue;
            }
            let value = match v {
                // Nothing chosen is nothing to read back ("insurance null", "add ons ").
                Value::Null => continue,
                Value::String(s) if s.is_empty() => continue,
                Value::Object(_) => match describe_entry_as(v, known_as) {
                    Some(words) => words,
                    None => continue,
                },
                Value::Array(items) if items.is_empty() => "none".to_string(),
                // An id is read as it is written ("tv_plus", "APPT_7"); a choice as words.
                _ if !ids.is_empty() => crate::domain::kit::text::join_and(&ids),
                Value::String(s) => s.replace('_', " "),
                Value::Array(items) if items.iter().all(Value::is_string) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                Value::Array(items)
                    if items
                        .iter()
                        .all(|i| describe_entry_as(i, known_as).is_some()) =>
                {
                    let named: Vec<String> = items
                        .iter()
                        .filter_map(|i| describe_entry_as(i, known_as))
                        .collect();
                    crate::domain::kit::text::join_and(&named)
                }
                Value::Array(items) if items.len() == 1 => "one entry".to_string(),
                Value::Array(items) => format!("{} entries", items.len()),
                other => other.to_string(),
            };
            details.push(format!("{}: {value}", key_words_for(k, ids.len())));
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
    use super::{acknowledge, field_of, identify_call, summarise_write, tell};
    use serde_json::json;

    #[test]
    fn a_confirmation_reads_back_what_the_customer_knows_and_leaves_out_ids_never_said() {
        let args = json!({
            "booking_id": "2W8RZWV-B",
            "show_id": "35YU4IX-S",
            "seats": [
                {"seat_id": "R5-04", "ticket_type": "adult"},
                {"seat_id": "R5-05", "ticket_type": "child"}
            ],
            "payments": [{"payment_id": "O3NSKUK-WALLET", "amount": 36.86}],
            "address1": "12 Elm Street",
            "address2": ""
        });
        let known = vec![(
            "O3NSKUK-WALLET".to_string(),
            "your Google Pay wallet".to_string(),
        )];
        let mut heard = super::Heard::default();
        heard.update(&[
            crate::llm::ChatMessage::user("I'd like to change the seats on booking 2W8RZWV-B."),
            crate::llm::ChatMessage::tool(
                "call_1",
                "list_shows",
                r#"[{"show_id": "35YU4IX-S", "title": "Broken Orchard"}]"#,
            ),
            crate::llm::ChatMessage::tool(
                "call_2",
                "list_courses_by_term",
                r#"[{"course_id": "273JGXY", "course_code": "ENVS-3698", "title": "Soil and Water Science"}]"#,
            ),
        ]);
        let course = json!({"registration_id": "LF5X5ZB", "add_course_ids": ["273JGXY"]});
        assert_eq!(
            super::summarise_write_as(
                "update_registration_courses",
                &course,
                &[],
                &[],
                Some(&heard)
            ),
            "update registration courses (add course: ENVS-3698 Soil and Water Science; \
             registration: LF5X5ZB)"
        );
        let text = super::summarise_write_as("update_booking", &args, &[], &known, Some(&heard));
        assert!(text.contains("booking: 2W8RZWV-B"), "{text}");
        assert!(!text.contains("35YU4IX-S"), "{text}");
        assert!(text.contains("show: Broken Orchard"), "{text}");
        assert!(text.contains("R5-04 (adult) and R5-05 (child)"), "{text}");
        assert!(
            text.contains("payments: your Google Pay wallet ($36.86)"),
            "{text}"
        );
        assert!(text.contains("address line 1: 12 Elm Street"), "{text}");
        assert!(!text.contains("address line 2"), "{text}");
        // Without what the customer said, every id is read back (as before).
        let all = super::summarise_write_as("update_booking", &args, &[], &known, None);
        assert!(all.contains("show: 35YU4IX-S"), "{all}");
        // A record that only refers to an id (a phone listed under its plan) does not name
        // it; the plan's own record does.
        let mut heard = super::Heard::default();
        let mut transcript = vec![crate::llm::ChatMessage::tool(
            "call_1",
            "get_customer_details",
            r#"{"devices": [{"device_id": "1", "name": "Nokia G42", "service": "mobile_golden_years"}]}"#,
        )];
        heard.update(&transcript);
        let remove = json!({"action": "remove", "service_id": "mobile_golden_years"});
        let said = super::summarise_write_as("manage_service", &remove, &[], &[], Some(&heard));
        assert!(!said.contains("Nokia"), "{said}");
        transcript.push(crate::llm::ChatMessage::tool(
            "call_2",
            "get_service_details",
            r#"{"service_id": "mobile_golden_years", "name": "Golden Years Mobile Plan"}"#,
        ));
        heard.update(&transcript);
        let said = super::summarise_write_as("manage_service", &remove, &[], &[], Some(&heard));
        assert!(said.contains("service: Golden Years Mobile Plan"), "{said}");
    }

    #[test]
    fn a_guest_reference_the_customer_never_says_is_looked_up_first() {
        use crate::domain::{Action, Split, UserFact};
        let env = crate::domain::find("restaurant")
            .expect("restaurant is registered")
            .generate(7, Split::Eval);
        let guest = env.customers().into_iter().next().expect("a patron");
        let profile: serde_json::Value = serde_json::from_str(
            &env.fork()
                .invoke("get_patron_details", &json!({"guest_ref": guest}))
                .text,
        )
        .unwrap();
        let email = profile["contact_email"]
            .as_str()
            .expect("a patron has an email")
            .to_string();
        let task = crate::artifact::TaskRecord {
            user_id: guest.clone(),
            ..Default::default()
        };
        let parts = |actions: Vec<Action>, identity: &str| crate::task::TaskParts {
            actions,
            requests: vec![],
            user_facts: vec![UserFact {
                kind: "identity".into(),
                text: String::new(),
                values: vec![identity.to_string()],
                ids: vec![guest.clone()],
            }],
        };
        let read = Action {
            name: "get_patron_details".into(),
            kwargs: json!({"guest_ref": guest}),
        };
        // Read-only, and the reference goes straight to the internal reference: the agent
        // finds it by the email the customer gives.
        let (tool, args) = identify_call(env.as_ref(), &task, &parts(vec![read.clone()], &email))
            .expect("an identifying lookup");
        assert_eq!(tool, "find_patron_ref_by_email");
        assert_eq!(args, json!({"email": email}));
        // A customer who quotes the reference themself needs no lookup.
        assert_eq!(
            identify_call(env.as_ref(), &task, &parts(vec![read], &guest)),
            None
        );
    }

    #[test]
    fn an_id_the_customer_never_says_is_looked_up_before_the_call_that_uses_it() {
        use crate::domain::{Action, Split, UserFact};
        let env = crate::domain::find("restaurant")
            .expect("restaurant is registered")
            .generate(7, Split::Eval);
        let profile = |g: &str| -> serde_json::Value {
            serde_json::from_str(
                &env.fork()
                    .invoke("get_patron_details", &json!({"guest_ref": g}))
                    .text,
            )
            .unwrap()
        };
        let (guest, ticket) = env
            .customers()
            .into_iter()
            .find_map(|g| {
                let t = profile(&g)["ticket_log"]
                    .as_array()?
                    .first()?
                    .as_str()?
                    .to_string();
                Some((g, t))
            })
            .expect("a patron with a ticket");
        assert!(crate::domain::kit::text::id_like(&ticket), "{ticket}");
        let email = profile(&guest)["contact_email"]
            .as_str()
            .unwrap()
            .to_string();
        let task = crate::artifact::TaskRecord {
            user_id: guest.clone(),
            instruction: Some("You want to hear the status of your last order.".into()),
            ..Default::default()
        };
        let parts = crate::task::TaskParts {
            actions: vec![Action {
                name: "get_ticket_details".into(),
                kwargs: json!({"ticket_ref": ticket}),
            }],
            requests: vec![],
            user_facts: vec![UserFact {
                kind: "identity".into(),
                text: format!("Your email address is {email}."),
                values: vec![email.clone()],
                ids: vec![guest.clone()],
            }],
        };
        // A read-only task needs no identifying lookup of its own; the ticket is found by
        // the email (which gives the patron's reference) and the patron's record.
        assert_eq!(identify_call(env.as_ref(), &task, &parts), None);
        let plan = super::discovery_plan(env.as_ref(), &task, &parts, None);
        assert_eq!(
            plan,
            vec![vec![
                (
                    "find_patron_ref_by_email".to_string(),
                    json!({"email": email})
                ),
                (
                    "get_patron_details".to_string(),
                    json!({"guest_ref": guest})
                ),
            ]]
        );
        // Said by the customer: nothing to look up.
        let said = crate::artifact::TaskRecord {
            instruction: Some(format!("You want to hear the status of order {ticket}.")),
            ..task.clone()
        };
        let plan = super::discovery_plan(env.as_ref(), &said, &parts, None);
        assert_eq!(plan, vec![Vec::new()]);
    }

    #[test]
    fn values_no_field_names_are_named_by_their_line_or_tool() {
        let listing = "Available Providers:\n\n• MD Horatio Marchetti (ID: dr_marchetti_anesthesiology)\n  Fee: $1";
        assert_eq!(
            super::text_words_for(listing, "dr_marchetti_anesthesiology").as_deref(),
            Some("MD Horatio Marchetti")
        );
        assert_eq!(super::text_words_for(listing, "dr_x"), None);
        assert_eq!(
            super::text_label("Provider:\n  Consultation Fee: $255.00\n", "$255.00").as_deref(),
            Some("consultation fee")
        );
        assert_eq!(
            super::tool_words("get_senior_discount").as_deref(),
            Some("senior discount")
        );
        assert_eq!(super::tool_words("calculate"), None);
    }

    #[test]
    fn answers_name_the_field_of_each_value() {
        let result = r#"{"account": {"status": "active", "balance": {"current": 146.5}}}"#;
        assert_eq!(field_of(result, "active").as_deref(), Some("status"));
        assert_eq!(field_of(result, "146.5").as_deref(), Some("current"));
        assert_eq!(field_of(result, "closed"), None);
        assert_eq!(field_of("not json", "active"), None);
        // A plain-text list under a heading: the value is its place in the list.
        let steps = "\nTroubleshooting steps: \n1) Restart device \n2) Check signal coverage\n";
        assert_eq!(
            field_of(steps, "Restart device").as_deref(),
            Some("first troubleshooting step")
        );
        assert_eq!(
            field_of(steps, "Check signal coverage").as_deref(),
            Some("second troubleshooting step")
        );
        assert_eq!(field_of("Status: open", "open").as_deref(), Some("status"));
        assert_eq!(
            tell(&[
                ("Google".into(), Some("manufacturer".into())),
                ("Restart device".into(), field_of(steps, "Restart device")),
            ]),
            "The manufacturer is Google; and the first troubleshooting step is Restart device."
        );
        // An id used as a map key is not a field: the value is told under the map's field.
        let payees = r#"{"payees": {"ZMI51TK3": "Elif Iyer"}, "other": {"Q1": "x"}}"#;
        assert_eq!(field_of(payees, "Elif Iyer").as_deref(), Some("payees"));
        let told = tell(&[
            ("active".into(), Some("status".into())),
            ("146.5".into(), Some("current balance".into())),
            ("X1".into(), None),
        ]);
        assert_eq!(
            told,
            "The status is active; the current balance is 146.5; and X1."
        );
        let games = tell(&[
            ("A1".into(), Some("games".into())),
            ("B2".into(), Some("games".into())),
            ("C3".into(), Some("games".into())),
            ("Thornbury".into(), Some("city".into())),
        ]);
        assert_eq!(
            games,
            "The games are A1, B2 and C3; and the city is Thornbury."
        );
        assert_eq!(
            tell(&[
                ("Aurora".into(), Some("name".into())),
                ("Bijou".into(), Some("name".into())),
                ("R5-04".into(), Some("booked".into())),
                ("open".into(), Some("status".into())),
                ("final".into(), Some("status".into())),
            ]),
            "The names are Aurora and Bijou; booked: R5-04; and the status values are open and final."
        );
        assert_eq!(
            tell(&[("2D".into(), Some("format".into()))]),
            "The format is 2D."
        );
        assert_eq!(
            tell(&[("Elif Iyer".into(), Some("payees".into()))]),
            "The payees entry is Elif Iyer."
        );
        assert_eq!(
            tell(&[("open".into(), Some("status".into()))]),
            "The status is open."
        );
    }

    #[test]
    fn the_agent_acknowledges_a_voiced_feeling_only() {
        assert!(acknowledge("Hi. I'm worried about getting this wrong.").is_some());
        assert!(acknowledge("I feel let down by how this turned out.").is_some());
        assert!(acknowledge("I want to cancel order #W1.").is_none());
    }

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
            "book package (add ons: none; departure date: 24-12-02; rooming: room type single; \
             travelers: first name Q)"
        );
        // List entries by what they are; entries of ids and amounts only are counted.
        let args = json!({
            "add_ons": [{"description": "Private airport pickup", "price": 75.0, "type": "transfer"}],
            "travelers": [
                {"first_name": "Ada", "last_name": "Lee", "dob": "87-04-15"},
                {"first_name": "Bo", "last_name": "Lee", "dob": "90-01-02"},
            ],
            "payment_methods": [{"payment_id": "card_1", "amount": 10}, {"payment_id": "gift_2", "amount": 5}],
        });
        assert_eq!(
            summarise_write("book_package", &args, &[]),
            "book package (add ons: Private airport pickup (transfer); payment methods: 2 entries; \
             travelers: Ada Lee and Bo Lee)"
        );
        assert_eq!(summarise_write("cancel_all", &json!({}), &[]), "cancel all");
        // Ids are read as written, named by their key in the singular for one.
        assert_eq!(
            summarise_write(
                "manage_service",
                &json!({"action": "add", "service_id": "tv_plus", "devices_ids": ["3"],
                    "drop_course_ids": []}),
                &[]
            ),
            "manage service (action: add; device: 3; drop courses: none; service: tv_plus)"
        );
        // A code of words under an id key is an id to look up first; a choice is not.
        assert!(super::is_id("service_id", "tv_plus"));
        assert!(super::is_id("order_id", "#W1234567"));
        assert!(!super::is_id("reason", "no_longer_needed"));
        assert!(!super::is_id("service_id", "3"));
        // A booking the customer identified with is still named when it is what changes.
        assert_eq!(
            summarise_write(
                "cancel_booking",
                &json!({"booking_id": "OC3VOQC-B"}),
                &["OC3VOQC-B".to_string()]
            ),
            "cancel booking (booking: OC3VOQC-B)"
        );
        // An id the customer knows by other words is read back in those words.
        let card = super::customer_words("You have a Visa credit card ending in 7846.");
        assert_eq!(
            card.as_deref(),
            Some("your Visa credit card ending in 7846")
        );
        assert_eq!(super::customer_words("Your user id is x."), None);
        assert_eq!(
            super::customer_words("You hold a checking account in EUR ending in 0912.").as_deref(),
            Some("your checking account in EUR ending in 0912")
        );
        assert_eq!(
            super::customer_words("You pay with your VISA card ending in 3303.").as_deref(),
            Some("your VISA card ending in 3303")
        );
        let known = [("credit_card_8509532".to_string(), card.unwrap())];
        let args = json!({"payment_id": "credit_card_8509532", "reservation_id": "YTNH41"});
        assert_eq!(
            super::summarise_write_as("update_reservation_flights", &args, &[], &known, None),
            "update reservation flights (payment: your Visa credit card ending in 7846; \
             reservation: YTNH41)"
        );
    }
}
