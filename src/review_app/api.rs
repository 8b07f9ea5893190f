//! The review app's JSON routes, each appending to a decisions file under the app's save
//! lock after checking everything it can first (nothing is written when a check fails):
//!
//! - `POST /api/decide` {domain, task_id, content, decision, reason?, edit?, query?}: one
//!   decision on the task the page showed (`content` must still be its hash). A decision on
//!   a task in conflict resolves it. The answer carries the new state, the progress of the
//!   page's filter (`query`) and the next open task of it (for auto-advance).
//! - `POST /api/undo` {domain, query?}: reverses this reviewer's latest standing decision in
//!   the domain with an `undo` line; the answer names the task it restored.
//! - `POST /api/bulk` {domain, query, decision, reason?, tasks: [[id, content], ...]}: one
//!   line per task of the filtered list, when `tasks` is exactly that list as it is now.
//! - `POST /api/edge` {domain, from, to, decision, reason?}: keep or drop a graph edge; a drop
//!   that would leave a tool unreachable is refused.

use super::App;
use super::data::DomainData;
use super::pages::{self, Filter, Team};
use crate::http::{Request, Response};
use crate::review::edges::{EdgeDecision, EdgeLine, EdgeReviews};
use crate::review::{Decision, Edit, ReviewLine, State};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;

fn bad(status: u16, e: impl Into<String>) -> Response {
    Response::json(status, &json!({ "error": e.into() }))
}

/// The checks every posted decision passes: JSON from the app's own origin, a body that
/// parses, a domain of this run (its data read).
fn body<T: DeserializeOwned>(
    app: &App,
    req: &Request,
    domain: impl Fn(&T) -> &str,
) -> Result<(T, Arc<DomainData>), Response> {
    let is_json = req
        .header("content-type")
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"));
    if !is_json {
        return Err(bad(400, "decisions are posted as application/json"));
    }
    if let (Some(origin), Some(host)) = (req.header("origin"), req.header("host"))
        && origin != format!("http://{host}")
    {
        return Err(bad(
            403,
            format!("cross-origin request from {origin} refused"),
        ));
    }
    let parsed: T =
        serde_json::from_slice(&req.body).map_err(|e| bad(400, format!("request body: {e}")))?;
    let name = domain(&parsed);
    let Some(d) = app.domain(name) else {
        return Err(bad(404, format!("no domain '{name}' in this run")));
    };
    let data = app.data(d).map_err(|e| bad(500, e))?;
    Ok((parsed, data))
}

/// Where a list stands after a decision: its progress and the next task left in it.
fn after(app: &App, data: &DomainData, query: &str, current: &str) -> Value {
    let name = data.domain.name();
    let (Ok(reviews), Ok(team)) = (app.reviews(name), Team::new(app, data)) else {
        return json!({});
    };
    let f = Filter::from_query(query);
    let rows = pages::filtered(data, &reviews, &team, &f);
    let (left, total) = pages::progress(&rows);
    let next = pages::next_left(data, &rows, current)
        .map(|id| format!("/d/{name}/t/{}?{}", pages::enc(id), f.query()));
    let state = data
        .get(current)
        .map(|c| reviews.state_of(current, &c.hash).as_str());
    json!({ "left": left, "total": total, "next": next, "state": state })
}

fn with(mut v: Value, extra: Value) -> Value {
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    v
}

pub fn decide(app: &Arc<App>, req: &Request) -> Response {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        domain: String,
        task_id: String,
        content: String,
        decision: Decision,
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        edit: Option<Edit>,
        #[serde(default)]
        query: String,
    }
    let (body, data) = match body::<Body>(app, req, |b| &b.domain) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let Some(c) = data.get(&body.task_id) else {
        return bad(
            404,
            format!("no task '{}' in {}", body.task_id, body.domain),
        );
    };
    if c.task.split != crate::split::Split::Eval {
        return bad(
            409,
            "decisions apply to the evaluation release; this is a training task",
        );
    }
    if !pages::reviewable(c) {
        return bad(
            409,
            "this task did not pass verification or screening: it cannot be released",
        );
    }
    if body.content != c.hash {
        return bad(
            409,
            "the task changed since this page was loaded: reload it and review again",
        );
    }
    if body.decision == Decision::Undo {
        return bad(400, "an undo is posted to /api/undo");
    }
    if let (Decision::Edit, Some(edit)) = (body.decision, &body.edit) {
        let Some(env) = data.env(c.task.split) else {
            return bad(409, "the run has no database to verify the edit on");
        };
        if let Err(e) = crate::review::verify_edit(env, &c.task, edit, &app.cfg.gates) {
            return bad(400, format!("edit refused: {e}"));
        }
    }
    let _guard = app.save.lock().unwrap_or_else(|e| e.into_inner());
    let reviews = match app.reviews(&body.domain) {
        Ok(r) => r,
        Err(e) => return bad(500, e),
    };
    let line = ReviewLine {
        task_id: c.task.task_id.clone(),
        content: c.hash.clone(),
        decision: body.decision,
        reason: body
            .reason
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty()),
        edit: body.edit,
        reviewer: app.reviewer.clone(),
        resolves: matches!(
            reviews.state_of(&c.task.task_id, &c.hash),
            State::Conflict(_)
        ),
    };
    match crate::review::append(&app.reviews_path(&body.domain), &line) {
        Ok(()) => Response::json(
            200,
            &with(
                json!({ "ok": true, "resolved": line.resolves }),
                after(app, &data, &body.query, &c.task.task_id),
            ),
        ),
        Err(e) => bad(400, e),
    }
}

pub fn undo(app: &Arc<App>, req: &Request) -> Response {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        domain: String,
        #[serde(default)]
        query: String,
    }
    let (body, data) = match body::<Body>(app, req, |b| &b.domain) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let _guard = app.save.lock().unwrap_or_else(|e| e.into_inner());
    let reviews = match app.reviews(&body.domain) {
        Ok(r) => r,
        Err(e) => return bad(500, e),
    };
    let Some(target) = pages::undo_target(&data, &reviews, &app.reviewer) else {
        return bad(
            409,
            format!(
                "{} has no standing decision in {} to undo",
                app.reviewer, body.domain
            ),
        );
    };
    let line = ReviewLine {
        task_id: target.task_id.clone(),
        content: target.content.clone(),
        decision: Decision::Undo,
        reason: None,
        edit: None,
        reviewer: app.reviewer.clone(),
        resolves: false,
    };
    let undone = target.decision.as_str();
    match crate::review::append(&app.reviews_path(&body.domain), &line) {
        Ok(()) => {
            let f = Filter::from_query(&body.query);
            let url = format!(
                "/d/{}/t/{}?{}",
                body.domain,
                pages::enc(&line.task_id),
                f.query()
            );
            Response::json(
                200,
                &with(
                    json!({ "ok": true, "task_id": line.task_id, "undone": undone, "url": url }),
                    after(app, &data, &body.query, &line.task_id),
                ),
            )
        }
        Err(e) => bad(400, e),
    }
}

pub fn bulk(app: &Arc<App>, req: &Request) -> Response {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        domain: String,
        query: String,
        decision: Decision,
        #[serde(default)]
        reason: Option<String>,
        tasks: Vec<(String, String)>,
    }
    let (body, data) = match body::<Body>(app, req, |b| &b.domain) {
        Ok(x) => x,
        Err(r) => return r,
    };
    if !matches!(body.decision, Decision::Accept | Decision::Reject) {
        return bad(400, "a bulk decision is accept or reject");
    }
    let reason = body
        .reason
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty());
    if body.decision == Decision::Reject && reason.is_none() {
        return bad(400, "a bulk reject needs a reason");
    }
    let _guard = app.save.lock().unwrap_or_else(|e| e.into_inner());
    let (reviews, team) = match app
        .reviews(&body.domain)
        .and_then(|r| Team::new(app, &data).map(|t| (r, t)))
    {
        Ok(x) => x,
        Err(e) => return bad(500, e),
    };
    let f = Filter::from_query(&body.query);
    let rows = pages::filtered(&data, &reviews, &team, &f);
    let mut now: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.state.is_some())
        .map(|r| (r.c.task.task_id.clone(), r.c.hash.clone()))
        .collect();
    let mut asked = body.tasks.clone();
    now.sort();
    asked.sort();
    if now != asked {
        return bad(
            409,
            format!(
                "the list changed since this page was loaded ({} tasks then, {} now): reload it",
                asked.len(),
                now.len()
            ),
        );
    }
    let lines: Vec<ReviewLine> = body
        .tasks
        .iter()
        .map(|(id, content)| ReviewLine {
            task_id: id.clone(),
            content: content.clone(),
            decision: body.decision,
            reason: reason.clone(),
            edit: None,
            reviewer: app.reviewer.clone(),
            resolves: false,
        })
        .collect();
    match crate::review::append_all(&app.reviews_path(&body.domain), &lines) {
        Ok(()) => Response::json(200, &json!({ "ok": true, "written": lines.len() })),
        Err(e) => bad(400, e),
    }
}

pub fn edge(app: &Arc<App>, req: &Request) -> Response {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        domain: String,
        from: String,
        to: String,
        decision: EdgeDecision,
        #[serde(default)]
        reason: Option<String>,
    }
    let (body, data) = match body::<Body>(app, req, |b| &b.domain) {
        Ok(x) => x,
        Err(r) => return r,
    };
    let file = app.paths.graph_file(&body.domain);
    let graph = match crate::graph::load(&file, data.domain) {
        Ok(g) => g,
        Err(e) => return bad(500, e.to_string()),
    };
    if !graph.has_edge(&body.from, &body.to) {
        return bad(
            404,
            format!("no edge {} -> {} in {}", body.from, body.to, file.display()),
        );
    }
    let line = EdgeLine {
        from: body.from.clone(),
        to: body.to.clone(),
        decision: body.decision,
        reason: body
            .reason
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty()),
        reviewer: app.reviewer.clone(),
    };
    if let Err(e) = line.check() {
        return bad(400, e);
    }
    let _guard = app.save.lock().unwrap_or_else(|e| e.into_inner());
    let path = app.edge_reviews_path(&body.domain);
    let decisions = match EdgeReviews::read(&path) {
        Ok(d) => d,
        Err(e) => return bad(500, e),
    };
    let mut dropped = decisions.dropped();
    let key = (body.from.clone(), body.to.clone());
    match body.decision {
        EdgeDecision::Drop => dropped.insert(key),
        EdgeDecision::Keep => dropped.remove(&key),
    };
    if let Err((field, message)) = crate::graph::without_edges(&graph, &dropped, data.domain) {
        return bad(
            400,
            format!("drop refused: without this edge the graph is invalid: {field}: {message}"),
        );
    }
    match crate::review::edges::append_edge(&path, &line) {
        Ok(()) => Response::json(
            200,
            &json!({ "ok": true, "state": if body.decision == EdgeDecision::Drop { "dropped" } else { "kept" }, "dropped": dropped.len() }),
        ),
        Err(e) => bad(400, e),
    }
}
