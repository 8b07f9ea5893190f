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
//! Failure semantics (docs/user-guide.md, "Failure semantics"): one writer per output root
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
//! Files: this one holds the [`Runner`] (status, validation, recovery, running stages) and
//! the crash-safe swap; `dag.rs` the registry as a DAG; `fingerprint.rs` what a run
//! depends on; `sharded.rs` the Runner's shard runs, merge and part status.
//!
//! Architecture invariant: the pipeline knows stages only through the [`Stage`] trait and
//! the registry it is handed ([`Dag::new`]); it imports no stage module and knows nothing
//! of what a stage computes.

mod dag;
pub mod failpoint;
mod fingerprint;
pub mod journal;
pub mod lock;
pub mod shard;
mod sharded;
mod stage;
pub mod validate;

pub use journal::{Journal, JournalError, JournalKey, OnMismatch, Resumed};
pub use lock::{LockError, OutputLock};
pub use shard::Shard;
pub use stage::{Stage, StageConfig, TypedStage};

pub use dag::{Dag, Freshness};
pub use fingerprint::code_hash;
use fingerprint::{collect_inputs, fingerprint, fingerprint_material, hash_outputs};

use crate::artifact::{ArtifactError, Provenance, sha256_file, sha256_hex, write_atomic};
use crate::config::{self, ConfigError, Paths};
use crate::cost::{RoleUsage, sum_usage};
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

/// Reads one role's token usage when the stage has finished (see
/// [`StageContext::track_usage`]).
pub type UsageSource = Box<dyn Fn() -> RoleUsage + Send + Sync>;

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
    /// The model roles the run used, read into the manifest once it has finished.
    usage: std::sync::Mutex<Vec<UsageSource>>,
}

impl StageContext<'_> {
    /// Record a role's token usage with this run: `source` is read after the stage's `run`
    /// returns (so it sees every answer), and the manifest keeps the result with the prices
    /// it carries. Stages that open a role through `stage::roles` are tracked already.
    pub fn track_usage(&self, source: impl Fn() -> RoleUsage + Send + Sync + 'static) {
        if let Ok(mut sources) = self.usage.lock() {
            sources.push(Box::new(source));
        }
    }

    /// The usage recorded so far, entries of one role, model and price added up.
    pub fn usage(&self) -> Vec<RoleUsage> {
        let sources = match self.usage.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        sum_usage(sources.iter().map(|read| read()))
    }

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
            None => self.paths.response_cache(),
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
    /// Per model role the run used: who answered, the tokens of its answers and the prices
    /// configured for the run (what `tracer stats` and the card price). A merge records the
    /// sum of its parts'. Absent for stages without roles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usage: Vec<RoleUsage>,
}

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
            usage: Default::default(),
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
        // A merge opened no role: its parts' manifests hold what their runs used.
        let usage = match &parts {
            Some(p) => sum_usage(
                p.dirs
                    .iter()
                    .filter_map(|d| read_manifest(d))
                    .flat_map(|m| m.usage),
            ),
            None => ctx.usage(),
        };
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
            usage,
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
        } else if stage.shardable() {
            // Every item was computed here: parts left by earlier shard runs are stale.
            notes.extend(self.clear_stale_parts(stage, domain)?);
        }
        Ok(StepReport {
            stage: stage.name(),
            domain: domain.name(),
            ran: true,
            summary: format!("{summary} ({:.2}s)", started.elapsed().as_secs_f64()),
            notes,
        })
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
fn swap_into_place(tmp: &Path, dir: &Path, stage: &str) -> Result<(), PipelineError> {
    // A run whose lock file was deleted under it may no longer be the only writer.
    lock::verify_held(dir)?;
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
