//! The task page: the decision panel (state, conflict, assignment, undo, the edit form and
//! the history with each edit's diff), the task itself as it is now (an edit's values with
//! the original beside them; gold actions with their replayed outputs, its path on the
//! graph), its verification and screening, and every episode of it as a conversation with
//! its faults marked.

use super::{
    Filter, Row, Team, badge, diff, enc, esc, filtered, layout, pretty, progress, progress_html,
    reviewable, screened_badge, state_class, undo_target, verified_badge,
};
use crate::artifact::{FaultRecord, RolloutRecord, TaskRecord};
use crate::http::Request;
use crate::review::{Decision, REJECT_REASONS, Reviews, State};
use crate::review_app::App;
use crate::review_app::data::{Candidate, DomainData, Screened, Verified};
use serde_json::Value;
use std::fmt::Write;

/// A tool call's arguments or a tool's output, pretty when it is JSON.
fn pretty_text(s: &str) -> String {
    match serde_json::from_str::<Value>(s) {
        Ok(v) if v.is_object() || v.is_array() => pretty(&v),
        _ => s.to_string(),
    }
}

fn conversation(ep: &RolloutRecord, faults: &[FaultRecord]) -> String {
    let messages = &ep.messages;
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
        let role = m.role.as_str();
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
        if let Some(r) = m.reasoning_content.as_deref().filter(|r| !r.is_empty()) {
            let _ = write!(
                out,
                "<details class=\"reasoning\"><summary>reasoning ({} chars)</summary><pre>{}</pre></details>",
                r.chars().count(),
                esc(r)
            );
        }
        match role {
            "system" => {
                let text = m.content.as_deref().unwrap_or("");
                let _ = write!(
                    out,
                    "<details class=\"system\"><summary>system prompt ({} chars)</summary><pre>{}</pre></details>",
                    text.chars().count(),
                    esc(text)
                );
            }
            "tool" => {
                let text = m.content.as_deref().unwrap_or("");
                let name = m.name.as_deref().unwrap_or("result");
                let _ = write!(
                    out,
                    "<details class=\"tool\"><summary>{} → {} chars</summary><pre>{}</pre></details>",
                    esc(name),
                    text.chars().count(),
                    esc(&pretty_text(text))
                );
            }
            _ => {
                if let Some(text) = m.content.as_deref().filter(|t| !t.is_empty()) {
                    let _ = write!(out, "<div class=\"content\">{}</div>", esc(text));
                }
            }
        }
        for call in &m.tool_calls {
            let _ = write!(
                out,
                "<details class=\"call\"><summary>call <code>{}</code></summary><pre>{}</pre></details>",
                esc(&call.name),
                esc(&pretty_text(&call.arguments))
            );
        }
        out.push_str("</li>");
    }
    out.push_str("</ol>");
    out
}

/// The previous and next task of the filtered list around `id`, by artifact order, so a
/// task that left the filter (just decided under `review = pending`) still has both.
fn neighbours<'a>(
    data: &DomainData,
    rows: &'a [Row],
    id: &str,
) -> (Option<&'a str>, Option<&'a str>) {
    let at = data.index.get(id).copied().unwrap_or(0);
    let pos = |r: &Row| data.index.get(&r.c.task.task_id).copied().unwrap_or(0);
    let prev = rows.iter().rev().find(|r| pos(r) < at);
    let next = rows.iter().find(|r| pos(r) > at);
    let id = |r: Option<&'a Row>| r.map(|r| r.c.task.task_id.as_str());
    (id(prev), id(next))
}

fn history(t: &TaskRecord, reviews: &Reviews, content: &str) -> String {
    let history = reviews.history(&t.task_id);
    if history.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<details class=\"history\" id=\"history\" open><summary>decision history</summary><ol>",
    );
    for (l, standing) in history {
        let mut notes = Vec::new();
        if l.content != content {
            notes.push("on earlier content");
        }
        if !standing && l.decision != Decision::Undo {
            notes.push("undone");
        }
        if l.resolves {
            notes.push("resolves the conflict");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" <span class=\"muted\">({})</span>", notes.join(", "))
        };
        let class = if standing || l.decision == Decision::Undo {
            ""
        } else {
            " class=\"undone\""
        };
        let diff = match (&l.edit, l.content == content) {
            (Some(e), true) => diff::edit_diff(t, e),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "<li{class}><b>{}</b> by {}{}{notes}{diff}</li>",
            esc(l.decision.as_str()),
            esc(&l.reviewer),
            l.reason
                .as_deref()
                .map_or(String::new(), |r| format!(": {}", esc(r)))
        );
    }
    out.push_str("</ol></details>");
    out
}

/// A text field as it is now, with the original beside it when an edit changed it.
fn current_text(id: &str, title: &str, now: Option<&str>, original: Option<&str>) -> String {
    let now = now.unwrap_or("(none)");
    let original = original.unwrap_or("(none)");
    if now == original {
        return format!(
            "<section><h2>{title}</h2><div class=\"instruction\" id=\"{id}\">{}</div></section>",
            esc(now)
        );
    }
    format!(
        "<section><h2>{title} {}</h2><div class=\"versions\"><div><h3>current (edited)</h3><div class=\"instruction edited\" id=\"{id}\">{}</div></div><div><h3>original</h3><div class=\"instruction original\" id=\"{id}-original\">{}</div></div></div><details class=\"changes\"><summary>changes</summary><div class=\"text-diff\">{}</div></details></section>",
        badge("warn", "edited"),
        esc(now),
        esc(original),
        diff::text_diff(original, now)
    )
}

fn decision_panel(
    data: &DomainData,
    c: &Candidate,
    s: &State,
    shown: &TaskRecord,
    reviews: &Reviews,
    team: &Team,
    q: &str,
) -> String {
    let t = &c.task;
    let name = data.domain.name();
    let mut reasons = String::new();
    for r in REJECT_REASONS {
        let _ = write!(reasons, "<option>{}</option>", esc(r));
    }
    let current = match s {
        State::Rejected(r) => format!("Rejected: {}", esc(r)),
        State::Edited(_) => {
            "Accepted with an edit: the current values are shown, the original beside them.".into()
        }
        State::Accepted => "Accepted.".into(),
        State::Pending => "Not decided yet.".into(),
        State::Stale => {
            "Decided on earlier content: the task changed since, review it again.".into()
        }
        State::Conflict(_) => "Reviewers disagree: your decision resolves the conflict.".into(),
    };
    let mut out = format!(
        "<section class=\"decide\" id=\"decide\" data-domain=\"{name}\" data-task=\"{}\" data-content=\"{}\" data-query=\"{}\" data-advance=\"{}\"><h2>Decision</h2><p id=\"state-text\">{current}</p>",
        esc(&t.task_id),
        c.hash,
        esc(q),
        team.auto_advance
    );
    let assigned = team.reviewers_of(&t.task_id);
    if !assigned.is_empty() {
        let _ = write!(
            out,
            "<p class=\"muted\" id=\"assigned\">assigned to {}</p>",
            esc(&assigned.join(", "))
        );
    }
    if let Some(mine) = reviews.decision_by(&t.task_id, &c.hash, &team.reviewer) {
        let _ = write!(
            out,
            "<p class=\"muted\" id=\"mine\">your decision: {}</p>",
            esc(mine.decision.as_str())
        );
    }
    if let State::Conflict(opinions) = s {
        out.push_str("<div class=\"conflict\" id=\"conflict\"><h3>Conflict</h3><ul>");
        for l in opinions {
            let _ = write!(
                out,
                "<li><b>{}</b>: {}{}{}</li>",
                esc(&l.reviewer),
                esc(l.decision.as_str()),
                l.reason
                    .as_deref()
                    .map_or(String::new(), |r| format!(" ({})", esc(r))),
                l.edit
                    .as_ref()
                    .map_or(String::new(), |e| diff::edit_diff(t, e))
            );
        }
        out.push_str("</ul></div>");
    }
    let undo = undo_target(data, reviews, &team.reviewer).map(|l| {
        format!(
            "undo your last decision ({} of {}) <kbd>u</kbd>",
            l.decision.as_str(),
            l.task_id
        )
    });
    let _ = write!(
        out,
        "<div class=\"buttons\"><button id=\"accept\" class=\"ok\">accept <kbd>a</kbd></button><select id=\"reason\" aria-label=\"reason to reject\"><option value=\"\">reject because…</option>{reasons}<option value=\"other\">other (write it)</option></select><input id=\"reason-text\" placeholder=\"reason (free text)\" aria-label=\"reason (free text)\"><button id=\"reject\" class=\"bad\">reject <kbd>r</kbd></button><button id=\"edit-toggle\">edit <kbd>e</kbd></button><button id=\"undo\"{}>{}</button><label class=\"advance\"><input type=\"checkbox\" id=\"auto-advance\"> next open task after a decision</label></div><p id=\"message\" class=\"message\" role=\"status\" aria-live=\"polite\"></p>",
        if undo.is_none() { " disabled" } else { "" },
        undo.unwrap_or_else(|| "nothing of yours to undo".into())
    );
    // The form starts from the current values; each field knows its original, and what
    // differs from the original is the edit.
    let mut args = String::new();
    for (i, (a, o)) in shown.actions.iter().zip(&t.actions).enumerate() {
        let _ = write!(
            args,
            "<label class=\"arg\">{i}. <code>{}</code><textarea class=\"edit-arg\" data-index=\"{i}\" data-original=\"{}\" rows=\"3\">{}</textarea></label>",
            esc(&a.name),
            esc(&o.kwargs.to_string()),
            esc(&pretty(&a.kwargs))
        );
    }
    let _ = write!(
        out,
        "<form id=\"edit-form\" class=\"edit\" hidden><label>instruction<textarea id=\"edit-instruction\" rows=\"6\" data-original=\"{}\">{}</textarea></label><label>emotion instruction<textarea id=\"edit-emotion\" rows=\"3\" data-original=\"{}\">{}</textarea></label><fieldset><legend>arguments of the reference actions (JSON objects)</legend>{args}</fieldset><label>outputs (one per line)<textarea id=\"edit-outputs\" rows=\"3\" data-original=\"{}\">{}</textarea></label><div class=\"save\"><button type=\"submit\" id=\"save-edit\">verify and save edit</button><span id=\"edit-message\" class=\"message\" role=\"alert\" aria-live=\"assertive\"></span></div></form>",
        esc(t.instruction.as_deref().unwrap_or("")),
        esc(shown.instruction.as_deref().unwrap_or("")),
        esc(t.emotion_instruction.as_deref().unwrap_or("")),
        esc(shown.emotion_instruction.as_deref().unwrap_or("")),
        esc(&t.outputs.join("\n")),
        esc(&shown.outputs.join("\n"))
    );
    out.push_str(&history(t, reviews, &c.hash));
    out.push_str("</section>");
    out
}

pub fn task_page(
    _app: &App,
    data: &DomainData,
    c: &Candidate,
    reviews: &Reviews,
    team: &Team,
    req: &Request,
) -> String {
    let t = &c.task;
    let name = data.domain.name();
    let f = Filter::from(req);
    let q = f.query();
    let rows = filtered(data, reviews, team, &f);
    let (prev, next) = neighbours(data, &rows, &t.task_id);
    let link = |id: Option<&str>, rel: &str, label: &str| match id {
        Some(id) => format!(
            "<a rel=\"{rel}\" id=\"{rel}\" href=\"/d/{name}/t/{}?{q}\">{label}</a>",
            enc(id)
        ),
        None => format!("<span class=\"muted\">{label}</span>"),
    };
    let state = reviewable(c).then(|| reviews.state_of(&t.task_id, &c.hash));
    let (left, total) = progress(&rows);
    let mut body = format!(
        "<nav class=\"pager\">{} · <a href=\"/d/{name}?{q}\">list</a> · {}</nav>{}<h1 id=\"task-id\">{}</h1><p class=\"badges\">{} {} {} {}</p>",
        link(prev, "prev", "← previous"),
        link(next, "next", "next →"),
        progress_html(left, total, "in this list"),
        esc(&t.task_id),
        badge("muted", t.split.as_str()),
        verified_badge(&c.verified),
        screened_badge(&c.screened),
        state.as_ref().map_or(String::new(), |s| format!(
            "<span id=\"review-state\">{}</span>",
            badge(state_class(s), s.as_str())
        )),
    );

    // The values as they are now: the agreed edit, or in a conflict your own edit.
    let edit = match &state {
        Some(State::Edited(e)) => Some(e.clone()),
        Some(State::Conflict(_)) => reviews
            .decision_by(&t.task_id, &c.hash, &team.reviewer)
            .and_then(|l| l.edit.clone()),
        _ => None,
    };
    let shown = edit
        .as_ref()
        .and_then(|e| crate::review::edited_fields(t, e).ok())
        .unwrap_or_else(|| t.clone());

    match &state {
        Some(s) => body.push_str(&decision_panel(data, c, s, &shown, reviews, team, &q)),
        None => body.push_str(
            "<p class=\"muted\">Decisions apply to verified evaluation tasks that screening kept.</p>",
        ),
    }

    // The task itself, as it is now.
    body.push_str(&current_text(
        "instruction",
        "Instruction",
        shown.instruction.as_deref(),
        t.instruction.as_deref(),
    ));
    let _ = write!(
        body,
        "<section><h2>Emotion</h2><p><b>{}</b> / {} · politeness {} · urgency {} · trust {}</p><h3>Feeling</h3><p>{}</p></section>",
        esc(t.emotion_family.as_deref().unwrap_or("-")),
        esc(t.emotion.as_deref().unwrap_or("-")),
        esc(t.politeness.as_deref().unwrap_or("-")),
        esc(t.urgency.as_deref().unwrap_or("-")),
        esc(t.trust.as_deref().unwrap_or("-")),
        esc(t.feeling.as_deref().unwrap_or("(none)"))
    );
    body.push_str(&current_text(
        "emotion-instruction",
        "Emotion instruction",
        shown.emotion_instruction.as_deref(),
        t.emotion_instruction.as_deref(),
    ));
    let replayed = data.replayed_outputs(&shown);
    let changed_args = shown
        .actions
        .iter()
        .zip(&t.actions)
        .any(|(a, o)| a.kwargs != o.kwargs);
    let _ = write!(
        body,
        "<section><h2>Gold actions{}</h2><table class=\"grid actions\"><thead><tr><th>#</th><th>tool</th><th>arguments</th>{}<th>replayed output</th></tr></thead><tbody>",
        if changed_args {
            format!(" {}", badge("warn", "edited"))
        } else {
            String::new()
        },
        if changed_args {
            "<th>original arguments</th>"
        } else {
            ""
        }
    );
    for (i, (a, o)) in shown.actions.iter().zip(&t.actions).enumerate() {
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
        let original = if changed_args {
            let class = if a.kwargs != o.kwargs {
                " class=\"original\""
            } else {
                ""
            };
            format!("<td{class}><pre>{}</pre></td>", esc(&pretty(&o.kwargs)))
        } else {
            String::new()
        };
        let _ = write!(
            body,
            "<tr><td>{i}</td><td><code>{}</code></td><td><pre class=\"args\">{}</pre></td>{original}<td>{out}</td></tr>",
            esc(&a.name),
            esc(&pretty(&a.kwargs))
        );
    }
    body.push_str("</tbody></table>");
    let outputs = |o: &[String]| {
        o.iter()
            .map(|x| format!("<li><code>{}</code></li>", esc(x)))
            .collect::<String>()
    };
    if shown.outputs.is_empty() && t.outputs.is_empty() {
        body.push_str("<p>Outputs: <span class=\"muted\">none</span></p>");
    } else if shown.outputs == t.outputs {
        let _ = write!(
            body,
            "<p>Outputs the agent must tell:</p><ul id=\"outputs\">{}</ul>",
            outputs(&t.outputs)
        );
    } else {
        let _ = write!(
            body,
            "<p>Outputs the agent must tell {}:</p><div class=\"versions\"><div><h3>current (edited)</h3><ul id=\"outputs\">{}</ul></div><div><h3>original</h3><ul id=\"outputs-original\">{}</ul></div></div>",
            badge("warn", "edited"),
            outputs(&shown.outputs),
            outputs(&t.outputs)
        );
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
    let (episodes, unread) = match data.episodes(&t.task_id) {
        Ok(e) => (e, None),
        Err(e) => (&[][..], Some(e)),
    };
    let _ = write!(body, "<section><h2>Episodes ({})</h2>", episodes.len());
    if let Some(e) = unread {
        let _ = write!(body, "<p class=\"bad\">{}</p>", esc(&e));
    } else if episodes.is_empty() {
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
