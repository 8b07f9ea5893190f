//! Unconfirmed writes, a policy breach every domain policy names ("confirm before every
//! change") but no state check can see: a write the agent called (whether or not the tool
//! then refused it) when the customer's
//! latest message was not a clear yes to a question the agent had just asked. One
//! confirmation may cover several writes the agent listed together, so only the customer's
//! latest message before the call counts.
//!
//! Affirmation is read from words ("yes", "go ahead", "proceed", "confirm", ...) that lead
//! a sentence of the customer's (within its first three words: "Look, yes, go ahead."), so
//! a request that mentions them ("I am hoping to confirm the address stored for me") is
//! no yes; exact for the scripted user, a heuristic for model users, whose refusals ("no,
//! don't") are recognised by their leading "no". And the yes must answer a question that
//! asks for consent: "Is there anything else I can help you with?" offers more help, and a
//! customer who then asks for a change has not agreed to it.

use super::episode::Episode;
use super::{Fault, Finding};
use crate::harness::MessageRole;

pub const NAME: &str = "confirmation";

/// Whether a customer message says yes.
pub fn affirmative(text: &str) -> bool {
    let t = text.to_lowercase();
    let t = t.trim_start_matches(|c: char| !c.is_alphanumeric());
    if t.starts_with("no ") || t.starts_with("no,") || t.starts_with("no.") || t == "no" {
        return false;
    }
    const HESITANT: &[&str] = &["not sure", "don't", "do not", "wait", "hold on", "not yet"];
    if HESITANT.iter().any(|w| t.contains(w)) {
        return false;
    }
    const YES: &[&str] = &[
        "yes",
        "yeah",
        "yep",
        "go ahead",
        "proceed",
        "confirm",
        "confirmed",
        "sure",
        "please do",
        "do it",
        "that's right",
        "correct",
    ];
    // A sentence says yes when one of the words leads it: starts within its first three
    // words, matched at word boundaries.
    sentences(t).any(|sentence| {
        let words: Vec<&str> = sentence
            .split(|c: char| !(c.is_alphanumeric() || c == '\''))
            .filter(|w| !w.is_empty())
            .collect();
        YES.iter().any(|yes| {
            let yes: Vec<&str> = yes.split(' ').collect();
            (0..words.len().min(3)).any(|i| words[i..].starts_with(&yes))
        })
    })
}

/// The sentences of a message (split after `.`, `!`, `?`, `;` and `:`).
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split(['.', '!', '?', ';', ':'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Whether an agent's message asks the customer for consent: it asks a question that is
/// not only an offer of more help ("Is there anything else I can help you with?").
pub fn asks_consent(text: &str) -> bool {
    const OFFERS: &[&str] = &[
        "anything else",
        "something else",
        "anything more",
        "what else",
        "how else",
        "how can i help",
        "how may i help",
    ];
    let lower = text.to_lowercase();
    let mut rest = lower.as_str();
    let mut asks = false;
    // Each question: the text since the previous sentence end up to its `?`.
    while let Some(q) = rest.find('?') {
        let start = rest[..q].rfind(['.', '!', '?', '\n']).map_or(0, |i| i + 1);
        let question = &rest[start..q];
        if !OFFERS.iter().any(|o| question.contains(o)) {
            asks = true;
        }
        rest = &rest[q + 1..];
    }
    asks
}

pub fn detect(ep: &Episode) -> Vec<Finding> {
    let mut out = Vec::new();
    // The policy forbids the call itself, so a write the tool refused counts too; a call
    // outside the schema never reached the tool.
    let called = |c: &&super::ExecutedCall| {
        c.is_action_write() && !matches!(c.outcome, super::CallOutcome::SchemaError(_))
    };
    for c in ep.calls.iter().filter(called) {
        let last_user = (0..c.step)
            .rev()
            .find(|&i| ep.messages[i].role == MessageRole::User);
        let asked = |u: usize| {
            (0..u)
                .rev()
                .find(|&i| {
                    ep.messages[i].role == MessageRole::Assistant
                        && ep.messages[i].tool_calls.is_empty()
                })
                .is_some_and(|i| asks_consent(ep.text(i)))
        };
        let confirmed = last_user.is_some_and(|u| affirmative(ep.text(u)) && asked(u));
        if !confirmed {
            let said = last_user.map(|u| ep.text(u)).unwrap_or("nothing");
            let said: String = said.chars().take(80).collect();
            out.push(
                Finding::new(
                    Fault::PolicyBreach,
                    NAME,
                    format!(
                        "{} ran without the customer's explicit yes (their last message: {said:?})",
                        c.name
                    ),
                )
                .at_call(c),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn a_write_without_a_yes_is_a_breach_and_with_one_it_is_not() {
        let f = Fixture::new();
        let (a, b) = f.two_baggage_writes();
        let mut s = f.script(&[a.clone(), b.clone()]);
        s.user("I want to add bags.");
        s.agent("I will add one bag to the first reservation. Shall I proceed?");
        s.user("Yes, please go ahead.");
        s.call(&a.0, a.1.clone());
        s.agent("Done. And the second one?");
        s.user("I am not sure about the price.");
        let unconfirmed = s.call(&b.0, b.1.clone());
        let got = detect(&s.episode("user_stop", 0));
        assert_eq!(
            labels(&got),
            [(Fault::PolicyBreach, Some(unconfirmed), Some(2))]
        );
        assert!(got[0].detail.contains("not sure"), "{got:?}");
        // Calling the tool unasked is the breach, even when the tool refuses the call.
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("I want to add bags.");
        let mut refused = a.1.clone();
        refused["reservation_id"] = serde_json::json!("NOSUCH");
        let step = s.call(&a.0, refused);
        assert_eq!(
            labels(&detect(&s.episode("user_stop", 0))),
            [(Fault::PolicyBreach, Some(step), Some(1))]
        );
    }

    #[test]
    fn affirmation_words() {
        assert!(affirmative("Look, yes, please go ahead."));
        assert!(affirmative("Sure, do it"));
        assert!(affirmative("Thanks for checking. Yes, please proceed."));
        assert!(affirmative("Confirmed."));
        assert!(!affirmative("No, don't do that, yes I know"));
        assert!(!affirmative("My user id is ab_12."));
        assert!(!affirmative("I am not sure about the price."));
        // A request that mentions a yes-word is no yes.
        assert!(!affirmative(
            "Alright. Also, my new home address is 130 Juniper Street. I am hoping to \
             confirm the address stored for me (the street), now that those changes are made."
        ));
        assert!(!affirmative(
            "Fine. I'd like to proceed with my second request: a refund."
        ));
    }

    #[test]
    fn an_offer_of_more_help_asks_no_consent() {
        assert!(asks_consent(
            "Before I go ahead, please confirm: I will add a bag. Shall I proceed (yes/no)?"
        ));
        assert!(asks_consent("Do you want me to change it? Anything else?"));
        assert!(!asks_consent(
            "Here is what I found. The street is 193 Canal Street. Is there anything else I can \
             help you with?"
        ));
        assert!(!asks_consent(
            "Done. Is there something else you need today?"
        ));
        assert!(!asks_consent("Done."));
    }

    /// Basketball's kept row `dc30eea939836432` (an injected `skip_confirmation`): after
    /// "Is there anything else I can help you with?" the customer asked for a change in a
    /// message that says "confirm", and the agent made it unasked.
    #[test]
    fn a_change_asked_after_an_offer_of_more_help_is_not_confirmed() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("My user id is the one on file. I am hoping to confirm my reservations.");
        s.agent("Here is what I found. Is there anything else I can help you with?");
        s.user(
            "Alright. Also, I want one more bag on my reservation. I am hoping to confirm \
             the bags stored for me, now that those changes are made.",
        );
        let step = s.call(&a.0, a.1.clone());
        assert_eq!(
            labels(&detect(&s.episode("user_stop", 1))),
            [(Fault::PolicyBreach, Some(step), Some(1))]
        );
    }
}
