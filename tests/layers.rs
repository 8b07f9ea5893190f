//! The "Layers" invariant of docs/architecture.md as a test: every `crate::<module>`
//! reference in a top-level module's source must be an allowed edge, and stage modules must
//! not reach into each other. The rules are the table below; a new edge is a design
//! decision, so it is made here, visibly, not by accident in an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module -> the modules it may use. `cli` (the binary's edge) may use all.
const ALLOWED: &[(&str, &[&str])] = &[
    ("split", &[]),
    ("cost", &[]),
    ("http", &[]),
    ("artifact", &[]),
    ("seed", &[]),
    ("parallel", &[]),
    ("config", &["artifact", "domain"]),
    ("llm", &["seed", "config"]),
    ("domain", &["seed", "parallel"]),
    ("graph", &["domain", "seed", "parallel"]),
    ("docs", &["config", "domain", "graph"]),
    (
        "emotion",
        &["artifact", "config", "llm", "seed", "parallel"],
    ),
    (
        "harness",
        &[
            "artifact", "config", "domain", "llm", "seed", "parallel", "task",
        ],
    ),
    ("task", &["artifact", "domain"]),
    (
        "analysis",
        &[
            "artifact", "config", "domain", "harness", "llm", "parallel", "seed", "task", "verify",
            "quality",
        ],
    ),
    ("replay", &["artifact", "domain", "task"]),
    (
        "review",
        &["artifact", "config", "domain", "task", "verify"],
    ),
    ("verify", &["artifact", "domain", "task", "quality"]),
    ("quality", &["artifact", "domain", "task"]),
    (
        "grounding",
        &["artifact", "domain", "llm", "seed", "parallel", "quality"],
    ),
    (
        "roles",
        &[
            "artifact",
            "domain",
            "grounding",
            "llm",
            "parallel",
            "seed",
            "task",
            "verify",
        ],
    ),
    ("pipeline", &["artifact", "config", "domain"]),
    ("project", &["config", "domain", "llm", "pipeline"]),
    (
        "rollout",
        &[
            "analysis", "artifact", "config", "domain", "harness", "llm", "pipeline", "project",
            "replay", "split", "task",
        ],
    ),
    (
        "stage",
        &[
            "artifact",
            "config",
            "domain",
            "emotion",
            "graph",
            "harness",
            "llm",
            "parallel",
            "pipeline",
            "project",
            "replay",
            "rollout",
            "seed",
            "grounding",
            "roles",
            "task",
            "verify",
            "analysis",
            "quality",
            "review",
        ],
    ),
    (
        "stats",
        &[
            "artifact", "config", "pipeline", "harness", "analysis", "review",
        ],
    ),
    ("card", &["artifact", "config", "pipeline", "stats", "llm"]),
    ("compare", &["artifact", "harness"]),
    (
        "review_app",
        &[
            "artifact", "config", "domain", "graph", "pipeline", "project", "review", "split",
            "task",
        ],
    ),
    (
        "serve",
        &[
            "artifact", "config", "domain", "harness", "llm", "pipeline", "project", "rollout",
            "seed", "split", "task",
        ],
    ),
    (
        "bench",
        &[
            "config", "domain", "graph", "harness", "llm", "seed", "parallel",
        ],
    ),
];

/// Edges that exist today but break the rules; each is scheduled to go. The test fails
/// when one of them disappears without being removed here (so the list only shrinks).
const KNOWN_VIOLATIONS: &[(&str, &str)] = &[];

/// Leaf modules with no dependencies of their own that every layer may use: vocabulary
/// types shared by all (the train/eval `Split`; token usage and prices, `cost`, which the
/// LLM layer counts, the pipeline records with a run and the reports price; the small
/// HTTP/1.1 server the review app and `tracer serve` answer on).
const LEAVES: &[&str] = &["split", "cost", "http"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `crate::name` in a source text, and the `use crate::{a, b}` group form.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// Source text without `//` comments (doc comments may name any module) and without the
/// file's unit-test module (tests may build fixtures with higher layers).
fn code_only(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    text.lines()
        .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

fn module_sources(src: &Path, module: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let dir = src.join(module);
    if dir.is_dir() {
        rust_files(&dir, &mut files);
    }
    let file = src.join(format!("{module}.rs"));
    if file.is_file() {
        files.push(file);
    }
    files
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut found = BTreeSet::new();
    let mut top: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_string();
            (p.is_dir() || p.extension().is_some_and(|x| x == "rs")).then_some(stem)
        })
        .filter(|m| m != "main" && m != "lib")
        .collect();
    top.sort();
    top.dedup();
    for module in &top {
        if module == "cli" {
            continue;
        }
        let rules = allowed.get(module.as_str()).unwrap_or_else(|| {
            panic!("src/{module}: a new top-level module needs a row in ALLOWED")
        });
        for file in module_sources(&src, module) {
            let text = code_only(&std::fs::read_to_string(&file).unwrap());
            for dep in crate_refs(&text) {
                if dep == *module
                    || !top.contains(&dep)
                    || rules.contains(&dep.as_str())
                    || LEAVES.contains(&dep.as_str())
                {
                    continue;
                }
                found.insert((module.clone(), dep.clone(), file.display().to_string()));
            }
        }
    }
    let unexpected: Vec<_> = found
        .iter()
        .filter(|(m, d, _)| !KNOWN_VIOLATIONS.contains(&(m.as_str(), d.as_str())))
        .collect();
    assert!(
        unexpected.is_empty(),
        "forbidden module edges: {unexpected:#?}"
    );
    for (m, d) in KNOWN_VIOLATIONS {
        assert!(
            found.iter().any(|(fm, fd, _)| fm == m && fd == d),
            "{m} -> {d} no longer exists: remove it from KNOWN_VIOLATIONS"
        );
    }
}

/// Stage modules know each other only through the shared helpers of `stage/mod.rs` and
/// `stage/roles.rs`: a stage that needs another's algorithm (or data another stage wrote,
/// like the `db` stage's databases: [`project`]) calls a library module.
const STAGE_HELPERS: &[&str] = &["roles"];

/// Stage-to-stage uses that exist today; each goes when its algorithm moves to a library
/// module (the list only shrinks: a stale entry fails the test).
const KNOWN_STAGE_USES: &[(&str, &str)] = &[];

#[test]
fn stages_do_not_import_each_other() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/stage");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let stages: BTreeSet<String> = files
        .iter()
        .filter_map(|p| p.file_stem()?.to_str().map(str::to_string))
        .filter(|s| s != "mod")
        .collect();
    let mut bad = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let own = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let text = code_only(&std::fs::read_to_string(file).unwrap());
        for other in &stages {
            if other == own || STAGE_HELPERS.contains(&other.as_str()) {
                continue;
            }
            if text.contains(&format!("super::{other}::"))
                || text.contains(&format!("crate::stage::{other}"))
            {
                seen.insert((own.to_string(), other.clone()));
                if !KNOWN_STAGE_USES.contains(&(own, other.as_str())) {
                    bad.push(format!("{} uses stage::{other}", file.display()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "stages reaching into other stages: {bad:#?}"
    );
    for (a, b) in KNOWN_STAGE_USES {
        assert!(
            seen.contains(&(a.to_string(), b.to_string())),
            "{a} -> {b} is gone: remove it from KNOWN_STAGE_USES"
        );
    }
}

/// The command line is a thin face: outside `src/stage` (the CLI included) the stages are
/// reached only through their registry (`stage::dag()`, `stage::registry()`), never a
/// stage's own module; what a command shares with a stage lives in a library module.
#[test]
fn only_the_registry_reaches_into_the_stages() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(src.join("stage"))) {
        let text = code_only(&std::fs::read_to_string(file).unwrap());
        for (i, _) in text.match_indices("crate::stage::") {
            let rest = &text[i + "crate::stage::".len()..];
            if !(rest.starts_with("dag()") || rest.starts_with("registry()")) {
                let line = text[..i].lines().count();
                bad.push(format!("{}:{line}", file.display()));
            }
        }
        if text.contains("use crate::stage") {
            bad.push(format!("{}: imports from crate::stage", file.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "uses of a stage's own module outside src/stage: {bad:#?}"
    );
}

#[test]
fn the_parser_finds_grouped_and_path_references() {
    let refs = crate_refs("use crate::{domain::X, llm};\nlet a = crate::seed::derive(1);");
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        ["domain", "llm", "seed"]
    );
}
