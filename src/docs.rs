//! `tracer docs`: the generated parts of the reference pages (`docs/domains/`), written from
//! the code's own declarations so that they cannot drift from it.
//!
//! A page is hand-written prose with named *generated blocks*:
//!
//! ```text
//! <!-- tracer docs: tools -->
//! ...whatever `tracer docs` writes...
//! <!-- /tracer docs: tools -->
//! ```
//!
//! `tracer docs` rewrites the inside of every block and leaves the prose alone;
//! `tracer docs --check` computes the same pages in memory and names each block that
//! differs (a test runs it, so a tool, graph, generator or fixture change that leaves a
//! page stale fails `cargo test`). What the blocks say comes only from declarations:
//! the registry's tool specs and reference, `graphs/<d>.json`, the generated databases'
//! row counts at the configured seed, and the differential fixtures' `departures.json`.
//! Measured figures (funnels, rewards) belong to generated reports (`tracer quality`,
//! `tracer stats`), not to these pages.
//!
//! Architecture invariant: reads the registry, graph files and fixtures; writes only the
//! pages it is given; knows nothing about stages or artifacts.

use crate::domain::{self, Domain, Split, ToolKind};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("{path}: {message}")]
    Page { path: String, message: String },
    #[error(transparent)]
    Graph(#[from] crate::graph::GraphError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

fn page_error(path: &Path, message: impl Into<String>) -> DocsError {
    DocsError::Page {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// The directory of the per-domain pages under a project root.
pub fn domains_dir(root: &Path) -> PathBuf {
    root.join("docs/domains")
}

fn open_marker(name: &str) -> String {
    format!("<!-- tracer docs: {name} -->")
}

fn close_marker(name: &str) -> String {
    format!("<!-- /tracer docs: {name} -->")
}

/// `page` with the inside of each named block replaced by its body. Every block must be
/// present exactly once, and the page may hold no block this generator does not write
/// (a misspelt name would otherwise never be refreshed).
pub fn fill(path: &Path, page: &str, blocks: &[(String, String)]) -> Result<String, DocsError> {
    let mut out = page.to_string();
    for (name, body) in blocks {
        let open = open_marker(name);
        let close = close_marker(name);
        let starts: Vec<usize> = out.match_indices(&open).map(|(i, _)| i).collect();
        let [start] = starts[..] else {
            return Err(page_error(
                path,
                format!(
                    "the generated block '{name}' must appear once (found {}); add `{open}` and `{close}` on lines of their own",
                    starts.len()
                ),
            ));
        };
        let inner = start + open.len();
        let Some(end) = out[inner..].find(&close).map(|i| inner + i) else {
            return Err(page_error(
                path,
                format!("the generated block '{name}' has no closing `{close}`"),
            ));
        };
        let mut text = String::from("\n");
        text.push_str(body.trim_end());
        text.push('\n');
        out.replace_range(inner..end, &text);
    }
    let known: Vec<&str> = blocks.iter().map(|(n, _)| n.as_str()).collect();
    for (i, _) in out.match_indices("<!-- tracer docs: ") {
        let rest = &out[i + "<!-- tracer docs: ".len()..];
        let name = rest.split(" -->").next().unwrap_or_default();
        if !known.contains(&name) {
            return Err(page_error(
                path,
                format!(
                    "unknown generated block '{name}' (this page's blocks: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    Ok(out)
}

/// A cell of a Markdown table: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// 1234567 -> "1,234,567".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Rows per table of a generated database, and its customers.
fn scale(env: &dyn domain::Environment) -> String {
    let mut parts = vec![format!("{} customers", thousands(env.customers().len()))];
    for (table, rows) in env.tables() {
        parts.push(format!(
            "{} {}",
            thousands(rows.len()),
            table.replace('_', " ")
        ));
    }
    parts.join(", ")
}

/// What every page and the index say about one domain.
struct Facts {
    domain: &'static dyn Domain,
    reads: usize,
    writes: usize,
    graph: crate::graph::ToolGraph,
    train: String,
    eval: Option<String>,
}

fn facts(root: &Path, seed: u64, domain: &'static dyn Domain) -> Result<Facts, DocsError> {
    let specs = domain.tool_specs();
    let reads = specs.iter().filter(|s| s.kind == ToolKind::Read).count();
    let graph = crate::graph::load(&root.join(format!("graphs/{}.json", domain.name())), domain)?;
    let (train, eval) = if domain.separate_train_db() {
        (
            scale(domain.generate(seed, Split::Train).as_ref()),
            Some(scale(domain.generate(seed, Split::Eval).as_ref())),
        )
    } else {
        (scale(domain.generate(seed, Split::Eval).as_ref()), None)
    };
    Ok(Facts {
        domain,
        reads,
        writes: specs.len() - reads,
        graph,
        train,
        eval,
    })
}

fn summary(f: &Facts, seed: u64) -> String {
    let d = f.domain;
    let mut s = String::new();
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| reference | {} |", cell(d.reference()));
    let _ = writeln!(
        s,
        "| tools | {} ({} read, {} write) |",
        f.reads + f.writes,
        f.reads,
        f.writes
    );
    let roots: Vec<String> = f.graph.roots().map(|n| format!("`{}`", n.tool)).collect();
    let _ = writeln!(
        s,
        "| dependency graph | {} tools, {} edges; roots {} |",
        f.graph.nodes.len(),
        f.graph.edges.len(),
        roots.join(", ")
    );
    match &f.eval {
        Some(eval) => {
            let _ = writeln!(s, "| training database | {} |", f.train);
            let _ = writeln!(s, "| evaluation database | {eval} |");
        }
        None => {
            let _ = writeln!(s, "| database (every split) | {} |", f.train);
        }
    }
    if !d.rulesets().is_empty() {
        let names: Vec<String> = d
            .rulesets()
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let default = if i == 0 { " (default)" } else { "" };
                format!("`{}`{default}", r.name)
            })
            .collect();
        let _ = writeln!(s, "| rulesets | {} |", names.join(", "));
    }
    let _ = writeln!(
        s,
        "\nDatabases generated at the run seed {seed} (`stages/pipeline.toml`)."
    );
    s
}

fn tools(f: &Facts) -> String {
    let mut s = String::from("| tool | kind | in the graph | what it does |\n|---|---|---|---|\n");
    for spec in f.domain.tool_specs() {
        let kind = match (spec.kind, spec.terminates) {
            (k, true) => format!("{}, ends the episode", k.as_str()),
            (k, false) => k.as_str().to_string(),
        };
        let in_graph = if f.graph.node(spec.name).is_some() {
            "yes"
        } else {
            "no"
        };
        let _ = writeln!(
            s,
            "| `{}` | {kind} | {in_graph} | {} |",
            spec.name,
            cell(spec.description)
        );
    }
    s
}

/// The graph as a Mermaid flowchart (GitHub draws it): writes filled, roots outlined thick.
fn graph(f: &Facts) -> String {
    let mut s = String::from("```mermaid\nflowchart LR\n");
    s.push_str("  classDef write fill:#fde2c8,stroke:#b4641e\n  classDef root stroke-width:3px\n");
    for n in &f.graph.nodes {
        let _ = writeln!(s, "  {}[{}]", n.tool, n.tool);
    }
    let writes: Vec<&str> = f
        .graph
        .nodes
        .iter()
        .filter(|n| n.kind == ToolKind::Write)
        .map(|n| n.tool.as_str())
        .collect();
    let roots: Vec<&str> = f.graph.roots().map(|n| n.tool.as_str()).collect();
    for (class, nodes) in [("write", writes), ("root", roots)] {
        if !nodes.is_empty() {
            let _ = writeln!(s, "  class {} {class}", nodes.join(","));
        }
    }
    for e in &f.graph.edges {
        let _ = writeln!(s, "  {} --> {}", e.from, e.to);
    }
    s.push_str(
        "```\n\nFilled: writes; thick outline: roots (where a sampled trace may start). An edge \
         a --> b: a call of b proposed from what a returned succeeds after a, for some \
         customer of the generated database (`tracer graphs verify` executes every edge).",
    );
    s
}

#[derive(serde::Deserialize)]
struct Departure {
    tool: String,
    #[serde(default)]
    affects_state: bool,
    why: String,
}

/// The differential fixtures of a domain: `tests/fixtures/reference/<d>` and
/// `<d>-<ruleset>`, in name order.
fn fixtures(root: &Path, domain: &str) -> Vec<(String, PathBuf)> {
    let dir = root.join("tests/fixtures/reference");
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let ours = name == domain
                || name
                    .strip_prefix(domain)
                    .is_some_and(|rest| rest.starts_with('-'));
            ours.then(|| (name, e.path()))
        })
        .collect();
    found.sort();
    found
}

fn departures(root: &Path, f: &Facts) -> Result<String, DocsError> {
    let mut s = String::new();
    let found = fixtures(root, f.domain.name());
    if found.is_empty() {
        s.push_str("No differential fixture (`tests/fixtures/reference/`) for this domain.\n");
    }
    for (name, dir) in found {
        let path = dir.join("departures.json");
        let list: Vec<Departure> = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| page_error(&path, format!("not a departure list: {e}")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(page_error(&path, e.to_string())),
        };
        if list.is_empty() {
            let _ = writeln!(
                s,
                "Fixture `tests/fixtures/reference/{name}/`: no pinned departure; every \
                 sampled call answers as the reference does.\n"
            );
            continue;
        }
        let _ = writeln!(
            s,
            "Fixture `tests/fixtures/reference/{name}/` ({} pinned departures):\n",
            list.len()
        );
        s.push_str("| tool | changes state | why |\n|---|---|---|\n");
        for d in &list {
            let state = if d.affects_state { "yes" } else { "no" };
            let _ = writeln!(s, "| `{}` | {state} | {} |", d.tool, cell(&d.why));
        }
        s.push('\n');
    }
    Ok(s)
}

fn index(all: &[Facts]) -> String {
    let mut s = String::from(
        "| domain | reference | tools | read / write | graph (tools / edges) |\n|---|---|---|---|---|\n",
    );
    for f in all {
        let name = f.domain.name();
        let _ = writeln!(
            s,
            "| [{name}]({name}.md) | {} | {} | {} / {} | {} / {} |",
            cell(f.domain.reference()),
            f.reads + f.writes,
            f.reads,
            f.writes,
            f.graph.nodes.len(),
            f.graph.edges.len()
        );
    }
    let tools: usize = all.iter().map(|f| f.reads + f.writes).sum();
    let _ = writeln!(s, "\n{} domains, {tools} tools.", all.len());
    s
}

/// Every page `tracer docs` writes, with its new text.
pub fn pages(root: &Path, seed: u64) -> Result<Vec<(PathBuf, String)>, DocsError> {
    let dir = domains_dir(root);
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|e| {
            page_error(
                path,
                format!("{e} (every registered domain needs a page with the generated blocks)"),
            )
        })
    };
    let mut all = Vec::new();
    let mut out = Vec::new();
    for d in domain::registry() {
        let f = facts(root, seed, *d)?;
        let path = dir.join(format!("{}.md", d.name()));
        let blocks = vec![
            ("summary".to_string(), summary(&f, seed)),
            ("tools".to_string(), tools(&f)),
            ("graph".to_string(), graph(&f)),
            ("departures".to_string(), departures(root, &f)?),
        ];
        out.push((path.clone(), fill(&path, &read(&path)?, &blocks)?));
        all.push(f);
    }
    let path = dir.join("README.md");
    let blocks = vec![("domains".to_string(), index(&all))];
    out.push((path.clone(), fill(&path, &read(&path)?, &blocks)?));
    Ok(out)
}

/// The generated blocks that differ between each page on disk and `pages`.
pub fn stale(pages: &[(PathBuf, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, new) in pages {
        let old = std::fs::read_to_string(path).unwrap_or_default();
        if &old == new {
            continue;
        }
        let blocks = |text: &str| -> BTreeMap<String, String> {
            let mut map = BTreeMap::new();
            for (i, _) in text.match_indices("<!-- tracer docs: ") {
                let rest = &text[i + "<!-- tracer docs: ".len()..];
                let name = rest.split(" -->").next().unwrap_or_default().to_string();
                let body = rest
                    .split(&close_marker(&name))
                    .next()
                    .unwrap_or_default()
                    .to_string();
                map.insert(name, body);
            }
            map
        };
        let (a, b) = (blocks(&old), blocks(new));
        let names: Vec<&String> = b.keys().filter(|k| a.get(*k) != b.get(*k)).collect();
        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        found.push(format!(
            "{}: stale generated block(s) {}",
            path.display(),
            names.join(", ")
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("docs/domains/x.md")
    }

    #[test]
    fn fill_replaces_block_bodies_and_keeps_the_prose() {
        let page =
            "# X\n\nprose\n<!-- tracer docs: a -->\nold\n<!-- /tracer docs: a -->\nmore prose\n";
        let out = fill(p(), page, &[("a".into(), "new | text\n\n".into())]).unwrap();
        assert_eq!(
            out,
            "# X\n\nprose\n<!-- tracer docs: a -->\nnew | text\n<!-- /tracer docs: a -->\nmore prose\n"
        );
        // Filling again changes nothing.
        assert_eq!(
            fill(p(), &out, &[("a".into(), "new | text".into())]).unwrap(),
            out
        );
    }

    #[test]
    fn a_missing_duplicated_unclosed_or_unknown_block_names_the_page() {
        let blocks = [("a".to_string(), "x".to_string())];
        let err = fill(p(), "# X\n", &blocks).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "docs/domains/x.md: the generated block 'a' must appear once (found 0)"
            ),
            "{err}"
        );
        let twice = "<!-- tracer docs: a --><!-- /tracer docs: a --><!-- tracer docs: a -->";
        assert!(
            fill(p(), twice, &blocks)
                .unwrap_err()
                .to_string()
                .contains("found 2")
        );
        let unclosed = "<!-- tracer docs: a -->\n";
        assert!(
            fill(p(), unclosed, &blocks)
                .unwrap_err()
                .to_string()
                .contains("no closing")
        );
        let unknown = "<!-- tracer docs: a --><!-- /tracer docs: a -->\n<!-- tracer docs: tolls --><!-- /tracer docs: tolls -->";
        assert!(
            fill(p(), unknown, &blocks)
                .unwrap_err()
                .to_string()
                .contains("unknown generated block 'tolls'")
        );
    }

    #[test]
    fn cells_are_one_line_with_pipes_escaped_and_numbers_grouped() {
        assert_eq!(cell("a |\n b"), "a \\| b");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn stale_names_the_page_and_the_changed_block() {
        let dir = std::env::temp_dir().join(format!("tracer-docs-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.md");
        let page = "<!-- tracer docs: a -->\n1\n<!-- /tracer docs: a -->\n<!-- tracer docs: b -->\n2\n<!-- /tracer docs: b -->\n";
        std::fs::write(&path, page).unwrap();
        assert!(stale(&[(path.clone(), page.to_string())]).is_empty());
        let new = page.replace("\n2\n", "\n3\n");
        let found = stale(&[(path.clone(), new)]);
        assert_eq!(
            found,
            vec![format!("{}: stale generated block(s) b", path.display())]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
