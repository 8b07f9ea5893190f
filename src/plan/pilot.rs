//! `tracer plan --pilot N`: a pilot run of N tasks per domain and split through every stage
//! on the real endpoints, in its own output directory (`<output>/.pilot/`, with its own
//! lock and response cache), and the release extrapolated from what it measured.
//!
//! The pilot is the run itself with the grounded caps set to N ([`pilot_paths`] writes its
//! stage overrides into `<output>/.pilot/.config/`: the run's own overrides, if any, with
//! `max_train` / `max_eval` = N for every domain, and `max_errored_share = 1` wherever a
//! stage has one, so endpoint failures are measured rather than fatal). The caller runs
//! [`PILOT_TARGETS`] there. [`extrapolate`] then scales what each stage's manifest
//! recorded per item of its input (tokens per grounded trace, per refined task, per
//! episode, per analysed episode: so per verified task and per kept trajectory) to the
//! items the full run's caps give, split by split: a stage's items in the release are its
//! items in the pilot times (traces the release grounds) / (traces the pilot grounded) of
//! their split. Requests are counted from the pilot's artifacts (the agent's and user's
//! turns, the refinement column, the inconclusive verdicts, re-derived by verification).

use super::measure::{self, Measured};
use super::{Basis, Calls, Funnel, Lines, Plan, PlanError, Prompts, RunSettings};
use crate::config::Paths;
use crate::domain::Domain;
use crate::pipeline::{read_manifest, stage_dir};
use serde::Serialize;

/// The pilot's output directory, inside the run's.
pub const PILOT_DIR: &str = ".pilot";

/// The stages the pilot brings up to date: with them, every stage runs (`analysis` reads
/// `rollouts` and `eval`, `trajectories` the rollouts).
pub const PILOT_TARGETS: [&str; 2] = ["trajectories", "analysis"];

/// The stages that tolerate a share of endpoint failures (`max_errored_share`).
const TOLERANT: [&str; 6] = [
    "grounded", "refined", "tasks", "rollouts", "screened", "eval",
];

/// Where the pilot's stage overrides go, inside its output directory.
const CONFIG_DIR: &str = ".config";

/// The pilot's paths for a run `paths` configures, its overrides written (`n` tasks per
/// domain and split). The caller holds the pilot directory's lock.
pub fn pilot_paths(
    paths: &Paths,
    n: usize,
    domains: &[&'static dyn Domain],
) -> Result<Paths, PlanError> {
    let output = paths.output.join(PILOT_DIR);
    let config = output.join(CONFIG_DIR);
    let io = |e: std::io::Error| PlanError::Invalid(format!("{}: {e}", config.display()));
    std::fs::create_dir_all(&config).map_err(io)?;
    for e in std::fs::read_dir(&config).map_err(io)?.flatten() {
        if e.path().extension().is_some_and(|x| x == "toml") {
            std::fs::remove_file(e.path()).map_err(io)?;
        }
    }
    let mut files: std::collections::BTreeMap<String, toml::Table> = Default::default();
    if let Some(dir) = &paths.overrides {
        for e in std::fs::read_dir(dir)
            .map_err(|e| PlanError::Invalid(format!("{}: {e}", dir.display())))?
            .flatten()
        {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(stage) = name.strip_suffix(".toml") {
                files.insert(stage.to_string(), crate::config::read_table(&e.path())?);
            }
        }
    }
    let n = n as i64;
    let grounded = files.entry("grounded".into()).or_default();
    grounded.insert("max_train".into(), n.into());
    grounded.insert("max_eval".into(), n.into());
    let caps = grounded
        .entry("caps")
        .or_insert_with(|| toml::Value::Table(Default::default()));
    if let Some(caps) = caps.as_table_mut() {
        for d in domains {
            let own = caps
                .entry(d.name())
                .or_insert_with(|| toml::Value::Table(Default::default()));
            if let Some(own) = own.as_table_mut() {
                own.insert("max_train".into(), n.into());
                own.insert("max_eval".into(), n.into());
            }
        }
    }
    for stage in TOLERANT {
        files
            .entry(stage.into())
            .or_default()
            .insert("max_errored_share".into(), 1.0.into());
    }
    for (stage, table) in &files {
        let text: String = table
            .iter()
            .map(|(k, v)| format!("{} = {}\n", toml_key(k), toml_value(v)))
            .collect();
        crate::artifact::write_atomic(
            &config.join(format!("{stage}.toml")),
            format!("# tracer plan --pilot {n}: written for the pilot, do not edit\n{text}")
                .as_bytes(),
        )?;
    }
    Ok(Paths {
        root: paths.root.clone(),
        output,
        overrides: Some(config),
        roles: paths.roles.clone(),
    })
}

/// A key as TOML writes it (quoted, so any key reads back as itself).
fn toml_key(k: &str) -> String {
    serde_json::to_string(k).unwrap_or_default()
}

/// A value as TOML text on one line (tables inline): the crate is built without its
/// serializer, and the pilot's overrides are small.
fn toml_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) if f.is_nan() => "nan".into(),
        toml::Value::Float(f) if f.is_infinite() => {
            if *f > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            }
        }
        toml::Value::Float(f) => format!("{f:?}"),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        toml::Value::Table(t) => format!(
            "{{{}}}",
            t.iter()
                .map(|(k, v)| format!("{} = {}", toml_key(k), toml_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One stage's endpoint failures in the pilot.
#[derive(Clone, Debug, Serialize)]
pub struct Errored {
    pub stage: &'static str,
    pub errored: f64,
    pub items: f64,
}

/// What the pilot measured in one domain.
#[derive(Clone, Debug, Serialize)]
pub struct PilotDomain {
    pub domain: String,
    /// Traces the pilot grounded, `[train, eval]`.
    pub tried: [f64; 2],
    pub grounded: [f64; 2],
    /// Tasks `tasks` kept.
    pub verified: [f64; 2],
    pub screened_kept: f64,
    pub kept_trajectories: f64,
    pub errored: Vec<Errored>,
    /// Prompt and completion tokens of every stage.
    pub tokens: f64,
    /// Tokens of the stages up to `tasks` per task kept.
    pub tokens_per_verified_task: Option<f64>,
    /// Tokens of the stages up to `trajectories` (the training rollouts) per kept
    /// trajectory.
    pub tokens_per_kept_trajectory: Option<f64>,
}

/// The pilot, as the plan reports it beside the extrapolation.
#[derive(Clone, Debug, Serialize)]
pub struct PilotReport {
    pub dir: String,
    pub tasks_per_split: usize,
    pub domains: Vec<PilotDomain>,
    /// Prompt and completion tokens the pilot used, all stages and domains.
    pub tokens: f64,
}

/// The stages up to `tasks` (the verified tasks' cost).
const TASK_STAGES: [&str; 5] = ["grounded", "refined", "feelings", "emotions", "tasks"];

/// Per split, the items a stage's usage scales with, in a funnel.
fn units(stage: &str, f: &Funnel, s: &RunSettings, failed: [f64; 2]) -> [f64; 2] {
    let one = |split: crate::split::Split, n: f64| {
        let mut v = [0.0; 2];
        v[measure::at(split)] = n;
        v
    };
    match stage {
        "grounded" => f.attempted,
        "refined" => f.grounded,
        "feelings" | "emotions" | "tasks" => f.refined,
        "rollouts" => one(s.rollouts.split, f.rollout_episodes),
        "screened" => one(s.screened.split, f.screened_episodes),
        "eval" => one(s.eval.split, f.eval_episodes),
        _ => failed,
    }
}

/// Inconclusive verdicts among the pilot's tasks of `domain` (re-derived by verification:
/// an accepted one leaves no trace in the artifacts), `[train, eval]`.
fn inconclusive(pilot: &Paths, domain: &'static dyn Domain) -> Result<[f64; 2], PlanError> {
    let (_, table) = pilot.stage_table("tasks")?;
    let gates: crate::verify::Gates = match table.get("gates") {
        Some(g) => g
            .clone()
            .try_into()
            .map_err(|e| PlanError::Invalid(format!("tasks: gates: {e}")))?,
        None => Default::default(),
    };
    let tasks = measure::read::<crate::artifact::TaskRecord>(
        &pilot.output,
        "emotions",
        domain.name(),
        "part-00000.parquet",
    )?
    .unwrap_or_default();
    let envs =
        crate::project::SplitEnvs::load(&stage_dir(&pilot.output, "db", domain.name()), domain)
            .map_err(|e| PlanError::Invalid(e.to_string()))?;
    let mut out = [0.0; 2];
    for t in &tasks {
        if let Err(r) = crate::verify::verify_task_with(envs.for_split(t.split), t, &gates)
            && r.kind == crate::verify::RejectKind::Inconclusive
        {
            out[measure::at(t.split)] += 1.0;
        }
    }
    Ok(out)
}

/// Rows of a stage's `part-00000.parquet` (0 when absent).
fn rows(output: &std::path::Path, stage: &str, domain: &str) -> Result<f64, PlanError> {
    let path = stage_dir(output, stage, domain).join("part-00000.parquet");
    if !path.is_file() {
        return Ok(0.0);
    }
    Ok(crate::artifact::parquet_rows(&path)?.0 as f64)
}

/// The release `paths` configures, extrapolated from the pilot in `pilot` (`n` tasks per
/// domain and split), for `domains`.
pub fn extrapolate(
    paths: &Paths,
    pilot: &Paths,
    n: usize,
    domains: &[&'static dyn Domain],
) -> Result<Plan, PlanError> {
    let settings = RunSettings::load(paths)?;
    let prompts = Prompts::load(paths, &settings)?;
    let mut lines = Lines::new(&settings);
    let mut counts = Vec::new();
    let mut report = PilotReport {
        dir: pilot.output.display().to_string(),
        tasks_per_split: n,
        domains: Vec::new(),
        tokens: 0.0,
    };
    let mut notes = Vec::new();
    for &d in domains {
        let caps = settings.caps(d);
        let m = measure::measure(&pilot.output, d, caps.max_actions, &prompts, &|s| {
            settings.emotion(s)
        })?;
        for stage in [
            "grounded", "refined", "tasks", "rollouts", "screened", "eval",
        ] {
            if !m.has(stage) {
                return Err(PlanError::Invalid(format!(
                    "{}: the pilot has no `{stage}` output for {} (run `tracer plan --pilot {n}` again)",
                    pilot.output.display(),
                    d.name()
                )));
            }
        }
        let eligible = m.eligible.unwrap_or(m.funnel.attempted);
        let full = [
            eligible[0].min(caps.train as f64),
            eligible[1].min(caps.eval as f64),
        ];
        let k = [0, 1].map(|i| {
            if m.funnel.attempted[i] > 0.0 {
                full[i] / m.funnel.attempted[i]
            } else {
                0.0
            }
        });
        let failed = analysed(&m, &settings);
        let manifest_of = |stage: &str| read_manifest(&stage_dir(&pilot.output, stage, d.name()));
        let judged = inconclusive(pilot, d)?;
        let mut tokens_by_stage: std::collections::BTreeMap<&str, f64> = Default::default();
        for r in &settings.roles {
            let usage = manifest_of(r.stage)
                .map(|man| {
                    man.usage
                        .iter()
                        .filter(|u| u.role == r.role && !u.scripted)
                        .fold(crate::cost::Usage::default(), |a, u| a + u.tokens)
                })
                .unwrap_or_default();
            *tokens_by_stage.entry(r.stage).or_default() +=
                (usage.prompt_tokens + usage.completion_tokens) as f64;
            if r.endpoint.is_none() {
                continue;
            }
            let u = units(r.stage, &m.funnel, &settings, failed);
            let (pilot_units, full_units) = (u[0] + u[1], u[0] * k[0] + u[1] * k[1]);
            let scale = if pilot_units > 0.0 {
                full_units / pilot_units
            } else {
                0.0
            };
            let requests = requests(r.stage, r.role, &m, judged, failed);
            lines.add(
                r.stage,
                r.role,
                Some(Calls {
                    requests: requests.unwrap_or(0.0) * scale,
                    prompt: usage.prompt_tokens as f64 * scale,
                    completion: usage.completion_tokens as f64 * scale,
                }),
            );
            if requests.is_none() {
                lines.forget_requests(r.stage, r.role);
            }
        }
        // Tokens of the stages with a scripted role only (none) and of the endpoint roles.
        let tokens: f64 = tokens_by_stage.values().sum();
        let task_tokens: f64 = TASK_STAGES
            .iter()
            .map(|s| tokens_by_stage.get(s).copied().unwrap_or(0.0))
            .sum();
        let kept_tasks = [
            m.funnel.verified[0] - m.funnel.judged[0],
            m.funnel.verified[1] - m.funnel.judged[1],
        ];
        let kept_trajectories = rows(&pilot.output, "trajectories", d.name())?;
        let per = |x: f64, n: f64| (n > 0.0).then(|| x / n);
        report.tokens += tokens;
        report.domains.push(PilotDomain {
            domain: d.name().to_string(),
            tried: m.funnel.attempted,
            grounded: m.funnel.grounded,
            verified: kept_tasks,
            screened_kept: m.funnel.screened_kept,
            kept_trajectories,
            errored: m
                .errored
                .iter()
                .map(|(stage, errored, items)| Errored {
                    stage,
                    errored: *errored,
                    items: *items,
                })
                .collect(),
            tokens,
            tokens_per_verified_task: per(task_tokens, kept_tasks[0] + kept_tasks[1]),
            tokens_per_kept_trajectory: per(
                task_tokens + tokens_by_stage.get("rollouts").copied().unwrap_or(0.0),
                kept_trajectories,
            ),
        });
        counts.push(super::Counts {
            domain: d.name().to_string(),
            funnel: scaled(&m.funnel, k, failed, &settings),
        });
        if m.funnel
            .attempted
            .iter()
            .zip(full)
            .any(|(p, f)| *p == 0.0 && f > 0.0)
        {
            notes.push(format!(
                "{}: the pilot grounded no trace of a split the release grounds: that split's cost is left out",
                d.name()
            ));
        }
    }
    let (lines, total) = lines.finish();
    notes.push(format!(
        "Extrapolated from the pilot in {}: each stage's tokens per item of its input (grounded trace, refined task, episode, analysed episode), scaled split by split to the traces the release grounds; thinking, re-asks and endpoint errors are in the pilot's figures.",
        pilot.output.display()
    ));
    Ok(Plan {
        basis: Basis::Pilot {
            dir: pilot.output.display().to_string(),
            tasks_per_split: n,
        },
        domains: domains.iter().map(|d| d.name().to_string()).collect(),
        lines,
        total,
        counts,
        notes,
        pilot: Some(report),
    })
}

/// The episodes the analysis judge read, per split: the failed scored episodes of
/// `rollouts` and `eval` (every scored one with `scope = "all"`).
fn analysed(m: &Measured, s: &RunSettings) -> [f64; 2] {
    let mut out = [0.0; 2];
    for (stage, split) in [("rollouts", s.rollouts.split), ("eval", s.eval.split)] {
        if let Some((scored, failed)) = m.scored.get(stage) {
            out[measure::at(split)] += if s.analyse_all { *scored } else { *failed };
        }
    }
    out
}

/// The requests a role made in the pilot, from its artifacts; `None` where they cannot be
/// counted (the LLM grounder's search).
fn requests(
    stage: &str,
    role: &str,
    m: &Measured,
    judged: [f64; 2],
    analysed: [f64; 2],
) -> Option<f64> {
    let sum = |x: [f64; 2]| x[0] + x[1];
    Some(match stage {
        "grounded" => return None,
        "refined" => m.refiner_requests,
        "feelings" | "emotions" => sum(m.funnel.refined),
        "tasks" => sum(judged),
        "analysis" => sum(analysed),
        episodes => {
            let n = match episodes {
                "rollouts" => m.funnel.rollout_episodes,
                "screened" => m.funnel.screened_episodes,
                _ => m.funnel.eval_episodes,
            };
            let size = m.sizes.episodes.get(episodes).copied().unwrap_or_default();
            n * if role == "agent" {
                size.agent.requests
            } else {
                size.user.requests
            }
        }
    })
}

/// The pilot's funnel scaled split by split to the release (`k`: the release's grounded
/// traces over the pilot's, per split).
fn scaled(f: &Funnel, k: [f64; 2], analysed: [f64; 2], s: &RunSettings) -> Funnel {
    let pair = |x: [f64; 2]| [x[0] * k[0], x[1] * k[1]];
    let one = |split: crate::split::Split, x: f64| x * k[measure::at(split)];
    Funnel {
        attempted: pair(f.attempted),
        grounded: pair(f.grounded),
        drafted: pair(f.drafted),
        refined: pair(f.refined),
        judged: pair(f.judged),
        verified: pair(f.verified),
        rollout_episodes: one(s.rollouts.split, f.rollout_episodes),
        screened_episodes: one(s.screened.split, f.screened_episodes),
        screened_kept: one(s.screened.split, f.screened_kept),
        reviewed: one(s.eval.split, f.reviewed),
        eval_episodes: one(s.eval.split, f.eval_episodes),
        analysed: analysed[0] * k[0] + analysed[1] * k[1],
    }
}
