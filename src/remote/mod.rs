//! Remote domains: environments in any language that Tracer starts as a process or reaches
//! on loopback, speaking MCP's `tools/list` and `tools/call` plus four control calls
//! (`tracer/reset`, `tracer/state`, `tracer/fork`, `tracer/close`), with what the pipeline
//! must know of them declared as data in their folder (docs/remote-domains.md).
//!
//! [`load`] reads every domain folder of a project (`domains/*/domain.toml`, or the folders
//! `TRACER_DOMAINS` names), starts each server, lists its tools and hands the domains to the
//! registry ([`crate::domain::register`]); from then on every stage sees a remote domain as
//! it sees a built-in one: a [`Domain`] whose environments fork, run tools by name and hash
//! their state ([`env::RemoteEnv`]), and whose grounding proposals, customer facts, request
//! sentences and policy checks come from the declarations ([`ground`]).
//!
//! A failure of the environment itself (it exited, hung, answered nonsense) is never a tool
//! error the data could learn from: it unwinds with an [`EnvironmentFailure`], which the pipeline and the CLI turn
//! into a one-line error naming the domain and the call (the stage's output is left as it
//! was).
//!
//! Architecture invariant: knows the domain contract and nothing above it (no stage, no
//! artifact, no LLM).

mod client;
mod declare;
mod env;
mod ground;
mod state;

pub use client::shutdown;

use crate::domain::kit::templates::Templates;
use crate::domain::{
    Domain, DomainError, Environment, EnvironmentFailure, Intent, Split, ToolKind, ToolSpec,
};
use client::Connection;
use declare::DomainFile;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Folders of remote domains, beside the default `<root>/domains` (colon-separated; each a
/// domain folder or a folder of them).
pub const ENV_DOMAINS: &str = "TRACER_DOMAINS";

/// Unwind with an [`EnvironmentFailure`]: the environment cannot go on, and no answer may
/// be made up for it.
fn fail(message: String) -> ! {
    std::panic::panic_any(EnvironmentFailure(message))
}

/// What every environment of one remote domain shares: the connection, the tool specs and
/// the declarations.
pub(crate) struct Shared {
    pub name: &'static str,
    pub conn: Connection,
    pub specs: Vec<&'static ToolSpec>,
    pub decl: DomainFile,
    pub templates: Templates,
    /// Rule names, leaked once (a violation names its rule as `&'static str`).
    pub rule_names: Vec<&'static str>,
    /// Whether `tracer/state` answers `since` a version (the server declared `stateSince`).
    pub state_since: bool,
    /// How many `tracer/state` answers were incremental (for the tests).
    pub patched_states: std::sync::atomic::AtomicU64,
}

/// A registry entry for a remote domain.
pub struct RemoteDomain {
    shared: Arc<Shared>,
    folder: &'static Path,
    reference: &'static str,
    code_hash: String,
}

/// The domain folders of a project: `TRACER_DOMAINS`'s, else `<root>/domains/*`.
fn folders(root: &Path) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = match std::env::var_os(ENV_DOMAINS).filter(|v| !v.is_empty()) {
        Some(list) => std::env::split_paths(&list)
            .map(|p| if p.is_absolute() { p } else { root.join(p) })
            .collect(),
        None => vec![root.join("domains")],
    };
    let mut out = Vec::new();
    for dir in roots {
        if dir.join("domain.toml").is_file() {
            out.push(dir);
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("domain.toml").is_file())
            .collect();
        found.sort();
        out.extend(found);
    }
    out
}

/// Start and register the project's remote domains (none when it has no `domains/`
/// folder). Call once, before anything reads the registry; the error is one line naming
/// the folder, the file or the call that is wrong.
pub fn load(root: &Path) -> Result<Vec<&'static str>, DomainError> {
    install_panic_hook();
    let mut domains: Vec<&'static dyn Domain> = Vec::new();
    let mut names = Vec::new();
    for dir in folders(root) {
        let d = RemoteDomain::open(&dir, root).map_err(DomainError::Other)?;
        let d: &'static RemoteDomain = Box::leak(Box::new(d));
        if crate::domain::registry_builtin()
            .iter()
            .chain(domains.iter())
            .any(|b| b.name() == d.name())
        {
            return Err(DomainError::Other(format!(
                "{}: the domain name '{}' is taken",
                dir.display(),
                d.name()
            )));
        }
        names.push(d.name());
        domains.push(d);
    }
    if !domains.is_empty() {
        crate::domain::register(domains).map_err(DomainError::Other)?;
    }
    Ok(names)
}

/// Print a remote failure as the one line the CLI prints, not as a panic with a backtrace
/// hint (other panics keep the default hook).
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info
                .payload()
                .downcast_ref::<EnvironmentFailure>()
                .is_none()
            {
                previous(info);
            }
        }));
    });
}

/// A folder's name as a domain key: lower-case letters, digits and `_`, starting with a
/// letter (it names output partitions and files).
fn domain_name(dir: &Path) -> Result<&'static str, String> {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(format!(
            "{}: a domain folder's name is its key: lower-case letters, digits and '_', starting with a letter",
            dir.display()
        ));
    }
    Ok(Box::leak(name.into_boxed_str()))
}

/// The FNV-1a hash of a domain folder's files (sorted paths and bytes), so editing the
/// server or a declaration makes the domain's stages stale; `__pycache__` and dot files
/// are left out.
fn folder_hash(dir: &Path) -> String {
    fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "__pycache__" {
                continue;
            }
            if p.is_dir() {
                collect(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for f in files {
        let rel = f
            .strip_prefix(dir)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        eat(rel.as_bytes());
        eat(&[0]);
        eat(&std::fs::read(&f).unwrap_or_default());
        eat(&[0]);
    }
    format!("{h:016x}")
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

impl RemoteDomain {
    /// Read a domain folder's declarations, start (or reach) its server and list its tools.
    fn open(dir: &Path, root: &Path) -> Result<RemoteDomain, String> {
        let name = domain_name(dir)?;
        let decl = DomainFile::read(&dir.join("domain.toml"))?;
        let timeout = Duration::from_secs_f64(decl.timeout_s);
        let conn = match &decl.url {
            Some(url) => Connection::http(name, url, timeout)?,
            None => Connection::spawn(name, &decl.command, dir, timeout)?,
        };
        let init = conn.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "tracer", "version": env!("CARGO_PKG_VERSION")}}),
        )?;
        if init.pointer("/capabilities/experimental/tracer/version") != Some(&json!(1)) {
            return Err(format!(
                "domain '{name}': initialize: the server does not declare Tracer's control calls (capabilities.experimental.tracer.version = 1); a plain MCP server has no seeded reset, state or fork"
            ));
        }
        let state_since =
            init.pointer("/capabilities/experimental/tracer/stateSince") == Some(&json!(true));
        conn.notify("notifications/initialized", json!({}));
        let listed = conn.call("tools/list", json!({}))?;
        let specs = tool_specs(name, &listed)?;
        let tools_toml = read_optional(&dir.join("tools.toml"))?;
        let specs = crate::domain::kit::specs::declare(tools_toml.as_deref(), specs)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let specs: Vec<&'static ToolSpec> = specs
            .into_iter()
            .map(|s| &*Box::leak(Box::new(s)))
            .collect();
        let templates = match read_optional(&dir.join("requests.toml"))? {
            Some(text) => Templates::parse(&text).map_err(|e| format!("{}: {e}", dir.display()))?,
            None => Templates::default(),
        };
        check_declarations(dir, &decl, &specs)?;
        let rule_names = decl.rule.iter().map(|r| leak(r.name.clone())).collect();
        let reference =
            leak(decl.reference.clone().unwrap_or_else(|| {
                format!("remote domain served by `{}`", describe_transport(&decl))
            }));
        Ok(RemoteDomain {
            shared: Arc::new(Shared {
                name,
                conn,
                specs,
                decl,
                templates,
                rule_names,
                state_since,
                patched_states: Default::default(),
            }),
            // Relative to the project root when inside it (fingerprints name source files
            // relative to the root, so a checkout's location does not make stages stale).
            folder: Box::leak(
                dir.strip_prefix(root)
                    .unwrap_or(dir)
                    .to_path_buf()
                    .into_boxed_path(),
            ),
            reference,
            code_hash: folder_hash(dir),
        })
    }

    fn session(&self, method: &str, params: Value) -> Result<Box<dyn Environment>, DomainError> {
        env::RemoteEnv::open(&self.shared, method, params)
            .map(|e| Box::new(e) as Box<dyn Environment>)
            .map_err(DomainError::Other)
    }
}

fn describe_transport(decl: &DomainFile) -> String {
    decl.url.clone().unwrap_or_else(|| decl.command.join(" "))
}

fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The specs of a `tools/list` result; the error names the tool and the field.
fn tool_specs(domain: &str, listed: &Value) -> Result<Vec<ToolSpec>, String> {
    let bad = |why: String| format!("domain '{domain}': tools/list: {why}");
    let tools = listed
        .get("tools")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("the result has no `tools` list".into()))?;
    let mut specs: Vec<ToolSpec> = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| bad(format!("tool {i} has no name")))?;
        if specs.iter().any(|s| s.name == name) {
            return Err(bad(format!("tool '{name}' is listed twice")));
        }
        let parameters = t
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        if parameters.get("type") != Some(&json!("object")) {
            return Err(bad(format!(
                "tool '{name}': inputSchema is not an object schema"
            )));
        }
        let read = t.pointer("/annotations/readOnlyHint") == Some(&json!(true));
        let kind = if read {
            ToolKind::Read
        } else {
            ToolKind::Write
        };
        let name = leak(name.to_string());
        specs.push(ToolSpec {
            name,
            kind,
            description: leak(
                t.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ),
            parameters,
            terminates: name.starts_with("transfer_to_human"),
            intent: Intent::infer(name, kind),
            declared: Default::default(),
        });
    }
    if specs.is_empty() {
        return Err(bad("the server lists no tools".into()));
    }
    Ok(specs)
}

/// Declarations must name tools and arguments the server lists.
fn check_declarations(dir: &Path, decl: &DomainFile, specs: &[&ToolSpec]) -> Result<(), String> {
    let file = dir.join("domain.toml");
    let spec = |tool: &str, what: &str| {
        specs
            .iter()
            .find(|s| s.name == tool)
            .copied()
            .ok_or_else(|| {
                format!(
                    "{}: {what}: the server lists no tool '{tool}'",
                    file.display()
                )
            })
    };
    let has_arg = |s: &ToolSpec, arg: &str| {
        s.parameters
            .pointer(&format!("/properties/{arg}"))
            .is_some()
    };
    for r in &decl.rule {
        let s = spec(&r.tool, &format!("rule '{}'", r.name))?;
        if !has_arg(s, &r.arg) {
            return Err(format!(
                "{}: rule '{}': tool '{}' takes no argument '{}'",
                file.display(),
                r.name,
                r.tool,
                r.arg
            ));
        }
    }
    for r in &decl.customers.records {
        let s = spec(&r.tool, "customers.records")?;
        if !has_arg(s, &r.arg) {
            return Err(format!(
                "{}: customers.records: tool '{}' takes no argument '{}'",
                file.display(),
                r.tool,
                r.arg
            ));
        }
    }
    for d in &decl.draw {
        for t in &d.tools {
            spec(t, &format!("draw '{}'", d.arg))?;
        }
        if !specs.iter().any(|s| has_arg(s, &d.arg)) {
            return Err(format!(
                "{}: draw '{}': no tool takes that argument",
                file.display(),
                d.arg
            ));
        }
    }
    Ok(())
}

impl Domain for RemoteDomain {
    fn name(&self) -> &'static str {
        self.shared.name
    }

    fn tool_specs(&self) -> Vec<&'static ToolSpec> {
        self.shared.specs.clone()
    }

    fn reference(&self) -> &'static str {
        self.reference
    }

    fn separate_train_db(&self) -> bool {
        self.shared.decl.separate_train_db
    }

    fn generate(&self, seed: u64, split: Split) -> Box<dyn Environment> {
        self.session(
            "tracer/reset",
            json!({"split": split.as_str(), "seed": seed}),
        )
        .unwrap_or_else(|e| fail(e.to_string()))
    }

    fn import_tables(
        &self,
        tables: BTreeMap<String, Value>,
        _origin: &Path,
    ) -> Result<Box<dyn Environment>, DomainError> {
        self.session("tracer/reset", json!({"tables": tables}))
    }

    fn folder(&self) -> Option<&'static Path> {
        Some(self.folder)
    }

    fn ties(&self) -> Vec<String> {
        self.shared.decl.ties.clone()
    }

    fn own_code_hash(&self) -> Option<String> {
        Some(self.code_hash.clone())
    }
}

#[cfg(test)]
mod tests;
