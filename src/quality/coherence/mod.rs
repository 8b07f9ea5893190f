//! Coherent composition: a task's reference actions must read as one customer's sensible
//! plan. Random walks over a dependency graph happily compose plans no customer would make:
//! the same tip left three times, a booking made and cancelled, a card unblocked, blocked and
//! unblocked again, a passenger swapped back and forth, an appointment read after it was
//! cancelled. Each is a kind here ([`Incoherence`]), decided from the executed steps alone
//! (tool, arguments, output, the state hash before and after), so the grounding search can
//! refuse a step as it explores ([`check_next`]) and verification can refuse a finished task
//! whoever grounded it ([`check_task`]).
//!
//! The kinds and the checks are here; the ids a step names or makes are `ids.rs`, a change
//! of mind a task states (the one way some kinds are allowed) `change_of_mind.rs`.
//!
//! Architecture invariant: knows domains through `Environment` / `ToolSpec` (intent and
//! kind of each tool) and tasks through `TaskRecord`; nothing of stages or roles.

mod change_of_mind;
mod ids;

use crate::artifact::TaskRecord;
use crate::domain::{Environment, Intent, StateHash, ToolKind};
use serde_json::Value;

pub use change_of_mind::{
    CHANGE_OF_MIND, CHANGE_OF_MIND_OPENERS, as_change_of_mind, as_recheck,
    is_stated_change_of_mind, states_change_of_mind,
};
pub use ids::{created_ids, entities, id_words};

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
    /// A booking of what a booking cancelled earlier in the task held (the same show, the
    /// same departure of a package, the same flight): the customer would have changed the
    /// booking, or kept it.
    CancelRebook,
}

impl Incoherence {
    pub const ALL: [Incoherence; 10] = [
        Incoherence::RepeatWrite,
        Incoherence::Overwrite,
        Incoherence::Undo,
        Incoherence::CreateCancel,
        Incoherence::ChangeCancel,
        Incoherence::CreateChange,
        Incoherence::UseAfterCancel,
        Incoherence::NoOp,
        Incoherence::RepeatRead,
        Incoherence::CancelRebook,
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
            Incoherence::CancelRebook => "cancel_rebook",
        }
    }
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
    /// What a booking books: the values at its tool's declared `target` paths (empty for
    /// other tools and where none is declared).
    pub target: Vec<String>,
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
    if let Some((j, p)) = rebooks(prev, next) {
        return finding(
            Incoherence::CancelRebook,
            format!(
                "{} books {} again, which action {j} ({}) cancelled",
                next.tool,
                next.target.join(" "),
                p.tool
            ),
        );
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

/// The earlier cancel whose cancelled record held everything `next` books (every target
/// value stands in the cancel's output), with its index.
fn rebooks<'a>(prev: &'a [Step], next: &Step) -> Option<(usize, &'a Step)> {
    if next.intent != Intent::Book || next.target.is_empty() {
        return None;
    }
    prev.iter().enumerate().find(|(_, p)| {
        p.acts()
            && p.intent == Intent::Cancel
            && next.target.iter().all(|v| p.output.contains(v.as_str()))
    })
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
        match replay_step(state.as_mut(), spec, task, i) {
            Ok(step) => steps.push(step),
            Err(_) => break,
        }
    }
    steps
}

/// Run the task's call `i` (of tool `spec`) on `state` and describe it: the one way a
/// reference call becomes a [`Step`], for verification's checked replay and for the
/// measures. `Err` carries the tool's error text.
pub fn replay_step(
    state: &mut dyn Environment,
    spec: &crate::domain::ToolSpec,
    task: &TaskRecord,
    i: usize,
) -> Result<Step, String> {
    let a = &task.actions[i];
    let before = state.state_hash();
    let out = state.invoke(&a.name, &a.kwargs);
    if out.is_error {
        return Err(out.text);
    }
    // A read leaves the state as it was, so what it tells is read on the state after.
    let request = task.requests.get(i).and_then(Option::as_deref);
    let told = match spec.kind {
        ToolKind::Read => {
            crate::quality::answers::answer(state, &a.name, &a.kwargs, &out.text, request)
        }
        _ => Vec::new(),
    };
    Ok(Step {
        tool: a.name.clone(),
        args: a.kwargs.clone(),
        output: out.text,
        kind: spec.kind,
        intent: spec.intent,
        before,
        after: state.state_hash(),
        told,
        target: spec.declared.target_values(&a.kwargs),
    })
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
mod tests;
