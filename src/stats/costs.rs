//! The cost tables of `tracer stats`: tokens and dollars per stage, role and model, and per
//! domain the cost of the verified tasks and of the accepted trajectories, from what each
//! stage's manifest recorded.

use crate::artifact::{self, ArtifactError};
use crate::config::Paths;
use crate::cost::{RoleUsage, Usage};
use crate::pipeline::stage_dir;
use std::collections::BTreeMap;

/// What the cost tables mean, for the text above them.
pub const COST_NOTE: &str = "Tokens of every answer each stage's output was made from (an answer a re-run took from the response cache counts what it cost when first paid for), priced at the US dollars per million tokens each role's `price` set when the stage ran, as its `_manifest.json` records; prompt tokens the server read from its prompt cache are charged at the cached rate. Scripted roles are built-in simulators and cost nothing; an endpoint role without a `price` has an unknown cost, left out of the sums (\"+ unpriced\"). The tasks' cost covers every stage up to `tasks` (both splits); the trajectories' cost adds the training rollouts. Accepted trajectories are the kept reward-1 episodes of `trajectories`.";

/// Which stages a cost report covers, and which of them make the verified tasks and the
/// accepted trajectories (the stages of the DAG up to `tasks` and up to `trajectories`).
pub struct CostScope {
    pub stages: Vec<&'static str>,
    pub tasks: Vec<&'static str>,
    pub trajectories: Vec<&'static str>,
}

impl CostScope {
    /// `stages` (in the order to list them) within `dag`.
    pub fn new(
        dag: &crate::pipeline::Dag,
        stages: Vec<&'static str>,
    ) -> Result<CostScope, crate::pipeline::PipelineError> {
        let upstream = |target: &str| -> Result<Vec<&'static str>, crate::pipeline::PipelineError> {
            Ok(dag.plan(target)?.iter().map(|s| s.name()).collect())
        };
        Ok(CostScope {
            stages,
            tasks: upstream("tasks")?,
            trajectories: upstream("trajectories")?,
        })
    }
}

/// Dollars as the reports show them: `$0`, cents from one dollar up, else four significant
/// digits (a cheap model's cost per task is a fraction of a cent).
pub fn dollars(x: f64) -> String {
    if x == 0.0 {
        return "$0".to_string();
    }
    if x >= 1.0 {
        return format!("${x:.2}");
    }
    let decimals = ((-x.log10()).floor() as usize + 4).min(12);
    format!("${x:.decimals$}")
}

/// A price cell: `scripted`, `not set`, or input / cached input / output per million tokens.
fn price_cell(u: &RoleUsage) -> String {
    match (&u.price, u.scripted) {
        (_, true) => "scripted".to_string(),
        (None, false) => "not set".to_string(),
        (Some(p), false) => format!("{} / {} / {}", p.input, p.cached_input_rate(), p.output),
    }
}

/// A sum of role costs where some roles may have no price.
#[derive(Clone, Copy, Default)]
struct Total {
    dollars: f64,
    /// Endpoint tokens without a price were left out.
    unpriced: bool,
}

impl Total {
    fn add(&mut self, u: &RoleUsage) {
        match u.cost() {
            Some(c) => self.dollars += c,
            None => self.unpriced |= u.tokens != Usage::default(),
        }
    }

    fn show(&self) -> String {
        if self.unpriced {
            format!("{} + unpriced", dollars(self.dollars))
        } else {
            dollars(self.dollars)
        }
    }

    fn per(&self, n: Option<u64>) -> String {
        match n {
            Some(n) if n > 0 => Total {
                dollars: self.dollars / n as f64,
                unpriced: self.unpriced,
            }
            .show(),
            _ => "-".to_string(),
        }
    }
}

/// The cost tables: tokens and dollars per stage, role and model over these domains, then
/// per domain the cost of the verified tasks (every stage up to `tasks`) and of the
/// accepted trajectories (every stage up to `trajectories`: the tasks' cost plus the
/// rollouts) with the cost per verified task and per accepted trajectory. `None` when no
/// stage in scope recorded a role. Tokens and prices are the ones each stage's manifest
/// recorded when it ran.
pub fn cost_report(
    paths: &Paths,
    scope: &CostScope,
    domains: &[&str],
) -> Result<Option<String>, ArtifactError> {
    // (stage, domain) -> the roles its run recorded.
    let mut usage: BTreeMap<(&str, &str), Vec<RoleUsage>> = BTreeMap::new();
    for &stage in &scope.stages {
        for &d in domains {
            if let Some(m) = crate::pipeline::read_manifest(&stage_dir(&paths.output, stage, d))
                && !m.usage.is_empty()
            {
                usage.insert((stage, d), m.usage);
            }
        }
    }
    if usage.is_empty() {
        return Ok(None);
    }
    let mut out = String::from(
        "| stage | role | model | prompt tokens | of them cached | completion tokens | $ per M tokens (input / cached / output) | cost |\n|---|---|---|---|---|---|---|---|\n",
    );
    for &stage in &scope.stages {
        let entries = domains
            .iter()
            .filter_map(|&d| usage.get(&(stage, d)))
            .flatten()
            .cloned();
        for u in crate::cost::sum_usage(entries) {
            let cost = match u.cost() {
                Some(c) => dollars(c),
                None => "unknown (no price)".to_string(),
            };
            out.push_str(&format!(
                "| {stage} | {} | {} | {} | {} | {} | {} | {cost} |\n",
                u.role,
                u.model,
                u.tokens.prompt_tokens,
                u.tokens.cached_prompt_tokens,
                u.tokens.completion_tokens,
                price_cell(&u),
            ));
        }
    }
    out.push_str(
        "\n| domain | verified tasks | cost of the tasks | per verified task | accepted trajectories | cost of the trajectories | per accepted trajectory |\n|---|---|---|---|---|---|---|\n",
    );
    let rows_in = |stage: &str, d: &str| -> Result<Option<u64>, ArtifactError> {
        let path = stage_dir(&paths.output, stage, d).join("part-00000.parquet");
        if !path.is_file() {
            return Ok(None);
        }
        Ok(Some(artifact::parquet_rows(&path)?.0))
    };
    let total_of = |stages: &[&str], d: &str| {
        let mut t = Total::default();
        for &stage in stages {
            for u in usage.get(&(stage, d)).into_iter().flatten() {
                t.add(u);
            }
        }
        t
    };
    let (mut all_tasks, mut all_trajectories) = (Total::default(), Total::default());
    let (mut n_tasks, mut n_trajectories) = (Some(0u64), Some(0u64));
    for &d in domains {
        let tasks = rows_in("tasks", d)?;
        let trajectories = rows_in("trajectories", d)?;
        let task_cost = total_of(&scope.tasks, d);
        let trajectory_cost = total_of(&scope.trajectories, d);
        for (all, t) in [
            (&mut all_tasks, task_cost),
            (&mut all_trajectories, trajectory_cost),
        ] {
            all.dollars += t.dollars;
            all.unpriced |= t.unpriced;
        }
        n_tasks = n_tasks.zip(tasks).map(|(a, b)| a + b);
        n_trajectories = n_trajectories.zip(trajectories).map(|(a, b)| a + b);
        let count = |n: Option<u64>| n.map_or("-".to_string(), |n| n.to_string());
        out.push_str(&format!(
            "| {d} | {} | {} | {} | {} | {} | {} |\n",
            count(tasks),
            task_cost.show(),
            task_cost.per(tasks),
            count(trajectories),
            trajectory_cost.show(),
            trajectory_cost.per(trajectories),
        ));
    }
    if domains.len() > 1 {
        let count = |n: Option<u64>| n.map_or("-".to_string(), |n| n.to_string());
        out.push_str(&format!(
            "| all | {} | {} | {} | {} | {} | {} |\n",
            count(n_tasks),
            all_tasks.show(),
            all_tasks.per(n_tasks),
            count(n_trajectories),
            all_trajectories.show(),
            all_trajectories.per(n_trajectories),
        ));
    }
    Ok(Some(out))
}
