//! How the scripted feeler reads a task ([`Reading`]): the kinds of request it holds and
//! the cues in the customer's own words (trouble, loss, an occasion, urgency, care, doubt).

use super::FeelerInput;
use crate::domain::Intent;

/// How the customer reads, as the feeler sees it: which kinds of request the task holds
/// (every intent, in order, without repeats) and which cues the customer's own words carry.
pub(super) struct Reading {
    pub(super) intents: Vec<Intent>,
    /// The company got something wrong (a disruption, a fault, a damaged item).
    pub(super) trouble: bool,
    /// A bereavement or illness is part of the story.
    pub(super) loss: bool,
    /// Something to look forward to (a honeymoon, a birthday).
    pub(super) happy: bool,
    pub(super) urgent: bool,
    pub(super) soon: bool,
    pub(super) relaxed: bool,
    /// The customer wants things checked ("make sure", "double-check").
    pub(super) careful: bool,
    /// The customer has been let down before ("again", "last time", "promised").
    pub(super) doubt: bool,
    pub(super) writes: usize,
}

fn any_of(text: &str, cues: &[&str]) -> bool {
    cues.iter().any(|c| text.contains(c))
}

/// Something went wrong on the company's side (a disruption, a fault, a damaged item).
const TROUBLE_CUES: &[&str] = &[
    "cancelled by",
    "canceled by",
    "airline cancel",
    "delayed",
    "delay",
    "weather",
    "outage",
    "not working",
    "stopped working",
    "no signal",
    "broken",
    "damaged",
    "defective",
    "faulty",
    "wrong item",
    "missing",
    "overcharged",
    "charged twice",
    "double charged",
    "suffers from",
    "fraud",
    "suspicious",
    "compromised",
];
const LOSS_CUES: &[&str] = &[
    "passed away",
    "funeral",
    "died",
    "bereavement",
    "in hospital",
    "hospitalised",
    "hospitalized",
    "sick",
    "illness",
    "family emergency",
    "health problem",
];
const HAPPY_CUES: &[&str] = &[
    "honeymoon",
    "anniversary",
    "birthday",
    "wedding",
    "vacation",
    "holiday",
    "graduation",
    "celebrat",
    "gift",
    "surprise",
];
const URGENT_CUES: &[&str] = &[
    "urgent",
    "asap",
    "as soon as possible",
    "right away",
    "immediately",
    "tonight",
    "in an hour",
    "quickly",
    "emergency",
    "deadline",
    "before it ships",
];
const SOON_CUES: &[&str] = &["today", "this week", "this afternoon"];
const RELAXED_CUES: &[&str] = &[
    "no rush",
    "no hurry",
    "whenever",
    "next month",
    "not urgent",
    "happy to wait",
    "take your time",
];
/// Only what the customer asks to be checked: the identity sentence every instruction
/// ends with ("if the agent asks you to verify who you are") says nothing about trust.
const CAREFUL_CUES: &[&str] = &[
    "make sure",
    "double-check",
    "double check",
    "exactly",
    "check that",
    "confirm each change",
];
const DOUBT_CUES: &[&str] = &[
    "again",
    "last time",
    "previous time",
    "complain",
    "promised",
    "once more",
];

/// Every phrase the scripted feeler reads as a cue (text written around the requests, such
/// as who the customer is, must hold none of them).
#[cfg(test)]
pub(crate) fn cue_words() -> impl Iterator<Item = &'static str> {
    [
        TROUBLE_CUES,
        LOSS_CUES,
        HAPPY_CUES,
        URGENT_CUES,
        SOON_CUES,
        RELAXED_CUES,
        CAREFUL_CUES,
        DOUBT_CUES,
    ]
    .into_iter()
    .flatten()
    .copied()
}

pub(super) fn read(input: &FeelerInput) -> Reading {
    let text = input.instruction.to_lowercase();
    let mut intents: Vec<Intent> = Vec::new();
    for i in &input.intents {
        if *i != Intent::Helper && !intents.contains(i) {
            intents.push(*i);
        }
    }
    Reading {
        trouble: any_of(&text, TROUBLE_CUES),
        loss: any_of(&text, LOSS_CUES),
        happy: any_of(&text, HAPPY_CUES),
        urgent: any_of(&text, URGENT_CUES),
        soon: any_of(&text, SOON_CUES),
        relaxed: any_of(&text, RELAXED_CUES),
        careful: any_of(&text, CAREFUL_CUES),
        doubt: any_of(&text, DOUBT_CUES),
        writes: input
            .intents
            .iter()
            .filter(|i| !matches!(i, Intent::Lookup | Intent::Helper))
            .count(),
        intents,
    }
}
