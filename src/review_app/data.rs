//! What the review app shows, read once per domain from a run's artifacts: every
//! evaluation and training candidate with its verification verdict, screening result and
//! faults, and the domain's dependency graph with its witnesses (what the lists need); the
//! episodes and the databases (what only a task page needs, the larger part) are read on
//! first use, or by the app's background reader once every domain's lists are ready.

use crate::artifact::{self, EdgeRecord, FaultRecord, RejectRecord, RolloutRecord, TaskRecord};
use crate::config::Paths;
use crate::domain::{Domain, Environment};
use crate::pipeline::stage_dir;
use crate::split::Split;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::OnceLock;

/// Verification of a candidate by the `tasks` stage.
#[derive(Clone, Debug, PartialEq)]
pub enum Verified {
    Yes,
    /// Rejected: kind (with rule) and reason.
    No(String, String),
    /// The `tasks` stage has not run.
    Unknown,
}

/// Screening of an evaluation task.
#[derive(Clone, Debug, PartialEq)]
pub enum Screened {
    Passed,
    Failed(String),
    /// Not screened: a training task, an unverified one, or the stage has not run.
    NotRun,
}

pub struct Candidate {
    pub task: TaskRecord,
    /// [`crate::review::content_hash`] of the task, computed once.
    pub hash: String,
    pub verified: Verified,
    pub screened: Screened,
    /// Fault names from `tracer analyze` over all of this task's episodes.
    pub faults: BTreeSet<String>,
}

pub struct DomainData {
    pub domain: &'static dyn Domain,
    pub candidates: Vec<Candidate>,
    pub index: HashMap<String, usize>,
    /// Faults per (task id, trial, source).
    pub faults: HashMap<(String, i32, String), Vec<FaultRecord>>,
    pub graph: Option<crate::graph::ToolGraph>,
    pub edges: Vec<EdgeRecord>,
    /// Stages whose artifacts were found.
    pub stages: BTreeSet<&'static str>,
    /// The manifests of the stages read, as they were when read (see [`stamp`]).
    pub stamp: Vec<Option<std::time::SystemTime>>,
    paths: Paths,
    pages: OnceLock<Result<TaskPages, String>>,
}

/// What only a task page needs: the episodes and the databases.
pub struct TaskPages {
    /// Episodes per task id: (source stage, record), screening first.
    pub episodes: HashMap<String, Vec<(&'static str, RolloutRecord)>>,
    /// The evaluation database (edits are verified on it) and the training one.
    pub eval_env: Option<Box<dyn Environment>>,
    pub train_env: Option<Box<dyn Environment>>,
}

/// Where each stage's episodes are.
const EPISODES: [(&str, &str); 3] = [
    ("screened", "episodes.parquet"),
    ("eval", "part-00000.parquet"),
    ("rollouts", "part-00000.parquet"),
];

impl TaskPages {
    fn load(paths: &Paths, domain: &'static dyn Domain) -> Result<TaskPages, String> {
        let dir = |stage: &str| stage_dir(&paths.output, stage, domain.name());
        let mut episodes: HashMap<String, Vec<(&'static str, RolloutRecord)>> = HashMap::new();
        for (source, file) in EPISODES {
            for r in read_if::<RolloutRecord>(&dir(source).join(file))?.unwrap_or_default() {
                episodes
                    .entry(r.task_id.clone())
                    .or_default()
                    .push((source, r));
            }
        }
        let db = dir("db");
        let env = |split| crate::project::load_db(&db, domain, split).ok();
        let (eval_env, train_env) = if db.is_dir() {
            (env(Split::Eval), env(Split::Train))
        } else {
            (None, None)
        };
        Ok(TaskPages {
            episodes,
            eval_env,
            train_env,
        })
    }
}

/// The stages the app reads.
const READ: &[&str] = &[
    "db", "graphs", "emotions", "tasks", "screened", "eval", "rollouts", "analysis",
];

/// When each read stage's manifest last changed: a run since the data was read changes it,
/// and the app reads the domain again.
pub fn stamp(paths: &Paths, domain: &str) -> Vec<Option<std::time::SystemTime>> {
    READ.iter()
        .map(|stage| {
            std::fs::metadata(stage_dir(&paths.output, stage, domain).join("_manifest.json"))
                .and_then(|m| m.modified())
                .ok()
        })
        .collect()
}

fn read_if<R: artifact::Record>(path: &Path) -> Result<Option<Vec<R>>, String> {
    if !path.is_file() {
        return Ok(None);
    }
    artifact::read_records::<R>(path)
        .map(|(rows, _)| Some(rows))
        .map_err(|e| e.to_string())
}

impl DomainData {
    /// Read a domain's artifacts from `paths.output`. Missing stages are allowed (shown as
    /// not run); an unreadable artifact is an error naming it.
    pub fn load(paths: &Paths, domain: &'static dyn Domain) -> Result<DomainData, String> {
        let d = domain.name();
        let stamp = stamp(paths, d);
        let dir = |stage: &str| stage_dir(&paths.output, stage, d);
        let mut stages = BTreeSet::new();
        let mut found = |stage: &'static str, present: bool| {
            if present {
                stages.insert(stage);
            }
        };
        // The candidates: every task that reached verification, with its emotion columns.
        let candidates = match read_if::<TaskRecord>(&dir("emotions").join("part-00000.parquet"))? {
            Some(rows) => rows,
            None => read_if::<TaskRecord>(&dir("tasks").join("part-00000.parquet"))?.ok_or_else(
                || {
                    format!(
                        "{}: no tasks for {d} (run `tracer run tasks --domain {d}` first)",
                        dir("tasks").display()
                    )
                },
            )?,
        };
        let verified = read_if::<TaskRecord>(&dir("tasks").join("part-00000.parquet"))?;
        found("tasks", verified.is_some());
        let verified_rows: Option<HashMap<String, TaskRecord>> =
            verified.map(|rows| rows.into_iter().map(|t| (t.task_id.clone(), t)).collect());
        let mut rejected: HashMap<String, (String, String)> = HashMap::new();
        for r in
            read_if::<RejectRecord>(&dir("tasks").join("_rejects.parquet"))?.unwrap_or_default()
        {
            let kind = match &r.rule {
                Some(rule) => format!("{}/{rule}", r.reason_kind),
                None => r.reason_kind.clone(),
            };
            if let Some(id) = r.task_id {
                rejected.insert(id, (kind, r.reason));
            }
        }
        let screened = read_if::<TaskRecord>(&dir("screened").join("part-00000.parquet"))?;
        found("screened", screened.is_some());
        let passed: Option<BTreeSet<String>> =
            screened.map(|rows| rows.into_iter().map(|t| t.task_id).collect());
        let mut screen_fail: HashMap<String, String> = HashMap::new();
        for r in
            read_if::<RejectRecord>(&dir("screened").join("_rejects.parquet"))?.unwrap_or_default()
        {
            if let Some(id) = r.task_id {
                screen_fail.insert(id, r.reason);
            }
        }
        for (source, file) in EPISODES {
            found(source, dir(source).join(file).is_file());
        }
        let mut faults: HashMap<(String, i32, String), Vec<FaultRecord>> = HashMap::new();
        let mut task_faults: HashMap<String, BTreeSet<String>> = HashMap::new();
        if let Some(rows) = read_if::<FaultRecord>(&dir("analysis").join("part-00000.parquet"))? {
            found("analysis", true);
            for f in rows {
                task_faults
                    .entry(f.task_id.clone())
                    .or_default()
                    .insert(f.fault.clone());
                faults
                    .entry((f.task_id.clone(), f.trial, f.source.clone()))
                    .or_default()
                    .push(f);
            }
        }
        let candidates: Vec<Candidate> = candidates
            .into_iter()
            .map(|t| {
                let verified = match (&verified_rows, rejected.get(&t.task_id)) {
                    (None, _) => Verified::Unknown,
                    (Some(v), _) if v.contains_key(&t.task_id) => Verified::Yes,
                    (Some(_), Some((k, r))) => Verified::No(k.clone(), r.clone()),
                    (Some(_), None) => {
                        Verified::No("missing".into(), "not among the verified tasks".into())
                    }
                };
                let screened = match (&passed, screen_fail.get(&t.task_id)) {
                    (Some(p), _) if p.contains(&t.task_id) => Screened::Passed,
                    (_, Some(r)) => Screened::Failed(r.clone()),
                    _ => Screened::NotRun,
                };
                // The verified record is the one reviewed (the same content as the candidate).
                let task = verified_rows
                    .as_ref()
                    .and_then(|v| v.get(&t.task_id).cloned())
                    .unwrap_or(t);
                let faults = task_faults.remove(&task.task_id).unwrap_or_default();
                Candidate {
                    hash: crate::review::content_hash(&task),
                    task,
                    verified,
                    screened,
                    faults,
                }
            })
            .collect();
        let index = candidates
            .iter()
            .enumerate()
            .map(|(i, c)| (c.task.task_id.clone(), i))
            .collect();
        let graph = std::fs::read(dir("graphs").join("graph.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let edges =
            read_if::<EdgeRecord>(&dir("graphs").join("part-00000.parquet"))?.unwrap_or_default();
        Ok(DomainData {
            domain,
            candidates,
            index,
            faults,
            graph,
            edges,
            stages,
            stamp,
            paths: paths.clone(),
            pages: OnceLock::new(),
        })
    }

    /// The episodes and databases, read on first use.
    pub fn task_pages(&self) -> Result<&TaskPages, String> {
        self.pages
            .get_or_init(|| TaskPages::load(&self.paths, self.domain))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A task's episodes: (source stage, record), screening first.
    pub fn episodes(&self, task_id: &str) -> Result<&[(&'static str, RolloutRecord)], String> {
        Ok(self
            .task_pages()?
            .episodes
            .get(task_id)
            .map_or(&[][..], Vec::as_slice))
    }

    pub fn get(&self, task_id: &str) -> Option<&Candidate> {
        self.index.get(task_id).map(|&i| &self.candidates[i])
    }

    /// The database of a split (none when the run has none, or it could not be read).
    pub fn env(&self, split: Split) -> Option<&dyn Environment> {
        let pages = self.task_pages().ok()?;
        match split {
            Split::Eval => pages.eval_env.as_deref(),
            Split::Train => pages.train_env.as_deref(),
        }
    }

    /// Each reference action's output, replayed on a fresh fork of the task's database.
    pub fn replayed_outputs(&self, task: &TaskRecord) -> Vec<(String, String, bool)> {
        let Some(env) = self.env(task.split) else {
            return Vec::new();
        };
        let mut state = env.fork();
        task.actions
            .iter()
            .map(|a| {
                let r = state.invoke(&a.name, &a.kwargs);
                (a.name.clone(), r.text, r.is_error)
            })
            .collect()
    }

    /// Counts per emotion family (for the filter's options).
    pub fn families(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for c in &self.candidates {
            if let Some(f) = &c.task.emotion_family {
                *out.entry(f.clone()).or_default() += 1;
            }
        }
        out
    }

    /// Every fault name present (for the filter's options).
    pub fn fault_names(&self) -> BTreeSet<String> {
        self.candidates
            .iter()
            .flat_map(|c| c.faults.iter().cloned())
            .collect()
    }
}
