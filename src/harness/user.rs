//! The scripted user simulator: a deterministic, rule-based stand-in for an
//! emotion-conditioned user model, for offline runs and tests (its model id is
//! `scripted:user`; it is never presented as model output).
//!
//! It states one intent at a time (first person, from the task's request sentences),
//! answers identity and payment questions from the task's user facts, confirms proposed
//! actions, and counts friction — being asked for something it already gave, apologies
//! without progress, a change made without its consent, questions it cannot place —
//! against a patience budget set by its urgency, trust and emotion family. It ends with
//! `###STOP###` once every intent was handled, or `###UNSATISFIED###` when friction
//! exceeds its patience.
//!
//! Unlike a model-backed user simulator (which only ever reads the natural-language emotion
//! instruction, see `endpoint.rs`), this rule-based stand-in sets its patience from the
//! task's condition labels: it cannot read tone from text, and the labels are what the
//! instruction was drawn from.

use super::{BoxFuture, GREETING, HarnessError, STOP, UNSATISFIED, Usage, User, first_person};
use crate::artifact::TaskRecord;
use crate::seed::derive_rng;
use crate::task::TaskParts;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

pub struct ScriptedUser {
    intents: Vec<String>,
    intent_has_write: Vec<bool>,
    identity: Option<String>,
    payment: Vec<String>,
    family: Option<String>,
    next_intent: usize,
    identity_given: bool,
    confirmed_in_intent: bool,
    patience: i32,
    friction: i32,
    rng: ChaCha8Rng,
}

/// Patience budget: urgent, skeptical, angry or disgusted users tolerate less friction.
pub fn patience(urgency: Option<&str>, trust: Option<&str>, family: Option<&str>) -> i32 {
    let base = match urgency {
        Some("high") => 2,
        Some("low") => 4,
        _ => 3,
    };
    let trust = match trust {
        Some("trusting") => 1,
        Some("skeptical") => -1,
        _ => 0,
    };
    let family = match family {
        Some("anger") | Some("disgust") => -1,
        Some("enjoyment") => 1,
        _ => 0,
    };
    (base + trust + family).max(1)
}

impl ScriptedUser {
    /// Build from a task; `with_emotion = false` is the no-emotion variant.
    pub fn new(
        task: &TaskRecord,
        parts: &TaskParts,
        with_emotion: bool,
        seed: u64,
        trial: u32,
    ) -> ScriptedUser {
        let TaskParts {
            actions,
            requests,
            user_facts: facts,
        } = parts;
        let n = task.intents.len();
        let mut intents = vec![String::new(); n];
        let mut intent_has_write = vec![false; n];
        for (j, &i) in task.action_intents.iter().enumerate() {
            let i = i as usize;
            if i >= n {
                continue;
            }
            if let Some(Some(r)) = requests.get(j) {
                if !intents[i].is_empty() {
                    intents[i].push(' ');
                }
                intents[i].push_str(&first_person(r));
            }
            let name = actions.get(j).map_or("", |a| a.name.as_str());
            intent_has_write[i] |= !crate::domain::find(&task.domain)
                .map(|d| {
                    d.tool_specs()
                        .iter()
                        .any(|s| s.name == name && s.kind == crate::domain::ToolKind::Read)
                })
                .unwrap_or(true);
        }
        let keep: Vec<bool> = intents.iter().map(|s| !s.is_empty()).collect();
        let intent_has_write = intent_has_write
            .into_iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(w, _)| w)
            .collect();
        let intents = intents.into_iter().filter(|s| !s.is_empty()).collect();
        let (urgency, trust, family) = if with_emotion {
            (
                task.urgency.as_deref(),
                task.trust.as_deref(),
                task.emotion_family.as_deref(),
            )
        } else {
            (None, None, None)
        };
        ScriptedUser {
            intents,
            intent_has_write,
            identity: facts
                .iter()
                .find(|f| f.kind == "identity")
                .map(|f| first_person(&f.text)),
            payment: facts
                .iter()
                .filter(|f| f.kind == "payment")
                .map(|f| first_person(&f.text))
                .collect(),
            family: family.map(str::to_string),
            next_intent: 0,
            identity_given: false,
            confirmed_in_intent: false,
            patience: patience(urgency, trust, family),
            friction: 0,
            rng: derive_rng(seed, &["user", &task.task_id, &trial.to_string()]),
        }
    }

    fn tint(&mut self, text: String) -> String {
        let openers: &[&str] = match self.family.as_deref() {
            Some("anger") => &["Look, ", "Honestly, "],
            Some("fear") => &[
                "I'm a little worried, so ",
                "Sorry, I'm nervous about this: ",
            ],
            Some("sadness") => &["Well, ", "I suppose "],
            Some("disgust") => &["Frankly, ", "Ugh, "],
            Some("enjoyment") => &["Great, ", "Lovely, "],
            _ => return text,
        };
        if self.rng.random_bool(0.5) {
            let o = openers[self.rng.random_range(0..openers.len())];
            let mut c = text.chars();
            let rest = match c.next() {
                Some(f) if !text.starts_with("I ") && !text.starts_with("I'") => {
                    f.to_lowercase().collect::<String>() + c.as_str()
                }
                Some(f) => f.to_string() + c.as_str(),
                None => String::new(),
            };
            format!("{o}{rest}")
        } else {
            text
        }
    }

    fn next_request(&mut self) -> String {
        self.confirmed_in_intent = false;
        match self.intents.get(self.next_intent) {
            Some(r) => {
                self.next_intent += 1;
                r.clone()
            }
            None => format!("That's everything I needed, thank you. {STOP}"),
        }
    }

    /// The reply to one agent message, before the patience check.
    fn respond(&mut self, agent: &str) -> String {
        if agent == GREETING {
            return self.next_request();
        }
        let lower = agent.to_lowercase();
        let asks = lower.contains('?');
        if asks
            && (lower.contains("verify")
                || lower.contains("identity")
                || lower.contains("user id")
                || lower.contains("email"))
        {
            if self.identity_given {
                self.friction += 1;
            }
            self.identity_given = true;
            return self
                .identity
                .clone()
                .unwrap_or_else(|| "I don't have an account number at hand.".into());
        }
        if asks
            && (lower.contains("proceed") || lower.contains("confirm") || lower.contains("yes/no"))
        {
            self.confirmed_in_intent = true;
            return "Yes, please go ahead.".into();
        }
        if asks && lower.contains("payment") {
            return self
                .payment
                .first()
                .cloned()
                .unwrap_or_else(|| "Use whatever is on file.".into());
        }
        if lower.contains("anything else") {
            let wrote = self
                .next_intent
                .checked_sub(1)
                .and_then(|i| self.intent_has_write.get(i))
                .copied()
                .unwrap_or(false);
            if wrote && !self.confirmed_in_intent {
                // A change made without asking erodes trust.
                self.friction += 2;
            }
            return self.next_request();
        }
        if (lower.contains("sorry") || lower.contains("apolog")) && !lower.contains("done") {
            self.friction += 1;
            return "Okay. Can we keep going, please?".into();
        }
        if asks {
            self.friction += 1;
            return "I've told you what I need; please just help me with that.".into();
        }
        "Okay.".into()
    }
}

impl User for ScriptedUser {
    fn model_id(&self) -> String {
        "scripted:user".into()
    }

    fn reply<'a>(
        &'a mut self,
        agent_text: &'a str,
    ) -> BoxFuture<'a, Result<(String, Usage), HarnessError>> {
        Box::pin(async move {
            let text = self.respond(agent_text);
            if self.friction > self.patience {
                return Ok((
                    format!("This is not working for me and I'm done here. {UNSATISFIED}"),
                    Usage::default(),
                ));
            }
            let text = if text.contains(STOP) {
                text
            } else {
                self.tint(text)
            };
            Ok((text, Usage::default()))
        })
    }
}
