//! Manual review: the decisions people take on evaluation tasks, kept as data under
//! version control (`reviews/<domain>.jsonl`), and what they do to a task.
//!
//! One JSON line per decision, appended, never rewritten: the task id, a hash of the
//! content the reviewer saw, the decision (`accept`, `reject` with a reason, `edit` with
//! the changed fields, or `undo`, which reverses the same reviewer's last standing decision
//! on that task), and the reviewer's name. Each reviewer's last standing decision on the
//! task's current content is their opinion; when the opinions agree that is the task's
//! state, when they differ the task is in conflict until someone decides with `resolves`,
//! which supersedes every decision before it. A task whose content changed since its
//! decisions (a regeneration made it differently) needs review again and counts as not
//! reviewed. Nothing here reads the clock: the same file gives the same release.
//!
//! An edit changes only what a reviewer can judge: the instruction, the emotion
//! instruction, the arguments of the reference actions (not which tools they call) and the
//! `outputs`; its fields replace the task's own. Before it is saved, and again when the
//! release applies it, the edited task is replayed on a fresh fork and verified with the
//! verification gates; an edit that does not verify is refused with the reason.
//!
//! Also here: who reviews what (`assignment.toml` in the reviews folder, [`Assignment`]),
//! agreement between reviewers ([`agreement`]: raw and Cohen's kappa on accept / reject)
//! and decisions on dependency-graph edges ([`edges`]).
//!
//! Architecture invariant: knows tasks through `artifact::TaskRecord`, environments
//! through `domain::Environment` and verification through `verify`; nothing of stages,
//! files other than the reviews folder, or the web app.

mod agreement;
mod assign;
pub mod edges;
mod edit;
mod file;
mod state;
#[cfg(test)]
mod tests;

pub use agreement::{Agreement, agreement, cohen_kappa};
pub use assign::{ASSIGNMENT_FILE, Assignment, assignment_path};
pub use edit::{EditKinds, apply_edit, edit_kinds, edited_fields, json_leaves, verify_edit};
pub use file::{append, append_all};
pub use state::{Reviews, State, same_outcome};

use crate::artifact::TaskRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;
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
    /// Reverses the same reviewer's last standing decision on the task's content.
    Undo,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "accept",
            Decision::Reject => "reject",
            Decision::Edit => "edit",
            Decision::Undo => "undo",
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

fn is_false(b: &bool) -> bool {
    !*b
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
    /// Settles a conflict: supersedes every decision on this content before it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub resolves: bool,
}

impl ReviewLine {
    /// The line's own consistency: a reject has a reason, an edit changes something, an
    /// accept or undo carries neither, an undo resolves nothing.
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
            Decision::Accept | Decision::Reject | Decision::Undo if self.edit.is_some() => {
                Err(format!(
                    "a {} carries no 'edit' (use decision \"edit\")",
                    self.decision.as_str()
                ))
            }
            Decision::Undo if self.reason.is_some() || self.resolves => {
                Err("an undo carries no 'reason' and resolves nothing".into())
            }
            _ => Ok(()),
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

/// The counts `review.json` holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewCounts {
    /// Screened evaluation tasks (the candidates of the review).
    pub candidates: usize,
    pub accepted: usize,
    pub edited: usize,
    pub rejected: usize,
    pub pending: usize,
    /// Decided on other content: the task changed since its review.
    pub stale: usize,
    /// Reviewers disagree and nobody has resolved it: treated like an undecided task.
    pub conflicts: usize,
    /// Tasks in the release.
    pub released: usize,
    pub gold_edits: usize,
    pub id_swaps: usize,
    pub rewrites: usize,
    pub emotion_edits: usize,
    /// Edits that no longer verify (the domain changed since): rejected.
    pub failed_edits: usize,
    /// Agreement between reviewers over the tasks two of them decided.
    pub agreement: Agreement,
}

/// A domain's review counts from the `reviewed` stage's `review.json`, if it ran.
pub fn read_counts(path: &Path) -> Option<ReviewCounts> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// `stages/reviewed.toml`: what the `reviewed` stage does with undecided tasks, where the
/// decisions live, and the gates an edit must pass.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewedConfig {
    /// `keep` or `drop`: what happens to tasks without a decision on their current content
    /// (pending, needing review again, or in conflict).
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

/// A reviews folder setting: a relative path inside the project.
pub fn check_reviews_dir(dir: &str) -> Result<(), String> {
    let p = Path::new(dir);
    if dir.is_empty()
        || p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err("must be a relative path inside the project".to_string());
    }
    Ok(())
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
        check_reviews_dir(&cfg.reviews_dir).map_err(|e| c.error("reviews_dir", e))?;
        Ok(cfg)
    }
}
