//! Chaos tests (issue 15, "runs that cannot lie"): the real binary under two writers, kills
//! at every phase boundary (the test-only `TRACER_FAILPOINT` hook aborts the process as
//! abruptly as `kill -9`), an endpoint outage and recovery, journals of other settings,
//! damaged caches and artifacts, and every config range. Each case asserts the one-line
//! error, the exit status and what is (and is not) left on disk.

use crate::common::*;
use crate::openai_server::{OpenAiServer, Reply};
use std::collections::BTreeSet;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;

/// `tracer` with extra environment variables (a failpoint, an episode delay).
fn tracer_env(root: &Path, output: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = tracer_command(root, output);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run tracer")
}

/// The process was stopped by the failpoint (SIGABRT), saying so.
#[track_caller]
fn assert_aborted_at(o: &Output, failpoint: &str) {
    assert_eq!(
        o.status.signal(),
        Some(6),
        "expected an abort at {failpoint}; stderr:\n{}",
        stderr(o)
    );
    assert!(
        stderr(o).contains(&format!("failpoint {failpoint} reached")),
        "{}",
        stderr(o)
    );
}

/// Exit status 1 and exactly one stderr line that starts with `error: ` and contains every
/// fragment; returns that line.
#[track_caller]
fn assert_one_line_error(o: &Output, fragments: &[&str]) -> String {
    assert_eq!(o.status.code(), Some(1), "stderr:\n{}", stderr(o));
    let err = stderr(o);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{err}");
    assert_eq!(
        err.lines().last(),
        Some(errors[0]),
        "the error ends stderr:\n{err}"
    );
    for f in fragments {
        assert!(errors[0].contains(f), "missing {f:?} in: {}", errors[0]);
    }
    errors[0].to_string()
}

/// Entry names of a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|es| {
            es.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A project with small grounding (12 airline training traces, all 12 verified) and an output whose `tasks`
/// stage is done, built once per test binary; tests work on copies of both.
fn tasks_base() -> &'static (TempDir, TempDir) {
    static BASE: OnceLock<(TempDir, TempDir)> = OnceLock::new();
    BASE.get_or_init(|| {
        let root = project_copy("chaos-base");
        std::fs::write(
            root.join("stages/grounded.toml"),
            "max_train = 12\nmax_eval = 0\n",
        )
        .unwrap();
        let out = temp_dir("chaos-base-out");
        assert_ok(&tracer(
            &root,
            &out,
            &["run", "tasks", "--domain", "airline"],
        ));
        (root, out)
    })
}

/// Copies of the base project and output.
fn from_base(label: &str) -> (TempDir, TempDir) {
    let (root, out) = tasks_base();
    let (r, o) = (temp_dir(label), temp_dir(&format!("{label}-out")));
    copy_dir(root, &r);
    copy_dir(out, &o);
    (r, o)
}

fn set_config(root: &Path, stage: &str, from: &str, to: &str) {
    let path = root.join(format!("stages/{stage}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{stage}.toml has no {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// Journal lines of a stage, header included.
fn journal_lines(out: &Path, stage: &str) -> usize {
    let dir = out.join(".journal").join(stage);
    names(&dir)
        .iter()
        .map(|n| {
            std::fs::read_to_string(dir.join(n))
                .unwrap_or_default()
                .lines()
                .count()
        })
        .sum()
}

const PHASES: [&str; 5] = [
    "stage-started",
    "outputs-written",
    "manifest-written",
    "swap-half-done",
    "swap-done",
];

#[test]
fn a_kill_at_any_phase_boundary_leaves_old_or_new_output_and_the_next_run_recovers() {
    let root = repo();
    let base = temp_dir("phase-base");
    assert_ok(&tracer(
        &root,
        &base,
        &["run", "traces", "--domain", "airline"],
    ));
    let before = tree(&base.join("traces"));
    for phase in PHASES {
        let out = temp_dir(&format!("phase-{phase}"));
        copy_dir(&base, &out);
        let failpoint = format!("{phase}@traces");
        let o = tracer_env(
            &root,
            &out,
            &["run", "traces", "--domain", "airline", "--force"],
            &[("TRACER_FAILPOINT", &failpoint)],
        );
        assert_aborted_at(&o, &failpoint);
        let left = names(&out.join("traces"));
        let has = |prefix: &str| left.iter().any(|n| n.starts_with(prefix));
        match phase {
            "swap-half-done" => {
                assert!(!has("domain=airline"), "{phase}: {left:?}");
                assert!(has(".tmp-domain=airline-") && has(".old-domain=airline-"));
            }
            "swap-done" => {
                assert!(has(".old-domain=airline-") && !has(".tmp-"), "{left:?}");
                assert_eq!(
                    tree(&out.join("traces/domain=airline")),
                    tree(&base.join("traces/domain=airline"))
                );
            }
            _ => {
                assert!(
                    has(".tmp-domain=airline-") && !has(".old-"),
                    "{phase}: {left:?}"
                );
                assert_eq!(
                    tree(&out.join("traces/domain=airline")),
                    tree(&base.join("traces/domain=airline")),
                    "{phase}: the previous output is untouched"
                );
            }
        }
        // The lock died with the process: the next run is not blocked, recovers, and finds
        // the stage fresh (no rework).
        let o = tracer(&root, &out, &["run", "traces", "--domain", "airline"]);
        assert_ok(&o);
        let err = stderr(&o);
        match phase {
            "swap-half-done" => {
                assert!(err.contains("finished the interrupted swap with"), "{err}");
                assert!(err.contains("removed leftover") && err.contains(".old-domain=airline-"));
            }
            "swap-done" => assert!(err.contains(".old-domain=airline-"), "{err}"),
            _ => assert!(
                err.contains("recovered: removed leftover") && err.contains(".tmp-domain=airline-"),
                "{phase}: {err}"
            ),
        }
        assert!(err.contains("fresh traces   airline"), "{phase}: {err}");
        assert_eq!(names(&out.join("traces")), ["domain=airline"], "{phase}");
        assert_eq!(tree(&out.join("traces")), before, "{phase}");
    }
}

#[test]
fn rollouts_resume_exactly_what_the_journal_lacks_and_one_writer_holds_the_output() {
    let (root, straight) = from_base("resume-straight");
    assert_ok(&tracer(
        &root,
        &straight,
        &["run", "rollouts", "--domain", "airline"],
    ));
    let expected = tree(&straight.join("rollouts"));
    let run = ["run", "rollouts", "--domain", "airline"];

    // Killed after 5 episodes; an overlapping writer's duplicate lines are added on top.
    let (_, out) = from_base("resume-kill");
    let o = tracer_env(
        &root,
        &out,
        &run,
        &[("TRACER_FAILPOINT", "journal-appended@rollouts#5")],
    );
    assert_aborted_at(&o, "journal-appended@rollouts#5");
    assert!(!out.join("rollouts/domain=airline").exists());
    assert_eq!(journal_lines(&out, "rollouts"), 1 + 5);
    let dir = out.join(".journal/rollouts");
    let file = dir.join(&names(&dir)[0]);
    let text = std::fs::read_to_string(&file).unwrap();
    let episodes: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, format!("{text}{episodes}")).unwrap();
    // The resumed run appends only the 7 missing episodes: an 8th append would abort it.
    let o = tracer_env(
        &root,
        &out,
        &run,
        &[("TRACER_FAILPOINT", "journal-appended@rollouts#8")],
    );
    assert_ok(&o);
    assert_eq!(
        tree(&out.join("rollouts")),
        expected,
        "no episode lost or duplicated"
    );
    assert_eq!(
        names(&dir),
        Vec::<String>::new(),
        "journal removed once the output is in place"
    );

    // Killed with the output complete but not swapped in: nothing is rolled out again.
    let (_, out) = from_base("resume-manifest");
    let o = tracer_env(
        &root,
        &out,
        &run,
        &[("TRACER_FAILPOINT", "manifest-written@rollouts")],
    );
    assert_aborted_at(&o, "manifest-written@rollouts");
    assert_eq!(journal_lines(&out, "rollouts"), 1 + 12);
    let o = tracer_env(
        &root,
        &out,
        &run,
        &[("TRACER_FAILPOINT", "journal-appended@rollouts#1")],
    );
    assert_ok(&o);
    assert_eq!(tree(&out.join("rollouts")), expected);

    // Killed after the swap, before the journal went: the stage is fresh, the journal goes.
    let (_, out) = from_base("resume-swapped");
    let o = tracer_env(
        &root,
        &out,
        &run,
        &[("TRACER_FAILPOINT", "swap-done@rollouts")],
    );
    assert_aborted_at(&o, "swap-done@rollouts");
    assert_eq!(journal_lines(&out, "rollouts"), 1 + 12);
    let o = tracer(&root, &out, &run);
    assert_ok(&o);
    assert!(
        stderr(&o).contains("removed the journal of the finished stage"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("fresh rollouts"), "{}", stderr(&o));
    assert_eq!(journal_lines(&out, "rollouts"), 0);
    assert_eq!(tree(&out.join("rollouts")), expected);

    // Two writers: while a slow rollout holds the output, a second writer is refused with
    // the holder's pid and command; a reader is not.
    let (_, out) = from_base("two-writers");
    // Every episode of the first writer sleeps 20 s: it holds the output until killed.
    let mut child = tracer_command(&root, &out)
        .args(run)
        .env("TRACER_EPISODE_DELAY_MS", "20000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let holder = format!("pid {}: tracer run rollouts --domain airline", child.id());
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(out.join(".lock")).is_ok_and(|l| l.contains(&holder))
        && started.elapsed().as_secs() < 60
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = tree(&out.join("traces"));
    let o = tracer(
        &root,
        &out,
        &["run", "traces", "--domain", "airline", "--force"],
    );
    assert_one_line_error(&o, &["in use by another tracer", &holder]);
    assert_eq!(
        tree(&out.join("traces")),
        before,
        "the refused writer wrote nothing"
    );
    assert_ok(&tracer(&root, &out, &["status", "--domain", "airline"]));
    child.kill().unwrap();
    child.wait().unwrap();
    // The kill left the holder's name in the lock file, but not the lock.
    let lock = std::fs::read_to_string(out.join(".lock")).unwrap();
    assert!(lock.contains(&holder), "{lock}");
    assert_ok(&tracer(&root, &out, &run));
    assert_eq!(tree(&out.join("rollouts")), expected);
}

fn endpoint_project(label: &str, server: &OpenAiServer) -> (TempDir, TempDir) {
    let (root, out) = from_base(label);
    set_config(&root, "rollouts", "max_steps = 50", "max_steps = 4");
    let path = root.join("stages/rollouts.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!(
        "\n[roles.agent]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nmax_retries = 0\n",
        server.base_url()
    ));
    std::fs::write(&path, text).unwrap();
    (root, out)
}

/// Distinct episode seeds among the chat requests the server saw after `from`.
fn episodes_asked(server: &OpenAiServer, from: usize) -> usize {
    let seeds: BTreeSet<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .skip(from)
        .map(|r| r.body["seed"].to_string())
        .collect();
    seeds.len()
}

#[test]
fn an_endpoint_outage_fails_the_stage_and_a_rerun_retries_only_the_errored_episodes() {
    let server = OpenAiServer::start(&["test-model"]);
    let (root, out) = endpoint_project("outage", &server);
    let run = ["run", "rollouts", "--domain", "airline"];
    // The first 5 requests fail; with no retries each ends one episode, then it recovers.
    for _ in 0..5 {
        server.push(Reply::Status {
            code: 503,
            retry_after: None,
            message: "injected outage".into(),
        });
    }
    let o = tracer(&root, &out, &run);
    assert_one_line_error(
        &o,
        &[
            "stage 'rollouts', domain 'airline': 5 of 12 episodes errored on infrastructure",
            "HTTP 503",
            "rerun to retry",
        ],
    );
    assert!(
        !out.join("rollouts/domain=airline").exists(),
        "no output on failure"
    );
    assert!(names(&out.join("rollouts")).is_empty(), "no leftovers");
    let status = stdout(&tracer(&root, &out, &["status", "--domain", "airline"]));
    assert!(
        status.contains("| rollouts | airline | stale (never run) |"),
        "{status}"
    );

    // The rerun asks the endpoint for exactly the 5 errored episodes.
    let seen = server.post_count();
    assert_ok(&tracer(&root, &out, &run));
    assert_eq!(episodes_asked(&server, seen), 5);

    // ... and ends with the artifact of a run that never saw the outage.
    let (_, straight) = from_base("outage-straight");
    assert_ok(&tracer(&root, &straight, &run));
    assert_eq!(
        tree(&out.join("rollouts")),
        tree(&straight.join("rollouts"))
    );

    // A damaged response cache is one line naming the file and the way out, not a panic;
    // the finished output is untouched.
    let before = tree(&out.join("rollouts"));
    let cache = out.join(".llm-cache.redb");
    let mut bytes = std::fs::read(&cache).unwrap();
    // Every page after the first: which page holds what depends on how the answers were
    // batched into commits.
    for b in &mut bytes[4096..] {
        *b ^= 0xff;
    }
    std::fs::write(&cache, bytes).unwrap();
    let o = tracer(
        &root,
        &out,
        &["run", "rollouts", "--domain", "airline", "--force"],
    );
    assert_one_line_error(
        &o,
        &[".llm-cache.redb", "is damaged", "move it aside (`mv "],
    );
    assert_eq!(tree(&out.join("rollouts")), before);
    std::fs::rename(&cache, out.join("damaged.redb")).unwrap();
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "rollouts", "--domain", "airline", "--force"],
    ));
    assert_eq!(tree(&out.join("rollouts")), before);
}

fn rollout_args<'a>(tasks: &'a str, out: &'a str, trials: &'a str) -> Vec<&'a str> {
    vec![
        "rollout", "--domain", "retail", "--db", "FIXTURE", "--tasks", tasks, "--trials", trials,
        "--out", out,
    ]
}

fn retail_fixture() -> String {
    repo()
        .join("tests/fixtures/tau_bench/retail")
        .display()
        .to_string()
}

fn with_db<'a>(args: Vec<&'a str>, db: &'a str) -> Vec<&'a str> {
    args.into_iter()
        .map(|a| if a == "FIXTURE" { db } else { a })
        .collect()
}

#[test]
fn a_rollout_journal_of_other_settings_is_refused_and_the_same_settings_resume() {
    let db = retail_fixture();
    let tasks = format!("{db}/tasks.json");
    let dir = temp_dir("rollout-journal");
    let (out, straight) = (dir.join("run"), dir.join("straight"));
    let (o_s, s_s) = (out.display().to_string(), straight.display().to_string());
    assert_ok(&tracer(
        &repo(),
        &dir,
        &with_db(rollout_args(&tasks, &s_s, "2"), &db),
    ));

    let args = with_db(rollout_args(&tasks, &o_s, "2"), &db);
    let o = tracer_env(
        &repo(),
        &dir,
        &args,
        &[("TRACER_FAILPOINT", "journal-appended@rollout#2")],
    );
    assert_aborted_at(&o, "journal-appended@rollout#2");
    // Other trials into the same --out: refused, nothing written.
    let files = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        tree(dir)
            .into_iter()
            .filter(|(n, _)| n != ".lock")
            .collect()
    };
    let before = files(&out);
    assert_eq!(before.len(), 1, "only the journal");
    let o = tracer(
        &repo(),
        &dir,
        &with_db(rollout_args(&tasks, &o_s, "3"), &db),
    );
    assert_one_line_error(
        &o,
        &[
            ".journal.jsonl: journal of a different run",
            "trials",
            "--fresh",
        ],
    );
    assert_eq!(files(&out), before);
    // The same settings resume: 4 more episodes, not 6.
    let o = tracer_env(
        &repo(),
        &dir,
        &args,
        &[("TRACER_FAILPOINT", "journal-appended@rollout#5")],
    );
    assert_ok(&o);
    for f in ["rollouts.parquet", "report.json", "report.md"] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(straight.join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(!out.join(".journal.jsonl").exists());

    // A journal without a key (an older tracer's) is refused too; --fresh discards it.
    let legacy = dir.join("legacy");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join(".journal.jsonl"), "{\"task_id\": \"x\"}\n").unwrap();
    let l = legacy.display().to_string();
    let o = tracer(&repo(), &dir, &with_db(rollout_args(&tasks, &l, "1"), &db));
    assert_one_line_error(&o, &["has no key", "--fresh"]);
    let mut fresh = with_db(rollout_args(&tasks, &l, "1"), &db);
    fresh.push("--fresh");
    let o = tracer(&repo(), &dir, &fresh);
    assert_ok(&o);
    assert!(stderr(&o).contains("discarded"), "{}", stderr(&o));

    // --out naming a file.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let f = file.display().to_string();
    let o = tracer(&repo(), &dir, &with_db(rollout_args(&tasks, &f, "1"), &db));
    assert_one_line_error(&o, &["--out", "a-file: is a regular file"]);
}

/// `tracer rollout` notices its `.lock` deleted under it (as `tracer run` does): it stops
/// before writing any result into place, keeps its journal, and a rerun resumes and
/// finishes.
#[test]
fn a_rollout_whose_lock_file_is_deleted_under_it_writes_nothing_into_place() {
    let db = retail_fixture();
    let tasks = format!("{db}/tasks.json");
    let dir = temp_dir("rollout-lock-deleted");
    let out = dir.join("run");
    let o_s = out.display().to_string();
    let args = with_db(rollout_args(&tasks, &o_s, "1"), &db);
    // Every episode sleeps 3 s after it ends: the run holds the lock for several seconds.
    let child = tracer_command(&repo(), &dir)
        .args(&args)
        .env("TRACER_EPISODE_DELAY_MS", "3000")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let holder = format!("pid {}: ", child.id());
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(out.join(".lock")).is_ok_and(|l| l.contains(&holder)) {
        assert!(started.elapsed().as_secs() < 60, "the rollout never locked");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::remove_file(out.join(".lock")).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_one_line_error(
        &o,
        &[".lock: the lock file was deleted or replaced while this run held it"],
    );
    for f in TASK_FILE_OUTPUTS_WRITTEN {
        assert!(!out.join(f).exists(), "{f} written after the lock was lost");
    }
    assert!(out.join(".journal.jsonl").exists(), "the journal is kept");
    let o = tracer(&repo(), &dir, &args);
    assert_ok(&o);
    assert!(out.join("report.json").exists());
}

const TASK_FILE_OUTPUTS_WRITTEN: [&str; 4] = [
    "rollouts.parquet",
    "tasks.parquet",
    "report.json",
    "report.md",
];

#[test]
fn tasks_whose_gold_fails_and_changes_nothing_are_flagged_and_not_scored() {
    let db = retail_fixture();
    let dir = temp_dir("broken-gold");
    let mut tasks: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(format!("{db}/tasks.json")).unwrap())
            .unwrap();
    let n = tasks.len();
    let mut broken = tasks[0].clone();
    broken["actions"] = serde_json::json!([{"name": "cancel_pending_order",
        "kwargs": {"order_id": "#W0000000", "reason": "no longer needed"}}]);
    tasks.push(broken);
    let file = dir.join("tasks.json");
    std::fs::write(&file, serde_json::to_string(&tasks).unwrap()).unwrap();
    let f = file.display().to_string();
    let broken_id = format!("retail-{n:04}");
    for (label, flag) in [
        ("excluded", None),
        ("included", Some("--include-broken-gold")),
    ] {
        let out = dir.join(label).display().to_string();
        let mut args = with_db(rollout_args(&f, &out, "1"), &db);
        args.extend(flag);
        let o = tracer(&repo(), &dir, &args);
        assert_ok(&o);
        let rep: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(label).join("report.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            rep["broken_gold"],
            serde_json::json!([broken_id]),
            "{label}"
        );
        let scored = if flag.is_some() { n + 1 } else { n };
        assert_eq!(rep["tasks"], scored, "{label}");
        assert!(stdout(&o).contains(&broken_id), "{}", stdout(&o));
    }
}

#[test]
fn staleness_is_transitive_and_exports_and_caches_are_checked() {
    let (root, out) = from_base("stale-export");
    let export = |extra: &[&str]| {
        let file = out.join("tasks.json").display().to_string();
        let mut args = vec!["export", "tasks", "--domain", "airline", "--out", &file];
        args.extend(extra);
        tracer(&root, &out, &args)
    };
    assert_ok(&export(&[]));

    // An upstream config change makes everything downstream stale, in status and export.
    set_config(&root, "grounded", "max_train = 12", "max_train = 11");
    let status = stdout(&tracer(&root, &out, &["status", "--domain", "airline"]));
    for line in [
        "| traces | airline | fresh |",
        "| grounded | airline | stale (config changed) |",
        "| refined | airline | stale (upstream 'grounded' is stale) |",
        "| tasks | airline | stale (upstream 'emotions' is stale) |",
    ] {
        assert!(status.contains(line), "{line}\n{status}");
    }
    assert_one_line_error(
        &export(&[]),
        &["stage 'tasks', domain 'airline': stale", "--allow-stale"],
    );
    assert_ok(&export(&["--allow-stale"]));
    set_config(&root, "grounded", "max_train = 11", "max_train = 12");

    // A tampered artifact is never exported, stale-ok or not.
    let part = out.join("tasks/domain=airline/part-00000.parquet");
    let good = std::fs::read(&part).unwrap();
    let mut bad = good.clone();
    bad.push(0);
    std::fs::write(&part, &bad).unwrap();
    for extra in [&[][..], &["--allow-stale"][..]] {
        assert_one_line_error(
            &export(extra),
            &["part-00000.parquet: does not match its manifest"],
        );
    }
    std::fs::write(&part, &good).unwrap();

    // A corrupted emotion model is detected by its checksum and retrained (deterministic:
    // the same model and the same labels), not used. The test trains into a cache of its
    // own (the shared one is read by tests running beside this one).
    let cache = root.join("emotion-cache");
    let model_env = repo().join(".cache/models/all-MiniLM-L6-v2");
    let model_env = model_env.to_str().unwrap();
    let cache_env = cache.to_str().unwrap();
    let with_cache = |args: &[&str]| {
        tracer_env(
            &root,
            &out,
            args,
            &[
                ("TRACER_EMBED_MODEL", model_env),
                ("TRACER_EMOTION_CACHE", cache_env),
            ],
        )
    };
    let emotions_again = ["run", "emotions", "--domain", "airline", "--force"];
    assert_ok(&with_cache(&emotions_again));
    let models: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mapper-")
        })
        .collect();
    assert_eq!(models.len(), 1, "{models:?}");
    let model = &models[0];
    let original = std::fs::read(model).unwrap();
    let emotions = tree(&out.join("emotions"));
    let mut damaged = original.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0x40;
    std::fs::write(model, damaged).unwrap();
    let o = with_cache(&emotions_again);
    assert_ok(&o);
    let name = model.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        stderr(&o).contains(&format!("{name}: does not match its checksum"))
            && stderr(&o).contains("retraining"),
        "{}",
        stderr(&o)
    );
    // The model file records its training time, so compare what it decides: the weights
    // after the header (same length as the original's) and the labels it gives.
    let retrained = std::fs::read(model).unwrap();
    assert!(retrained[retrained.len() - 4096..] == original[original.len() - 4096..]);
    assert_eq!(tree(&out.join("emotions")), emotions);
    // The next user of the model trusts the retrained one: no warning.
    let mapped = out.join("mapped.jsonl").display().to_string();
    let o = with_cache(&["emotion", "map", "--output", &mapped]);
    assert_ok(&o);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

/// (stage config, text to write, fragment naming the field).
const BAD_CONFIGS: &[(&str, &str, &str)] = &[
    (
        "rollouts",
        "[agent_errors]\nwrong_argument = 1.5\n",
        "agent_errors.wrong_argument: 1.5 is outside 0..=1",
    ),
    (
        "rollouts",
        "[agent_errors]\nskip_confirmation = -0.3\n",
        "agent_errors.skip_confirmation: -0.3 is outside 0..=1",
    ),
    (
        "rollouts",
        "concurrency = 2305843009213693952\n",
        "concurrency: 2305843009213693952 is outside 1..=4096",
    ),
    (
        "rollouts",
        "trials = 100000\n",
        "trials: 100000 is outside 1..=1000",
    ),
    ("rollouts", "max_steps = 0\n", "max_steps: 0 is outside"),
    (
        "rollouts",
        "max_errored_share = 2\n",
        "max_errored_share: 2 is outside 0..=1",
    ),
    (
        "rollouts",
        "split = \"test\"\n",
        "split: unknown variant `test`, expected `train` or `eval`",
    ),
    ("eval", "trials = 0\n", "trials: 0 is outside 1..=1000"),
    (
        "refined",
        "preference_rate = 2\n",
        "preference_rate: 2 is outside 0..=1",
    ),
    (
        "refined",
        "ambiguity_rate = -1.0\n",
        "ambiguity_rate: -1 is outside 0..=1",
    ),
    (
        "traces",
        "attempts_per_trace = 0\n",
        "attempts_per_trace: 0 is outside 1..=10000",
    ),
    (
        "traces",
        "max_intents = 1000\n",
        "max_intents: 1000 is outside 1..=10",
    ),
    (
        "traces",
        "eval_fraction = 1.5\n",
        "eval_fraction: 1.5 is outside 0..=1",
    ),
    (
        "traces",
        "[targets]\natlantis = 10\n",
        "targets: unknown domain 'atlantis'",
    ),
    (
        "traces",
        "default_target = 100000000000\n",
        "default_target: 100000000000 is outside",
    ),
    (
        "grounded",
        "max_customers = 0\n",
        "max_customers: 0 is outside",
    ),
    ("graphs", "customers = 0\n", "customers: 0 is outside"),
    ("emotions", "k = 0\n", "k: 0 is outside 1..=5940"),
    (
        "trajectories",
        "low_domains = [\"airline\", \"narnia\"]\n",
        "low_domains: unknown domain 'narnia'",
    ),
    (
        "trajectories",
        "cap_per_domain = 0\n",
        "cap_per_domain: 0 is outside",
    ),
    (
        "pipeline",
        "domains = [\"airline\", \"atlantis\"]\n",
        "domains: unknown domain 'atlantis'",
    ),
    // Role tables: every problem `run` would find only when it builds the role.
    (
        "rollouts",
        "[roles.agent]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        "roles.agent: provider = \"openai\" needs field `model`",
    ),
    (
        "rollouts",
        "[roles.agent]\nprovider = \"openai\"\nmodel = \"m\"\n",
        "roles.agent: provider = \"openai\" needs field `base_url`",
    ),
    (
        "rollouts",
        "[roles.agent]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"ftp://x\"\n",
        "roles.agent: field `base_url`",
    ),
    (
        "rollouts",
        "[roles.agent]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nbase_urls = [\"http://y/v1\"]\n",
        "roles.agent: set either field `base_url` or field `base_urls`",
    ),
    (
        "rollouts",
        "[roles.user]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\ntemperature = 5.0\n",
        "roles.user: field `temperature`: 5 is outside",
    ),
    (
        "rollouts",
        "[roles.user]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nconcurrency = 2305843009213693952\n",
        "roles.user: field `concurrency`",
    ),
    (
        "rollouts",
        "[roles.agent]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nextra_body = { model = \"other\" }\n",
        "roles.agent: field `extra_body.model`",
    ),
    (
        "rollouts",
        "[roles.agent]\nmodel = \"m\"\n",
        "roles.agent: field `model` needs provider = \"openai\"",
    ),
    (
        "rollouts",
        "[roles.judge]\nprovider = \"scripted\"\n",
        "roles.judge: this stage has no judge role (it uses: agent, user)",
    ),
    (
        "refined",
        "[roles.refiner]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nmax_retries = 1000\n",
        "roles.refiner: field `max_retries`",
    ),
    (
        "feelings",
        "[roles.agent]\nprovider = \"scripted\"\n",
        "roles.agent: this stage has no agent role (it uses: feeler)",
    ),
    (
        "tasks",
        "[roles.judge]\nprovider = \"openai\"\nbase_url = \"http://x/v1\"\n",
        "roles.judge: provider = \"openai\" needs field `model`",
    ),
    (
        "grounded",
        "[roles.grounder]\nprovider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\ntop_p = 3.0\n",
        "roles.grounder: field `top_p`",
    ),
    (
        "emotions",
        "[embedder]\nprovider = \"openai\"\nmodel = \"m\"\n",
        "embedder: provider = \"openai\" needs field `base_url`",
    ),
];

/// The stage `tracer run` is pointed at for a broken config of `stage`.
fn target_of(stage: &str) -> &str {
    if stage == "pipeline" { "db" } else { stage }
}

#[test]
fn every_config_range_fails_validate_and_run_alike_with_one_line_and_no_output() {
    for (stage, text, fragment) in BAD_CONFIGS {
        let root = project_copy("badrange");
        let file = format!("stages/{stage}.toml");
        std::fs::write(root.join(&file), text).unwrap();
        let tmp = temp_dir("badrange-out");
        let out = tmp.join("output");
        let o = tracer(&root, &out, &["validate"]);
        assert_eq!(o.status.code(), Some(1), "{file}: {text:?}\n{}", stderr(&o));
        let problem = format!("{file}: {fragment}");
        assert!(
            stderr(&o).contains(&problem),
            "validate, {text:?}: {}",
            stderr(&o)
        );
        let o = tracer(
            &root,
            &out,
            &["run", target_of(stage), "--domain", "airline"],
        );
        assert_one_line_error(&o, &[&problem]);
        assert!(!out.exists(), "{file}: nothing written");
    }

    // Project-level problems: an empty policy, a missing stages/ folder.
    let root = project_copy("badpolicy");
    std::fs::write(root.join("policies/airline.md"), "# Airline policy\n\n").unwrap();
    let tmp = temp_dir("badpolicy-out");
    let out = tmp.join("output");
    let o = tracer(&root, &out, &["run", "rollouts", "--domain", "airline"]);
    assert_one_line_error(&o, &["policies/airline.md: policy is empty"]);
    assert!(!out.exists());
    let root = project_copy("nostages");
    std::fs::remove_dir_all(root.join("stages")).unwrap();
    for args in [&["validate"][..], &["run", "traces"][..]] {
        let o = tracer(&root, &out, args);
        assert_one_line_error(
            &o,
            &[if args[0] == "validate" {
                "validation found 1 problem"
            } else {
                "stages: missing"
            }],
        );
        assert!(stderr(&o).contains("stages: missing"), "{}", stderr(&o));
    }
    assert!(!out.exists());
}

#[test]
fn numbers_out_of_range_are_argument_errors_not_saturated() {
    use tracer::domain::{self, Split};
    let env = domain::find("airline").unwrap().generate(1, Split::Eval);
    let user = env.customers()[0].clone();
    let profile: serde_json::Value = serde_json::from_str(
        &env.fork()
            .invoke("get_user_details", &serde_json::json!({ "user_id": user }))
            .text,
    )
    .unwrap();
    let reservation = profile["reservations"][0].as_str().unwrap().to_string();
    let payment = profile["payment_methods"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    for huge in ["1e308", "18446744073709551616", "9223372036854775808"] {
        let args: serde_json::Value = serde_json::from_str(&format!(
            r#"{{"reservation_id": "{reservation}", "total_baggages": {huge}, "nonfree_baggages": 0, "payment_id": "{payment}"}}"#
        ))
        .unwrap();
        let mut fork = env.fork();
        let out = fork.invoke("update_reservation_baggages", &args);
        assert!(out.is_error, "{huge}: {}", out.text);
        assert!(
            out.text.contains("'total_baggages' is out of range"),
            "{}",
            out.text
        );
        assert_eq!(fork.state_hash(), env.state_hash(), "nothing written");
    }
}

/// Requests the server answered after the first `from` posts.
fn posts_since(server: &OpenAiServer, from: usize) -> usize {
    server.post_count() - from
}

#[test]
fn answers_of_shards_are_never_asked_again_by_other_shards_or_one_process() {
    let rollouts = |root: &Path, out: &Path, extra: &[&str]| {
        let mut args = vec!["run", "rollouts", "--domain", "airline"];
        args.extend_from_slice(extra);
        assert_ok(&tracer(root, out, &args));
    };
    // Both shards of 2, then the same stage re-sharded three ways: nothing is asked again.
    let server = OpenAiServer::start(&["test-model"]);
    let (root, out) = endpoint_project("shared-cache-reshard", &server);
    rollouts(&root, &out, &["--shard", "0/2"]);
    let first_half = server.post_count();
    assert!(first_half > 0, "shard 0/2 asked the endpoint");
    rollouts(&root, &out, &["--shard", "1/2"]);
    let all = server.post_count();
    // The operator drops the parts of 2 (keeping their caches, as a re-split would).
    let parts = out.join(".shards/rollouts/domain=airline");
    for part in ["part-0-of-2", "part-1-of-2"] {
        std::fs::remove_dir_all(parts.join(part)).unwrap();
    }
    for spec in ["0/3", "1/3", "2/3"] {
        rollouts(&root, &out, &["--shard", spec]);
    }
    assert_eq!(
        posts_since(&server, all),
        0,
        "shards of 3 re-asked shards of 2"
    );
    // The merge folds every shard's answers into the output root's cache.
    assert_ok(&tracer(
        &root,
        &out,
        &["merge", "rollouts", "--domain", "airline"],
    ));
    let left: Vec<String> = names(&out.join(".shards/rollouts"))
        .into_iter()
        .filter(|n| n.ends_with(".redb"))
        .collect();
    assert!(
        left.is_empty(),
        "shard caches left after the merge: {left:?}"
    );
    rollouts(&root, &out, &["--force"]);
    assert_eq!(
        posts_since(&server, all),
        0,
        "one process re-asked after the merge"
    );

    // Shard 0 of 2, then one process finishes: it asks exactly the other half.
    let server = OpenAiServer::start(&["test-model"]);
    let (root, out) = endpoint_project("shared-cache-finish", &server);
    rollouts(&root, &out, &["--shard", "0/2"]);
    assert_eq!(server.post_count(), first_half);
    rollouts(&root, &out, &[]);
    assert_eq!(
        server.post_count(),
        all,
        "one process re-asked shard 0/2's requests"
    );
    rollouts(&root, &out, &["--force"]);
    rollouts(&root, &out, &["--shard", "1/3", "--force"]);
    assert_eq!(server.post_count(), all, "a rerun re-asked");
}

#[test]
fn a_response_cache_cut_short_while_it_is_created_does_not_block_later_runs() {
    let server = OpenAiServer::start(&["test-model"]);
    let (root, out) = endpoint_project("cache-create-full", &server);
    // The disk fills while the cache file is first written: every write past 4 KiB fails
    // (RLIMIT_FSIZE, with SIGXFSZ ignored, turns into EFBIG, as ENOSPC would).
    let mut cmd = tracer_command(&root, &out);
    let exe = env!("CARGO_BIN_EXE_tracer");
    cmd.env("TRACER_BIN", exe);
    let o = std::process::Command::new("bash")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 8; exec \"$TRACER_BIN\" run rollouts --domain airline",
        ])
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .current_dir(&root)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        !out.join(".llm-cache.redb").exists(),
        "a half-created cache was left: {}",
        stderr(&o)
    );
    // With room again, the run goes through.
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "rollouts", "--domain", "airline"],
    ));
    assert!(out.join(".llm-cache.redb").exists());
}
