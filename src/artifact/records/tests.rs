//! Record tests: rows round-trip through Arrow, list columns as Arrow's builders make them,
//! decoding errors naming the column and the row, the JSON text columns, stable schemas.

use super::column::Column;
use super::*;
use crate::artifact::json_column::JsonText;
use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, Int32Array, StringArray};
use arrow_schema::{DataType, Field};

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
            party: Some("user".into()),
            severity: Some("major".into()),
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
