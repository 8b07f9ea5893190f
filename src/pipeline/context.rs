//! What a stage sees while it runs for one domain ([`StageContext`]): its paths, config,
//! inputs and temporary output directory, the shard it computes, its journal and response
//! cache, the provenance of the files it writes, and the token usage of the roles it opens.
//!
//! Architecture invariant: the pipeline knows stages only through the
//! [`Stage`](super::Stage) trait and the registry it is handed; it imports no stage module
//! and knows nothing of what a stage computes.

use super::journal::JournalKey;
use super::shard::{self, Shard};
use super::{ErrorKind, PipelineError, fingerprint_material, journal_dir, stage_dir};
use crate::artifact::{Provenance, sha256_hex};
use crate::config::{self, Paths};
use crate::cost::{RoleUsage, sum_usage};
use crate::domain::Domain;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Reads one role's token usage when the stage has finished (see
/// [`StageContext::track_usage`]).
pub type UsageSource = Box<dyn Fn() -> RoleUsage + Send + Sync>;

/// What a stage sees while it runs for one domain.
pub struct StageContext<'a> {
    pub paths: &'a Paths,
    pub stage: &'static str,
    /// Where the stage's code starts (see `TypedStage::code_root`).
    pub code_root: &'static str,
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
    pub(super) usage: std::sync::Mutex<Vec<UsageSource>>,
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
    /// `domain=<d>-<key>.jsonl`, or `domain=<d>-<key>.part-<i>-of-<N>.jsonl` for a shard.
    pub fn journal_path(&self) -> PathBuf {
        let key = fingerprint_material(
            self.stage,
            self.code_root,
            self.domain.name(),
            &config::config_hash(&self.config),
            self.seed,
            &self.inputs,
        );
        let name = format!(
            "domain={}-{}{}.jsonl",
            self.domain.name(),
            &sha256_hex(key.as_bytes())[..16],
            self.shard
                .map_or(String::new(), |s| format!(".{}", s.part_name()))
        );
        journal_dir(&self.paths.output, self.stage).join(name)
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
            ("code", super::code_hash(self.code_root, self.domain.name())),
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

    /// This stage's failure of `kind` for this domain.
    pub fn fail(&self, kind: ErrorKind, message: impl Into<String>) -> PipelineError {
        PipelineError::stage(self.stage, self.domain.name(), kind, message)
    }
}
