//! `make tasks` / `make trajectories` / `make eval` end to end with the offline roles:
//! verified tasks that replay, a reward mix, reward-1 trajectories, an SFT dataset that
//! Hugging Face `datasets` loads, Pass^k, determinism, and kill-and-resume.

use crate::common::*;
use std::path::Path;

#[test]
fn trajectories_run_offline_and_are_byte_identical() {
    let root = small_project("traj");
    let (a, b) = (temp_dir("traj-a"), temp_dir("traj-b"));
    assert_ok(&tracer(&root, &a, &["run", "trajectories"]));
    assert_ok(&tracer(&root, &b, &["run", "trajectories"]));
    for stage in ["grounded", "refined", "tasks", "rollouts", "trajectories"] {
        assert_eq!(
            tree(&a.join(stage)),
            tree(&b.join(stage)),
            "{stage} must be deterministic"
        );
    }
    let stats = stdout(&tracer(&root, &a, &["stats"]));
    assert!(
        stats.contains("| airline | train |") && stats.contains("| retail | eval |"),
        "{stats}"
    );
    assert!(stats.contains("## Rollouts"), "{stats}");

    let report = python(&format!(
        r#"
import json, pyarrow.dataset as ds
out = {out:?}
ro = ds.dataset(out + "/rollouts", format="parquet", partitioning="hive").to_table().to_pylist()
rewards = {{r["reward"] for r in ro}}
assert rewards == {{1, 0, -1}}, rewards
tr = ds.dataset(out + "/trajectories", format="parquet", partitioning="hive").to_table().to_pylist()
assert tr and all(r["reward"] == 1 and r["error"] is None for r in tr)
for r in ro[:50]:
    msgs = json.loads(r["messages"])
    assert msgs[0]["role"] == "system" and msgs[1]["content"] == "Hi! How can I help you today?"
    calls = [m for m in msgs if m.get("tool_calls")]
    results = [m for m in msgs if m["role"] == "tool"]
    assert sum(len(m["tool_calls"]) for m in calls) == len(results) == r["tool_calls"]
print("rollouts", len(ro), "trajectories", len(tr))
"#,
        out = a.display().to_string()
    ));
    assert!(report.contains("trajectories"), "{report}");
}

#[test]
fn the_sft_export_loads_with_hugging_face_datasets() {
    let root = small_project("sft");
    let out = temp_dir("sft-out");
    // Offline rows are test data: by default they are withheld from the SFT files.
    let run = tracer(&root, &out, &["run", "trajectories", "--domain", "airline"]);
    assert_ok(&run);
    assert!(
        stderr(&run).contains("scripted rows withheld")
            || stdout(&run).contains("scripted rows withheld"),
        "{}",
        stdout(&run)
    );
    let withheld =
        std::fs::read_to_string(out.join("trajectories/domain=airline/_sft.jsonl")).unwrap();
    assert_eq!(
        withheld, "",
        "no scripted row is exported without export_scripted"
    );
    let mut config = std::fs::read_to_string(root.join("stages/trajectories.toml")).unwrap();
    config = config.replace("export_scripted = false", "export_scripted = true");
    std::fs::write(root.join("stages/trajectories.toml"), config).unwrap();
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "trajectories", "--domain", "airline"],
    ));
    let dir = out.join("trajectories/domain=airline");
    let report = python(&format!(
        r#"
import json, datasets, pyarrow.parquet as pq
d = {dir:?}
n = pq.read_table(d + "/part-00000.parquet").num_rows
js = datasets.load_dataset("json", data_files=d + "/_sft.jsonl", split="train")
pa = datasets.load_dataset("parquet", data_files=d + "/_sft.parquet", split="train")
assert len(js) == len(pa) == n > 0, (len(js), len(pa), n)
row = js[0]
assert set(["messages", "tools"]) <= set(js.column_names)
roles = [m["role"] for m in row["messages"]]
assert roles[0] == "system" and "tool" in roles and "user" in roles, roles
call = next(m for m in row["messages"] if m["tool_calls"])["tool_calls"][0]
assert call["type"] == "function" and isinstance(call["function"]["arguments"], dict), call
assert {{t["function"]["name"] for t in row["tools"]}} >= {{"book_reservation", "cancel_reservation"}}
prow = pa[0]
assert isinstance(json.loads(prow["tools"]), list)
pcall = next(m for m in prow["messages"] if m["tool_calls"])["tool_calls"][0]
assert isinstance(json.loads(pcall["function"]["arguments"]), dict)
assert any(m.get("reasoning_content") for m in row["messages"])
# Every row names its models and says it is scripted; no reasoning names a "reference".
assert all(r["scripted"] and r["agent_model"].startswith("scripted:") and r["user_model"] for r in js), js[0]
assert all(r["scripted"] for r in pa)
for r in js:
    for m in r["messages"]:
        assert "reference" not in (m.get("reasoning_content") or "").lower(), m
# Kept rows ended with the user's stop, and the rejects name why the others were dropped.
tr = pq.read_table(d + "/part-00000.parquet").to_pylist()
assert all(r["termination"] == "user_stop" for r in tr), {{r["termination"] for r in tr}}
rej = pq.read_table(d + "/_rejects.parquet").to_pylist()
assert all(r["stage"] == "trajectories" and r["reason_kind"] == "unclean" and r["rule"] for r in rej)
print("sft rows", n, "unclean", len(rej))
"#,
        dir = dir.display().to_string()
    ));
    assert!(report.contains("sft rows"), "{report}");
}

#[test]
fn every_verified_task_replays_through_its_tau_bench_export() {
    let root = small_project("export");
    let out = temp_dir("export-out");
    assert_ok(&tracer(&root, &out, &["run", "tasks"]));
    for domain in ["airline", "retail"] {
        let file = out.join(format!("{domain}_tasks.json"));
        let f = file.to_str().unwrap();
        assert_ok(&tracer(
            &root,
            &out,
            &[
                "export",
                "tasks",
                "--domain",
                domain,
                "--format",
                "tau-bench",
                "--out",
                f,
            ],
        ));
        let tasks: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert!(!tasks.is_empty(), "{domain}: no verified tasks");
        let instruction = tasks[0]["instruction"].as_str().unwrap();
        assert!(instruction.len() > 40, "{instruction}");
        // The generated database exported in tau-bench format is what the tasks run on.
        let db = out.join(format!("{domain}_db"));
        assert_ok(&tracer(
            &root,
            &out,
            &[
                "export",
                "db",
                "--domain",
                domain,
                "--out",
                db.to_str().unwrap(),
            ],
        ));
        let jsonl = out.join(format!("{domain}_replay.jsonl"));
        let o = tracer(
            &root,
            &out,
            &[
                "replay",
                "--domain",
                domain,
                "--db",
                db.to_str().unwrap(),
                "--tasks",
                f,
                "--out",
                jsonl.to_str().unwrap(),
            ],
        );
        assert_ok(&o);
        let n = tasks.len();
        assert!(
            stderr(&o).contains(&format!("replayed {n} task(s)"))
                && stderr(&o).contains(&format!("{n} fully succeeded")),
            "{domain}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn eval_reports_avg_and_pass_hat_k() {
    let root = small_project("eval");
    let out = temp_dir("eval-out");
    assert_ok(&tracer(&root, &out, &["run", "eval", "--domain", "retail"]));
    let rep: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("eval/domain=retail/report.json")).unwrap(),
    )
    .unwrap();
    let pass: Vec<f64> = rep["pass_hat"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(pass.len(), 3);
    assert!(pass[0] >= pass[1] && pass[1] >= pass[2], "{pass:?}");
    let avg = rep["avg_at_k"].as_f64().unwrap();
    assert!((avg - pass[0]).abs() < 1e-9);
    // Each figure has its 95% interval around it; the table shows them.
    let ci = &rep["avg_at_k_ci"];
    let (lo, hi) = (ci["lo"].as_f64().unwrap(), ci["hi"].as_f64().unwrap());
    assert!(lo <= avg && avg <= hi && lo < hi, "{ci}");
    assert_eq!(rep["pass_hat_ci"].as_array().unwrap().len(), 3);
    assert_eq!(rep["bootstrap"]["resamples"].as_u64(), Some(1000));
    let stats = stdout(&tracer(&root, &out, &["stats", "--domain", "retail"]));
    assert!(stats.contains("Pass^3"), "{stats}");
    let row = stats
        .lines()
        .find(|l| l.starts_with("| retail |") && l.contains(" ["))
        .unwrap_or_else(|| panic!("no eval row with intervals: {stats}"));
    let avg_cell = format!(
        "{:.1}% [{:.1}%, {:.1}%]",
        avg * 100.0,
        lo * 100.0,
        hi * 100.0
    );
    assert_eq!(row.split(" | ").nth(2), Some(avg_cell.as_str()), "{row}");
    assert!(
        stats.contains("C(c, j) / C(n, j)") && stats.contains("95% percentile bootstrap"),
        "{stats}"
    );
    // `tracer stats` recomputes the stage's own table: same seed, same resamples.
    let report_md = std::fs::read_to_string(out.join("eval/domain=retail/report.md")).unwrap();
    assert!(stats.contains(&report_md), "{report_md}\n---\n{stats}");
}

fn journal_lines(out: &Path) -> usize {
    let dir = out.join(".journal/rollouts");
    std::fs::read_dir(&dir)
        .map(|es| {
            es.flatten()
                .map(|e| {
                    std::fs::read_to_string(e.path())
                        .unwrap_or_default()
                        .lines()
                        .count()
                })
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn a_killed_rollout_resumes_to_the_uninterrupted_result() {
    let root = small_project("resume");
    let cfg = root.join("stages/rollouts.toml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("concurrency = 32", "concurrency = 2");
    std::fs::write(&cfg, text).unwrap();
    let (killed, straight) = (temp_dir("resume-killed"), temp_dir("resume-straight"));
    for out in [&killed, &straight] {
        assert_ok(&tracer(
            &root,
            out,
            &["run", "tasks", "--domain", "airline"],
        ));
    }
    assert_ok(&tracer(
        &root,
        &straight,
        &["run", "rollouts", "--domain", "airline"],
    ));

    let mut child = tracer_command(&root, &killed)
        .args(["run", "rollouts", "--domain", "airline"])
        .env("TRACER_EPISODE_DELAY_MS", "40")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while journal_lines(&killed) < 10 && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let part_way = journal_lines(&killed);
    assert!(
        (10..80).contains(&part_way),
        "killed after {part_way} episodes"
    );
    assert!(
        !killed
            .join("rollouts/domain=airline/part-00000.parquet")
            .exists()
    );

    let o = tracer(&root, &killed, &["run", "rollouts", "--domain", "airline"]);
    assert_ok(&o);
    assert_eq!(
        tree(&killed.join("rollouts")),
        tree(&straight.join("rollouts")),
        "resumed run must equal the uninterrupted one (no episode lost or duplicated)"
    );
    assert_eq!(
        journal_lines(&killed),
        0,
        "the journal is cleared once the artifact is written"
    );
}
