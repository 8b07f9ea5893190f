//! A domain's task list: the filters, the progress of the filtered set, the bulk decision
//! on it, and one row per task.

use super::{
    Filter, Team, badge, enc, esc, filtered, layout, opts, progress, progress_html, screened_badge,
    select, state_class, verified_badge,
};
use crate::http::Request;
use crate::review::{REJECT_REASONS, Reviews};
use crate::review_app::data::DomainData;
use std::fmt::Write;

pub fn task_list(data: &DomainData, reviews: &Reviews, team: &Team, req: &Request) -> String {
    let f = Filter::from(req);
    let name = data.domain.name();
    let rows = filtered(data, reviews, team, &f);
    let mut families = vec![("all".to_string(), "all".to_string())];
    families.extend(
        data.families()
            .into_iter()
            .map(|(k, n)| (k.clone(), format!("{k} ({n})"))),
    );
    let mut faults = vec![("all".to_string(), "all".to_string())];
    faults.extend(data.fault_names().into_iter().map(|k| (k.clone(), k)));
    let mut assigned = opts(&["all", "me"]);
    if team.has_assignment() {
        let mut names: Vec<&String> = data
            .candidates
            .iter()
            .flat_map(|c| team.reviewers_of(&c.task.task_id))
            .collect();
        names.sort();
        names.dedup();
        assigned.extend(names.into_iter().map(|n| (n.clone(), n.clone())));
    }
    let mut body = format!(
        "<h1>{name}</h1><form class=\"filters\" method=\"get\" action=\"/d/{name}\">{}{}{}{}{}{}{}<label>search <input type=\"search\" name=\"q\" id=\"search\" value=\"{}\" placeholder=\"id, instruction, emotion\"></label><button type=\"submit\">filter</button></form>",
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
            &[
                ("all".into(), "all".into()),
                ("left".into(), "left for you".into()),
                ("pending".into(), "pending".into()),
                ("accepted".into(), "accepted".into()),
                ("edited".into(), "edited".into()),
                ("rejected".into(), "rejected".into()),
                ("conflict".into(), "conflict".into()),
                ("needs_review_again".into(), "needs review again".into()),
            ]
        ),
        select("assigned", &f.assigned, &assigned),
        esc(&f.q)
    );
    let (left, total) = progress(&rows);
    body.push_str(&progress_html(
        left,
        total,
        &format!(
            "in this list for {} (tasks a decision can reach the release with)",
            esc(&team.reviewer)
        ),
    ));
    let _ = write!(
        body,
        "<p class=\"count\" id=\"count\">{} of {} tasks</p>",
        rows.len(),
        data.candidates.len()
    );
    let q = f.query();
    // Bulk: every reviewable task of this list, one decision line each.
    if total > 0 {
        let mut reasons = String::new();
        for r in REJECT_REASONS {
            let _ = write!(reasons, "<option>{}</option>", esc(r));
        }
        let _ = write!(
            body,
            "<details class=\"bulk\" id=\"bulk\" data-domain=\"{name}\" data-query=\"{}\" data-count=\"{total}\"><summary>decide all {total} reviewable tasks of this list at once</summary><p class=\"muted\">One decision line per task, as {}; each can be undone on its task page.</p><div class=\"buttons\"><button id=\"bulk-accept\" class=\"ok\">accept all {total}</button><select id=\"bulk-reason\" aria-label=\"reason for the bulk reject\"><option value=\"\">reject because…</option>{reasons}</select><button id=\"bulk-reject\" class=\"bad\">reject all {total}</button></div><p id=\"bulk-message\" class=\"message\" role=\"status\" aria-live=\"polite\"></p></details>",
            esc(&q),
            esc(&team.reviewer)
        );
    }
    body.push_str("<table class=\"grid tasks\"><thead><tr><th>task</th><th>split</th><th>verification</th><th>screening</th><th>emotion</th><th>review</th>");
    if team.has_assignment() {
        body.push_str("<th>assigned</th>");
    }
    body.push_str("<th>faults</th><th>instruction</th></tr></thead><tbody>");
    for row in &rows {
        let (c, state) = (row.c, &row.state);
        let t = &c.task;
        let instruction = t.instruction.as_deref().unwrap_or("");
        let short: String = instruction.chars().take(160).collect();
        let more = if instruction.chars().count() > 160 {
            "…"
        } else {
            ""
        };
        let content = if state.is_some() {
            format!(" data-content=\"{}\"", c.hash)
        } else {
            String::new()
        };
        let assigned = if team.has_assignment() {
            format!(
                "<td>{}</td>",
                esc(&team.reviewers_of(&t.task_id).join(", "))
            )
        } else {
            String::new()
        };
        let _ = write!(
            body,
            "<tr data-task=\"{id}\"{content}{left}><td><a class=\"task-link\" href=\"/d/{name}/t/{eid}?{q}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{assigned}<td>{}</td><td class=\"text\">{}{more}</td></tr>",
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
            left = if row.left { " data-left=\"1\"" } else { "" },
        );
    }
    body.push_str("</tbody></table>");
    layout(name, &format!(" / <a href=\"/d/{name}\">{name}</a>"), &body)
}
