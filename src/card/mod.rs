//! `tracer card`: the Hugging Face dataset card of a run, `output/README.md`, written from
//! the artifacts alone — a YAML header with one `datasets` config per published table
//! (paths name the files of exactly the domains the card describes and checked fresh, one
//! per domain, so `load_dataset(<output dir>, <config>)` loads what the card counts), then the funnel, emotion mix, reward mix, per-domain counts, the models of
//! every role, what they cost (tokens and dollars per stage and role, per verified task and
//! per accepted trajectory, as the stage manifests recorded them) and the provenance (code,
//! config hashes per stage, seed).
//!
//! The card describes only a run whose stages are fresh: a missing or stale stage is a
//! one-line error naming it and what to run, so the card can never describe data other
//! than the files next to it. Because freshness means each fingerprint was recomputed with
//! this binary's code hash and the current stage configs, the card may name that code hash
//! and read the roles of stages that record no model per row (feeler, judge, emotion
//! mapping) from those configs. Same artifacts and configs => byte-identical card: no
//! wall clock, every map ordered.
//!
//! This module renders the card; `artifacts.rs` checks the run and reads its rows,
//! `provenance.rs` writes the provenance section.
//!
//! Architecture invariant: the card reads artifacts and stage configs; it knows no stage
//! module and no domain internals, and writes only `output/README.md`.

use crate::artifact::{self, ArtifactError, RolloutRecord, TaskRecord};
use crate::config::Paths;
use crate::pipeline::{PipelineError, Runner};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

mod artifacts;
mod provenance;

use artifacts::{check_artifacts, low_exists, low_rows, read, rows_of};
use provenance::{provenance, published_stages};

/// The card's file name inside the output root.
pub const CARD_FILE: &str = "README.md";

/// Stages every card needs, in DAG order, each with the command that makes it.
const REQUIRED: &[&str] = &[
    "traces",
    "grounded",
    "refined",
    "feelings",
    "emotions",
    "tasks",
    "rollouts",
    "trajectories",
];

#[derive(Debug, thiserror::Error)]
pub enum CardError {
    #[error("{path}: missing; the dataset card needs it (run `tracer run {stage}` first)")]
    Missing { path: String, stage: String },
    #[error(
        "{path}: stale ({why}); the dataset card describes fresh artifacts only (run `tracer run {stage}` first)"
    )]
    Stale {
        path: String,
        stage: String,
        why: String,
    },
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    #[error("the card's data quality section: {0}")]
    Quality(String),
}

/// One published table: a `datasets` config.
struct Table {
    config: &'static str,
    split: &'static str,
    /// File name pattern inside each domain's directory of the stage.
    pattern: &'static str,
    /// Paths relative to the output root, one per domain the card describes (never a
    /// `domain=*` glob: that would hand a loader domains the card neither counts nor
    /// checked for freshness).
    paths: Vec<String>,
    about: &'static str,
    rows: u64,
    files: usize,
}

impl Table {
    /// The paths as one line for the body: `stage/domain={a,b}/file`.
    fn shown(&self) -> String {
        let stage = file_of(self.config).0;
        let domains: Vec<&str> = self
            .paths
            .iter()
            .filter_map(|p| p.split("domain=").nth(1)?.split('/').next())
            .collect();
        match domains.as_slice() {
            [one] => format!("{stage}/domain={one}/{}", self.pattern),
            many => format!("{stage}/domain={{{}}}/{}", many.join(","), self.pattern),
        }
    }
}

/// The stage directory and the file a table's rows are counted in.
fn file_of(config: &str) -> (&str, &'static str) {
    match config {
        "sft" => ("trajectories", "_sft.parquet"),
        "trajectories_low" => ("trajectories", "_low.parquet"),
        "trajectories" => ("trajectories", "part-00000.parquet"),
        "eval_tasks" => ("reviewed", "part-00000.parquet"),
        other => (other, "part-00000.parquet"),
    }
}

/// The `tracer quality` report of the run's artifacts, made by the caller (which knows the
/// quality measures) once the card has found the run complete and fresh.
pub type QualityReport<'a> = &'a dyn Fn() -> Result<Option<String>, String>;

/// Write `output/README.md` for the run's domains; returns its path. `quality` gives the
/// card's "Data quality" section; `eval_resamples` the bootstrap resamples of the eval
/// table's intervals (the eval stage's `bootstrap_resamples`).
pub fn write_card(
    runner: &Runner,
    quality: QualityReport,
    eval_resamples: usize,
) -> Result<PathBuf, CardError> {
    let text = render_card(runner, quality, eval_resamples)?;
    let path = runner.paths.output.join(CARD_FILE);
    artifact::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

/// The Hugging Face size category of a row count.
fn size_category(n: u64) -> &'static str {
    match n {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        _ => "1M<n<10M",
    }
}

/// How the card names a role's model id: scripted ids are the built-in deterministic
/// simulators, never a model.
fn describe_model(id: &str) -> String {
    let Some(role) = id.strip_prefix("scripted:") else {
        return format!("`{id}` (OpenAI-compatible endpoint)");
    };
    let what = match role {
        "grounder" => "seeded backtracking search over the domain's argument proposals",
        "refiner" => "templates with seeded variation",
        "feeler" => "rules over the request's tool intents and wording",
        "judge" => "rejects every inconclusive task",
        "oracle-agent" => "follows the reference actions, with configured mistake rates",
        "user" => "slot filling; patience set by the emotion condition",
        _ => "deterministic stand-in",
    };
    format!("built-in deterministic simulator `{id}` ({what}; not a model)")
}

fn is_scripted(id: &str) -> bool {
    id.starts_with("scripted:")
}

/// The ids of a role over all rows, with counts, in id order.
fn tally<'a>(ids: impl Iterator<Item = &'a str>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for id in ids {
        *m.entry(id.to_string()).or_insert(0) += 1;
    }
    m
}

/// Every prompt file the run's stages read (a manifest input under a `prompts` directory),
/// with its hash, and the stages that read it.
fn prompt_versions(
    runner: &Runner,
) -> BTreeMap<(String, String), std::collections::BTreeSet<String>> {
    let mut out: BTreeMap<(String, String), std::collections::BTreeSet<String>> = BTreeMap::new();
    for stage in runner.dag.stages() {
        for d in &runner.domains {
            let dir = crate::pipeline::stage_dir(&runner.paths.output, stage.name(), d.name());
            let Some(m) = crate::pipeline::read_manifest(&dir) else {
                continue;
            };
            for (input, hash) in m.inputs {
                if input.ends_with(".md") && input.contains("prompts") {
                    out.entry((input, hash))
                        .or_default()
                        .insert(stage.name().to_string());
                }
            }
        }
    }
    out
}

/// A role configured in a stage TOML (the stage records no model per row).
fn configured_role(paths: &Paths, stage: &str, role: crate::llm::Role) -> String {
    let roles: crate::llm::RolesConfig = paths
        .stage_table(stage)
        .ok()
        .and_then(|(_, t)| t.get("roles").cloned())
        .and_then(|v| v.try_into().ok())
        .unwrap_or_default();
    crate::llm::configured_model_id(&roles, role)
}

fn render_card(
    runner: &Runner,
    quality: QualityReport,
    eval_resamples: usize,
) -> Result<String, CardError> {
    let with_eval = check_artifacts(runner)?;
    let quality = quality().map_err(CardError::Quality)?;
    let paths = runner.paths;
    let domains: Vec<&str> = runner.domains.iter().map(|d| d.name()).collect();

    // Published tables, with their row counts over every domain.
    let mut tables = vec![
        Table {
            config: "trajectories",
            split: "train",
            pattern: "part-*.parquet",
            paths: Vec::new(),
            about: "reward-1 training episodes, at most the cap per domain (the \"High\" set): full messages with tool calls, tool results and agent reasoning",
            rows: 0,
            files: 0,
        },
        Table {
            config: "sft",
            split: "train",
            pattern: "_sft.parquet",
            paths: Vec::new(),
            about: "the same trajectories as chat rows for TRL's SFT trainer (`messages`, `tools`; arguments as JSON strings)",
            rows: 0,
            files: 0,
        },
        Table {
            config: "trajectories_low",
            split: "train",
            pattern: "_low.parquet",
            paths: Vec::new(),
            about: "the \"Low\" set: every success of the configured domains, uncapped",
            rows: 0,
            files: 0,
        },
        Table {
            config: "tasks",
            split: "verified",
            pattern: "part-*.parquet",
            paths: Vec::new(),
            about: "verified tasks of both splits (column `split`: train or eval; never train on the eval rows): instruction, emotion condition and instruction, reference actions",
            rows: 0,
            files: 0,
        },
        Table {
            config: "rollouts",
            split: "train",
            pattern: "part-*.parquet",
            paths: Vec::new(),
            about: "every training episode with its reward (1, 0, -1), termination and errors",
            rows: 0,
            files: 0,
        },
    ];
    if with_eval {
        tables.push(Table {
            config: "eval_tasks",
            split: "test",
            pattern: "part-*.parquet",
            paths: Vec::new(),
            about: "the evaluation release: verified evaluation tasks that the screening agent solved at least once in k trials and that review did not reject, reviewers' edits applied",
            rows: 0,
            files: 0,
        });
        tables.push(Table {
            config: "eval",
            split: "test",
            pattern: "part-*.parquet",
            paths: Vec::new(),
            about: "evaluation episodes, k trials per evaluation task",
            rows: 0,
            files: 0,
        });
    }
    for t in &mut tables {
        let (stage, file) = file_of(t.config);
        for &d in &domains {
            if t.config == "trajectories_low" && !low_exists(paths, d) {
                continue;
            }
            t.rows += rows_of(paths, stage, d, file)?;
            t.files += 1;
            t.paths.push(format!("{stage}/domain={d}/{}", t.pattern));
        }
    }
    // A table no described domain has (the Low set outside its domains) is not published.
    tables.retain(|t| !t.paths.is_empty());

    // Rows the body needs.
    let mut tasks: BTreeMap<&str, Vec<TaskRecord>> = BTreeMap::new();
    let mut rollouts: BTreeMap<&str, Vec<RolloutRecord>> = BTreeMap::new();
    let mut evals: BTreeMap<&str, Vec<RolloutRecord>> = BTreeMap::new();
    for &d in &domains {
        tasks.insert(d, read(paths, "tasks", d)?);
        rollouts.insert(d, read(paths, "rollouts", d)?);
        if with_eval {
            evals.insert(d, read(paths, "eval", d)?);
        }
    }

    let mut roles: Vec<(&str, BTreeMap<String, usize>)> = vec![
        (
            "grounder",
            tally(tasks.values().flatten().map(|t| t.grounder.as_str())),
        ),
        (
            "refiner",
            tally(
                tasks
                    .values()
                    .flatten()
                    .map(|t| t.refiner.as_deref().unwrap_or("none")),
            ),
        ),
        (
            "feeler",
            tally(std::iter::once(
                configured_role(paths, "feelings", crate::llm::Role::Feeler).as_str(),
            )),
        ),
        (
            "judge",
            tally(std::iter::once(
                configured_role(paths, "tasks", crate::llm::Role::Judge).as_str(),
            )),
        ),
        (
            "agent (rollouts)",
            tally(rollouts.values().flatten().map(|r| r.agent_model.as_str())),
        ),
        (
            "user simulator (rollouts)",
            tally(rollouts.values().flatten().map(|r| r.user_model.as_str())),
        ),
    ];
    if with_eval {
        roles.push((
            "agent (eval)",
            tally(evals.values().flatten().map(|r| r.agent_model.as_str())),
        ));
        roles.push((
            "user simulator (eval)",
            tally(evals.values().flatten().map(|r| r.user_model.as_str())),
        ));
    }
    let any_scripted = roles
        .iter()
        .any(|(_, ids)| ids.keys().any(|id| is_scripted(id)));

    let mut out = String::new();
    // --- YAML header ---
    let biggest = tables.iter().map(|t| t.rows).max().unwrap_or(0);
    out.push_str("---\nlicense: mit\npretty_name: Tracer emotion-conditioned tool-use tasks and trajectories\nlanguage:\n- en\ntask_categories:\n- text-generation\ntags:\n- tool-use\n- function-calling\n- agents\n- customer-service\n- emotion\n- synthetic\n- tau-bench\n");
    let _ = writeln!(out, "size_categories:\n- {}", size_category(biggest));
    out.push_str("configs:\n");
    for t in &tables {
        let _ = writeln!(out, "- config_name: {}", t.config);
        if t.config == "trajectories" {
            out.push_str("  default: true\n");
        }
        let _ = writeln!(out, "  data_files:\n  - split: {}\n    path:", t.split);
        for p in &t.paths {
            let _ = writeln!(out, "    - \"{p}\"");
        }
    }
    out.push_str("---\n\n");

    // --- body ---
    out.push_str("# Tracer: emotion-conditioned tool-use tasks and trajectories\n\n");
    let _ = writeln!(
        out,
        "Verified customer-service tasks with one of 594 emotion conditions each, and agent trajectories rolled out against an emotion-conditioned simulated user, generated by Tracer following the tau-Emotion-Bench recipe. Domains: {}.\n",
        domains.join(", ")
    );
    if any_scripted {
        out.push_str("> **Offline stand-ins.** At least one role below is a built-in deterministic simulator, not a language model (see \"Models per role\"). Rows those roles wrote show the pipeline working end to end; they are not model output and are not meant for training.\n\n");
    }

    out.push_str(
        "## Configs\n\n| config | split | files | rows | what it holds |\n|---|---|---|---|---|\n",
    );
    for t in &tables {
        let _ = writeln!(
            out,
            "| `{}` | {} | `{}` ({} files) | {} | {} |",
            t.config,
            t.split,
            t.shown(),
            t.files,
            t.rows,
            t.about
        );
    }
    out.push_str("\n```python\nimport datasets\nds = datasets.load_dataset(\"<this directory or repo>\", \"trajectories\", split=\"train\")\n```\n\n");

    out.push_str("## Per-domain counts\n\n| domain | verified train tasks | verified eval tasks | rollouts | trajectories | low set |");
    if with_eval {
        out.push_str(" eval episodes |");
    }
    out.push_str("\n|---|---|---|---|---|---|");
    if with_eval {
        out.push_str("---|");
    }
    out.push('\n');
    for &d in &domains {
        let t = &tasks[d];
        let train = t
            .iter()
            .filter(|x| x.split == crate::split::Split::Train)
            .count();
        let _ = write!(
            out,
            "| {d} | {train} | {} | {} | {} | {} |",
            t.len() - train,
            rollouts[d].len(),
            rows_of(paths, "trajectories", d, "part-00000.parquet")?,
            low_rows(paths, d)?,
        );
        if with_eval {
            let _ = write!(out, " {} |", evals[d].len());
        }
        out.push('\n');
    }

    out.push_str("\n## Task funnel\n\nTraces sampled from each domain's tool dependency graph, grounded into reference actions that execute, refined into user instructions, and verified by replay and policy checks; evaluation candidates then screened by a model rollout (kept if solved at least once in k trials) and reviewed by a person; rejections with their reasons.\n\n");
    out.push_str(&crate::stats::funnel(paths, &domains)?);
    if let Some(review) = crate::stats::review_table(paths, &domains) {
        out.push_str("\nManual review of the evaluation release (`tracer review`; decisions in `reviews/<domain>.jsonl`). Edit kinds as the paper counts them: gold edits (arguments or outputs changed), id swaps (only ids replaced), rewrites of the instruction, edits of the emotion instruction; tasks not yet reviewed (or whose reviewers disagree and nobody resolved it) are released or dropped as `stages/reviewed.toml` says. Where two reviewers decided some tasks, their agreement on accept / reject follows (raw and Cohen's kappa).\n\n");
        out.push_str(&review);
    }

    out.push_str("\n## Emotion mix of the verified tasks\n\n");
    out.push_str(&family_table(&domains, &tasks));
    out.push('\n');
    out.push_str(&crate::stats::emotion_table(paths, &domains)?);

    if let Some(q) = &quality {
        out.push_str("\n## Data quality\n\nWhat a reviewer would check by eye, per domain and split (`tracer quality`): incoherent compositions, requested reads whose values the task carries, ids a customer could not know, length, repeated phrasing, language hits, the emotion mix, and the kept training rows (their ending, faults, identification before the first write, and whether a built-in simulator wrote them).\n\n");
        out.push_str(q);
    }

    out.push_str("\n## Reward mix\n\nTraining rollouts (reward 1: the final database equals the reference's and the user did not abandon; -1: the user abandoned; 0 otherwise). Episodes lost to infrastructure failures are not scored.\n\n");
    out.push_str(&crate::stats::rollout_table(paths, &domains)?);
    if let Some(eval) = crate::stats::eval_table(paths, &domains, eval_resamples)? {
        out.push_str(
            "\nEvaluation (Avg@k and Pass^k over k trials per task, with 95% intervals):\n\n",
        );
        out.push_str(&eval);
    }

    out.push_str("\n## Models per role\n\n| role | model | rows |\n|---|---|---|\n");
    for (role, ids) in &roles {
        for (id, n) in ids {
            let rows = if matches!(*role, "feeler" | "judge") {
                "whole stage (from its config)".to_string()
            } else {
                n.to_string()
            };
            let _ = writeln!(out, "| {role} | {} | {rows} |", describe_model(id));
        }
    }
    let _ = writeln!(
        out,
        "| emotion mapping | {} | whole stage (from its config) |",
        emotion_mapping(paths)
    );
    let prompts = prompt_versions(runner);
    if !prompts.is_empty() {
        out.push_str(
            "\nThe prompts the endpoint roles were sent (`prompts/`, the first 12 hex digits of each file's SHA-256 as the stages' manifests record it):\n\n| prompt file | version | stages |\n|---|---|---|\n",
        );
        for ((file, hash), stages) in &prompts {
            let stages: Vec<&str> = stages.iter().map(String::as_str).collect();
            let _ = writeln!(
                out,
                "| `{file}` | {} | {} |",
                &hash[..hash.len().min(12)],
                stages.join(", ")
            );
        }
    }

    let scope = crate::stats::CostScope::new(&runner.dag, published_stages(runner, with_eval)?)?;
    if let Some(cost) = crate::stats::cost_report(paths, &scope, &domains)? {
        let _ = write!(out, "\n## Cost\n\n{}\n\n{cost}", crate::stats::COST_NOTE);
    }

    out.push_str(&provenance(runner, with_eval)?);
    Ok(out)
}

/// Families of the verified tasks per domain, and how many of the 594 conditions occur.
fn family_table(domains: &[&str], tasks: &BTreeMap<&str, Vec<TaskRecord>>) -> String {
    const FAMILIES: [&str; 5] = ["anger", "fear", "disgust", "sadness", "enjoyment"];
    let mut out = String::from("| domain | tasks |");
    for f in FAMILIES {
        let _ = write!(out, " {f} |");
    }
    out.push_str(" no emotion | distinct conditions |\n|---|---|");
    out.push_str(&"---|".repeat(FAMILIES.len() + 2));
    out.push('\n');
    let mut all: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    let mut total = 0usize;
    for &d in domains {
        let rows = &tasks[d];
        total += rows.len();
        let _ = write!(out, "| {d} | {} |", rows.len());
        for f in FAMILIES {
            let n = rows
                .iter()
                .filter(|r| r.emotion_family.as_deref() == Some(f))
                .count();
            let _ = write!(out, " {n} |");
        }
        let none = rows.iter().filter(|r| r.emotion_family.is_none()).count();
        let conditions: BTreeSet<_> = rows.iter().filter_map(condition).collect();
        all.extend(conditions.iter().cloned());
        let _ = writeln!(out, " {none} | {} |", conditions.len());
    }
    let _ = writeln!(
        out,
        "\n{total} verified tasks cover {} of the 594 conditions (emotion x politeness x urgency x trust).",
        all.len()
    );
    out
}

fn condition(r: &TaskRecord) -> Option<(String, String, String, String)> {
    Some((
        r.emotion.clone()?,
        r.politeness.clone()?,
        r.urgency.clone()?,
        r.trust.clone()?,
    ))
}

/// The `emotions` stage's mapping as configured: an endpoint embedder, or the offline views.
fn emotion_mapping(paths: &Paths) -> String {
    let table = paths
        .stage_table("emotions")
        .map(|(_, t)| t)
        .unwrap_or_default();
    let text = |key: &str| table.get(key).and_then(|v| v.as_str()).map(str::to_string);
    if let Some(model) = table
        .get("embedder")
        .and_then(|e| e.get("model"))
        .and_then(|m| m.as_str())
    {
        return format!("`{model}` embeddings (OpenAI-compatible endpoint) + trained classifier");
    }
    format!(
        "built-in offline mapper (view `{}`, decision `{}`: all-MiniLM-L6-v2 sentence encoder and/or hashed n-grams, a trained classifier; deterministic)",
        text("view").unwrap_or_else(|| "encoder-tfidf".into()),
        text("decision").unwrap_or_else(|| "heads".into()),
    )
}
