//! `tracer plan`: what a run will cost before it runs. For the run's configuration, caps and
//! roles file (the settings every stage reads, `config::Paths::stage_table`), per stage and
//! role: the requests, the prompt and completion tokens, and the dollars at each role's
//! `price`. The counts are the pipeline's own (traces per domain, grounded caps per split,
//! trials of each rollout stage) carried through the funnel at measured yields, and each
//! request is sized as the stage would send it.
//!
//! Two sources of measurement:
//! - an offline (scripted) run in the output directory ([`measure`]): its yields per stage
//!   and its drafts, instructions, inconclusive verdicts and scripted transcripts as the
//!   requests a model role would be sent; a part the run lacks falls back to the
//!   documented defaults ([`defaults`]), and the notes say which;
//! - a pilot ([`pilot`]): `--pilot N` runs N tasks per domain and split through every stage
//!   on the real endpoints into `<output>/.pilot/`, and the release is extrapolated from the
//!   tokens it measured per item of each stage (per verified task, per kept trajectory),
//!   its yields and its errored share.
//!
//! A scripted role costs nothing and says so; an endpoint role without a `price` has an
//! unknown cost (left out of the dollar total, which then says "+ unpriced").
//!
//! Architecture invariant: the plan reads configuration, project files and artifacts; it
//! sends no request (the pilot's requests are the stages', run by the caller).

mod counts;
mod defaults;
mod measure;
mod pilot;
mod table;
#[cfg(test)]
mod tests;

pub use counts::{Caps, RunSettings, caps_for};
pub use defaults::*;
pub use pilot::{PILOT_DIR, PILOT_TARGETS, extrapolate, pilot_paths};
pub use table::{json, markdown};

use crate::artifact::ArtifactError;
use crate::config::{ConfigError, Paths};
use crate::cost::{Price, Usage};
use crate::domain::Domain;
use crate::llm::Prompt;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    #[error("{0}")]
    Invalid(String),
}

/// Tokens of a text at four characters a token (the LLM layer's context estimate).
pub fn text_tokens(text: &str) -> f64 {
    (text.chars().count() as u64).div_ceil(4) as f64
}

/// Dollars for `prompt` and `completion` tokens at `price` (no prompt-cache discount: an
/// upper bound where the server caches prefixes), by the arithmetic every cost report uses.
pub fn dollars(prompt: f64, completion: f64, price: &Price) -> f64 {
    Usage {
        prompt_tokens: prompt.round().max(0.0) as u64,
        cached_prompt_tokens: 0,
        completion_tokens: completion.round().max(0.0) as u64,
    }
    .cost(price)
}

/// The mean size of one request of a role.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PerCall {
    pub prompt: f64,
    pub completion: f64,
}

/// Requests and tokens (of one episode, or a sum).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Calls {
    pub requests: f64,
    pub prompt: f64,
    pub completion: f64,
}

impl Calls {
    fn add(&mut self, o: &Calls) {
        self.requests += o.requests;
        self.prompt += o.prompt;
        self.completion += o.completion;
    }
    fn scaled(&self, k: f64) -> Calls {
        Calls {
            requests: self.requests * k,
            prompt: self.prompt * k,
            completion: self.completion * k,
        }
    }
}

/// The agent's and the user simulator's requests of an episode.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EpisodeSize {
    pub agent: Calls,
    pub user: Calls,
}

impl EpisodeSize {
    fn add(&mut self, o: &EpisodeSize) {
        self.agent.add(&o.agent);
        self.user.add(&o.user);
    }
    /// The mean of a sum over `n` episodes.
    fn mean(&self, n: f64) -> EpisodeSize {
        let k = if n > 0.0 { 1.0 / n } else { 0.0 };
        EpisodeSize {
            agent: self.agent.scaled(k),
            user: self.user.scaled(k),
        }
    }
}

/// Request sizes of one domain; `None` where nothing measured them.
#[derive(Clone, Debug, Default)]
pub struct Sizes {
    pub refiner: Option<PerCall>,
    pub feeler: Option<PerCall>,
    pub judge: Option<PerCall>,
    /// Per embedded text.
    pub embedder: Option<PerCall>,
    /// The analysis judge, per episode it reads.
    pub analysis: Option<PerCall>,
    /// Per rollout stage (`rollouts`, `screened`, `eval`), per episode.
    pub episodes: HashMap<&'static str, EpisodeSize>,
}

/// A domain's funnel: the items at each step (`[train, eval]` where a step has both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Funnel {
    /// Traces `grounded` takes (the first N of at most `max_actions` calls).
    pub attempted: [f64; 2],
    pub grounded: [f64; 2],
    /// Grounded tasks with a draft: the refiner's requests (first asks).
    pub drafted: [f64; 2],
    pub refined: [f64; 2],
    /// Inconclusive verdicts: the task judge's requests.
    pub judged: [f64; 2],
    /// Verified tasks, counting every inconclusive one as accepted by the judge.
    pub verified: [f64; 2],
    pub rollout_episodes: f64,
    pub screened_episodes: f64,
    pub screened_kept: f64,
    pub reviewed: f64,
    pub eval_episodes: f64,
    /// Episodes the analysis judge reads.
    pub analysed: f64,
}

/// The prompts the stages' endpoint roles send (the stage's prompts directory, else the
/// shipped text).
pub struct Prompts {
    pub refiner: Prompt,
    pub feeler: Prompt,
    pub judge: Prompt,
    pub user: Prompt,
    pub analysis_judge: Prompt,
}

impl Prompts {
    pub fn load(paths: &Paths, settings: &RunSettings) -> Result<Prompts, PlanError> {
        let dir = |stage: &str| {
            settings
                .roles
                .iter()
                .find(|r| r.stage == stage)
                .map_or("prompts".to_string(), |r| r.prompts.clone())
        };
        let load = |stage: &str, name: &str| {
            crate::llm::prompt::project_or_builtin(&paths.root, &dir(stage), name)
                .map_err(PlanError::Invalid)
        };
        Ok(Prompts {
            refiner: load("refined", "refiner")?,
            feeler: load("feelings", "feeler")?,
            judge: load("tasks", "judge")?,
            user: load("rollouts", "user")?,
            analysis_judge: load("analysis", "analysis_judge")?,
        })
    }
}

/// One line of a plan: one role of one stage, over the plan's domains.
#[derive(Clone, Debug, Serialize)]
pub struct Line {
    pub stage: &'static str,
    pub role: &'static str,
    /// The endpoint's model, or `scripted`.
    pub model: String,
    pub scripted: bool,
    /// `None` where not estimated (see `note`).
    pub requests: Option<f64>,
    pub prompt_tokens: Option<f64>,
    pub completion_tokens: Option<f64>,
    /// `None`: no price (or, for the embedder, not priced at all).
    pub dollars: Option<f64>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// The sums of a plan's lines.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Total {
    pub requests: f64,
    pub prompt_tokens: f64,
    pub completion_tokens: f64,
    pub dollars: f64,
    /// An endpoint line without a price was left out of `dollars`.
    pub unpriced: bool,
}

/// A domain's planned counts.
#[derive(Clone, Debug, Serialize)]
pub struct Counts {
    pub domain: String,
    #[serde(flatten)]
    pub funnel: Funnel,
}

/// What a plan is based on.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// An offline run's artifacts in this output directory (defaults for what it lacks).
    Measured { output: String },
    /// No run in the output directory: documented defaults.
    Defaults { output: String },
    /// Extrapolated from a pilot of `tasks_per_split` tasks per domain and split.
    Pilot { dir: String, tasks_per_split: usize },
}

/// A plan: per stage and role, what the run will send and cost.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub basis: Basis,
    pub domains: Vec<String>,
    pub lines: Vec<Line>,
    pub total: Total,
    pub counts: Vec<Counts>,
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pilot: Option<pilot::PilotReport>,
}

/// The lines of a plan, summed over domains as they are added.
struct Lines {
    lines: Vec<Line>,
    /// Per line: the endpoint's price.
    prices: Vec<Option<Price>>,
}

impl Lines {
    fn new(settings: &RunSettings) -> Lines {
        let mut lines = Vec::new();
        let mut prices = Vec::new();
        for r in &settings.roles {
            let (model, note) = match &r.endpoint {
                None => (
                    "scripted".to_string(),
                    "scripted: costs nothing".to_string(),
                ),
                Some(c) => (c.model.clone().unwrap_or_default(), String::new()),
            };
            let scripted = r.endpoint.is_none();
            lines.push(Line {
                stage: r.stage,
                role: r.role,
                model,
                scripted,
                requests: (!scripted).then_some(0.0),
                prompt_tokens: (!scripted).then_some(0.0),
                completion_tokens: (!scripted).then_some(0.0),
                dollars: scripted.then_some(0.0),
                note,
            });
            prices.push(r.endpoint.as_ref().and_then(|c| c.price));
        }
        Lines { lines, prices }
    }

    /// Add `calls` to the endpoint line of (`stage`, `role`); `None` marks it not estimated.
    fn add(&mut self, stage: &str, role: &str, calls: Option<Calls>) {
        let Some(line) = self
            .lines
            .iter_mut()
            .find(|l| l.stage == stage && l.role == role && !l.scripted)
        else {
            return;
        };
        match calls {
            Some(c) => {
                let add = |x: &mut Option<f64>, v: f64| {
                    if let Some(x) = x {
                        *x += v;
                    }
                };
                add(&mut line.requests, c.requests);
                add(&mut line.prompt_tokens, c.prompt);
                add(&mut line.completion_tokens, c.completion);
            }
            None => {
                line.requests = None;
                line.prompt_tokens = None;
                line.completion_tokens = None;
            }
        }
    }

    /// Mark the requests of (`stage`, `role`) as not counted (its tokens stay).
    fn forget_requests(&mut self, stage: &str, role: &str) {
        if let Some(line) = self
            .lines
            .iter_mut()
            .find(|l| l.stage == stage && l.role == role && !l.scripted)
        {
            line.requests = None;
        }
    }

    /// The finished lines (dollars from the prices) and their total.
    fn finish(mut self) -> (Vec<Line>, Total) {
        let mut total = Total::default();
        for (line, price) in self.lines.iter_mut().zip(&self.prices) {
            if line.scripted {
                continue;
            }
            total.requests += line.requests.unwrap_or(0.0);
            total.prompt_tokens += line.prompt_tokens.unwrap_or(0.0);
            total.completion_tokens += line.completion_tokens.unwrap_or(0.0);
            if line.stage == "emotions" {
                line.note =
                    "embeddings (per text); tracer does not count or price the embedder's tokens"
                        .into();
                continue;
            }
            match (price, line.prompt_tokens, line.completion_tokens) {
                (Some(p), Some(prompt), Some(completion)) => {
                    let d = dollars(prompt, completion, p);
                    line.dollars = Some(d);
                    total.dollars += d;
                }
                (None, ..) => {
                    line.note = "no `price` set: cost unknown".into();
                    total.unpriced = true;
                }
                _ => {}
            }
        }
        (self.lines, total)
    }
}

/// What a domain's funnel and request sizes give each role: `None` where the plan cannot
/// estimate it (the LLM grounder).
fn role_calls(stage: &str, role: &str, f: &Funnel, s: &Sizes) -> Option<Calls> {
    let per = |n: f64, size: Option<PerCall>| {
        let size = size.unwrap_or_default();
        Calls {
            requests: n,
            prompt: n * size.prompt,
            completion: n * size.completion,
        }
    };
    let sum = |x: [f64; 2]| x[0] + x[1];
    Some(match stage {
        "grounded" => return None,
        "refined" => per(sum(f.drafted), s.refiner),
        "feelings" => per(sum(f.refined), s.feeler),
        "emotions" => per(sum(f.refined), s.embedder),
        "tasks" => per(sum(f.judged), s.judge),
        "analysis" => per(f.analysed, s.analysis),
        episodes => {
            let n = match episodes {
                "rollouts" => f.rollout_episodes,
                "screened" => f.screened_episodes,
                _ => f.eval_episodes,
            };
            let size = s.episodes.get(episodes).copied().unwrap_or_default();
            let calls = if role == "agent" {
                size.agent
            } else {
                size.user
            };
            calls.scaled(n)
        }
    })
}

/// The plan of the run `paths` configures for `domains`, measured on the run in its output
/// directory where there is one, else on the documented defaults.
pub fn plan(paths: &Paths, domains: &[&'static dyn Domain]) -> Result<Plan, PlanError> {
    let settings = RunSettings::load(paths)?;
    let prompts = Prompts::load(paths, &settings)?;
    let mut lines = Lines::new(&settings);
    let mut counts = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut any_run = false;
    for &d in domains {
        let caps = settings.caps(d);
        let m = measure::measure(&paths.output, d, caps.max_actions, &prompts, &|s| {
            settings.emotion(s)
        })?;
        any_run |= !m.ran.is_empty();
        let eligible = m.eligible.unwrap_or_else(|| {
            notes.push(format!(
                "{}: no traces in the output: its traces per split are the `traces` target",
                d.name()
            ));
            counts::target_traces(&settings.traces, d.name())
        });
        let attempted = [
            eligible[0].min(caps.train as f64),
            eligible[1].min(caps.eval as f64),
        ];
        let (rates, defaulted) = Rates::measured(&m, &settings);
        if !defaulted.is_empty() && !m.ran.is_empty() {
            notes.push(format!(
                "{}: the run holds no {}: default yields there",
                d.name(),
                defaulted.join(", ")
            ));
        }
        let funnel = rates.apply(attempted, &settings);
        let (sizes, guessed) = defaults::complete(paths, d, &prompts, &settings, m.sizes.clone());
        if !guessed.is_empty() && !m.ran.is_empty() {
            notes.push(format!(
                "{}: default request sizes for {}",
                d.name(),
                guessed.join(", ")
            ));
        }
        for r in &settings.roles {
            if r.endpoint.is_some() {
                lines.add(
                    r.stage,
                    r.role,
                    role_calls(r.stage, r.role, &funnel, &sizes),
                );
            }
        }
        counts.push(Counts {
            domain: d.name().to_string(),
            funnel,
        });
    }
    let (lines, total) = lines.finish();
    notes.extend(standard_notes(&lines));
    let output = paths.output.display().to_string();
    Ok(Plan {
        basis: if any_run {
            Basis::Measured { output }
        } else {
            Basis::Defaults { output }
        },
        domains: domains.iter().map(|d| d.name().to_string()).collect(),
        lines,
        total,
        counts,
        notes,
        pilot: None,
    })
}

/// The notes every offline plan carries.
fn standard_notes(lines: &[Line]) -> Vec<String> {
    let mut notes = vec![
        "Inconclusive tasks are counted as accepted by the judge, so the verified tasks and everything after them are an upper bound.".to_string(),
        "Sizes are those of the offline roles' texts: a model's thinking and its own wording are not in them (a pilot measures them); no prompt-cache discount is applied.".to_string(),
    ];
    if lines.iter().any(|l| l.stage == "grounded" && !l.scripted) {
        notes.push("The LLM grounder's requests depend on its search and are not estimated offline: `tracer plan --pilot N` measures them.".to_string());
    }
    notes
}

/// Yields per step, each a share of the step before (`[train, eval]` where it has both).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    pub grounded: [f64; 2],
    pub drafted: [f64; 2],
    pub refined: [f64; 2],
    pub judged: [f64; 2],
    pub verified: [f64; 2],
    /// Screening's kept share of the verified eval tasks.
    pub kept: f64,
    /// Review's kept share of those.
    pub reviewed: f64,
    /// Failed shares of the scored episodes of `rollouts` and `eval`.
    pub failed_rollouts: f64,
    pub failed_eval: f64,
}

impl Rates {
    /// The yields of a measured run; where its artifacts are missing, the defaults (the
    /// stages defaulted are returned).
    fn measured(m: &measure::Measured, s: &RunSettings) -> (Rates, Vec<&'static str>) {
        let d = DEFAULT_RATES;
        let mut defaulted = Vec::new();
        let mut pair = |stage: &'static str, a: [f64; 2], b: [f64; 2], def: [f64; 2]| {
            if !m.has(stage) {
                defaulted.push(stage);
                return def;
            }
            [0, 1].map(|i| if b[i] > 0.0 { a[i] / b[i] } else { def[i] })
        };
        let f = &m.funnel;
        let grounded = pair("grounded", f.grounded, f.attempted, d.grounded);
        let drafted = pair("refined", f.drafted, f.grounded, d.drafted);
        let refined = if m.has("refined") {
            [0, 1].map(|i| {
                if f.grounded[i] > 0.0 {
                    f.refined[i] / f.grounded[i]
                } else {
                    d.refined[i]
                }
            })
        } else {
            d.refined
        };
        let judged = pair("tasks", f.judged, f.refined, d.judged);
        let verified = if m.has("tasks") {
            [0, 1].map(|i| {
                if f.refined[i] > 0.0 {
                    f.verified[i] / f.refined[i]
                } else {
                    d.verified[i]
                }
            })
        } else {
            d.verified
        };
        let mut single = |stage: &'static str, a: f64, b: f64, def: f64| {
            if !m.has(stage) {
                defaulted.push(stage);
                def
            } else if b > 0.0 {
                a / b
            } else {
                def
            }
        };
        let kept = single("screened", f.screened_kept, m.screened_tasks, d.kept);
        let reviewed_default = if s.drop_unreviewed { 0.0 } else { 1.0 };
        let reviewed = single("reviewed", f.reviewed, f.screened_kept, reviewed_default);
        let failed = |stage: &'static str, def: f64| {
            m.scored
                .get(stage)
                .filter(|(n, _)| *n > 0.0)
                .map_or(def, |(n, failed)| failed / n)
        };
        for stage in ["rollouts", "eval"] {
            if !m.has(stage) {
                defaulted.push(stage);
            }
        }
        let rates = Rates {
            grounded,
            drafted,
            refined,
            judged,
            verified,
            kept,
            reviewed,
            failed_rollouts: failed("rollouts", d.failed_rollouts),
            failed_eval: failed("eval", d.failed_eval),
        };
        (rates, defaulted)
    }

    /// The funnel these yields give `attempted` traces under `s`'s trials.
    pub fn apply(&self, attempted: [f64; 2], s: &RunSettings) -> Funnel {
        let mut f = Funnel {
            attempted,
            ..Funnel::default()
        };
        for (i, attempted) in attempted.into_iter().enumerate() {
            f.grounded[i] = attempted * self.grounded[i];
            f.drafted[i] = f.grounded[i] * self.drafted[i];
            f.refined[i] = f.grounded[i] * self.refined[i];
            f.judged[i] = f.refined[i] * self.judged[i];
            f.verified[i] = f.refined[i] * self.verified[i];
        }
        let train = f.verified[measure::at(s.rollouts.split)];
        let eval = f.verified[measure::at(s.screened.split)];
        f.rollout_episodes = train * s.trials("rollouts");
        f.screened_episodes = eval * s.trials("screened");
        f.screened_kept = eval * self.kept;
        f.reviewed = f.screened_kept * self.reviewed;
        f.eval_episodes = f.reviewed * s.trials("eval");
        f.analysed = if s.analyse_all {
            f.rollout_episodes + f.eval_episodes
        } else {
            f.rollout_episodes * self.failed_rollouts + f.eval_episodes * self.failed_eval
        };
        f
    }
}
