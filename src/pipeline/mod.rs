//! The stage DAG: ordering (petgraph), staleness, provenance, atomic outputs.
//!
//! Every stage runs once per domain and owns one directory,
//! `output/<stage>/domain=<d>/`, holding its files and a `_manifest.json`. The manifest
//! records the stage's *fingerprint* — a hash of the tool version, a hash of the crate's
//! source code (any code change re-runs the stages; they are cheap next to a stale artifact),
//! its config hash, the seed, and the hashes of everything it read (upstream outputs and
//! source files such as `graphs/<d>.json`) — and the hash of every file it wrote.
//! A stage is fresh when its recorded fingerprint equals the recomputed one and its files
//! still hash as recorded; otherwise it re-runs, and everything downstream becomes stale
//! through the changed input hashes. Outputs are written into a temporary sibling
//! directory and swapped into place only when the stage succeeded, so a failed or killed
//! run leaves the previous artifacts untouched and never a partial one.
//!
//! Failure semantics (README, "Failure semantics"): one writer per output root
//! ([`lock`]); the swap is crash-safe — a kill at any instant leaves either the old or the
//! new complete output, and [`Runner::recover`] finishes or undoes a half-done swap and
//! removes leftovers before the next run; a stage's journal ([`journal`]) is deleted only
//! after its output is in place; staleness is transitive (a stage downstream of a stale one
//! is stale); configs are checked by one shared path ([`validate`]).
//!
//! Item-parallel stages also run as shards (`--shard i/N`, [`shard`]): each shard runs the
//! stage on the items it owns into its own part directory, with its own journal and
//! response cache, under a shared output lock; [`Runner::merge`] checks that the parts form
//! one complete set made with the current fingerprint and has the stage write its ordinary
//! output from them, byte-identical to a single-process run.
//!
//! Architecture invariant: the pipeline knows stages only through the [`Stage`] trait and
//! the registry it is handed ([`Dag::new`]); it imports no stage module and knows nothing
//! of what a stage computes.

pub mod failpoint;
pub mod journal;
pub mod lock;
pub mod shard;
pub mod validate;

pub use journal::{Journal, JournalError, JournalKey, OnMismatch, Resumed};
pub use lock::{LockError, OutputLock};
pub use shard::Shard;

use crate::artifact::{ArtifactError, Provenance, sha256_file, sha256_hex, write_atomic};
use crate::config::{self, ConfigError, Paths};
use crate::domain::{self, Domain, DomainError};
use petgraph::graphmap::DiGraphMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub const MANIFEST: &str = "_manifest.json";

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("unknown stage '{name}' (stages: {known})")]
    UnknownStage { name: String, known: String },
    #[error("stage '{stage}', domain '{domain}': {message}")]
    Stage {
        stage: String,
        domain: String,
        message: String,
    },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The shared validation found problems: the first, and how many more.
    #[error("{0}")]
    Invalid(String),
}

/// What a stage sees while it runs for one domain.
pub struct StageContext<'a> {
    pub paths: &'a Paths,
    pub stage: &'static str,
    pub domain: &'static dyn Domain,
    pub seed: u64,
    pub config: toml::Table,
    pub config_path: PathBuf,
    /// Where this run writes (a temporary directory, swapped into place on success).
    pub out_dir: PathBuf,
    /// Input path (relative to the output root or project root) -> SHA-256.
    pub inputs: BTreeMap<String, String>,
    /// The shard this run computes (`None`: every item).
    pub shard: Option<Shard>,
}

impl StageContext<'_> {
    /// The finished output directory of an upstream stage for this domain.
    pub fn input_dir(&self, stage: &str) -> PathBuf {
        stage_dir(&self.paths.output, stage, self.domain.name())
    }

    pub fn out(&self, file: &str) -> PathBuf {
        self.out_dir.join(file)
    }

    /// Whether this run computes the item with this stable id (always, unless sharded).
    pub fn owns(&self, id: &str) -> bool {
        self.shard.is_none_or(|s| s.owns(id))
    }

    /// The response cache of this run's endpoint roles: the output root's, or the shard's
    /// own file (redb takes one writer per file, and shards run side by side).
    pub fn response_cache(&self) -> PathBuf {
        match self.shard {
            Some(s) => shard::cache_path(&self.paths.output, self.stage, s),
            None => self.paths.output.join(RESPONSE_CACHE),
        }
    }

    /// Provenance for files this stage writes.
    pub fn provenance(&self) -> Provenance {
        Provenance {
            version: env!("CARGO_PKG_VERSION").to_string(),
            stage: self.stage.to_string(),
            domain: self.domain.name().to_string(),
            config_hash: config::config_hash(&self.config),
            seed: self.seed,
            inputs: self.inputs.clone(),
        }
    }

    /// Parse this stage's config into its typed form (errors name the file and field).
    pub fn typed_config<T: serde::de::DeserializeOwned>(&self) -> Result<T, PipelineError> {
        Ok(config::parse_typed(&self.config_path, &self.config)?)
    }

    /// A journal file for resumable stages: it lives outside the temporary output
    /// directory (so a killed run keeps it) and is keyed by everything that determines the
    /// stage's result (inputs, config, seed, code), so a stale journal is never reused.
    /// The runner deletes it once the stage's output is in place.
    pub fn journal_path(&self) -> PathBuf {
        journal_path(
            &self.paths.output,
            self.stage,
            self.domain.name(),
            &config::config_hash(&self.config),
            self.seed,
            &self.inputs,
            self.shard,
        )
    }

    /// The key written into this stage's journal (checked again when it is resumed).
    pub fn journal_key(&self) -> JournalKey {
        let inputs = serde_json::to_string(&self.inputs).unwrap_or_default();
        [
            ("stage", self.stage.to_string()),
            ("domain", self.domain.name().to_string()),
            ("config", config::config_hash(&self.config)),
            ("seed", self.seed.to_string()),
            ("inputs", sha256_hex(inputs.as_bytes())),
            ("code", env!("TRACER_CODE_HASH").to_string()),
            ("tool", env!("CARGO_PKG_VERSION").to_string()),
            (
                "shard",
                self.shard.map_or("all".to_string(), |s| s.to_string()),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    pub fn fail(&self, message: impl Into<String>) -> PipelineError {
        PipelineError::Stage {
            stage: self.stage.to_string(),
            domain: self.domain.name().to_string(),
            message: message.into(),
        }
    }
}

/// One stage of the DAG.
pub trait Stage: Sync {
    fn name(&self) -> &'static str;
    /// Upstream stages whose outputs this stage reads.
    fn inputs(&self) -> &'static [&'static str];
    /// Project files (relative to the root) this stage reads for a domain; `config` is the
    /// stage's TOML table (a config may name files, e.g. a reference database).
    fn source_files(&self, _domain: &str, _config: &toml::Table) -> Vec<PathBuf> {
        Vec::new()
    }
    /// Problems in the project files this stage reads (beyond its TOML, which
    /// `validate_config` checks) for the given domains, one line each: a graph that does
    /// not load, anchors that do not parse. Part of the one validation path.
    fn validate_sources(&self, _paths: &Paths, _domains: &[&'static dyn Domain]) -> Vec<String> {
        Vec::new()
    }
    /// Bump when the stage's code changes what it writes.
    fn version(&self) -> u32 {
        1
    }
    /// Check the stage's config without running anything (`tracer validate`).
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError>;
    /// Check the endpoints this stage's config names (key set, reachable, model served);
    /// the runner calls it for every stage it may run, before any stage starts.
    fn preflight(&self, _path: &Path, _table: &toml::Table) -> Result<(), String> {
        Ok(())
    }
    /// Compute and write the outputs into `ctx.out_dir`; return a one-line summary. A
    /// shardable stage computes only the items `ctx.owns`.
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError>;
    /// Item-parallel stages return true: they honour `ctx.shard` in `run` and implement
    /// `merge`.
    fn shardable(&self) -> bool {
        false
    }
    /// Write into `ctx.out_dir` exactly what `run` writes without a shard (same files, rows
    /// in the same order, same summary), from the complete parts of a sharded run: `parts`
    /// are the part directories in shard order, each holding what `run` wrote for it.
    fn merge(&self, ctx: &StageContext, _parts: &[PathBuf]) -> Result<String, PipelineError> {
        Err(ctx.fail("this stage is not item-parallel; it has no shards to merge"))
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub stage: String,
    pub domain: String,
    pub fingerprint: String,
    pub seed: u64,
    pub config_hash: String,
    pub inputs: BTreeMap<String, String>,
    pub outputs: BTreeMap<String, String>,
    pub summary: String,
    /// Set on a shard's part only (absent from ordinary manifests, which stay unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

/// The output root's response cache file (endpoint roles of unsharded runs).
pub const RESPONSE_CACHE: &str = ".llm-cache.redb";

pub fn stage_dir(output: &Path, stage: &str, domain: &str) -> PathBuf {
    output.join(stage).join(format!("domain={domain}"))
}

pub fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = std::fs::read_to_string(dir.join(MANIFEST)).ok()?;
    serde_json::from_str(&text).ok()
}

fn journal_dir(output: &Path, stage: &str) -> PathBuf {
    output.join(".journal").join(stage)
}

/// `domain=<d>-<key>.jsonl`, or `domain=<d>-<key>.part-<i>-of-<N>.jsonl` for a shard.
fn journal_path(
    output: &Path,
    stage: &str,
    domain: &str,
    config_hash: &str,
    seed: u64,
    inputs: &BTreeMap<String, String>,
    shard: Option<Shard>,
) -> PathBuf {
    let key = fingerprint_material(stage, domain, config_hash, seed, inputs);
    let name = format!(
        "domain={domain}-{}{}.jsonl",
        &sha256_hex(key.as_bytes())[..16],
        shard.map_or(String::new(), |s| format!(".{}", s.part_name()))
    );
    journal_dir(output, stage).join(name)
}

/// Which journals of a (stage, domain) a cleanup touches.
#[derive(Clone, Copy)]
enum JournalsOf {
    /// Unsharded runs' journals only.
    Whole,
    /// One shard's journals.
    Shard(Shard),
    /// Every shard's journals (after a merge).
    AnyShard,
}

/// Remove the journals of (stage, domain) of the given kind except `keep`; the removed
/// paths.
fn remove_journals(
    output: &Path,
    stage: &str,
    domain: &str,
    keep: Option<&Path>,
    of: JournalsOf,
) -> Vec<PathBuf> {
    let prefix = format!("domain={domain}-");
    let mut removed = Vec::new();
    if let Ok(entries) = std::fs::read_dir(journal_dir(output, stage)) {
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            let kind_matches = match of {
                JournalsOf::Whole => !name.contains(".part-"),
                JournalsOf::Shard(s) => name.ends_with(&format!(".{}.jsonl", s.part_name())),
                JournalsOf::AnyShard => name.contains(".part-"),
            };
            if name.starts_with(&prefix)
                && name.ends_with(".jsonl")
                && kind_matches
                && Some(path.as_path()) != keep
                && std::fs::remove_file(&path).is_ok()
            {
                removed.push(path);
            }
        }
    }
    removed
}

/// True when `dir` holds a complete stage output: a manifest whose every file hashes as
/// recorded.
fn is_complete(dir: &Path) -> bool {
    read_manifest(dir).is_some_and(|m| hash_outputs(dir).is_ok_and(|o| o == m.outputs))
}

/// The stage registry as a DAG.
pub struct Dag {
    stages: &'static [&'static dyn Stage],
}

/// Freshness of one (stage, domain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    Fresh,
    Stale(String),
}

impl Dag {
    /// The DAG of a stage registry (the caller injects it: `crate::stage::registry()`).
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

    fn graph(&self) -> DiGraphMap<&'static str, ()> {
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

/// Inputs (upstream outputs and source files) of one (stage, domain), with their hashes.
fn collect_inputs(
    paths: &Paths,
    stage: &dyn Stage,
    domain: &str,
    config: &toml::Table,
) -> Result<BTreeMap<String, String>, Result<PipelineError, String>> {
    let mut inputs = BTreeMap::new();
    for upstream in stage.inputs() {
        let dir = stage_dir(&paths.output, upstream, domain);
        let manifest =
            read_manifest(&dir).ok_or_else(|| Err(format!("input '{upstream}' missing")))?;
        for (file, hash) in manifest.outputs {
            inputs.insert(format!("{upstream}/domain={domain}/{file}"), hash);
        }
    }
    for rel in stage.source_files(domain, config) {
        let path = paths.root.join(&rel);
        let hash = sha256_file(&path).map_err(|e| Ok(PipelineError::Artifact(e)))?;
        inputs.insert(rel.display().to_string(), hash);
    }
    Ok(inputs)
}

include!(concat!(env!("OUT_DIR"), "/domain_code_hashes.rs"));

/// The source hash a stage's run for `domain` depends on: the shared code plus that
/// domain's own folder (see build.rs), so editing one domain leaves the others fresh.
pub fn code_hash(domain: &str) -> String {
    let own = DOMAIN_CODE_HASHES
        .iter()
        .find(|(d, _)| *d == domain)
        .map_or("", |(_, h)| h);
    format!("{}-{own}", env!("TRACER_CODE_HASH"))
}

fn fingerprint_material(
    stage: &str,
    domain: &str,
    config_hash: &str,
    seed: u64,
    inputs: &BTreeMap<String, String>,
) -> String {
    serde_json::json!({
        "tool": env!("CARGO_PKG_VERSION"),
        "code": code_hash(domain),
        "stage": stage,
        "config": config_hash,
        "seed": seed,
        "inputs": inputs,
    })
    .to_string()
}

fn fingerprint(
    stage: &dyn Stage,
    domain: &str,
    config_hash: &str,
    seed: u64,
    inputs: &BTreeMap<String, String>,
) -> String {
    let material = fingerprint_material(stage.name(), domain, config_hash, seed, inputs);
    sha256_hex(format!("{material}|{}", stage.version()).as_bytes())
}

/// Hash every file of a finished output directory (the manifest excluded).
fn hash_outputs(dir: &Path) -> Result<BTreeMap<String, String>, ArtifactError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| ArtifactError::io(&d, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| ArtifactError::io(&d, e))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().and_then(|n| n.to_str()) != Some(MANIFEST) {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, sha256_file(&path)?);
            }
        }
    }
    Ok(out)
}

/// A pipeline run over some domains.
pub struct Runner<'a> {
    pub paths: &'a Paths,
    pub seed: u64,
    pub domains: Vec<&'static dyn Domain>,
    pub dag: Dag,
    /// Re-run even fresh stages.
    pub force: bool,
}

/// What happened to one (stage, domain).
#[derive(Clone, Debug)]
pub struct StepReport {
    pub stage: &'static str,
    pub domain: &'static str,
    pub ran: bool,
    pub summary: String,
    /// Housekeeping done on the way (journals of other runs removed), to log.
    pub notes: Vec<String>,
}

impl<'a> Runner<'a> {
    pub fn new(
        paths: &'a Paths,
        dag: Dag,
        seed: u64,
        domain_names: &[String],
    ) -> Result<Self, PipelineError> {
        let domains = if domain_names.is_empty() {
            domain::registry().to_vec()
        } else {
            domain_names
                .iter()
                .map(|d| domain::find(d))
                .collect::<Result<Vec<_>, _>>()?
        };
        Ok(Runner {
            paths,
            seed,
            domains,
            dag,
            force: false,
        })
    }

    fn stage_config(&self, stage: &dyn Stage) -> Result<(PathBuf, toml::Table), PipelineError> {
        let path = self.paths.stage_config(stage.name());
        let table = config::read_table(&path)?;
        stage.validate_config(&path, &table)?;
        Ok((path, table))
    }

    /// Fresh or stale (with why) for one (stage, domain).
    pub fn freshness(
        &self,
        stage: &dyn Stage,
        domain: &dyn Domain,
    ) -> Result<Freshness, PipelineError> {
        let dir = stage_dir(&self.paths.output, stage.name(), domain.name());
        let Some(manifest) = read_manifest(&dir) else {
            return Ok(Freshness::Stale("never run".into()));
        };
        let (_, table) = self.stage_config(stage)?;
        let inputs = match collect_inputs(self.paths, stage, domain.name(), &table) {
            Ok(i) => i,
            Err(Err(why)) => return Ok(Freshness::Stale(why)),
            Err(Ok(e)) => return Err(e),
        };
        let config_hash = config::config_hash(&table);
        if manifest.config_hash != config_hash {
            return Ok(Freshness::Stale("config changed".into()));
        }
        if manifest.seed != self.seed {
            return Ok(Freshness::Stale("seed changed".into()));
        }
        if manifest.inputs != inputs {
            return Ok(Freshness::Stale("inputs changed".into()));
        }
        if manifest.fingerprint
            != fingerprint(stage, domain.name(), &config_hash, self.seed, &inputs)
        {
            return Ok(Freshness::Stale("code changed".into()));
        }
        match hash_outputs(&dir) {
            Ok(outputs) if outputs == manifest.outputs => Ok(Freshness::Fresh),
            _ => Ok(Freshness::Stale("outputs modified or missing".into())),
        }
    }

    /// Fresh or stale for each of `stages` (in dependency order) and each domain, where a
    /// stage downstream of a stale one is stale too, as `run` treats it.
    pub fn status(
        &self,
        stages: &[&'static dyn Stage],
    ) -> Result<Vec<(&'static str, &'static str, Freshness)>, PipelineError> {
        let mut stale: std::collections::BTreeSet<(&str, &str)> = Default::default();
        let mut out = Vec::new();
        for &stage in stages {
            for &domain in &self.domains {
                let mut state = self.freshness(stage, domain)?;
                if state == Freshness::Fresh
                    && let Some(up) = stage
                        .inputs()
                        .iter()
                        .find(|i| stale.contains(&(**i, domain.name())))
                {
                    state = Freshness::Stale(format!("upstream '{up}' is stale"));
                }
                if state != Freshness::Fresh {
                    stale.insert((stage.name(), domain.name()));
                }
                out.push((stage.name(), domain.name(), state));
            }
        }
        Ok(out)
    }

    /// The path of `file` in the output of (`stage`, `domain`), after checking that it
    /// still hashes as its manifest records and (unless `allow_stale`) that the stage is
    /// fresh, upstream included. For readers that hand artifacts on (`tracer export`).
    pub fn checked_output(
        &self,
        stage: &str,
        domain: &'static dyn Domain,
        file: &str,
        allow_stale: bool,
    ) -> Result<PathBuf, PipelineError> {
        let fail = |message: String| PipelineError::Stage {
            stage: stage.to_string(),
            domain: domain.name().to_string(),
            message,
        };
        let dir = stage_dir(&self.paths.output, stage, domain.name());
        let path = dir.join(file);
        let manifest = read_manifest(&dir)
            .ok_or_else(|| fail(format!("never run; `tracer run {stage}` first")))?;
        let recorded = manifest
            .outputs
            .get(file)
            .ok_or_else(|| fail(format!("{}: not in its manifest", path.display())))?;
        if sha256_file(&path).ok().as_ref() != Some(recorded) {
            return Err(fail(format!(
                "{}: does not match its manifest (edited or corrupted); `tracer run {stage}` regenerates it",
                path.display()
            )));
        }
        if !allow_stale {
            let plan = self.dag.plan(stage)?;
            let this_domain = Runner {
                paths: self.paths,
                seed: self.seed,
                domains: vec![domain],
                dag: Dag {
                    stages: self.dag.stages,
                },
                force: false,
            };
            // The plan ends with `stage` itself, after everything upstream of it.
            if let Some((_, _, Freshness::Stale(why))) = this_domain.status(&plan)?.pop() {
                return Err(fail(format!(
                    "stale ({why}); `tracer run {stage}` first, or pass --allow-stale"
                )));
            }
        }
        Ok(path)
    }

    /// Check the configs of the stages `target` plans and the project files of this run's
    /// domains (the path `tracer validate` takes); the first problem, counting the rest.
    pub fn validate(&self, target: &str) -> Result<(), PipelineError> {
        let plan = self.dag.plan(target)?;
        let problems = validate::problems(
            self.paths,
            &validate::Scope {
                stages: &plan,
                registry: self.dag.stages(),
                domains: &self.domains,
            },
        );
        match problems.as_slice() {
            [] => Ok(()),
            [one] => Err(PipelineError::Invalid(one.clone())),
            [first, rest @ ..] => Err(PipelineError::Invalid(format!(
                "{first} (and {} more problem(s); `tracer validate` lists them)",
                rest.len()
            ))),
        }
    }

    /// Finish or undo what killed runs left behind in every stage directory, and remove
    /// leftovers: a stage output that is missing is restored from a complete temporary
    /// directory (the new output, its swap was cut short) or else from the directory moved
    /// aside (the old one); every other `.tmp-*` / `.old-*` directory is removed. Call it
    /// holding the output lock (another writer's temporary directory looks the same). Returns
    /// one line per action, to log.
    pub fn recover(&self) -> Result<Vec<String>, PipelineError> {
        let mut notes = Vec::new();
        for stage in self.dag.stages() {
            let stage_root = self.paths.output.join(stage.name());
            let Ok(entries) = std::fs::read_dir(&stage_root) else {
                continue;
            };
            let mut leftovers: BTreeMap<String, (Vec<PathBuf>, Vec<PathBuf>)> = BTreeMap::new();
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                for (prefix, is_tmp) in [(".tmp-", true), (".old-", false)] {
                    if let Some((target, _pid)) =
                        name.strip_prefix(prefix).and_then(|r| r.rsplit_once('-'))
                    {
                        let slot = leftovers.entry(target.to_string()).or_default();
                        if is_tmp {
                            slot.0.push(e.path());
                        } else {
                            slot.1.push(e.path());
                        }
                    }
                }
            }
            for (target, (mut tmps, mut olds)) in leftovers {
                tmps.sort();
                olds.sort();
                let dir = stage_root.join(&target);
                if !dir.exists() {
                    let restore = tmps
                        .iter()
                        .position(|t| is_complete(t))
                        .map(|i| (tmps.remove(i), "finished the interrupted swap with"))
                        .or_else(|| olds.pop().map(|o| (o, "restored the previous output from")));
                    if let Some((from, what)) = restore {
                        std::fs::rename(&from, &dir).map_err(|e| ArtifactError::io(&dir, e))?;
                        notes.push(format!("{}: {what} {}", dir.display(), from.display()));
                    }
                }
                for left in tmps.iter().chain(&olds) {
                    std::fs::remove_dir_all(left).map_err(|e| ArtifactError::io(left, e))?;
                    notes.push(format!("removed leftover {}", left.display()));
                }
            }
        }
        // Temporary files of atomic writes outside stage directories (the emotion model).
        if let Ok(entries) = std::fs::read_dir(self.paths.output.join("emotion")) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "tmp") && std::fs::remove_file(&p).is_ok() {
                    notes.push(format!("removed leftover {}", p.display()));
                }
            }
        }
        Ok(notes)
    }

    /// Run `target` and whatever is stale upstream of it.
    pub fn run(
        &self,
        target: &str,
        mut on_step: impl FnMut(&StepReport),
    ) -> Result<Vec<StepReport>, PipelineError> {
        self.validate(target)?;
        let plan = self.dag.plan(target)?;
        // Preflight every stage that may run (stale now, or downstream of one that is), so
        // a missing key or a dead endpoint is one error before any work starts.
        let mut may_run: Vec<&str> = Vec::new();
        for stage in &plan {
            let upstream_runs = stage.inputs().iter().any(|i| may_run.contains(i));
            let mut stale = self.force || upstream_runs;
            for &domain in &self.domains {
                stale = stale || self.freshness(*stage, domain)? != Freshness::Fresh;
            }
            if stale {
                may_run.push(stage.name());
                let (path, table) = self.stage_config(*stage)?;
                stage
                    .preflight(&path, &table)
                    .map_err(|message| PipelineError::Stage {
                        stage: stage.name().to_string(),
                        domain: "*".to_string(),
                        message,
                    })?;
            }
        }
        let mut reports = Vec::new();
        for stage in plan {
            for &domain in &self.domains {
                let report = self.run_one(stage, domain)?;
                on_step(&report);
                reports.push(report);
            }
        }
        Ok(reports)
    }

    fn run_one(
        &self,
        stage: &'static dyn Stage,
        domain: &'static dyn Domain,
    ) -> Result<StepReport, PipelineError> {
        let dir = stage_dir(&self.paths.output, stage.name(), domain.name());
        let mut notes = Vec::new();
        if !self.force && self.freshness(stage, domain)? == Freshness::Fresh {
            let summary = read_manifest(&dir).map(|m| m.summary).unwrap_or_default();
            // A journal of a finished stage is what a kill between the swap and its
            // deletion leaves: the output holds all of it.
            for p in remove_journals(
                &self.paths.output,
                stage.name(),
                domain.name(),
                None,
                JournalsOf::Whole,
            ) {
                notes.push(format!(
                    "removed the journal of the finished stage: {}",
                    p.display()
                ));
            }
            return Ok(StepReport {
                stage: stage.name(),
                domain: domain.name(),
                ran: false,
                summary,
                notes,
            });
        }
        let (config_path, table) = self.stage_config(stage)?;
        let inputs = self.inputs_of(stage, domain, &table)?;
        // A complete set of shard parts made with this very fingerprint is merged rather
        // than computed again (`tracer run` after a Slurm array finished).
        let mut parts = None;
        if stage.shardable() && !self.force {
            let parts_dir = shard::parts_dir(&self.paths.output, stage.name(), domain.name());
            let scan = shard::scan(&parts_dir);
            if !scan.parts.is_empty() || !scan.foreign.is_empty() {
                let fp = fingerprint(
                    stage,
                    domain.name(),
                    &config::config_hash(&table),
                    self.seed,
                    &inputs,
                );
                match shard::check_complete(
                    &scan,
                    &parts_dir,
                    stage.name(),
                    domain.name(),
                    &fp,
                    |p| hash_outputs(p).ok(),
                ) {
                    Ok(complete) => parts = Some(complete),
                    Err(why) => notes.push(format!(
                        "shard parts not used, computing every item here instead: {why}"
                    )),
                }
            }
        }
        self.produce(stage, domain, (config_path, table), inputs, parts, notes)
    }

    /// The inputs (stage, domain) would run with now; a missing upstream output is a stage
    /// error.
    fn inputs_of(
        &self,
        stage: &dyn Stage,
        domain: &dyn Domain,
        table: &toml::Table,
    ) -> Result<BTreeMap<String, String>, PipelineError> {
        collect_inputs(self.paths, stage, domain.name(), table).map_err(|e| match e {
            Ok(err) => err,
            Err(why) => PipelineError::Stage {
                stage: stage.name().into(),
                domain: domain.name().into(),
                message: why,
            },
        })
    }

    /// Write the ordinary output of (stage, domain): computed by the stage, or merged from
    /// `parts`; then manifest, swap, and cleanup of the journals (and merged parts).
    fn produce(
        &self,
        stage: &'static dyn Stage,
        domain: &'static dyn Domain,
        (config_path, table): (PathBuf, toml::Table),
        inputs: BTreeMap<String, String>,
        parts: Option<shard::CompleteParts>,
        mut notes: Vec<String>,
    ) -> Result<StepReport, PipelineError> {
        let dir = stage_dir(&self.paths.output, stage.name(), domain.name());
        // Leftovers of killed runs (any pid) are never reused: the stage starts clean.
        // (`recover` has normally removed them already; this also serves library callers.)
        let prefix = format!(".tmp-domain={}-", domain.name());
        if let Some(parent) = dir.parent()
            && let Ok(entries) = std::fs::read_dir(parent)
        {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let tmp = dir.with_file_name(format!("{prefix}{}", std::process::id()));
        std::fs::create_dir_all(&tmp).map_err(|e| ArtifactError::io(&tmp, e))?;
        let ctx = StageContext {
            paths: self.paths,
            stage: stage.name(),
            domain,
            seed: self.seed,
            config: table,
            config_path,
            out_dir: tmp.clone(),
            inputs: inputs.clone(),
            shard: None,
        };
        let journal = ctx.journal_path();
        for p in remove_journals(
            &self.paths.output,
            stage.name(),
            domain.name(),
            Some(&journal),
            JournalsOf::Whole,
        ) {
            notes.push(format!(
                "removed the journal of a run with other inputs, config or code: {}",
                p.display()
            ));
        }
        failpoint::hit("stage-started", stage.name());
        let started = Instant::now();
        let result = match &parts {
            Some(p) => stage.merge(&ctx, &p.dirs),
            None => stage.run(&ctx),
        };
        let summary = match result {
            Ok(s) => s,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(e);
            }
        };
        failpoint::hit("outputs-written", stage.name());
        let config_hash = config::config_hash(&ctx.config);
        let manifest = Manifest {
            stage: stage.name().to_string(),
            domain: domain.name().to_string(),
            fingerprint: fingerprint(stage, domain.name(), &config_hash, self.seed, &inputs),
            seed: self.seed,
            config_hash,
            inputs,
            outputs: hash_outputs(&tmp)?,
            summary: summary.clone(),
            shard: None,
        };
        let json = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
        write_atomic(&tmp.join(MANIFEST), &json)?;
        failpoint::hit("manifest-written", stage.name());
        swap_into_place(&tmp, &dir, stage.name())?;
        // Only now that the new output is in place may the journal go: a kill before this
        // line resumes from it, a kill after finds the stage fresh.
        if journal.exists() {
            std::fs::remove_file(&journal).map_err(|e| ArtifactError::io(&journal, e))?;
        }
        if let Some(p) = &parts {
            // The merged output holds everything the parts and their journals held.
            remove_journals(
                &self.paths.output,
                stage.name(),
                domain.name(),
                None,
                JournalsOf::AnyShard,
            );
            let parts_dir = shard::parts_dir(&self.paths.output, stage.name(), domain.name());
            std::fs::remove_dir_all(&parts_dir).map_err(|e| ArtifactError::io(&parts_dir, e))?;
            notes.push(format!(
                "merged {} shard parts into {}",
                p.count,
                dir.display()
            ));
        }
        Ok(StepReport {
            stage: stage.name(),
            domain: domain.name(),
            ran: true,
            summary: format!("{summary} ({:.2}s)", started.elapsed().as_secs_f64()),
            notes,
        })
    }

    /// The stages that accept `--shard`, for messages.
    fn shardable_names(&self) -> String {
        self.dag
            .topo_order()
            .iter()
            .filter(|s| s.shardable())
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The shardable stage called `target`, or a one-line error.
    pub fn shardable_stage(
        &self,
        target: &str,
        what: &str,
    ) -> Result<&'static dyn Stage, PipelineError> {
        let stage = self.dag.find(target)?;
        if !stage.shardable() {
            return Err(PipelineError::Invalid(format!(
                "stage '{target}' is not item-parallel, so it has no {what}; shardable stages: {}",
                self.shardable_names()
            )));
        }
        Ok(stage)
    }

    /// Refuse unless every input of `stage` is fresh for every domain of this run: shards
    /// never run upstream stages themselves (N of them would race to write the same
    /// directories), so the error names the stage to run first.
    fn require_fresh_inputs(&self, stage: &dyn Stage, what: &str) -> Result<(), PipelineError> {
        let mut upstream = self.dag.plan(stage.name())?;
        upstream.retain(|s| s.name() != stage.name());
        // The stale input furthest downstream: running it brings the others up to date.
        let stale = self
            .status(&upstream)?
            .into_iter()
            .filter(|(name, ..)| stage.inputs().contains(name))
            .filter_map(|(name, domain, state)| match state {
                Freshness::Stale(why) => Some((name, domain, why)),
                Freshness::Fresh => None,
            })
            .last();
        match stale {
            None => Ok(()),
            Some((name, domain, why)) => Err(PipelineError::Stage {
                stage: stage.name().to_string(),
                domain: domain.to_string(),
                message: format!(
                    "{what}: input '{name}' is not fresh ({why}); run `tracer run {name}` (or `tracer run {} --upstream`) first",
                    stage.name()
                ),
            }),
        }
    }

    /// Run shard `shard` of the item-parallel stage `target` for every domain of this run:
    /// each domain's part goes to `output/.shards/<target>/domain=<d>/part-<i>-of-<N>/`.
    /// The caller holds the output lock shared and the shard's lock exclusively.
    pub fn run_shard(
        &self,
        target: &str,
        shard: Shard,
        mut on_step: impl FnMut(&StepReport),
    ) -> Result<Vec<StepReport>, PipelineError> {
        let stage = self.shardable_stage(target, "shards")?;
        self.validate(target)?;
        self.require_fresh_inputs(stage, &format!("--shard {shard}"))?;
        let (path, table) = self.stage_config(stage)?;
        stage
            .preflight(&path, &table)
            .map_err(|message| PipelineError::Stage {
                stage: stage.name().to_string(),
                domain: "*".to_string(),
                message,
            })?;
        let mut reports = Vec::new();
        for &domain in &self.domains {
            let report = self.run_one_shard(stage, domain, shard)?;
            on_step(&report);
            reports.push(report);
        }
        Ok(reports)
    }

    fn run_one_shard(
        &self,
        stage: &'static dyn Stage,
        domain: &'static dyn Domain,
        shard: Shard,
    ) -> Result<StepReport, PipelineError> {
        let report = |ran: bool, summary: String, notes: Vec<String>| StepReport {
            stage: stage.name(),
            domain: domain.name(),
            ran,
            summary,
            notes,
        };
        if !self.force && self.freshness(stage, domain)? == Freshness::Fresh {
            return Ok(report(
                false,
                "the merged output is fresh; nothing to do".into(),
                vec![],
            ));
        }
        let (config_path, table) = self.stage_config(stage)?;
        let inputs = self.inputs_of(stage, domain, &table)?;
        let config_hash = config::config_hash(&table);
        let fp = fingerprint(stage, domain.name(), &config_hash, self.seed, &inputs);
        let parts_dir = shard::parts_dir(&self.paths.output, stage.name(), domain.name());
        let part = parts_dir.join(shard.part_name());
        let mut notes = recover_slot(&part)?;
        if !self.force
            && let Some(m) = read_manifest(&part)
            && m.fingerprint == fp
            && m.shard == Some(shard)
            && is_complete(&part)
        {
            return Ok(report(false, m.summary, notes));
        }
        let tmp = parts_dir.join(format!(".tmp-{}-{}", shard.part_name(), std::process::id()));
        std::fs::create_dir_all(&tmp).map_err(|e| ArtifactError::io(&tmp, e))?;
        let ctx = StageContext {
            paths: self.paths,
            stage: stage.name(),
            domain,
            seed: self.seed,
            config: table,
            config_path,
            out_dir: tmp.clone(),
            inputs: inputs.clone(),
            shard: Some(shard),
        };
        let journal = ctx.journal_path();
        for p in remove_journals(
            &self.paths.output,
            stage.name(),
            domain.name(),
            Some(&journal),
            JournalsOf::Shard(shard),
        ) {
            notes.push(format!(
                "removed the journal of a run with other inputs, config or code: {}",
                p.display()
            ));
        }
        failpoint::hit("stage-started", stage.name());
        let started = Instant::now();
        let summary = match stage.run(&ctx) {
            Ok(s) => s,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(e);
            }
        };
        let manifest = Manifest {
            stage: stage.name().to_string(),
            domain: domain.name().to_string(),
            fingerprint: fp,
            seed: self.seed,
            config_hash,
            inputs,
            outputs: hash_outputs(&tmp)?,
            summary: summary.clone(),
            shard: Some(shard),
        };
        let json = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
        write_atomic(&tmp.join(MANIFEST), &json)?;
        swap_into_place(&tmp, &part, stage.name())?;
        if journal.exists() {
            std::fs::remove_file(&journal).map_err(|e| ArtifactError::io(&journal, e))?;
        }
        Ok(report(
            true,
            format!("{summary} ({:.2}s)", started.elapsed().as_secs_f64()),
            notes,
        ))
    }

    /// `tracer merge <target>`: for every domain, check that the shard parts form one
    /// complete set (every `i` of one `N` once, each made with the current fingerprint and
    /// unmodified) and write the stage's ordinary output from them. Every domain is checked
    /// before any is merged, so a bad part set merges nothing. A domain whose output is
    /// already fresh and has no parts is reported fresh. The caller holds the output lock.
    pub fn merge(
        &self,
        target: &str,
        mut on_step: impl FnMut(&StepReport),
    ) -> Result<Vec<StepReport>, PipelineError> {
        let stage = self.shardable_stage(target, "shard parts")?;
        self.validate(target)?;
        self.require_fresh_inputs(stage, "merge")?;
        let mut ready = Vec::new();
        for &domain in &self.domains {
            let parts_dir = shard::parts_dir(&self.paths.output, stage.name(), domain.name());
            let scan = shard::scan(&parts_dir);
            let fresh = self.freshness(stage, domain)? == Freshness::Fresh;
            if fresh && scan.parts.is_empty() && scan.foreign.is_empty() {
                ready.push((domain, None));
                continue;
            }
            let (config_path, table) = self.stage_config(stage)?;
            let inputs = self.inputs_of(stage, domain, &table)?;
            let fp = fingerprint(
                stage,
                domain.name(),
                &config::config_hash(&table),
                self.seed,
                &inputs,
            );
            let parts =
                shard::check_complete(&scan, &parts_dir, stage.name(), domain.name(), &fp, |p| {
                    hash_outputs(p).ok()
                })
                .map_err(|message| PipelineError::Stage {
                    stage: stage.name().to_string(),
                    domain: domain.name().to_string(),
                    message,
                })?;
            ready.push((domain, Some(((config_path, table), inputs, parts))));
        }
        let mut reports = Vec::new();
        for (domain, work) in ready {
            let report = match work {
                None => StepReport {
                    stage: stage.name(),
                    domain: domain.name(),
                    ran: false,
                    summary: read_manifest(&stage_dir(
                        &self.paths.output,
                        stage.name(),
                        domain.name(),
                    ))
                    .map(|m| m.summary)
                    .unwrap_or_default(),
                    notes: vec![],
                },
                Some((config, inputs, parts)) => {
                    self.produce(stage, domain, config, inputs, Some(parts), vec![])?
                }
            };
            on_step(&report);
            reports.push(report);
        }
        Ok(reports)
    }

    /// The shard parts of (stage, domain), for `tracer status`: `None` when there are none,
    /// else a line such as `2 of 3 parts done (missing 1/3)`.
    pub fn shard_status(
        &self,
        stage: &dyn Stage,
        domain: &dyn Domain,
    ) -> Result<Option<String>, PipelineError> {
        if !stage.shardable() {
            return Ok(None);
        }
        let scan = shard::scan(&shard::parts_dir(
            &self.paths.output,
            stage.name(),
            domain.name(),
        ));
        if scan.parts.is_empty() && scan.foreign.is_empty() {
            return Ok(None);
        }
        let (_, table) = self.stage_config(stage)?;
        let fp = collect_inputs(self.paths, stage, domain.name(), &table)
            .ok()
            .map(|inputs| {
                fingerprint(
                    stage,
                    domain.name(),
                    &config::config_hash(&table),
                    self.seed,
                    &inputs,
                )
            });
        let mut counts: BTreeMap<u32, (Vec<u32>, usize)> = BTreeMap::new();
        for (s, path, manifest) in &scan.parts {
            let slot = counts.entry(s.count).or_default();
            let good = manifest.as_ref().is_some_and(|m| {
                Some(&m.fingerprint) == fp.as_ref() && m.shard == Some(*s) && is_complete(path)
            });
            if good {
                slot.0.push(s.index);
            } else {
                slot.1 += 1;
            }
        }
        let mut lines = Vec::new();
        for (count, (done, bad)) in counts {
            let missing: Vec<String> = (0..count)
                .filter(|i| !done.contains(i))
                .map(|i| format!("{i}/{count}"))
                .collect();
            let mut line = format!("{} of {count} parts done", done.len());
            if !missing.is_empty() {
                let shown = missing
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                let more = missing.len().saturating_sub(8);
                line.push_str(&format!(
                    " (missing {shown}{})",
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ));
            }
            if bad > 0 {
                line.push_str(&format!(", {bad} stale or incomplete"));
            }
            if missing.is_empty() && bad == 0 {
                line.push_str(&format!(
                    "; `tracer merge {}` writes the output",
                    stage.name()
                ));
            }
            lines.push(line);
        }
        if !scan.foreign.is_empty() {
            lines.push(format!("{} foreign entries", scan.foreign.len()));
        }
        Ok(Some(lines.join("; ")))
    }
}

/// Finish or undo a killed run's swap of one directory (a shard's part): when `dir` is
/// missing, a complete `.tmp-<name>-<pid>` sibling is moved into place, else a
/// `.old-<name>-<pid>` one; other such leftovers are removed. Only the holder of the
/// directory's lock may call it.
fn recover_slot(dir: &Path) -> Result<Vec<String>, PipelineError> {
    let mut notes = Vec::new();
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(notes);
    };
    let name = name.to_string_lossy();
    let (mut tmps, mut olds) = (Vec::new(), Vec::new());
    if let Ok(entries) = std::fs::read_dir(parent) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with(&format!(".tmp-{name}-")) {
                tmps.push(e.path());
            } else if n.starts_with(&format!(".old-{name}-")) {
                olds.push(e.path());
            }
        }
    }
    tmps.sort();
    olds.sort();
    if !dir.exists() {
        let restore = tmps
            .iter()
            .position(|t| is_complete(t))
            .map(|i| (tmps.remove(i), "finished the interrupted swap with"))
            .or_else(|| olds.pop().map(|o| (o, "restored the previous output from")));
        if let Some((from, what)) = restore {
            std::fs::rename(&from, dir).map_err(|e| ArtifactError::io(dir, e))?;
            notes.push(format!(
                "recovered: {}: {what} {}",
                dir.display(),
                from.display()
            ));
        }
    }
    for left in tmps.iter().chain(&olds) {
        std::fs::remove_dir_all(left).map_err(|e| ArtifactError::io(left, e))?;
        notes.push(format!("recovered: removed leftover {}", left.display()));
    }
    Ok(notes)
}

/// Replace `dir` by `tmp`: the old directory is moved aside first and removed last. Between
/// the two renames `dir` is missing; a kill there leaves a complete `tmp` (its manifest is
/// written before the swap starts), which [`Runner::recover`] moves into place.
fn swap_into_place(tmp: &Path, dir: &Path, stage: &str) -> Result<(), ArtifactError> {
    let old = dir.with_file_name(format!(
        ".old-{}-{}",
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("out"),
        std::process::id()
    ));
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|e| ArtifactError::io(dir, e))?;
    }
    failpoint::hit("swap-half-done", stage);
    std::fs::rename(tmp, dir).map_err(|e| ArtifactError::io(dir, e))?;
    failpoint::hit("swap-done", stage);
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_domain_has_its_own_code_hash_on_top_of_the_shared_one() {
        let shared = env!("TRACER_CODE_HASH");
        let mut seen = std::collections::BTreeSet::new();
        for d in domain::registry() {
            assert!(
                DOMAIN_CODE_HASHES.iter().any(|(n, _)| *n == d.name()),
                "{}: build.rs found no src/domain/{}/ folder to hash",
                d.name(),
                d.name()
            );
            let h = code_hash(d.name());
            assert!(h.starts_with(shared), "{h}");
            assert!(
                seen.insert(h),
                "{}: same code hash as another domain",
                d.name()
            );
        }
        // The kit is shared code, never a domain of its own.
        assert!(DOMAIN_CODE_HASHES.iter().all(|(n, _)| *n != "kit"));
    }
}
