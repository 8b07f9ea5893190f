//! DOT rendering of a tool dependency graph, laid out like the paper's figure: read tools
//! in a column on the left, write tools on the right, root-eligible tools highlighted,
//! two-way pairs drawn once with arrowheads at both ends.

use super::ToolGraph;
use crate::domain::ToolKind;

pub fn to_dot(graph: &ToolGraph) -> String {
    let mut out = format!(
        "digraph \"{}\" {{\n  rankdir=LR;\n  newrank=true;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n  edge [color=\"#555555\"];\n",
        graph.domain
    );
    for (kind, label, color) in [
        (ToolKind::Read, "read tools", "#e8f0fe"),
        (ToolKind::Write, "write tools", "#fde8e8"),
    ] {
        out.push_str(&format!(
            "  subgraph cluster_{} {{\n    label=\"{label}\"; style=filled; color=\"{color}\";\n",
            kind.as_str()
        ));
        for node in graph.nodes.iter().filter(|n| n.kind == kind) {
            let attrs = if node.root {
                ", fillcolor=\"#ffd54f\", penwidth=2"
            } else {
                ""
            };
            out.push_str(&format!(
                "    \"{}\" [label=\"{}\"{attrs}];\n",
                node.tool, node.tool
            ));
        }
        out.push_str("  }\n");
    }
    for edge in &graph.edges {
        let back = graph.has_edge(&edge.to, &edge.from);
        if back && edge.to < edge.from {
            continue; // drawn once, from the pair's first name
        }
        let attrs = if back {
            " [dir=both, color=\"#1565c0\"]"
        } else {
            ""
        };
        out.push_str(&format!("  \"{}\" -> \"{}\"{attrs};\n", edge.from, edge.to));
    }
    out.push_str("  labelloc=t;\n  label=\"");
    out.push_str(&graph.domain);
    out.push_str(" (gold: root-eligible; blue double arrows: valid both ways)\";\n}\n");
    out
}
