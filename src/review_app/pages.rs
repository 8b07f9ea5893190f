//! The review app's pages, rendered on the server as plain HTML.

use super::App;
use super::data::{Candidate, DomainData, Screened, Verified};
use crate::artifact::{FaultRecord, RolloutRecord};
use crate::http::Request;
use crate::review::{REJECT_REASONS, Reviews, State};
use crate::split::Split;
use serde_json::Value;
use std::fmt::Write;

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

/// A tool call's arguments or a tool's output, pretty when it is JSON.
fn pretty_text(s: &str) -> String {
    match serde_json::from_str::<Value>(s) {
        Ok(v) if v.is_object() || v.is_array() => pretty(&v),
        _ => s.to_string(),
    }
}

fn conversation(ep: &RolloutRecord, faults: &[FaultRecord]) -> String {
    let messages: Vec<Value> = serde_json::from_str(&ep.messages).unwrap_or_default();
    let mut out = String::new();
    let unplaced: Vec<&FaultRecord> = faults
        .iter()
        .filter(|f| f.step.is_none_or(|s| s < 0 || s as usize >= messages.len()))
        .collect();
    if !unplaced.is_empty() {
        out.push_str("<ul class=\"faults\">");
        for f in unplaced {
            let _ = write!(
                out,
                "<li>{} {}</li>",
                badge("bad", &f.fault),
                esc(&f.detail)
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("<ol class=\"conversation\">");
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("?");
        let mut marks = String::new();
        for f in faults.iter().filter(|f| f.step == Some(i as i32)) {
            let _ = write!(
                marks,
                "<div class=\"fault\">{} {}</div>",
                badge("bad", &format!("fault: {}", f.fault)),
                esc(&f.detail)
            );
        }
        let class = if marks.is_empty() { "" } else { " faulty" };
        let _ = write!(
            out,
            "<li class=\"msg {role}{class}\" id=\"m{i}\">{marks}<div class=\"who\">{role}</div>"
        );
        if let Some(r) = m["reasoning_content"].as_str().filter(|r| !r.is_empty()) {
            let _ = write!(
                out,
                "<details class=\"reasoning\"><summary>reasoning ({} chars)</summary><pre>{}</pre></details>",
                r.chars().count(),
                esc(r)
            );
        }
        match role {
            "system" => {
                let text = m["content"].as_str().unwrap_or("");
                let _ = write!(
                    out,
                    "<details class=\"system\"><summary>system prompt ({} chars)</summary><pre>{}</pre></details>",
                    text.chars().count(),
                    esc(text)
                );
            }
            "tool" => {
                let text = m["content"].as_str().unwrap_or("");
                let name = m["name"].as_str().unwrap_or("result");
                let _ = write!(
                    out,
                    "<details class=\"tool\"><summary>{} → {} chars</summary><pre>{}</pre></details>",
                    esc(name),
                    text.chars().count(),
                    esc(&pretty_text(text))
                );
            }
            _ => {
                if let Some(text) = m["content"].as_str().filter(|t| !t.is_empty()) {
                    let _ = write!(out, "<div class=\"content\">{}</div>", esc(text));
                }
            }
        }
        if let Some(calls) = m["tool_calls"].as_array() {
            for call in calls {
                let f = &call["function"];
                let _ = write!(
                    out,
                    "<details class=\"call\"><summary>call <code>{}</code></summary><pre>{}</pre></details>",
                    esc(f["name"].as_str().unwrap_or("?")),
                    esc(&pretty_text(f["arguments"].as_str().unwrap_or("")))
                );
            }
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>");
    out
}

fn neighbours<'a>(
    rows: &'a [(&'a Candidate, Option<State>)],
    id: &str,
) -> (Option<&'a str>, Option<&'a str>) {
    let pos = rows.iter().position(|(c, _)| c.task.task_id == id);
    let at = |i: Option<usize>| {
        i.and_then(|i| rows.get(i))
            .map(|(c, _)| c.task.task_id.as_str())
    };
    match pos {
        Some(p) => (at(p.checked_sub(1)), at(Some(p + 1))),
        None => (None, None),
    }
}

pub fn task_page(
    _app: &App,
    data: &DomainData,
    c: &Candidate,
    reviews: &Reviews,
    req: &Request,
) -> String {
    let t = &c.task;
    let name = data.domain.name();
    let f = Filter::from(req);
    let q = f.query();
    let rows = filtered(data, reviews, &f);
    let (prev, next) = neighbours(&rows, &t.task_id);
    let link = |id: Option<&str>, rel: &str, label: &str| match id {
        Some(id) => format!(
            "<a rel=\"{rel}\" id=\"{rel}\" href=\"/d/{name}/t/{}?{q}\">{label}</a>",
            enc(id)
        ),
        None => format!("<span class=\"muted\">{label}</span>"),
    };
    let state = review_state(c, reviews);
    let mut body = format!(
        "<nav class=\"pager\">{} · <a href=\"/d/{name}?{q}\">list</a> · {}</nav><h1 id=\"task-id\">{}</h1><p class=\"badges\">{} {} {} {}</p>",
        link(prev, "prev", "← previous"),
        link(next, "next", "next →"),
        esc(&t.task_id),
        badge("muted", t.split.as_str()),
        verified_badge(&c.verified),
        screened_badge(&c.screened),
        state.as_ref().map_or(String::new(), |s| format!(
            "<span id=\"review-state\">{}</span>",
            badge(state_class(s), s.as_str())
        )),
    );

    // Decision panel.
    match &state {
        Some(s) => {
            let content = crate::review::content_hash(t);
            let mut reasons = String::new();
            for r in REJECT_REASONS {
                let _ = write!(reasons, "<option>{}</option>", esc(r));
            }
            let current = match s {
                State::Rejected(r) => format!("<p>Rejected: {}</p>", esc(r)),
                State::Edited(_) => {
                    "<p>Accepted with an edit (shown below as the current values).</p>".into()
                }
                _ => String::new(),
            };
            let _ = write!(
                body,
                "<section class=\"decide\" id=\"decide\" data-domain=\"{name}\" data-task=\"{}\" data-content=\"{content}\"><h2>Decision</h2>{current}<div class=\"buttons\"><button id=\"accept\" class=\"ok\">accept <kbd>a</kbd></button><select id=\"reason\"><option value=\"\">reject because…</option>{reasons}<option value=\"other\">other (write it)</option></select><input id=\"reason-text\" placeholder=\"reason (free text)\"><button id=\"reject\" class=\"bad\">reject <kbd>r</kbd></button><button id=\"edit-toggle\">edit <kbd>e</kbd></button></div><p id=\"message\" class=\"message\" role=\"status\"></p>",
                esc(&t.task_id)
            );
            // The edit form starts from the current values (an earlier edit applied).
            let shown = match (s, data.env(t.split)) {
                (State::Edited(edit), Some(env)) => {
                    crate::review::apply_edit(env, t, edit).unwrap_or_else(|_| t.clone())
                }
                _ => t.clone(),
            };
            let actions = crate::task::actions(&shown).unwrap_or_default();
            let mut args = String::new();
            for (i, a) in actions.iter().enumerate() {
                let _ = write!(
                    args,
                    "<label class=\"arg\">{i}. <code>{}</code><textarea class=\"edit-arg\" data-index=\"{i}\" rows=\"3\">{}</textarea></label>",
                    esc(&a.name),
                    esc(&pretty(&a.kwargs))
                );
            }
            let _ = write!(
                body,
                "<form id=\"edit-form\" class=\"edit\" hidden><label>instruction<textarea id=\"edit-instruction\" rows=\"6\">{}</textarea></label><label>emotion instruction<textarea id=\"edit-emotion\" rows=\"3\">{}</textarea></label><fieldset><legend>arguments of the reference actions (JSON objects)</legend>{args}</fieldset><label>outputs (one per line)<textarea id=\"edit-outputs\" rows=\"3\">{}</textarea></label><button type=\"submit\" id=\"save-edit\">verify and save edit</button></form>",
                esc(shown.instruction.as_deref().unwrap_or("")),
                esc(shown.emotion_instruction.as_deref().unwrap_or("")),
                esc(&shown.outputs.join("\n"))
            );
            let history: Vec<_> = reviews.history(&t.task_id).collect();
            if !history.is_empty() {
                body.push_str("<details class=\"history\"><summary>decision history</summary><ol>");
                for l in history {
                    let stale = if l.content == content {
                        ""
                    } else {
                        " (on earlier content)"
                    };
                    let _ = write!(
                        body,
                        "<li>{} by {}{}{stale}</li>",
                        esc(l.decision.as_str()),
                        esc(&l.reviewer),
                        l.reason
                            .as_deref()
                            .map_or(String::new(), |r| format!(": {}", esc(r)))
                    );
                }
                body.push_str("</ol></details>");
            }
            body.push_str("</section>");
        }
        None => {
            body.push_str("<p class=\"muted\">Decisions apply to verified evaluation tasks that screening kept.</p>");
        }
    }

    // The task itself.
    let _ = write!(
        body,
        "<section><h2>Instruction</h2><div class=\"instruction\" id=\"instruction\">{}</div></section>",
        esc(t.instruction.as_deref().unwrap_or("(none)"))
    );
    let _ = write!(
        body,
        "<section><h2>Emotion</h2><p><b>{}</b> / {} · politeness {} · urgency {} · trust {}</p><div class=\"instruction\" id=\"emotion-instruction\">{}</div><h3>Feeling</h3><p>{}</p></section>",
        esc(t.emotion_family.as_deref().unwrap_or("-")),
        esc(t.emotion.as_deref().unwrap_or("-")),
        esc(t.politeness.as_deref().unwrap_or("-")),
        esc(t.urgency.as_deref().unwrap_or("-")),
        esc(t.trust.as_deref().unwrap_or("-")),
        esc(t.emotion_instruction.as_deref().unwrap_or("(none)")),
        esc(t.feeling.as_deref().unwrap_or("(none)"))
    );
    let actions = crate::task::actions(t).unwrap_or_default();
    let replayed = data.replayed_outputs(t);
    body.push_str("<section><h2>Gold actions</h2><table class=\"grid actions\"><thead><tr><th>#</th><th>tool</th><th>arguments</th><th>replayed output</th></tr></thead><tbody>");
    for (i, a) in actions.iter().enumerate() {
        let out = replayed
            .get(i)
            .map(|(_, text, err)| {
                let class = if *err { " class=\"error\"" } else { "" };
                format!(
                    "<details{class}><summary>{} chars{}</summary><pre>{}</pre></details>",
                    text.chars().count(),
                    if *err { ", error" } else { "" },
                    esc(&pretty_text(text))
                )
            })
            .unwrap_or_else(|| "<span class=\"muted\">no database</span>".into());
        let _ = write!(
            body,
            "<tr><td>{i}</td><td><code>{}</code></td><td><pre>{}</pre></td><td>{out}</td></tr>",
            esc(&a.name),
            esc(&pretty(&a.kwargs))
        );
    }
    body.push_str("</tbody></table>");
    if t.outputs.is_empty() {
        body.push_str("<p>Outputs: <span class=\"muted\">none</span></p>");
    } else {
        body.push_str("<p>Outputs the agent must tell:</p><ul>");
        for o in &t.outputs {
            let _ = write!(body, "<li><code>{}</code></li>", esc(o));
        }
        body.push_str("</ul>");
    }
    body.push_str("</section>");

    // The trace's path on the dependency graph.
    let _ = write!(
        body,
        "<section><h2>Path on the dependency graph</h2><ol>{}</ol><p><a href=\"/d/{name}/graph?task={}\">show on the graph</a></p></section>",
        t.intents
            .iter()
            .map(|walk| format!(
                "<li>{}</li>",
                walk.iter()
                    .map(|s| format!("<code>{}</code>", esc(s)))
                    .collect::<Vec<_>>()
                    .join(" → ")
            ))
            .collect::<String>(),
        enc(&t.task_id)
    );

    // Verification.
    let verdict = match &c.verified {
        Verified::Yes => "Replays to the reference state; policy rules, ids, quality gates and information sufficiency pass.".to_string(),
        Verified::No(k, r) => format!("Rejected ({k}): {r}"),
        Verified::Unknown => "The tasks stage has not run.".into(),
    };
    let screening = match &c.screened {
        Screened::Passed => "solved at least once".to_string(),
        Screened::Failed(r) => r.clone(),
        Screened::NotRun => "not screened".into(),
    };
    let _ = write!(
        body,
        "<section><h2>Verification</h2><p>{}</p><p>Screening: {}</p><p class=\"muted\">trace {} · user {} · reference state {}</p></section>",
        esc(&verdict),
        esc(&screening),
        esc(&t.trace_id),
        esc(&t.user_id),
        esc(&t.reference_hash)
    );

    // Episodes.
    let episodes = data.episodes.get(&t.task_id).map_or(&[][..], Vec::as_slice);
    let _ = write!(body, "<section><h2>Episodes ({})</h2>", episodes.len());
    if episodes.is_empty() {
        body.push_str("<p class=\"muted\">No screening, evaluation or rollout episode of this task in this run.</p>");
    }
    for (source, ep) in episodes {
        let faults = data
            .faults
            .get(&(t.task_id.clone(), ep.trial, source.to_string()))
            .map_or(&[][..], Vec::as_slice);
        let class = match ep.reward {
            1 => "ok",
            -1 => "bad",
            _ => "warn",
        };
        let _ = write!(
            body,
            "<details class=\"episode\"><summary>{source} trial {} · {} · {} · agent {} · user {} · {} fault(s)</summary>{}</details>",
            ep.trial,
            badge(class, &format!("reward {}", ep.reward)),
            esc(&ep.termination),
            esc(&ep.agent_model),
            esc(&ep.user_model),
            faults.len(),
            conversation(ep, faults)
        );
    }
    body.push_str("</section>");
    layout(
        &t.task_id,
        &format!(
            " / <a href=\"/d/{name}\">{name}</a> / {} · <a id=\"graph-link\" href=\"/d/{name}/graph?task={}\">graph</a>",
            esc(&t.task_id),
            enc(&t.task_id)
        ),
        &body,
    )
}

/// The dependency graph as SVG: tools on a circle (roots first), edges as arrows, the
/// task's path (if `?task=`) highlighted; below, every edge with its witness.
pub fn graph_page(data: &DomainData, req: &Request) -> String {
    let name = data.domain.name();
    let Some(g) = &data.graph else {
        return layout(
            "graph",
            &format!(" / <a href=\"/d/{name}\">{name}</a> / graph"),
            "<p class=\"muted\">The graphs stage has not run for this domain.</p>",
        );
    };
    let path_edges: std::collections::BTreeSet<(String, String)> = req
        .param("task")
        .and_then(|id| data.get(id))
        .map(|c| {
            c.task
                .intents
                .iter()
                .flat_map(|w| w.windows(2).map(|p| (p[0].clone(), p[1].clone())))
                .collect()
        })
        .unwrap_or_default();
    let mut nodes: Vec<&crate::graph::Node> = g.nodes.iter().collect();
    nodes.sort_by_key(|n| (!n.root, n.tool.clone()));
    let n = nodes.len().max(1) as f64;
    let (w, h, r) = (1100.0, 900.0, 360.0);
    let pos: std::collections::HashMap<&str, (f64, f64)> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let a = std::f64::consts::TAU * i as f64 / n - std::f64::consts::FRAC_PI_2;
            (
                node.tool.as_str(),
                (w / 2.0 + r * a.cos(), h / 2.0 + r * a.sin()),
            )
        })
        .collect();
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" class=\"graph\" role=\"img\" aria-label=\"tool dependency graph of {name}\"><defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>"
    );
    for e in &g.edges {
        let (Some(&(x1, y1)), Some(&(x2, y2))) = (pos.get(e.from.as_str()), pos.get(e.to.as_str()))
        else {
            continue;
        };
        // Stop short of the target's label.
        let (dx, dy) = (x2 - x1, y2 - y1);
        let len = (dx * dx + dy * dy).sqrt().max(1.0);
        let (ex, ey) = (x2 - dx / len * 14.0, y2 - dy / len * 14.0);
        let on = path_edges.contains(&(e.from.clone(), e.to.clone()));
        let _ = write!(
            svg,
            "<line class=\"edge{}\" x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{ex:.1}\" y2=\"{ey:.1}\" marker-end=\"url(#arrow)\"><title>{} → {}</title></line>",
            if on { " on-path" } else { "" },
            esc(&e.from),
            esc(&e.to)
        );
    }
    for node in &nodes {
        let (x, y) = pos[node.tool.as_str()];
        let kind = node.kind.as_str();
        let anchor = if x < w / 2.0 - 1.0 { "end" } else { "start" };
        let dx = if anchor == "end" { -10.0 } else { 10.0 };
        let _ = write!(
            svg,
            "<g class=\"node {kind}{}\"><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"7\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}</text></g>",
            if node.root { " root" } else { "" },
            x + dx,
            y + 4.0,
            esc(&node.tool)
        );
    }
    svg.push_str("</svg>");
    let mut body = format!(
        "<h1>{name}: tool dependency graph</h1><p class=\"lead\">{} tools, {} edges. Filled circles are roots; writes are drawn darker. {}</p>{svg}",
        g.nodes.len(),
        g.edges.len(),
        if path_edges.is_empty() {
            String::new()
        } else {
            "The task's path is highlighted.".into()
        }
    );
    body.push_str("<h2>Edges and their witnesses</h2><table class=\"grid\"><thead><tr><th>source</th><th>target</th><th>demonstrated</th><th>witness (the executed calls)</th></tr></thead><tbody>");
    for e in &data.edges {
        let witness = serde_json::from_str::<Value>(&e.witness)
            .map(|v| pretty(&v))
            .unwrap_or_else(|_| e.witness.clone());
        let _ = write!(
            body,
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td><details><summary>witness</summary><pre>{}</pre></details></td></tr>",
            esc(&e.source),
            esc(&e.target),
            if e.demonstrated {
                badge("ok", "yes")
            } else {
                badge("bad", "no")
            },
            esc(&witness)
        );
    }
    body.push_str("</tbody></table>");
    layout(
        "graph",
        &format!(" / <a href=\"/d/{name}\">{name}</a> / graph"),
        &body,
    )
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
