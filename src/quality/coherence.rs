//! Coherent composition: a task's reference actions must read as one customer's sensible
//! plan. Random walks over a dependency graph happily compose plans no customer would make:
//! the same tip left three times, a booking made and cancelled, a card unblocked, blocked and
//! unblocked again, a passenger swapped back and forth, an appointment read after it was
//! cancelled. Each is a kind here ([`Incoherence`]), decided from the executed steps alone
//! (tool, arguments, output, the state hash before and after), so the grounding search can
//! refuse a step as it explores ([`check_next`]) and verification can refuse a finished task
//! whoever grounded it ([`check_task`]).
//!
//! Architecture invariant: knows domains through `Environment` / `ToolSpec` (intent and
//! kind of each tool) and tasks through `TaskRecord`; nothing of stages or roles.

use crate::artifact::TaskRecord;
use crate::domain::{Environment, Intent, StateHash, ToolKind};
use serde_json::Value;

/// The ways a composition is incoherent (the `rule` of an `incoherent` rejection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Incoherence {
    /// The same write with the same arguments twice.
    RepeatWrite,
    /// The same write tool on the same entity twice with other arguments (it was changed,
    /// then changed again: the customer would have asked for the final value once).
    Overwrite,
    /// A write that returns the database to a state it had before an earlier write (A -> B
    /// -> A), or the opposite tool on the same entity (block -> unblock, add -> remove).
    Undo,
    /// Something created in this task is cancelled in it.
    CreateCancel,
    /// Something this task changed is cancelled later in it (the change was wasted: the
    /// customer would have cancelled straight away).
    ChangeCancel,
    /// Something created in this task is changed later in it (booked, then moved): the
    /// customer would have made it that way to begin with.
    CreateChange,
    /// An entity is used (read or written) after the task cancelled it.
    UseAfterCancel,
    /// A write that changes nothing.
    NoOp,
    /// The same read with the same arguments and the same answer: the customer already has
    /// it (writes in between that leave the answer as it was do not make it a new question).
    RepeatRead,
}

impl Incoherence {
    pub const ALL: [Incoherence; 9] = [
        Incoherence::RepeatWrite,
        Incoherence::Overwrite,
        Incoherence::Undo,
        Incoherence::CreateCancel,
        Incoherence::ChangeCancel,
        Incoherence::CreateChange,
        Incoherence::UseAfterCancel,
        Incoherence::NoOp,
        Incoherence::RepeatRead,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Incoherence::RepeatWrite => "repeat_write",
            Incoherence::Overwrite => "overwrite",
            Incoherence::Undo => "undo",
            Incoherence::CreateCancel => "create_cancel",
            Incoherence::ChangeCancel => "change_cancel",
            Incoherence::CreateChange => "create_change",
            Incoherence::UseAfterCancel => "use_after_cancel",
            Incoherence::NoOp => "no_op",
            Incoherence::RepeatRead => "repeat_read",
        }
    }
}

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

/// One incoherence of a task, with the actions involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: Incoherence,
    pub detail: String,
}

/// One executed reference step as coherence sees it.
#[derive(Clone, Debug)]
pub struct Step {
    pub tool: String,
    pub args: Value,
    pub output: String,
    pub kind: ToolKind,
    pub intent: Intent,
    pub before: StateHash,
    pub after: StateHash,
    /// What a read requested by the customer tells them (its required outputs; empty
    /// where unknown): the same values again make a re-read a repeat even when the
    /// output around them changed.
    pub told: Vec<String>,
}

impl Step {
    /// A write that acts for the customer (not a hand-over or a helper).
    fn acts(&self) -> bool {
        self.kind == ToolKind::Write && !matches!(self.intent, Intent::Transfer | Intent::Helper)
    }
}

/// Opposite verbs: a write named with one after a write named with the other, on the same
/// entity, takes the first back.
const OPPOSITES: &[(&str, &str)] = &[
    ("unblock", "block"),
    ("unfreeze", "freeze"),
    ("unlock", "lock"),
    ("unsubscribe", "subscribe"),
    ("deactivate", "activate"),
    ("disable", "enable"),
    ("remove", "add"),
    ("resume", "suspend"),
    ("reactivate", "suspend"),
    ("opt_out", "opt_in"),
    ("drop", "register"),
    ("drop", "enroll"),
];

/// The verb of a tool name, for [`OPPOSITES`]: its first word (`unblock_card` -> `unblock`).
fn verb(tool: &str) -> &str {
    tool.split('_').next().unwrap_or(tool)
}

fn opposite(a: &str, b: &str) -> bool {
    let (va, vb) = (verb(a), verb(b));
    // "opt_in" / "opt_out" are two words.
    let two = |t: &str| t.split('_').take(2).collect::<Vec<_>>().join("_");
    OPPOSITES.iter().any(|(x, y)| {
        ((va == *x && vb == *y) || (va == *y && vb == *x))
            || ((two(a) == *x && two(b) == *y) || (two(a) == *y && two(b) == *x))
    })
}

/// Argument keys that name the entity a call is about: `*_id`, `*_number`, `*_code`,
/// `*_ref` (Restaurant's `ticket_ref`, `plate_refs`) and bare `id`, minus the ones that
/// name how the customer pays (`payment_id`, `instrument_ref`, ...).
fn entity_key(key: &str) -> bool {
    let named = key == "id"
        || key.ends_with("_id")
        || key.ends_with("_number")
        || key.ends_with("_code")
        || key.ends_with("_ids")
        || key.ends_with("_ref")
        || key.ends_with("_refs");
    named
        && !key.contains("payment")
        && !key.contains("method")
        && !key.contains("source")
        && !key.contains("instrument")
}

/// Argument keys that name who the customer is (`user_id`, `client_id`, `patient_id`, ...):
/// under them the customer's own ids say whose records a call touches, not which entity.
fn names_the_customer(key: &str) -> bool {
    [
        "user", "customer", "client", "student", "patient", "traveler", "member", "holder",
        "guest", "email", "phone",
    ]
    .iter()
    .any(|w| key.contains(w))
}

/// The entity values of a call's arguments (sorted). The customer's own ids count only
/// where they name something else than the customer: a booking id a moviegoer proves who
/// they are with is still the booking a change and a cancel both touch.
pub fn entities(args: &Value, customer: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    collect(args, None, customer, &mut out);
    out.sort();
    out.dedup();
    out
}

fn collect(v: &Value, key: Option<&str>, customer: &[&str], out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                collect(x, Some(k), customer, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                collect(x, key, customer, out);
            }
        }
        Value::String(s) if !s.is_empty() => {
            let Some(k) = key.filter(|k| entity_key(k)) else {
                return;
            };
            if !(customer.contains(&s.as_str()) && names_the_customer(k)) {
                out.push(s.clone());
            }
        }
        _ => {}
    }
}

/// Ids a write created: id-valued strings of its output (JSON under an entity key, or an
/// id-shaped word of a text output) that neither its arguments nor anything seen before
/// carried.
pub fn created_ids(step: &Step, seen: &str) -> Vec<String> {
    if step.kind != ToolKind::Write {
        return Vec::new();
    }
    let mut found = Vec::new();
    match serde_json::from_str::<Value>(&step.output) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => collect(&v, None, &[], &mut found),
        _ => found.extend(id_words(&step.output)),
    }
    let args = step.args.to_string();
    found.retain(|id| id.len() >= 3 && !args.contains(id.as_str()) && !seen.contains(id.as_str()));
    found.sort();
    found.dedup();
    found
}

/// Words that look like record ids: letters and digits mixed (BKG001, TICKET241, R-1042),
/// at least one digit and one letter.
pub fn id_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches(|c| c == '-' || c == '_'))
        .filter(|w| {
            w.len() >= 4
                && w.chars().any(|c| c.is_ascii_digit())
                && w.chars().any(|c| c.is_ascii_uppercase())
                && !w.chars().any(|c| c.is_ascii_lowercase())
        })
        .map(str::to_string)
        .collect()
}

/// Whether `next` keeps the composition coherent after `prev` (the steps before it, in
/// order); the first incoherence it introduces otherwise. `customer` lists the customer's
/// own ids (never an entity of a call).
pub fn check_next(prev: &[Step], next: &Step, customer: &[&str]) -> Option<Finding> {
    let here = entities(&next.args, customer);
    let finding = |kind, detail: String| Some(Finding { kind, detail });
    // Used after it was cancelled: any call naming an entity a cancel named.
    for (j, p) in prev.iter().enumerate() {
        if p.intent == Intent::Cancel && p.kind == ToolKind::Write {
            let gone = entities(&p.args, customer);
            if let Some(e) = here.iter().find(|e| gone.contains(e)) {
                return finding(
                    Incoherence::UseAfterCancel,
                    format!(
                        "{} uses {e} after action {j} ({}) cancelled it",
                        next.tool, p.tool
                    ),
                );
            }
        }
    }
    if next.kind == ToolKind::Read
        && let Some(j) = prev.iter().position(|p| {
            p.kind == ToolKind::Read
                && p.tool == next.tool
                && p.args == next.args
                && (p.output == next.output || (!next.told.is_empty() && p.told == next.told))
        })
    {
        return finding(
            Incoherence::RepeatRead,
            format!("{} repeats action {j} and its answer", next.tool),
        );
    }
    if !next.acts() {
        return None;
    }
    if next.after == next.before {
        return finding(Incoherence::NoOp, format!("{} changes nothing", next.tool));
    }
    let mut seen = String::new();
    for (j, p) in prev.iter().enumerate() {
        if !p.acts() {
            seen.push_str(&p.args.to_string());
            seen.push_str(&p.output);
            continue;
        }
        if p.tool == next.tool && p.args == next.args {
            return finding(
                Incoherence::RepeatWrite,
                format!("{} repeats action {j} with the same arguments", next.tool),
            );
        }
        if next.after == p.before {
            return finding(
                Incoherence::Undo,
                format!(
                    "{} returns the database to its state before action {j} ({})",
                    next.tool, p.tool
                ),
            );
        }
        let theirs = entities(&p.args, customer);
        let shared = !here.is_empty() && here.iter().any(|e| theirs.contains(e));
        if shared && opposite(&p.tool, &next.tool) {
            return finding(
                Incoherence::Undo,
                format!(
                    "{} takes back action {j} ({}) on the same entity",
                    next.tool, p.tool
                ),
            );
        }
        if shared && p.tool == next.tool && here == theirs {
            return finding(
                Incoherence::Overwrite,
                format!(
                    "{} changes {} again after action {j}",
                    next.tool,
                    here.join(", ")
                ),
            );
        }
        // Cancelled or changed after this task created it (a change only of what a
        // creating tool made: an id a payment's output shows was not made by the customer).
        let cancel = next.intent == Intent::Cancel;
        let creates = matches!(p.intent, Intent::Book | Intent::Report);
        if cancel || (next.intent == Intent::Change && creates) {
            let made = created_ids(p, &seen);
            if let Some(e) = here.iter().find(|e| made.contains(e)) {
                let (kind, verb) = if cancel {
                    (Incoherence::CreateCancel, "cancels")
                } else {
                    (Incoherence::CreateChange, "changes")
                };
                return finding(
                    kind,
                    format!(
                        "{} {verb} {e}, which action {j} ({}) created",
                        next.tool, p.tool
                    ),
                );
            }
        }
        if cancel && shared {
            return finding(
                Incoherence::ChangeCancel,
                format!("{} cancels what action {j} ({}) changed", next.tool, p.tool),
            );
        }
        seen.push_str(&p.args.to_string());
        seen.push_str(&p.output);
    }
    None
}

/// The steps of a task replayed on a fresh fork of `env` (stopping at the first failing
/// call, which replay verification reports on its own).
pub fn replay_steps(env: &dyn Environment, task: &TaskRecord) -> Vec<Step> {
    let specs = env.tool_specs();
    let mut state = env.fork();
    let mut steps = Vec::with_capacity(task.actions.len());
    for (i, a) in task.actions.iter().enumerate() {
        let Some(spec) = specs.iter().find(|s| s.name == a.name) else {
            break;
        };
        let before = state.state_hash();
        let out = state.invoke(&a.name, &a.kwargs);
        if out.is_error {
            break;
        }
        // A read leaves the state as it was, so what it tells is read on the state after.
        let request = task.requests.get(i).and_then(Option::as_deref);
        let told = match spec.kind {
            ToolKind::Read => crate::quality::answers::answer(
                state.as_ref(),
                &a.name,
                &a.kwargs,
                &out.text,
                request,
            ),
            _ => Vec::new(),
        };
        steps.push(Step {
            tool: a.name.clone(),
            args: a.kwargs.clone(),
            output: out.text,
            kind: spec.kind,
            intent: spec.intent,
            before,
            after: state.state_hash(),
            told,
        });
    }
    steps
}

/// The customer's own ids, never an entity of a call: the task's user id and the values of
/// its identity facts.
pub fn customer_ids(task: &TaskRecord) -> Vec<String> {
    let mut ids = vec![task.user_id.clone()];
    for f in task.user_facts.iter().filter(|f| f.kind == "identity") {
        ids.extend(f.values.iter().cloned());
    }
    ids
}

/// Every incoherence of a finished task, in step order (one per offending step).
pub fn check_steps(steps: &[Step], customer: &[&str]) -> Vec<Finding> {
    (0..steps.len())
        .filter_map(|k| check_next(&steps[..k], &steps[k], customer))
        .collect()
}

/// The first incoherence of a task on `env` (its start state).
pub fn check_task(env: &dyn Environment, task: &TaskRecord) -> Option<Finding> {
    let steps = replay_steps(env, task);
    let ids = customer_ids(task);
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    check_steps(&steps, &ids).into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(
        tool: &str,
        args: Value,
        output: &str,
        intent: Intent,
        before: u128,
        after: u128,
    ) -> Step {
        Step {
            tool: tool.into(),
            args,
            output: output.into(),
            kind: if intent == Intent::Lookup {
                ToolKind::Read
            } else {
                ToolKind::Write
            },
            intent,
            before: StateHash(before),
            after: StateHash(after),
            told: Vec::new(),
        }
    }

    fn kinds(steps: &[Step]) -> Vec<Incoherence> {
        check_steps(steps, &["u1"])
            .into_iter()
            .map(|f| f.kind)
            .collect()
    }

    #[test]
    fn a_change_of_mind_is_one_stated_finding_of_a_tolerated_kind() {
        let one = |kind| {
            vec![Finding {
                kind,
                detail: String::new(),
            }]
        };
        let said = "You block the card. Then on second thought, you want it unblocked.";
        assert!(is_stated_change_of_mind(&one(Incoherence::Undo), said));
        assert!(is_stated_change_of_mind(
            &one(Incoherence::CreateCancel),
            "Then you change your mind: you want to cancel the booking you just made."
        ));
        // Not stated, a kind no customer means, or two of them: incoherent.
        assert!(!is_stated_change_of_mind(
            &one(Incoherence::Undo),
            "You block the card. Then you want it unblocked."
        ));
        assert!(!is_stated_change_of_mind(
            &one(Incoherence::RepeatWrite),
            said
        ));
        assert!(!is_stated_change_of_mind(
            &one(Incoherence::UseAfterCancel),
            said
        ));
        let mut two = one(Incoherence::Undo);
        two.extend(one(Incoherence::Overwrite));
        assert!(!is_stated_change_of_mind(&two, said));
        for k in 0..CHANGE_OF_MIND_OPENERS.len() {
            let r = as_change_of_mind("You want to unblock the card.", k);
            assert!(states_change_of_mind(&r), "{r}");
            assert!(r.to_lowercase().contains("you want to unblock"), "{r}");
        }
    }

    #[test]
    fn a_read_asked_again_says_so() {
        let first = "You want the status of order #W1 (the lamp).";
        let earlier = [Some(first.to_string()), None];
        assert_eq!(
            as_recheck(first, earlier.iter().map(Option::as_deref)),
            "You want the status of order #W1 (the lamp), now that those changes are made."
        );
        assert_eq!(
            as_recheck(
                "You want the status of order #W2.",
                earlier.iter().map(Option::as_deref)
            ),
            "You want the status of order #W2."
        );
        assert_eq!(as_recheck(first, std::iter::empty()), first);
        let asked = "Is your registration full-time or part-time?";
        assert_eq!(
            as_recheck(asked, [Some(asked)].into_iter()),
            "Is your registration full-time or part-time, now that those changes are made?"
        );
    }

    #[test]
    fn a_re_read_telling_the_same_values_is_a_repeat_whatever_else_changed() {
        let loan = json!({"loan_id": "L1"});
        let read = |out: &str, told: &[&str]| Step {
            told: told.iter().map(|t| t.to_string()).collect(),
            ..step("get_loan_details", loan.clone(), out, Intent::Lookup, 2, 2)
        };
        let pay = step("make_loan_payment", loan.clone(), "ok", Intent::Pay, 1, 2);
        let first = read(r#"{"history": []}"#, &["2025-10-04", "311.22"]);
        // The payment shows in the history, the next installment told is the same.
        let same = read(r#"{"history": ["paid"]}"#, &["2025-10-04", "311.22"]);
        assert_eq!(
            kinds(&[first.clone(), pay.clone(), same]),
            [Incoherence::RepeatRead]
        );
        let moved = read(r#"{"history": ["paid"]}"#, &["2025-11-04", "311.22"]);
        assert!(kinds(&[first, pay, moved]).is_empty());
    }

    #[test]
    fn a_coherent_plan_has_no_finding() {
        let steps = [
            step(
                "get_order",
                json!({"order_id": "O1"}),
                "{}",
                Intent::Lookup,
                1,
                1,
            ),
            step(
                "leave_tip",
                json!({"order_id": "O1", "amount": 3}),
                "ok",
                Intent::Pay,
                1,
                2,
            ),
            step(
                "leave_tip",
                json!({"order_id": "O2", "amount": 3}),
                "ok",
                Intent::Pay,
                2,
                3,
            ),
            step(
                "block_card",
                json!({"card_id": "C1"}),
                "ok",
                Intent::Change,
                3,
                4,
            ),
            step(
                "unblock_card",
                json!({"card_id": "C2"}),
                "ok",
                Intent::Change,
                4,
                5,
            ),
        ];
        assert_eq!(kinds(&steps), []);
    }

    #[test]
    fn each_kind_is_found_on_a_crafted_plan() {
        let tip = json!({"order_id": "O1", "amount": 3});
        assert_eq!(
            kinds(&[
                step("leave_tip", tip.clone(), "ok", Intent::Pay, 1, 2),
                step("leave_tip", tip, "ok", Intent::Pay, 2, 3),
            ]),
            [Incoherence::RepeatWrite]
        );
        assert_eq!(
            kinds(&[
                step(
                    "update_passengers",
                    json!({"reservation_id": "R1", "p": "A"}),
                    "ok",
                    Intent::Change,
                    1,
                    2
                ),
                step(
                    "update_passengers",
                    json!({"reservation_id": "R1", "p": "B"}),
                    "ok",
                    Intent::Change,
                    2,
                    1
                ),
            ]),
            [Incoherence::Undo],
            "the state went back"
        );
        assert_eq!(
            kinds(&[
                step(
                    "unblock_card",
                    json!({"card_id": "C1"}),
                    "ok",
                    Intent::Change,
                    1,
                    2
                ),
                step(
                    "block_card",
                    json!({"card_id": "C1", "reason": "lost"}),
                    "ok",
                    Intent::Change,
                    2,
                    3
                ),
            ]),
            [Incoherence::Undo],
            "opposite verbs on one entity, even when a log row keeps the state apart"
        );
        assert_eq!(
            kinds(&[
                step(
                    "update_address",
                    json!({"order_id": "O1", "city": "A"}),
                    "ok",
                    Intent::Change,
                    1,
                    2
                ),
                step(
                    "update_address",
                    json!({"order_id": "O1", "city": "B"}),
                    "ok",
                    Intent::Change,
                    2,
                    3
                ),
            ]),
            [Incoherence::Overwrite]
        );
        assert_eq!(
            kinds(&[
                step(
                    "book_movie",
                    json!({"movie_id": "M1"}),
                    r#"{"booking_id": "BKG001", "movie_id": "M1"}"#,
                    Intent::Book,
                    1,
                    2
                ),
                step(
                    "cancel_booking",
                    json!({"booking_id": "BKG001"}),
                    "ok",
                    Intent::Cancel,
                    2,
                    3
                ),
            ]),
            [Incoherence::CreateCancel]
        );
        assert_eq!(
            kinds(&[
                step(
                    "create_ticket",
                    json!({"issue": "x"}),
                    "Ticket TICKET241 opened.",
                    Intent::Report,
                    1,
                    2
                ),
                step(
                    "cancel_ticket",
                    json!({"ticket_id": "TICKET241"}),
                    "ok",
                    Intent::Cancel,
                    2,
                    3
                ),
            ]),
            [Incoherence::CreateCancel],
            "an id in a text output"
        );
        assert_eq!(
            kinds(&[
                step(
                    "update_booking_rooming",
                    json!({"booking_id": "BKG-1", "room_type": "suite"}),
                    "ok",
                    Intent::Change,
                    1,
                    2
                ),
                step(
                    "cancel_booking",
                    json!({"booking_id": "BKG-1"}),
                    "ok",
                    Intent::Cancel,
                    2,
                    3
                ),
            ]),
            [Incoherence::ChangeCancel]
        );
        assert!(
            kinds(&[
                step(
                    "update_booking_rooming",
                    json!({"booking_id": "BKG-1", "room_type": "suite"}),
                    "ok",
                    Intent::Change,
                    1,
                    2
                ),
                step(
                    "cancel_booking",
                    json!({"booking_id": "BKG-2"}),
                    "ok",
                    Intent::Cancel,
                    2,
                    3
                ),
            ])
            .is_empty(),
            "cancelling another booking is coherent"
        );
        let booked = step(
            "create_booking",
            json!({"show_id": "S1", "seats": ["A1"]}),
            r#"{"booking_id": "BKG007", "show_id": "S1"}"#,
            Intent::Book,
            1,
            2,
        );
        let reseat = |id: &str| {
            step(
                "update_booking_seats",
                json!({"booking_id": id, "seats": ["B2"]}),
                "ok",
                Intent::Change,
                2,
                3,
            )
        };
        assert_eq!(
            kinds(&[booked.clone(), reseat("BKG007")]),
            [Incoherence::CreateChange],
            "booked, then changed: the customer would have booked it that way"
        );
        assert!(
            kinds(&[booked, reseat("BKG001")]).is_empty(),
            "changing an older booking after making a new one is coherent"
        );
        assert_eq!(
            kinds(&[
                step(
                    "cancel_appointment",
                    json!({"appointment_id": "A1"}),
                    "ok",
                    Intent::Cancel,
                    1,
                    2
                ),
                step(
                    "get_video_link",
                    json!({"appointment_id": "A1"}),
                    "{}",
                    Intent::Lookup,
                    2,
                    2
                ),
            ]),
            [Incoherence::UseAfterCancel]
        );
        assert_eq!(
            kinds(&[step(
                "update_address",
                json!({"user_id": "u1"}),
                "ok",
                Intent::Change,
                1,
                1
            )]),
            [Incoherence::NoOp]
        );
        let order = json!({"order_id": "O1"});
        assert_eq!(
            kinds(&[
                step("get_order", order.clone(), "{}", Intent::Lookup, 1, 1),
                step("get_order", order.clone(), "{}", Intent::Lookup, 1, 1),
            ]),
            [Incoherence::RepeatRead]
        );
        // Read again after a write changed the answer: a fair question.
        assert!(
            kinds(&[
                step(
                    "get_order",
                    order.clone(),
                    "{\"n\": 2}",
                    Intent::Lookup,
                    1,
                    1
                ),
                step("cancel_item", order.clone(), "ok", Intent::Change, 1, 2),
                step(
                    "get_order",
                    order.clone(),
                    "{\"n\": 1}",
                    Intent::Lookup,
                    2,
                    2
                ),
            ])
            .is_empty()
        );
        // A write that leaves the answer as it was (a ticket opened between two look-ups
        // of a phone's maker) does not make the second a new question.
        assert_eq!(
            kinds(&[
                step("get_order", order.clone(), "{}", Intent::Lookup, 1, 1),
                step("cancel_item", order.clone(), "ok", Intent::Change, 1, 2),
                step("get_order", order, "{}", Intent::Lookup, 2, 2),
            ]),
            [Incoherence::RepeatRead]
        );
    }

    #[test]
    fn the_customer_and_payment_ids_are_not_entities() {
        assert_eq!(
            entities(
                &json!({"user_id": "u1", "payment_id": "credit_card_1", "reservation_id": "R1",
                        "flights": [{"flight_number": "HAT001"}]}),
                &["u1"]
            ),
            ["HAT001", "R1"]
        );
        assert_eq!(
            entities(
                &json!({"guest_ref": "u1", "instrument_ref": "zK2051S", "ticket_ref": "T1",
                        "plate_refs": ["P1", "P2"]}),
                &["u1"]
            ),
            ["P1", "P2", "T1"]
        );
        // A booking id the customer identifies with is still the booking a call is about.
        assert_eq!(entities(&json!({"booking_id": "B1"}), &["B1"]), ["B1"]);
        // Setting a ticket's tip twice, paid from two instruments, is one overwrite.
        assert_eq!(
            kinds(&[
                step(
                    "add_tip_to_ticket",
                    json!({"instrument_ref": "a", "ticket_ref": "T1", "tip_total": 3.0}),
                    "ok",
                    Intent::Pay,
                    1,
                    2
                ),
                step(
                    "add_tip_to_ticket",
                    json!({"instrument_ref": "b", "ticket_ref": "T1", "tip_total": 2.0}),
                    "ok",
                    Intent::Pay,
                    2,
                    3
                ),
            ]),
            [Incoherence::Overwrite]
        );
        // Two writes for one customer on different entities are not an overwrite.
        assert_eq!(
            kinds(&[
                step(
                    "update_address",
                    json!({"user_id": "u1", "city": "A"}),
                    "ok",
                    Intent::Change,
                    1,
                    2
                ),
                step(
                    "update_address",
                    json!({"user_id": "u1", "city": "B"}),
                    "ok",
                    Intent::Change,
                    2,
                    3
                ),
            ]),
            [],
            "no entity besides the customer: not decidable as an overwrite"
        );
        assert_eq!(
            id_words("Booking BKG001 for Movie m-1 at 10:30"),
            ["BKG001"]
        );
    }
}
