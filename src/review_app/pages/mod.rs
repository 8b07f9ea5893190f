//! The review app's pages, rendered on the server as plain HTML: here the HTML helpers
//! every page shares, the reviewer's view of a domain ([`Team`]: assignment and what is left
//! for them), the list's filters and the domains index; the task list in `list.rs`, the
//! task page in `task.rs` (edit diffs in `diff.rs`), the graph page in `graph.rs`.

use super::App;
use super::data::{Candidate, DomainData, Screened, Verified};
use crate::http::Request;
use crate::review::{ReviewLine, Reviews, State};
use crate::split::Split;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write;

mod diff;
mod graph;
mod list;
mod task;

pub use graph::graph_page;
pub use list::task_list;
pub use task::task_page;

/// HTML-escape text (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Percent-encode a query value or path segment.
pub fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn layout(title: &str, crumbs: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{} · tracer review</title><link rel=\"stylesheet\" href=\"/static/app.css\"></head><body><header><a class=\"brand\" href=\"/\">tracer review</a>{crumbs}<span class=\"keys\">keys: <kbd>a</kbd> accept <kbd>r</kbd> reject <kbd>e</kbd> edit <kbd>u</kbd> undo <kbd>j</kbd>/<kbd>k</kbd> next/previous <kbd>/</kbd> search <kbd>g</kbd> graph</span></header><main>{body}</main><script src=\"/static/app.js\"></script></body></html>",
        esc(title)
    )
}

fn badge(class: &str, text: &str) -> String {
    format!("<span class=\"badge {class}\">{}</span>", esc(text))
}

fn verified_badge(v: &Verified) -> String {
    match v {
        Verified::Yes => badge("ok", "verified"),
        Verified::No(kind, _) => badge("bad", &format!("rejected: {kind}")),
        Verified::Unknown => badge("muted", "not verified yet"),
    }
}

fn screened_badge(s: &Screened) -> String {
    match s {
        Screened::Passed => badge("ok", "screened: solved"),
        Screened::Failed(_) => badge("bad", "screened: unsolved"),
        Screened::NotRun => badge("muted", "not screened"),
    }
}

fn state_class(s: &State) -> &'static str {
    match s {
        State::Accepted | State::Edited(_) => "ok",
        State::Rejected(_) | State::Conflict(_) => "bad",
        State::Stale => "warn",
        State::Pending => "muted",
    }
}

/// Whether a decision on this task can reach the release: verified evaluation tasks that
/// screening kept (or all of them while screening has not run).
pub fn reviewable(c: &Candidate) -> bool {
    c.task.split == Split::Eval
        && c.verified == Verified::Yes
        && !matches!(c.screened, Screened::Failed(_))
}

/// The reviewer's view of a domain: who each reviewable task is assigned to (when
/// `assignment.toml` exists) and what is left for this reviewer.
pub struct Team {
    pub reviewer: String,
    pub auto_advance: bool,
    /// Task id -> its reviewers; `None` without an assignment file.
    assigned: Option<HashMap<String, Vec<String>>>,
    /// The assignment names this reviewer: what is left for them is what is theirs.
    mine: bool,
}

impl Team {
    pub fn new(app: &App, data: &DomainData) -> Result<Team, String> {
        let assignment = app.assignment()?;
        let mine = assignment.as_ref().is_some_and(|a| a.names(&app.reviewer));
        let assigned = assignment.map(|a| {
            let ids: Vec<&str> = data
                .candidates
                .iter()
                .filter(|c| reviewable(c))
                .map(|c| c.task.task_id.as_str())
                .collect();
            let who = a.assign(data.domain.name(), &ids);
            ids.into_iter().map(String::from).zip(who).collect()
        });
        Ok(Team {
            reviewer: app.reviewer.clone(),
            auto_advance: app.auto_advance,
            assigned,
            mine,
        })
    }

    pub fn has_assignment(&self) -> bool {
        self.assigned.is_some()
    }

    /// The reviewers a task is assigned to (none without an assignment).
    pub fn reviewers_of(&self, task_id: &str) -> &[String] {
        self.assigned
            .as_ref()
            .and_then(|a| a.get(task_id))
            .map_or(&[], Vec::as_slice)
    }

    /// Whether the task still needs this reviewer: a conflict needs anyone; with an
    /// assignment naming them, a task of theirs they have not decided on its current
    /// content; otherwise a task nobody has decided (or that changed since).
    pub fn left(&self, c: &Candidate, state: &State, reviews: &Reviews) -> bool {
        if matches!(state, State::Conflict(_)) {
            return true;
        }
        if self.mine {
            self.reviewers_of(&c.task.task_id).contains(&self.reviewer)
                && reviews
                    .decision_by(&c.task.task_id, &c.hash, &self.reviewer)
                    .is_none()
        } else {
            state.is_open()
        }
    }
}

/// One task of a list: its review state (reviewable tasks only) and whether it is left for
/// this reviewer.
pub struct Row<'a> {
    pub c: &'a Candidate,
    pub state: Option<State>,
    pub left: bool,
}

/// The list's filters, read from the query (defaults: evaluation split, verified,
/// everything else).
pub struct Filter {
    split: String,
    verified: String,
    screen: String,
    family: String,
    fault: String,
    review: String,
    assigned: String,
    q: String,
}

impl Filter {
    pub fn from(req: &Request) -> Filter {
        Filter::from_params(|k| req.param(k))
    }

    pub fn from_query(query: &str) -> Filter {
        let pairs = crate::http::parse_query(query.trim_start_matches('?'));
        Filter::from_params(|k| {
            pairs
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.as_str())
                .filter(|v| !v.is_empty())
        })
    }

    fn from_params<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Filter {
        let get = |k: &str, d: &str| get(k).unwrap_or(d).to_string();
        Filter {
            split: get("split", "eval"),
            verified: get("verified", "yes"),
            screen: get("screen", "all"),
            family: get("family", "all"),
            fault: get("fault", "all"),
            review: get("review", "all"),
            assigned: get("assigned", "all"),
            q: get("q", ""),
        }
    }

    pub fn query(&self) -> String {
        format!(
            "split={}&verified={}&screen={}&family={}&fault={}&review={}&assigned={}&q={}",
            enc(&self.split),
            enc(&self.verified),
            enc(&self.screen),
            enc(&self.family),
            enc(&self.fault),
            enc(&self.review),
            enc(&self.assigned),
            enc(&self.q)
        )
    }

    fn keeps(&self, row: &Row, team: &Team) -> bool {
        let (c, state) = (row.c, &row.state);
        let t = &c.task;
        let all = |v: &str| v == "all";
        (all(&self.split) || t.split.as_str() == self.split)
            && (all(&self.verified)
                || match &c.verified {
                    Verified::Yes => self.verified == "yes",
                    Verified::No(..) => self.verified == "no",
                    Verified::Unknown => self.verified == "unknown",
                })
            && (all(&self.screen)
                || match &c.screened {
                    Screened::Passed => self.screen == "passed",
                    Screened::Failed(_) => self.screen == "failed",
                    Screened::NotRun => self.screen == "not_run",
                })
            && (all(&self.family) || t.emotion_family.as_deref() == Some(self.family.as_str()))
            && (all(&self.fault) || c.faults.contains(&self.fault))
            && (all(&self.review)
                || (self.review == "left" && row.left)
                || state
                    .as_ref()
                    .is_some_and(|s| s.as_str().replace(' ', "_") == self.review))
            && (all(&self.assigned) || {
                let who = if self.assigned == "me" {
                    team.reviewer.as_str()
                } else {
                    self.assigned.as_str()
                };
                team.reviewers_of(&t.task_id).iter().any(|r| r == who)
            })
            && (self.q.is_empty() || {
                let q = self.q.to_lowercase();
                [
                    Some(t.task_id.as_str()),
                    t.instruction.as_deref(),
                    t.emotion_instruction.as_deref(),
                    t.feeling.as_deref(),
                    t.emotion.as_deref(),
                ]
                .into_iter()
                .flatten()
                .any(|s| s.to_lowercase().contains(&q))
            })
    }
}

/// The tasks matching the filter, in artifact order.
pub fn filtered<'a>(
    data: &'a DomainData,
    reviews: &Reviews,
    team: &Team,
    f: &Filter,
) -> Vec<Row<'a>> {
    data.candidates
        .iter()
        .map(|c| {
            let state = reviewable(c).then(|| reviews.state_of(&c.task.task_id, &c.hash));
            let left = state.as_ref().is_some_and(|s| team.left(c, s, reviews));
            Row { c, state, left }
        })
        .filter(|row| f.keeps(row, team))
        .collect()
}

/// "12 of 146 left" over the reviewable tasks of `rows`.
pub fn progress(rows: &[Row]) -> (usize, usize) {
    let total = rows.iter().filter(|r| r.state.is_some()).count();
    let left = rows.iter().filter(|r| r.left).count();
    (left, total)
}

fn progress_html(left: usize, total: usize, what: &str) -> String {
    format!(
        "<p class=\"progress\"><span id=\"progress\" data-left=\"{left}\" data-total=\"{total}\">{left} of {total} left</span> {what}<progress max=\"{}\" value=\"{}\" aria-hidden=\"true\"></progress></p>",
        total.max(1),
        total - left
    )
}

/// The next task after `current` (by artifact order) among `rows` that is left for this
/// reviewer, wrapping around; `None` when nothing else is left.
pub fn next_left<'a>(data: &DomainData, rows: &'a [Row], current: &str) -> Option<&'a str> {
    let at = data.index.get(current).copied().unwrap_or(0);
    let pos = |r: &Row| data.index.get(&r.c.task.task_id).copied().unwrap_or(0);
    let open = |r: &&Row| r.left && r.c.task.task_id != current;
    rows.iter()
        .filter(|r| pos(r) > at)
        .find(open)
        .or_else(|| rows.iter().find(open))
        .map(|r| r.c.task.task_id.as_str())
}

/// The decision an undo by this reviewer reverses: their latest standing decision on a
/// reviewable task of this domain as it is now.
pub fn undo_target<'a>(
    data: &DomainData,
    reviews: &'a Reviews,
    reviewer: &'a str,
) -> Option<&'a ReviewLine> {
    reviews.standing_by(reviewer).find(|l| {
        data.get(&l.task_id)
            .is_some_and(|c| c.hash == l.content && reviewable(c))
    })
}

pub struct Index {
    pub html: String,
    /// Some domain is still being read: the page reloads itself.
    pub loading: bool,
}

pub fn index(app: &App) -> Index {
    let mut loading = false;
    let mut body = String::from(
        "<h1>Evaluation review</h1><p class=\"lead\">Screened evaluation candidates of this run, per domain. Decisions are saved to the reviews files and applied by the <code>reviewed</code> stage (<code>tracer run eval</code> re-runs it).</p><table class=\"grid\" id=\"domains\"><thead><tr><th>domain</th><th>candidates</th><th>to review (verified eval, screening kept)</th><th>left for you</th><th>screening</th><th>accepted</th><th>edited</th><th>rejected</th><th>conflict</th><th>needs review again</th><th>pending</th><th></th></tr></thead><tbody>",
    );
    for d in &app.domains {
        let name = d.name();
        let Some(data) = app.ready(*d) else {
            loading = true;
            let _ = write!(
                body,
                "<tr data-loading=\"{name}\"><td><a href=\"/d/{name}\">{name}</a></td><td colspan=\"11\" class=\"muted\">reading the run's artifacts…</td></tr>"
            );
            continue;
        };
        let counts = app
            .reviews(name)
            .and_then(|r| Team::new(app, &data).map(|t| (r, t)));
        let (reviews, team) = match counts {
            Ok(x) => x,
            Err(e) => {
                let _ = write!(
                    body,
                    "<tr><td>{name}</td><td colspan=\"11\" class=\"bad\">{}</td></tr>",
                    esc(&e)
                );
                continue;
            }
        };
        // to review, then accepted, edited, rejected, conflict, stale, pending.
        let mut n = [0usize; 7];
        let mut left = 0;
        for c in data.candidates.iter().filter(|c| reviewable(c)) {
            let s = reviews.state_of(&c.task.task_id, &c.hash);
            n[0] += 1;
            left += team.left(c, &s, &reviews) as usize;
            n[match s {
                State::Accepted => 1,
                State::Edited(_) => 2,
                State::Rejected(_) => 3,
                State::Conflict(_) => 4,
                State::Stale => 5,
                State::Pending => 6,
            }] += 1;
        }
        let screened = if data.stages.contains("screened") {
            "run"
        } else {
            "not run"
        };
        let _ = write!(
            body,
            "<tr data-domain=\"{name}\"><td><a href=\"/d/{name}\">{name}</a></td><td>{}</td><td>{}</td><td><a class=\"left\" href=\"/d/{name}?review=left\">{left} of {}</a></td><td>{screened}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><a href=\"/d/{name}/graph\">graph</a></td></tr>",
            data.candidates.len(),
            n[0],
            n[0],
            n[1],
            n[2],
            n[3],
            n[4],
            n[5],
            n[6]
        );
    }
    body.push_str("</tbody></table>");
    Index {
        html: layout("domains", "", &body),
        loading,
    }
}

fn select(name: &str, current: &str, options: &[(String, String)]) -> String {
    let mut out = format!("<label>{name} <select name=\"{name}\">");
    for (value, label) in options {
        let sel = if value == current { " selected" } else { "" };
        let _ = write!(
            out,
            "<option value=\"{}\"{sel}>{}</option>",
            esc(value),
            esc(label)
        );
    }
    out.push_str("</select></label>");
    out
}

fn opts(values: &[&str]) -> Vec<(String, String)> {
    values
        .iter()
        .map(|v| (v.to_string(), v.replace('_', " ")))
        .collect()
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_values_encoded() {
        assert_eq!(
            esc("<script>\"x\" & 'y'</script>"),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(enc("a b/c?d"), "a%20b%2Fc%3Fd");
    }

    #[test]
    fn a_filter_survives_its_own_query() {
        let f = Filter::from_query("?review=left&assigned=me&q=a%20b&family=fear");
        let again = Filter::from_query(&f.query());
        assert_eq!(f.query(), again.query());
        assert!(f.query().contains("review=left") && f.query().contains("q=a%20b"));
    }
}
