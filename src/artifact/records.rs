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
//! Architecture invariant: the Arrow layout of a field type is decided here once, by its
//! `Column` impl (or `JsonText`, for `as Json`); a record never lists its columns a second
//! time, and no reader of records decodes a column's JSON itself.

use super::json_column::{JsonText, json_text};
use crate::message::ChatMessage;
use crate::split::Split;
use crate::task::{Action, UserFact};
use arrow_array::builder::{BooleanBuilder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
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

/// A field type that can be an artifact column: its Arrow type and nullability, and the
/// encoding of the rows' values as one Arrow array and back.
trait Column: Sized {
    /// Whether the column may hold nulls (the `Option` types).
    const NULLABLE: bool = false;
    fn data_type() -> DataType;
    fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef
    where
        Self: 'a;
    fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError>;
    /// Bytes this value adds to its array: the text, plus an offset or a fixed-width value.
    fn encoded_bytes(&self) -> usize {
        8
    }
}

/// Why a column's values could not be decoded: where (the row, then the item within each
/// level of list; empty for the whole column) and what was wrong.
struct CellError {
    at: Vec<usize>,
    message: String,
}

impl CellError {
    fn column(message: String) -> Self {
        CellError {
            at: Vec::new(),
            message,
        }
    }

    fn row(row: usize, message: impl Into<String>) -> Self {
        CellError {
            at: vec![row],
            message: message.into(),
        }
    }

    /// The same error seen from the list that holds the failing value at `row`.
    fn within(mut self, row: usize) -> Self {
        self.at.insert(0, row);
        self
    }
}

impl std::fmt::Display for CellError {
    /// `row 3: null`, `row 3, item 1: null`, or the bare message for the whole column.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (depth, index) in self.at.iter().enumerate() {
            let sep = if depth == 0 { "row" } else { ", item" };
            write!(f, "{sep} {index}")?;
        }
        if !self.at.is_empty() {
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

/// The array as `A`, or an error naming the type the column `C` expected and the one found.
fn downcast<A: Array + 'static, C: Column>(array: &dyn Array) -> Result<&A, CellError> {
    array.as_any().downcast_ref::<A>().ok_or_else(|| {
        CellError::column(format!(
            "expected {}, found {}",
            C::data_type(),
            array.data_type()
        ))
    })
}

/// The schema field of a column named `name` holding `T` encoded by `E`.
fn field<E: Encoding<T>, T>(name: &str) -> Field {
    Field::new(name, E::data_type(), E::NULLABLE)
}

/// Decode the column `name` of `batch`, naming the column in any error.
fn decode<E: Encoding<T>, T>(batch: &RecordBatch, name: &str) -> Result<Vec<T>, ColumnError> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| (name.to_string(), "missing".to_string()))?;
    E::from_array(array.as_ref()).map_err(|e| (name.to_string(), e.to_string()))
}

/// `Column` for scalar types and their `Option`s, one line each: the type, its Arrow type,
/// array and builder, the value the builder takes for `v: &Self`, and the owned value read
/// back from array `a` at row `i`.
macro_rules! scalar_columns {
    ($($t:ty: $data_type:expr, $array:ty, $builder:ty, |$v:ident| $put:expr, |$a:ident, $i:ident| $get:expr;)*) => {$(
        impl Column for $t {
            fn data_type() -> DataType {
                $data_type
            }

            fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
                let mut b = <$builder>::new();
                for $v in values {
                    b.append_value($put);
                }
                Arc::new(b.finish())
            }

            fn encoded_bytes(&self) -> usize {
                8 + TextLen::text_len(self)
            }

            fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
                let $a = downcast::<$array, Self>(array)?;
                (0..$a.len())
                    .map(|$i| {
                        if $a.is_null($i) {
                            Err(CellError::row($i, "null"))
                        } else {
                            Ok($get)
                        }
                    })
                    .collect()
            }
        }

        impl Column for Option<$t> {
            const NULLABLE: bool = true;

            fn data_type() -> DataType {
                $data_type
            }

            fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
                let mut b = <$builder>::new();
                for value in values {
                    match value {
                        Some($v) => b.append_value($put),
                        None => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }

            fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
                let $a = downcast::<$array, Self>(array)?;
                Ok((0..$a.len())
                    .map(|$i| (!$a.is_null($i)).then(|| $get))
                    .collect())
            }

            fn encoded_bytes(&self) -> usize {
                8 + self.as_ref().map_or(0, TextLen::text_len)
            }
        }
    )*};
}

/// The variable-length bytes of a scalar (its UTF-8 length for text, none otherwise).
trait TextLen {
    fn text_len(&self) -> usize {
        0
    }
}

impl TextLen for String {
    fn text_len(&self) -> usize {
        self.len()
    }
}
impl TextLen for i32 {}
impl TextLen for i64 {}
impl TextLen for bool {}

scalar_columns! {
    String: DataType::Utf8, StringArray, StringBuilder, |v| v, |a, i| a.value(i).to_string();
    i32: DataType::Int32, Int32Array, Int32Builder, |v| *v, |a, i| a.value(i);
    i64: DataType::Int64, Int64Array, Int64Builder, |v| *v, |a, i| a.value(i);
    bool: DataType::Boolean, BooleanArray, BooleanBuilder, |v| *v, |a, i| a.value(i);
}

/// A `split` column is text; every value must name a split.
impl Column for Split {
    fn data_type() -> DataType {
        DataType::Utf8
    }

    fn to_array<'a>(values: impl Iterator<Item = &'a Self>) -> ArrayRef {
        let mut b = StringBuilder::new();
        for v in values {
            b.append_value(v.as_str());
        }
        Arc::new(b.finish())
    }

    fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
        String::from_array(array)?
            .iter()
            .enumerate()
            .map(|(i, v)| v.parse().map_err(|e: String| CellError::row(i, e)))
            .collect()
    }
}

/// A list column (`list<item>`, items declared nullable as Arrow's list builders do); a
/// null list, or a bad item, is an error naming the row and the item.
impl<T: Column> Column for Vec<T> {
    fn data_type() -> DataType {
        DataType::List(item_field::<T>())
    }

    fn to_array<'a>(rows: impl Iterator<Item = &'a Self>) -> ArrayRef
    where
        Self: 'a,
    {
        let mut lengths = Vec::new();
        let mut items = Vec::new();
        for row in rows {
            lengths.push(row.len());
            items.extend(row);
        }
        let values = T::to_array(items.into_iter());
        let offsets = OffsetBuffer::from_lengths(lengths);
        Arc::new(ListArray::new(item_field::<T>(), offsets, values, None))
    }

    fn encoded_bytes(&self) -> usize {
        8 + self.iter().map(T::encoded_bytes).sum::<usize>()
    }

    fn from_array(array: &dyn Array) -> Result<Vec<Self>, CellError> {
        let list = downcast::<ListArray, Self>(array)?;
        (0..list.len())
            .map(|i| {
                if list.is_null(i) {
                    return Err(CellError::row(i, "null"));
                }
                T::from_array(list.value(i).as_ref()).map_err(|e| e.within(i))
            })
            .collect()
    }
}

fn item_field<T: Column>() -> FieldRef {
    Arc::new(Field::new("item", T::data_type(), true))
}

/// How a field's values become its column: `Native`, by the field type's own [`Column`]
/// (the default), or `Json`, as the JSON text of each value in a string column.
trait Encoding<T> {
    const NULLABLE: bool;
    fn data_type() -> DataType;
    fn to_array<'a>(values: impl Iterator<Item = &'a T>) -> ArrayRef
    where
        T: 'a;
    fn from_array(array: &dyn Array) -> Result<Vec<T>, CellError>;
    fn encoded_bytes(value: &T) -> usize;
}

/// The field type's own column.
struct Native;

impl<T: Column> Encoding<T> for Native {
    const NULLABLE: bool = T::NULLABLE;
    fn data_type() -> DataType {
        T::data_type()
    }
    fn to_array<'a>(values: impl Iterator<Item = &'a T>) -> ArrayRef
    where
        T: 'a,
    {
        T::to_array(values)
    }
    fn from_array(array: &dyn Array) -> Result<Vec<T>, CellError> {
        T::from_array(array)
    }
    fn encoded_bytes(value: &T) -> usize {
        value.encoded_bytes()
    }
}

/// JSON text in a string column (`as Json` in `record!`; an `Option` is a nullable column).
struct Json;

impl Json {
    fn encode<'a, T: JsonText + 'a>(values: impl Iterator<Item = Option<&'a T>>) -> ArrayRef {
        let mut b = StringBuilder::new();
        for v in values {
            match v {
                Some(v) => b.append_value(v.to_json()),
                None => b.append_null(),
            }
        }
        Arc::new(b.finish())
    }

    fn decode<T: JsonText>(array: &dyn Array) -> Result<Vec<Option<T>>, CellError> {
        let a = downcast::<StringArray, Option<String>>(array)?;
        (0..a.len())
            .map(|i| {
                if a.is_null(i) {
                    return Ok(None);
                }
                T::from_json(a.value(i))
                    .map(Some)
                    .map_err(|e| CellError::row(i, e.to_string()))
            })
            .collect()
    }
}

impl<T: JsonText> Encoding<T> for Json {
    const NULLABLE: bool = false;
    fn data_type() -> DataType {
        DataType::Utf8
    }
    fn to_array<'a>(values: impl Iterator<Item = &'a T>) -> ArrayRef
    where
        T: 'a,
    {
        Json::encode(values.map(Some))
    }
    fn from_array(array: &dyn Array) -> Result<Vec<T>, CellError> {
        Json::decode(array)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| CellError::row(i, "null")))
            .collect()
    }
    fn encoded_bytes(value: &T) -> usize {
        8 + value.json_len()
    }
}

impl<T: JsonText> Encoding<Option<T>> for Json {
    const NULLABLE: bool = true;
    fn data_type() -> DataType {
        DataType::Utf8
    }
    fn to_array<'a>(values: impl Iterator<Item = &'a Option<T>>) -> ArrayRef
    where
        T: 'a,
    {
        Json::encode(values.map(Option::as_ref))
    }
    fn from_array(array: &dyn Array) -> Result<Vec<Option<T>>, CellError> {
        Json::decode(array)
    }
    fn encoded_bytes(value: &Option<T>) -> usize {
        8 + value.as_ref().map_or(0, JsonText::json_len)
    }
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_rows_round_trip_through_arrow() {
        let rows = vec![
            TraceRecord {
                trace_id: "t1".into(),
                domain: "airline".into(),
                split: Split::Train,
                sample_index: 0,
                n_intents: 2,
                intents: vec![
                    vec!["a".into(), "b".into()],
                    vec!["c".into(), "d".into(), "e".into()],
                ],
                length: 5,
            },
            TraceRecord {
                trace_id: "t2".into(),
                domain: "airline".into(),
                split: Split::Eval,
                sample_index: 3,
                n_intents: 1,
                intents: vec![vec!["x".into(), "y".into()]],
                length: 2,
            },
        ];
        let batch = TraceRecord::to_batch(&rows);
        assert_eq!(TraceRecord::from_batch(&batch).unwrap(), rows);
    }

    #[test]
    fn fault_rows_round_trip_with_and_without_a_step() {
        let rows = vec![
            FaultRecord {
                task_id: "t1".into(),
                trial: 2,
                fault: "missed_action".into(),
                step: Some(7),
                call: Some(2),
                detector: "alignment".into(),
                ..Default::default()
            },
            FaultRecord {
                task_id: "t1".into(),
                fault: "friction".into(),
                detector: "judge:m".into(),
                model_label: true,
                ..Default::default()
            },
        ];
        let batch = FaultRecord::to_batch(&rows);
        assert_eq!(FaultRecord::from_batch(&batch).unwrap(), rows);
    }

    #[test]
    fn task_reject_rollout_and_edge_rows_round_trip_through_arrow() {
        let tasks = vec![
            TaskRecord {
                task_id: "k1".into(),
                split: Split::Eval,
                intents: vec![vec!["a".into()], vec![]],
                action_intents: vec![0, 0, 1],
                outputs: vec!["42".into()],
                instruction: Some("do it".into()),
                emotion_instruction: Some(String::new()),
                ..Default::default()
            },
            TaskRecord::default(),
        ];
        assert_eq!(
            TaskRecord::from_batch(&TaskRecord::to_batch(&tasks)).unwrap(),
            tasks
        );
        let rejects = vec![
            RejectRecord {
                task_id: Some("k1".into()),
                rule: None,
                reason: "policy".into(),
                ..Default::default()
            },
            RejectRecord::default(),
        ];
        assert_eq!(
            RejectRecord::from_batch(&RejectRecord::to_batch(&rejects)).unwrap(),
            rejects
        );
        let rollouts = vec![RolloutRecord {
            trial: 2,
            reward: -1,
            reasoning_chars: i64::MAX,
            emotion: Some("anger".into()),
            injected_mistakes: Some(vec![]),
            ..Default::default()
        }];
        assert_eq!(
            RolloutRecord::from_batch(&RolloutRecord::to_batch(&rollouts)).unwrap(),
            rollouts
        );
        let edges = vec![EdgeRecord {
            domain: "airline".into(),
            source: "a".into(),
            target: "b".into(),
            source_kind: "read".into(),
            target_kind: "write".into(),
            two_way: true,
            demonstrated: false,
            witness: "null".into(),
        }];
        assert_eq!(
            EdgeRecord::from_batch(&EdgeRecord::to_batch(&edges)).unwrap(),
            edges
        );
        assert!(
            TraceRecord::from_batch(&TraceRecord::to_batch(&[]))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn list_columns_are_the_arrays_arrow_list_builders_make() {
        // Parquet files must not change with the encoder: compare with the builders the
        // hand-written encoders used.
        use arrow_array::builder::ListBuilder;
        let rows = vec![
            vec![vec!["a".to_string(), "b".to_string()], vec![]],
            vec![],
            vec![vec!["c".to_string()]],
        ];
        let mut b = ListBuilder::new(ListBuilder::new(StringBuilder::new()));
        for row in &rows {
            for walk in row {
                for tool in walk {
                    b.values().values().append_value(tool);
                }
                b.values().append(true);
            }
            b.append(true);
        }
        let built: ArrayRef = Arc::new(b.finish());
        let ours = Vec::<Vec<String>>::to_array(rows.iter());
        assert_eq!(ours.data_type(), built.data_type());
        assert_eq!(ours.to_data(), built.to_data());
        assert_eq!(ours.logical_nulls(), None);
    }

    /// `batch` with column `name` replaced by `array` (declared nullable, so nulls fit).
    fn with_column(batch: &RecordBatch, name: &str, array: ArrayRef) -> RecordBatch {
        let schema = batch.schema();
        let i = schema.index_of(name).unwrap();
        let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields[i] = Field::new(name, array.data_type().clone(), true);
        let mut columns = batch.columns().to_vec();
        columns[i] = array;
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    #[test]
    fn decoding_errors_name_the_column_and_the_row() {
        let rows = vec![
            TraceRecord {
                trace_id: "t1".into(),
                domain: "airline".into(),
                split: Split::Train,
                sample_index: 0,
                n_intents: 1,
                intents: vec![vec!["a".into()]],
                length: 1,
            };
            2
        ];
        let batch = TraceRecord::to_batch(&rows);
        let error = |bad: RecordBatch| TraceRecord::from_batch(&bad).unwrap_err();

        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None]));
        assert_eq!(
            error(with_column(&batch, "sample_index", ints)),
            ("sample_index".into(), "row 1: null".into())
        );

        let mut b = arrow_array::builder::ListBuilder::new(arrow_array::builder::ListBuilder::new(
            StringBuilder::new(),
        ));
        b.values().values().append_value("a");
        b.values().append(true);
        b.append(true);
        b.values().values().append_value("a");
        b.values().values().append_null();
        b.values().append(true);
        b.append(true);
        let intents: ArrayRef = Arc::new(b.finish());
        assert_eq!(
            error(with_column(&batch, "intents", intents)),
            ("intents".into(), "row 1, item 0, item 1: null".into())
        );

        let splits: ArrayRef = Arc::new(StringArray::from(vec!["train", "test"]));
        let (column, message) = error(with_column(&batch, "split", splits));
        assert_eq!(column, "split");
        assert!(
            message.starts_with("row 1: ") && message.contains("'test'"),
            "{message}"
        );

        let ids: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        assert_eq!(
            error(with_column(&batch, "trace_id", ids)),
            ("trace_id".into(), "expected Utf8, found Int32".into())
        );

        let without_length = batch.project(&[0, 1, 2, 3, 4, 5]).unwrap();
        assert_eq!(error(without_length), ("length".into(), "missing".into()));
    }

    /// The text of column `name` at `row` of `batch`.
    fn text(batch: &RecordBatch, name: &str, row: usize) -> String {
        let column = batch.column_by_name(name).unwrap();
        let strings = column.as_any().downcast_ref::<StringArray>().unwrap();
        strings.value(row).to_string()
    }

    #[test]
    fn json_columns_hold_the_text_tasks_and_episodes_have_always_had() {
        use serde_json::json;
        let task = TaskRecord {
            task_id: "t1".into(),
            actions: vec![
                Action {
                    name: "get_user_details".into(),
                    kwargs: json!({"user_id": "u", "amount": 1.1, "n": 3}),
                },
                Action {
                    name: "think".into(),
                    kwargs: serde_json::Value::Null,
                },
            ],
            user_facts: vec![UserFact {
                kind: "identity".into(),
                text: "Your id is u.".into(),
                values: vec!["u".into()],
                ids: vec![],
            }],
            requests: vec![Some("I need my details.".into()), None],
            ..Default::default()
        };
        let batch = TaskRecord::to_batch(std::slice::from_ref(&task));
        // What the grounder wrote before the columns were typed: each action a JSON object
        // (keys sorted), the facts and requests as serde writes them.
        let grounder: Vec<serde_json::Value> = task
            .actions
            .iter()
            .map(|a| json!({"name": a.name, "kwargs": a.kwargs}))
            .collect();
        assert_eq!(
            text(&batch, "actions", 0),
            serde_json::to_string(&grounder).unwrap()
        );
        assert_eq!(
            text(&batch, "actions", 0),
            r#"[{"kwargs":{"amount":1.1,"n":3,"user_id":"u"},"name":"get_user_details"},{"kwargs":null,"name":"think"}]"#
        );
        assert_eq!(
            text(&batch, "user_facts", 0),
            r#"[{"kind":"identity","text":"Your id is u.","values":["u"],"ids":[]}]"#
        );
        assert_eq!(
            text(&batch, "requests", 0),
            r#"["I need my details.",null]"#
        );
        // The batch writer sizes rows by these lengths.
        assert_eq!(task.actions.json_len(), text(&batch, "actions", 0).len());
        assert_eq!(
            task.user_facts.json_len(),
            text(&batch, "user_facts", 0).len()
        );
        assert_eq!(TaskRecord::from_batch(&batch).unwrap(), [task]);

        // A missing `kwargs` reads as null, a missing `ids` as none (older files).
        let old: ArrayRef = Arc::new(StringArray::from(vec![r#"[{"name":"think"}]"#]));
        let facts: ArrayRef = Arc::new(StringArray::from(vec![
            r#"[{"kind":"name","text":"You are Ana.","values":["Ana"]}]"#,
        ]));
        let read = TaskRecord::from_batch(&with_column(
            &with_column(&batch, "actions", old),
            "user_facts",
            facts,
        ))
        .unwrap();
        assert!(read[0].actions[0].kwargs.is_null());
        assert!(read[0].user_facts[0].ids.is_empty());

        let message = crate::message::ChatMessage::assistant("Hello");
        let rollout = RolloutRecord {
            messages: vec![message.clone()],
            injected_mistakes: Some(vec!["skip_confirmation".into()]),
            ..Default::default()
        };
        let batch = RolloutRecord::to_batch(&[rollout.clone(), RolloutRecord::default()]);
        assert_eq!(
            text(&batch, "messages", 0),
            serde_json::to_string(&[message]).unwrap()
        );
        assert_eq!(
            text(&batch, "injected_mistakes", 0),
            r#"["skip_confirmation"]"#
        );
        assert!(
            batch
                .column_by_name("injected_mistakes")
                .unwrap()
                .is_null(1)
        );
        assert_eq!(
            RolloutRecord::from_batch(&batch).unwrap(),
            [rollout.clone(), RolloutRecord::default()]
        );
        // A journal line holds the same text as the column, and reads back.
        let line = serde_json::to_value(&rollout).unwrap();
        assert_eq!(line["messages"], json!(text(&batch, "messages", 0)));
        assert_eq!(line["injected_mistakes"], json!(r#"["skip_confirmation"]"#));
        assert_eq!(
            serde_json::from_value::<RolloutRecord>(line).unwrap(),
            rollout
        );
    }

    #[test]
    fn a_damaged_json_column_is_an_error_naming_the_column_and_the_row() {
        let batch = TaskRecord::to_batch(&[TaskRecord::default(), TaskRecord::default()]);
        let error = |name: &str, values: Vec<Option<&str>>| {
            let array: ArrayRef = Arc::new(StringArray::from(values));
            TaskRecord::from_batch(&with_column(&batch, name, array)).unwrap_err()
        };
        let (column, message) = error("actions", vec![Some("[]"), Some(r#"[{"kwargs":{}}]"#)]);
        assert_eq!(column, "actions");
        assert!(
            message.starts_with("row 1: missing field `name`"),
            "{message}"
        );
        let (column, message) = error("requests", vec![Some("{"), Some("[]")]);
        assert_eq!(column, "requests");
        assert!(message.starts_with("row 0: "), "{message}");
        assert_eq!(
            error("user_facts", vec![Some("[]"), None]),
            ("user_facts".into(), "row 1: null".into())
        );
    }

    #[test]
    fn arrow_schemas_are_stable() {
        // Snapshot of the artifact schemas: a change here is a format change for users.
        let fields = |s: SchemaRef| {
            s.fields()
                .iter()
                .map(|f| format!("{}:{}", f.name(), f.data_type()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        assert_eq!(
            fields(TraceRecord::schema()),
            "trace_id:Utf8, domain:Utf8, split:Utf8, sample_index:Int32, n_intents:Int32, \
             intents:List(List(Utf8)), length:Int32"
        );
        assert_eq!(
            fields(EdgeRecord::schema()),
            "domain:Utf8, source:Utf8, target:Utf8, source_kind:Utf8, target_kind:Utf8, \
             two_way:Boolean, demonstrated:Boolean, witness:Utf8"
        );
        // The typed JSON columns are text columns, nullable only where the field is an Option.
        let nullable = |s: SchemaRef, name: &str| {
            let f = s.field_with_name(name).unwrap().clone();
            (f.data_type().clone(), f.is_nullable())
        };
        for name in ["actions", "user_facts", "requests"] {
            assert_eq!(
                nullable(TaskRecord::schema(), name),
                (DataType::Utf8, false)
            );
        }
        assert_eq!(
            nullable(RolloutRecord::schema(), "messages"),
            (DataType::Utf8, false)
        );
        assert_eq!(
            nullable(RolloutRecord::schema(), "injected_mistakes"),
            (DataType::Utf8, true)
        );
    }
}
