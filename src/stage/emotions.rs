//! `emotions` stage: map every task's feeling to one of the 594 emotion conditions with
//! the nearest-anchor mapper (`crate::emotion`), and give the task that condition's labels
//! and one of its 10 anchors — chosen with the task's seeded RNG — as its emotion
//! instruction. The instruction itself is left as it was: the emotion instruction is its own
//! column, appended as a separate section wherever a user simulator reads the task, so the
//! no-emotion variant of every task is the same row without that section.
//!
//! The embedder is whatever `stages/emotions.toml` says — the sentence encoder with the
//! n-gram view by default, `view = "tfidf"` for the hashed n-grams alone, or an `[embedder]`
//! endpoint — and nothing else: when the encoder's model files are missing the stage fails
//! with the one line that says how to fetch them, rather than quietly mapping with a
//! different embedder than the configuration (and so the provenance) names. The model files
//! are among the stage's source files, so their hashes are in the provenance.

use crate::artifact::{self, TaskRecord};
use crate::config::ConfigError;
use crate::emotion::mapper::Mapper;
use crate::emotion::settings::EmotionsConfig;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::seed::derive_rng;
use std::path::{Path, PathBuf};

pub struct EmotionsStage;

/// Events an emotion instruction may tell the simulated user to speak of, each with the
/// words in the task (its instruction or feeling) that show the event is part of it: an
/// anchor that speaks of a trip is not given to a customer paying a phone bill, nor one
/// about a loss to a customer whose task has none.
pub(crate) const EVENTS: &[(&[&str], &[&str])] = &[
    (
        &["trip", "journey", "holiday", "vacation"],
        &[
            "trip", "flight", "travel", "journey", "holiday", "vacation", "package", "fly",
        ],
    ),
    (
        &[
            "painful loss",
            "grief",
            "grieving",
            "mourn",
            "lost someone",
            "sad event",
            "bereave",
            "no longer with us",
        ],
        &[
            "passed away",
            "funeral",
            "died",
            "bereavement",
            "loss",
            "grief",
            "grieving",
            "mourn",
        ],
    ),
];

/// Whether `anchor` speaks of no event of [`EVENTS`] that `story` (lower case) lacks.
fn tells_only_what_happened(anchor: &str, story: &str) -> bool {
    let anchor = anchor.to_lowercase();
    EVENTS.iter().all(|(claims, cues)| {
        !claims.iter().any(|w| anchor.contains(w)) || cues.iter().any(|w| story.contains(w))
    })
}

impl StageConfig for EmotionsConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let c = crate::config::Check::new(path);
        // At most every anchor votes.
        let anchors = crate::emotion::taxonomy::CONDITION_COUNT
            * crate::emotion::anchors::ANCHORS_PER_CONDITION;
        c.count("k", self.k, 1, anchors)?;
        if let Some(e) = &self.embedder {
            crate::llm::config::check_role_table(&c, "embedder", "embedder 'emotion'", e)?;
            // The mapper hides the embedder's counters (and caches vectors of its own), so
            // its tokens are not recorded: a price here would be silently ignored.
            if e.price.is_some() {
                return Err(c.error(
                    "embedder",
                    "field `price`: the embedder's tokens are not counted, so tracer cannot price them; remove it",
                ));
            }
        }
        Ok(())
    }
    fn preflight(&self, _scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        match self
            .embedder
            .as_ref()
            .filter(|c| c.provider == crate::llm::Provider::Openai)
        {
            None => Ok(()),
            Some(c) => crate::llm::runtime()?
                .block_on(crate::llm::preflight_with_env(
                    "embedder 'emotion'",
                    c,
                    &crate::llm::process_env,
                ))
                .map_err(|e| e.to_string()),
        }
    }
}

impl TypedStage for EmotionsStage {
    type Config = EmotionsConfig;
    fn name(&self) -> &'static str {
        "emotions"
    }
    fn code_root(&self) -> &'static str {
        file!()
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
        let mut files = vec![
            PathBuf::from("emotion_anchors/taxonomy.json"),
            PathBuf::from("emotion_anchors/anchors.jsonl"),
        ];
        // The encoder's files, when present (absent, a view that needs them fails in `run`
        // with the fetch hint; a `tfidf` view does not need them).
        // Named relative to the project root when inside it, so provenance does not depend
        // on where the project is checked out.
        let root = crate::config::Paths::from_env().root;
        let dir = crate::emotion::encoder::model_dir(&root);
        let named = dir
            .strip_prefix(&root)
            .map_or(dir.clone(), Path::to_path_buf);
        for f in crate::emotion::encoder::MODEL_FILES {
            if dir.join(f).is_file() {
                files.push(named.join(f));
            }
        }
        files
    }
    fn run(&self, ctx: &StageContext, cfg: &EmotionsConfig) -> Result<String, PipelineError> {
        let (tasks, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("feelings").join("part-00000.parquet"),
        )?;
        let mapper_cfg = cfg.mapper_config();
        let embedder =
            crate::emotion::endpoint::from_config(cfg.embedder.as_ref(), &ctx.response_cache())
                .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        // The embedder's failures are the endpoint's when it is one; anchors, the local
        // encoder and the classifier are this machine's.
        let endpoint = embedder.is_some();
        let failed = |e: crate::emotion::EmotionError| {
            let kind = match e {
                crate::emotion::EmotionError::Embed(_) if endpoint => ErrorKind::Endpoint,
                _ => ErrorKind::Environment,
            };
            ctx.fail(kind, e.to_string())
        };
        // The offline view's mapper is built once per run and shared by every domain; an
        // endpoint embedder gets its own (it carries this stage's response cache).
        let mapper = match embedder {
            None => Mapper::shared(&ctx.paths.root, &mapper_cfg).map(|(m, _)| m),
            Some(e) => Mapper::load_or_train_with(&ctx.paths.root, &mapper_cfg, Some(e))
                .map(|(m, _)| std::sync::Arc::new(m)),
        }
        .map_err(failed)?;
        let feelings: Vec<String> = tasks
            .iter()
            .map(|t| t.feeling.clone().unwrap_or_default())
            .collect();
        let votes = mapper.votes(&feelings).map_err(failed)?;
        let mut families = std::collections::BTreeMap::<String, usize>::new();
        let rows: Vec<TaskRecord> = tasks
            .into_iter()
            .zip(&votes)
            .map(|(task, vote)| {
                let mut rng = derive_rng(ctx.seed, &["emotions", &task.domain, &task.task_id]);
                let story = format!(
                    "{} {}",
                    task.instruction.as_deref().unwrap_or_default(),
                    task.feeling.as_deref().unwrap_or_default()
                )
                .to_lowercase();
                let m = mapper.choose_anchor_where(vote, &mut rng, &|anchor| {
                    tells_only_what_happened(anchor, &story)
                });
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

#[cfg(test)]
mod tests {
    use super::tells_only_what_happened;

    #[test]
    fn an_anchor_speaks_only_of_events_the_task_has() {
        let trip = "You feel excited. Mention the trip, purchase or plan you cannot wait for.";
        let loss = "You are mournful after a painful loss. Speak quietly.";
        let plain = "You are at a loss and dependent on someone else. Ask for help.";
        let bill = "you want to pay the balance on your phone bill.";
        let flight = "you want to change the flight on reservation abc123.";
        let funeral = "you are cancelling because your father passed away.";
        assert!(!tells_only_what_happened(trip, bill));
        assert!(tells_only_what_happened(trip, flight));
        assert!(!tells_only_what_happened(loss, flight));
        assert!(tells_only_what_happened(loss, funeral));
        assert!(tells_only_what_happened(plain, bill));
    }
}
