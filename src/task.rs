//! The task model: the typed view of a task row's JSON columns (`actions`, `requests`,
//! `user_facts`), decoded once and checked, for every reader of tasks — verification, the
//! harness's scripted roles, refinement, replay.
//!
//! `artifact::TaskRecord` stores these columns as JSON text (what users read in the Parquet
//! files). A reader that decoded them with silent defaults would turn a damaged column into
//! an empty plan and a wrong episode; here a column that does not decode is an error naming
//! the task and the column.
//!
//! Architecture invariant: knows tasks through `artifact::TaskRecord` and the domain's
//! `Action` / `UserFact`; nothing of stages, roles or environments.

use crate::artifact::TaskRecord;
pub use crate::domain::{Action, UserFact};
use serde::de::DeserializeOwned;

/// A task's decoded JSON columns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskParts {
    /// The reference actions, in order.
    pub actions: Vec<Action>,
    /// Per action, the customer's request sentence (`None` for the rest of an intent).
    pub requests: Vec<Option<String>>,
    /// What the customer knows and can say (identity first).
    pub user_facts: Vec<UserFact>,
}

impl TaskParts {
    /// Decode every JSON column of `task`; the error names the task and the column.
    pub fn decode(task: &TaskRecord) -> Result<TaskParts, String> {
        Ok(TaskParts {
            actions: actions(task)?,
            requests: column(task, "requests", &task.requests)?,
            user_facts: column(task, "user_facts", &task.user_facts)?,
        })
    }
}

/// The reference actions of `task`.
pub fn actions(task: &TaskRecord) -> Result<Vec<Action>, String> {
    column(task, "actions", &task.actions)
}

fn column<T: DeserializeOwned>(task: &TaskRecord, name: &str, text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("task {}: column '{name}': {e}", task.task_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> TaskRecord {
        TaskRecord {
            task_id: "t1".into(),
            actions: r#"[{"name":"get_user_details","kwargs":{"user_id":"u"}},{"name":"think"}]"#
                .into(),
            requests: r#"["I need my details.",null]"#.into(),
            user_facts: r#"[{"kind":"identity","text":"Your id is u.","values":["u"]}]"#.into(),
            ..TaskRecord::default()
        }
    }

    #[test]
    fn decodes_every_column_and_defaults_missing_kwargs_to_null() {
        let parts = TaskParts::decode(&task()).unwrap();
        assert_eq!(parts.actions.len(), 2);
        assert_eq!(parts.actions[0].kwargs["user_id"], "u");
        assert!(parts.actions[1].kwargs.is_null());
        assert_eq!(
            parts.requests,
            vec![Some("I need my details.".into()), None]
        );
        assert_eq!(parts.user_facts[0].ids, Vec::<String>::new());
    }

    #[test]
    fn a_damaged_column_is_an_error_naming_task_and_column() {
        for (column, edit) in [
            (
                "actions",
                (|t: &mut TaskRecord| t.actions = "[{\"kwargs\":{}}]".into())
                    as fn(&mut TaskRecord),
            ),
            ("requests", |t| t.requests = "{".into()),
            ("user_facts", |t| t.user_facts = String::new()),
        ] {
            let mut t = task();
            edit(&mut t);
            let err = TaskParts::decode(&t).unwrap_err();
            assert!(
                err.starts_with(&format!("task t1: column '{column}': ")),
                "{err}"
            );
        }
    }
}
