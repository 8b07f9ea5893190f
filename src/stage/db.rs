//! `db` stage: the deterministic synthetic database of each domain, written twice — as
//! tau-bench-format JSON (`<split>/tau_bench/*.json`, the form later stages load, through
//! the same importer users run on tau-bench's own files) and as Parquet tables
//! (`<split>/<table>.parquet`) for querying. Domains with a separate training database get a
//! `train/` directory beside `eval/`. `[eval_db]` in `stages/db.toml` may name a reference
//! database (a tau2 `db.json` or a tau-bench directory, relative to the project root) to
//! use as a domain's evaluation database instead of the generated one; the file is then a
//! hashed input of the stage.

use crate::artifact::{self, json_table::json_rows_to_batch};
use crate::config::ConfigError;
use crate::domain::{Domain, DomainError, Environment, Split};
use crate::pipeline::{PipelineError, Stage, StageContext};
use serde::Deserialize;
use std::path::Path;

pub struct DbStage;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DbConfig {
    /// Also write Parquet copies of every table (for querying with DuckDB/pandas).
    #[serde(default = "yes")]
    parquet_tables: bool,
    /// Domain -> reference database used as that domain's evaluation database.
    #[serde(default)]
    eval_db: std::collections::BTreeMap<String, std::path::PathBuf>,
}

/// The reference database configured for `domain`'s evaluation split, if any.
fn eval_db_path(config: &toml::Table, domain: &str) -> Option<std::path::PathBuf> {
    config
        .get("eval_db")?
        .get(domain)?
        .as_str()
        .map(std::path::PathBuf::from)
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
    domain.import_tau_bench(&db_dir.join(split_dir.as_str()).join("tau_bench"))
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

    pub fn for_split(&self, split: &str) -> &dyn Environment {
        if split == "eval" {
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
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        let cfg = crate::config::parse_typed::<DbConfig>(path, table)?;
        for name in cfg.eval_db.keys() {
            crate::domain::find(name).map_err(|e| ConfigError::File {
                path: path.display().to_string(),
                message: format!("eval_db.{name}: {e}"),
            })?;
        }
        Ok(())
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: DbConfig = ctx.typed_config()?;
        let prov = ctx.provenance();
        let mut summary = Vec::new();
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
