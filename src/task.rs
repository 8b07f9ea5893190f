//! The parts of a task that are more than text: its reference actions ([`Action`]) and
//! what the customer knows ([`UserFact`]). `artifact::TaskRecord` holds them typed; its
//! `actions` and `user_facts` columns store them as JSON text, encoded and decoded only in
//! `artifact` (a damaged column is an error naming the file, the column and the row, never
//! an empty plan).
//!
//! Architecture invariant: a leaf: depends on nothing in the crate, so domains (which
//! produce facts), artifacts (which store them) and every reader of tasks share one type.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call of a task: the tool's name and its arguments (tau-bench's `{name, kwargs}`;
/// missing `kwargs` reads as null).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    pub name: String,
    #[serde(default)]
    pub kwargs: Value,
}

/// Something a customer knows and can say: who they are, how they pay, what they own.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserFact {
    /// "identity" (how the customer authenticates; first), "name", "payment", "entity",
    /// "address", ...
    pub kind: String,
    /// A complete second-person sentence for an instruction, e.g. "Your user id is
    /// nora_quill_4821." or "You pay with your Visa card ending in 3303."
    pub text: String,
    /// The literal strings the sentence reveals ("nora_quill_4821", "3303").
    pub values: Vec<String>,
    /// Internal ids this fact lets an agent resolve (e.g. "credit_card_7815826"): a task may
    /// use such an id only if the instruction states this fact.
    #[serde(default)]
    pub ids: Vec<String>,
}
