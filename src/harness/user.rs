//! The scripted user simulator: a deterministic, rule-based stand-in for an
//! emotion-conditioned user model, for offline runs and tests (its model id is
//! `scripted:user`; it is never presented as model output).
//!
//! It states a task's requests a turn at a time, at most two in one message (first
//! person, from the task's request sentences; [`super::pacing`]), answers identity and
//! payment questions from the task's user facts, confirms proposed actions, and counts
//! friction — being asked for something it already gave, apologies without progress, a
//! change made without its consent, questions it cannot place — against a patience budget
//! set by its urgency, trust and emotion family. It ends with `###STOP###` once every
//! intent was handled, or `###UNSATISFIED###` when friction exceeds its patience (the
//! paper's triggers: repeated questions, delays, eroded trust).
//!
//! It sounds like its condition ([`Voice`]): it opens with a line of its emotion, greets or
//! not by its politeness, says how much time it has or how far it trusts the agent, confirms
//! in the manner of its trust (a skeptical customer says it will check), reacts to each
//! result by its feeling, and closes warmly, plainly or curtly. When the instruction tells
//! it to begin vaguely, it opens with its goal in general terms and gives the details when
//! the agent asks (with the identity answer, or in answer to a question about them). The
//! no-emotion variant speaks plainly.
//!
//! Unlike a model-backed user simulator (which only ever reads the natural-language emotion
//! instruction, see `endpoint.rs`), this rule-based stand-in reads the task's condition
//! labels: it cannot read tone from text, and the labels are what the instruction was
//! drawn from.

pub use super::user_lines::{SpokenLine, spoken_lines};
use super::user_lines::{
    Voice, acknowledgements, closing_tails, closings, confirmations, emotion_lines, greetings,
    pace_lines, reaction_lines, trust_lines, vague_goal,
};
use super::{BoxFuture, GREETING, HarnessError, STOP, UNSATISFIED, Usage, User, first_person};
use crate::artifact::TaskRecord;
use crate::domain::{Intent, ToolKind};
use crate::seed::derive_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

pub struct ScriptedUser {
    intents: Vec<String>,
    intent_has_write: Vec<bool>,
    identity: Option<String>,
    payment: Vec<String>,
    voice: Voice,
    /// The first request's details, held back by a customer told to begin vaguely.
    held_back: Option<String>,
    next_intent: usize,
    identity_given: bool,
    confirmed_in_intent: bool,
    patience: i32,
    friction: i32,
    /// What cost patience, in order (see [`super::User::frictions`]).
    causes: Vec<&'static str>,
    /// The last line said from each bank (so the same words are not said twice running).
    said: Vec<String>,
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

/// Cues of a refiner's instruction to begin vaguely and give details only when asked.
const VAGUE_CUES: &[&str] = &[
    "general terms",
    "every detail at once",
    "begin vaguely",
    "only when the agent asks",
    "let the agent ask",
];

/// Lower-case the first letter unless it starts "I" as a word (for text after a lead-in).
fn continue_with(text: &str) -> String {
    if text.starts_with("I ") || text.starts_with("I'") {
        return text.to_string();
    }
    let mut c = text.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

impl ScriptedUser {
    /// Build from a task; `with_emotion = false` is the no-emotion variant.
    pub fn new(task: &TaskRecord, with_emotion: bool, seed: u64, trial: u32) -> ScriptedUser {
        let TaskRecord {
            actions,
            requests,
            user_facts: facts,
            ..
        } = task;
        let specs = crate::domain::find(&task.domain)
            .map(|d| d.tool_specs())
            .unwrap_or_default();
        let spec = |name: &str| specs.iter().find(|s| s.name == name);
        // One "intent" here is one turn of the customer's: at most two requests of a task
        // intent ([`super::pacing`]).
        let turns = super::pacing::turns(&task.action_intents, requests);
        let n = turns.iter().map(|&t| t as usize + 1).max().unwrap_or(0);
        let mut intents = vec![String::new(); n];
        let mut intent_has_write = vec![false; n];
        let mut kinds = vec![Intent::Lookup; n];
        for (j, &i) in turns.iter().enumerate() {
            let i = i as usize;
            if let Some(Some(r)) = requests.get(j) {
                if !intents[i].is_empty() {
                    intents[i].push(' ');
                }
                intents[i].push_str(&first_person(r));
            }
            let name = actions.get(j).map_or("", |a| a.name.as_str());
            let write = spec(name).is_none_or(|s| s.kind != ToolKind::Read);
            intent_has_write[i] |= write;
            if let Some(s) = spec(name).filter(|_| write)
                && kinds[i] == Intent::Lookup
            {
                kinds[i] = s.intent;
            }
        }
        let keep: Vec<bool> = intents.iter().map(|s| !s.is_empty()).collect();
        fn kept<T>(v: Vec<T>, keep: &[bool]) -> Vec<T> {
            v.into_iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(x, _)| x)
                .collect()
        }
        let intent_has_write = kept(intent_has_write, &keep);
        let kinds = kept(kinds, &keep);
        let intents: Vec<String> = intents.into_iter().filter(|s| !s.is_empty()).collect();
        let voice = if with_emotion {
            Voice::of(task)
        } else {
            Voice::default()
        };
        let vague = task
            .instruction
            .as_deref()
            .is_some_and(|t| VAGUE_CUES.iter().any(|c| t.to_lowercase().contains(c)));
        let mut rng = derive_rng(seed, &["user", &task.task_id, &trial.to_string()]);
        let held_back = if vague {
            kinds.first().map(|k| {
                let goal = vague_goal(*k);
                goal[rng.random_range(0..goal.len())].to_string()
            })
        } else {
            None
        };
        ScriptedUser {
            patience: patience(
                voice.urgency.as_deref(),
                voice.trust.as_deref(),
                voice.family.as_deref(),
            ),
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
            voice,
            held_back,
            next_intent: 0,
            identity_given: false,
            confirmed_in_intent: false,
            friction: 0,
            causes: Vec::new(),
            said: Vec::new(),
            rng,
        }
    }

    /// One line of `bank`, never the line this user said last from it.
    fn pick(&mut self, bank: &[&str]) -> Option<String> {
        if bank.is_empty() {
            return None;
        }
        let mut i = self.rng.random_range(0..bank.len());
        if bank.len() > 1 && self.said.iter().any(|s| s == bank[i]) {
            i = (i + 1) % bank.len();
        }
        let line = bank[i].to_string();
        self.said.retain(|s| !bank.contains(&s.as_str()));
        self.said.push(line.clone());
        Some(line)
    }

    /// The first message: a greeting by politeness, the emotion's line, the first request
    /// (or its goal in general terms), and how much time or trust the customer has.
    fn opening(&mut self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.pick(greetings(self.voice.politeness())));
        if let Some(e) = self.voice.emotion.clone() {
            parts.extend(self.pick(emotion_lines(&e)));
        }
        let first = self.intents.first().cloned().unwrap_or_default();
        self.next_intent = 1;
        match self.held_back.clone() {
            Some(goal) => {
                parts.push(goal);
                // The details wait until the agent asks for them.
                self.held_back = Some(first);
            }
            None => parts.push(first),
        }
        if self.voice.emotion.is_some() {
            let pace = pace_lines(self.voice.urgency());
            let trust = trust_lines(self.voice.trust());
            let bank = if !pace.is_empty() && self.rng.random_bool(0.5) {
                pace
            } else {
                trust
            };
            parts.extend(self.pick(bank));
        }
        parts.join(" ")
    }

    fn closing(&mut self) -> String {
        let mut text = self
            .pick(closings(self.voice.politeness()))
            .unwrap_or_default();
        if let Some(f) = self.voice.family.clone()
            && self.rng.random_bool(0.6)
            && let Some(tail) = self.pick(closing_tails(&f))
        {
            text = format!("{text} {tail}");
        }
        format!("{text} {STOP}")
    }

    fn next_request(&mut self) -> String {
        self.confirmed_in_intent = false;
        let Some(r) = self.intents.get(self.next_intent).cloned() else {
            return self.closing();
        };
        self.next_intent += 1;
        let mut parts: Vec<String> = Vec::new();
        let reaction = self
            .voice
            .family
            .clone()
            .filter(|_| self.rng.random_bool(0.5))
            .and_then(|f| self.pick(reaction_lines(&f)));
        match reaction {
            Some(r) => parts.push(r),
            None => parts.extend(self.pick(acknowledgements(&self.voice))),
        }
        let lead = self
            .pick(&[
                "Next, ",
                "Also, ",
                "One more thing: ",
                "There's something else: ",
            ])
            .unwrap_or_default();
        parts.push(format!("{lead}{}", continue_with(&r)));
        parts.join(" ")
    }

    fn unsatisfied(&self) -> String {
        let why = match self.voice.politeness() {
            "warm" => "I'm sorry, but this isn't working for me. I'll try another time.",
            "cold" => "This is going nowhere. I'm done.",
            _ => "This is not working for me and I'm done here.",
        };
        format!("{why} {UNSATISFIED}")
    }

    /// The reply to one agent message, before the patience check.
    fn respond(&mut self, agent: &str) -> String {
        if agent == GREETING {
            return self.opening();
        }
        // What the agent asks, not what it reports: "The email is ..." in an answer is not
        // an identity question.
        let lower = super::questions(agent);
        let asks = !lower.is_empty();
        if asks
            && (lower.contains("verify")
                || lower.contains("identity")
                || lower.contains("user id")
                || lower.contains("email"))
        {
            let again = self.identity_given;
            if again {
                self.friction += 1;
                self.causes.push("identity_asked_again");
            }
            self.identity_given = true;
            let id = self
                .identity
                .clone()
                .unwrap_or_else(|| "I don't have an account number at hand.".into());
            let lead = match (again, self.voice.politeness(), self.voice.trust()) {
                (true, _, "skeptical") | (true, "cold", _) => "I already gave you that. ",
                (true, _, _) => "Sure, again: ",
                (false, "warm", _) => "Of course. ",
                _ => "",
            };
            let mut reply = format!("{lead}{id}");
            if let Some(details) = self.held_back.take() {
                reply = format!("{reply} Here is what I need: {}", continue_with(&details));
            }
            return reply;
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
                self.causes.push("write_without_consent");
            }
            return self.next_request();
        }
        if asks
            && (lower.contains("proceed") || lower.contains("confirm") || lower.contains("yes/no"))
        {
            self.confirmed_in_intent = true;
            let mut yes = self
                .pick(confirmations(&self.voice))
                .unwrap_or_else(|| "Yes, please go ahead.".into());
            if self.voice.urgency() == "high" && self.rng.random_bool(0.3) {
                yes.push_str(" Quickly, please.");
            }
            return yes;
        }
        if asks && lower.contains("payment") {
            return self
                .payment
                .first()
                .cloned()
                .unwrap_or_else(|| "Use whatever is on file.".into());
        }
        let full = agent.to_lowercase();
        if (full.contains("sorry") || full.contains("apolog")) && !full.contains("done") {
            self.friction += 1;
            self.causes.push("apology_without_progress");
            return match self.voice.urgency() {
                "high" => "I need this fixed, not apologies. Can we keep going?",
                "low" => "That's all right. Shall we carry on?",
                _ => "Okay. Can we keep going, please?",
            }
            .into();
        }
        if asks {
            // A question about what the customer wants, from one who held the details back.
            if let Some(details) = self.held_back.take() {
                return details;
            }
            self.friction += 1;
            self.causes.push("asked_what_was_told");
            return match self.voice.trust() {
                "skeptical" => "I already told you what I need. Why is this so hard?",
                _ => "I've told you what I need; please just help me with that.",
            }
            .into();
        }
        self.pick(&["Okay.", "Alright.", "I see."])
            .unwrap_or_default()
    }
}

impl User for ScriptedUser {
    fn model_id(&self) -> String {
        "scripted:user".into()
    }

    fn frictions(&self) -> Vec<&'static str> {
        self.causes.clone()
    }

    fn reply<'a>(
        &'a mut self,
        agent_text: &'a str,
    ) -> BoxFuture<'a, Result<(String, Usage), HarnessError>> {
        Box::pin(async move {
            let text = self.respond(agent_text);
            if self.friction > self.patience {
                return Ok((self.unsatisfied(), Usage::default()));
            }
            Ok((text, Usage::default()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task of one intent with five asked reads.
    fn five_asks() -> TaskRecord {
        let names = [
            "get_customer_details",
            "get_bills",
            "get_services",
            "get_plan",
            "get_usage",
        ];
        let actions = names
            .iter()
            .map(|n| crate::task::Action {
                name: n.to_string(),
                kwargs: serde_json::json!({}),
            })
            .collect::<Vec<_>>();
        TaskRecord {
            task_id: "t".into(),
            domain: "telecom".into(),
            requests: (1..=5)
                .map(|i| Some(format!("You want answer {i}.")))
                .collect(),
            actions,
            action_intents: vec![0; 5],
            ..TaskRecord::default()
        }
    }

    #[test]
    fn the_customer_says_two_requests_a_turn() {
        let mut user = ScriptedUser::new(&five_asks(), false, 1, 0);
        let said = |text: &str, i: usize| text.contains(&format!("answer {i}"));
        let first = user.respond(GREETING);
        assert!(
            said(&first, 1) && said(&first, 2) && !said(&first, 3),
            "{first}"
        );
        let second =
            user.respond("Here is what I found. Is there anything else I can help you with?");
        assert!(
            said(&second, 3) && said(&second, 4) && !said(&second, 5),
            "{second}"
        );
        let third = user.respond("Done. Is there anything else I can help you with?");
        assert!(said(&third, 5), "{third}");
        let last = user.respond("Done. Is there anything else I can help you with?");
        assert!(last.ends_with(STOP), "{last}");
    }
}
