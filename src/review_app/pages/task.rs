//! The task page: the decision panel and edit form, the task itself (instruction, emotion,
//! gold actions with their replayed outputs, its path on the graph), its verification and
//! screening, and every episode of it as a conversation with its faults marked.

use super::{
    Filter, badge, enc, esc, filtered, layout, pretty, review_state, screened_badge, state_class,
    verified_badge,
};
use crate::artifact::{FaultRecord, RolloutRecord};
use crate::http::Request;
use crate::review::{REJECT_REASONS, Reviews, State};
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
            let actions = &shown.actions;
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
    let actions = &t.actions;
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
