//! Decisions on dependency-graph edges: `reviews/graphs/<domain>.jsonl`, one JSON line per
//! decision, appended, never rewritten: the edge (`from`, `to`), `keep` or `drop` (a drop
//! needs a `reason`), and the reviewer. The last decision on an edge counts; the `graphs`
//! stage leaves the dropped edges out of the graph it verifies and writes, so the next run
//! samples from the reviewed graph and everything downstream goes stale through the
//! graph's hash.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where a domain's edge decisions live, relative to the project root.
pub fn edge_reviews_path(root: &Path, dir: &str, domain: &str) -> PathBuf {
    root.join(dir)
        .join("graphs")
        .join(format!("{domain}.jsonl"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeDecision {
    Keep,
    Drop,
}

impl EdgeDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeDecision::Keep => "keep",
            EdgeDecision::Drop => "drop",
        }
    }
}

/// One line of an edge decisions file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeLine {
    pub from: String,
    pub to: String,
    pub decision: EdgeDecision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub reviewer: String,
}

impl EdgeLine {
    pub fn check(&self) -> Result<(), String> {
        if self.from.trim().is_empty() || self.to.trim().is_empty() {
            return Err("fields 'from' and 'to' name the edge's tools".into());
        }
        if self.from == self.to {
            return Err(format!("'{}' -> itself is not an edge", self.from));
        }
        if self.reviewer.trim().is_empty() {
            return Err("field 'reviewer' is empty".into());
        }
        if self.decision == EdgeDecision::Drop
            && self.reason.as_deref().is_none_or(|r| r.trim().is_empty())
        {
            return Err("a drop needs a 'reason'".into());
        }
        Ok(())
    }
}

/// A domain's edge decisions, in file order.
#[derive(Clone, Debug, Default)]
pub struct EdgeReviews {
    pub lines: Vec<EdgeLine>,
}

impl EdgeReviews {
    /// Read an edge decisions file; a missing file is no decisions.
    pub fn read(path: &Path) -> Result<EdgeReviews, String> {
        super::file::read_lines(path, EdgeLine::check).map(|lines| EdgeReviews { lines })
    }

    /// The last decision on an edge.
    pub fn decision(&self, from: &str, to: &str) -> Option<&EdgeLine> {
        self.lines
            .iter()
            .rev()
            .find(|l| l.from == from && l.to == to)
    }

    /// The edges whose last decision is `drop`.
    pub fn dropped(&self) -> BTreeSet<(String, String)> {
        let mut out = BTreeSet::new();
        for l in &self.lines {
            let key = (l.from.clone(), l.to.clone());
            match l.decision {
                EdgeDecision::Drop => out.insert(key),
                EdgeDecision::Keep => out.remove(&key),
            };
        }
        out
    }

    /// Every decision on one edge, oldest first.
    pub fn history<'a>(&'a self, from: &'a str, to: &'a str) -> impl Iterator<Item = &'a EdgeLine> {
        self.lines
            .iter()
            .filter(move |l| l.from == from && l.to == to)
    }
}

/// Append one edge decision (checked first; the file as it is must read).
pub fn append_edge(path: &Path, line: &EdgeLine) -> Result<(), String> {
    super::file::append_lines(path, std::slice::from_ref(line), EdgeLine::check)
}
