//! The analysed view of one rollout: its transcript without reasoning, every executed tool
//! call paired with its observation and replayed on a fork of the task's database, the
//! task's reference actions, and the facts that identify the customer.
//!
//! The replay is what makes the detectors exact: a call is classified as a schema error
//! (unknown tool, arguments that are not JSON or do not fit the tool's schema), a tool
//! refusal, or a success; every write is re-checked with the domain's `check_policy` on the
//! state it actually ran on; and the replayed observation must equal the recorded one, so
//! analysing against the wrong database or ruleset is an error, never a silent mislabel.
//!
//! Architecture invariant: reads records, never files; never reads `injected_mistakes`.

use crate::artifact::{RolloutRecord, TaskRecord};
use crate::domain::{Environment, Intent, PolicyViolation, ToolKind, ToolSpec};
use crate::harness::ChatMessage;
use crate::harness::MessageRole;
use serde_json::Value;

/// Why an episode could not be analysed (names the episode and what was wrong).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AnalysisError {
    /// The judge (an endpoint) failed.
    #[error("{0}")]
    Judge(String),
    #[error("episode {task_id} trial {trial}: {field}: {message}")]
    Malformed {
        task_id: String,
        trial: i32,
        field: &'static str,
        message: String,
    },
    #[error(
        "episode {task_id} trial {trial}: replaying call {call} ({tool}, message {step}) does not reproduce the recorded observation (wrong database or ruleset?): recorded {recorded:?}, replayed {replayed:?}"
    )]
    Diverged {
        task_id: String,
        trial: i32,
        call: usize,
        tool: String,
        step: usize,
        recorded: String,
        replayed: String,
    },
}

/// What a call did when replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallOutcome {
    Ok,
    /// Unknown tool, arguments that are not JSON, or arguments outside the tool's schema.
    SchemaError(String),
    /// The tool ran and refused (a business rule, an unknown id): nothing changed.
    ToolError(String),
}

/// One tool call the agent made.
#[derive(Clone, Debug)]
pub struct ExecutedCall {
    /// Index of the assistant message that made the call.
    pub step: usize,
    /// 1-based position among the episode's calls.
    pub ordinal: usize,
    pub name: String,
    /// `None` when the arguments were not valid JSON.
    pub args: Option<Value>,
    /// The recorded observation (empty when the transcript has none).
    pub output: String,
    pub kind: Option<ToolKind>,
    pub intent: Option<Intent>,
    pub outcome: CallOutcome,
    /// For a successful write: the policy rule it broke on the state it ran on.
    pub policy: Option<PolicyViolation>,
}

impl ExecutedCall {
    pub fn succeeded(&self) -> bool {
        self.outcome == CallOutcome::Ok
    }

    /// A write that acts for the customer (not a hand-over or a helper).
    pub fn is_action_write(&self) -> bool {
        self.kind == Some(ToolKind::Write) && is_action(self.intent)
    }

    pub fn is_transfer(&self) -> bool {
        self.intent == Some(Intent::Transfer)
    }
}

fn is_action(intent: Option<Intent>) -> bool {
    !matches!(intent, Some(Intent::Transfer) | Some(Intent::Helper))
}

/// One reference action of the task.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceAction {
    pub name: String,
    pub args: Value,
    /// A write that acts for the customer (not a hand-over or a helper).
    pub write: bool,
    pub transfer: bool,
    /// The intent (walk) of the trace it belongs to.
    pub intent: i32,
}

/// The analysed episode.
#[derive(Clone, Debug)]
pub struct Episode {
    pub task_id: String,
    pub trial: i32,
    pub reward: i32,
    pub termination: String,
    pub error: Option<String>,
    /// The transcript with every `reasoning_content` removed.
    pub messages: Vec<ChatMessage>,
    pub calls: Vec<ExecutedCall>,
    pub reference: Vec<ReferenceAction>,
    pub user_id: String,
    /// What the customer authenticates with (their identity fact's values, and the user id).
    pub identity_values: Vec<String>,
    /// Values that identify the customer or their own records (ids, contact details, card
    /// digits), from the customer's records on the starting state.
    pub customer_facts: Vec<String>,
    pub instruction: Option<String>,
    pub emotion_instruction: Option<String>,
}

/// Keys whose values identify a person or their own records, wherever a domain puts them;
/// the catalogue ids a domain declares (`catalogue_ids` of its `tools.toml`: products,
/// services, devices, a cinema's movies, theaters, auditoriums, shows and seats) are public.
fn customer_key(key: &str, catalogue: &[&str]) -> bool {
    const PERSONAL: &[&str] = &[
        "email",
        "phone",
        "phone_number",
        "dob",
        "date_of_birth",
        "zip",
        "address1",
        "address2",
        "last_four",
    ];
    PERSONAL.contains(&key) || (key.ends_with("_id") && !catalogue.contains(&key))
}

fn collect_facts(key: &str, v: &Value, catalogue: &[&str], out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let distinctive =
                s.chars().count() >= 4 && s.chars().any(|c| c.is_ascii_digit() || c == '@');
            if customer_key(key, catalogue) && distinctive {
                out.push(s.clone());
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|x| collect_facts(key, x, catalogue, out)),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| collect_facts(k, x, catalogue, out)),
        _ => {}
    }
}

/// The customer-specific values of some records (JSON texts; others are skipped);
/// `catalogue` names the `*_id` fields that are the domain's catalogue, not the customer.
pub fn customer_facts(records: &[String], catalogue: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for r in records {
        if let Ok(v) = serde_json::from_str::<Value>(r) {
            collect_facts("", &v, catalogue, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

impl Episode {
    /// Build and replay one rollout of `task` on a fork of `base` (the task's database in
    /// its starting state).
    pub fn build(
        base: &dyn Environment,
        task: &TaskRecord,
        rollout: &RolloutRecord,
    ) -> Result<Episode, AnalysisError> {
        let mut messages: Vec<ChatMessage> = rollout.messages.clone();
        for m in &mut messages {
            m.reasoning_content = None;
        }
        let specs = base.tool_specs();
        let spec = |name: &str| -> Option<&'static ToolSpec> {
            specs.iter().copied().find(|s| s.name == name)
        };
        let reference = task
            .actions
            .iter()
            .enumerate()
            .map(|(j, crate::task::Action { name, kwargs })| {
                let s = spec(name);
                ReferenceAction {
                    write: s
                        .is_some_and(|s| s.kind == ToolKind::Write && is_action(Some(s.intent))),
                    transfer: s.is_some_and(|s| s.intent == Intent::Transfer),
                    intent: task.action_intents.get(j).copied().unwrap_or(0),
                    name: name.clone(),
                    args: kwargs.clone(),
                }
            })
            .collect();
        let mut calls = pair_calls(&messages);
        let mut state = base.fork();
        for c in &mut calls {
            let s = spec(&c.name);
            c.kind = s.map(|s| s.kind);
            c.intent = s.map(|s| s.intent);
            let (Some(s), Some(args)) = (s, c.args.as_ref()) else {
                c.outcome = CallOutcome::SchemaError(if s.is_none() {
                    format!("unknown tool '{}'", c.name)
                } else {
                    "arguments are not valid JSON".to_string()
                });
                continue;
            };
            if let Err(e) = crate::domain::args::validate(&s.parameters, args) {
                c.outcome = CallOutcome::SchemaError(e);
                continue;
            }
            let before = (s.kind == ToolKind::Write)
                .then(|| state.check_policy(&c.name, args).err())
                .flatten();
            let out = state.invoke(&c.name, args);
            if !c.output.is_empty() && out.text != c.output {
                return Err(AnalysisError::Diverged {
                    task_id: rollout.task_id.clone(),
                    trial: rollout.trial,
                    call: c.ordinal,
                    tool: c.name.clone(),
                    step: c.step,
                    recorded: c.output.chars().take(120).collect(),
                    replayed: out.text.chars().take(120).collect(),
                });
            }
            if out.is_error {
                c.outcome = CallOutcome::ToolError(out.text);
            } else {
                c.policy = before;
            }
        }
        let mut identity_values: Vec<String> = task
            .user_facts
            .iter()
            .filter(|f| f.kind == "identity")
            .flat_map(|f| f.values.iter().cloned())
            .collect();
        identity_values.push(task.user_id.clone());
        identity_values.retain(|v| !v.is_empty());
        identity_values.sort();
        identity_values.dedup();
        Ok(Episode {
            task_id: rollout.task_id.clone(),
            trial: rollout.trial,
            reward: rollout.reward,
            termination: rollout.termination.clone(),
            error: rollout.error.clone(),
            messages,
            calls,
            reference,
            customer_facts: customer_facts(
                &base.customer_records(&task.user_id),
                base.catalogue_id_fields(),
            ),
            user_id: task.user_id.clone(),
            identity_values,
            instruction: task.instruction.clone(),
            emotion_instruction: task.emotion_instruction.clone(),
        })
    }

    /// ChatMessage index at which the customer's identity was first established by a tool: the
    /// first successful call whose arguments carry one of the identity values.
    pub fn identity_step(&self) -> Option<usize> {
        self.calls
            .iter()
            .find(|c| {
                c.succeeded()
                    && c.args.as_ref().is_some_and(|a| {
                        let mut leaves = Vec::new();
                        string_leaves(a, &mut leaves);
                        leaves.iter().any(|l| {
                            self.identity_values
                                .iter()
                                .any(|v| l.eq_ignore_ascii_case(v))
                        })
                    })
            })
            .map(|c| c.step)
    }

    /// The text of message `i` (empty when it has none).
    pub fn text(&self, i: usize) -> &str {
        self.messages
            .get(i)
            .and_then(|m| m.content.as_deref())
            .unwrap_or("")
    }

    /// Index of the last message.
    pub fn last_step(&self) -> usize {
        self.messages.len().saturating_sub(1)
    }

    /// Whether the customer said `value` in a message before `step`.
    pub fn user_said_before(&self, value: &str, step: usize) -> bool {
        let value = value.to_lowercase();
        self.messages[..step.min(self.messages.len())]
            .iter()
            .filter(|m| m.role == MessageRole::User)
            .any(|m| {
                m.content
                    .as_deref()
                    .is_some_and(|c| c.to_lowercase().contains(&value))
            })
    }
}

pub fn string_leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|x| string_leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| string_leaves(x, out)),
        _ => {}
    }
}

/// Every tool call of the transcript with its observation (paired by `tool_call_id`, else
/// the first unanswered call), not yet replayed.
fn pair_calls(messages: &[ChatMessage]) -> Vec<ExecutedCall> {
    let mut calls: Vec<ExecutedCall> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut answered: Vec<bool> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role == MessageRole::Assistant {
            for tc in &m.tool_calls {
                calls.push(ExecutedCall {
                    step: i,
                    ordinal: calls.len() + 1,
                    name: tc.name.clone(),
                    args: serde_json::from_str(&tc.arguments).ok(),
                    output: String::new(),
                    kind: None,
                    intent: None,
                    outcome: CallOutcome::Ok,
                    policy: None,
                });
                ids.push(tc.id.clone());
                answered.push(false);
            }
        } else if m.role == MessageRole::Tool {
            let by_id = m
                .tool_call_id
                .as_ref()
                .and_then(|id| (0..calls.len()).find(|&k| !answered[k] && &ids[k] == id));
            if let Some(k) = by_id.or_else(|| (0..calls.len()).find(|&k| !answered[k])) {
                answered[k] = true;
                calls[k].output = m.content.clone().unwrap_or_default();
            }
        }
    }
    calls
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// The arguments that differ between an executed call and a reference action, as
/// `key: got (reference want)` phrases.
pub fn argument_diff(got: &Value, want: &Value) -> String {
    let empty = serde_json::Map::new();
    let (g, w) = (
        got.as_object().unwrap_or(&empty),
        want.as_object().unwrap_or(&empty),
    );
    let mut keys: Vec<&String> = g.keys().chain(w.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !match (g.get(*k), w.get(*k)) {
            (Some(a), Some(b)) => same_value(a, b),
            (None, None) => true,
            _ => false,
        })
        .map(|k| {
            let show = |v: Option<&Value>| v.map_or("absent".to_string(), |v| v.to_string());
            format!("{k}: {} (reference {})", show(g.get(k)), show(w.get(k)))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use crate::domain::Split;

    /// The rule before catalogue ids were declared: any `*_id` key containing one of
    /// these words was public, in every domain.
    fn facts_by_the_old_rule(records: &[String]) -> Vec<String> {
        const WORDS: &[&str] = &[
            "flight",
            "product",
            "item",
            "plan",
            "service",
            "device",
            "movie",
            "theater",
            "auditorium",
            "show",
            "seat",
        ];
        let public: Vec<String> = records
            .iter()
            .filter_map(|r| serde_json::from_str::<serde_json::Value>(r).ok())
            .flat_map(|v| keys(&v))
            .filter(|k| k.ends_with("_id") && WORDS.iter().any(|w| k.contains(w)))
            .collect();
        let public: Vec<&str> = public.iter().map(String::as_str).collect();
        super::customer_facts(records, &public)
    }

    fn keys(v: &serde_json::Value) -> Vec<String> {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .flat_map(|(k, x)| std::iter::once(k.clone()).chain(keys(x)))
                .collect(),
            serde_json::Value::Array(a) => a.iter().flat_map(keys).collect(),
            _ => Vec::new(),
        }
    }

    /// Each domain's declared catalogue ids give the facts the shared word list gave, on
    /// the customers of both its databases: the declarations carry the old rule over.
    #[test]
    fn declared_catalogue_ids_keep_every_domains_customer_facts() {
        let mut public_somewhere = 0;
        for d in crate::domain::registry_builtin() {
            for split in [Split::Train, Split::Eval] {
                let env = d.generate(7, split);
                let catalogue = env.catalogue_id_fields();
                public_somewhere += catalogue.len();
                for user in env.customers().iter().take(60) {
                    let records = env.customer_records(user);
                    assert_eq!(
                        super::customer_facts(&records, catalogue),
                        facts_by_the_old_rule(&records),
                        "{}: customer {user}",
                        d.name()
                    );
                }
            }
        }
        assert!(public_somewhere > 0);
    }

    #[test]
    fn a_cinemas_catalogue_is_public_a_customers_contact_is_not() {
        let records = [
            r#"{"show_id": "78WCHPC-S", "seat_id": "R1-07", "theater_id": "8EA7Z6K-T"}"#
                .to_string(),
            r#"{"booking_id": "4W4B1CI-B", "email": "pablo@mail.example", "last_four": "7970"}"#
                .to_string(),
        ];
        assert_eq!(
            super::customer_facts(&records, &["show_id", "seat_id", "theater_id"]),
            ["4W4B1CI-B", "7970", "pablo@mail.example"]
        );
    }
}
