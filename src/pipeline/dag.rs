//! The stage registry as a DAG (petgraph): lookup, dependency order, the plan of a target,
//! DOT. It knows stages only through the [`Stage`] trait.

use super::*;

/// The stage registry as a DAG.
pub struct Dag {
    pub(super) stages: &'static [&'static dyn Stage],
}

/// Freshness of one (stage, domain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    Fresh,
    Stale(String),
}

impl Dag {
    /// The DAG of a stage registry (the caller injects it: `crate::stage::registry::registry()`).
    pub fn new(stages: &'static [&'static dyn Stage]) -> Dag {
        Dag { stages }
    }

    pub fn stages(&self) -> &'static [&'static dyn Stage] {
        self.stages
    }

    pub fn find(&self, name: &str) -> Result<&'static dyn Stage, PipelineError> {
        self.stages
            .iter()
            .copied()
            .find(|s| s.name() == name)
            .ok_or_else(|| PipelineError::UnknownStage {
                name: name.to_string(),
                known: self
                    .stages
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub(super) fn graph(&self) -> DiGraphMap<&'static str, ()> {
        let mut g = DiGraphMap::new();
        for s in self.stages {
            g.add_node(s.name());
            for input in s.inputs() {
                g.add_edge(*input, s.name(), ());
            }
        }
        g
    }

    /// All stages in dependency order.
    pub fn topo_order(&self) -> Vec<&'static dyn Stage> {
        let g = self.graph();
        let order = petgraph::algo::toposort(&g, None).unwrap_or_default();
        order
            .into_iter()
            .filter_map(|n| self.stages.iter().copied().find(|s| s.name() == n))
            .collect()
    }

    /// `target` and everything upstream of it, in dependency order.
    pub fn plan(&self, target: &str) -> Result<Vec<&'static dyn Stage>, PipelineError> {
        self.find(target)?;
        let g = self.graph();
        let mut needed = std::collections::BTreeSet::new();
        let mut stack = vec![target];
        while let Some(n) = stack.pop() {
            if needed.insert(n) {
                stack.extend(g.neighbors_directed(n, petgraph::Direction::Incoming));
            }
        }
        Ok(self
            .topo_order()
            .into_iter()
            .filter(|s| needed.contains(s.name()))
            .collect())
    }

    /// The DAG in DOT.
    pub fn to_dot(&self) -> String {
        let mut out =
            String::from("digraph tracer {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n");
        for s in self.topo_order() {
            out.push_str(&format!("  \"{}\";\n", s.name()));
            for input in s.inputs() {
                out.push_str(&format!("  \"{}\" -> \"{}\";\n", input, s.name()));
            }
        }
        out.push_str("}\n");
        out
    }
}
