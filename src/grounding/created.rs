//! Ids made in the conversation, said in words: a later request names what the task's own
//! writes created the way a customer who heard it from the agent would ("the booking you
//! just made", "the first ticket you made"), and the values to tell follow those words.
//!
//! Architecture invariant: knows domains through `Environment`, models through
//! `llm::ChatModel`; nothing of stages or the pipeline.

use super::{GroundedStep, answer};
use crate::domain::Environment;

/// A customer learns the id of something made in the conversation from the agent, so a
/// later request names it in words: "your booking BKG001" -> "the booking you just made".
/// The ids are those the task's own writes created (`quality::knowable`); when the same tool
/// made several, an earlier one is named by its place ("the first ticket you made"), so the
/// words point at the id the call uses.
pub(super) fn name_created_in_words(env: &dyn Environment, user: &str, steps: &mut [GroundedStep]) {
    let specs = env.tool_specs();
    let views: Vec<crate::quality::coherence::Step> = steps
        .iter()
        .map(|s| {
            let spec = specs.iter().find(|x| x.name == s.tool);
            crate::quality::coherence::Step {
                tool: s.tool.clone(),
                args: s.args.clone(),
                output: s.output.clone(),
                kind: spec.map_or(crate::domain::ToolKind::Read, |x| x.kind),
                intent: spec.map_or(crate::domain::Intent::Lookup, |x| x.intent),
                before: Default::default(),
                after: Default::default(),
                told: Vec::new(),
                target: Vec::new(),
            }
        })
        .collect();
    let records = env.customer_records(user).join("\n");
    let mut rewritten = false;
    let all = crate::quality::knowable::made_in_task(&views, &records);
    for (k, step) in steps.iter_mut().enumerate().skip(1) {
        let made: Vec<_> = all.iter().filter(|m| m.step < k).cloned().collect();
        if let Some(r) = step.request.as_mut() {
            for m in &made {
                if crate::quality::knowable::names(r, &m.id) {
                    let how = crate::quality::knowable::MadeRef::of(m, &made);
                    *r = crate::quality::language::tidy(&in_words(r, &m.id, how));
                    rewritten = true;
                }
            }
        }
    }
    if rewritten {
        // The values to tell follow the words the customer says: recompute them from the
        // rewritten requests, on the state each read saw (as the quality measure does).
        let mut state = env.fork();
        for s in steps.iter_mut() {
            s.required_outputs = answer(
                state.as_ref(),
                &s.tool,
                &s.args,
                &s.output,
                s.request.as_deref(),
            );
            state.invoke(&s.tool, &s.args);
        }
    }
}

/// Words that can stand before a two-word noun ("the status of support ticket T1", "you
/// want support ticket T1 closed"): prepositions and verbs that take an object. After one,
/// both words are the noun; elsewhere the first of two is taken for a verb ("cancel
/// reservation R1").
const BEFORE_A_NOUN: [&str; 11] = [
    "of",
    "on",
    "about",
    "with",
    "in",
    "from",
    "regarding",
    "want",
    "need",
    "wants",
    "needs",
];

/// `text` with the noun phrase ending in `id` ("your booking BKG001", "ticket TICKET241")
/// said as "the booking you just made" ("the one you just made" without a noun), or for an
/// earlier one of several made by the same tool, "the first booking you made".
pub fn in_words(text: &str, id: &str, how: crate::quality::knowable::MadeRef) -> String {
    let Some(at) = text.find(id) else {
        return text.to_string();
    };
    let before = &text[..at];
    let after = &text[at + id.len()..];
    let words: Vec<&str> = before.split(' ').collect();
    // Up to two words back to a determiner; without one, the noun right before the id.
    let mut start = words.len().saturating_sub(1);
    let mut nouns: Vec<&str> = Vec::new();
    let mut determiner = false;
    for k in (0..words.len().saturating_sub(1)).rev() {
        let w = words[k];
        let bare = w.trim_start_matches('(');
        if ["your", "the", "my", "a", "an", "this"].contains(&bare.to_lowercase().as_str()) {
            start = k;
            determiner = true;
            break;
        }
        if nouns.len() == 2 || bare.is_empty() || !bare.chars().all(char::is_alphabetic) {
            break;
        }
        nouns.insert(0, w);
        start = k;
        if w.starts_with('(') {
            break;
        }
    }
    let object_follows = start > 0 && BEFORE_A_NOUN.contains(&words[start - 1]);
    if !determiner && nouns.len() > 1 && !nouns[0].starts_with('(') && !object_follows {
        nouns.remove(0);
        start += 1;
    }
    let open = if words.get(start).is_some_and(|w| w.starts_with('(')) {
        "("
    } else {
        ""
    };
    let nouns: Vec<String> = nouns
        .iter()
        .map(|n| n.trim_start_matches('(').to_lowercase())
        .filter(|n| !n.is_empty())
        .collect();
    let noun = if nouns.is_empty() {
        "one".to_string()
    } else {
        nouns.join(" ")
    };
    let phrase = match how {
        crate::quality::knowable::MadeRef::Latest => format!("the {noun} you just made"),
        crate::quality::knowable::MadeRef::Nth(n) => {
            let ordinal = crate::domain::kit::text::ORDINALS
                .get(n)
                .copied()
                .unwrap_or("earlier");
            format!("the {ordinal} {noun} you made")
        }
    };
    let head = words[..start].join(" ");
    let sep = if head.is_empty() { "" } else { " " };
    format!("{head}{sep}{open}{phrase}{after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_id_is_said_in_words() {
        use crate::quality::knowable::MadeRef::{Latest, Nth};
        assert_eq!(
            in_words(
                "Then you want to check your booking BKG001 for Dune.",
                "BKG001",
                Latest
            ),
            "Then you want to check the booking you just made for Dune."
        );
        assert_eq!(
            in_words("You want ticket TICKET241 closed.", "TICKET241", Latest),
            "You want the ticket you just made closed."
        );
        assert_eq!(
            in_words("You want an update (booking QENXU75).", "QENXU75", Latest),
            "You want an update (the booking you just made)."
        );
        assert_eq!(
            in_words("QX1 is yours.", "QX1", Latest),
            "the one you just made is yours."
        );
        // The first of two words is a verb ("cancel reservation") unless a preposition
        // comes before them: then both are the noun.
        assert_eq!(
            in_words("You want to cancel reservation MB4K9Z.", "MB4K9Z", Latest),
            "You want to cancel the reservation you just made."
        );
        assert_eq!(
            in_words(
                "You would like the current status of support ticket TICKET241.",
                "TICKET241",
                Latest
            ),
            "You would like the current status of the support ticket you just made."
        );
        assert_eq!(
            in_words("I want support ticket T1 set to closed.", "T1", Latest),
            "I want the support ticket you just made set to closed."
        );
        // An earlier one of several made by the same tool is named by its place.
        assert_eq!(
            in_words(
                "You are asking to mark ticket TICKET241 as in progress.",
                "TICKET241",
                Nth(0)
            ),
            "You are asking to mark the first ticket you made as in progress."
        );
        assert_eq!(
            in_words("QX1 is yours.", "QX1", Nth(1)),
            "the second one you made is yours."
        );
    }
}
