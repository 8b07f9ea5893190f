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
use crate::domain::Split;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::project::{DbConfig, RULESET_FILE, db_splits, eval_db_path};
use std::path::Path;

pub struct DbStage;

impl StageConfig for DbConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        DbConfig::check(self, path)
    }
}

impl TypedStage for DbStage {
    type Config = DbConfig;
    fn name(&self) -> &'static str {
        "db"
    }
    fn code_root(&self) -> &'static str {
        file!()
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
        let Ok((path, table)) = paths.stage_table(self.name()) else {
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
    fn run(&self, ctx: &StageContext, cfg: &DbConfig) -> Result<String, PipelineError> {
        let ruleset = crate::domain::resolve_ruleset(
            ctx.domain,
            cfg.rulesets.get(ctx.domain.name()).map(String::as_str),
        )?;
        let prov = ctx.provenance();
        let mut summary = Vec::new();
        if let Some(r) = ruleset {
            let json = serde_json::json!({"domain": ctx.domain.name(), "ruleset": r});
            let bytes = serde_json::to_vec_pretty(&json)
                .map_err(|e| ctx.fail(ErrorKind::Internal, e.to_string()))?;
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
                let bytes = serde_json::to_vec_pretty(&value)
                    .map_err(|e| ctx.fail(ErrorKind::Internal, e.to_string()))?;
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
