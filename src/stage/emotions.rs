//! `emotions` stage: map every task's feeling to one of the 594 emotion conditions with
//! the nearest-anchor mapper (`crate::emotion`), and give the task that condition's labels
//! and one of its 10 anchors — chosen with the task's seeded RNG — as its emotion
//! instruction. The instruction itself is left as it was: the emotion instruction is its own
//! column, appended as a separate section wherever a user simulator reads the task, so the
//! no-emotion variant of every task is the same row without that section.

use crate::artifact::{self, TaskRecord};
use crate::config::ConfigError;
use crate::emotion::mapper::{Mapper, MapperConfig};
use crate::pipeline::{PipelineError, Stage, StageContext};
use crate::seed::derive_rng;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub struct EmotionsStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmotionsConfig {
    /// Neighbouring anchors that vote.
    #[serde(default = "ten")]
    pub k: usize,
    /// `[embedder]`: an OpenAI-compatible `/v1/embeddings` model (same fields as a role);
    /// absent = the offline hashed TF-IDF embedder.
    #[serde(default)]
    pub embedder: Option<crate::llm::RoleConfig>,
}

fn ten() -> usize {
    10
}

impl Stage for EmotionsStage {
    fn name(&self) -> &'static str {
        "emotions"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["feelings"]
    }
    fn validate_sources(
        &self,
        paths: &crate::config::Paths,
        _domains: &[&'static dyn crate::domain::Domain],
    ) -> Vec<String> {
        crate::emotion::validation_problems(&paths.root)
    }
    fn source_files(&self, _domain: &str, _config: &toml::Table) -> Vec<PathBuf> {
        vec![
            PathBuf::from("emotion_anchors/taxonomy.json"),
            PathBuf::from("emotion_anchors/anchors.jsonl"),
        ]
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        let cfg: EmotionsConfig = crate::config::parse_typed(path, table)?;
        let c = crate::config::Check::new(path);
        // At most every anchor votes.
        let anchors = crate::emotion::taxonomy::CONDITION_COUNT
            * crate::emotion::anchors::ANCHORS_PER_CONDITION;
        c.count("k", cfg.k, 1, anchors)?;
        if let Some(e) = &cfg.embedder {
            super::roles::check_role_table(&c, "embedder", "embedder 'emotion'", e)?;
        }
        Ok(())
    }
    fn preflight(&self, path: &Path, table: &toml::Table) -> Result<(), String> {
        let cfg: EmotionsConfig =
            crate::config::parse_typed(path, table).map_err(|e| e.to_string())?;
        match cfg
            .embedder
            .filter(|c| c.provider == crate::llm::Provider::Openai)
        {
            None => Ok(()),
            Some(c) => crate::llm::runtime()?
                .block_on(crate::llm::preflight_with_env(
                    "embedder 'emotion'",
                    &c,
                    &crate::llm::process_env,
                ))
                .map_err(|e| e.to_string()),
        }
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: EmotionsConfig = ctx.typed_config()?;
        let (tasks, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("feelings").join("part-00000.parquet"),
        )?;
        let mapper_cfg = MapperConfig {
            k: cfg.k,
            ..MapperConfig::default()
        };
        let embedder = crate::emotion::endpoint::from_config(
            cfg.embedder.as_ref(),
            &super::roles::cache_path(ctx.paths),
        )
        .map_err(|e| ctx.fail(e))?;
        let (mapper, _) =
            Mapper::load_or_train_with(&ctx.paths.root, &ctx.paths.output, &mapper_cfg, embedder)
                .map_err(|e| ctx.fail(e.to_string()))?;
        let feelings: Vec<String> = tasks
            .iter()
            .map(|t| t.feeling.clone().unwrap_or_default())
            .collect();
        let votes = mapper
            .votes(&feelings)
            .map_err(|e| ctx.fail(e.to_string()))?;
        let mut families = std::collections::BTreeMap::<String, usize>::new();
        let rows: Vec<TaskRecord> = tasks
            .into_iter()
            .zip(&votes)
            .map(|(task, vote)| {
                let mut rng = derive_rng(ctx.seed, &["emotions", &task.domain, &task.task_id]);
                let m = mapper.choose_anchor(vote, &mut rng);
                *families.entry(m.family.clone()).or_default() += 1;
                TaskRecord {
                    emotion_family: Some(m.family),
                    emotion: Some(m.emotion),
                    politeness: Some(m.politeness),
                    urgency: Some(m.urgency),
                    trust: Some(m.trust),
                    emotion_instruction: Some(m.anchor_text),
                    ..task
                }
            })
            .collect();
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        let mix: Vec<String> = families.iter().map(|(f, n)| format!("{f} {n}")).collect();
        Ok(format!(
            "{} tasks mapped with {} ({})",
            rows.len(),
            mapper.embedder().id(),
            mix.join(", ")
        ))
    }
}
