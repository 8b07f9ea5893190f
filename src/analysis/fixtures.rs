//! Hand-built trajectories for the detector tests: a generated airline database, one
//! customer with two open reservations, baggage changes that the tool and the policy accept
//! (and one the tool accepts but the policy forbids), and a script builder whose tool calls
//! really run, so every recorded observation is the environment's own.

use super::{Episode, Fault, Finding};
use crate::artifact::{RolloutRecord, TaskRecord};
use crate::domain::{Environment, Split, UserFact};
use crate::harness::{ChatMessage, GREETING, ToolCall};
use serde_json::{Value, json};
use std::sync::LazyLock;

static AIRLINE: LazyLock<Box<dyn Environment>> = LazyLock::new(|| {
    crate::domain::find("airline")
        .expect("airline is registered")
        .generate(7, Split::Eval)
});

pub type Action = (String, Value);

pub struct Fixture {
    pub env: &'static dyn Environment,
    pub user_id: String,
    ok: [Action; 2],
    overcharge: Action,
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A baggage change on `reservation` that the tool and (when `within`) the policy accept,
/// or (when not) that the tool accepts and the policy forbids.
fn bag_change(
    env: &dyn Environment,
    reservation: &str,
    payment: &str,
    within: bool,
) -> Option<Action> {
    let r = parse(
        &env.fork()
            .invoke(
                "get_reservation_details",
                &json!({"reservation_id": reservation}),
            )
            .text,
    );
    if r["status"].as_str() == Some("cancelled") {
        return None;
    }
    let total = r["total_baggages"].as_i64()? + 1;
    (0..=total).find_map(|nonfree| {
        let args = json!({"reservation_id": reservation, "total_baggages": total,
            "nonfree_baggages": nonfree, "payment_id": payment});
        let name = "update_reservation_baggages";
        let policy_ok = env.check_policy(name, &args).is_ok();
        let tool_ok = !env.fork().invoke(name, &args).is_error;
        (tool_ok && policy_ok == within).then(|| (name.to_string(), args))
    })
}

impl Fixture {
    pub fn new() -> Fixture {
        let env: &'static dyn Environment = AIRLINE.as_ref();
        for user in env.customers() {
            let profile = parse(
                &env.fork()
                    .invoke("get_user_details", &json!({"user_id": user}))
                    .text,
            );
            let reservations: Vec<String> = profile["reservations"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let payments: Vec<String> = profile["payment_methods"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            for p in &payments {
                let ok: Vec<(String, Action)> = reservations
                    .iter()
                    .filter_map(|r| Some((r.clone(), bag_change(env, r, p, true)?)))
                    .collect();
                if ok.len() < 2 {
                    continue;
                }
                let Some(overcharge) = bag_change(env, &ok[0].0, p, false) else {
                    continue;
                };
                return Fixture {
                    env,
                    user_id: user.clone(),
                    ok: [ok[0].1.clone(), ok[1].1.clone()],
                    overcharge,
                };
            }
        }
        panic!("the generated airline database has no customer with two open reservations");
    }

    /// Two baggage changes within policy on two of the customer's reservations.
    pub fn two_baggage_writes(&self) -> (Action, Action) {
        (self.ok[0].clone(), self.ok[1].clone())
    }

    /// The first change with more paid bags than the policy allows (the tool accepts it).
    pub fn overcharged_bags(&self) -> Action {
        self.overcharge.clone()
    }

    /// A task whose reference actions are `actions` (one intent), and an empty transcript.
    pub fn script(&self, actions: &[Action]) -> Script {
        let task = TaskRecord {
            task_id: "fixture".into(),
            domain: "airline".into(),
            split: crate::split::Split::Eval,
            user_id: self.user_id.clone(),
            actions: actions
                .iter()
                .map(|(name, kwargs)| crate::task::Action {
                    name: name.clone(),
                    kwargs: kwargs.clone(),
                })
                .collect(),
            action_intents: vec![0; actions.len()],
            intents: vec![actions.iter().map(|a| a.0.clone()).collect()],
            user_facts: vec![UserFact {
                kind: "identity".into(),
                text: format!("Your user id is {}.", self.user_id),
                values: vec![self.user_id.clone()],
                ids: vec![],
            }],
            ..Default::default()
        };
        Script {
            base: self.env,
            state: self.env.fork(),
            task,
            messages: vec![
                ChatMessage::system("policy"),
                ChatMessage::assistant(GREETING),
            ],
            calls: 0,
        }
    }
}

/// A transcript being written: messages and real tool calls on the script's own fork.
pub struct Script {
    base: &'static dyn Environment,
    state: Box<dyn Environment>,
    pub task: TaskRecord,
    pub messages: Vec<ChatMessage>,
    calls: usize,
}

impl Script {
    pub fn user(&mut self, text: &str) -> usize {
        self.messages.push(ChatMessage::user(text));
        self.messages.len() - 1
    }

    pub fn agent(&mut self, text: &str) -> usize {
        self.messages.push(ChatMessage::assistant(text));
        self.messages.len() - 1
    }

    /// The agent calls `name`; the call runs and its observation follows. Returns the index
    /// of the assistant message.
    pub fn call(&mut self, name: &str, args: Value) -> usize {
        self.calls += 1;
        let id = format!("call_{}", self.calls);
        let call = ToolCall {
            id: id.clone(),
            name: name.into(),
            arguments: args.to_string(),
        };
        self.messages
            .push(ChatMessage::assistant_tool_calls(None, vec![call]));
        let step = self.messages.len() - 1;
        let out = self.state.invoke(name, &args);
        self.messages.push(ChatMessage::tool(id, name, out.text));
        step
    }

    pub fn rollout(&self, termination: &str, reward: i32) -> RolloutRecord {
        RolloutRecord {
            task_id: self.task.task_id.clone(),
            domain: "airline".into(),
            split: crate::split::Split::Eval,
            agent_model: "fixture-agent".into(),
            user_model: "fixture-user".into(),
            messages: self.messages.clone(),
            reward,
            termination: termination.into(),
            ..Default::default()
        }
    }

    pub fn episode(&self, termination: &str, reward: i32) -> Episode {
        Episode::build(self.base, &self.task, &self.rollout(termination, reward))
            .expect("a fixture replays")
    }
}

/// (fault, step, call) of some findings, for exact assertions.
pub fn labels(findings: &[Finding]) -> Vec<(Fault, Option<usize>, Option<usize>)> {
    findings.iter().map(|f| (f.fault, f.step, f.call)).collect()
}
