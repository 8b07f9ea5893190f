//! `tracer run | status | validate`: determinism, staleness, atomicity, pyarrow read-back.

use crate::common::*;

#[test]
fn traces_are_byte_identical_per_seed_and_readable_by_pyarrow() {
    let root = repo();
    let (a, b, c) = (temp_dir("det-a"), temp_dir("det-b"), temp_dir("det-c"));
    assert_ok(&tracer(&root, &a, &["run", "traces"]));
    assert_ok(&tracer(&root, &b, &["run", "traces"]));
    assert_eq!(
        tree(&a),
        tree(&b),
        "same seed + config must give byte-identical artifacts"
    );

    assert_ok(&tracer(&root, &c, &["run", "traces", "--seed", "7"]));
    let part = "traces/domain=airline/part-00000.parquet";
    assert_ne!(
        std::fs::read(a.join(part)).unwrap(),
        std::fs::read(c.join(part)).unwrap(),
        "another seed must sample other traces"
    );

    // A second run finds everything fresh and rewrites nothing.
    let again = tracer(&root, &a, &["run", "traces"]);
    assert_ok(&again);
    assert!(!stderr(&again).contains("ran  "), "{}", stderr(&again));
    assert_eq!(tree(&a), tree(&b));

    let report = python(&format!(
        r#"
import json, pyarrow.dataset as ds, pyarrow.parquet as pq
out = {out:?}
t = ds.dataset(out + "/traces", format="parquet", partitioning="hive").to_table()
rows = t.to_pylist()
for d in ("airline", "retail"):
    sub = [r for r in rows if r["domain"] == d]
    train = {{r["trace_id"] for r in sub if r["split"] == "train"}}
    ev = {{r["trace_id"] for r in sub if r["split"] == "eval"}}
    assert train and ev, d
    assert not (train & ev), "splits overlap"
    assert len(train) + len(ev) == len(sub), "duplicate trace ids"
    for r in sub:
        assert 1 <= r["n_intents"] <= 3 and len(r["intents"]) == r["n_intents"]
        assert all(2 <= len(w) <= 6 for w in r["intents"])
        assert r["length"] == sum(len(w) for w in r["intents"])
    print(d, len(sub))
meta = pq.read_metadata(out + "/traces/domain=airline/part-00000.parquet").metadata
assert meta[b"tracer.stage"] == b"traces", meta
assert meta[b"tracer.seed"] == b"20261129"
inputs = json.loads(meta[b"tracer.inputs"])
assert any(k.startswith("graphs/domain=airline/") for k in inputs), inputs
users = pq.read_table(out + "/db/domain=airline/eval/users.parquet")
print("airline_users", users.num_rows)
edges = pq.read_table(out + "/graphs/domain=retail/part-00000.parquet").to_pylist()
print("retail_edges", len(edges), all(e["demonstrated"] for e in edges))
"#,
        out = a.display().to_string()
    ));
    assert!(report.contains("airline 8175"), "{report}");
    assert!(report.contains("retail 2603"), "{report}");
    assert!(report.contains("airline_users 500"), "{report}");
    assert!(report.contains("retail_edges 35 True"), "{report}");
}

#[test]
fn a_change_reruns_exactly_what_is_downstream() {
    let root = project_copy("stale");
    let out = temp_dir("stale-out");
    assert_ok(&tracer(&root, &out, &["run", "traces"]));

    // Config change of the last stage: only traces re-run.
    let cfg = root.join("stages/traces.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("eval_fraction = 0.1", "eval_fraction = 0.2"),
    )
    .unwrap();
    let status = stdout(&tracer(&root, &out, &["status"]));
    assert!(
        status.contains("| traces | airline | stale (config changed) |"),
        "{status}"
    );
    assert!(status.contains("| graphs | airline | fresh |"), "{status}");
    let run = stderr(&tracer(&root, &out, &["run", "traces"]));
    assert!(run.contains("fresh graphs   airline"), "{run}");
    assert!(run.contains("ran   traces   airline"), "{run}");

    // A graph edit of one domain re-runs that domain's graphs and traces only.
    let graph = root.join("graphs/airline.json");
    let mut g: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&graph).unwrap()).unwrap();
    g["edges"].as_array_mut().unwrap().pop();
    std::fs::write(&graph, serde_json::to_string_pretty(&g).unwrap()).unwrap();
    let run = stderr(&tracer(&root, &out, &["run", "traces"]));
    assert!(run.contains("fresh db       airline"), "{run}");
    assert!(run.contains("ran   graphs   airline"), "{run}");
    assert!(run.contains("ran   traces   airline"), "{run}");
    assert!(run.contains("fresh traces   retail"), "{run}");

    // A hand-edited artifact is detected and regenerated.
    let part = out.join("traces/domain=retail/part-00000.parquet");
    std::fs::write(&part, b"not parquet").unwrap();
    let status = stdout(&tracer(&root, &out, &["status"]));
    assert!(
        status.contains("| traces | retail | stale (outputs modified or missing) |"),
        "{status}"
    );
}

#[test]
fn a_failing_stage_keeps_the_previous_artifacts_and_names_the_field() {
    let root = project_copy("fail");
    let out = temp_dir("fail-out");
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "traces", "--domain", "airline"],
    ));
    let before = tree(&out);

    let graph = root.join("graphs/airline.json");
    let text = std::fs::read_to_string(&graph).unwrap();
    std::fs::write(
        &graph,
        text.replacen("\"get_user_details\"", "\"get_user_detail\"", 1),
    )
    .unwrap();
    let o = tracer(&root, &out, &["run", "traces", "--domain", "airline"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    let last = err.lines().last().unwrap_or("");
    assert!(last.starts_with("error: "), "{err}");
    assert!(
        last.contains("airline.json: nodes[0].tool: unknown tool 'get_user_detail'"),
        "{err}"
    );
    assert_eq!(
        tree(&out),
        before,
        "a failed run must not touch finished artifacts"
    );
}

#[test]
fn bad_config_and_unknown_names_are_one_line_errors() {
    let root = project_copy("badcfg");
    let out = temp_dir("badcfg-out");
    std::fs::write(root.join("stages/traces.toml"), "min_intents = \"two\"\n").unwrap();
    let o = tracer(&root, &out, &["run", "traces", "--domain", "airline"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("traces.toml"), "{}", stderr(&o));
    assert!(
        !out.join("traces").exists(),
        "no artifact after a config error"
    );

    let o = tracer(&repo(), &out, &["run", "traces", "--domain", "atlantis"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("unknown domain 'atlantis'"),
        "{}",
        stderr(&o)
    );
    let o = tracer(&repo(), &out, &["run", "nonsense"]);
    assert!(
        stderr(&o).contains("unknown stage 'nonsense'"),
        "{}",
        stderr(&o)
    );

    // A reference database for a domain that does not exist names the field.
    std::fs::write(
        root.join("stages/db.toml"),
        "[eval_db]\natlantis = \"x/db.json\"\n",
    )
    .unwrap();
    let o = tracer(&root, &out, &["run", "db", "--domain", "airline"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("eval_db.atlantis"), "{}", stderr(&o));
    // A configured reference file that is missing is an error naming it, not a silent
    // fallback to the generator.
    std::fs::write(
        root.join("stages/db.toml"),
        "[eval_db]\nairline = \"missing/db.json\"\n",
    )
    .unwrap();
    let o = tracer(&root, &out, &["run", "db", "--domain", "airline"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("missing/db.json"), "{}", stderr(&o));
    assert!(
        !out.join("db").exists(),
        "no artifact after a missing input"
    );
    // tau-bench domains read directories, and say so when handed a single file.
    let file = root.join("db.json");
    std::fs::write(&file, "{\"users\": {}}").unwrap();
    let o = tracer(
        &root,
        &out,
        &[
            "import",
            "tau2",
            "--domain",
            "airline",
            "--from",
            file.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("imports tau-bench directories"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn validate_and_list_and_dag() {
    let o = tracer(&repo(), &temp_dir("validate"), &["validate"]);
    assert_ok(&o);
    let list = stdout(&tracer(&repo(), &temp_dir("list"), &["list"]));
    assert!(
        list.contains("airline (14 tools: 8 read, 6 write)"),
        "{list}"
    );
    assert!(
        list.contains("retail (16 tools: 9 read, 7 write)"),
        "{list}"
    );
    assert!(
        list.contains("telecom (18 tools: 12 read, 6 write)"),
        "{list}"
    );
    let dot = stdout(&tracer(&repo(), &temp_dir("dag"), &["graph"]));
    assert!(dot.contains("\"graphs\" -> \"traces\""), "{dot}");

    // The registry and the files agree both ways.
    let root = project_copy("orphan");
    std::fs::write(root.join("policies/atlantis.md"), "# nothing\n").unwrap();
    let o = tracer(&root, &temp_dir("orphan-out"), &["validate"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no registered domain 'atlantis'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn validate_refuses_what_run_would_a_bad_port_a_missing_eval_db_and_a_missing_stage_file() {
    let root = project_copy("validate-as-run");
    let out = temp_dir("validate-as-run-out");
    let append = |stage: &str, text: &str| {
        let path = root.join(format!("stages/{stage}.toml"));
        let mut cfg = std::fs::read_to_string(&path).unwrap();
        cfg.push('\n');
        cfg.push_str(text);
        std::fs::write(&path, cfg).unwrap();
    };
    append(
        "refined",
        "[roles.refiner]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:99999/v1\"\nmodel = \"m\"\n",
    );
    append("db", "[eval_db]\nairline = \"reference/airline/db.json\"\n");
    std::fs::remove_file(root.join("stages/analysis.toml")).unwrap();
    let o = tracer(&root, &out, &["validate"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    for needle in [
        "'http://127.0.0.1:99999/v1': port '99999' is not in 1..=65535",
        "db.toml: eval_db.airline: ",
        "stages/analysis.toml: missing",
    ] {
        assert!(err.contains(needle), "expected {needle:?} in: {err}");
    }
    // `run` takes the same path: refused before anything is written.
    let o = tracer(&root, &out, &["run", "db", "--domain", "airline"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("eval_db.airline"), "{}", stderr(&o));
    assert!(!out.join("db").exists());
}

#[test]
fn a_misspelt_overrides_directory_is_refused_by_every_command() {
    let root = project_copy("overrides-every-command");
    let out = temp_dir("overrides-every-command-out");
    let tasks = out.join("tasks.json");
    std::fs::write(&tasks, "[]").unwrap();
    let tasks = tasks.display().to_string();
    let export_out = out.join("export.json").display().to_string();
    let rollout_out = out.join("rollout").display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["status"],
        vec!["card"],
        vec!["stats"],
        vec![
            "export",
            "tasks",
            "--domain",
            "airline",
            "--out",
            &export_out,
        ],
        vec![
            "rollout",
            "--domain",
            "airline",
            "--tasks",
            &tasks,
            "--out",
            &rollout_out,
        ],
        vec!["run", "db", "--domain", "airline"],
    ];
    for args in commands {
        let o = tracer_command(&root, &out)
            .env("TRACER_STAGE_OVERRIDES", "configs/no-such-dir")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("configs/no-such-dir") && err.contains("TRACER_STAGE_OVERRIDES"),
            "{args:?}: {err}"
        );
    }
    assert!(!out.join("export.json").exists() && !out.join("rollout").exists());
}

/// `tracer` run to completion within 60 s (killed and failed past it: a FIFO read would
/// block for ever).
fn tracer_within_a_minute(
    root: &std::path::Path,
    out: &std::path::Path,
    env: (&str, &std::path::Path),
    args: &[&str],
) -> std::process::Output {
    let mut child = tracer_command(root, out)
        .env(env.0, env.1)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("tracer {args:?} still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn override_entries_that_are_not_regular_files_are_one_line_errors() {
    let root = project_copy("overrides-not-files");
    let out = temp_dir("overrides-not-files-out");
    let fifo = |p: &std::path::Path| {
        let o = std::process::Command::new("mkfifo")
            .arg(p)
            .output()
            .unwrap();
        assert!(o.status.success(), "mkfifo: {o:?}");
    };
    type Make = Box<dyn Fn(&std::path::Path)>;
    let cases: [(&str, &str, Make); 4] = [
        (
            "dangling",
            "is a dangling symlink",
            Box::new(|p| std::os::unix::fs::symlink("no-such.toml", p).unwrap()),
        ),
        (
            "loop",
            "is a symlink that cannot be followed",
            Box::new(|p| std::os::unix::fs::symlink(p.file_name().unwrap(), p).unwrap()),
        ),
        ("fifo", "is a FIFO, not a regular file", Box::new(fifo)),
        (
            "zero",
            "is a device, not a regular file",
            Box::new(|p| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
        ),
    ];
    for (name, why, make) in cases {
        let dir = root.join("configs").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let entry = dir.join("traces.toml");
        make(&entry);
        for args in [
            &["validate"][..],
            &["status"],
            &["run", "db", "--domain", "airline"],
        ] {
            let o = tracer_within_a_minute(&root, &out, ("TRACER_STAGE_OVERRIDES", &dir), args);
            assert_eq!(o.status.code(), Some(1), "{name} {args:?}: {}", stderr(&o));
            let err = stderr(&o);
            let needle = format!("{}: {why}", entry.display());
            assert!(
                err.contains(&needle),
                "{name} {args:?}: {needle:?} in {err}"
            );
            if args[0] != "validate" {
                assert_eq!(err.trim().lines().count(), 1, "{name} {args:?}: {err}");
            } else {
                assert_eq!(err.matches("traces.toml").count(), 1, "{name}: {err}");
            }
        }
        assert!(!out.join("db").exists(), "{name}: nothing ran");
    }
}

/// `tracer status | head -1` (and `stats`, `list`, ...): a reader that closes the pipe early
/// is no error; the command finishes quietly with exit 0 instead of panicking (101).
#[test]
fn printing_commands_exit_0_when_the_reader_goes_away() {
    let out = temp_dir("epipe");
    assert_ok(&tracer(
        &repo(),
        &out,
        &["run", "db", "--domain", "airline"],
    ));
    let commands: [&[&str]; 6] = [
        &["status"],
        &["stats", "--domain", "airline"],
        &["list"],
        &["graph"],
        &["graphs", "stats"],
        &["status", "--domain", "airline"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = tracer_command(&repo(), &out)
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
}

/// `tracer stats` where no stage ran says so (one line naming the output, exit 1) instead
/// of printing tables of dashes.
#[test]
fn stats_of_an_output_where_nothing_ran_is_a_one_line_error() {
    let out = temp_dir("stats-empty");
    let o = tracer(&repo(), &out, &["stats"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("{}: nothing to report", out.display())),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    // Another domain's run does not count for this one.
    assert_ok(&tracer(
        &repo(),
        &out,
        &["run", "db", "--domain", "airline"],
    ));
    assert_ok(&tracer(&repo(), &out, &["stats", "--domain", "airline"]));
    let o = tracer(&repo(), &out, &["stats", "--domain", "retail"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

/// `--help` says what the user needs: `run` lists the stages, `--domain` is explained
/// wherever it is taken, `stats` names its tables.
#[test]
fn help_lists_the_stages_and_explains_domain() {
    let help = |args: &[&str]| stdout(&tracer(&repo(), &temp_dir("help"), args));
    let run = help(&["run", "--help"]);
    assert!(
        run.contains("Stages, in the order they run: db, ") && run.contains("trajectories"),
        "{run}"
    );
    for cmd in ["status", "stats", "quality"] {
        let text = help(&[cmd, "--help"]);
        let line = text
            .lines()
            .skip_while(|l| !l.contains("--domain"))
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(line.contains("Only these domains"), "{cmd}: {text}");
    }
    assert!(help(&["stats", "--help"]).contains("funnel"));
}
