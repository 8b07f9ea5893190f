//! `tracer quality`: what a reviewer would check by eye, per domain and split, from the
//! `tasks` artifact (coherence, answered questions, unknowable ids, length, repetition,
//! language, the emotion mix) and the `trajectories` artifact (kept SFT rows: their
//! ending, faults, identification before the first write, language of the user's turns).
//! `tracer stats` prints the same tables.

use super::{CliError, resolve_domains};
use crate::artifact::{self, RolloutRecord, TaskRecord};
use crate::config::Paths;
use crate::pipeline::stage_dir;
use crate::split::Split;
use clap::Args;
use std::collections::BTreeMap;

#[derive(Debug, Args)]
pub struct QualityArgs {
    /// Only these domains (repeatable). Default: `domains` of stages/pipeline.toml, else all.
    #[arg(long = "domain")]
    pub domains: Vec<String>,
}

type SftRow = (String, Split, crate::analysis::clean::SftSummary);
type TaskRow = (String, Split, crate::quality::Summary);

/// The task and SFT tables of these domains (domains without a `tasks` artifact are
/// skipped); `None` when no domain has one.
pub fn report(paths: &Paths, domains: &[&str]) -> Result<Option<String>, CliError> {
    let mut task_rows: Vec<TaskRow> = Vec::new();
    let mut sft_rows: Vec<SftRow> = Vec::new();
    for &d in domains {
        let tasks_path = stage_dir(&paths.output, "tasks", d).join("part-00000.parquet");
        if !tasks_path.exists() {
            continue;
        }
        let domain = crate::domain::find(d)?;
        let (tasks, _) = artifact::read_records::<TaskRecord>(&tasks_path)?;
        let envs = crate::project::SplitEnvs::load(&stage_dir(&paths.output, "db", d), domain)?;
        let measures = crate::parallel::parallel_map(&tasks, |t| {
            crate::quality::measure_task(envs.for_split(t.split), t)
        });
        for split in [Split::Train, Split::Eval] {
            let (ts, ms): (Vec<&TaskRecord>, Vec<crate::quality::TaskQuality>) = tasks
                .iter()
                .zip(&measures)
                .filter(|(t, _)| t.split == split)
                .map(|(t, m)| (t, m.clone()))
                .unzip();
            if !ts.is_empty() {
                task_rows.push((d.to_string(), split, crate::quality::summarise(&ts, &ms)));
            }
        }
        let kept_path = stage_dir(&paths.output, "trajectories", d).join("part-00000.parquet");
        if !kept_path.exists() {
            continue;
        }
        let (kept, _) = artifact::read_records::<RolloutRecord>(&kept_path)?;
        let by_id: BTreeMap<String, TaskRecord> =
            tasks.into_iter().map(|t| (t.task_id.clone(), t)).collect();
        let starts = crate::analysis::StartStates {
            train: envs.for_split(Split::Train),
            eval: envs.for_split(Split::Eval),
        };
        let analysed = crate::analysis::analyse_rollouts(starts, &by_id, &kept, true)
            .map_err(|e| CliError::Failed(e.to_string()))?;
        let mut per_split: BTreeMap<Split, crate::analysis::clean::SftSummary> = BTreeMap::new();
        for a in &analysed {
            let r = &kept[a.index];
            per_split.entry(r.split).or_default().add(
                &a.episode,
                &a.findings,
                &r.agent_model,
                &r.user_model,
                r.emotion_family.as_deref(),
                starts.train.identifies_customer(),
            );
        }
        sft_rows.extend(
            per_split
                .into_iter()
                .map(|(s, sum)| (d.to_string(), s, sum)),
        );
    }
    if task_rows.is_empty() {
        return Ok(None);
    }
    let mut out = crate::quality::table(&task_rows);
    if !sft_rows.is_empty() {
        out.push('\n');
        out.push_str(&crate::analysis::clean::table(&sft_rows));
    }
    Ok(Some(out))
}

pub fn quality(paths: &Paths, args: QualityArgs) -> Result<(), CliError> {
    let names: Vec<&str> = resolve_domains(paths, &args.domains)?
        .iter()
        .map(|d| d.name())
        .collect();
    match report(paths, &names)? {
        Some(t) => {
            outln!("## Quality of verified tasks\n");
            out!("{t}");
            Ok(())
        }
        None => Err(CliError::Failed(
            "no tasks artifact yet: run `tracer run tasks` (or `make tasks`) first".into(),
        )),
    }
}
