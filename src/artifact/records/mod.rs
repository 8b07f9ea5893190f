//! Typed artifact rows and their Arrow schemas.
//!
//! Each record type is declared once, with `record!`: its fields, in declaration order, are
//! its columns, and each field's type says how its column is typed, encoded and decoded
//! (`Column`). A field declared `as Json` is a typed value stored as JSON text in a string
//! column (`json_column.rs`, `JsonText`: a task's actions, user facts and requests, an
//! episode's messages and injected mistakes).
//! The generated `to_batch` and `from_batch` are the only encoders. Decoding errors name the
//! column and the row, so a reader can say which file, column and row is bad.
//!
//! The `Record` trait, `record!` and the records are here; each field type's `Column` impl
//! (its Arrow layout) is `column.rs`, how a field's values become its column (`Native`, or
//! `Json` for `as Json`) `encoding.rs`.
//!
//! Architecture invariant: the Arrow layout of a field type is decided here once, by its
//! `Column` impl (or `JsonText`, for `as Json`); a record never lists its columns a second
//! time, and no reader of records decodes a column's JSON itself.

mod column;
mod encoding;

use super::json_column::json_text;
use crate::message::ChatMessage;
use crate::split::Split;
use crate::task::{Action, UserFact};
use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use encoding::{Encoding, Json, Native, decode, field};
use std::sync::Arc;

/// (column, message) of a decoding failure.
pub type ColumnError = (String, String);

pub trait Record: Sized {
    fn schema() -> SchemaRef;
    fn to_batch(rows: &[Self]) -> RecordBatch;
    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError>;
    /// About how many bytes this row adds to its batch's arrays (text bytes plus a fixed
    /// cost per value): what the writer splits a table into batches by, so no string
    /// array reaches Arrow's 2 GiB limit.
    fn encoded_bytes(&self) -> usize;
}

/// The encoding a `record!` field names (`as Json`), or `Native`.
macro_rules! encoding {
    () => {
        Native
    };
    ($enc:ident) => {
        $enc
    };
}

/// Declares a record type once: the struct as written (attributes and doc comments kept),
/// and its `Record` impl with one column per field, in declaration order, named after it.
/// A field written `name: Type as Json` is stored as JSON text (`JsonText`).
macro_rules! record {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident: $ty:ty $(as $enc:ident)?,)*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty,)*
        }

        impl Record for $name {
            fn schema() -> SchemaRef {
                Arc::new(Schema::new(vec![$(field::<encoding!($($enc)?), $ty>(stringify!($field)),)*]))
            }

            fn to_batch(rows: &[Self]) -> RecordBatch {
                let columns = vec![$(
                    <encoding!($($enc)?) as Encoding<$ty>>::to_array(rows.iter().map(|r| &r.$field)),
                )*];
                // Columns are built from the same rows in schema order; a mismatch is a bug here.
                RecordBatch::try_new(Self::schema(), columns).expect("record columns match their schema")
            }

            fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError> {
                $(let mut $field = decode::<encoding!($($enc)?), $ty>(batch, stringify!($field))?.into_iter();)*
                // Every column holds one value per row of the batch.
                Ok(std::iter::from_fn(|| Some($name { $($field: $field.next()?,)* })).collect())
            }

            fn encoded_bytes(&self) -> usize {
                0 $(+ <encoding!($($enc)?) as Encoding<$ty>>::encoded_bytes(&self.$field))*
            }
        }
    };
}

record! {
    /// One sampled trace: 1–3 intents, each a walk of tool names.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct TraceRecord {
        pub trace_id: String,
        pub domain: String,
        pub split: Split,
        /// Sampling index that produced this trace (its seed is derived from it).
        pub sample_index: i32,
        pub n_intents: i32,
        pub intents: Vec<Vec<String>>,
        /// Total tool calls over all intents.
        pub length: i32,
    }
}

record! {
    /// One verified edge of a tool dependency graph, with the witness that demonstrated it.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct EdgeRecord {
        pub domain: String,
        pub source: String,
        pub target: String,
        pub source_kind: String,
        pub target_kind: String,
        pub two_way: bool,
        pub demonstrated: bool,
        /// JSON: {user_id, source_args, target_args} of the demonstrating execution, or "null".
        pub witness: String,
    }
}

record! {
    /// A task as it moves through grounded -> refined -> tasks: each stage fills more columns
    /// (instruction by refinement, the emotion columns by the emotion stages) and writes its
    /// own artifact; the schema is shared so every stage's output reads the same way.
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
    pub struct TaskRecord {
        pub task_id: String,
        pub domain: String,
        pub split: Split,
        pub trace_id: String,
        pub user_id: String,
        /// Tool names per intent, as sampled.
        pub intents: Vec<Vec<String>>,
        /// The reference actions (JSON list of `{kwargs, name}`).
        pub actions: Vec<Action> as Json,
        /// Intent index of each action.
        pub action_intents: Vec<i32>,
        /// Values the agent must tell the user.
        pub outputs: Vec<String>,
        /// What the customer knows and can say, identity first (JSON list of `UserFact`s).
        pub user_facts: Vec<UserFact> as Json,
        /// Per action, the customer's request sentence, or none for the rest of an intent
        /// (JSON list of strings and nulls).
        pub requests: Vec<Option<String>> as Json,
        /// State hash after replaying the actions on a fresh fork.
        pub reference_hash: String,
        /// `scripted` or the model id that grounded the trace.
        pub grounder: String,
        pub instruction: Option<String>,
        pub refiner: Option<String>,
        /// How a model refiner's instruction came about: `first` (its first answer passed
        /// the checks), `retried` (its second, asked with the first one's refusal), or
        /// `fallback: <rule>` (both refused: the template draft is the instruction). None
        /// for the scripted refiner.
        pub refinement: Option<String>,
        pub feeling: Option<String>,
        pub emotion_family: Option<String>,
        pub emotion: Option<String>,
        pub politeness: Option<String>,
        pub urgency: Option<String>,
        pub trust: Option<String>,
        pub emotion_instruction: Option<String>,
    }
}

record! {
    /// A trace or task a stage rejected, and why (for the funnel).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct RejectRecord {
        pub domain: String,
        pub split: Split,
        pub trace_id: String,
        pub task_id: Option<String>,
        pub stage: String,
        /// Short machine-readable kind ("no_grounding", "policy", "information", ...).
        pub reason_kind: String,
        /// The named policy rule a `policy` rejection broke.
        pub rule: Option<String>,
        pub reason: String,
    }
}

record! {
    /// One rolled-out episode (the `rollouts` and `eval` stages; `trajectories` keeps reward 1).
    #[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    pub struct RolloutRecord {
        pub task_id: String,
        pub trial: i32,
        pub domain: String,
        pub split: Split,
        pub emotion_family: Option<String>,
        pub emotion: Option<String>,
        pub politeness: Option<String>,
        pub urgency: Option<String>,
        pub trust: Option<String>,
        pub agent_model: String,
        pub user_model: String,
        /// The transcript: OpenAI-format messages (tool calls, tool results, reasoning
        /// content), a JSON list in the column and in a journal line.
        #[serde(with = "json_text")]
        pub messages: Vec<ChatMessage> as Json,
        pub reward: i32,
        /// JSON of the reward breakdown.
        pub reward_breakdown: String,
        pub termination: String,
        pub user_turns: i32,
        pub assistant_turns: i32,
        pub tool_calls: i32,
        pub follow_up_questions: i32,
        pub gold_actions: i32,
        pub reasoning_chars: i64,
        /// Agent and user simulator together, cached prompt tokens included.
        pub prompt_tokens: i64,
        pub completion_tokens: i64,
        /// Per role (what the episode's cost is computed from): prompt tokens, the part of
        /// them the server read from its prompt cache, completion tokens. 0 for scripted
        /// roles; answers replayed from the response cache count what they first cost.
        pub agent_prompt_tokens: i64,
        pub agent_cached_prompt_tokens: i64,
        pub agent_completion_tokens: i64,
        pub user_prompt_tokens: i64,
        pub user_cached_prompt_tokens: i64,
        pub user_completion_tokens: i64,
        pub error: Option<String>,
        /// The mistakes the scripted oracle agent made on purpose in this episode
        /// (`skip_confirmation`, `redundant_question`, `wrong_argument`, `premature_transfer`;
        /// a JSON list); null for model agents. Ground truth for measuring the failure
        /// analysis, which must never read it.
        #[serde(default, with = "json_text::option")]
        pub injected_mistakes: Option<Vec<String>> as Json,
    }
}

record! {
    /// One fault of one episode (the `analysis` stage, `tracer analyze --rollouts`): the
    /// episode's key and outcome, the fault and its taxonomy group, where the evidence is,
    /// and who decided it (a detector, or `judge:<model>` for a model label).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct FaultRecord {
        pub task_id: String,
        pub trial: i32,
        pub domain: String,
        pub split: Split,
        /// The artifact the episode came from: `rollouts`, `eval`, or `rollout` (imported tasks).
        pub source: String,
        pub agent_model: String,
        pub user_model: String,
        pub reward: i32,
        pub termination: String,
        pub fault: String,
        pub category: String,
        /// Index into the episode's `messages` of the evidence (for action faults: the first
        /// message where the agent left the reference path).
        pub step: Option<i32>,
        /// 1-based position of the tool call among the episode's calls, when the fault is one.
        pub call: Option<i32>,
        /// The detector's name, or `judge:<model>`.
        pub detector: String,
        /// True when a model decided the label (the judge), false for a detector's.
        pub model_label: bool,
        pub detail: String,
        /// Whose fault a judge's label says it is: `agent` or `user` (none for detectors).
        pub party: Option<String>,
        /// A judge's severity: `minor`, `major` or `critical` (none for detectors).
        pub severity: Option<String>,
    }
}

#[cfg(test)]
mod tests;
