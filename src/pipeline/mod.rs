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
//! Files: this one holds the [`Runner`] (status, validation, running stages) and the
//! manifest; `context.rs` what a stage sees while it runs ([`StageContext`]); `swap.rs` the
//! crash-safe swap and the recovery of what killed runs left; `dag.rs` the registry as a
//! DAG; `fingerprint.rs` what a run depends on; `sharded.rs` the Runner's shard runs, merge
//! and part status.
//!
//! Architecture invariant: the pipeline knows stages only through the [`Stage`] trait and
//! the registry it is handed ([`Dag::new`]); it imports no stage module and knows nothing
//! of what a stage computes.

#[cfg(test)]
mod code_scan;
mod context;
mod dag;
mod error;
pub mod failpoint;
mod fingerprint;
pub mod journal;
pub mod lock;
pub mod shard;
mod sharded;
mod stage;
mod swap;
pub mod validate;

pub use journal::{Journal, JournalError, JournalKey, OnMismatch, Resumed};
pub use lock::{LockError, OutputLock};
pub use shard::Shard;
pub use stage::{PreflightScope, Stage, StageConfig, TypedStage};

pub use context::{StageContext, UsageSource};
pub use dag::{Dag, Freshness};
pub use error::{ErrorKind, PipelineError};
pub use fingerprint::{CODE_FILES, CodeFile, code_hash, code_hash_edited, code_reach};
use fingerprint::{collect_inputs, fingerprint, fingerprint_material, hash_outputs};
use swap::{is_complete, recover_slot, swap_into_place};

use crate::artifact::{ArtifactError, sha256_file, sha256_hex, write_atomic};
use crate::config::{self, Paths};
use crate::cost::{RoleUsage, sum_usage};
use crate::domain::{self, Domain};
use petgraph::graphmap::DiGraphMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub const MANIFEST: &str = "_manifest.json";

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
        let (path, table) = self.paths.stage_table(stage.name())?;
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
        let fail =
            |message: String| PipelineError::stage(stage, domain.name(), ErrorKind::Input, message);
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
                let scope = PreflightScope {
                    paths: self.paths,
                    domains: &self.domains,
                };
                stage.preflight(&path, &table, &scope).map_err(|message| {
                    PipelineError::stage(stage.name(), "*", ErrorKind::Endpoint, message)
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
            Err(why) => PipelineError::stage(stage.name(), domain.name(), ErrorKind::Input, why),
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
            code_root: stage.code_root(),
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
        // An environment that fails (a remote domain's process died or hung) unwinds; the
        // stage fails with its message and its temporary output is removed below.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &parts {
            Some(p) => stage.merge(&ctx, &p.dirs),
            None => stage.run(&ctx),
        }))
        .unwrap_or_else(|payload| {
            match crate::domain::environment_failure(payload.as_ref()) {
                Some(message) => Err(PipelineError::stage(
                    stage.name(),
                    domain.name(),
                    ErrorKind::Environment,
                    message,
                )),
                None => std::panic::resume_unwind(payload),
            }
        });
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
