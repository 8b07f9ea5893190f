//! The domain contract and the domain registry.
//!
//! A domain is a typed database (copy-on-write [`Table`]s), a deterministic generator, a set
//! of tools, a policy (`policies/<name>.md`) and a dependency graph (`graphs/<name>.json`).
//! Tools are described once ([`ToolSpec`]: name, read/write, description, JSON Schema) and
//! that description feeds both the OpenAI `tools` list and argument validation.
//!
//! Layers:
//! - [`Database`]: implemented by each domain's typed state (its tools and tables); static
//!   dispatch for tool code.
//! - [`Hooks`]: the domain's behaviour (its tools' specs, customers, grounding proposals,
//!   policy checks, what a customer knows and asks for), one list, a supertrait of both
//!   `Database` and `Environment`.
//! - [`Environment`]: the object-safe view the pipeline uses (blanket impl for every
//!   `Database`): fork, invoke a tool by name, state hash, export.
//! - [`Domain`]: the registry entry: name, tool specs, generator, tau-bench import.
//!
//! Architecture invariant: domains know nothing about stages, artifacts, LLMs or the CLI;
//! stages know domains only through these traits and [`registry`].

pub mod args;
#[cfg(test)]
mod conformance;
mod context;
pub mod kit;
pub mod reference;
pub mod table;

pub mod airline;
pub mod bank;
pub mod basketball;
pub mod movie;
pub mod restaurant;
pub mod retail;
pub mod school;
pub mod telecom;
pub mod telehealth;
pub mod travel;

pub use crate::task::{Action, UserFact};
pub use args::Args;
pub use context::GroundingContext;
pub use table::{StateHash, Table};

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The built-in domains: one line per domain, in the order of `tracer list` and of stages.
pub fn registry_builtin() -> &'static [&'static dyn Domain] {
    static DOMAINS: &[&dyn Domain] = &[
        &airline::Airline,
        &retail::Retail,
        &telecom::Telecom,
        &telehealth::Telehealth,
        &school::School,
        &restaurant::Restaurant,
        &travel::Travel,
        &movie::Movie,
        &basketball::Basketball,
        &bank::Bank,
    ];
    DOMAINS
}

/// Domains added at run time (a project's remote domains, `crate::remote`), after the
/// built-in ones.
static EXTRA: std::sync::OnceLock<Vec<&'static dyn Domain>> = std::sync::OnceLock::new();
static ALL: std::sync::OnceLock<Vec<&'static dyn Domain>> = std::sync::OnceLock::new();

/// The registry: the built-in domains, then those [`register`]ed.
pub fn registry() -> &'static [&'static dyn Domain] {
    ALL.get_or_init(|| {
        let mut all = registry_builtin().to_vec();
        all.extend(EXTRA.get().into_iter().flatten().copied());
        all
    })
}

/// Add domains to the registry, once per process and before anything reads it.
pub fn register(domains: Vec<&'static dyn Domain>) -> Result<(), String> {
    if ALL.get().is_some() {
        return Err("domains are registered before the registry is first read".into());
    }
    EXTRA
        .set(domains)
        .map_err(|_| "domains are registered once per process".to_string())
}

/// Look a domain up by its key (`"airline"`), with the error every command reports.
pub fn find(name: &str) -> Result<&'static dyn Domain, DomainError> {
    registry()
        .iter()
        .copied()
        .find(|d| d.name() == name)
        .ok_or_else(|| DomainError::UnknownDomain {
            name: name.to_string(),
            known: registry()
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    #[error("unknown domain '{name}' (known: {known})")]
    UnknownDomain { name: String, known: String },
    #[error("{path}: {message}")]
    Import { path: String, message: String },
    #[error("{0}")]
    Other(String),
}

/// The panic payload of an environment that cannot go on (a remote domain's process exited,
/// hung or answered nonsense): no tool output may be made up for it, so it unwinds, and the
/// pipeline (a stage fails, its output untouched) and the CLI (a one-line error) turn it
/// into an error naming the domain and the call. Built-in domains never raise it.
#[derive(Debug)]
pub struct EnvironmentFailure(pub String);

/// The message of an [`EnvironmentFailure`] panic payload, if it is one.
pub fn environment_failure(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<EnvironmentFailure>()
        .map(|f| f.0.as_str())
}

/// Read tools observe; write tools change the database (the paper's classification:
/// get_/list_/search_/check_/find_ and helper tools read, the rest write).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    Read,
    Write,
}

impl ToolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Write => "write",
        }
    }
}

/// What a customer wants from a tool call, as the scripted feeler and the failure analysis
/// read it: domains tag each tool (inferred from the name by [`kit::schema::tool`], and
/// overridden where the name misleads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Look something up (get_/list_/search_/find_/check_ tools).
    Lookup,
    /// Create something new: a booking, an appointment, a ticket, a registration.
    Book,
    /// Cancel something.
    Cancel,
    /// Change something already made (address, flights, seats, passengers, services).
    Change,
    /// Return bought items.
    Return,
    /// Exchange bought items for others.
    Exchange,
    /// Move money: pay a bill, a loan, a tip; transfer funds.
    Pay,
    /// Report a problem or ask for support (support tickets, troubleshooting).
    Report,
    /// Hand the conversation to a human.
    Transfer,
    /// Agent-side helpers with no customer meaning (calculate, think).
    Helper,
}

impl Intent {
    /// The intent a tool's name suggests; tools that mislead are tagged by their domain.
    pub fn infer(name: &str, kind: ToolKind) -> Intent {
        let has = |p: &str| name.contains(p);
        if matches!(name, "calculate" | "think") {
            Intent::Helper
        } else if name.starts_with("transfer_to_human") {
            Intent::Transfer
        } else if kind == ToolKind::Read {
            if has("troubleshoot") {
                Intent::Report
            } else {
                Intent::Lookup
            }
        } else if has("cancel") {
            Intent::Cancel
        } else if has("return") {
            Intent::Return
        } else if has("exchange") {
            Intent::Exchange
        } else if has("ticket") && (has("create") || has("report")) {
            Intent::Report
        } else if ["book_", "create_", "register_", "schedule_", "add_"]
            .iter()
            .any(|p| name.starts_with(p))
        {
            Intent::Book
        } else if ["pay", "payment", "transfer", "tip", "certificate"]
            .iter()
            .any(|p| has(p))
        {
            Intent::Pay
        } else {
            Intent::Change
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Lookup => "lookup",
            Intent::Book => "book",
            Intent::Cancel => "cancel",
            Intent::Change => "change",
            Intent::Return => "return",
            Intent::Exchange => "exchange",
            Intent::Pay => "pay",
            Intent::Report => "report",
            Intent::Transfer => "transfer",
            Intent::Helper => "helper",
        }
    }
}

/// A machine-checkable policy rule a call would break on the current state. `Display` is
/// the detail alone (the sentence rejections have always carried); `rule` names the rule
/// for grouping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyViolation {
    pub rule: &'static str,
    pub detail: String,
}

impl PolicyViolation {
    pub fn new(rule: &'static str, detail: impl Into<String>) -> Self {
        PolicyViolation {
            rule,
            detail: detail.into(),
        }
    }
}

impl std::fmt::Display for PolicyViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

impl std::error::Error for PolicyViolation {}

pub use crate::split::Split;

/// A named variant of a domain's rules, for domains whose reference environments disagree
/// (retail's order lifecycle as tau-emotion-bench ships it, or as tau-bench does). A domain
/// lists its rulesets with [`Domain::rulesets`], the default first; the active one is a
/// property of the environment (forks keep it), chosen per run by `stages/db.toml`'s
/// `[rulesets]` table or a command's `--ruleset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ruleset {
    pub name: &'static str,
    /// One line for `tracer list` and error messages.
    pub description: &'static str,
}

/// The single description of a tool.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub kind: ToolKind,
    pub description: &'static str,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// Calling this tool ends the episode (e.g. transfer_to_human_agents).
    pub terminates: bool,
    /// What a customer wants from this call.
    pub intent: Intent,
    /// What `tools.toml` declares of the tool's values ([`kit::specs::Declared`]).
    pub declared: kit::specs::Declared,
}

impl ToolSpec {
    /// The entry of an OpenAI `tools` list.
    pub fn openai(&self) -> Value {
        json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters}})
    }
}

pub type ToolFn<D> = fn(&mut D, &Args) -> Result<String, String>;

/// A tool implementation bound to its spec.
pub struct Tool<D> {
    pub spec: ToolSpec,
    pub run: ToolFn<D>,
}

/// Marks a tool error that the caller sees verbatim, without the `Error: ` prefix (see
/// [`plain_error`]).
const PLAIN_ERROR: char = '\u{1}';

/// A tool error observed exactly as `sentence` reads: for reference tools that report a
/// failure as a plain sentence ("Patient with ID x not found.") rather than `Error: ...`.
/// The call still counts as failed (`is_error`), so grounding and replay treat it as one.
pub fn plain_error(sentence: impl Into<String>) -> String {
    format!("{PLAIN_ERROR}{}", sentence.into())
}

/// What a tool call returns to the caller. Errors are observations, never panics.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

/// A domain's typed database: its tools and its tables (the storage half, which the glue
/// macros write). Tool code is statically dispatched over it; the domain's behaviour is its
/// [`Hooks`].
pub trait Database: Hooks + Clone + 'static {
    /// The domain's tools, in a fixed order.
    fn tools() -> &'static [Tool<Self>];

    /// Canonical, order-independent hash of the whole state.
    fn state_hash(&self) -> StateHash;

    /// Tables as (name, rows keyed by primary key) for Parquet export.
    fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)>;

    /// The tau-bench JSON files of this state: file stem ("users") -> JSON object.
    fn to_tau_bench(&self) -> BTreeMap<String, Value>;
}

/// What a domain knows about its customers, its requests and its rules: the one list of
/// hooks the pipeline calls, on a typed database and through [`Environment`] alike (it is a
/// supertrait of both, so there is nothing to forward). The first seven have no default, so a
/// domain that drops one does not compile: `customers` is written by hand, the other six by
/// [`kit::glue::database_hooks!`]; the rest default to the common case, four to `tools.toml`.
pub trait Hooks: Send + Sync {
    /// The specs of the domain's tools, in their fixed order.
    fn tool_specs(&self) -> Vec<&'static ToolSpec>;

    /// Customer ids in a stable order (the people a task can be about).
    fn customers(&self) -> Vec<String>;

    /// Candidate arguments for `tool` given what the grounding search knows, most plausible
    /// first, each policy-compliant where the domain can tell. Must be deterministic for a
    /// given `rng` state. May be empty (no sensible call in this context).
    fn propose_calls(&self, tool: &str, ctx: &GroundingContext, rng: &mut ChaCha8Rng)
    -> Vec<Value>;

    /// Machine-checkable policy rules for a call about to be made on this state:
    /// `Err(reason)` when the policy forbids it even though the tool itself would accept it.
    fn check_policy(&self, tool: &str, args: &Value) -> Result<(), PolicyViolation>;

    /// What this customer knows about themself: identity for authentication first, then
    /// name, payment methods described the way a customer knows them, entities they own.
    fn user_facts(&self, user_id: &str) -> Vec<UserFact>;

    /// A second-person sentence stating what the customer wants from this (successful)
    /// call, using only customer-knowable facts (e.g. "You want to cancel reservation
    /// MB4K9Z."). `None` for calls the agent makes on its own (lookups the customer did not
    /// ask for). `output` is the call's output on the state it ran on.
    fn describe_request(&self, tool: &str, args: &Value, output: &str) -> Option<String>;

    /// The outputs read tools give about this customer once identified (their profile and
    /// each order / reservation they own): what an agent can look up, for sufficiency checks.
    fn customer_records(&self, user_id: &str) -> Vec<String>;

    /// Update the context after a successful call (ids the output revealed): by default
    /// what the tool's `learns` declare and every `*_id` string of a JSON output
    /// (`tools.toml`, [`kit::declared::observe`]).
    fn observe(&self, tool: &str, args: &Value, output: &str, ctx: &mut GroundingContext) {
        kit::declared::observe(self.tool_specs(), tool, args, output, ctx);
    }

    /// Internal identifiers among a call's argument values that a customer could not know
    /// (payment ids, item ids, ...), which never appear in an instruction: by default the
    /// strings at the tool's `internal` paths (`tools.toml`).
    fn internal_ids(&self, tool: &str, args: &Value) -> Vec<String> {
        let declared = kit::specs::declared(self.tool_specs(), tool);
        declared.map_or_else(Vec::new, |d| d.internal_ids(args))
    }

    /// Values the agent must tell the customer after this call, when the customer asked for
    /// the information (tau-bench task `outputs`): by default the values at the tool's `tells`
    /// pointers; `database_hooks!` may name a function for the reads that declare none.
    fn required_outputs(&self, tool: &str, _args: &Value, output: &str) -> Vec<String> {
        let declared = kit::specs::declared(self.tool_specs(), tool);
        declared.and_then(|d| d.told(output)).unwrap_or_default()
    }

    /// Argument and output fields whose values a customer never sees (an agent id, a
    /// package id), which no instruction may name (`quality::knowable`): by default the
    /// `internal_fields` of `tools.toml`.
    fn internal_id_fields(&self) -> &'static [&'static str] {
        let first = self.tool_specs().into_iter().next();
        first.map_or(&[], |s| s.declared.internal_fields)
    }

    /// The `*_id` fields of the customer's records that name the catalogue, not the
    /// customer: `catalogue_ids` of `tools.toml`.
    fn catalogue_id_fields(&self) -> &'static [&'static str] {
        let first = self.tool_specs().into_iter().next();
        first.map_or(&[], |s| s.declared.catalogue_ids)
    }

    /// Whether the policy has the agent identify the customer by a lookup before changing
    /// anything (a clean SFT row must then show that lookup first). Movie has no accounts.
    fn identifies_customer(&self) -> bool {
        true
    }

    /// The active ruleset's name; `None` for domains with a single set of rules.
    fn ruleset(&self) -> Option<&'static str> {
        None
    }

    /// Switch to the ruleset `name` (one of the domain's [`Domain::rulesets`]); tools,
    /// proposals and policy checks follow it from then on. Callers go through
    /// [`apply_ruleset`], which checks the name first.
    fn set_ruleset(&mut self, name: &str) -> Result<(), String> {
        Err(format!("no ruleset '{name}'"))
    }
}

/// The object-safe environment the pipeline drives: a forkable database whose tools run by
/// name, with the domain's [`Hooks`].
pub trait Environment: Hooks {
    fn fork(&self) -> Box<dyn Environment>;
    /// Validate and run one call. Unknown tool, bad arguments and rule violations come back
    /// as `is_error` observations in tau-bench's `Error: ...` form.
    fn invoke(&mut self, tool: &str, args: &Value) -> ToolOutput;
    fn state_hash(&self) -> StateHash;
    fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)>;
    fn to_tau_bench(&self) -> BTreeMap<String, Value>;
}

impl<D: Database> Environment for D {
    fn fork(&self) -> Box<dyn Environment> {
        Box::new(self.clone())
    }

    fn invoke(&mut self, tool: &str, args: &Value) -> ToolOutput {
        let Some(t) = D::tools().iter().find(|t| t.spec.name == tool) else {
            return ToolOutput {
                text: format!("Unknown action {tool}"),
                is_error: true,
            };
        };
        let result =
            args::validate(&t.spec.parameters, args).and_then(|()| (t.run)(self, &Args::new(args)));
        match result {
            Ok(text) => ToolOutput {
                text,
                is_error: false,
            },
            Err(msg) => ToolOutput {
                text: match msg.strip_prefix(PLAIN_ERROR) {
                    Some(sentence) => sentence.to_string(),
                    None => format!("Error: {msg}"),
                },
                is_error: true,
            },
        }
    }

    fn state_hash(&self) -> StateHash {
        Database::state_hash(self)
    }
    fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)> {
        Database::tables(self)
    }
    fn to_tau_bench(&self) -> BTreeMap<String, Value> {
        Database::to_tau_bench(self)
    }
}

/// A registry entry.
pub trait Domain: Send + Sync {
    /// The key used everywhere: `src/domain/<name>/`, `graphs/<name>.json`,
    /// `policies/<name>.md`, `domain=<name>` partitions.
    fn name(&self) -> &'static str;

    fn tool_specs(&self) -> Vec<&'static ToolSpec>;

    /// The public environment this domain is API-compatible with (its differential tests'
    /// oracle), as the generated reference pages name it (`tracer docs`).
    fn reference(&self) -> &'static str;

    /// Whether training tasks use a database of their own (separate from evaluation).
    fn separate_train_db(&self) -> bool {
        false
    }

    /// The database a dependency graph's edges are demonstrated on: the training database
    /// when the domain has one (the paper-scale data most traces ground on; an evaluation
    /// database may be a small imported reference file on which some writes never apply),
    /// else the domain's only one.
    fn graph_split(&self) -> Split {
        if self.separate_train_db() {
            Split::Train
        } else {
            Split::Eval
        }
    }

    /// The variants of this domain's rules, the default first; empty when it has one.
    fn rulesets(&self) -> &'static [Ruleset] {
        &[]
    }

    /// The deterministic synthetic database at the paper's scale, under the default ruleset.
    fn generate(&self, seed: u64, split: Split) -> Box<dyn Environment>;

    /// Build an environment from reference-format tables: table name (a tau-bench file
    /// stem, or a top-level key of a tau2 `db.json`) -> JSON. Domains that only read
    /// tau-bench directories keep the default, which says so.
    fn import_tables(
        &self,
        tables: BTreeMap<String, Value>,
        origin: &Path,
    ) -> Result<Box<dyn Environment>, DomainError> {
        let _ = tables;
        Err(DomainError::Import {
            path: origin.display().to_string(),
            message: format!(
                "the {} domain imports tau-bench directories, not a single tables file",
                self.name()
            ),
        })
    }

    /// The folder a domain keeps its policy and graph in (`policy.md`, `graph.json`), for a
    /// domain outside the crate, relative to the project root when inside it; `None` for
    /// built-in domains (`policies/`, `graphs/`).
    fn folder(&self) -> Option<&'static Path> {
        None
    }

    /// How a scripted instruction ties the customer to the service ("who fills
    /// prescriptions at this pharmacy"), for a domain outside the crate (built-in domains keep
    /// theirs in `src/domain/<d>/situations.toml`).
    fn ties(&self) -> Vec<String> {
        Vec::new()
    }

    /// The hash of the domain's own code when it lives outside the crate (a remote
    /// domain's folder); built-in domains' come from the build script.
    fn own_code_hash(&self) -> Option<String> {
        None
    }

    /// Read a tau-bench-format database directory (e.g. users.json, flights.json, ...):
    /// by default every `<table>.json` of the directory, handed to [`Domain::import_tables`].
    fn import_tau_bench(&self, dir: &Path) -> Result<Box<dyn Environment>, DomainError> {
        self.import_tables(read_table_dir(dir)?, dir)
    }
}

/// Every `<stem>.json` of a directory as stem -> JSON (sorted by stem).
pub fn read_table_dir(dir: &Path) -> Result<BTreeMap<String, Value>, DomainError> {
    let entries = std::fs::read_dir(dir).map_err(|e| DomainError::Import {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let mut tables = BTreeMap::new();
    for e in entries.flatten() {
        let path = e.path();
        let Some(stem) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        tables.insert(stem.to_string(), read_json_file(dir, stem)?);
    }
    if tables.is_empty() {
        return Err(DomainError::Import {
            path: dir.display().to_string(),
            message: "no <table>.json files".into(),
        });
    }
    Ok(tables)
}

/// A tau2 `db.json`: one JSON object whose top-level keys are the tables.
pub fn read_tau2_db(path: &Path) -> Result<BTreeMap<String, Value>, DomainError> {
    let err = |message: String| DomainError::Import {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    match serde_json::from_str::<Value>(&text).map_err(|e| err(format!("invalid JSON: {e}")))? {
        Value::Object(map) => Ok(map.into_iter().collect()),
        _ => Err(err(
            "expected a JSON object whose keys are the tables".into()
        )),
    }
}

/// Import a reference database from either form: a tau2 `db.json` file or a tau-bench
/// directory of `<table>.json` files.
pub fn import_reference(
    domain: &dyn Domain,
    path: &Path,
) -> Result<Box<dyn Environment>, DomainError> {
    if path.is_file() {
        domain.import_tables(read_tau2_db(path)?, path)
    } else {
        domain.import_tau_bench(path)
    }
}

/// The ruleset a run uses: `name` checked against the domain's list, or the domain's
/// default when `name` is `None`; `None` for a domain with a single set of rules. The error
/// names the domain and lists the known rulesets.
pub fn resolve_ruleset(
    domain: &dyn Domain,
    name: Option<&str>,
) -> Result<Option<&'static str>, DomainError> {
    let known = domain.rulesets();
    match name {
        None => Ok(known.first().map(|r| r.name)),
        Some(n) => known
            .iter()
            .find(|r| r.name == n)
            .map(|r| Some(r.name))
            .ok_or_else(|| {
                DomainError::Other(if known.is_empty() {
                    format!(
                        "domain '{}' has no rulesets (asked for '{n}')",
                        domain.name()
                    )
                } else {
                    format!(
                        "domain '{}': unknown ruleset '{n}' (known: {})",
                        domain.name(),
                        known.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
                    )
                })
            }),
    }
}

/// Put `env` under the ruleset `name` (see [`resolve_ruleset`]); a domain without rulesets
/// is returned unchanged when `name` is `None`.
pub fn apply_ruleset(
    domain: &dyn Domain,
    mut env: Box<dyn Environment>,
    name: Option<&str>,
) -> Result<Box<dyn Environment>, DomainError> {
    if let Some(r) = resolve_ruleset(domain, name)? {
        env.set_ruleset(r)
            .map_err(|e| DomainError::Other(format!("domain '{}': {e}", domain.name())))?;
    }
    Ok(env)
}

/// Read and parse one JSON file of a tau-bench database directory.
pub fn read_json_file(dir: &Path, stem: &str) -> Result<Value, DomainError> {
    let path = dir.join(format!("{stem}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| DomainError::Import {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| DomainError::Import {
        path: path.display().to_string(),
        message: format!("invalid JSON: {e}"),
    })
}

/// Deserialize a tau-bench table (`{id: row}`) into typed rows, naming the bad row on error.
pub fn parse_table<T: serde::de::DeserializeOwned>(
    dir: &Path,
    stem: &str,
) -> Result<BTreeMap<String, T>, DomainError> {
    let path = dir.join(format!("{stem}.json"));
    let value = read_json_file(dir, stem)?;
    let Value::Object(map) = value else {
        return Err(DomainError::Import {
            path: path.display().to_string(),
            message: "expected a JSON object keyed by id".into(),
        });
    };
    map.into_iter()
        .map(|(k, v)| {
            serde_json::from_value(v)
                .map(|row| (k.clone(), row))
                .map_err(|e| DomainError::Import {
                    path: path.display().to_string(),
                    message: format!("row '{k}': {e}"),
                })
        })
        .collect()
}
