//! Configuration: `stages/<stage>.toml` files -> typed, resolved settings.
//!
//! Config flows one way: file options -> resolved settings handed to a stage. A stage's
//! config hash is taken over the parsed value (canonical JSON), so comments and layout do
//! not make a stage stale, but any changed value does. Every environment variable the
//! program reads is named here, and so are the limits every config value is held to
//! ([`Check`]): a value outside them is a one-line error naming the file and field, never
//! a panic or an out-of-memory abort later.

mod roles_file;

pub use roles_file::{
    PROMPTS_KEY, RolesFile, STAGE_ROLES, has_endpoint_role, is_endpoint, merge_tables, roles_of,
};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// Overrides the output directory (default `output/` under the project root).
pub const ENV_OUTPUT_DIR: &str = "TRACER_OUTPUT";
/// Overrides the project root (where `stages/`, `graphs/`, `policies/` live).
pub const ENV_PROJECT_ROOT: &str = "TRACER_ROOT";
/// A directory of stage TOMLs (`<stage>.toml`, `pipeline.toml`) that replace the project's
/// `stages/<stage>.toml` file by file (the release recipe: `configs/release/`). Relative
/// paths are taken from the project root. Every command of one run must see the same value.
pub const ENV_STAGE_OVERRIDES: &str = "TRACER_STAGE_OVERRIDES";
/// The run's roles file (`--roles FILE` sets it too): every model role of a run in one TOML
/// ([`RolesFile`]). Relative paths are taken from the project root. Default: `roles.toml` at
/// the project root when it exists. Every command of one run must see the same file.
pub const ENV_ROLES: &str = "TRACER_ROLES";
/// The roles file a project root holds by default.
pub const DEFAULT_ROLES_FILE: &str = "roles.toml";
/// The sentence encoder's model directory (default `.cache/models/all-MiniLM-L6-v2` under
/// the project root; `make model` fills it).
pub const ENV_EMBED_MODEL: &str = "TRACER_EMBED_MODEL";
/// Where embedding and trained-mapper caches live (default `.cache/emotion` under the
/// project root). Only a speed-up: every entry is keyed by what produced it and checked.
pub const ENV_EMOTION_CACHE: &str = "TRACER_EMOTION_CACHE";
/// Test knob: sleep this many milliseconds after each scripted episode (so a test can kill
/// a rollout part-way). Never set in normal runs.
pub const ENV_EPISODE_DELAY_MS: &str = "TRACER_EPISODE_DELAY_MS";
/// Test hook: `<phase>@<stage>[#n]` aborts the process at that phase boundary (see
/// `pipeline::failpoint`). Never set in normal runs.
pub const ENV_FAILPOINT: &str = "TRACER_FAILPOINT";

/// Trials per task (`rollouts`, `eval`, `tracer rollout --trials`).
pub const MAX_TRIALS: usize = 1_000;
/// Episodes (or requests) in flight at once.
pub const MAX_CONCURRENCY: usize = 4_096;
/// Interaction steps of one episode.
pub const MAX_STEPS: usize = 10_000;
/// Item counts: targets, caps, search budgets.
pub const MAX_COUNT: usize = 10_000_000;
/// Bootstrap and permutation resamples of the eval intervals and `tracer compare`.
pub const MAX_RESAMPLES: usize = 100_000;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
}

/// Where the project's files and the outputs are.
#[derive(Clone, Debug)]
pub struct Paths {
    pub root: PathBuf,
    pub output: PathBuf,
    /// `TRACER_STAGE_OVERRIDES`: a file here is merged over the `stages/` file of the same
    /// name, key by key.
    pub overrides: Option<PathBuf>,
    /// The run's roles file (`TRACER_ROLES`, `--roles`, or `roles.toml` at the root).
    pub roles: Option<PathBuf>,
}

/// The response cache's file name in an output root (shared by every role, so a re-run or
/// resume never pays twice for an answer).
pub const RESPONSE_CACHE: &str = ".llm-cache.redb";

impl Paths {
    /// Resolve from the environment, defaulting to the current directory.
    pub fn from_env() -> Paths {
        let root = std::env::var_os(ENV_PROJECT_ROOT)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        let output = std::env::var_os(ENV_OUTPUT_DIR)
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("output"));
        let overrides = std::env::var_os(ENV_STAGE_OVERRIDES)
            .filter(|v| !v.is_empty())
            .map(|v| root.join(PathBuf::from(v)));
        let roles = std::env::var_os(ENV_ROLES)
            .filter(|v| !v.is_empty())
            .map(|v| root.join(PathBuf::from(v)))
            .or_else(|| Some(root.join(DEFAULT_ROLES_FILE)).filter(|p| p.is_file()));
        Paths {
            root,
            output,
            overrides,
            roles,
        }
    }

    /// The same paths with `file` as the run's roles file (`--roles`; relative to the
    /// current directory, as a command-line path is).
    pub fn with_roles(mut self, file: PathBuf) -> Paths {
        self.roles = Some(file);
        self
    }

    /// The run's roles file, read and shape-checked (`None` when the run has none).
    pub fn roles_file(&self) -> Result<Option<RolesFile>, ConfigError> {
        self.roles.as_deref().map(RolesFile::load).transpose()
    }

    /// A stage's settings as the stage sees them: `stages/<stage>.toml`, the override of
    /// `TRACER_STAGE_OVERRIDES` merged over it key by key, then the roles the stage uses
    /// from the run's roles file where the stage's own files set none. The path is the file
    /// errors name (the override when there is one). A missing stage file reads as empty.
    pub fn stage_table(&self, stage: &str) -> Result<(PathBuf, toml::Table), ConfigError> {
        let base = self.root.join("stages").join(format!("{stage}.toml"));
        let path = self.stage_config(stage);
        let mut table = read_table(&base)?;
        if path != base {
            merge_tables(&mut table, read_table(&path)?);
        }
        if let Some(rf) = self.roles_file()? {
            rf.merge_into(stage, &mut table);
        }
        Ok((path, table))
    }

    /// The file that names a stage's options in errors: the override when an entry of that
    /// name exists (whatever it is: [`read_table`] refuses one that is not a regular file,
    /// and every command checks the directory first), else `stages/<stage>.toml`. Read a
    /// stage's settings with [`Paths::stage_table`], which merges the two (and the roles
    /// file); the config hash is taken over the merged values, so an override that repeats a
    /// default file's values changes nothing.
    pub fn stage_config(&self, stage: &str) -> PathBuf {
        let file = format!("{stage}.toml");
        if let Some(dir) = &self.overrides {
            let candidate = dir.join(&file);
            if candidate.symlink_metadata().is_ok() {
                return candidate;
            }
        }
        self.root.join("stages").join(file)
    }

    /// The output root's LLM response cache (commands outside a stage run use it; a stage's
    /// roles use `StageContext::response_cache`, which is a shard's own file when sharded).
    pub fn response_cache(&self) -> PathBuf {
        self.output.join(RESPONSE_CACHE)
    }

    /// `graphs/<domain>.json`, or `graph.json` in a remote domain's folder.
    pub fn graph_file(&self, domain: &str) -> PathBuf {
        match remote_folder(domain) {
            Some(dir) => self.root.join(dir).join("graph.json"),
            None => self.root.join("graphs").join(format!("{domain}.json")),
        }
    }

    /// `policies/<domain>.md`, or `policy.md` in a remote domain's folder.
    pub fn policy_file(&self, domain: &str) -> PathBuf {
        match remote_folder(domain) {
            Some(dir) => self.root.join(dir).join("policy.md"),
            None => self.root.join("policies").join(format!("{domain}.md")),
        }
    }

    /// The policy of a domain's non-default ruleset (`policies/<domain>.<ruleset>.md`):
    /// the agent's system prompt when the database runs under that ruleset.
    pub fn ruleset_policy_file(&self, domain: &str, ruleset: &str) -> PathBuf {
        self.root
            .join("policies")
            .join(format!("{domain}.{ruleset}.md"))
    }
}

/// The folder of a domain kept outside the crate (a remote domain), if `domain` is one.
fn remote_folder(domain: &str) -> Option<&'static Path> {
    crate::domain::find(domain).ok().and_then(|d| d.folder())
}

/// The policy files (relative to the root) an agent stage may read for `domain`:
/// `policies/<d>.md`, and one `policies/<d>.<ruleset>.md` per non-default ruleset; a remote
/// domain's `policy.md` in its folder.
pub fn policy_sources(domain: &dyn crate::domain::Domain) -> Vec<PathBuf> {
    let name = domain.name();
    if let Some(dir) = domain.folder() {
        return vec![dir.join("policy.md")];
    }
    let mut files = vec![PathBuf::from(format!("policies/{name}.md"))];
    for r in domain.rulesets().iter().skip(1) {
        files.push(format!("policies/{name}.{}.md", r.name).into());
    }
    files
}

/// Why the entry at `path` is not a config file one can read (`None` when it is a regular
/// file, or a symlink to one): a dangling or looping symlink, a FIFO, a device, a
/// directory. Checked without opening it, so a FIFO never blocks and `/dev/zero` is never
/// read.
pub fn not_a_regular_file(path: &Path) -> Option<String> {
    let why = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => return None,
        Ok(m) => format!("is {}, not a regular file", file_kind(&m.file_type())),
        Err(e) if path.symlink_metadata().is_ok_and(|m| m.is_symlink()) => {
            if e.kind() == std::io::ErrorKind::NotFound {
                "is a dangling symlink".to_string()
            } else {
                format!("is a symlink that cannot be followed ({e})")
            }
        }
        Err(e) => e.to_string(),
    };
    Some(format!("{}: {why}", path.display()))
}

fn file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Read a TOML file as a generic table (missing file = empty table). An entry that is there
/// but is no regular file (a dangling symlink, a FIFO, a device) is an error naming it,
/// never read.
pub fn read_table(path: &Path) -> Result<toml::Table, ConfigError> {
    if path.symlink_metadata().is_err() {
        return Ok(toml::Table::new());
    }
    if let Some(why) = not_a_regular_file(path) {
        return Err(ConfigError::File {
            path: path.display().to_string(),
            message: why
                .strip_prefix(&format!("{}: ", path.display()))
                .unwrap_or(&why)
                .to_string(),
        });
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(toml::Table::new()),
        Err(e) => {
            return Err(ConfigError::File {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    text.parse::<toml::Table>().map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        message: one_line(&e.to_string()),
    })
}

/// Deserialize a table into a typed config, naming the file and field on error: `field:
/// message`, as [`Check`] writes its errors (toml names a nested value's field on a last
/// line, ``in `a.b` ``).
pub fn parse_typed<T: DeserializeOwned>(
    path: &Path,
    table: &toml::Table,
) -> Result<T, ConfigError> {
    T::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
        let text = e.to_string();
        let message = match text.trim_end().rsplit_once("\nin `") {
            Some((message, field)) => format!("{}: {message}", field.trim_end_matches('`')),
            None => text,
        };
        ConfigError::File {
            path: path.display().to_string(),
            message: one_line(&message),
        }
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Range and name checks of a typed config; every error names the file and the field.
pub struct Check<'a> {
    path: &'a Path,
}

impl<'a> Check<'a> {
    pub fn new(path: &'a Path) -> Check<'a> {
        Check { path }
    }

    /// An error about `field` of this file.
    pub fn error(&self, field: &str, message: impl std::fmt::Display) -> ConfigError {
        ConfigError::File {
            path: self.path.display().to_string(),
            message: format!("{field}: {message}"),
        }
    }

    /// A whole number within `min..=max`.
    pub fn count(
        &self,
        field: &str,
        value: usize,
        min: usize,
        max: usize,
    ) -> Result<(), ConfigError> {
        if (min..=max).contains(&value) {
            Ok(())
        } else {
            Err(self.error(field, format!("{value} is outside {min}..={max}")))
        }
    }

    /// A probability or share: a finite number within 0..=1.
    pub fn share(&self, field: &str, value: f64) -> Result<(), ConfigError> {
        if value.is_finite() && (0.0..=1.0).contains(&value) {
            Ok(())
        } else {
            Err(self.error(field, format!("{value} is outside 0..=1")))
        }
    }

    /// Names that must be registered domains.
    pub fn domains<'n>(
        &self,
        field: &str,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Result<(), ConfigError> {
        for name in names {
            crate::domain::find(name).map_err(|e| self.error(field, e))?;
        }
        Ok(())
    }
}

/// Canonical hash of a parsed config.
pub fn config_hash(table: &toml::Table) -> String {
    let json = serde_json::to_vec(table).unwrap_or_default();
    crate::artifact::sha256_hex(&json)
}

/// `stages/pipeline.toml`: settings shared by all stages.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineConfig {
    /// The run seed every stage derives its randomness from.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Domains to run when no `--domain` is given (default: every registered domain).
    #[serde(default)]
    pub domains: Vec<String>,
}

fn default_seed() -> u64 {
    20_261_129
}

impl PipelineConfig {
    pub fn load(paths: &Paths) -> Result<PipelineConfig, ConfigError> {
        let (path, table) = paths.stage_table("pipeline")?;
        let cfg: PipelineConfig = parse_typed(&path, &table)?;
        Check::new(&path).domains("domains", cfg.domains.iter().map(String::as_str))?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_file_field_and_range() {
        let c = Check::new(Path::new("stages/x.toml"));
        assert!(c.count("trials", 3, 1, 10).is_ok());
        assert_eq!(
            c.count("trials", 0, 1, 10).unwrap_err().to_string(),
            "stages/x.toml: trials: 0 is outside 1..=10"
        );
        assert!(c.share("rate", 1.0).is_ok());
        for bad in [1.5, -0.3, f64::NAN] {
            let err = c.share("rate", bad).unwrap_err().to_string();
            assert!(err.starts_with("stages/x.toml: rate: "), "{err}");
        }
        assert!(c.domains("low_domains", ["airline"]).is_ok());
        let err = c
            .domains("low_domains", ["atlantis"])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("low_domains: unknown domain 'atlantis'"),
            "{err}"
        );
    }
}
