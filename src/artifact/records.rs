//! Typed artifact rows and their Arrow schemas.
//!
//! Each record type declares its schema once; `to_batch` and `from_batch` are the only
//! encoders. Decoding errors name the column, so a reader can say which file and column is bad.

use crate::split::Split;
use arrow::array::{
    Array, ArrayRef, BooleanArray, BooleanBuilder, Int32Array, Int32Builder, Int64Array,
    Int64Builder, ListArray, ListBuilder, RecordBatch, StringArray, StringBuilder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// (column, message) of a decoding failure.
pub type ColumnError = (String, String);

pub trait Record: Sized {
    fn schema() -> SchemaRef;
    fn to_batch(rows: &[Self]) -> RecordBatch;
    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError>;
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T, ColumnError> {
    batch
        .column_by_name(name)
        .ok_or_else(|| (name.to_string(), "missing".to_string()))?
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| (name.to_string(), "unexpected array type".to_string()))
}

/// A `split` column: every value must name a split.
fn splits(batch: &RecordBatch, name: &str) -> Result<Vec<Split>, ColumnError> {
    strings(batch, name)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.parse()
                .map_err(|e| (name.to_string(), format!("row {i}: {e}")))
        })
        .collect()
}

fn strings(batch: &RecordBatch, name: &str) -> Result<Vec<String>, ColumnError> {
    let col = column::<StringArray>(batch, name)?;
    (0..col.len())
        .map(|i| {
            if col.is_null(i) {
                Err((name.to_string(), format!("null at row {i}")))
            } else {
                Ok(col.value(i).to_string())
            }
        })
        .collect()
}

fn ints(batch: &RecordBatch, name: &str) -> Result<Vec<i32>, ColumnError> {
    let col = column::<Int32Array>(batch, name)?;
    Ok((0..col.len()).map(|i| col.value(i)).collect())
}

fn bools(batch: &RecordBatch, name: &str) -> Result<Vec<bool>, ColumnError> {
    let col = column::<BooleanArray>(batch, name)?;
    Ok((0..col.len()).map(|i| col.value(i)).collect())
}

fn string_column(values: impl Iterator<Item = impl AsRef<str>>) -> ArrayRef {
    let mut b = StringBuilder::new();
    for v in values {
        b.append_value(v);
    }
    Arc::new(b.finish())
}

fn int_column(values: impl Iterator<Item = i32>) -> ArrayRef {
    let mut b = Int32Builder::new();
    for v in values {
        b.append_value(v);
    }
    Arc::new(b.finish())
}

fn bool_column(values: impl Iterator<Item = bool>) -> ArrayRef {
    let mut b = BooleanBuilder::new();
    for v in values {
        b.append_value(v);
    }
    Arc::new(b.finish())
}

fn utf8(name: &str) -> Field {
    Field::new(name, DataType::Utf8, false)
}

fn intents_column<'a>(rows: impl Iterator<Item = &'a Vec<Vec<String>>>) -> ArrayRef {
    let mut b = ListBuilder::new(ListBuilder::new(StringBuilder::new()));
    for intents in rows {
        for walk in intents {
            for tool in walk {
                b.values().values().append_value(tool);
            }
            b.values().append(true);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

fn batch(schema: SchemaRef, columns: Vec<ArrayRef>) -> RecordBatch {
    // Columns are built from the same rows in schema order; a mismatch is a bug here.
    RecordBatch::try_new(schema, columns).expect("record columns match their schema")
}

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

fn intents_type() -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        true,
    )))
}

impl TraceRecord {
    /// Decode the `intents` column (list<list<utf8>>), shared by traces and tasks.
    pub(crate) fn from_batch_intents(
        batch: &RecordBatch,
    ) -> Result<Vec<Vec<Vec<String>>>, ColumnError> {
        let list = column::<ListArray>(batch, "intents")?;
        let mut intents = Vec::with_capacity(list.len());
        for i in 0..list.len() {
            let walks = list.value(i);
            let walks = walks
                .as_any()
                .downcast_ref::<ListArray>()
                .ok_or_else(|| ("intents".to_string(), "expected list<list<utf8>>".into()))?;
            let mut trace = Vec::with_capacity(walks.len());
            for w in 0..walks.len() {
                let tools = walks.value(w);
                let tools = tools
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .ok_or_else(|| ("intents".to_string(), "expected utf8 tool names".into()))?;
                trace.push(
                    (0..tools.len())
                        .map(|t| tools.value(t).to_string())
                        .collect(),
                );
            }
            intents.push(trace);
        }
        Ok(intents)
    }
}

impl Record for TraceRecord {
    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            utf8("trace_id"),
            utf8("domain"),
            utf8("split"),
            Field::new("sample_index", DataType::Int32, false),
            Field::new("n_intents", DataType::Int32, false),
            Field::new("intents", intents_type(), false),
            Field::new("length", DataType::Int32, false),
        ]))
    }

    fn to_batch(rows: &[Self]) -> RecordBatch {
        batch(
            Self::schema(),
            vec![
                string_column(rows.iter().map(|r| &r.trace_id)),
                string_column(rows.iter().map(|r| &r.domain)),
                string_column(rows.iter().map(|r| r.split.as_str())),
                int_column(rows.iter().map(|r| r.sample_index)),
                int_column(rows.iter().map(|r| r.n_intents)),
                intents_column(rows.iter().map(|r| &r.intents)),
                int_column(rows.iter().map(|r| r.length)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError> {
        let intents = Self::from_batch_intents(batch)?;
        let ids = strings(batch, "trace_id")?;
        let domains = strings(batch, "domain")?;
        let splits = splits(batch, "split")?;
        let index = ints(batch, "sample_index")?;
        let n = ints(batch, "n_intents")?;
        let length = ints(batch, "length")?;
        Ok((0..batch.num_rows())
            .map(|i| TraceRecord {
                trace_id: ids[i].clone(),
                domain: domains[i].clone(),
                split: splits[i],
                sample_index: index[i],
                n_intents: n[i],
                intents: intents[i].clone(),
                length: length[i],
            })
            .collect())
    }
}

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

impl Record for EdgeRecord {
    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            utf8("domain"),
            utf8("source"),
            utf8("target"),
            utf8("source_kind"),
            utf8("target_kind"),
            Field::new("two_way", DataType::Boolean, false),
            Field::new("demonstrated", DataType::Boolean, false),
            utf8("witness"),
        ]))
    }

    fn to_batch(rows: &[Self]) -> RecordBatch {
        batch(
            Self::schema(),
            vec![
                string_column(rows.iter().map(|r| &r.domain)),
                string_column(rows.iter().map(|r| &r.source)),
                string_column(rows.iter().map(|r| &r.target)),
                string_column(rows.iter().map(|r| &r.source_kind)),
                string_column(rows.iter().map(|r| &r.target_kind)),
                bool_column(rows.iter().map(|r| r.two_way)),
                bool_column(rows.iter().map(|r| r.demonstrated)),
                string_column(rows.iter().map(|r| &r.witness)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError> {
        let domain = strings(batch, "domain")?;
        let source = strings(batch, "source")?;
        let target = strings(batch, "target")?;
        let source_kind = strings(batch, "source_kind")?;
        let target_kind = strings(batch, "target_kind")?;
        let two_way = bools(batch, "two_way")?;
        let demonstrated = bools(batch, "demonstrated")?;
        let witness = strings(batch, "witness")?;
        Ok((0..batch.num_rows())
            .map(|i| EdgeRecord {
                domain: domain[i].clone(),
                source: source[i].clone(),
                target: target[i].clone(),
                source_kind: source_kind[i].clone(),
                target_kind: target_kind[i].clone(),
                two_way: two_way[i],
                demonstrated: demonstrated[i],
                witness: witness[i].clone(),
            })
            .collect())
    }
}

fn opt_strings(batch: &RecordBatch, name: &str) -> Result<Vec<Option<String>>, ColumnError> {
    let col = column::<StringArray>(batch, name)?;
    Ok((0..col.len())
        .map(|i| (!col.is_null(i)).then(|| col.value(i).to_string()))
        .collect())
}

fn opt_string_column<'a>(values: impl Iterator<Item = &'a Option<String>>) -> ArrayRef {
    let mut b = StringBuilder::new();
    for v in values {
        b.append_option(v.as_deref());
    }
    Arc::new(b.finish())
}

fn opt_utf8(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

fn string_list_column<'a>(rows: impl Iterator<Item = &'a Vec<String>>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for row in rows {
        for v in row {
            b.values().append_value(v);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

fn int_list_column<'a>(rows: impl Iterator<Item = &'a Vec<i32>>) -> ArrayRef {
    let mut b = ListBuilder::new(Int32Builder::new());
    for row in rows {
        for v in row {
            b.values().append_value(*v);
        }
        b.append(true);
    }
    Arc::new(b.finish())
}

fn string_lists(batch: &RecordBatch, name: &str) -> Result<Vec<Vec<String>>, ColumnError> {
    let list = column::<ListArray>(batch, name)?;
    (0..list.len())
        .map(|i| {
            let v = list.value(i);
            let s = v
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| (name.to_string(), "expected list<utf8>".to_string()))?;
            Ok((0..s.len()).map(|j| s.value(j).to_string()).collect())
        })
        .collect()
}

fn int_lists(batch: &RecordBatch, name: &str) -> Result<Vec<Vec<i32>>, ColumnError> {
    let list = column::<ListArray>(batch, name)?;
    (0..list.len())
        .map(|i| {
            let v = list.value(i);
            let s = v
                .as_any()
                .downcast_ref::<Int32Array>()
                .ok_or_else(|| (name.to_string(), "expected list<int32>".to_string()))?;
            Ok((0..s.len()).map(|j| s.value(j)).collect())
        })
        .collect()
}

/// A task as it moves through grounded -> refined -> tasks: each stage fills more columns
/// (instruction by refinement, the emotion columns by the emotion stages) and writes its
/// own artifact; the schema is shared so every stage's output reads the same way.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskRecord {
    pub task_id: String,
    pub domain: String,
    pub split: Split,
    pub trace_id: String,
    pub user_id: String,
    /// Tool names per intent, as sampled.
    pub intents: Vec<Vec<String>>,
    /// JSON list of `{name, kwargs}`: the reference actions.
    pub actions: String,
    /// Intent index of each action.
    pub action_intents: Vec<i32>,
    /// Values the agent must tell the user.
    pub outputs: Vec<String>,
    /// JSON list of `UserFact`s.
    pub user_facts: String,
    /// JSON list, per action, of the customer's request sentence or null.
    pub requests: String,
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

impl Record for TaskRecord {
    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            utf8("task_id"),
            utf8("domain"),
            utf8("split"),
            utf8("trace_id"),
            utf8("user_id"),
            Field::new("intents", intents_type(), false),
            utf8("actions"),
            Field::new("action_intents", list_of(DataType::Int32), false),
            Field::new("outputs", list_of(DataType::Utf8), false),
            utf8("user_facts"),
            utf8("requests"),
            utf8("reference_hash"),
            utf8("grounder"),
            opt_utf8("instruction"),
            opt_utf8("refiner"),
            opt_utf8("feeling"),
            opt_utf8("emotion_family"),
            opt_utf8("emotion"),
            opt_utf8("politeness"),
            opt_utf8("urgency"),
            opt_utf8("trust"),
            opt_utf8("emotion_instruction"),
        ]))
    }

    fn to_batch(rows: &[Self]) -> RecordBatch {
        batch(
            Self::schema(),
            vec![
                string_column(rows.iter().map(|r| &r.task_id)),
                string_column(rows.iter().map(|r| &r.domain)),
                string_column(rows.iter().map(|r| r.split.as_str())),
                string_column(rows.iter().map(|r| &r.trace_id)),
                string_column(rows.iter().map(|r| &r.user_id)),
                intents_column(rows.iter().map(|r| &r.intents)),
                string_column(rows.iter().map(|r| &r.actions)),
                int_list_column(rows.iter().map(|r| &r.action_intents)),
                string_list_column(rows.iter().map(|r| &r.outputs)),
                string_column(rows.iter().map(|r| &r.user_facts)),
                string_column(rows.iter().map(|r| &r.requests)),
                string_column(rows.iter().map(|r| &r.reference_hash)),
                string_column(rows.iter().map(|r| &r.grounder)),
                opt_string_column(rows.iter().map(|r| &r.instruction)),
                opt_string_column(rows.iter().map(|r| &r.refiner)),
                opt_string_column(rows.iter().map(|r| &r.feeling)),
                opt_string_column(rows.iter().map(|r| &r.emotion_family)),
                opt_string_column(rows.iter().map(|r| &r.emotion)),
                opt_string_column(rows.iter().map(|r| &r.politeness)),
                opt_string_column(rows.iter().map(|r| &r.urgency)),
                opt_string_column(rows.iter().map(|r| &r.trust)),
                opt_string_column(rows.iter().map(|r| &r.emotion_instruction)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError> {
        let traces = TraceRecord::from_batch_intents(batch)?;
        let task_id = strings(batch, "task_id")?;
        let domain = strings(batch, "domain")?;
        let split = splits(batch, "split")?;
        let trace_id = strings(batch, "trace_id")?;
        let user_id = strings(batch, "user_id")?;
        let actions = strings(batch, "actions")?;
        let action_intents = int_lists(batch, "action_intents")?;
        let outputs = string_lists(batch, "outputs")?;
        let user_facts = strings(batch, "user_facts")?;
        let requests = strings(batch, "requests")?;
        let reference_hash = strings(batch, "reference_hash")?;
        let grounder = strings(batch, "grounder")?;
        let opt = |n: &str| opt_strings(batch, n);
        let (instruction, refiner, feeling) =
            (opt("instruction")?, opt("refiner")?, opt("feeling")?);
        let (family, emotion, politeness) =
            (opt("emotion_family")?, opt("emotion")?, opt("politeness")?);
        let (urgency, trust, emotion_instruction) =
            (opt("urgency")?, opt("trust")?, opt("emotion_instruction")?);
        Ok((0..batch.num_rows())
            .map(|i| TaskRecord {
                task_id: task_id[i].clone(),
                domain: domain[i].clone(),
                split: split[i],
                trace_id: trace_id[i].clone(),
                user_id: user_id[i].clone(),
                intents: traces[i].clone(),
                actions: actions[i].clone(),
                action_intents: action_intents[i].clone(),
                outputs: outputs[i].clone(),
                user_facts: user_facts[i].clone(),
                requests: requests[i].clone(),
                reference_hash: reference_hash[i].clone(),
                grounder: grounder[i].clone(),
                instruction: instruction[i].clone(),
                refiner: refiner[i].clone(),
                feeling: feeling[i].clone(),
                emotion_family: family[i].clone(),
                emotion: emotion[i].clone(),
                politeness: politeness[i].clone(),
                urgency: urgency[i].clone(),
                trust: trust[i].clone(),
                emotion_instruction: emotion_instruction[i].clone(),
            })
            .collect())
    }
}

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

impl Record for RejectRecord {
    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            utf8("domain"),
            utf8("split"),
            utf8("trace_id"),
            opt_utf8("task_id"),
            utf8("stage"),
            utf8("reason_kind"),
            opt_utf8("rule"),
            utf8("reason"),
        ]))
    }

    fn to_batch(rows: &[Self]) -> RecordBatch {
        batch(
            Self::schema(),
            vec![
                string_column(rows.iter().map(|r| &r.domain)),
                string_column(rows.iter().map(|r| r.split.as_str())),
                string_column(rows.iter().map(|r| &r.trace_id)),
                opt_string_column(rows.iter().map(|r| &r.task_id)),
                string_column(rows.iter().map(|r| &r.stage)),
                string_column(rows.iter().map(|r| &r.reason_kind)),
                opt_string_column(rows.iter().map(|r| &r.rule)),
                string_column(rows.iter().map(|r| &r.reason)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError> {
        let domain = strings(batch, "domain")?;
        let split = splits(batch, "split")?;
        let trace_id = strings(batch, "trace_id")?;
        let task_id = opt_strings(batch, "task_id")?;
        let stage = strings(batch, "stage")?;
        let kind = strings(batch, "reason_kind")?;
        let rule = opt_strings(batch, "rule")?;
        let reason = strings(batch, "reason")?;
        Ok((0..batch.num_rows())
            .map(|i| RejectRecord {
                domain: domain[i].clone(),
                split: split[i],
                trace_id: trace_id[i].clone(),
                task_id: task_id[i].clone(),
                stage: stage[i].clone(),
                reason_kind: kind[i].clone(),
                rule: rule[i].clone(),
                reason: reason[i].clone(),
            })
            .collect())
    }
}

fn longs(batch: &RecordBatch, name: &str) -> Result<Vec<i64>, ColumnError> {
    let col = column::<Int64Array>(batch, name)?;
    Ok((0..col.len()).map(|i| col.value(i)).collect())
}

fn long_column(values: impl Iterator<Item = i64>) -> ArrayRef {
    let mut b = Int64Builder::new();
    for v in values {
        b.append_value(v);
    }
    Arc::new(b.finish())
}

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
    /// JSON list of OpenAI-format messages (tool calls, tool results, reasoning content).
    pub messages: String,
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
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub error: Option<String>,
    /// JSON list of the mistakes the scripted oracle agent made on purpose in this episode
    /// (`skip_confirmation`, `redundant_question`, `wrong_argument`, `premature_transfer`);
    /// null for model agents. Ground truth for measuring the failure analysis, which must
    /// never read it.
    #[serde(default)]
    pub injected_mistakes: Option<String>,
}

impl Record for RolloutRecord {
    fn schema() -> SchemaRef {
        let int = |n: &str| Field::new(n, DataType::Int32, false);
        let long = |n: &str| Field::new(n, DataType::Int64, false);
        Arc::new(Schema::new(vec![
            utf8("task_id"),
            int("trial"),
            utf8("domain"),
            utf8("split"),
            opt_utf8("emotion_family"),
            opt_utf8("emotion"),
            opt_utf8("politeness"),
            opt_utf8("urgency"),
            opt_utf8("trust"),
            utf8("agent_model"),
            utf8("user_model"),
            utf8("messages"),
            int("reward"),
            utf8("reward_breakdown"),
            utf8("termination"),
            int("user_turns"),
            int("assistant_turns"),
            int("tool_calls"),
            int("follow_up_questions"),
            int("gold_actions"),
            long("reasoning_chars"),
            long("prompt_tokens"),
            long("completion_tokens"),
            opt_utf8("error"),
            opt_utf8("injected_mistakes"),
        ]))
    }

    fn to_batch(rows: &[Self]) -> RecordBatch {
        batch(
            Self::schema(),
            vec![
                string_column(rows.iter().map(|r| &r.task_id)),
                int_column(rows.iter().map(|r| r.trial)),
                string_column(rows.iter().map(|r| &r.domain)),
                string_column(rows.iter().map(|r| r.split.as_str())),
                opt_string_column(rows.iter().map(|r| &r.emotion_family)),
                opt_string_column(rows.iter().map(|r| &r.emotion)),
                opt_string_column(rows.iter().map(|r| &r.politeness)),
                opt_string_column(rows.iter().map(|r| &r.urgency)),
                opt_string_column(rows.iter().map(|r| &r.trust)),
                string_column(rows.iter().map(|r| &r.agent_model)),
                string_column(rows.iter().map(|r| &r.user_model)),
                string_column(rows.iter().map(|r| &r.messages)),
                int_column(rows.iter().map(|r| r.reward)),
                string_column(rows.iter().map(|r| &r.reward_breakdown)),
                string_column(rows.iter().map(|r| &r.termination)),
                int_column(rows.iter().map(|r| r.user_turns)),
                int_column(rows.iter().map(|r| r.assistant_turns)),
                int_column(rows.iter().map(|r| r.tool_calls)),
                int_column(rows.iter().map(|r| r.follow_up_questions)),
                int_column(rows.iter().map(|r| r.gold_actions)),
                long_column(rows.iter().map(|r| r.reasoning_chars)),
                long_column(rows.iter().map(|r| r.prompt_tokens)),
                long_column(rows.iter().map(|r| r.completion_tokens)),
                opt_string_column(rows.iter().map(|r| &r.error)),
                opt_string_column(rows.iter().map(|r| &r.injected_mistakes)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError> {
        let s = |n: &str| strings(batch, n);
        let o = |n: &str| opt_strings(batch, n);
        let i = |n: &str| ints(batch, n);
        let l = |n: &str| longs(batch, n);
        let (task_id, trial, domain, split) = (
            s("task_id")?,
            i("trial")?,
            s("domain")?,
            splits(batch, "split")?,
        );
        let (family, emotion, politeness, urgency, trust) = (
            o("emotion_family")?,
            o("emotion")?,
            o("politeness")?,
            o("urgency")?,
            o("trust")?,
        );
        let (agent, user, messages, reward, breakdown, term) = (
            s("agent_model")?,
            s("user_model")?,
            s("messages")?,
            i("reward")?,
            s("reward_breakdown")?,
            s("termination")?,
        );
        let (ut, at, tc, fq, ga) = (
            i("user_turns")?,
            i("assistant_turns")?,
            i("tool_calls")?,
            i("follow_up_questions")?,
            i("gold_actions")?,
        );
        let (rc, pt, ct, error) = (
            l("reasoning_chars")?,
            l("prompt_tokens")?,
            l("completion_tokens")?,
            o("error")?,
        );
        let injected = o("injected_mistakes")?;
        Ok((0..batch.num_rows())
            .map(|k| RolloutRecord {
                task_id: task_id[k].clone(),
                trial: trial[k],
                domain: domain[k].clone(),
                split: split[k],
                emotion_family: family[k].clone(),
                emotion: emotion[k].clone(),
                politeness: politeness[k].clone(),
                urgency: urgency[k].clone(),
                trust: trust[k].clone(),
                agent_model: agent[k].clone(),
                user_model: user[k].clone(),
                messages: messages[k].clone(),
                reward: reward[k],
                reward_breakdown: breakdown[k].clone(),
                termination: term[k].clone(),
                user_turns: ut[k],
                assistant_turns: at[k],
                tool_calls: tc[k],
                follow_up_questions: fq[k],
                gold_actions: ga[k],
                reasoning_chars: rc[k],
                prompt_tokens: pt[k],
                completion_tokens: ct[k],
                error: error[k].clone(),
                injected_mistakes: injected[k].clone(),
            })
            .collect())
    }
}

fn opt_ints(batch: &RecordBatch, name: &str) -> Result<Vec<Option<i32>>, ColumnError> {
    let col = column::<Int32Array>(batch, name)?;
    Ok((0..col.len())
        .map(|i| (!col.is_null(i)).then(|| col.value(i)))
        .collect())
}

fn opt_int_column(values: impl Iterator<Item = Option<i32>>) -> ArrayRef {
    let mut b = Int32Builder::new();
    for v in values {
        b.append_option(v);
    }
    Arc::new(b.finish())
}

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

impl Record for FaultRecord {
    fn schema() -> SchemaRef {
        let int = |n: &str| Field::new(n, DataType::Int32, false);
        let opt_int = |n: &str| Field::new(n, DataType::Int32, true);
        Arc::new(Schema::new(vec![
            utf8("task_id"),
            int("trial"),
            utf8("domain"),
            utf8("split"),
            utf8("source"),
            utf8("agent_model"),
            utf8("user_model"),
            int("reward"),
            utf8("termination"),
            utf8("fault"),
            utf8("category"),
            opt_int("step"),
            opt_int("call"),
            utf8("detector"),
            Field::new("model_label", DataType::Boolean, false),
            utf8("detail"),
        ]))
    }

    fn to_batch(rows: &[Self]) -> RecordBatch {
        batch(
            Self::schema(),
            vec![
                string_column(rows.iter().map(|r| &r.task_id)),
                int_column(rows.iter().map(|r| r.trial)),
                string_column(rows.iter().map(|r| &r.domain)),
                string_column(rows.iter().map(|r| r.split.as_str())),
                string_column(rows.iter().map(|r| &r.source)),
                string_column(rows.iter().map(|r| &r.agent_model)),
                string_column(rows.iter().map(|r| &r.user_model)),
                int_column(rows.iter().map(|r| r.reward)),
                string_column(rows.iter().map(|r| &r.termination)),
                string_column(rows.iter().map(|r| &r.fault)),
                string_column(rows.iter().map(|r| &r.category)),
                opt_int_column(rows.iter().map(|r| r.step)),
                opt_int_column(rows.iter().map(|r| r.call)),
                string_column(rows.iter().map(|r| &r.detector)),
                bool_column(rows.iter().map(|r| r.model_label)),
                string_column(rows.iter().map(|r| &r.detail)),
            ],
        )
    }

    fn from_batch(batch: &RecordBatch) -> Result<Vec<Self>, ColumnError> {
        let s = |n: &str| strings(batch, n);
        let i = |n: &str| ints(batch, n);
        let (task_id, trial, domain, split, source) = (
            s("task_id")?,
            i("trial")?,
            s("domain")?,
            splits(batch, "split")?,
            s("source")?,
        );
        let (agent, user, reward, term) = (
            s("agent_model")?,
            s("user_model")?,
            i("reward")?,
            s("termination")?,
        );
        let (fault, category, step, call) = (
            s("fault")?,
            s("category")?,
            opt_ints(batch, "step")?,
            opt_ints(batch, "call")?,
        );
        let (detector, model_label, detail) =
            (s("detector")?, bools(batch, "model_label")?, s("detail")?);
        Ok((0..batch.num_rows())
            .map(|k| FaultRecord {
                task_id: task_id[k].clone(),
                trial: trial[k],
                domain: domain[k].clone(),
                split: split[k],
                source: source[k].clone(),
                agent_model: agent[k].clone(),
                user_model: user[k].clone(),
                reward: reward[k],
                termination: term[k].clone(),
                fault: fault[k].clone(),
                category: category[k].clone(),
                step: step[k],
                call: call[k],
                detector: detector[k].clone(),
                model_label: model_label[k],
                detail: detail[k].clone(),
            })
            .collect())
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
    }
}
