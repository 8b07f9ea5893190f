//! The one validation path: `tracer validate` checks every stage and domain with it, and
//! `tracer run` checks the stages it plans and the domains it runs with it before anything
//! is read or written, so a config `validate` passes is one `run` accepts and the other way
//! round. Stage configs are checked by each stage's own `validate_config` (typed parse,
//! ranges, roles) and the files a stage reads by its `validate_sources` (graphs, emotion
//! anchors); the project checks here cover what no single stage owns: the `stages/`
//! folder, `stages/pipeline.toml`, and per domain its tool schemas and policy, plus the
//! registry agreeing with the files both ways.
//!
//! Architecture invariant: validation is pure — it reads project files, never the output
//! directory, never the network.

use super::Stage;
use crate::config::{Paths, PipelineConfig};
use crate::domain::{self, Domain, ToolKind};
use std::collections::BTreeSet;

/// What to check.
pub struct Scope<'a> {
    pub stages: &'a [&'static dyn Stage],
    /// Every registered stage (names an override file may take).
    pub registry: &'a [&'static dyn Stage],
    pub domains: &'a [&'static dyn Domain],
}

const READ_PREFIXES: &[&str] = &["get_", "list_", "search_", "check_", "find_"];

/// True when a policy holds no instruction at all (only blank lines and headings): an
/// agent given it as its system prompt would be told nothing.
pub fn policy_is_empty(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with('#'))
}

/// Every problem found in `scope`, one line each (empty = valid).
pub fn problems(paths: &Paths, scope: &Scope) -> Vec<String> {
    let mut problems = Vec::new();
    let stages_dir = paths.root.join("stages");
    if !stages_dir.is_dir() {
        problems.push(format!(
            "{}: missing (the project root holds stages/, graphs/, policies/; set TRACER_ROOT to it)",
            stages_dir.display()
        ));
        return problems;
    }
    if let Some(dir) = &paths.overrides {
        problems.extend(override_problems(dir, scope.registry));
    }
    if let Err(e) = PipelineConfig::load(paths)
        && !problems.contains(&e.to_string())
    {
        problems.push(e.to_string());
    }
    for stage in scope.stages {
        problems.extend(stage.validate_sources(paths, scope.domains));
        let path = paths.stage_config(stage.name());
        if path.symlink_metadata().is_err() {
            // Every stage has its file; a missing one is a lost or misnamed file, not a wish
            // for defaults (an empty file is that).
            problems.push(format!(
                "{}: missing; every stage reads its config from stages/<stage>.toml (restore it, or leave it empty for the defaults)",
                path.display()
            ));
            continue;
        }
        if paths
            .overrides
            .as_deref()
            .is_some_and(|d| path.starts_with(d))
            && crate::config::not_a_regular_file(&path).is_some()
        {
            continue; // listed with the override directory's problems above
        }
        let checked = paths
            .stage_table(stage.name())
            .and_then(|(path, t)| stage.validate_config(&path, &t));
        if let Err(e) = checked {
            problems.push(e.to_string());
        }
    }
    for d in scope.domains {
        problems.extend(domain_problems(paths, *d));
    }
    problems.extend(registry_problems(paths));
    problems
}

/// A stage-override directory must exist and hold only `<stage>.toml` files of known
/// stages (or `pipeline.toml`): a misspelt file would otherwise be ignored in silence.
/// Every command that reads stage configs checks it (through [`problems`], or directly).
pub fn override_problems(dir: &std::path::Path, stages: &[&'static dyn Stage]) -> Vec<String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            return vec![format!(
                "{}: {e} (set by {})",
                dir.display(),
                crate::config::ENV_STAGE_OVERRIDES
            )];
        }
    };
    let known: BTreeSet<&str> = stages
        .iter()
        .map(|s| s.name())
        .chain(["pipeline"])
        .collect();
    let mut problems = Vec::new();
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    for name in names {
        let stem = name.strip_suffix(".toml");
        if stem.is_some_and(|s| known.contains(s)) {
            problems.extend(crate::config::not_a_regular_file(&dir.join(&name)));
        } else if !name.starts_with('.') && !name.ends_with(".md") {
            problems.push(format!(
                "{}: not a stage config (expected <stage>.toml or pipeline.toml)",
                dir.join(&name).display()
            ));
        }
    }
    problems
}

fn domain_problems(paths: &Paths, d: &dyn Domain) -> Vec<String> {
    let mut problems = Vec::new();
    let specs = d.tool_specs();
    let mut seen = BTreeSet::new();
    for s in &specs {
        if !seen.insert(s.name) {
            problems.push(format!("domain {}: duplicate tool '{}'", d.name(), s.name));
        }
        if s.parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
            problems.push(format!(
                "domain {}: tool '{}': parameters schema must be an object",
                d.name(),
                s.name
            ));
        }
        if READ_PREFIXES.iter().any(|p| s.name.starts_with(p)) && s.kind != ToolKind::Read {
            problems.push(format!(
                "domain {}: tool '{}' is named like a read tool but declared write",
                d.name(),
                s.name
            ));
        }
    }
    for rel in crate::config::policy_sources(d) {
        let policy = paths.root.join(rel);
        match std::fs::read_to_string(&policy) {
            Ok(text) if policy_is_empty(&text) => problems.push(format!(
                "{}: policy is empty (the agent's system prompt would say nothing)",
                policy.display()
            )),
            Ok(_) => {}
            Err(e) => problems.push(format!("{}: {e}", policy.display())),
        }
    }
    problems
}

/// One name everywhere: files and modules must name registered domains, both ways.
fn registry_problems(paths: &Paths) -> Vec<String> {
    let mut problems = Vec::new();
    let names: BTreeSet<&str> = domain::registry().iter().map(|d| d.name()).collect();
    for (dir, ext) in [("graphs", "json"), ("policies", "md")] {
        if let Ok(entries) = std::fs::read_dir(paths.root.join(dir)) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().and_then(|x| x.to_str()) == Some(ext) {
                    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                    // `<domain>.<ruleset>.md`: the policy of a non-default ruleset.
                    let ruleset_policy = ext == "md"
                        && stem.split_once('.').is_some_and(|(d, r)| {
                            domain::find(d)
                                .is_ok_and(|d| d.rulesets().iter().skip(1).any(|x| x.name == r))
                        });
                    if !names.contains(stem) && !ruleset_policy {
                        problems.push(format!("{}: no registered domain '{stem}'", p.display()));
                    }
                }
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(paths.root.join("src/domain")) {
        for e in entries.flatten() {
            if e.path().is_dir() {
                let name = e.file_name().to_string_lossy().to_string();
                if name != "kit" && !names.contains(name.as_str()) {
                    problems.push(format!(
                        "src/domain/{name}/: module is not in the domain registry"
                    ));
                }
            }
        }
    }
    problems
}
