//! The stage traits: [`TypedStage`], what a stage module writes (its settings type, what it
//! reads, `run` and `merge` given the parsed settings), [`StageConfig`], its settings'
//! checks and preflight, and [`Stage`], the erased face the runner and the registry hold
//! (every `TypedStage` is one).

use super::{ErrorKind, PipelineError, StageContext};
use crate::config::{self, ConfigError, Paths};
use crate::domain::Domain;
use std::path::{Path, PathBuf};

/// What a stage's preflight may look at besides its settings: the project (its policies and
/// prompt files) and the run's domains, from which it bounds the largest request each of
/// its roles will send (the probe's context check).
pub struct PreflightScope<'a> {
    pub paths: &'a Paths,
    pub domains: &'a [&'static dyn Domain],
}

/// A stage's typed settings (`stages/<stage>.toml`): parsed from the TOML table once per
/// use (unknown fields rejected, errors naming the file and field), then checked; the
/// runner derives `tracer validate`'s check and the preflight of the stage from it.
pub trait StageConfig: serde::de::DeserializeOwned + Sync {
    /// Ranges and names beyond the types; `path` names the file in errors.
    fn check(&self, _path: &Path) -> Result<(), ConfigError> {
        Ok(())
    }
    /// Check the endpoints these settings name (key set, reachable, model served, and the
    /// probe of `llm::preflight`: one tiny request of each role's shape).
    fn preflight(&self, _scope: &PreflightScope) -> Result<(), String> {
        Ok(())
    }
    /// Parse and check a table read from `path`.
    fn load(path: &Path, table: &toml::Table) -> Result<Self, ConfigError> {
        let cfg: Self = config::parse_typed(path, table)?;
        cfg.check(path)?;
        Ok(cfg)
    }
}

/// One stage of the DAG, as a stage module writes it: its settings type, what it reads,
/// and `run` (and `merge`) given the settings already parsed and checked. The runner sees
/// it as a [`Stage`].
pub trait TypedStage: Sync {
    type Config: StageConfig;
    fn name(&self) -> &'static str;
    /// Upstream stages whose outputs this stage reads.
    fn inputs(&self) -> &'static [&'static str];
    /// Project files (relative to the root) this stage reads for a domain; `config` is the
    /// stage's TOML table (a config may name files, e.g. a reference database).
    fn source_files(&self, _domain: &str, _config: &toml::Table) -> Vec<PathBuf> {
        Vec::new()
    }
    /// Project files this stage reads when they exist (e.g. a decisions file nobody has
    /// written yet): hashed like `source_files`, a missing one as "absent", so creating,
    /// changing or deleting it makes the stage stale.
    fn optional_source_files(&self, _domain: &str, _config: &toml::Table) -> Vec<PathBuf> {
        Vec::new()
    }
    /// Problems in the project files this stage reads (beyond its TOML, which the settings
    /// type checks) for the given domains, one line each: a graph that does not load,
    /// anchors that do not parse. Part of the one validation path.
    fn validate_sources(&self, _paths: &Paths, _domains: &[&'static dyn Domain]) -> Vec<String> {
        Vec::new()
    }
    /// Bump when the stage's code changes what it writes.
    fn version(&self) -> u32 {
        1
    }
    /// The file the stage's code starts from: `file!()` in its module. Its code
    /// fingerprint covers what that file reaches along its imports (see
    /// `pipeline::fingerprint::code_reach`); empty means the whole crate.
    fn code_root(&self) -> &'static str {
        ""
    }
    /// Compute and write the outputs into `ctx.out_dir`; return a one-line summary. A
    /// shardable stage computes only the items `ctx.owns`.
    fn run(&self, ctx: &StageContext, cfg: &Self::Config) -> Result<String, PipelineError>;
    /// Item-parallel stages return true: they honour `ctx.shard` in `run` and implement
    /// `merge`.
    fn shardable(&self) -> bool {
        false
    }
    /// Write into `ctx.out_dir` exactly what `run` writes without a shard (same files, rows
    /// in the same order, same summary), from the complete parts of a sharded run: `parts`
    /// are the part directories in shard order, each holding what `run` wrote for it.
    fn merge(
        &self,
        ctx: &StageContext,
        _cfg: &Self::Config,
        _parts: &[PathBuf],
    ) -> Result<String, PipelineError> {
        Err(ctx.fail(
            ErrorKind::Internal,
            "this stage is not item-parallel; it has no shards to merge",
        ))
    }
}

/// One stage of the DAG as the runner sees it (every [`TypedStage`] is one): the settings
/// are a TOML table here, parsed and checked by the stage's [`StageConfig`] on each call.
pub trait Stage: Sync {
    fn name(&self) -> &'static str;
    fn inputs(&self) -> &'static [&'static str];
    fn source_files(&self, domain: &str, config: &toml::Table) -> Vec<PathBuf>;
    fn optional_source_files(&self, domain: &str, config: &toml::Table) -> Vec<PathBuf>;
    fn validate_sources(&self, paths: &Paths, domains: &[&'static dyn Domain]) -> Vec<String>;
    fn version(&self) -> u32;
    /// See [`TypedStage::code_root`].
    fn code_root(&self) -> &'static str;
    /// Check the stage's config without running anything (`tracer validate`).
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError>;
    /// Check the endpoints this stage's config names (key set, reachable, model served);
    /// the runner calls it for every stage it may run, before any stage starts.
    fn preflight(
        &self,
        path: &Path,
        table: &toml::Table,
        scope: &PreflightScope,
    ) -> Result<(), String>;
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError>;
    fn shardable(&self) -> bool;
    fn merge(&self, ctx: &StageContext, parts: &[PathBuf]) -> Result<String, PipelineError>;
}

impl<S: TypedStage> Stage for S {
    fn name(&self) -> &'static str {
        TypedStage::name(self)
    }
    fn inputs(&self) -> &'static [&'static str] {
        TypedStage::inputs(self)
    }
    fn source_files(&self, domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        TypedStage::source_files(self, domain, config)
    }
    fn optional_source_files(&self, domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        TypedStage::optional_source_files(self, domain, config)
    }
    fn validate_sources(&self, paths: &Paths, domains: &[&'static dyn Domain]) -> Vec<String> {
        TypedStage::validate_sources(self, paths, domains)
    }
    fn version(&self) -> u32 {
        TypedStage::version(self)
    }
    fn code_root(&self) -> &'static str {
        TypedStage::code_root(self)
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        S::Config::load(path, table).map(|_| ())
    }
    fn preflight(
        &self,
        path: &Path,
        table: &toml::Table,
        scope: &PreflightScope,
    ) -> Result<(), String> {
        S::Config::load(path, table)
            .map_err(|e| e.to_string())?
            .preflight(scope)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg = S::Config::load(&ctx.config_path, &ctx.config)?;
        TypedStage::run(self, ctx, &cfg)
    }
    fn shardable(&self) -> bool {
        TypedStage::shardable(self)
    }
    fn merge(&self, ctx: &StageContext, parts: &[PathBuf]) -> Result<String, PipelineError> {
        let cfg = S::Config::load(&ctx.config_path, &ctx.config)?;
        TypedStage::merge(self, ctx, &cfg, parts)
    }
}
