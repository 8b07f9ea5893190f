//! The review app's pages, rendered on the server as plain HTML: here the HTML helpers
//! every page shares, the domains index and a domain's filtered task list; the task page
//! in `task.rs`, the graph page in `graph.rs`.

use super::App;
use super::data::{Candidate, DomainData, Screened, Verified};
use crate::http::Request;
use crate::review::{Reviews, State};
use crate::split::Split;
use serde_json::Value;
use std::fmt::Write;

mod graph;
mod task;

pub use graph::graph_page;
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
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{} · tracer review</title><link rel=\"stylesheet\" href=\"/static/app.css\"></head><body><header><a class=\"brand\" href=\"/\">tracer review</a>{crumbs}<span class=\"keys\">keys: <kbd>a</kbd> accept <kbd>r</kbd> reject <kbd>e</kbd> edit <kbd>j</kbd>/<kbd>k</kbd> next/previous <kbd>/</kbd> search <kbd>g</kbd> graph</span></header><main>{body}</main><script src=\"/static/app.js\"></script></body></html>",
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
        State::Rejected(_) => "bad",
        State::Stale => "warn",
        State::Pending => "muted",
    }
}

/// The review state a list or page shows: decisions apply to verified evaluation tasks
/// that screening kept (or all of them while screening has not run).
pub fn review_state(c: &Candidate, reviews: &Reviews) -> Option<State> {
    reviewable(c).then(|| reviews.state(&c.task))
}

/// Whether a decision on this task can reach the release.
pub fn reviewable(c: &Candidate) -> bool {
    c.task.split == Split::Eval
        && c.verified == Verified::Yes
        && !matches!(c.screened, Screened::Failed(_))
}

pub fn index(app: &App) -> String {
    let mut body = String::from(
        "<h1>Evaluation review</h1><p class=\"lead\">Screened evaluation candidates of this run, per domain. Decisions are saved to the reviews files and applied by the <code>reviewed</code> stage (<code>tracer run eval</code> re-runs it).</p><table class=\"grid\"><thead><tr><th>domain</th><th>candidates</th><th>to review (verified eval, screening kept)</th><th>screening</th><th>accepted</th><th>edited</th><th>rejected</th><th>needs review again</th><th>pending</th><th></th></tr></thead><tbody>",
    );
    for d in &app.domains {
        let name = d.name();
        match app.data(*d) {
            Ok(data) => {
                let reviews = app.reviews(name).unwrap_or_default();
                // candidates, to review, then accepted, edited, rejected, stale, pending.
                let mut n = [0usize; 7];
                n[0] = data.candidates.len();
                for c in &data.candidates {
                    let Some(s) = review_state(c, &reviews) else {
                        continue;
                    };
                    n[1] += 1;
                    n[match s {
                        State::Accepted => 2,
                        State::Edited(_) => 3,
                        State::Rejected(_) => 4,
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
                    "<tr><td><a href=\"/d/{name}\">{name}</a></td><td>{}</td><td>{}</td><td>{screened}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><a href=\"/d/{name}/graph\">graph</a></td></tr>",
                    n[0], n[1], n[2], n[3], n[4], n[5], n[6]
                );
            }
            Err(e) => {
                let _ = write!(
                    body,
                    "<tr><td>{name}</td><td colspan=\"9\" class=\"muted\">{}</td></tr>",
                    esc(&e)
                );
            }
        }
    }
    body.push_str("</tbody></table>");
    layout("domains", "", &body)
}

/// The list's filters, read from the query (defaults: evaluation split, everything else).
struct Filter {
    split: String,
    verified: String,
    screen: String,
    family: String,
    fault: String,
    review: String,
    q: String,
}

impl Filter {
    fn from(req: &Request) -> Filter {
        let get = |k: &str, d: &str| req.param(k).unwrap_or(d).to_string();
        Filter {
            split: get("split", "eval"),
            verified: get("verified", "yes"),
            screen: get("screen", "all"),
            family: get("family", "all"),
            fault: get("fault", "all"),
            review: get("review", "all"),
            q: get("q", ""),
        }
    }

    fn query(&self) -> String {
        format!(
            "split={}&verified={}&screen={}&family={}&fault={}&review={}&q={}",
            enc(&self.split),
            enc(&self.verified),
            enc(&self.screen),
            enc(&self.family),
            enc(&self.fault),
            enc(&self.review),
            enc(&self.q)
        )
    }

    fn keeps(&self, c: &Candidate, state: &Option<State>) -> bool {
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
                || state
                    .as_ref()
                    .is_some_and(|s| s.as_str().replace(' ', "_") == self.review))
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

/// The tasks matching the request's filters, in artifact order.
fn filtered<'a>(
    data: &'a DomainData,
    reviews: &Reviews,
    f: &Filter,
) -> Vec<(&'a Candidate, Option<State>)> {
    data.candidates
        .iter()
        .map(|c| (c, review_state(c, reviews)))
        .filter(|(c, s)| f.keeps(c, s))
        .collect()
}

pub fn task_list(_app: &App, data: &DomainData, reviews: &Reviews, req: &Request) -> String {
    let f = Filter::from(req);
    let name = data.domain.name();
    let rows = filtered(data, reviews, &f);
    let mut families = vec![("all".to_string(), "all".to_string())];
    families.extend(
        data.families()
            .into_iter()
            .map(|(k, n)| (k.clone(), format!("{k} ({n})"))),
    );
    let mut faults = vec![("all".to_string(), "all".to_string())];
    faults.extend(data.fault_names().into_iter().map(|k| (k.clone(), k)));
    let mut body = format!(
        "<h1>{name}</h1><form class=\"filters\" method=\"get\" action=\"/d/{name}\">{}{}{}{}{}{}<label>search <input type=\"search\" name=\"q\" id=\"search\" value=\"{}\" placeholder=\"id, instruction, emotion\"></label><button type=\"submit\">filter</button></form>",
        select("split", &f.split, &opts(&["eval", "train", "all"])),
        select(
            "verified",
            &f.verified,
            &opts(&["yes", "no", "unknown", "all"])
        ),
        select(
            "screen",
            &f.screen,
            &opts(&["all", "passed", "failed", "not_run"])
        ),
        select("family", &f.family, &families),
        select("fault", &f.fault, &faults),
        select(
            "review",
            &f.review,
            &opts(&[
                "all",
                "pending",
                "accepted",
                "edited",
                "rejected",
                "needs_review_again"
            ])
        ),
        esc(&f.q)
    );
    let _ = write!(
        body,
        "<p class=\"count\" id=\"count\">{} of {} tasks</p><table class=\"grid tasks\"><thead><tr><th>task</th><th>split</th><th>verification</th><th>screening</th><th>emotion</th><th>review</th><th>faults</th><th>instruction</th></tr></thead><tbody>",
        rows.len(),
        data.candidates.len()
    );
    let q = f.query();
    for (c, state) in &rows {
        let t = &c.task;
        let instruction = t.instruction.as_deref().unwrap_or("");
        let short: String = instruction.chars().take(160).collect();
        let more = if instruction.chars().count() > 160 {
            "…"
        } else {
            ""
        };
        let _ = write!(
            body,
            "<tr data-task=\"{id}\"><td><a class=\"task-link\" href=\"/d/{name}/t/{eid}?{q}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}{more}</td></tr>",
            t.split.as_str(),
            verified_badge(&c.verified),
            screened_badge(&c.screened),
            esc(&format!(
                "{} / {}",
                t.emotion_family.as_deref().unwrap_or("-"),
                t.emotion.as_deref().unwrap_or("-")
            )),
            state
                .as_ref()
                .map_or(String::new(), |s| badge(state_class(s), s.as_str())),
            c.faults.len(),
            esc(&short),
            id = esc(&t.task_id),
            eid = enc(&t.task_id),
        );
    }
    body.push_str("</tbody></table>");
    layout(name, &format!(" / <a href=\"/d/{name}\">{name}</a>"), &body)
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
}
