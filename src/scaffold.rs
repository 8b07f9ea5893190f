//! `tracer scaffold domain <name>`: a new domain in every place a domain lives, from the
//! skeleton in `src/domain/kit/skeleton/` (a small lending library that compiles, passes
//! the conformance suite and grounds into verified tasks), with its names replaced:
//!
//! - `src/domain/<name>/`: the layout's files (`mod.rs`, `db.rs`, `tools.rs`, `tools.toml`,
//!   `generate.rs`, `vocabulary.toml`, `ground.rs`, `policy.rs`, `hooks.rs`,
//!   `requests.toml`, `tests.rs`);
//! - `src/domain/mod.rs`: its `pub mod` line and its registry line;
//! - `policies/<name>.md`, `graphs/<name>.json` (what `tracer graphs build --all-tools`
//!   proposes for the skeleton, every edge demonstrated) and `docs/domains/<name>.md` (its
//!   generated blocks empty until `tracer docs` fills them).
//!
//! Everything is checked before anything is written (a valid, unused name; no target path
//! taken; the registry list found), and a failure while writing removes what this run
//! wrote, so a refused or failed scaffold leaves the project as it was. Optional places are
//! left to the user and listed in the next steps: a trace target (`stages/traces.toml`,
//! else `default_target`), release caps (`configs/release/grounded.toml`), and for a domain
//! with a public reference, differential fixtures (`tests/fixtures/reference/<name>/`,
//! `scripts/reference/<name>_edges.py`).
//!
//! Architecture invariant: text in, files out under the project root; knows the registry
//! only to refuse a name in use.

use std::path::{Path, PathBuf};

/// The skeleton's files: (name in the domain folder, text).
const FILES: [(&str, &str); 11] = [
    ("mod.rs", include_str!("domain/kit/skeleton/mod.rs")),
    ("db.rs", include_str!("domain/kit/skeleton/db.rs")),
    ("tools.rs", include_str!("domain/kit/skeleton/tools.rs")),
    ("tools.toml", include_str!("domain/kit/skeleton/tools.toml")),
    (
        "generate.rs",
        include_str!("domain/kit/skeleton/generate.rs"),
    ),
    (
        "vocabulary.toml",
        include_str!("domain/kit/skeleton/vocabulary.toml"),
    ),
    ("ground.rs", include_str!("domain/kit/skeleton/ground.rs")),
    ("policy.rs", include_str!("domain/kit/skeleton/policy.rs")),
    ("hooks.rs", include_str!("domain/kit/skeleton/hooks.rs")),
    (
        "requests.toml",
        include_str!("domain/kit/skeleton/requests.toml"),
    ),
    ("tests.rs", include_str!("domain/kit/skeleton/tests.rs")),
];

const POLICY: &str = include_str!("domain/kit/skeleton/policy.md");
const GRAPH: &str = include_str!("domain/kit/skeleton/graph.json");

/// The skeleton's words about itself, which a scaffolded domain says differently.
const SKELETON_NOTE: &str =
    "//! `tracer scaffold domain <name>` copies this folder to `src/domain/<name>/` with the
//! names replaced, so a new domain starts from code that compiles and passes the
//! conformance suite (which runs over this skeleton in the crate's own tests). Replace the
//! library with the new domain file by file; keep the file names and the functions the
//! glue macros call (docs/adding-a-domain.md).
";
const SCAFFOLD_NOTE: &str =
    "//! Started by `tracer scaffold domain` (a library domain that compiles, passes the
//! conformance suite and grounds into verified tasks). Replace the library with
//! this domain file by file; keep the file names and the functions the glue macros call
//! (docs/adding-a-domain.md).
";

/// Names a domain module may not take: the domain folder's own modules.
const TAKEN: [&str; 6] = ["kit", "args", "table", "reference", "conformance", "mod"];

/// Rust's strict and reserved keywords (2024 edition): not a module name.
const KEYWORDS: [&str; 51] = [
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true", "type", "unsafe",
    "use", "where", "while", "abstract", "become", "box", "do", "final", "macro", "override",
    "priv", "typeof", "unsized", "virtual", "yield", "try",
];

#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error(
        "invalid domain name '{0}': use lower-case letters, digits and single underscores, starting with a letter (e.g. 'garden' or 'car_rental')"
    )]
    BadName(String),
    #[error("domain name '{0}' is taken (a registered domain or a module of src/domain)")]
    Taken(String),
    #[error("{0}: already exists; choose another name or remove it first")]
    Exists(String),
    #[error("{path}: {message}")]
    Registry { path: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ScaffoldError + '_ {
    move |source| ScaffoldError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// "car_rental" -> "CarRental".
pub fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The skeleton's `text` as the domain `name`'s.
pub fn rename(text: &str, name: &str) -> String {
    const MARK: &str = "\u{0}scaffold-note\u{0}";
    text.replace(SKELETON_NOTE, MARK)
        .replace("Skeleton", &camel(name))
        .replace("skeleton", name)
        .replace(MARK, SCAFFOLD_NOTE)
}

fn check_name(name: &str, registered: &[&str]) -> Result<(), ScaffoldError> {
    let shape = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.ends_with('_')
        && !name.contains("__");
    if !shape {
        return Err(ScaffoldError::BadName(name.to_string()));
    }
    if TAKEN.contains(&name) || KEYWORDS.contains(&name) || registered.contains(&name) {
        return Err(ScaffoldError::Taken(name.to_string()));
    }
    Ok(())
}

/// `src/domain/mod.rs` with the domain's `pub mod` line among the domains' (in name order)
/// and its line at the end of the registry list.
pub fn register(text: &str, name: &str, registered: &[&str]) -> Result<String, String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let is_domain_mod = |l: &str| {
        l.strip_prefix("pub mod ")
            .and_then(|r| r.strip_suffix(';'))
            .is_some_and(|m| registered.contains(&m))
    };
    let mods: Vec<usize> = (0..lines.len())
        .filter(|&i| is_domain_mod(&lines[i]))
        .collect();
    let Some(&last) = mods.last() else {
        return Err("no `pub mod <domain>;` line of a registered domain".into());
    };
    let at = mods
        .iter()
        .copied()
        .find(|&i| lines[i].as_str() > format!("pub mod {name};").as_str())
        .unwrap_or(last + 1);
    lines.insert(at, format!("pub mod {name};"));
    let open = lines
        .iter()
        .position(|l| l.contains("static DOMAINS"))
        .ok_or("no `static DOMAINS` registry list")?;
    let close = lines[open..]
        .iter()
        .position(|l| l.trim() == "];")
        .map(|i| open + i)
        .ok_or("the `static DOMAINS` list has no closing `];`")?;
    lines.insert(close, format!("        &{name}::{},", camel(name)));
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// The reference page, its generated blocks empty until `tracer docs` fills them.
fn page(name: &str) -> String {
    let block = |b: &str| format!("<!-- tracer docs: {b} -->\n<!-- /tracer docs: {b} -->\n");
    format!(
        "# {title}\n\n{summary}\nCode: [`src/domain/{name}/`](../../src/domain/{name}/); policy: \
         [`policies/{name}.md`](../../policies/{name}.md); graph: \
         [`graphs/{name}.json`](../../graphs/{name}.json). [All domains](README.md).\n\n\
         **{title}** says here what it models, where its tools come from and what its \
         generator draws.\n\n## Tools\n\n{tools}\n## Dependency graph\n\n{graph}\n\
         ## Departures from the reference\n\n{departures}",
        title = camel(name),
        summary = block("summary"),
        tools = block("tools"),
        graph = block("graph"),
        departures = block("departures"),
    )
}

/// What one scaffold run wrote.
#[derive(Debug)]
pub struct Scaffolded {
    pub written: Vec<PathBuf>,
    pub edited: PathBuf,
}

/// Scaffold the domain `name` under the project `root` (see the module docs).
pub fn scaffold_domain(root: &Path, name: &str) -> Result<Scaffolded, ScaffoldError> {
    let registered: Vec<&str> = crate::domain::registry().iter().map(|d| d.name()).collect();
    check_name(name, &registered)?;
    let folder = root.join("src/domain").join(name);
    let files: Vec<(PathBuf, String)> = [
        (
            root.join(format!("policies/{name}.md")),
            rename(POLICY, name),
        ),
        (
            root.join(format!("graphs/{name}.json")),
            rename(GRAPH, name),
        ),
        (root.join(format!("docs/domains/{name}.md")), page(name)),
    ]
    .into_iter()
    .collect();
    for path in std::iter::once(&folder).chain(files.iter().map(|(p, _)| p)) {
        if path.exists() {
            return Err(ScaffoldError::Exists(path.display().to_string()));
        }
    }
    let registry = root.join("src/domain/mod.rs");
    let text = std::fs::read_to_string(&registry).map_err(io(&registry))?;
    let edited = register(&text, name, &registered).map_err(|message| ScaffoldError::Registry {
        path: registry.display().to_string(),
        message,
    })?;
    // Written in order; on a failure, what this run wrote is removed again.
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| -> Result<(), ScaffoldError> {
        let staging = root.join("src/domain").join(format!(".{name}.scaffold"));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        written.push(staging.clone());
        for (file, text) in FILES {
            let path = staging.join(file);
            std::fs::write(&path, rename(text, name)).map_err(io(&path))?;
        }
        std::fs::rename(&staging, &folder).map_err(io(&folder))?;
        written.pop();
        written.push(folder.clone());
        for (path, text) in &files {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io(dir))?;
            }
            std::fs::write(path, text).map_err(io(path))?;
            written.push(path.clone());
        }
        let tmp = registry.with_extension("rs.scaffold");
        std::fs::write(&tmp, &edited).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &registry).map_err(io(&registry))
    })();
    if let Err(e) = result {
        for path in written.iter().rev() {
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
        }
        return Err(e);
    }
    Ok(Scaffolded {
        written,
        edited: registry,
    })
}

/// The remote skeleton's files (`remote/skeleton/`: a lending library in Python on
/// `remote/tracer_env.py`), `__DOMAIN__` standing for the name.
const REMOTE_FILES: [(&str, &str); 6] = [
    ("server.py", include_str!("../remote/skeleton/server.py")),
    (
        "domain.toml",
        include_str!("../remote/skeleton/domain.toml"),
    ),
    ("tools.toml", include_str!("../remote/skeleton/tools.toml")),
    (
        "requests.toml",
        include_str!("../remote/skeleton/requests.toml"),
    ),
    ("policy.md", include_str!("../remote/skeleton/policy.md")),
    ("graph.json", include_str!("../remote/skeleton/graph.json")),
];

/// `tracer scaffold domain NAME --remote`: `domains/NAME/`, a runnable remote domain (no
/// Rust, no rebuild) from the remote skeleton, checked first (a valid, unused name; no folder
/// there) and written whole or not at all (staged, then renamed into place).
pub fn scaffold_remote(root: &Path, name: &str) -> Result<Scaffolded, ScaffoldError> {
    let registered: Vec<&str> = crate::domain::registry().iter().map(|d| d.name()).collect();
    check_name(name, &registered)?;
    let domains = root.join("domains");
    let folder = domains.join(name);
    if folder.exists() {
        return Err(ScaffoldError::Exists(folder.display().to_string()));
    }
    let helper = root.join("remote/tracer_env.py");
    if !helper.is_file() {
        return Err(ScaffoldError::Io {
            path: helper.display().to_string(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the server module the skeleton imports is missing (run from a Tracer checkout)",
            ),
        });
    }
    let staging = domains.join(format!(".{name}.scaffold"));
    let _ = std::fs::remove_dir_all(&staging);
    let result = (|| -> Result<(), ScaffoldError> {
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        for (file, text) in REMOTE_FILES {
            let path = staging.join(file);
            std::fs::write(&path, text.replace("__DOMAIN__", name)).map_err(io(&path))?;
        }
        std::fs::rename(&staging, &folder).map_err(io(&folder))
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    Ok(Scaffolded {
        written: REMOTE_FILES.iter().map(|(f, _)| folder.join(f)).collect(),
        edited: folder,
    })
}

/// What to do after a remote scaffold, as printed by the CLI.
pub fn next_steps_remote(name: &str) -> String {
    format!(
        "next (no build needed; docs/remote-domains.md):
  1. tracer list: '{name}' is loaded from domains/{name}/ and its server started
  2. tracer validate; tracer run tasks --domain {name}: traces, grounding, verified tasks
  then replace the library in domains/{name}/server.py and policy.md (the agent reads it as
  it is) with your domain (any language: the
  command in domain.toml starts it), declare its customers and argument sources in
  domain.toml, and rebuild the graph with
  tracer graphs build --domain {name} --all-tools --out domains/{name}/graph.json"
    )
}

/// What to do after a scaffold, as printed by the CLI.
pub fn next_steps(name: &str) -> String {
    format!(
        "next:
  1. cargo build (or make build): the domain is compiled in and registered
  2. tracer docs: fill the generated blocks of docs/domains/{name}.md
  3. cargo test --lib -- conformance {name}: its own tests and the conformance suite
  4. tracer run tasks --domain {name}: traces, grounding, refinement, verified tasks
  then replace the library in src/domain/{name}/ with your domain, file by file; rebuild
  the graph with tracer graphs build --domain {name} --all-tools --out graphs/{name}.json
  and review it; optional: a trace target in stages/traces.toml, release caps in
  configs/release/grounded.toml, differential fixtures if a public reference exists
  (docs/adding-a-domain.md)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_camel_cased() {
        assert_eq!(camel("car_rental"), "CarRental");
        assert_eq!(camel("garden"), "Garden");
        for bad in [
            "Garden",
            "9lives",
            "car-rental",
            "car__rental",
            "garden_",
            "",
            "a b",
        ] {
            assert!(
                matches!(check_name(bad, &[]), Err(ScaffoldError::BadName(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            check_name("airline", &["airline"]),
            Err(ScaffoldError::Taken(_))
        ));
        assert!(matches!(
            check_name("kit", &[]),
            Err(ScaffoldError::Taken(_))
        ));
        assert!(check_name("car_rental", &["airline"]).is_ok());
    }

    #[test]
    fn the_skeleton_is_renamed_everywhere_and_its_note_retold() {
        for (file, text) in FILES {
            let out = rename(text, "car_rental");
            assert!(!out.to_lowercase().contains("skeleton"), "{file}: {out}");
        }
        let module = rename(FILES[0].1, "car_rental");
        assert!(module.contains("pub struct CarRental;"), "{module}");
        assert!(module.contains("tau2_domain!(CarRental, \"car_rental\", CarRentalDb"));
        assert!(module.contains("Started by `tracer scaffold domain`"));
        assert!(rename(GRAPH, "car_rental").contains("\"domain\": \"car_rental\""));
    }

    #[test]
    fn registration_adds_the_module_in_order_and_the_registry_line_last() {
        let text = "pub mod kit;\n\npub mod airline;\npub mod retail;\n\n\
                    static DOMAINS: &[&dyn Domain] = &[\n        &airline::Airline,\n        \
                    &retail::Retail,\n    ];\n";
        let out = register(text, "bank", &["airline", "retail"]).unwrap();
        assert_eq!(
            out,
            "pub mod kit;\n\npub mod airline;\npub mod bank;\npub mod retail;\n\n\
             static DOMAINS: &[&dyn Domain] = &[\n        &airline::Airline,\n        \
             &retail::Retail,\n        &bank::Bank,\n    ];\n"
        );
        let zoo = register(text, "zoo", &["airline", "retail"]).unwrap();
        assert!(zoo.contains("pub mod retail;\npub mod zoo;\n"), "{zoo}");
        assert!(register("pub mod kit;\n", "bank", &["airline"]).is_err());
        // The real registry takes the edit.
        let real = include_str!("domain/mod.rs");
        let names: Vec<&str> = crate::domain::registry().iter().map(|d| d.name()).collect();
        let out = register(real, "garden", &names).unwrap();
        assert!(out.contains("pub mod garden;\n") && out.contains("&garden::Garden,\n"));
    }

    #[test]
    fn a_scaffold_writes_every_place_and_a_refused_one_writes_nothing() {
        let dir = std::env::temp_dir().join(format!("tracer-scaffold-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.as_path();
        std::fs::create_dir_all(root.join("src/domain")).unwrap();
        std::fs::write(
            root.join("src/domain/mod.rs"),
            include_str!("domain/mod.rs"),
        )
        .unwrap();
        let done = scaffold_domain(root, "garden").unwrap();
        assert_eq!(done.written.len(), 4);
        for f in [
            "mod.rs",
            "db.rs",
            "tools.toml",
            "tests.rs",
            "vocabulary.toml",
        ] {
            assert!(root.join("src/domain/garden").join(f).is_file(), "{f}");
        }
        for f in [
            "policies/garden.md",
            "graphs/garden.json",
            "docs/domains/garden.md",
        ] {
            assert!(root.join(f).is_file(), "{f}");
        }
        let registry = std::fs::read_to_string(root.join("src/domain/mod.rs")).unwrap();
        assert!(registry.contains("&garden::Garden,"));
        let page = std::fs::read_to_string(root.join("docs/domains/garden.md")).unwrap();
        assert!(
            page.contains("<!-- tracer docs: departures -->\n<!-- /tracer docs: departures -->")
        );
        // Again: refused before anything is written.
        let before = registry.clone();
        assert!(matches!(
            scaffold_domain(root, "garden"),
            Err(ScaffoldError::Exists(_))
        ));
        assert_eq!(
            std::fs::read_to_string(root.join("src/domain/mod.rs")).unwrap(),
            before
        );
        // A root whose registry cannot be edited: nothing of the new domain stays.
        std::fs::write(root.join("src/domain/mod.rs"), "pub mod kit;\n").unwrap();
        let err = scaffold_domain(root, "orchard").unwrap_err();
        assert!(err.to_string().contains("src/domain/mod.rs"), "{err}");
        assert!(!root.join("src/domain/orchard").exists());
        assert!(!root.join("policies/orchard.md").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The graph `tracer scaffold domain` writes as `graphs/<name>.json`: a reviewed subset
    /// of what `tracer graphs build --all-tools` proposes for the skeleton with the
    /// project's seed (the builder links every tool to every other; the review keeps the
    /// identity lookup first and the orders a member asks in), every edge demonstrated.
    #[test]
    fn the_scaffolds_graph_is_reviewed_from_the_builders_and_every_edge_runs() {
        use crate::domain::{Domain, Intent};
        use crate::graph::demonstrate::SearchLimits;
        let d = crate::domain::kit::skeleton::Skeleton;
        let seed = 20_261_129;
        let env = d.generate(seed, d.graph_split());
        let specs = d.tool_specs();
        let tools: Vec<_> = specs
            .into_iter()
            .filter(|s| !s.terminates && s.intent != Intent::Helper)
            .collect();
        let limits = SearchLimits {
            customers: 40,
            proposals: 8,
        };
        let (built, _) =
            crate::graph::build::build_candidates(env.as_ref(), d.name(), &tools, seed, limits);
        let graph: crate::graph::ToolGraph = serde_json::from_str(GRAPH).unwrap();
        assert_eq!(
            GRAPH,
            graph.to_pretty_json(),
            "graph.json is not in canonical form"
        );
        crate::graph::check_structure(&graph, &d).unwrap();
        assert_eq!(graph.nodes.len(), tools.len());
        for e in &graph.edges {
            assert!(
                built.has_edge(&e.from, &e.to),
                "{} -> {} is not proposed",
                e.from,
                e.to
            );
            assert_ne!(e.to, "find_member_id_by_email", "identity comes first");
        }
        for demo in crate::graph::demonstrate::demonstrate_edges(&graph, env.as_ref(), seed, limits)
        {
            assert!(demo.witness.is_some(), "{} -> {}", demo.from, demo.to);
        }
    }
}
