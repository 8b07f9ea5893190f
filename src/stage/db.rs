//! `db` stage: the deterministic synthetic database of each domain, written twice — as
//! tau-bench-format JSON (`<split>/tau_bench/*.json`, the form later stages load, through
//! the same importer users run on tau-bench's own files) and as Parquet tables
//! (`<split>/<table>.parquet`) for querying. Domains with a separate training database get a
//! `train/` directory beside `eval/`. `[eval_db]` in `stages/db.toml` may name a reference
//! database (a tau2 `db.json` or a tau-bench directory, relative to the project root) to
//! use as a domain's evaluation database instead of the generated one; the file is then a
//! hashed input of the stage.
//!
//! A domain with rule variants (`Domain::rulesets`, e.g. retail's order lifecycle) runs
//! under the one named in this stage's `[rulesets]` table, else its default. The choice is
//! part of the database: it is hashed with this config, written to `ruleset.json` beside the
//! splits (so every stage that loads the database through [`load_db`] gets it, and a change
//! re-runs everything downstream), and named in the stage summary.

use crate::artifact::{self, json_table::json_rows_to_batch};
use crate::config::ConfigError;
use crate::domain::{Domain, DomainError, Environment, Split};
use crate::pipeline::{PipelineError, Stage, StageContext};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

pub struct DbStage;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DbConfig {
    /// Also write Parquet copies of every table (for querying with DuckDB/pandas).
    #[serde(default = "yes")]
    parquet_tables: bool,
    /// Domain -> ruleset name, for domains with rule variants (default: the domain's first).
    #[serde(default)]
    rulesets: BTreeMap<String, String>,
    /// Domain -> reference database used as that domain's evaluation database.
    #[serde(default)]
    eval_db: BTreeMap<String, std::path::PathBuf>,
}

/// The reference database configured for `domain`'s evaluation split, if any.
fn eval_db_path(config: &toml::Table, domain: &str) -> Option<std::path::PathBuf> {
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
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
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
    paths: &crate::config::Paths,
    domain: &dyn Domain,
) -> Result<Option<&'static str>, ConfigError> {
    let path = paths.stage_config("db");
    let cfg: DbConfig = crate::config::parse_typed(&path, &crate::config::read_table(&path)?)?;
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
    paths: &crate::config::Paths,
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

impl Stage for DbStage {
    fn name(&self) -> &'static str {
        "db"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &[]
    }
    fn source_files(&self, domain: &str, config: &toml::Table) -> Vec<std::path::PathBuf> {
        eval_db_path(config, domain).into_iter().collect()
    }
    fn validate_sources(
        &self,
        paths: &crate::config::Paths,
        domains: &[&'static dyn crate::domain::Domain],
    ) -> Vec<String> {
        // The reference databases `[eval_db]` names must exist (the run imports them).
        let path = paths.stage_config(self.name());
        let Ok(table) = crate::config::read_table(&path) else {
            return Vec::new();
        };
        domains
            .iter()
            .filter_map(|d| {
                let rel = eval_db_path(&table, d.name())?;
                let file = paths.root.join(&rel);
                (!file.exists()).then(|| {
                    format!(
                        "{}: eval_db.{}: {} does not exist",
                        path.display(),
                        d.name(),
                        file.display()
                    )
                })
            })
            .collect()
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        crate::config::parse_typed::<DbConfig>(path, table)?.check(path)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: DbConfig = ctx.typed_config()?;
        cfg.check(&ctx.config_path)?;
        let ruleset = crate::domain::resolve_ruleset(
            ctx.domain,
            cfg.rulesets.get(ctx.domain.name()).map(String::as_str),
        )?;
        let prov = ctx.provenance();
        let mut summary = Vec::new();
        if let Some(r) = ruleset {
            let json = serde_json::json!({"domain": ctx.domain.name(), "ruleset": r});
            let bytes = serde_json::to_vec_pretty(&json).map_err(|e| ctx.fail(e.to_string()))?;
            artifact::write_atomic(&ctx.out(RULESET_FILE), &bytes)?;
            summary.push(format!("ruleset {r}"));
        }
        for &split in db_splits(ctx.domain) {
            let reference = cfg
                .eval_db
                .get(ctx.domain.name())
                .filter(|_| split == Split::Eval);
            let env = match reference {
                Some(rel) => {
                    crate::domain::import_reference(ctx.domain, &ctx.paths.root.join(rel))?
                }
                None => ctx.domain.generate(ctx.seed, split),
            };
            let dir = ctx.out(split.as_str());
            for (stem, value) in env.to_tau_bench() {
                let path = dir.join("tau_bench").join(format!("{stem}.json"));
                let bytes =
                    serde_json::to_vec_pretty(&value).map_err(|e| ctx.fail(e.to_string()))?;
                artifact::write_atomic(&path, &bytes)?;
            }
            let mut sizes = Vec::new();
            for (table, rows) in env.tables() {
                sizes.push(format!("{table} {}", rows.len()));
                if cfg.parquet_tables {
                    let batch = json_rows_to_batch(&rows);
                    artifact::write_parquet(&dir.join(format!("{table}.parquet")), &batch, &prov)?;
                }
            }
            summary.push(format!(
                "{}: {} (state {})",
                split.as_str(),
                sizes.join(", "),
                env.state_hash()
            ));
        }
        Ok(summary.join("; "))
    }
}
