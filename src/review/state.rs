//! A domain's decisions read back: which lines still stand after the undos, each
//! reviewer's opinion on a task's current content, and the task's state from them
//! (pending, needs review again, accepted, rejected, edited, or in conflict).

use super::{Decision, Edit, ReviewLine};
use crate::artifact::TaskRecord;
use std::collections::HashMap;
use std::path::Path;

/// A task's review state as the release sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    /// No standing decision for this task.
    Pending,
    /// Decisions exist, but for other content: the task changed since.
    Stale,
    Accepted,
    Rejected(String),
    Edited(Edit),
    /// Reviewers' standing decisions differ (each reviewer's latest line, in file order),
    /// and no later decision resolved it.
    Conflict(Vec<ReviewLine>),
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
            State::Conflict(_) => "conflict",
        }
    }

    /// Whether the task still needs someone's decision.
    pub fn is_open(&self) -> bool {
        matches!(self, State::Pending | State::Stale | State::Conflict(_))
    }

    fn of(line: &ReviewLine) -> State {
        match line.decision {
            Decision::Accept => State::Accepted,
            Decision::Reject => State::Rejected(line.reason.clone().unwrap_or_default()),
            Decision::Edit => State::Edited(line.edit.clone().unwrap_or_default()),
            // Never standing: an undo is not an opinion.
            Decision::Undo => State::Pending,
        }
    }
}

/// Whether two decisions lead to the same release: both accept, both reject (whatever the
/// reasons), or the same edit.
pub fn same_outcome(a: &ReviewLine, b: &ReviewLine) -> bool {
    match (a.decision, b.decision) {
        (Decision::Accept, Decision::Accept) | (Decision::Reject, Decision::Reject) => true,
        (Decision::Edit, Decision::Edit) => a.edit == b.edit,
        _ => false,
    }
}

/// A domain's decisions, in file order, with which of them still stand.
#[derive(Clone, Debug, Default)]
pub struct Reviews {
    lines: Vec<ReviewLine>,
    /// Line indices per task id, in file order.
    by_task: HashMap<String, Vec<usize>>,
    /// Whether line i is a decision no undo has reversed (undo lines never stand).
    standing: Vec<bool>,
}

impl Reviews {
    /// Index `lines`: an undo reverses the latest standing decision of the same reviewer on
    /// the same task and content (one with nothing to reverse changes nothing).
    pub fn new(lines: Vec<ReviewLine>) -> Reviews {
        let mut by_task: HashMap<String, Vec<usize>> = HashMap::new();
        let mut standing = vec![false; lines.len()];
        let mut stacks: HashMap<(&str, &str, &str), Vec<usize>> = HashMap::new();
        for (i, l) in lines.iter().enumerate() {
            by_task.entry(l.task_id.clone()).or_default().push(i);
            let key = (l.task_id.as_str(), l.content.as_str(), l.reviewer.as_str());
            if l.decision == Decision::Undo {
                if let Some(j) = stacks.get_mut(&key).and_then(Vec::pop) {
                    standing[j] = false;
                }
            } else {
                stacks.entry(key).or_default().push(i);
                standing[i] = true;
            }
        }
        drop(stacks);
        Reviews {
            lines,
            by_task,
            standing,
        }
    }

    /// Read a reviews file; a missing file is no decisions. Errors name the file and line.
    pub fn read(path: &Path) -> Result<Reviews, String> {
        super::file::read_lines(path, ReviewLine::check).map(Reviews::new)
    }

    /// Every line, in file order.
    pub fn lines(&self) -> &[ReviewLine] {
        &self.lines
    }

    fn indices(&self, task_id: &str) -> &[usize] {
        self.by_task.get(task_id).map_or(&[][..], Vec::as_slice)
    }

    /// The standing decisions on one content of a task, oldest first.
    fn standing_on(&self, task_id: &str, hash: &str) -> Vec<usize> {
        self.indices(task_id)
            .iter()
            .copied()
            .filter(|&i| self.standing[i] && self.lines[i].content == hash)
            .collect()
    }

    /// The opinions that decide the state: from the last standing resolution on (or from
    /// the start), each reviewer's latest standing line, in order of those lines.
    fn opinions(&self, task_id: &str, hash: &str) -> Vec<usize> {
        let on = self.standing_on(task_id, hash);
        let from = on
            .iter()
            .rev()
            .find(|&&i| self.lines[i].resolves)
            .copied()
            .unwrap_or(0);
        let mut latest: Vec<usize> = Vec::new();
        for i in on.into_iter().filter(|&i| i >= from) {
            match latest
                .iter_mut()
                .find(|p| self.lines[**p].reviewer == self.lines[i].reviewer)
            {
                Some(p) => *p = i,
                None => latest.push(i),
            }
        }
        latest.sort_unstable();
        latest
    }

    /// The state of `task`.
    pub fn state(&self, task: &TaskRecord) -> State {
        self.state_of(&task.task_id, &super::content_hash(task))
    }

    /// The state of the task `task_id` whose current content hashes to `hash`: the
    /// reviewers' agreed decision, a conflict, stale if only decisions on other content
    /// stand, pending if none.
    pub fn state_of(&self, task_id: &str, hash: &str) -> State {
        let opinions = self.opinions(task_id, hash);
        let Some(&last) = opinions.last() else {
            let earlier = self
                .indices(task_id)
                .iter()
                .any(|&i| self.standing[i] && self.lines[i].content != hash);
            return if earlier {
                State::Stale
            } else {
                State::Pending
            };
        };
        let last_line = &self.lines[last];
        if opinions
            .iter()
            .all(|&i| same_outcome(&self.lines[i], last_line))
        {
            State::of(last_line)
        } else {
            State::Conflict(opinions.iter().map(|&i| self.lines[i].clone()).collect())
        }
    }

    /// `reviewer`'s standing decision on this content of the task, if any.
    pub fn decision_by(&self, task_id: &str, hash: &str, reviewer: &str) -> Option<&ReviewLine> {
        self.standing_on(task_id, hash)
            .into_iter()
            .rev()
            .map(|i| &self.lines[i])
            .find(|l| l.reviewer == reviewer)
    }

    /// Every line of one task, oldest first, each with whether it still stands (the
    /// history a task page shows).
    pub fn history(&self, task_id: &str) -> Vec<(&ReviewLine, bool)> {
        self.indices(task_id)
            .iter()
            .map(|&i| (&self.lines[i], self.standing[i]))
            .collect()
    }

    /// `reviewer`'s standing decisions, newest first (what an undo may reverse).
    pub fn standing_by<'a>(&'a self, reviewer: &'a str) -> impl Iterator<Item = &'a ReviewLine> {
        self.lines
            .iter()
            .zip(&self.standing)
            .rev()
            .filter(move |(l, s)| **s && l.reviewer == reviewer)
            .map(|(l, _)| l)
    }

    /// The reviewers' own standing decisions on this content, resolutions left out, in the
    /// order the reviewers first decided it: what agreement is measured on.
    pub fn independent(&self, task_id: &str, hash: &str) -> Vec<&ReviewLine> {
        let mut first: Vec<(&str, usize)> = Vec::new();
        for i in self.standing_on(task_id, hash) {
            let l = &self.lines[i];
            if l.resolves {
                continue;
            }
            match first.iter_mut().find(|(r, _)| *r == l.reviewer) {
                Some(p) => p.1 = i,
                None => first.push((l.reviewer.as_str(), i)),
            }
        }
        first.into_iter().map(|(_, i)| &self.lines[i]).collect()
    }
}
