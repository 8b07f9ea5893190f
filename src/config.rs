//! Configuration: `stages/<stage>.toml` files -> typed, resolved settings.
//!
//! Config flows one way: file options -> resolved settings handed to a stage. A stage's
//! config hash is taken over the parsed value (canonical JSON), so comments and layout do
//! not make a stage stale, but any changed value does. Every environment variable the
//! program reads is named here.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// Overrides the output directory (default `output/` under the project root).
pub const ENV_OUTPUT_DIR: &str = "TRACER_OUTPUT";
/// Overrides the project root (where `stages/`, `graphs/`, `policies/` live).
pub const ENV_PROJECT_ROOT: &str = "TRACER_ROOT";
/// The sentence encoder's model directory (default `.cache/models/all-MiniLM-L6-v2` under
/// the project root; `make model` fills it).
pub const ENV_EMBED_MODEL: &str = "TRACER_EMBED_MODEL";
/// Where embedding and trained-mapper caches live (default `.cache/emotion` under the
/// project root). Only a speed-up: every entry is keyed by what produced it and checked.
pub const ENV_EMOTION_CACHE: &str = "TRACER_EMOTION_CACHE";
/// Test knob: sleep this many milliseconds after each scripted episode (so a test can kill
/// a rollout part-way). Never set in normal runs.
pub const ENV_EPISODE_DELAY_MS: &str = "TRACER_EPISODE_DELAY_MS";

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
}

impl Paths {
    /// Resolve from the environment, defaulting to the current directory.
    pub fn from_env() -> Paths {
        let root = std::env::var_os(ENV_PROJECT_ROOT)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."));
        let output = std::env::var_os(ENV_OUTPUT_DIR)
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("output"));
        Paths { root, output }
    }

    pub fn stage_config(&self, stage: &str) -> PathBuf {
        self.root.join("stages").join(format!("{stage}.toml"))
    }

    pub fn graph_file(&self, domain: &str) -> PathBuf {
        self.root.join("graphs").join(format!("{domain}.json"))
    }

    pub fn policy_file(&self, domain: &str) -> PathBuf {
        self.root.join("policies").join(format!("{domain}.md"))
    }
}

/// Read a TOML file as a generic table (missing file = empty table).
pub fn read_table(path: &Path) -> Result<toml::Table, ConfigError> {
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

/// Deserialize a table into a typed config, naming the file and field on error.
pub fn parse_typed<T: DeserializeOwned>(
    path: &Path,
    table: &toml::Table,
) -> Result<T, ConfigError> {
    T::deserialize(toml::Value::Table(table.clone())).map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        message: one_line(&e.to_string()),
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
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
        let path = paths.stage_config("pipeline");
        parse_typed(&path, &read_table(&path)?)
    }
}
