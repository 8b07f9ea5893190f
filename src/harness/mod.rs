//! The agent–user–environment harness: one episode of a task, its reward, and the
//! built-in offline roles (a scripted user simulator and an oracle agent).
//!
//! An episode follows tau-bench's formulation: the user opens (after the agent's greeting),
//! the agent answers with text or tool calls; every tool call of a message is executed in
//! order on the episode's fork and answered with its own tool message; text goes to the
//! user. It ends on `###STOP###`, on `###UNSATISFIED###` (also glued to other text), on a
//! terminating tool, at the step limit, or on an error.
//!
//! Roles are traits returning boxed futures, so endpoint-backed roles (async HTTP) and the
//! scripted ones share one loop.
//!
//! Architecture invariant: the harness knows domains only through `Environment`, tasks
//! only through `TaskRecord`; it never reads or writes artifacts.

pub mod agent;
pub mod batch;
pub mod discovery;
pub mod endpoint;
pub mod metrics;
pub mod pacing;
pub mod readback;
pub mod reward;
pub mod session;
pub mod user;
mod user_lines;

use crate::domain::Environment;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub const GREETING: &str = "Hi! How can I help you today?";
pub const STOP: &str = "###STOP###";
pub const UNSATISFIED: &str = "###UNSATISFIED###";

/// Transcripts are the LLM layer's messages: what a role is sent and what an episode
/// records are one type (reasoning is kept in the record, stripped from requests).
pub use crate::llm::{ChatMessage, MessageRole, ToolCall, Usage};

/// An error that ends an episode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HarnessError {
    /// The endpoint failed after its retries (5xx, 429, timeout, unreachable).
    #[error("endpoint error: {0}")]
    Endpoint(String),
    /// The agent produced something unusable (e.g. malformed tool call).
    #[error("agent error: {0}")]
    Agent(String),
    /// The conversation outgrew a role's context window (our estimate or the server's
    /// refusal): the episode ends as `context_exceeded`, is scored, and is not retried.
    #[error("{0}")]
    ContextExceeded(String),
}

/// The agent role: sees the transcript (system prompt = policy first), answers with one
/// assistant message (text and/or tool calls).
pub trait Agent: Send {
    fn model_id(&self) -> String;
    /// The mistakes a scripted agent made on purpose in this episode, as it made them
    /// (`None` for model agents, which cannot know). Ground truth for measuring the failure
    /// analysis; the analysis itself never reads it.
    fn injected_mistakes(&self) -> Option<Vec<String>> {
        None
    }
    fn respond<'a>(
        &'a mut self,
        transcript: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(ChatMessage, Usage), HarnessError>>;
}

/// The user role: sees only the agent's text messages.
pub trait User: Send {
    fn model_id(&self) -> String;
    /// What cost the user's patience so far, in order (`write_without_consent`,
    /// `identity_asked_again`, `apology_without_progress`, `asked_what_was_told`): why a
    /// scripted customer left. A model user keeps no such count (empty).
    fn frictions(&self) -> Vec<&'static str> {
        Vec::new()
    }
    fn reply<'a>(
        &'a mut self,
        agent_text: &'a str,
    ) -> BoxFuture<'a, Result<(String, Usage), HarnessError>>;
}

/// Why an episode ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    UserStop,
    UserUnsatisfied,
    AgentTransfer,
    MaxSteps,
    EndpointError,
    AgentError,
    ContextExceeded,
}

impl Termination {
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::UserStop => "user_stop",
            Termination::UserUnsatisfied => "user_unsatisfied",
            Termination::AgentTransfer => "agent_transfer",
            Termination::MaxSteps => "max_steps",
            Termination::EndpointError => "endpoint_error",
            Termination::AgentError => "agent_error",
            Termination::ContextExceeded => "context_exceeded",
        }
    }
}

/// A finished episode.
#[derive(Clone, Debug)]
pub struct Episode {
    /// Full transcript: system, user, assistant (with tool calls and reasoning), tool.
    pub messages: Vec<ChatMessage>,
    pub termination: Termination,
    pub error: Option<String>,
    pub final_hash: String,
    pub agent_usage: Usage,
    pub user_usage: Usage,
}

/// True when a user message ends the episode with this marker, as models really write it:
/// glued to text, followed by punctuation, in any case, with spaces inside the hashes
/// (`### stop ###`), two to four hashes a side, or without the closing hashes at the end of
/// a line (`###STOP`), wrapped in `**` or backticks. The word must stand alone
/// (`###STOPPED###` is not a marker).
pub fn has_marker(text: &str, marker: &str) -> bool {
    let word = marker.trim_matches('#').to_ascii_lowercase();
    let lower = text.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'#' || (i > 0 && b[i - 1] == b'#') {
            i += 1;
            continue;
        }
        let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
        let mut j = i + hashes;
        i = j;
        if !(2..=4).contains(&hashes) {
            continue;
        }
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if !lower[j..].starts_with(&word) {
            continue;
        }
        j += word.len();
        if b.get(j)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            continue;
        }
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        let closing = b[j..].iter().take_while(|&&c| c == b'#').count();
        let at_line_end = b[j..]
            .iter()
            .take_while(|&&c| c != b'\n')
            .all(|c| c.is_ascii_punctuation() || c.is_ascii_whitespace());
        if (2..=4).contains(&closing) || (closing == 0 && at_line_end) {
            return true;
        }
    }
    false
}

/// The last end marker a text carries (`###STOP###` or `###UNSATISFIED###`), canonical.
pub fn last_marker(text: &str) -> Option<&'static str> {
    // Which comes last: cut the text after each candidate line and test the tail.
    text.lines().rev().find_map(|line| {
        [UNSATISFIED, STOP]
            .into_iter()
            .find(|m| has_marker(line, m))
    })
}

/// Run one episode on `env` (a fresh fork owned by the episode): the agent role answers
/// each of its turns of a [`session::Session`].
pub async fn run_episode(
    env: &mut dyn Environment,
    policy: &str,
    agent: &mut dyn Agent,
    user: &mut dyn User,
    max_steps: usize,
) -> Episode {
    let mut session = session::Session::new(env, policy, max_steps);
    session.advance(user).await;
    while session.termination().is_none() {
        let reply = agent.respond(session.messages()).await;
        session.agent_turn(env, reply);
        session.advance(user).await;
    }
    session.finish(env)
}

/// The question sentences of a message, lower-cased and joined ("Here is what I found.
/// The email is a@b.c. Anything else?" -> "anything else?"): what a reply should answer,
/// without the statements around it.
pub fn questions(text: &str) -> String {
    let mut out = String::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            // A dot inside a value (an amount, an email address) does not end a sentence.
            let next = text[i + c.len_utf8()..].chars().next();
            if c == '.' && next.is_some_and(|n| !n.is_whitespace()) {
                continue;
            }
            if c == '?' {
                out.push_str(text[start..=i].trim());
                out.push(' ');
            }
            start = i + c.len_utf8();
        }
    }
    out.trim_end().to_lowercase()
}

/// Turn a second-person instruction sentence into what the customer says ("You want to
/// cancel your trip." -> "I want to cancel my trip."). An instruction's stage direction
/// "you ask for ..." is said as a request ("I'd like ...", not "I ask for ...").
pub fn first_person(text: &str) -> String {
    const ASKING: &[(&str, &str)] = &[
        ("I ask for ", "I'd like "),
        ("I ask to ", "I'd like to "),
        ("I ask whether ", "I'd like to know whether "),
        ("I ask if ", "I'd like to know if "),
        ("I ask what ", "I'd like to know what "),
        ("I ask which ", "I'd like to know which "),
        ("I ask how ", "I'd like to know how "),
        ("I ask about ", "I'd like to know about "),
    ];
    // The customer speaks to the agent: what the instruction wants "the agent" to do,
    // the customer asks of "you".
    const TO_THE_AGENT: &[(&str, &str)] = &[
        ("like the agent to ", "like you to "),
        ("want the agent to ", "want you to "),
        ("need the agent to ", "need you to "),
        ("expect the agent to ", "expect you to "),
    ];
    ASKING
        .iter()
        .chain(TO_THE_AGENT)
        .fold(swap_person(text), |said, (from, to)| said.replace(from, to))
}

fn swap_person(text: &str) -> String {
    // "you" is the object after these words ("tell you", "for you", "asks you"), and the
    // subject elsewhere ("the reason you give", "means you cannot", "if you are").
    const OBJECT_AFTER: &[&str] = &[
        "to",
        "for",
        "with",
        "at",
        "about",
        "from",
        "by",
        "on",
        "of",
        "tell",
        "tells",
        "told",
        "give",
        "gives",
        "gave",
        "ask",
        "asks",
        "asked",
        "send",
        "sends",
        "show",
        "shows",
        "help",
        "helps",
        "let",
        "lets",
        "call",
        "calls",
        "offer",
        "offers",
        "charge",
        "charges",
        "charged",
        "remind",
        "reminds",
        "thank",
        "contact",
        "contacts",
        "owe",
        "owes",
        "sell",
        "sold",
        "bill",
        "billed",
        "refund",
        "refunds",
        "email",
        "text",
        "assure",
        "assures",
        "reach",
        "get",
        "gets",
        "put",
        "puts",
        "keep",
        "keeps",
        "cost",
        "costs",
        "than",
        "like",
        "bring",
        "brings",
        "allow",
        "allows",
        "transfer",
        "transfers",
        "connect",
        "connects",
        "pay",
        "pays",
        "hand",
        "hands",
        "want",
        "wants",
        "wanted",
        "need",
        "needs",
        "expect",
        "expects",
        "make",
        "makes",
    ];
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let (core, tail) =
            word.split_at(word.trim_end_matches(|c: char| !c.is_alphanumeric()).len());
        let prev = i
            .checked_sub(1)
            .map(|p| {
                words[p]
                    .trim_end_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .unwrap_or_default();
        let object_position =
            OBJECT_AFTER.contains(&prev.as_str()) && !words[i - 1].ends_with([',', '.', ';', ':']);
        let subject = tail.is_empty() && !object_position;
        let swapped = match core {
            "You" => "I",
            "you" if prev == "thank" => "you",
            "you" if subject => "I",
            "you" => "me",
            "Your" => "My",
            "your" => "my",
            "yours" => "mine",
            "You're" | "you're" => "I'm",
            "yourself" => "myself",
            "are" if out.last().is_some_and(|w| w == "I") => "am",
            "were" if out.last().is_some_and(|w| w == "I") => "was",
            other => other,
        };
        out.push(format!("{swapped}{tail}"));
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_the_sentences_that_ask() {
        assert_eq!(
            questions("Here is what I found. The email is a.b@c.com. Anything else?"),
            "anything else?"
        );
        assert_eq!(
            questions("I can help. Could you verify your identity? Thanks."),
            "could you verify your identity?"
        );
        assert_eq!(questions("The balance is 146.50."), "");
    }

    #[test]
    fn first_person_rewrites_the_instruction_voice() {
        assert_eq!(
            first_person("You want to cancel your trip."),
            "I want to cancel my trip."
        );
        assert_eq!(first_person("Your user id is ab_1."), "My user id is ab_1.");
        assert_eq!(
            first_person("Then you want the agent to tell you if you are booked."),
            "Then I want you to tell me if I am booked."
        );
        for (you, me) in [
            (
                "The reason you give is suspected fraud.",
                "The reason I give is suspected fraud.",
            ),
            (
                "A health problem means you cannot travel.",
                "A health problem means I cannot travel.",
            ),
            (
                "If the agent asks you to verify who you are, thank you.",
                "If the agent asks me to verify who I am, thank you.",
            ),
            (
                "The card you use must be the one they charged you for.",
                "The card I use must be the one they charged me for.",
            ),
            (
                "Your calendar needs updating, so you ask for each appointment.",
                "My calendar needs updating, so I'd like each appointment.",
            ),
            (
                "To be safe, you ask whether it got cancelled.",
                "To be safe, I'd like to know whether it got cancelled.",
            ),
        ] {
            assert_eq!(first_person(you), me);
        }
        assert!(has_marker("Thanks!###STOP###", STOP));
        assert!(has_marker("no.###UNSATISFIED###", UNSATISFIED));
    }

    #[test]
    fn end_markers_as_models_write_them() {
        for said in [
            "###STOP###",
            "###STOP###.",
            "Thanks, that's all! ###STOP###!",
            "###stop###",
            "### STOP ###",
            "##STOP##",
            "**###STOP###**",
            "`###STOP###`",
            "That's all.\n###STOP",
            "Bye ###STOP.",
            "\"###STOP###\"",
        ] {
            assert!(has_marker(said, STOP), "{said:?}");
        }
        for not in [
            "Please do not stop yet.",
            "###STOPPED###",
            "#STOP#",
            "###STOP_NOW###",
            "###STOP and then continue with the refund",
            "######STOP######",
            "The code is ###UNSATISFIED###",
        ] {
            assert!(!has_marker(not, STOP), "{not:?}");
        }
        assert!(has_marker("I give up. ### Unsatisfied ###", UNSATISFIED));
        assert_eq!(
            last_marker("I could say ###STOP### now.\nNo: ###UNSATISFIED###"),
            Some(UNSATISFIED)
        );
        assert_eq!(last_marker("All good.\n###STOP###."), Some(STOP));
        assert_eq!(last_marker("nothing here"), None);
    }
}
