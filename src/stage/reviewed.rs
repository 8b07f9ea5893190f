//! `reviewed` stage: the evaluation release after manual review (the paper's 884 -> 580
//! step). Reads the screened evaluation tasks and the domain's decisions file
//! (`reviews/<domain>.jsonl`, see [`crate::review`]; written by `tracer review`), and
//! writes the release: accepted tasks as they are, edited tasks with their edit applied
//! and re-verified by replay, rejected tasks to `_rejects.parquet` with the reviewer's
//! reason. Tasks nobody has decided on yet (or whose content changed since their decision,
//! or whose reviewers disagree and nobody resolved it) are kept or dropped by `unreviewed` (default `keep`, so an offline run without reviews
//! still has an evaluation set; a release that publishes only reviewed tasks sets `drop`).
//! `review.json` counts the decisions, the edit kinds and the agreement between reviewers
//! (over the tasks two of them decided) for `tracer stats` and the card.
//! Deterministic given the same decisions file: it is a declared source of the stage, so a
//! new decision makes the stage (and eval after it) stale.

use crate::artifact::{self, RejectRecord, TaskRecord};
use crate::config::ConfigError;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::review::{ReviewCounts, ReviewedConfig, Reviews, State};
use std::path::{Path, PathBuf};

pub struct ReviewedStage;

/// Apply the decisions to the screened tasks: the release, its rejects and the counts.
pub fn apply_reviews(
    env: &dyn crate::domain::Environment,
    tasks: Vec<TaskRecord>,
    reviews: &Reviews,
    cfg: &ReviewedConfig,
) -> (Vec<TaskRecord>, Vec<RejectRecord>, ReviewCounts) {
    let mut counts = ReviewCounts {
        candidates: tasks.len(),
        ..Default::default()
    };
    let mut kept = Vec::new();
    let mut rejects = Vec::new();
    let reject = |t: &TaskRecord, kind: &str, reason: String| RejectRecord {
        domain: t.domain.clone(),
        split: t.split,
        trace_id: t.trace_id.clone(),
        task_id: Some(t.task_id.clone()),
        stage: "reviewed".into(),
        reason_kind: kind.into(),
        rule: None,
        reason,
    };
    let hashes: Vec<String> = tasks.iter().map(crate::review::content_hash).collect();
    counts.agreement = crate::review::agreement(
        reviews,
        tasks
            .iter()
            .zip(&hashes)
            .map(|(t, h)| (t.task_id.as_str(), h.as_str())),
    );
    for (t, hash) in tasks.into_iter().zip(&hashes) {
        match reviews.state_of(&t.task_id, hash) {
            State::Accepted => {
                counts.accepted += 1;
                kept.push(t);
            }
            State::Rejected(reason) => {
                counts.rejected += 1;
                rejects.push(reject(&t, "review", reason));
            }
            State::Edited(edit) => match crate::review::verify_edit(env, &t, &edit, &cfg.gates) {
                Ok(edited) => {
                    counts.edited += 1;
                    let k = crate::review::edit_kinds(&t, &edited);
                    counts.gold_edits += k.gold_edit as usize;
                    counts.id_swaps += k.id_swap as usize;
                    counts.rewrites += k.rewrite as usize;
                    counts.emotion_edits += k.emotion_edit as usize;
                    kept.push(edited);
                }
                Err(e) => {
                    counts.failed_edits += 1;
                    rejects.push(reject(
                        &t,
                        "review_edit",
                        format!("the reviewed edit no longer verifies: {e}"),
                    ));
                }
            },
            s @ (State::Pending | State::Stale | State::Conflict(_)) => {
                match s {
                    State::Pending => counts.pending += 1,
                    State::Stale => counts.stale += 1,
                    _ => counts.conflicts += 1,
                }
                if cfg.unreviewed == "keep" {
                    kept.push(t);
                } else {
                    rejects.push(reject(&t, "unreviewed", s.as_str().to_string()));
                }
            }
        }
    }
    counts.released = kept.len();
    (kept, rejects, counts)
}

impl StageConfig for ReviewedConfig {
    fn load(path: &Path, table: &toml::Table) -> Result<Self, ConfigError> {
        ReviewedConfig::load(path, table)
    }
}

impl TypedStage for ReviewedStage {
    type Config = ReviewedConfig;
    fn name(&self) -> &'static str {
        "reviewed"
    }
    fn code_root(&self) -> &'static str {
        file!()
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "screened"]
    }
    fn optional_source_files(&self, domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        let dir = config
            .get("reviews_dir")
            .and_then(|v| v.as_str())
            .unwrap_or("reviews");
        vec![crate::review::reviews_path(Path::new(""), dir, domain)]
    }
    fn validate_sources(
        &self,
        paths: &crate::config::Paths,
        domains: &[&'static dyn crate::domain::Domain],
    ) -> Vec<String> {
        let cfg = match paths.stage_table(self.name()) {
            Ok((path, t)) => ReviewedConfig::load(&path, &t).ok(),
            Err(_) => None,
        }
        .unwrap_or_default();
        domains
            .iter()
            .filter_map(|d| {
                let path = crate::review::reviews_path(&paths.root, &cfg.reviews_dir, d.name());
                Reviews::read(&path).err()
            })
            .collect()
    }
    fn run(&self, ctx: &StageContext, cfg: &ReviewedConfig) -> Result<String, PipelineError> {
        let (tasks, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("screened").join("part-00000.parquet"),
        )?;
        let path =
            crate::review::reviews_path(&ctx.paths.root, &cfg.reviews_dir, ctx.domain.name());
        let reviews = Reviews::read(&path).map_err(|e| ctx.fail(ErrorKind::Input, e))?;
        let envs = crate::project::SplitEnvs::load(&ctx.input_dir("db"), ctx.domain)?;
        let env = envs.for_split(crate::split::Split::Eval);
        let (kept, rejects, counts) = apply_reviews(env, tasks, &reviews, cfg);
        let prov = ctx.provenance();
        artifact::write_records(&ctx.out("part-00000.parquet"), &kept, &prov)?;
        artifact::write_records(&ctx.out("_rejects.parquet"), &rejects, &prov)?;
        let json = serde_json::to_vec_pretty(&counts).unwrap_or_default();
        artifact::write_atomic(&ctx.out("review.json"), &json)?;
        Ok(format!(
            "{} of {} tasks released: {} accepted, {} edited, {} rejected, {} pending, {} need review again, {} in conflict (unreviewed = {})",
            counts.released,
            counts.candidates,
            counts.accepted,
            counts.edited,
            counts.rejected + counts.failed_edits,
            counts.pending,
            counts.stale,
            counts.conflicts,
            cfg.unreviewed
        ))
    }
}
