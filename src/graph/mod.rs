//! Tool dependency graphs: the reviewed `graphs/<domain>.json` files, their structural
//! checks, statistics, and (in submodules) executable edge demonstration, candidate-edge
//! building and DOT rendering.
//!
//! File format:
//! ```json
//! {"domain": "airline",
//!  "nodes": [{"tool": "get_user_details", "kind": "read", "root": true}, ...],
//!  "edges": [{"from": "get_user_details", "to": "cancel_reservation"}, ...]}
//! ```
//! Architecture invariant: graphs know domains only through `ToolSpec`s and the
//! `Environment` trait; they know nothing of stages or artifacts.

pub mod build;
pub mod demonstrate;
pub mod dot;
pub mod sample;

use crate::domain::{Domain, ToolKind};
use petgraph::graphmap::DiGraphMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("{path}: {field}: {message}")]
    Invalid {
        path: String,
        field: String,
        message: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub tool: String,
    pub kind: ToolKind,
    #[serde(default)]
    pub root: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolGraph {
    pub domain: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

impl ToolGraph {
    pub fn node(&self, tool: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.tool == tool)
    }

    pub fn roots(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.root)
    }

    /// Successors of `tool`, in file order (the sampler's order, so it is part of the
    /// deterministic contract).
    pub fn successors<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.edges
            .iter()
            .filter(move |e| e.from == tool)
            .map(|e| e.to.as_str())
    }

    pub fn has_edge(&self, from: &str, to: &str) -> bool {
        self.edges.iter().any(|e| e.from == from && e.to == to)
    }

    pub fn to_pretty_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// Read and structurally check a graph file against its domain.
pub fn load(path: &Path, domain: &dyn Domain) -> Result<ToolGraph, GraphError> {
    let text = std::fs::read_to_string(path).map_err(|e| GraphError::Invalid {
        path: path.display().to_string(),
        field: "file".into(),
        message: e.to_string(),
    })?;
    let graph: ToolGraph = serde_json::from_str(&text).map_err(|e| GraphError::Invalid {
        path: path.display().to_string(),
        field: "json".into(),
        message: e.to_string(),
    })?;
    check_structure(&graph, domain).map_err(|(field, message)| GraphError::Invalid {
        path: path.display().to_string(),
        field,
        message,
    })?;
    Ok(graph)
}

/// Structural rules: real tools with the right kind, no duplicates, no dangling edge or
/// self-loop, at least one root, every node reachable from a root. Returns (field, message).
pub fn check_structure(graph: &ToolGraph, domain: &dyn Domain) -> Result<(), (String, String)> {
    if graph.domain != domain.name() {
        return Err((
            "domain".into(),
            format!("is '{}', expected '{}'", graph.domain, domain.name()),
        ));
    }
    let specs = domain.tool_specs();
    let mut seen = BTreeSet::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        let field = format!("nodes[{i}].tool");
        let Some(spec) = specs.iter().find(|s| s.name == node.tool) else {
            return Err((
                field,
                format!("unknown tool '{}' in domain '{}'", node.tool, domain.name()),
            ));
        };
        if spec.kind != node.kind {
            return Err((
                format!("nodes[{i}].kind"),
                format!(
                    "'{}' is a {} tool, not {}",
                    node.tool,
                    spec.kind.as_str(),
                    node.kind.as_str()
                ),
            ));
        }
        if !seen.insert(node.tool.as_str()) {
            return Err((field, format!("duplicate node '{}'", node.tool)));
        }
    }
    let mut edges = BTreeSet::new();
    for (i, edge) in graph.edges.iter().enumerate() {
        for (end, name) in [("from", &edge.from), ("to", &edge.to)] {
            if !seen.contains(name.as_str()) {
                return Err((
                    format!("edges[{i}].{end}"),
                    format!("dangling edge: '{name}' is not a node"),
                ));
            }
        }
        if edge.from == edge.to {
            return Err((
                format!("edges[{i}]"),
                format!("self-loop on '{}'", edge.from),
            ));
        }
        if !edges.insert((edge.from.as_str(), edge.to.as_str())) {
            return Err((
                format!("edges[{i}]"),
                format!("duplicate edge {} -> {}", edge.from, edge.to),
            ));
        }
    }
    if graph.roots().next().is_none() {
        return Err(("nodes".into(), "no root-eligible node".into()));
    }
    let g = petgraph_of(graph);
    let mut reached: BTreeSet<&str> = BTreeSet::new();
    for root in graph.roots() {
        let mut dfs = petgraph::visit::Dfs::new(&g, root.tool.as_str());
        while let Some(n) = dfs.next(&g) {
            reached.insert(n);
        }
    }
    if let Some(lost) = graph
        .nodes
        .iter()
        .find(|n| !reached.contains(n.tool.as_str()))
    {
        return Err((
            "nodes".into(),
            format!("'{}' is not reachable from any root", lost.tool),
        ));
    }
    Ok(())
}

/// An edge as a (from, to) pair of tool names.
pub type EdgePair = (String, String);

/// `graph` without the `dropped` edges (reviewers' decisions), checked again: a drop that
/// leaves a tool unreachable from every root is an error (field, message). Also returns the
/// dropped edges the graph does not have (decisions on edges since removed by hand).
pub fn without_edges(
    graph: &ToolGraph,
    dropped: &BTreeSet<EdgePair>,
    domain: &dyn Domain,
) -> Result<(ToolGraph, Vec<EdgePair>), (String, String)> {
    let mut out = graph.clone();
    out.edges
        .retain(|e| !dropped.contains(&(e.from.clone(), e.to.clone())));
    let absent = dropped
        .iter()
        .filter(|(from, to)| !graph.has_edge(from, to))
        .cloned()
        .collect();
    check_structure(&out, domain)?;
    Ok((out, absent))
}

pub fn petgraph_of(graph: &ToolGraph) -> DiGraphMap<&str, ()> {
    let mut g = DiGraphMap::new();
    for n in &graph.nodes {
        g.add_node(n.tool.as_str());
    }
    for e in &graph.edges {
        g.add_edge(e.from.as_str(), e.to.as_str(), ());
    }
    g
}

/// The paper's per-domain graph statistics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphStats {
    pub domain: String,
    pub tools: usize,
    pub edges: usize,
    /// |E| / (n (n - 1)).
    pub density: f64,
    /// Share of connected (unordered) tool pairs that are valid in both directions.
    pub two_way_share: f64,
    pub roots: usize,
    pub roots_read: usize,
    pub roots_write: usize,
}

pub fn stats(graph: &ToolGraph) -> GraphStats {
    let n = graph.nodes.len();
    let e = graph.edges.len();
    let mut pairs = BTreeSet::new();
    let mut two_way = 0usize;
    for edge in &graph.edges {
        let key = if edge.from < edge.to {
            (edge.from.as_str(), edge.to.as_str())
        } else {
            (edge.to.as_str(), edge.from.as_str())
        };
        if pairs.insert(key) && graph.has_edge(&edge.to, &edge.from) {
            two_way += 1;
        }
    }
    let roots_write = graph.roots().filter(|r| r.kind == ToolKind::Write).count();
    let roots = graph.roots().count();
    GraphStats {
        domain: graph.domain.clone(),
        tools: n,
        edges: e,
        density: if n > 1 {
            e as f64 / (n * (n - 1)) as f64
        } else {
            0.0
        },
        two_way_share: if pairs.is_empty() {
            0.0
        } else {
            two_way as f64 / pairs.len() as f64
        },
        roots,
        roots_read: roots - roots_write,
        roots_write,
    }
}

/// Markdown table of graph statistics.
pub fn stats_table(rows: &[GraphStats]) -> String {
    let mut out = String::from(
        "| domain | tools | edges | density | two-way pairs | roots (read/write) |\n|---|---|---|---|---|---|\n",
    );
    for s in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.0}% | {} ({}/{}) |\n",
            s.domain,
            s.tools,
            s.edges,
            s.density,
            s.two_way_share * 100.0,
            s.roots,
            s.roots_read,
            s.roots_write
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_edges_keeps_the_graph_valid_or_says_which_tool_is_lost() {
        let domain = crate::domain::find("airline").unwrap();
        let graph = load(Path::new("graphs/airline.json"), domain).unwrap();
        let roots: BTreeSet<&str> = graph.roots().map(|n| n.tool.as_str()).collect();
        let key = |e: &Edge| (e.from.clone(), e.to.clone());
        // An edge into a root always goes; a decision on an edge the file lacks is reported.
        let to_root = graph
            .edges
            .iter()
            .find(|e| roots.contains(e.to.as_str()))
            .unwrap();
        let dropped: BTreeSet<_> = [key(to_root), ("nope".into(), "none".into())].into();
        let (out, absent) = without_edges(&graph, &dropped, domain).unwrap();
        assert_eq!(out.edges.len(), graph.edges.len() - 1);
        assert!(!out.has_edge(&to_root.from, &to_root.to));
        assert_eq!(absent, [("nope".to_string(), "none".to_string())]);
        // Every edge into a non-root tool: it is lost.
        let lost = graph.nodes.iter().find(|n| !n.root).unwrap();
        let into: BTreeSet<_> = graph
            .edges
            .iter()
            .filter(|e| e.to == lost.tool)
            .map(key)
            .collect();
        let (field, message) = without_edges(&graph, &into, domain).unwrap_err();
        assert_eq!(field, "nodes");
        assert!(message.contains("not reachable"), "{message}");
    }
}
