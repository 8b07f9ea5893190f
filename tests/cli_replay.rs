//! `tracer import | export | replay` against hand-written tau-bench-format fixtures.

use crate::common::*;
use serde_json::Value;

fn fixture(domain: &str) -> String {
    repo()
        .join("tests/fixtures/tau_bench")
        .join(domain)
        .display()
        .to_string()
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn replay_audits_every_call_against_an_imported_database() {
    let dir = temp_dir("replay");
    let out = dir.join("replay.jsonl");
    let tasks = repo()
        .join("tests/fixtures/replay/airline_tasks.json")
        .display()
        .to_string();
    let args = [
        "replay",
        "--domain",
        "airline",
        "--db",
        &fixture("airline"),
        "--tasks",
        &tasks,
        "--out",
    ];
    let o = tracer(
        &repo(),
        &dir,
        &[&args[..], &[out.to_str().unwrap()]].concat(),
    );
    assert_ok(&o);
    assert!(
        stderr(&o)
            .contains("replayed 3 task(s), 6 call(s): 1 fully succeeded, 2 with a failing call"),
        "{}",
        stderr(&o)
    );

    let rows = lines(&out);
    let calls: Vec<&Value> = rows.iter().filter(|r| r["type"] == "call").collect();
    let tasks: Vec<&Value> = rows.iter().filter(|r| r["type"] == "task").collect();
    assert_eq!((calls.len(), tasks.len()), (6, 3));
    assert_eq!(tasks[0]["all_succeeded"], true);
    assert_eq!(tasks[1]["first_failure"], 1);
    assert_eq!(calls[3]["output"], "Error: reservation not found");
    assert_eq!(calls[3]["is_error"], true);
    // A wrong argument type is an error observation, not a crash.
    assert_eq!(tasks[2]["first_failure"], 1);
    assert!(
        calls[5]["output"].as_str().unwrap().starts_with("Error: "),
        "{}",
        calls[5]
    );

    // Reads leave the state as imported; a cancellation changes it.
    let imported = stdout(&tracer(
        &repo(),
        &dir,
        &[
            "import",
            "tau-bench",
            "--domain",
            "airline",
            "--from",
            &fixture("airline"),
        ],
    ));
    let read_only = tasks[2]["state_hash"].as_str().unwrap();
    assert!(
        imported.contains(&format!("state {read_only}")),
        "{imported} vs {read_only}"
    );
    assert_ne!(tasks[0]["state_hash"], tasks[2]["state_hash"]);

    // Replay is deterministic.
    let out2 = dir.join("again.jsonl");
    assert_ok(&tracer(
        &repo(),
        &dir,
        &[&args[..], &[out2.to_str().unwrap()]].concat(),
    ));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&out2).unwrap());
}

#[test]
fn tau_bench_databases_round_trip_through_import_and_export() {
    let cases: [(&str, &[&str]); 3] = [
        ("airline", &["users", "flights", "reservations"]),
        ("retail", &["users", "products", "orders"]),
        (
            "telecom",
            &[
                "customers",
                "billing",
                "services",
                "devices",
                "support_tickets",
            ],
        ),
    ];
    for (domain, stems) in cases {
        let dir = temp_dir(&format!("roundtrip-{domain}"));
        let out = dir.join("export");
        let o = tracer(
            &repo(),
            &dir,
            &[
                "export",
                "db",
                "--domain",
                domain,
                "--format",
                "tau-bench",
                "--from",
                &fixture(domain),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_ok(&o);
        for stem in stems {
            let read = |p: std::path::PathBuf| -> Value {
                serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
            };
            let original = read(
                repo()
                    .join("tests/fixtures/tau_bench")
                    .join(domain)
                    .join(format!("{stem}.json")),
            );
            let exported = read(out.join(format!("{stem}.json")));
            assert_eq!(original, exported, "{domain}/{stem}.json must round-trip");
        }
    }
}

#[test]
fn the_generated_database_exports_and_reimports_at_paper_scale() {
    let dir = temp_dir("genexport");
    let out = dir.join("airline");
    assert_ok(&tracer(
        &repo(),
        &dir,
        &[
            "export",
            "db",
            "--domain",
            "airline",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let o = tracer(
        &repo(),
        &dir,
        &[
            "import",
            "tau-bench",
            "--domain",
            "airline",
            "--from",
            out.to_str().unwrap(),
            "--out",
            dir.join("imported").to_str().unwrap(),
        ],
    );
    assert_ok(&o);
    assert!(
        stdout(&o).contains("users 500") && stdout(&o).contains("reservations 2000"),
        "{}",
        stdout(&o)
    );
    let n = python(&format!(
        "import pyarrow.parquet as pq; print(pq.read_table({:?}).num_rows)",
        dir.join("imported/flights.parquet").display().to_string()
    ));
    assert_eq!(n.trim(), "300");

    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    for f in ["users", "flights", "reservations"] {
        std::fs::copy(out.join(format!("{f}.json")), bad.join(format!("{f}.json"))).unwrap();
    }
    std::fs::write(
        bad.join("flights.json"),
        "{\"HAT001\": {\"flight_number\": 5}}",
    )
    .unwrap();
    let o = tracer(
        &repo(),
        &dir,
        &[
            "import",
            "tau-bench",
            "--domain",
            "airline",
            "--from",
            bad.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("flights.json") && stderr(&o).contains("HAT001"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_tau_bench_task_file_rolls_out_against_an_imported_database() {
    let dir = temp_dir("rollout-file");
    let out = dir.join("run");
    let tasks = repo()
        .join("tests/fixtures/tau_bench/retail/tasks.json")
        .display()
        .to_string();
    let o = tracer(
        &repo(),
        &dir,
        &[
            "rollout",
            "--domain",
            "retail",
            "--db",
            &fixture("retail"),
            "--tasks",
            &tasks,
            "--trials",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_ok(&o);
    assert!(stdout(&o).contains("| retail | 3 |"), "{}", stdout(&o));
    let rep: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(rep["tasks"], 3);
    assert_eq!(rep["pass_hat"].as_array().unwrap().len(), 2);
    let n = python(&format!(
        "import pyarrow.parquet as pq; t = pq.read_table({:?}).to_pylist(); print(len(t), sorted({{r['trial'] for r in t}}))",
        out.join("rollouts.parquet").display().to_string()
    ));
    assert_eq!(n.trim(), "6 [0, 1]");
}

#[test]
fn telecom_task_files_replay_and_roll_out_against_an_imported_database() {
    let dir = temp_dir("telecom-tasks");
    let tasks = repo()
        .join("tests/fixtures/tau_bench/telecom/tasks.json")
        .display()
        .to_string();
    let out = dir.join("replay.jsonl");
    let o = tracer(
        &repo(),
        &dir,
        &[
            "replay",
            "--domain",
            "telecom",
            "--db",
            &fixture("telecom"),
            "--tasks",
            &tasks,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_ok(&o);
    assert!(
        stderr(&o).contains("replayed 3 task(s), 13 call(s): 3 fully succeeded"),
        "{}",
        stderr(&o)
    );
    let rows = lines(&out);
    let outputs: Vec<&str> = rows
        .iter()
        .filter(|r| r["type"] == "call")
        .map(|r| r["output"].as_str().unwrap())
        .collect();
    // The ticket id the reference mints (a count of the tickets, three digits wide) is the
    // one a later gold action names.
    assert_eq!(
        outputs[3],
        "Success: Created support ticket TICKET003 for customer ana_reyes_1001"
    );
    assert!(
        outputs[7].contains(r#""current_balance": "0.00""#),
        "{}",
        outputs[7]
    );
    assert_eq!(
        outputs[12],
        "Success: Added service 'Mobile Plus' to customer cy_dubois_3003"
    );

    let run = dir.join("run");
    let o = tracer(
        &repo(),
        &dir,
        &[
            "rollout",
            "--domain",
            "telecom",
            "--db",
            &fixture("telecom"),
            "--tasks",
            &tasks,
            "--out",
            run.to_str().unwrap(),
        ],
    );
    assert_ok(&o);
    let rep: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("report.json")).unwrap()).unwrap();
    assert_eq!(rep["tasks"], 3, "{rep}");
}

/// `--out` names a regular file or a new path; a symlink (not followed), a FIFO, a directory
/// is refused before anything is written, and left as it was.
#[test]
fn out_refuses_links_fifos_and_directories_and_still_replaces_a_regular_file() {
    use std::os::unix::fs::FileTypeExt;
    let dir = temp_dir("special-out");
    let tasks = repo()
        .join("tests/fixtures/replay/airline_tasks.json")
        .display()
        .to_string();
    let airline = fixture("airline");
    let replay = |out: &std::path::Path| {
        tracer(
            &repo(),
            &dir,
            &[
                "replay",
                "--domain",
                "airline",
                "--db",
                &airline,
                "--tasks",
                &tasks,
                "--out",
                out.to_str().unwrap(),
            ],
        )
    };
    let export = |out: &std::path::Path| {
        tracer(
            &repo(),
            &dir,
            &[
                "export",
                "tasks",
                "--domain",
                "airline",
                "--out",
                out.to_str().unwrap(),
            ],
        )
    };
    let refused = |o: &std::process::Output, path: &std::path::Path, what: &str| {
        assert!(!o.status.success(), "{path:?} accepted");
        let err = stderr(o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("{}: is {what}", path.display())),
            "{err}"
        );
    };

    let target = dir.join("target.txt");
    std::fs::write(&target, b"keep me").unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = dir.join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let subdir = dir.join("a-directory");
    std::fs::create_dir_all(&subdir).unwrap();

    for run in [
        &replay as &dyn Fn(&std::path::Path) -> std::process::Output,
        &export,
    ] {
        refused(&run(&link), &link, "a symlink");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
        refused(&run(&fifo), &fifo, "a FIFO");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        refused(&run(&subdir), &subdir, "a directory");
        assert_eq!(std::fs::read_dir(&subdir).unwrap().count(), 0);
    }
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");

    // A directory-valued --out refuses a symlink too (files would land where it points).
    let dir_link = dir.join("dir-link");
    std::os::unix::fs::symlink(&subdir, &dir_link).unwrap();
    let o = tracer(
        &repo(),
        &dir,
        &[
            "export",
            "db",
            "--domain",
            "airline",
            "--from",
            &airline,
            "--out",
            dir_link.to_str().unwrap(),
        ],
    );
    refused(&o, &dir_link, "a symlink");
    assert_eq!(std::fs::read_dir(&subdir).unwrap().count(), 0);

    // A regular file is still replaced, atomically.
    let regular = dir.join("regular.jsonl");
    std::fs::write(&regular, b"old contents").unwrap();
    assert_ok(&replay(&regular));
    let text = std::fs::read_to_string(&regular).unwrap();
    assert!(text.starts_with('{') && text.lines().count() == 9, "{text}");
}

#[test]
fn task_files_with_emotion_labels_outside_the_taxonomy_are_refused() {
    let db = repo().join("tests/fixtures/tau_bench/retail");
    let dir = temp_dir("labels-outside-taxonomy");
    let tasks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(db.join("tasks.json")).unwrap()).unwrap();
    let first = tasks[0].clone();
    for (field, value, needle) in [
        (
            "emotion_leaf",
            "glee",
            "task [0]: emotion_leaf 'glee' is not in the taxonomy",
        ),
        (
            "dimension_urgency",
            "urgentish",
            "task [0]: dimension_urgency 'urgentish' is not in the taxonomy",
        ),
    ] {
        let mut task = first.clone();
        task["emotion_family"] = "fear".into();
        task["emotion_leaf"] = "anxiety".into();
        task[field] = value.into();
        let file = dir.join(format!("{field}.json"));
        std::fs::write(
            &file,
            serde_json::to_vec(&serde_json::json!([task])).unwrap(),
        )
        .unwrap();
        let out = dir.join(format!("out-{field}"));
        let o = tracer(
            &repo(),
            &dir,
            &[
                "rollout",
                "--domain",
                "retail",
                "--db",
                &db.display().to_string(),
                "--tasks",
                &file.display().to_string(),
                "--out",
                &out.display().to_string(),
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("{field}.json: {needle}")), "{err}");
        assert!(!out.exists(), "nothing written");
    }
    // A family that is not the emotion's is read as given, with a warning naming the task;
    // its neighbour with agreeing labels draws none.
    let mut agreeing = first.clone();
    agreeing["emotion_family"] = "fear".into();
    agreeing["emotion_leaf"] = "anxiety".into();
    let mut task = first;
    task["user_id"] = "someone_1234".into();
    task["emotion_family"] = "anger".into();
    task["emotion_leaf"] = "anxiety".into();
    let file = dir.join("family.json");
    std::fs::write(
        &file,
        serde_json::to_vec(&serde_json::json!([agreeing, task])).unwrap(),
    )
    .unwrap();
    let out = dir.join("replay.jsonl");
    let o = tracer(
        &repo(),
        &dir,
        &[
            "replay",
            "--domain",
            "retail",
            "--db",
            &db.display().to_string(),
            "--tasks",
            &file.display().to_string(),
            "--out",
            &out.display().to_string(),
        ],
    );
    assert_ok(&o);
    let warnings: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .map(str::to_string)
        .collect();
    assert_eq!(
        warnings,
        [format!(
            "warning: {}: task [1] (user someone_1234): emotion_leaf 'anxiety' belongs to \
             family 'fear', not emotion_family 'anger'; both labels kept as given",
            file.display()
        )]
    );
    assert_eq!(
        lines(&out).iter().filter(|r| r["type"] == "task").count(),
        2
    );
}

/// The authors' own airline test tasks (an excerpt of tau-emotion-bench's `tasks_test.py`,
/// converted by `scripts/reference/reference.py tasks`): two of the three carry an
/// `emotion_leaf` of another family than their `emotion_family`, as 10 of their 70 do. The
/// file replays and rolls out, one warning per such task, the labels kept as given.
#[test]
fn the_authors_airline_test_tasks_import_with_a_warning_per_disagreeing_label() {
    let dir = temp_dir("teb-airline-test");
    let tasks = repo().join("tests/fixtures/replay/tau_emotion_bench_airline_test_excerpt.json");
    let out = dir.join("replay.jsonl");
    let o = tracer(
        &repo(),
        &dir,
        &[
            "replay",
            "--domain",
            "airline",
            "--db",
            &fixture("airline"),
            "--tasks",
            tasks.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_ok(&o);
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(
        warnings[0].ends_with(
            "task [1] (user james_kovacs_6640): emotion_leaf 'excitement' belongs to family \
             'enjoyment', not emotion_family 'fear'; both labels kept as given"
        ),
        "{err}"
    );
    assert!(
        warnings[1].contains("task [2] (user daiki_patel_1917): emotion_leaf 'pride'"),
        "{err}"
    );
    assert!(err.contains("replayed 3 task(s), 16 call(s)"), "{err}");
    assert_eq!(
        lines(&out).iter().filter(|r| r["type"] == "task").count(),
        3
    );
}

/// ToolOrchestra's bank `db.json` (an excerpt: two clients' rows, unchanged) imports: its UK
/// beneficiary's sort code `routing_number: "20-19-18"` is no date, and comes back out as
/// it went in.
#[test]
fn the_references_bank_database_imports_with_its_uk_sort_codes() {
    let dir = temp_dir("import-tau2-bank");
    let fixture = repo().join("tests/fixtures/tau2/bank/db.json");
    let out = dir.join("out");
    let o = tracer(
        &repo(),
        &dir,
        &[
            "import",
            "tau2",
            "--domain",
            "bank",
            "--from",
            fixture.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_ok(&o);
    assert!(
        stdout(&o).contains("imported bank (clients 2, transactions 2, loans 2, beneficiaries 2)"),
        "{}",
        stdout(&o)
    );
    let exported: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("tau_bench/beneficiaries.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        exported["BENUK001"]["bank_details"]["routing_number"],
        "20-19-18"
    );
    // A date field still holds only dates.
    let mut bad: Value = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    bad["loans"]
        .as_object_mut()
        .unwrap()
        .values_mut()
        .next()
        .unwrap()["payment_schedule"][0]["due_date"] = "2025-02-30".into();
    let file = dir.join("bad.json");
    std::fs::write(&file, serde_json::to_vec(&bad).unwrap()).unwrap();
    let o = tracer(
        &repo(),
        &dir,
        &[
            "import",
            "tau2",
            "--domain",
            "bank",
            "--from",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(".payment_schedule[0].due_date: '2025-02-30' is not a valid date"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn import_tau2_refuses_unknown_tables_foreign_row_keys_and_impossible_dates() {
    let fixture = repo().join("tests/fixtures/tau2/school/db.json");
    let dir = temp_dir("import-tau2-strict");
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    let student = good["students"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut unknown = good.clone();
    unknown["studnets"] = serde_json::json!({});
    let mut foreign = good.clone();
    let row = foreign["students"][&student].clone();
    foreign["students"]
        .as_object_mut()
        .unwrap()
        .insert("S9ZZZZZ".into(), row);
    let mut date = good.clone();
    date["students"][&student]["dob"] = "03-02-30".into();
    for (name, db, needle) in [
        (
            "unknown",
            unknown,
            "table 'studnets' is not a table of this domain".to_string(),
        ),
        (
            "foreign",
            foreign,
            format!(
                "students['S9ZZZZZ']: the row's key differs from its student_id (\"{student}\")"
            ),
        ),
        (
            "date",
            date,
            format!("students['{student}'].dob: '03-02-30' is not a valid date"),
        ),
    ] {
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, serde_json::to_vec(&db).unwrap()).unwrap();
        let out = dir.join(format!("out-{name}"));
        let o = tracer(
            &repo(),
            &dir,
            &[
                "import",
                "tau2",
                "--domain",
                "school",
                "--from",
                file.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("{name}.json: {needle}")),
            "{name}: {err}"
        );
        assert!(!out.exists(), "{name}: nothing written");
    }
    // The fixture itself imports.
    assert_ok(&tracer(
        &repo(),
        &dir,
        &[
            "import",
            "tau2",
            "--domain",
            "school",
            "--from",
            fixture.to_str().unwrap(),
        ],
    ));
}
