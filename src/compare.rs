//! `tracer compare A B`: two evaluations of the same tasks, side by side. Finds the eval
//! episodes under each path (an output root, its `eval/` directory, one domain's
//! directory, a `tracer rollout --out` directory, or a Parquet file of episodes), pairs
//! tasks by id within each domain, and gives per domain and overall, for Avg@k and
//! Pass^k: both figures over the paired tasks, their difference, its 95% paired-bootstrap
//! interval, a sign-flip permutation p-value and a verdict. The statistics are
//! [`crate::harness::metrics::paired_difference`]'s.
//!
//! Architecture invariant: reads episode artifacts only; knows no stage, runner or domain,
//! so it works on any two outputs, wherever they were made.

use crate::artifact::{self, ArtifactError, RolloutRecord};
use crate::harness::metrics::{self, Bootstrap, Difference, PairedTask, Score, TaskOutcome};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{path}: no such file or directory")]
    Missing { path: String },
    #[error(
        "{path}: no eval episodes here (give an output directory holding eval/domain=<d>/part-00000.parquet, its eval/ directory, one domain's directory, a `tracer rollout --out` directory, or an episodes Parquet file)"
    )]
    NoEpisodes { path: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    #[error(
        "{b}: {kb} trial(s) per task, but {a} has {ka}; Avg@k and Pass^k compare only evaluations with the same k"
    )]
    Trials {
        a: String,
        ka: u32,
        b: String,
        kb: u32,
    },
    #[error("{a} and {b}: no task has scored episodes in both, so there is nothing to pair")]
    NoCommonTasks { a: String, b: String },
}

/// The eval episodes found under one path, as scored tasks.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// The path as given.
    pub path: PathBuf,
    /// The Parquet files read, in order.
    pub files: Vec<PathBuf>,
    /// Episodes read (scored or not).
    pub episodes: usize,
    /// Trials per task: one more than the highest trial index.
    pub trials: u32,
    /// The run seed recorded in the first file's provenance.
    pub seed: u64,
    /// Scored tasks per domain, in task-id order.
    pub domains: BTreeMap<String, Vec<TaskOutcome>>,
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> CompareError {
    CompareError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Entries of a directory whose names pass `keep`, sorted.
fn entries(dir: &Path, keep: impl Fn(&str, &Path) -> bool) -> Result<Vec<PathBuf>, CompareError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let p = e.map_err(|e| io_error(dir, e))?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if keep(name, &p) {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// The `part-*.parquet` files of one directory (side outputs start with `_`).
fn parts(dir: &Path) -> Result<Vec<PathBuf>, CompareError> {
    entries(dir, |name, p| {
        name.starts_with("part-") && name.ends_with(".parquet") && p.is_file()
    })
}

/// The episode files a path stands for; see the module doc for the forms accepted.
pub fn episode_files(path: &Path) -> Result<Vec<PathBuf>, CompareError> {
    if !path.exists() {
        return Err(CompareError::Missing {
            path: path.display().to_string(),
        });
    }
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let stage = path.join("eval");
    let dir = if stage.is_dir() {
        stage
    } else {
        path.to_path_buf()
    };
    let mut files = Vec::new();
    for domain in entries(&dir, |name, p| name.starts_with("domain=") && p.is_dir())? {
        files.extend(parts(&domain)?);
    }
    if files.is_empty() {
        files = parts(&dir)?;
    }
    let rollout = dir.join("rollouts.parquet");
    if files.is_empty() && rollout.is_file() {
        files.push(rollout);
    }
    if files.is_empty() {
        return Err(CompareError::NoEpisodes {
            path: dir.display().to_string(),
        });
    }
    Ok(files)
}

/// Read the eval episodes under `path` and score them per task.
pub fn load(path: &Path) -> Result<Evaluation, CompareError> {
    let files = episode_files(path)?;
    let mut rows: BTreeMap<String, Vec<RolloutRecord>> = BTreeMap::new();
    let mut seed = None;
    let mut episodes = 0;
    let mut trials = 0u32;
    for file in &files {
        let (records, prov) = artifact::read_records::<RolloutRecord>(file)?;
        seed.get_or_insert(prov.seed);
        episodes += records.len();
        for r in records {
            trials = trials.max(u32::try_from(r.trial + 1).unwrap_or(0));
            let domain = if r.domain.is_empty() {
                prov.domain.clone()
            } else {
                r.domain.clone()
            };
            rows.entry(domain).or_default().push(r);
        }
    }
    if episodes == 0 {
        return Err(CompareError::NoEpisodes {
            path: path.display().to_string(),
        });
    }
    Ok(Evaluation {
        path: path.to_path_buf(),
        files,
        episodes,
        trials,
        seed: seed.unwrap_or_default(),
        domains: rows
            .into_iter()
            .map(|(d, rs)| (d, metrics::task_outcomes(&rs)))
            .collect(),
    })
}

/// One line of the comparison: a scope (a domain or `overall`) and a figure.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparisonRow {
    pub scope: String,
    pub metric: String,
    /// `None` when no paired task counts for the figure (Pass^k: k scored trials on both
    /// sides).
    pub difference: Option<Difference>,
}

/// Two evaluations compared.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub k: u32,
    pub bootstrap: Bootstrap,
    /// Per domain, then `overall`; Avg@k then Pass^k within each.
    pub rows: Vec<ComparisonRow>,
    /// Domains only one side has, with that side (`A` or `B`).
    pub unpaired_domains: Vec<(String, &'static str)>,
    /// Scored tasks of the compared domains that the other side lacks: (only in A, only
    /// in B).
    pub unpaired_tasks: (usize, usize),
}

/// Pair `a` and `b` by task id within each domain and compare Avg@k and Pass^k.
/// `resamples` bootstrap and permutation resamples per figure; `seed` the streams' seed,
/// by default derived from both recorded run seeds (in either order the same, so `compare
/// B A` mirrors `compare A B`).
pub fn compare(
    a: &Evaluation,
    b: &Evaluation,
    resamples: usize,
    seed: Option<u64>,
) -> Result<Comparison, CompareError> {
    if a.trials != b.trials {
        return Err(CompareError::Trials {
            a: a.path.display().to_string(),
            ka: a.trials,
            b: b.path.display().to_string(),
            kb: b.trials,
        });
    }
    let bootstrap = Bootstrap {
        resamples,
        seed: seed.unwrap_or_else(|| metrics::comparison_seed(a.seed, b.seed)),
    };
    let mut strata: Vec<(&str, Vec<PairedTask>)> = Vec::new();
    let mut unpaired_domains = Vec::new();
    let mut unpaired_tasks = (0, 0);
    for (domain, tasks_a) in &a.domains {
        let Some(tasks_b) = b.domains.get(domain) else {
            unpaired_domains.push((domain.clone(), "A"));
            continue;
        };
        let by_id: BTreeMap<&str, &TaskOutcome> =
            tasks_b.iter().map(|t| (t.task_id.as_str(), t)).collect();
        let pairs: Vec<PairedTask> = tasks_a
            .iter()
            .filter_map(|t| {
                Some(PairedTask {
                    a: t.clone(),
                    b: (*by_id.get(t.task_id.as_str())?).clone(),
                })
            })
            .collect();
        unpaired_tasks.0 += tasks_a.len() - pairs.len();
        unpaired_tasks.1 += tasks_b.len() - pairs.len();
        if !pairs.is_empty() {
            strata.push((domain, pairs));
        }
    }
    unpaired_domains.extend(
        b.domains
            .keys()
            .filter(|d| !a.domains.contains_key(*d))
            .map(|d| (d.clone(), "B")),
    );
    if strata.is_empty() {
        return Err(CompareError::NoCommonTasks {
            a: a.path.display().to_string(),
            b: b.path.display().to_string(),
        });
    }
    let k = a.trials;
    let scores = [Score::AvgAtK, Score::PassHat(u64::from(k))];
    let mut rows = Vec::new();
    for (domain, pairs) in &strata {
        for score in scores {
            let label = score.label(k);
            rows.push(ComparisonRow {
                scope: domain.to_string(),
                metric: label.clone(),
                difference: metrics::paired_difference(
                    &[pairs],
                    score,
                    &bootstrap,
                    &["domain", domain, &label],
                ),
            });
        }
    }
    if strata.len() == 1 {
        // One domain: overall is that domain, the same rows (not a second draw of them).
        let domain_rows: Vec<ComparisonRow> = rows.clone();
        rows.extend(domain_rows.into_iter().map(|r| ComparisonRow {
            scope: "overall".into(),
            ..r
        }));
    } else {
        let all: Vec<&[PairedTask]> = strata.iter().map(|(_, p)| p.as_slice()).collect();
        for score in scores {
            let label = score.label(k);
            rows.push(ComparisonRow {
                scope: "overall".into(),
                metric: label.clone(),
                difference: metrics::paired_difference(
                    &all,
                    score,
                    &bootstrap,
                    &["overall", &label],
                ),
            });
        }
    }
    Ok(Comparison {
        k,
        bootstrap,
        rows,
        unpaired_domains,
        unpaired_tasks,
    })
}

/// Percentage points with a sign (`+3.3`; never `-0.0`).
fn points(v: f64) -> String {
    let v = if v == 0.0 { 0.0 } else { v * 100.0 };
    format!("{v:+.1}")
}

/// The comparison as Markdown: which run is A and which B, the table, what was left out,
/// and how the interval, p-value and verdict are made.
pub fn comparison_table(c: &Comparison, a: &Evaluation, b: &Evaluation) -> String {
    let describe = |e: &Evaluation| {
        format!(
            "{} ({} episodes in {} file(s), {} domain(s), k = {}, run seed {})",
            e.path.display(),
            e.episodes,
            e.files.len(),
            e.domains.len(),
            e.trials,
            e.seed
        )
    };
    let mut out = format!("A: {}\nB: {}\n\n", describe(a), describe(b));
    out.push_str("| scope | metric | paired tasks | A | B | A - B (pp) | 95% CI of A - B (pp) | p | verdict |\n|---|---|---|---|---|---|---|---|---|\n");
    for row in &c.rows {
        let cells = match &row.difference {
            Some(d) => [
                d.tasks.to_string(),
                metrics::percent(Some(d.a)),
                metrics::percent(Some(d.b)),
                points(d.diff),
                format!("[{}, {}]", points(d.ci.lo), points(d.ci.hi)),
                format!("{:.3}", d.p_value),
                d.verdict.as_str().to_string(),
            ],
            None => [
                "0".to_string(),
                "n/a".into(),
                "n/a".into(),
                "n/a".into(),
                "n/a".into(),
                "n/a".into(),
                "no paired task counts".into(),
            ],
        };
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            row.scope,
            row.metric,
            cells.join(" | ")
        ));
    }
    out.push('\n');
    for (domain, side) in &c.unpaired_domains {
        out.push_str(&format!("{domain}: only in {side}, not compared.\n"));
    }
    let (only_a, only_b) = c.unpaired_tasks;
    if only_a + only_b > 0 {
        out.push_str(&format!(
            "Left out: {only_a} task(s) scored only in A and {only_b} only in B.\n"
        ));
    }
    out.push_str(&format!(
        "Tasks are paired by id within each domain; each figure is over the paired tasks (Avg@{k}: successes over scored episodes; Pass^{k}: the unbiased C(c, {k}) / C(n, {k}) per task with {k} scored trials on both sides, averaged; overall: domains weighted by their paired tasks). 95% CI: percentile paired bootstrap over tasks ({n} resamples, drawn within each domain for overall). p: two-sided sign-flip permutation test ({n} random swaps of each task's A and B outcomes). A verdict of A or B better needs the CI to exclude 0 and p < {alpha}; otherwise the difference is within noise. Seed {seed}.\n",
        k = c.k,
        n = c.bootstrap.resamples,
        alpha = metrics::ALPHA,
        seed = c.bootstrap.seed,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(id: &str, trials: u64, successes: u64) -> TaskOutcome {
        TaskOutcome {
            task_id: id.into(),
            trials,
            successes,
        }
    }

    fn evaluation(path: &str, domains: &[(&str, Vec<TaskOutcome>)]) -> Evaluation {
        Evaluation {
            path: path.into(),
            files: vec![path.into()],
            episodes: 0,
            trials: 3,
            seed: 1,
            domains: domains
                .iter()
                .map(|(d, t)| (d.to_string(), t.clone()))
                .collect(),
        }
    }

    #[test]
    fn tasks_pair_by_id_within_a_domain_and_the_rest_is_reported() {
        let a = evaluation(
            "a",
            &[
                ("airline", vec![outcome("1", 3, 3), outcome("2", 3, 1)]),
                ("retail", vec![outcome("1", 3, 0)]),
            ],
        );
        let b = evaluation(
            "b",
            &[
                ("airline", vec![outcome("2", 3, 1), outcome("3", 3, 0)]),
                ("bank", vec![outcome("1", 3, 3)]),
            ],
        );
        let c = compare(&a, &b, 200, None).unwrap();
        assert_eq!(
            c.unpaired_domains,
            vec![("retail".to_string(), "A"), ("bank".to_string(), "B")]
        );
        assert_eq!(c.unpaired_tasks, (1, 1));
        let scopes: Vec<(&str, &str)> = c
            .rows
            .iter()
            .map(|r| (r.scope.as_str(), r.metric.as_str()))
            .collect();
        assert_eq!(
            scopes,
            [
                ("airline", "Avg@3"),
                ("airline", "Pass^3"),
                ("overall", "Avg@3"),
                ("overall", "Pass^3")
            ]
        );
        let d = c.rows[0].difference.as_ref().unwrap();
        assert_eq!((d.tasks, d.diff), (1, 0.0));
        assert_eq!(
            c.rows[2].difference, c.rows[0].difference,
            "one domain is overall"
        );
        let table = comparison_table(&c, &a, &b);
        assert!(table.contains("| airline | Avg@3 | 1 | 33.3% | 33.3% | +0.0 | [+0.0, +0.0] | 1.000 | within noise |"), "{table}");
        assert!(table.contains("retail: only in A") && table.contains("bank: only in B"));
        assert_eq!(compare(&a, &b, 200, None).unwrap(), c, "deterministic");
    }

    #[test]
    fn a_k_mismatch_or_nothing_in_common_is_an_error_naming_the_paths() {
        let a = evaluation("runs/a", &[("airline", vec![outcome("1", 3, 3)])]);
        let mut b = evaluation("runs/b", &[("airline", vec![outcome("9", 3, 3)])]);
        let e = compare(&a, &b, 10, None).unwrap_err().to_string();
        assert!(e.contains("runs/a and runs/b: no task"), "{e}");
        b.trials = 2;
        let e = compare(&a, &b, 10, None).unwrap_err().to_string();
        assert!(
            e.starts_with("runs/b: 2 trial(s) per task, but runs/a has 3"),
            "{e}"
        );
    }

    #[test]
    fn overall_weights_the_domains_by_their_paired_tasks() {
        let tasks = |n: usize, successes: u64| {
            (0..n)
                .map(|i| outcome(&i.to_string(), 3, successes))
                .collect::<Vec<_>>()
        };
        let a = evaluation("a", &[("airline", tasks(30, 3)), ("retail", tasks(10, 0))]);
        let b = evaluation("b", &[("airline", tasks(30, 0)), ("retail", tasks(10, 0))]);
        let c = compare(&a, &b, 500, None).unwrap();
        let row = |scope: &str| {
            c.rows
                .iter()
                .find(|r| r.scope == scope && r.metric == "Avg@3")
                .and_then(|r| r.difference.clone())
                .unwrap()
        };
        let overall = row("overall");
        assert_eq!(overall.tasks, 40);
        assert!(
            (overall.a - 0.75).abs() < 1e-12 && overall.b == 0.0,
            "{overall:?}"
        );
        assert_eq!(overall.verdict, metrics::Verdict::ABetter);
        assert_eq!(row("airline").verdict, metrics::Verdict::ABetter);
        assert_eq!(row("retail").verdict, metrics::Verdict::WithinNoise);
    }
}
