//! The project's data as the library reads it outside a stage's own code: the databases
//! the `db` stage wrote ([`load_db`], [`SplitEnvs`], the ruleset `stages/db.toml` selects),
//! a domain's policy text ([`read_policy`]), and the response caches of sharded runs. The
//! stages, `tracer rollout`, `tracer serve` and the review app all read them here, so they
//! read them the same way.

use crate::config::{ConfigError, Paths};
use crate::domain::{Domain, DomainError, Environment, Split};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `stages/db.toml`: how the `db` stage builds each domain's database.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DbConfig {
    /// Also write Parquet copies of every table (for querying with DuckDB/pandas).
    #[serde(default = "yes")]
    pub parquet_tables: bool,
    /// Domain -> ruleset name, for domains with rule variants (default: the domain's first).
    #[serde(default)]
    pub rulesets: BTreeMap<String, String>,
    /// Domain -> reference database used as that domain's evaluation database.
    #[serde(default)]
    pub eval_db: BTreeMap<String, std::path::PathBuf>,
}

/// The reference database configured for `domain`'s evaluation split, if any.
pub fn eval_db_path(config: &toml::Table, domain: &str) -> Option<std::path::PathBuf> {
    config
        .get("eval_db")?
        .get(domain)?
        .as_str()
        .map(std::path::PathBuf::from)
}

/// The file beside the splits naming the ruleset the database runs under.
pub const RULESET_FILE: &str = "ruleset.json";

impl DbConfig {
    /// Every key a registered domain with rulesets, every value one of its rulesets.
    pub fn check(&self, path: &Path) -> Result<(), ConfigError> {
        for name in self.eval_db.keys() {
            crate::domain::find(name).map_err(|e| ConfigError::File {
                path: path.display().to_string(),
                message: format!("eval_db.{name}: {e}"),
            })?;
        }
        for (name, ruleset) in &self.rulesets {
            let field = |message: String| ConfigError::File {
                path: path.display().to_string(),
                message: format!("rulesets.{name}: {message}"),
            };
            let domain = crate::domain::find(name).map_err(|e| field(e.to_string()))?;
            crate::domain::resolve_ruleset(domain, Some(ruleset))
                .map_err(|e| field(e.to_string()))?;
        }
        Ok(())
    }
}

/// The ruleset `stages/db.toml` selects for `domain` (its default when the table does not
/// name it; `None` for domains without rulesets). Commands that build a database outside the
/// pipeline (`tracer graphs verify`, `replay`, ...) use this unless given `--ruleset`.
pub fn configured_ruleset(
    paths: &Paths,
    domain: &dyn Domain,
) -> Result<Option<&'static str>, ConfigError> {
    let (path, table) = paths.stage_table("db")?;
    let cfg: DbConfig = crate::config::parse_typed(&path, &table)?;
    cfg.check(&path)?;
    let name = cfg.rulesets.get(domain.name()).map(String::as_str);
    crate::domain::resolve_ruleset(domain, name).map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

fn yes() -> bool {
    true
}

/// The splits a domain's database exists for.
pub fn db_splits(domain: &dyn Domain) -> &'static [Split] {
    if domain.separate_train_db() {
        &[Split::Eval, Split::Train]
    } else {
        &[Split::Eval]
    }
}

/// Load the database a `db` stage wrote (the train split falls back to eval when the
/// domain keeps one database).
pub fn load_db(
    db_dir: &Path,
    domain: &dyn Domain,
    split: Split,
) -> Result<Box<dyn Environment>, DomainError> {
    let split_dir = if db_splits(domain).contains(&split) {
        split
    } else {
        Split::Eval
    };
    let env = domain.import_tau_bench(&db_dir.join(split_dir.as_str()).join("tau_bench"))?;
    let ruleset_path = db_dir.join(RULESET_FILE);
    let ruleset = match std::fs::read_to_string(&ruleset_path) {
        Ok(text) => {
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| DomainError::Import {
                    path: ruleset_path.display().to_string(),
                    message: format!("invalid JSON: {e}"),
                })?;
            let name = value["ruleset"]
                .as_str()
                .ok_or_else(|| DomainError::Import {
                    path: ruleset_path.display().to_string(),
                    message: "field 'ruleset' must be a string".into(),
                })?;
            Some(name.to_string())
        }
        Err(_) => None,
    };
    crate::domain::apply_ruleset(domain, env, ruleset.as_deref())
}

/// The policy files an agent stage may read for `domain`, relative to the root (declared as
/// its source files); see [`crate::config::policy_sources`].
pub fn policy_sources(domain: &str) -> Vec<std::path::PathBuf> {
    match crate::domain::find(domain) {
        Ok(d) => crate::config::policy_sources(d),
        Err(_) => vec![std::path::PathBuf::from(format!("policies/{domain}.md"))],
    }
}

/// The policy text for an environment: its ruleset's own policy when it runs under a
/// non-default one, else the domain's.
pub fn read_policy(
    paths: &Paths,
    domain: &dyn Domain,
    env: &dyn Environment,
) -> Result<String, String> {
    let default = domain.rulesets().first().map(|r| r.name);
    let path = match env.ruleset() {
        Some(r) if Some(r) != default => paths.ruleset_policy_file(domain.name(), r),
        _ => paths.policy_file(domain.name()),
    };
    std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The largest request the agent sends in any of `domains`, for the preflight probe's
/// context check: the longest policy (of any ruleset) as its system prompt and the longest
/// tool list. A policy file that cannot be read is left out (validation names it).
pub fn agent_fit(
    paths: &Paths,
    domains: &[&'static dyn Domain],
) -> crate::llm::preflight::ProbeFit {
    let mut policy = String::new();
    let mut tools: Vec<serde_json::Value> = Vec::new();
    let mut tools_len = 0;
    for d in domains {
        for file in crate::config::policy_sources(*d) {
            if let Ok(text) = std::fs::read_to_string(paths.root.join(&file))
                && text.len() > policy.len()
            {
                policy = text;
            }
        }
        let list: Vec<serde_json::Value> = d.tool_specs().iter().map(|s| s.openai()).collect();
        let len = serde_json::to_string(&list).map_or(0, |t| t.len());
        if len > tools_len {
            (tools, tools_len) = (list, len);
        }
    }
    crate::llm::preflight::ProbeFit {
        messages: vec![crate::llm::ChatMessage::system(policy)],
        tools,
    }
}

/// The largest leading messages a role sending the prompt file `file` (relative to the
/// root) sends in any of `domains`: its system message and the worked examples for the
/// domain that gets the most. `None` when the file does not load (the stage names it).
pub fn prompt_fit(
    paths: &Paths,
    file: &Path,
    domains: &[&'static dyn Domain],
) -> Option<crate::llm::preflight::ProbeFit> {
    let prompt = crate::llm::Prompt::load(&paths.root.join(file)).ok()?;
    let candidates: Vec<Vec<crate::llm::ChatMessage>> = if domains.is_empty() {
        vec![prompt.messages(None)]
    } else {
        domains
            .iter()
            .map(|d| prompt.messages(Some(d.name())))
            .collect()
    };
    let messages = candidates
        .into_iter()
        .max_by_key(|m| crate::llm::provider::body::estimate_prompt_tokens(m, &[]))?;
    Some(crate::llm::preflight::ProbeFit {
        messages,
        tools: Vec::new(),
    })
}

/// The train and eval databases of a domain, loaded once.
pub struct SplitEnvs {
    train: Box<dyn Environment>,
    eval: Box<dyn Environment>,
}

impl SplitEnvs {
    pub fn load(db_dir: &Path, domain: &dyn Domain) -> Result<Self, DomainError> {
        Ok(SplitEnvs {
            train: load_db(db_dir, domain, Split::Train)?,
            eval: load_db(db_dir, domain, Split::Eval)?,
        })
    }

    pub fn for_split(&self, split: Split) -> &dyn Environment {
        if split == Split::Eval {
            self.eval.as_ref()
        } else {
            self.train.as_ref()
        }
    }
}

/// Fold every shard's response cache into the output root's, so one file holds every
/// answer. Call it holding the output lock exclusively (then no shard runs); one line per
/// file, to log.
pub fn fold_shard_caches(paths: &Paths) -> Result<Vec<String>, crate::llm::LlmError> {
    let sources: Vec<PathBuf> = crate::pipeline::shard::cache_files(&paths.output)
        .into_iter()
        .map(|(.., path)| path)
        .collect();
    crate::llm::cache::fold_into(&paths.response_cache(), &sources)
}

/// Before shard `shard` of `stage` runs: its response cache also reads the output root's
/// and those of the stage's shards of other counts (an earlier split), so a re-sharded or
/// resumed run never asks again what any run answered. Caches of the same count are
/// siblings that may be running now; they own other items.
pub fn share_answers_with_shard(paths: &Paths, stage: &str, shard: crate::pipeline::Shard) {
    let mut others = vec![paths.response_cache()];
    others.extend(
        crate::pipeline::shard::cache_files(&paths.output)
            .into_iter()
            .filter(|(s, part, _)| s == stage && part.count != shard.count)
            .map(|(.., path)| path),
    );
    crate::llm::cache::read_also(
        &crate::pipeline::shard::cache_path(&paths.output, stage, shard),
        others,
    );
}

/// Why the project's data could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Domain(#[from] DomainError),
}

/// Put a database a command built or imported under its ruleset: `flag` when given, else
/// the one `stages/db.toml` selects (so commands and the pipeline agree), else the
/// domain's default.
pub fn with_ruleset(
    paths: &Paths,
    domain: &dyn Domain,
    env: Box<dyn Environment>,
    flag: Option<&str>,
) -> Result<Box<dyn Environment>, ProjectError> {
    let name = match flag {
        Some(n) => Some(n),
        None => configured_ruleset(paths, domain)?,
    };
    Ok(crate::domain::apply_ruleset(domain, env, name)?)
}

/// The database a command outside the pipeline runs on: a reference database imported from
/// `db` (a tau2 `db.json` or a tau-bench directory), else the evaluation database generated
/// from `seed`; under its ruleset (see [`with_ruleset`]).
pub fn command_database(
    paths: &Paths,
    domain: &dyn Domain,
    db: Option<&Path>,
    seed: u64,
    ruleset: Option<&str>,
) -> Result<Box<dyn Environment>, ProjectError> {
    let env = match db {
        Some(path) => crate::domain::import_reference(domain, path)?,
        None => domain.generate(seed, Split::Eval),
    };
    with_ruleset(paths, domain, env, ruleset)
}
