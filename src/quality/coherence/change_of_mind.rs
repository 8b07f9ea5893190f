//! A change of mind a task states: the kinds of incoherence a customer may do deliberately
//! ([`CHANGE_OF_MIND`]), how a request says it, and whether a task's findings are one.

use super::{Finding, Incoherence};

/// The kinds a customer may deliberately do as a change of mind (take a change back,
/// cancel what they just booked or changed, change a value a second time) when the task
/// says so; repeats, no-ops and uses of cancelled things never read as one.
pub const CHANGE_OF_MIND: [Incoherence; 5] = [
    Incoherence::Undo,
    Incoherence::Overwrite,
    Incoherence::CreateCancel,
    Incoherence::ChangeCancel,
    Incoherence::CreateChange,
];

/// How a scripted request states a change of mind (each matched by
/// [`states_change_of_mind`]); a model's wording passes if it says it in any of these ways.
/// An opener ending in a full stop keeps the request as its own sentence.
pub const CHANGE_OF_MIND_OPENERS: [&str; 3] = [
    "You change your mind. ",
    "On second thought, ",
    "You reconsider, and ",
];

/// Whether a text states a change of mind.
pub fn states_change_of_mind(text: &str) -> bool {
    let t = text.to_lowercase();
    [
        "change your mind",
        "changes your mind",
        "changed your mind",
        "second thought",
        "you reconsider",
    ]
    .iter()
    .any(|p| t.contains(p))
}

/// A request stated as a change of mind (`opener` picks one of the openers).
pub fn as_change_of_mind(request: &str, opener: usize) -> String {
    let open = CHANGE_OF_MIND_OPENERS[opener % CHANGE_OF_MIND_OPENERS.len()];
    if open.ends_with(". ") {
        return format!("{open}{request}");
    }
    let mut c = request.chars();
    let rest = match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    };
    format!("{open}{rest}")
}

/// A read asked for again after changes that alter its answer, said as such: the same
/// sentence twice in one task reads like a slip ("You want the status of order #W1. ...
/// You want the status of order #W1."). `earlier` are the task's requests so far.
pub fn as_recheck<'a>(request: &str, mut earlier: impl Iterator<Item = Option<&'a str>>) -> String {
    if !earlier.any(|e| e == Some(request)) {
        return request.to_string();
    }
    // A question keeps its question mark at the end.
    let text = request.trim_end();
    let end = text
        .chars()
        .last()
        .filter(|c| matches!(c, '?' | '!'))
        .unwrap_or('.');
    let body = text.trim_end_matches(['.', '?', '!']);
    format!("{body}, now that those changes are made{end}")
}

/// Whether a task's incoherences are one deliberate change of mind: a single finding, of a
/// kind in [`CHANGE_OF_MIND`], in a task whose instruction states it.
pub fn is_stated_change_of_mind(findings: &[Finding], instruction: &str) -> bool {
    matches!(findings, [f] if CHANGE_OF_MIND.contains(&f.kind))
        && states_change_of_mind(instruction)
}
