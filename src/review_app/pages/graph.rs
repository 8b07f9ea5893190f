//! The graph page: a domain's tool dependency graph (`graphs/<domain>.json`) drawn as SVG,
//! a task's path on it highlighted, the edges reviewers dropped drawn dashed, and every
//! edge with its witness, its keep / drop decision and whether this run's graph honours it.

use super::{badge, esc, layout, pretty};
use crate::http::Request;
use crate::review::edges::{EdgeDecision, EdgeReviews};
use crate::review_app::App;
use crate::review_app::data::DomainData;
use serde_json::Value;
use std::fmt::Write;

/// The dependency graph as SVG: tools on a circle (roots first), edges as arrows, the
/// task's path (if `?task=`) highlighted, dropped edges dashed; below, every edge with its
/// witness and decision.
pub fn graph_page(app: &App, data: &DomainData, req: &Request) -> Result<String, String> {
    let name = data.domain.name();
    let file = app.paths.graph_file(name);
    let g = &crate::graph::load(&file, data.domain).map_err(|e| e.to_string())?;
    let decisions = EdgeReviews::read(&app.edge_reviews_path(name))?;
    let dropped = decisions.dropped();
    // This run's graph: what the last `tracer run graphs` wrote.
    let run = data.graph.as_ref();
    let in_run = |from: &str, to: &str| run.map(|r| r.has_edge(from, to));
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
        let key = (e.from.clone(), e.to.clone());
        let on = path_edges.contains(&key);
        let cut = if dropped.contains(&key) {
            " dropped"
        } else {
            ""
        };
        let _ = write!(
            svg,
            "<line class=\"edge{}{cut}\" x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{ex:.1}\" y2=\"{ey:.1}\" marker-end=\"url(#arrow)\"><title>{} → {}</title></line>",
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
    let not_applied = dropped
        .iter()
        .filter(|(f, t)| g.has_edge(f, t))
        .filter(|(f, t)| in_run(f, t) == Some(true))
        .count();
    let mut body = format!(
        "<h1>{name}: tool dependency graph</h1><p class=\"lead\">{} tools, {} edges in <code>graphs/{name}.json</code>; {} dropped in review (dashed){}. Filled circles are roots; writes are drawn darker. {}</p>{svg}",
        g.nodes.len(),
        g.edges.len(),
        dropped.len(),
        if not_applied > 0 || (run.is_none() && !dropped.is_empty()) {
            ", not yet left out of this run's graph: <code>tracer run graphs</code> applies decisions".to_string()
        } else {
            String::new()
        },
        if path_edges.is_empty() {
            String::new()
        } else {
            "The task's path is highlighted.".into()
        }
    );
    body.push_str("<h2>Edges: witnesses and decisions</h2><p class=\"muted\">Keep or drop an edge (a drop needs a reason). Decisions go to the reviews folder; the next <code>tracer run graphs</code> leaves dropped edges out of the graph traces are sampled from, and the stages after it run again.</p>");
    let _ = write!(
        body,
        "<table class=\"grid edges\" id=\"edges\" data-domain=\"{name}\"><thead><tr><th>source</th><th>target</th><th>demonstrated</th><th>decision</th><th>in this run's graph</th><th>keep / drop</th><th>witness (the executed calls)</th></tr></thead><tbody>"
    );
    for e in &g.edges {
        let demo = data
            .edges
            .iter()
            .find(|r| r.source == e.from && r.target == e.to);
        let witness = demo.map_or(String::new(), |d| {
            let w = serde_json::from_str::<Value>(&d.witness)
                .map(|v| pretty(&v))
                .unwrap_or_else(|_| d.witness.clone());
            format!(
                "<details><summary>witness</summary><pre>{}</pre></details>",
                esc(&w)
            )
        });
        let decision = match decisions.decision(&e.from, &e.to) {
            Some(l) if l.decision == EdgeDecision::Drop => badge(
                "bad",
                &format!(
                    "dropped by {}: {}",
                    l.reviewer,
                    l.reason.as_deref().unwrap_or("")
                ),
            ),
            Some(l) => badge("ok", &format!("kept by {}", l.reviewer)),
            None => String::new(),
        };
        let _ = write!(
            body,
            "<tr class=\"edge-row\" data-from=\"{from}\" data-to=\"{to}\"><td><code>{from}</code></td><td><code>{to}</code></td><td>{}</td><td class=\"edge-decision\">{decision}</td><td class=\"edge-in-run\">{}</td><td><div class=\"buttons\"><button class=\"edge-keep ok\">keep</button><input class=\"edge-reason\" placeholder=\"reason to drop\" aria-label=\"reason to drop {from} to {to}\"><button class=\"edge-drop bad\">drop</button></div><span class=\"message edge-message\" role=\"status\" aria-live=\"polite\"></span></td><td>{witness}</td></tr>",
            match demo {
                Some(d) if d.demonstrated => badge("ok", "yes"),
                Some(_) => badge("bad", "no"),
                None => badge("muted", "not in this run"),
            },
            match in_run(&e.from, &e.to) {
                Some(true) => "yes",
                Some(false) => "no",
                None => "the graphs stage has not run",
            },
            from = esc(&e.from),
            to = esc(&e.to),
        );
    }
    body.push_str("</tbody></table>");
    Ok(layout(
        "graph",
        &format!(" / <a href=\"/d/{name}\">{name}</a> / graph"),
        &body,
    ))
}
