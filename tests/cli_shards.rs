//! `tracer run <stage> --shard i/N` and `tracer merge`: shards run side by side as separate
//! processes, each on the items it owns; the merge (explicit, or `tracer run` finding every
//! part) writes exactly what one process writes; a bad part set or a bad flag is one line
//! and merges nothing.

use crate::common::*;
use std::path::Path;
use std::process::Output;

/// A project copy with one domain's small grounding caps.
fn small_project(label: &str) -> TempDir {
    let root = project_copy(label);
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 30\nmax_eval = 10\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n",
    )
    .unwrap();
    root
}

/// The output root `from` without the stages listed (to be produced by shards instead).
fn copy_without(from: &Path, to: &Path, drop: &[&str]) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if e.path().is_dir() && !drop.contains(&name.as_str()) && !name.starts_with('.') {
            copy_dir(&e.path(), &to.join(&name));
        }
    }
}

/// Run every shard of `stage` at once, as separate processes (they must not serialise or
/// refuse each other on the output lock).
fn run_shards(root: &Path, out: &Path, stage: &str, count: u32) {
    let children: Vec<_> = (0..count)
        .map(|i| {
            tracer_command(root, out)
                .args([
                    "run",
                    stage,
                    "--domain",
                    "airline",
                    "--shard",
                    &format!("{i}/{count}"),
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert_ok(&o);
        assert!(stderr(&o).contains("[shard "), "{}", stderr(&o));
    }
}

#[track_caller]
fn assert_one_line_error(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(needle), "expected '{needle}' in: {err}");
}

#[test]
fn shards_merge_into_exactly_what_one_process_writes() {
    let root = small_project("shards");
    let single = temp_dir("shards-single");
    assert_ok(&tracer(
        &root,
        &single,
        &["run", "rollouts", "--domain", "airline"],
    ));

    let sharded = temp_dir("shards-sharded");
    copy_without(&single, &sharded, &["tasks", "rollouts"]);
    // tasks: three shards at once, then `tracer merge`.
    run_shards(&root, &sharded, "tasks", 3);
    let parts = sharded.join(".shards/tasks/domain=airline");
    let status = stdout(&tracer(&root, &sharded, &["status", "--domain", "airline"]));
    assert!(
        status.contains("| tasks | airline | 3 of 3 parts done; `tracer merge tasks`"),
        "{status}"
    );
    // The parts split the verified tasks: disjoint, and together every one of them.
    let split = python(&format!(
        r#"
import pyarrow.parquet as pq
parts = [set(pq.read_table(f"{parts}/part-{{i}}-of-3/part-00000.parquet").column("task_id").to_pylist()) for i in range(3)]
whole = pq.read_table("{single}/tasks/domain=airline/part-00000.parquet").column("task_id").to_pylist()
assert all(p for p in parts), [len(p) for p in parts]
assert sum(len(p) for p in parts) == len(set().union(*parts)) == len(whole), ([len(p) for p in parts], len(whole))
assert set().union(*parts) == set(whole)
print(len(whole), [len(p) for p in parts])
"#,
        parts = parts.display(),
        single = single.display()
    ));
    assert!(!split.is_empty());
    let o = tracer(&root, &sharded, &["merge", "tasks", "--domain", "airline"]);
    assert_ok(&o);
    assert!(
        stderr(&o).contains("merged 3 shard parts"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        tree(&single.join("tasks")),
        tree(&sharded.join("tasks")),
        "merged tasks (Parquet, rejects and manifest) must equal one process's"
    );
    assert!(!parts.exists(), "parts are removed once merged");

    // rollouts: two shards, then `tracer run` finds both parts and merges them.
    run_shards(&root, &sharded, "rollouts", 2);
    let o = tracer(&root, &sharded, &["run", "rollouts", "--domain", "airline"]);
    assert_ok(&o);
    assert!(
        stderr(&o).contains("merged 2 shard parts"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        tree(&single.join("rollouts")),
        tree(&sharded.join("rollouts")),
        "merged rollouts must equal one process's"
    );
    let status = stdout(&tracer(&root, &sharded, &["status", "--domain", "airline"]));
    assert!(
        status.contains("| rollouts | airline | fresh |"),
        "{status}"
    );
    assert!(!status.contains("shard parts"), "{status}");
    // A shard of a stage whose merged output is fresh has nothing to do.
    let o = tracer(
        &root,
        &sharded,
        &["run", "rollouts", "--domain", "airline", "--shard", "1/2"],
    );
    assert_ok(&o);
    assert!(
        stderr(&o).contains("merged output is fresh"),
        "{}",
        stderr(&o)
    );
    assert!(!sharded.join(".shards/rollouts/domain=airline").exists());
    // Episodes of the merged artifact read back, one per task, in task order.
    let report = python(&format!(
        r#"
import pyarrow.parquet as pq
ro = pq.read_table("{d}/rollouts/domain=airline/part-00000.parquet").to_pylist()
tasks = [t["task_id"] for t in pq.read_table("{d}/tasks/domain=airline/part-00000.parquet").to_pylist() if t["split"] == "train"]
assert [r["task_id"] for r in ro] == tasks, "episodes in task order"
print(len(ro))
"#,
        d = sharded.display()
    ));
    assert!(report.trim().parse::<usize>().unwrap() > 0, "{report}");
}

#[test]
fn bad_flags_and_bad_part_sets_are_one_line_errors_and_merge_nothing() {
    let root = small_project("shard-errors");
    let out = temp_dir("shard-errors-out");
    let run = |args: &[&str]| tracer(&root, &out, args);
    for (flag, needle) in [
        (
            "3/3",
            "--shard '3/3': the index must be below the count (0..=2)",
        ),
        ("x", "--shard 'x': expected i/N"),
        ("0/0", "--shard '0/0': the count must be 1..="),
    ] {
        let o = run(&["run", "tasks", "--domain", "airline", "--shard", flag]);
        assert_one_line_error(&o, needle);
    }
    let o = run(&["run", "traces", "--domain", "airline", "--shard", "0/2"]);
    assert_one_line_error(&o, "stage 'traces' is not item-parallel");
    let o = run(&["merge", "emotions", "--domain", "airline"]);
    assert_one_line_error(&o, "stage 'emotions' is not item-parallel");
    // Inputs not fresh: the shard names the stage to run first and writes nothing.
    let o = run(&["run", "tasks", "--domain", "airline", "--shard", "0/3"]);
    assert_one_line_error(
        &o,
        "input 'emotions' is not fresh (never run); run `tracer run emotions`",
    );
    assert!(!out.join(".shards/tasks/domain=airline").exists());

    assert_ok(&run(&["run", "tasks", "--upstream", "--domain", "airline"]));
    assert!(out.join("emotions/domain=airline/_manifest.json").exists());
    assert!(
        !out.join("tasks").exists(),
        "--upstream stops before the stage"
    );
    for i in ["0/3", "1/3"] {
        assert_ok(&run(&["run", "tasks", "--domain", "airline", "--shard", i]));
    }
    let parts = out.join(".shards/tasks/domain=airline");
    let status = stdout(&run(&["status", "--domain", "airline"]));
    assert!(
        status.contains("| tasks | airline | 2 of 3 parts done (missing 2/3) |"),
        "{status}"
    );
    let merge = || run(&["merge", "tasks", "--domain", "airline"]);
    assert_one_line_error(&merge(), "missing shard part(s) 2/3 of 3");
    assert!(!out.join("tasks").exists(), "nothing merged");

    // A copied part: its manifest says it is another shard.
    copy_dir(&parts.join("part-1-of-3"), &parts.join("part-2-of-3"));
    assert_one_line_error(&merge(), "duplicate part 1/3");
    std::fs::remove_dir_all(parts.join("part-2-of-3")).unwrap();
    assert_ok(&run(&[
        "run", "tasks", "--domain", "airline", "--shard", "2/3",
    ]));

    // A part of another shard count.
    copy_dir(&parts.join("part-0-of-3"), &parts.join("part-0-of-2"));
    assert_one_line_error(&merge(), "parts of different shard counts (2 and 3)");
    std::fs::remove_dir_all(parts.join("part-0-of-2")).unwrap();

    // A part made by another run (its fingerprint differs).
    let manifest = parts.join("part-1-of-3/_manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&text).unwrap();
    m["fingerprint"] = "0123456789abcdef".into();
    std::fs::write(&manifest, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    assert_one_line_error(
        &merge(),
        "foreign part, made with other code, config, seed or inputs",
    );
    std::fs::write(&manifest, &text).unwrap();

    // A part whose file changed after it was written.
    let file = parts.join("part-0-of-3/part-00000.parquet");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 1]).unwrap();
    assert_one_line_error(&merge(), "do not match its manifest");
    std::fs::write(&file, &bytes).unwrap();

    // Something that is not a part at all.
    std::fs::write(parts.join("notes.txt"), "x").unwrap();
    assert_one_line_error(&merge(), "not a shard part");
    std::fs::remove_file(parts.join("notes.txt")).unwrap();
    assert!(
        !out.join("tasks").exists(),
        "nothing merged after any refusal"
    );

    // A shard run while an ordinary writer holds the output is refused, and vice versa the
    // merge is refused while a shard holds it shared (checked in pipeline::lock's tests).
    let lock = tracer::pipeline::OutputLock::acquire(&out, "tracer run db").unwrap();
    let o = run(&["run", "tasks", "--domain", "airline", "--shard", "0/3"]);
    assert_one_line_error(&o, "in use by another tracer (pid");
    drop(lock);

    assert_ok(&merge());
    assert!(out.join("tasks/domain=airline/part-00000.parquet").exists());
    let status = stdout(&run(&["status", "--domain", "airline"]));
    assert!(status.contains("| tasks | airline | fresh |"), "{status}");
}

#[test]
fn shard_parts_beside_a_fresh_stage_are_cleared_instead_of_blocking_the_merge() {
    let root = small_project("shard-stale-parts");
    let out = temp_dir("shard-stale-parts-out");
    let run = |args: &[&str]| tracer(&root, &out, args);
    let parts = out.join(".shards/tasks/domain=airline");
    assert_ok(&run(&["run", "tasks", "--upstream", "--domain", "airline"]));
    // Half a sharded run, then one process finishes the stage: the part is stale.
    assert_ok(&run(&[
        "run", "tasks", "--domain", "airline", "--shard", "0/2",
    ]));
    assert!(parts.join("part-0-of-2").exists());
    let o = run(&["run", "tasks", "--domain", "airline"]);
    assert_ok(&o);
    assert!(!parts.exists(), "{}", stderr(&o));
    // A forced shard beside the fresh output: the merge clears it (it used to fail on the
    // missing part 1/2 forever, while the shard said "nothing to do").
    assert_ok(&run(&[
        "run", "tasks", "--domain", "airline", "--shard", "0/2", "--force",
    ]));
    assert!(parts.join("part-0-of-2").exists());
    let o = run(&["merge", "tasks", "--domain", "airline"]);
    assert_ok(&o);
    assert!(stderr(&o).contains("stale shard part"), "{}", stderr(&o));
    assert!(!parts.exists());
    let status = stdout(&run(&["status", "--domain", "airline"]));
    assert!(status.contains("| tasks | airline | fresh |"), "{status}");
    assert!(!status.contains("shard parts"), "{status}");
}
