//! Manual review: the decisions a person takes on evaluation tasks, kept as data under
//! version control (`reviews/<domain>.jsonl`), and what they do to a task.
//!
//! One JSON line per decision, appended, never rewritten: the task id, a hash of the
//! content the reviewer saw, the decision (`accept`, `reject` with a reason, or `edit`
//! with the changed fields), and the reviewer's name. The last line of a task whose
//! content hash matches the task as it is now is the task's decision; a task whose content
//! changed since its last decision (a regeneration made it differently) needs review
//! again and counts as not reviewed. Nothing here reads the clock: the same file gives the
//! same release.
//!
//! An edit changes only what a reviewer can judge: the instruction, the emotion
//! instruction, the arguments of the reference actions (not which tools they call) and the
//! `outputs`. Before it is saved, and again when the release applies it, the edited task
//! is replayed on a fresh fork and verified with the verification gates; an edit that does
//! not verify is refused with the reason. A person decides what the judge would, so an
//! edit the gates call only inconclusive (a free-text value not stated verbatim) passes.
//!
//! Edits are counted the way the paper counts its review: gold edits (arguments or
//! outputs changed), id swaps (only id-like argument values replaced, the instruction
//! following them), rewrites (the instruction rewritten) and emotion edits.
//!
//! Architecture invariant: knows tasks through `artifact::TaskRecord`, environments
//! through `domain::Environment` and verification through `verify`; nothing of stages,
//! files other than the reviews file, or the web app.

use crate::artifact::TaskRecord;
use crate::domain::Environment;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a domain's decisions live, relative to the project root.
pub fn reviews_path(root: &Path, dir: &str, domain: &str) -> PathBuf {
    root.join(dir).join(format!("{domain}.jsonl"))
}

/// The reasons a reviewer picks from when rejecting (free text is allowed too).
pub const REJECT_REASONS: &[&str] = &[
    "unsolvable",
    "wrong gold actions",
    "ambiguous instruction",
    "unnatural instruction",
    "emotion does not fit the task",
    "policy conflict",
    "duplicate",
];

/// A decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Accept,
    Reject,
    Edit,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Reject => "reject",
            Decision::Edit => "edit",
        }
    }
}

/// The fields an edit may change; absent fields keep the task's value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emotion_instruction: Option<String>,
    /// The arguments of each reference action, in order (same count as the task's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<String>>,
}

impl Edit {
    pub fn is_empty(&self) -> bool {
        *self == Edit::default()
    }
}

/// One line of a reviews file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewLine {
    pub task_id: String,
    /// [`content_hash`] of the task the reviewer saw.
    pub content: String,
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<Edit>,
    pub reviewer: String,
}

impl ReviewLine {
    /// The line's own consistency: a reject has a reason, an edit changes something, an
    /// accept carries neither.
    pub fn check(&self) -> Result<(), String> {
        if self.task_id.trim().is_empty() {
            return Err("field 'task_id' is empty".into());
        }
        if self.content.len() != 16 || !self.content.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "field 'content' must be 16 hex digits, not '{}'",
                self.content
            ));
        }
        if self.reviewer.trim().is_empty() {
            return Err("field 'reviewer' is empty".into());
        }
        match self.decision {
            Decision::Reject if self.reason.as_deref().is_none_or(|r| r.trim().is_empty()) => {
                Err("a reject needs a 'reason'".into())
            }
            Decision::Edit if self.edit.as_ref().is_none_or(Edit::is_empty) => {
                Err("an edit needs a non-empty 'edit'".into())
            }
            Decision::Accept | Decision::Reject if self.edit.is_some() => Err(format!(
                "a {} carries no 'edit' (use decision \"edit\")",
                self.decision.as_str()
            )),
            _ => Ok(()),
        }
    }
}

/// A task's review state as the release sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// No decision for this task.
    Pending,
    /// Decisions exist, but for other content: the task changed since.
    Stale,
    Accepted,
    Rejected(String),
    Edited(Edit),
}

impl State {
    /// Short name for tables and filters.
    pub fn as_str(&self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Stale => "needs review again",
            State::Accepted => "accepted",
            State::Rejected(_) => "rejected",
            State::Edited(_) => "edited",
        }
    }
}

/// The hash of what a reviewer judges: everything a decision is about. 16 hex digits.
pub fn content_hash(t: &TaskRecord) -> String {
    use crate::artifact::JsonText;
    let material = serde_json::json!({
        "task_id": t.task_id,
        "user_id": t.user_id,
        // The actions as their column stores them (the text reviewers' hashes were made of).
        "actions": t.actions.to_json(),
        "outputs": t.outputs,
        "instruction": t.instruction,
        "feeling": t.feeling,
        "emotion": [t.emotion_family, t.emotion, t.politeness, t.urgency, t.trust],
        "emotion_instruction": t.emotion_instruction,
        "reference_hash": t.reference_hash,
    });
    crate::artifact::sha256_hex(material.to_string().as_bytes())[..16].to_string()
}

/// A domain's decisions, in file order.
#[derive(Clone, Debug, Default)]
pub struct Reviews {
    pub lines: Vec<ReviewLine>,
}

impl Reviews {
    /// Read a reviews file; a missing file is no decisions. Errors name the file and line.
    pub fn read(path: &Path) -> Result<Reviews, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Reviews::default()),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut lines = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let parsed: ReviewLine = serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            parsed
                .check()
                .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            lines.push(parsed);
        }
        Ok(Reviews { lines })
    }

    /// The state of `task`: its last decision on this content, stale if only decisions on
    /// other content exist, pending if none.
    pub fn state(&self, task: &TaskRecord) -> State {
        self.state_with(task, &content_hash(task))
    }

    fn state_with(&self, task: &TaskRecord, hash: &str) -> State {
        let mut seen = false;
        let mut last = None;
        for l in self.lines.iter().filter(|l| l.task_id == task.task_id) {
            seen = true;
            if l.content == hash {
                last = Some(l);
            }
        }
        match last {
            None if seen => State::Stale,
            None => State::Pending,
            Some(l) => match l.decision {
                Decision::Accept => State::Accepted,
                Decision::Reject => State::Rejected(l.reason.clone().unwrap_or_default()),
                Decision::Edit => State::Edited(l.edit.clone().unwrap_or_default()),
            },
        }
    }

    /// Every decision line of one task, oldest first (the history a task page shows).
    pub fn history<'a>(&'a self, task_id: &'a str) -> impl Iterator<Item = &'a ReviewLine> {
        self.lines.iter().filter(move |l| l.task_id == task_id)
    }
}

/// Append one line to a reviews file as a single write (O_APPEND), creating the file and
/// its directory when missing. Callers in one process serialise through a lock; the single
/// write keeps lines whole between processes on a local file system.
pub fn append(path: &Path, line: &ReviewLine) -> Result<(), String> {
    line.check()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut text = serde_json::to_string(line).map_err(|e| e.to_string())?;
    text.push('\n');
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_data())
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// `task` with `edit` applied and its reference hash recomputed by replay; the error says
/// which field or call is wrong. The result is not yet verified: see [`verify_edit`].
pub fn apply_edit(
    env: &dyn Environment,
    task: &TaskRecord,
    edit: &Edit,
) -> Result<TaskRecord, String> {
    let mut out = task.clone();
    if let Some(text) = &edit.instruction {
        if text.trim().is_empty() {
            return Err("the instruction is empty".into());
        }
        out.instruction = Some(text.trim().to_string());
    }
    if let Some(text) = &edit.emotion_instruction {
        if text.trim().is_empty() {
            return Err("the emotion instruction is empty".into());
        }
        out.emotion_instruction = Some(text.trim().to_string());
    }
    if let Some(outputs) = &edit.outputs {
        out.outputs = outputs
            .iter()
            .map(|o| o.trim().to_string())
            .filter(|o| !o.is_empty())
            .collect();
    }
    if let Some(args) = &edit.arguments {
        let actions = &mut out.actions;
        if args.len() != actions.len() {
            return Err(format!(
                "arguments: {} entries for {} reference actions (an edit changes arguments, not the actions)",
                args.len(),
                actions.len()
            ));
        }
        for (i, (a, v)) in actions.iter_mut().zip(args).enumerate() {
            if !(v.is_object() || v.is_null()) {
                return Err(format!(
                    "arguments[{i}] ({}): must be a JSON object",
                    a.name
                ));
            }
            a.kwargs = v.clone();
        }
    }
    // The new reference state: the edited calls on a fresh fork, each succeeding.
    let mut state = env.fork();
    for (i, a) in out.actions.iter().enumerate() {
        let r = state.invoke(&a.name, &a.kwargs);
        if r.is_error {
            return Err(format!("action {i} ({}) fails: {}", a.name, r.text));
        }
    }
    out.reference_hash = state.state_hash().to_hex();
    Ok(out)
}

/// Apply `edit` and verify the result with `gates` (replay, policy, ids, quality,
/// information; an inconclusive verdict passes: the reviewer is the judge).
pub fn verify_edit(
    env: &dyn Environment,
    task: &TaskRecord,
    edit: &Edit,
    gates: &crate::verify::Gates,
) -> Result<TaskRecord, String> {
    let edited = apply_edit(env, task, edit)?;
    match crate::verify::verify_task_with(env, &edited, gates) {
        Ok(()) => Ok(edited),
        Err(r) if r.kind == crate::verify::RejectKind::Inconclusive => Ok(edited),
        Err(r) => Err(format!("{}: {}", r.kind.as_str(), r.reason)),
    }
}

/// The counts `review.json` holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewCounts {
    /// Screened evaluation tasks (the candidates of the review).
    pub candidates: usize,
    pub accepted: usize,
    pub edited: usize,
    pub rejected: usize,
    pub pending: usize,
    /// Decided on other content: the task changed since its review.
    pub stale: usize,
    /// Tasks in the release.
    pub released: usize,
    pub gold_edits: usize,
    pub id_swaps: usize,
    pub rewrites: usize,
    pub emotion_edits: usize,
    /// Edits that no longer verify (the domain changed since): rejected.
    pub failed_edits: usize,
}

/// A domain's review counts from the `reviewed` stage's `review.json`, if it ran.
pub fn read_counts(path: &Path) -> Option<ReviewCounts> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// What kind of change an edit is, the paper's way (an edit may be several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EditKinds {
    pub gold_edit: bool,
    pub id_swap: bool,
    pub rewrite: bool,
    pub emotion_edit: bool,
}

/// An id-like value: one token with a digit in it ("#W2378156", "BKG001", "sara_doe_496").
fn id_like(s: &str) -> bool {
    !s.is_empty() && !s.contains(char::is_whitespace) && s.chars().any(|c| c.is_ascii_digit())
}

fn string_leaves(v: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                string_leaves(x, format!("{path}.{k}"), out);
            }
        }
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                string_leaves(x, format!("{path}[{i}]"), out);
            }
        }
        other => {
            out.insert(path, other.clone());
        }
    }
}

/// Classify an edit of `before` into `after` (both whole tasks).
pub fn edit_kinds(before: &TaskRecord, after: &TaskRecord) -> EditKinds {
    let leaves = |t: &TaskRecord| {
        let mut out = BTreeMap::new();
        for (i, a) in t.actions.iter().enumerate() {
            string_leaves(&a.kwargs, format!("{i}"), &mut out);
        }
        out
    };
    let (old, new) = (leaves(before), leaves(after));
    let mut swaps: Vec<(String, String)> = Vec::new();
    let mut other_change = old.len() != new.len() || before.outputs != after.outputs;
    for (k, v) in &old {
        match (v, new.get(k)) {
            (a, Some(b)) if a == b => {}
            (Value::String(a), Some(Value::String(b))) if id_like(a) && id_like(b) => {
                swaps.push((a.clone(), b.clone()))
            }
            _ => other_change = true,
        }
    }
    let old_text = before.instruction.clone().unwrap_or_default();
    let new_text = after.instruction.clone().unwrap_or_default();
    // The instruction as the swaps alone would leave it.
    let mut swapped = old_text.clone();
    for (a, b) in &swaps {
        swapped = swapped.replace(a.as_str(), b);
    }
    EditKinds {
        gold_edit: other_change,
        id_swap: !swaps.is_empty() && !other_change,
        rewrite: new_text != swapped,
        emotion_edit: before.emotion_instruction != after.emotion_instruction,
    }
}

/// `stages/reviewed.toml`: what the `reviewed` stage does with undecided tasks, where the
/// decisions live, and the gates an edit must pass.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewedConfig {
    /// `keep` or `drop`: what happens to tasks without a decision on their current content.
    pub unreviewed: String,
    /// Directory of the decisions files, relative to the project root.
    pub reviews_dir: String,
    /// The gates an edit must pass (the `tasks` stage's, by default all on).
    pub gates: crate::verify::Gates,
}

impl Default for ReviewedConfig {
    fn default() -> Self {
        ReviewedConfig {
            unreviewed: "keep".into(),
            reviews_dir: "reviews".into(),
            gates: crate::verify::Gates::default(),
        }
    }
}

impl ReviewedConfig {
    pub fn load(
        path: &std::path::Path,
        table: &toml::Table,
    ) -> Result<ReviewedConfig, crate::config::ConfigError> {
        let cfg: ReviewedConfig = crate::config::parse_typed(path, table)?;
        let c = crate::config::Check::new(path);
        if !matches!(cfg.unreviewed.as_str(), "keep" | "drop") {
            return Err(c.error(
                "unreviewed",
                format!("must be 'keep' or 'drop', not '{}'", cfg.unreviewed),
            ));
        }
        let dir = std::path::Path::new(&cfg.reviews_dir);
        if cfg.reviews_dir.is_empty()
            || dir.is_absolute()
            || dir
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(c.error(
                "reviews_dir",
                "must be a relative path inside the project".to_string(),
            ));
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> TaskRecord {
        TaskRecord {
            task_id: "t1".into(),
            user_id: "u1".into(),
            actions: serde_json::from_value(serde_json::json!([
                {"name": "get_order", "kwargs": {"order_id": "#W100"}},
                {"name": "cancel", "kwargs": {"order_id": "#W100", "reason": "no longer needed"}},
            ]))
            .unwrap(),
            instruction: Some("You want to cancel order #W100.".into()),
            emotion_instruction: Some("You are calm.".into()),
            ..Default::default()
        }
    }

    fn line(decision: Decision, content: &str) -> ReviewLine {
        ReviewLine {
            task_id: "t1".into(),
            content: content.into(),
            decision,
            reason: (decision == Decision::Reject).then(|| "duplicate".into()),
            edit: (decision == Decision::Edit).then(|| Edit {
                instruction: Some("x".into()),
                ..Default::default()
            }),
            reviewer: "ana".into(),
        }
    }

    #[test]
    fn the_last_decision_on_the_current_content_wins_and_changed_content_is_stale() {
        let t = task();
        let h = content_hash(&t);
        let mut r = Reviews::default();
        assert_eq!(r.state(&t), State::Pending);
        r.lines.push(line(Decision::Reject, &h));
        r.lines.push(line(Decision::Accept, &h));
        assert_eq!(r.state(&t), State::Accepted);
        r.lines.push(line(Decision::Reject, "0123456789abcdef"));
        assert_eq!(
            r.state(&t),
            State::Accepted,
            "a line for other content is ignored"
        );
        let mut changed = t.clone();
        changed.instruction = Some("You want to cancel order #W100 today.".into());
        assert_eq!(r.state(&changed), State::Stale);
    }

    #[test]
    fn malformed_lines_are_refused_naming_file_line_and_field() {
        let dir = std::env::temp_dir().join(format!("tracer-review-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("airline.jsonl");
        let good = serde_json::to_string(&line(Decision::Accept, "0123456789abcdef")).unwrap();
        std::fs::write(
            &path,
            format!("{good}\n{{\"task_id\":\"t\",\"content\":\"0123456789abcdef\",\"decision\":\"reject\",\"reviewer\":\"a\"}}\n"),
        )
        .unwrap();
        let e = Reviews::read(&path).unwrap_err();
        assert!(e.contains("airline.jsonl:2") && e.contains("reason"), "{e}");
        std::fs::write(&path, "{\"task_id\":\"t\",\"decision\":\"maybe\"}\n").unwrap();
        let e = Reviews::read(&path).unwrap_err();
        assert!(e.contains("airline.jsonl:1"), "{e}");
        std::fs::remove_file(&path).unwrap();
        assert!(
            Reviews::read(&path).unwrap().lines.is_empty(),
            "missing = none"
        );
        append(&path, &line(Decision::Accept, "0123456789abcdef")).unwrap();
        append(&path, &line(Decision::Edit, "0123456789abcdef")).unwrap();
        assert_eq!(Reviews::read(&path).unwrap().lines.len(), 2);
        assert!(append(&path, &line(Decision::Accept, "nothex")).is_err());
        assert_eq!(
            Reviews::read(&path).unwrap().lines.len(),
            2,
            "nothing written"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn edits_are_classified_like_the_papers_review() {
        let before = task();
        let mut after = before.clone();
        after.actions[0].kwargs["order_id"] = "#W200".into();
        after.actions[1].kwargs["order_id"] = "#W200".into();
        after.instruction = Some("You want to cancel order #W200.".into());
        let k = edit_kinds(&before, &after);
        assert!(
            k.id_swap && !k.gold_edit && !k.rewrite && !k.emotion_edit,
            "{k:?}"
        );

        let mut after = before.clone();
        after.actions[1].kwargs["reason"] = "ordered by mistake".into();
        let k = edit_kinds(&before, &after);
        assert!(k.gold_edit && !k.id_swap && !k.rewrite, "{k:?}");

        let mut after = before.clone();
        after.instruction = Some("Your plans changed; the order #W100 must go.".into());
        after.emotion_instruction = Some("You are tense.".into());
        let k = edit_kinds(&before, &after);
        assert!(
            k.rewrite && k.emotion_edit && !k.gold_edit && !k.id_swap,
            "{k:?}"
        );

        let mut after = before.clone();
        after.outputs = vec!["$10".into()];
        assert!(edit_kinds(&before, &after).gold_edit);
    }
}
