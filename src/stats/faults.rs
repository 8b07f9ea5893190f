//! The fault tables of `tracer stats`: the `analysis` stage's fault rows, counted per
//! domain, agent model and source, and where episodes left the reference path.

use super::read_opt;
use crate::artifact::ArtifactError;
use crate::config::Paths;
use std::collections::BTreeMap;

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
