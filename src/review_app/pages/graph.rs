//! The graph page: a domain's tool dependency graph drawn as SVG, a task's path on it
//! highlighted, and every edge with its witness.

use super::{badge, esc, layout, pretty};
use crate::http::Request;
use crate::review_app::data::DomainData;
use serde_json::Value;
use std::fmt::Write;

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
