//! `tracer stats`: the funnel per domain and split (traces -> grounded -> refined ->
//! verified) with rejection reasons, read from the stage artifacts, as Markdown; and the
//! dollar cost of the model roles, read from the stage manifests (the tokens and prices
//! each run recorded, so the figures never depend on today's config).

use crate::artifact::{self, ArtifactError, RejectRecord, TaskRecord, TraceRecord};
use crate::config::Paths;
use crate::cost::{RoleUsage, Usage};
use crate::pipeline::stage_dir;
use crate::split::Split;
use std::collections::BTreeMap;

fn read_opt<R: artifact::Record>(
    paths: &Paths,
    stage: &str,
    domain: &str,
    file: &str,
) -> Result<Option<Vec<R>>, ArtifactError> {
    let path = stage_dir(&paths.output, stage, domain).join(file);
    if !path.exists() {
        return Ok(None);
    }
    artifact::read_records::<R>(&path).map(|(rows, _)| Some(rows))
}

fn count<T>(rows: &Option<Vec<T>>, split: Split, split_of: impl Fn(&T) -> Split) -> String {
    match rows {
        None => "-".into(),
        Some(r) => r
            .iter()
            .filter(|x| split_of(x) == split)
            .count()
            .to_string(),
    }
}

/// The funnel table for these domains.
pub fn funnel(paths: &Paths, domains: &[&str]) -> Result<String, ArtifactError> {
    let mut out = String::from(
        "| domain | split | traces | grounded | refined | verified | screened | reviewed | rejected (stage: reason x n) |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let traces = read_opt::<TraceRecord>(paths, "traces", d, "part-00000.parquet")?;
        let grounded = read_opt::<TaskRecord>(paths, "grounded", d, "part-00000.parquet")?;
        let refined = read_opt::<TaskRecord>(paths, "refined", d, "part-00000.parquet")?;
        let tasks = read_opt::<TaskRecord>(paths, "tasks", d, "part-00000.parquet")?;
        // Screening and review apply to the evaluation candidates only.
        let screened = read_opt::<TaskRecord>(paths, "screened", d, "part-00000.parquet")?;
        let reviewed = read_opt::<TaskRecord>(paths, "reviewed", d, "part-00000.parquet")?;
        let mut rejects: Vec<RejectRecord> = Vec::new();
        for stage in ["grounded", "refined", "tasks", "screened", "reviewed"] {
            if let Some(r) = read_opt::<RejectRecord>(paths, stage, d, "_rejects.parquet")? {
                rejects.extend(r);
            }
        }
        for split in [Split::Train, Split::Eval] {
            let mut reasons: BTreeMap<(String, String), usize> = BTreeMap::new();
            for r in rejects.iter().filter(|r| r.split == split) {
                // Policy rejections count per named rule ("policy/<rule>").
                let kind = match &r.rule {
                    Some(rule) => format!("{}/{rule}", r.reason_kind),
                    None => r.reason_kind.clone(),
                };
                *reasons.entry((r.stage.clone(), kind)).or_default() += 1;
            }
            let reasons: Vec<String> = reasons
                .iter()
                .map(|((s, k), n)| format!("{s}: {k} x {n}"))
                .collect();
            let eval_only = |rows: &Option<Vec<TaskRecord>>| match split {
                Split::Train => "-".to_string(),
                Split::Eval => count(rows, split, |t| t.split),
            };
            out.push_str(&format!(
                "| {d} | {split} | {} | {} | {} | {} | {} | {} | {} |\n",
                count(&traces, split, |t| t.split),
                count(&grounded, split, |t| t.split),
                count(&refined, split, |t| t.split),
                count(&tasks, split, |t| t.split),
                eval_only(&screened),
                eval_only(&reviewed),
                if reasons.is_empty() {
                    "none".into()
                } else {
                    reasons.join(", ")
                }
            ));
        }
    }
    Ok(out)
}

/// The manual review of the evaluation release per domain, from the `reviewed` stage's
/// counts: decisions, edit kinds (the paper's gold edits, id swaps and rewrites) and what
/// is released; `None` when no domain has run the stage.
pub fn review_table(paths: &Paths, domains: &[&str]) -> Option<String> {
    let mut out = String::from(
        "| domain | screened candidates | accepted | edited | rejected | pending | needs review again | released | gold edits | id swaps | rewrites | emotion edits |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut any = false;
    for &d in domains {
        let path = stage_dir(&paths.output, "reviewed", d).join("review.json");
        let Some(c) = crate::review::read_counts(&path) else {
            continue;
        };
        any = true;
        out.push_str(&format!(
            "| {d} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.candidates,
            c.accepted,
            c.edited,
            c.rejected + c.failed_edits,
            c.pending,
            c.stale,
            c.released,
            c.gold_edits,
            c.id_swaps,
            c.rewrites,
            c.emotion_edits
        ));
    }
    any.then_some(out)
}

/// The paper's Tables 6 and 7 analogues from the `rollouts` artifacts: reward mix and
/// success rate per domain; for reward-1 episodes the average user turns, assistant
/// turns, tool calls, gold actions and reasoning characters per assistant turn, and the
/// share of trajectories whose tool calls outnumber follow-up questions.
pub fn rollout_table(paths: &Paths, domains: &[&str]) -> Result<String, ArtifactError> {
    use crate::artifact::RolloutRecord;
    let mut out = String::from(
        "| domain | tasks | rollouts | agent errors | infra errors (not scored) | context exceeded | R=1 | R=0 | R=-1 | success | user turns | assistant turns | tool calls | gold actions | reasoning chars/turn | tools > questions |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let Some(rows) = read_opt::<RolloutRecord>(paths, "rollouts", d, "part-00000.parquet")?
        else {
            continue;
        };
        // Scored episodes: all but infrastructure failures; an agent error is a failure.
        let ok: Vec<&RolloutRecord> = rows
            .iter()
            .filter(|r| !crate::harness::metrics::is_infrastructure_failure(r))
            .collect();
        let wins: Vec<&RolloutRecord> = ok
            .iter()
            .copied()
            .filter(|r| r.reward == 1 && r.error.is_none())
            .collect();
        let context_exceeded = ok
            .iter()
            .filter(|r| r.termination == crate::harness::Termination::ContextExceeded.as_str())
            .count();
        // Agent errors: a malformed answer (an overflow is counted on its own).
        let agent_errors = ok
            .iter()
            .filter(|r| r.error.is_some())
            .count()
            .saturating_sub(context_exceeded);
        let tasks: std::collections::BTreeSet<&str> =
            rows.iter().map(|r| r.task_id.as_str()).collect();
        let n = |r: i32| ok.iter().filter(|x| x.reward == r).count();
        let avg = |f: &dyn Fn(&RolloutRecord) -> f64| {
            if wins.is_empty() {
                0.0
            } else {
                wins.iter().map(|r| f(r)).sum::<f64>() / wins.len() as f64
            }
        };
        let reasoning = {
            let turns: i64 = wins.iter().map(|r| i64::from(r.assistant_turns)).sum();
            let chars: i64 = wins.iter().map(|r| r.reasoning_chars).sum();
            if turns == 0 {
                0.0
            } else {
                chars as f64 / turns as f64
            }
        };
        let tools_first = wins
            .iter()
            .filter(|r| r.tool_calls > r.follow_up_questions)
            .count();
        out.push_str(&format!(
            "| {d} | {} | {} | {agent_errors} | {} | {context_exceeded} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.0} | {:.0}% |\n",
            tasks.len(),
            rows.len(),
            rows.len() - ok.len(),
            n(1),
            n(0),
            n(-1),
            crate::harness::metrics::percent((!ok.is_empty()).then(|| wins.len() as f64 / ok.len() as f64)),
            avg(&|r| f64::from(r.user_turns)),
            avg(&|r| f64::from(r.assistant_turns)),
            avg(&|r| f64::from(r.tool_calls)),
            avg(&|r| f64::from(r.gold_actions)),
            reasoning,
            if wins.is_empty() { 0.0 } else { 100.0 * tools_first as f64 / wins.len() as f64 },
        ));
    }
    Ok(out)
}

/// The Avg@k / Pass^k table, with 95% intervals, recomputed from the `eval` stage's
/// episodes: `resamples` bootstrap resamples per domain, drawn from the run seed recorded
/// in each domain's Parquet, so the table matches the stage's own `report.md`.
pub fn eval_table(
    paths: &Paths,
    domains: &[&str],
    resamples: usize,
) -> Result<Option<String>, ArtifactError> {
    let mut reports = Vec::new();
    for &d in domains {
        let path = stage_dir(&paths.output, "eval", d).join("part-00000.parquet");
        if !path.exists() {
            continue;
        }
        let (rows, prov) = artifact::read_records::<crate::artifact::RolloutRecord>(&path)?;
        let k = rows.iter().map(|r| r.trial + 1).max().unwrap_or(0).max(0) as u32;
        let bootstrap = crate::harness::metrics::Bootstrap {
            resamples,
            seed: prov.seed,
        };
        reports.push(crate::harness::metrics::report(d, &rows, k, &bootstrap));
    }
    Ok((!reports.is_empty()).then(|| crate::harness::metrics::report_table(&reports)))
}

/// The emotion mix of the verified tasks per domain: families, the most frequent emotions,
/// and each behavioural dimension.
pub fn emotion_table(paths: &Paths, domains: &[&str]) -> Result<String, ArtifactError> {
    let mut out = String::from(
        "| domain | tasks | families | top emotions | politeness | urgency | trust |\n|---|---|---|---|---|---|---|\n",
    );
    for &d in domains {
        let Some(rows) = read_opt::<TaskRecord>(paths, "tasks", d, "part-00000.parquet")? else {
            continue;
        };
        let mix = |f: &dyn Fn(&TaskRecord) -> Option<&String>, top: usize| {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &rows {
                *counts
                    .entry(f(r).map(String::as_str).unwrap_or("none"))
                    .or_default() += 1;
            }
            let mut v: Vec<(&str, usize)> = counts.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            v.iter()
                .take(top)
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| {d} | {} | {} | {} | {} | {} | {} |\n",
            rows.len(),
            mix(&|r| r.emotion_family.as_ref(), 5),
            mix(&|r| r.emotion.as_ref(), 5),
            mix(&|r| r.politeness.as_ref(), 3),
            mix(&|r| r.urgency.as_ref(), 3),
            mix(&|r| r.trust.as_ref(), 3),
        ));
    }
    Ok(out)
}

/// The fault rows of the `analysis` stage for these domains (none where it has not run).
pub fn read_faults(
    paths: &Paths,
    domains: &[&str],
) -> Result<Vec<crate::artifact::FaultRecord>, ArtifactError> {
    let mut rows = Vec::new();
    for &d in domains {
        if let Some(r) = read_opt(paths, "analysis", d, "part-00000.parquet")? {
            rows.extend(r);
        }
    }
    Ok(rows)
}

/// (domain, agent model, source): how the fault tables group episodes.
type Group<'a> = (&'a str, &'a str, &'a str);

fn group(r: &crate::artifact::FaultRecord) -> Group<'_> {
    (&r.domain, &r.agent_model, &r.source)
}

/// The analysed episodes of each group, by episode key.
fn episodes_by_group(
    rows: &[crate::artifact::FaultRecord],
) -> BTreeMap<Group<'_>, BTreeMap<(&str, i32), Vec<&crate::artifact::FaultRecord>>> {
    let mut out: BTreeMap<Group, BTreeMap<(&str, i32), Vec<&crate::artifact::FaultRecord>>> =
        BTreeMap::new();
    for r in rows {
        out.entry(group(r))
            .or_default()
            .entry((r.task_id.as_str(), r.trial))
            .or_default()
            .push(r);
    }
    out
}

/// The paper's error analysis per domain, agent model and source: for each fault, the
/// episodes it was found in and their share of the analysed episodes, and who decided it
/// (detectors, or `judge:<model>` for model labels).
pub fn fault_table(rows: &[crate::artifact::FaultRecord]) -> String {
    use crate::analysis::Fault;
    let mut out = String::from(
        "| domain | agent | source | analysed | fault | category | episodes | share | decided by |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for ((domain, agent, source), episodes) in episodes_by_group(rows) {
        let analysed = episodes.len();
        for fault in Fault::ALL {
            let hit: Vec<&Vec<&crate::artifact::FaultRecord>> = episodes
                .values()
                .filter(|rs| rs.iter().any(|r| r.fault == fault.as_str()))
                .collect();
            if hit.is_empty() {
                continue;
            }
            let mut deciders: BTreeMap<&str, usize> = BTreeMap::new();
            for rs in &hit {
                for r in rs.iter().filter(|r| r.fault == fault.as_str()) {
                    *deciders.entry(r.detector.as_str()).or_default() += 1;
                }
            }
            let deciders: Vec<String> = deciders.iter().map(|(d, n)| format!("{d} {n}")).collect();
            out.push_str(&format!(
                "| {domain} | {agent} | {source} | {analysed} | {} | {} | {} | {:.1}% | {} |\n",
                fault.as_str(),
                fault.category(),
                hit.len(),
                100.0 * hit.len() as f64 / analysed as f64,
                deciders.join(", ")
            ));
        }
    }
    out
}

/// Where episodes first left the reference path: per group, the episodes with an action
/// fault, and the position of the earliest one — the tool call it happened at (1, 2, 3, 4,
/// 5 or later), or "at the end" for faults after the last call (an early stop) — and the
/// median message index of that first diverging step.
pub fn divergence_table(rows: &[crate::artifact::FaultRecord]) -> String {
    use crate::analysis::Fault;
    let mut out = String::from(
        "| domain | agent | source | diverged | call 1 | call 2 | call 3 | call 4 | call 5+ | at the end | median step |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for ((domain, agent, source), episodes) in episodes_by_group(rows) {
        let mut buckets = [0usize; 6];
        let mut steps = Vec::new();
        for rs in episodes.values() {
            let first = rs
                .iter()
                .filter(|r| Fault::parse(&r.fault).is_some_and(Fault::diverges) && r.step.is_some())
                .min_by_key(|r| r.step);
            let Some(first) = first else { continue };
            let b = match first.call {
                Some(c) if c >= 1 => (c as usize).min(5) - 1,
                _ => 5,
            };
            buckets[b] += 1;
            steps.push(first.step.unwrap_or(0));
        }
        if steps.is_empty() {
            continue;
        }
        steps.sort_unstable();
        let median = steps[steps.len() / 2];
        let cells: Vec<String> = buckets.iter().map(|n| n.to_string()).collect();
        out.push_str(&format!(
            "| {domain} | {agent} | {source} | {} | {} | {median} |\n",
            steps.len(),
            cells.join(" | ")
        ));
    }
    out
}

/// Both fault tables with headings (empty when there are no rows).
pub fn fault_report(rows: &[crate::artifact::FaultRecord]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\n## Faults of failed episodes\n\n{}\n## First diverging step\n\n{}",
        fault_table(rows),
        divergence_table(rows)
    )
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_funnel_counts_policy_rejections_per_named_rule() {
        let dir = std::env::temp_dir().join(format!("tracer-stats-{}", std::process::id()));
        let paths = Paths {
            root: dir.clone(),
            output: dir.join("output"),
            overrides: None,
        };
        let reject = |rule: Option<&str>, kind: &str| RejectRecord {
            domain: "airline".into(),
            split: crate::split::Split::Train,
            trace_id: "t".into(),
            task_id: Some("t".into()),
            stage: "tasks".into(),
            reason_kind: kind.into(),
            rule: rule.map(str::to_string),
            reason: "why".into(),
        };
        let rows = vec![
            reject(Some("basic_economy_no_change"), "policy"),
            reject(Some("basic_economy_no_change"), "policy"),
            reject(Some("cancellation_window"), "policy"),
            reject(None, "information"),
        ];
        let out = stage_dir(&paths.output, "tasks", "airline");
        std::fs::create_dir_all(&out).unwrap();
        let prov = artifact::Provenance {
            version: "test".into(),
            stage: "tasks".into(),
            domain: "airline".into(),
            config_hash: String::new(),
            seed: 0,
            inputs: Default::default(),
        };
        artifact::write_records(&out.join("_rejects.parquet"), &rows, &prov).unwrap();
        let table = funnel(&paths, &["airline"]).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            table.contains(
                "tasks: information x 1, tasks: policy/basic_economy_no_change x 2, tasks: policy/cancellation_window x 1"
            ),
            "{table}"
        );
    }

    #[test]
    fn dollars_keep_four_significant_digits_below_one_dollar() {
        assert_eq!(dollars(0.0), "$0");
        assert_eq!(dollars(1234.5), "$1234.50");
        assert_eq!(dollars(0.25), "$0.2500");
        assert_eq!(dollars(0.000123456), "$0.0001235");
    }

    #[test]
    fn the_cost_report_prices_recorded_tokens_and_divides_by_tasks_and_trajectories() {
        use crate::cost::Price;
        let dir = std::env::temp_dir().join(format!("tracer-cost-{}", std::process::id()));
        let paths = Paths {
            root: dir.clone(),
            output: dir.join("output"),
            overrides: None,
        };
        let tokens = |p, c, o| Usage {
            prompt_tokens: p,
            cached_prompt_tokens: c,
            completion_tokens: o,
        };
        let endpoint = |role: &str, model: &str, t: Usage, price: Option<Price>| RoleUsage {
            role: role.into(),
            model: model.into(),
            scripted: false,
            tokens: t,
            price,
        };
        let manifests = [
            (
                "refined",
                vec![endpoint(
                    "refiner",
                    "m",
                    tokens(1_000_000, 200_000, 100_000),
                    Some(Price {
                        input: 1.0,
                        cached_input: Some(0.25),
                        output: 4.0,
                    }),
                )],
            ),
            (
                "tasks",
                vec![RoleUsage::scripted("judge", "scripted:judge")],
            ),
            (
                "rollouts",
                vec![
                    endpoint("agent", "a", tokens(10, 0, 10), None),
                    RoleUsage::scripted("user", "scripted:user"),
                ],
            ),
        ];
        for (stage, usage) in manifests {
            let d = stage_dir(&paths.output, stage, "airline");
            std::fs::create_dir_all(&d).unwrap();
            let m = crate::pipeline::Manifest {
                usage,
                ..Default::default()
            };
            std::fs::write(d.join("_manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
        }
        let prov = artifact::Provenance {
            version: "test".into(),
            stage: "t".into(),
            domain: "airline".into(),
            config_hash: String::new(),
            seed: 0,
            inputs: Default::default(),
        };
        let tasks = vec![TaskRecord::default(); 5];
        artifact::write_records(
            &stage_dir(&paths.output, "tasks", "airline").join("part-00000.parquet"),
            &tasks,
            &prov,
        )
        .unwrap();
        let kept = vec![crate::artifact::RolloutRecord::default(); 2];
        let trajectories = stage_dir(&paths.output, "trajectories", "airline");
        std::fs::create_dir_all(&trajectories).unwrap();
        artifact::write_records(&trajectories.join("part-00000.parquet"), &kept, &prov).unwrap();
        let scope = CostScope {
            stages: vec!["grounded", "refined", "tasks", "rollouts", "trajectories"],
            tasks: vec!["grounded", "refined", "tasks"],
            trajectories: vec!["grounded", "refined", "tasks", "rollouts", "trajectories"],
        };
        let report = cost_report(&paths, &scope, &["airline"]).unwrap().unwrap();
        std::fs::remove_dir_all(&dir).ok();
        // 800k x $1 + 200k x $0.25 + 100k x $4 per million = $1.25.
        for line in [
            "| refined | refiner | m | 1000000 | 200000 | 100000 | 1 / 0.25 / 4 | $1.25 |",
            "| tasks | judge | scripted:judge | 0 | 0 | 0 | scripted | $0 |",
            "| rollouts | agent | a | 10 | 0 | 10 | not set | unknown (no price) |",
            "| rollouts | user | scripted:user | 0 | 0 | 0 | scripted | $0 |",
            "| airline | 5 | $1.25 | $0.2500 | 2 | $1.25 + unpriced | $0.6250 + unpriced |",
        ] {
            assert!(report.contains(line), "{line}\n{report}");
        }
        assert!(!report.contains("| grounded |"), "no manifest, no row");
    }
}
