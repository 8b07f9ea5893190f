//! `tracer analyze` end to end: the analysis stage after rollouts and eval on the offline
//! roles (deterministic, every failed episode accounted for, the oracle agent's injected
//! mistakes recovered by the detectors meant for them), the fault tables in `tracer
//! stats`, an endpoint judge against the loopback server, and `--rollouts` on a `tracer
//! rollout` directory of imported tau-bench tasks.

use crate::common::*;
use crate::openai_server::{OpenAiServer, Reply};

#[test]
fn analysis_explains_every_failed_episode_and_recovers_the_injected_mistakes() {
    let root = small_project("analysis");
    let (a, b) = (temp_dir("analysis-a"), temp_dir("analysis-b"));
    let args = ["analyze", "--domain", "airline", "--domain", "retail"];
    let o = tracer(&root, &a, &args);
    assert_ok(&o);
    assert!(
        stdout(&o).contains("## Faults of failed episodes")
            && stdout(&o).contains("## First diverging step"),
        "{}",
        stdout(&o)
    );
    assert_ok(&tracer(&root, &b, &args));
    assert_eq!(
        tree(&a.join("analysis")),
        tree(&b.join("analysis")),
        "the analysis must be deterministic"
    );
    let stats = stdout(&tracer(&root, &a, &["stats"]));
    assert!(
        stats.contains("| scripted:oracle-agent | eval |"),
        "{stats}"
    );

    // Every scored episode with reward below 1 has rows; no other episode has any; rows
    // carry their taxonomy group and who decided them.
    let report = python(&format!(
        r#"
import json, pyarrow.dataset as ds
out = {out:?}
def table(p):
    return ds.dataset(p, format="parquet", partitioning="hive", exclude_invalid_files=True).to_table().to_pylist()
rows = table(out + "/analysis")
keys = {{(r["source"], r["domain"], r["task_id"], r["trial"]) for r in rows}}
failed = set()
for source in ("rollouts", "eval"):
    for r in table(out + "/" + source):
        if r["reward"] < 1 and r["termination"] != "endpoint_error":
            failed.add((source, r["domain"], r["task_id"], r["trial"]))
assert keys == failed, (len(keys), len(failed))
assert all(r["category"] and r["detector"] and r["model_label"] is False for r in rows)
assert all(r["step"] is not None for r in rows if r["fault"] != "unlabelled")
per = {{}}
for r in rows:
    per.setdefault((r["source"], r["task_id"], r["trial"]), []).append(r["fault"])
assert all(len(v) == len(set(v)) for v in per.values()), "one row per (episode, fault)"
print(len(rows), len(keys))
"#,
        out = a.display().to_string()
    ));
    assert!(!report.trim().is_empty(), "{report}");

    // Ground truth the analysis never read: the oracle's own account of its mistakes.
    let measured = python(&format!(
        "import json, runpy, sys\nsys.argv = ['x', {out:?}, '--json']\nrunpy.run_path({script:?}, run_name='__main__')",
        out = a.display().to_string(),
        script = repo()
            .join("scripts/analysis_precision.py")
            .display()
            .to_string()
    ));
    let measured: serde_json::Value = serde_json::from_str(&measured).unwrap();
    for kind in [
        "skip_confirmation",
        "redundant_question",
        "wrong_argument",
        "premature_transfer",
    ] {
        let m = &measured[format!("all/{kind}")];
        assert!(m["injected"].as_u64().unwrap() >= 3, "{kind}: {m}");
        assert!(m["recall"].as_f64().unwrap() >= 0.9, "{kind}: {m}");
        assert!(
            m["detector_precision"].as_f64().unwrap() >= 0.9,
            "{kind}: {m}"
        );
    }
}

#[test]
fn an_endpoint_judge_adds_model_labels_only_for_what_rules_cannot_decide() {
    let server = OpenAiServer::start(&["judge-model"]);
    let root = small_project("analysis-judge");
    let cfg = root.join("stages/analysis.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "\n[roles.judge]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"judge-model\"\nmax_retries = 1\nretry_initial_ms = 1\n",
        server.base_url()
    ));
    std::fs::write(&cfg, text).unwrap();
    let answer = r#"{"faults": [{"fault": "emotional_neglect", "step": 3, "detail": "ignored the worry"}, {"fault": "missed_action", "step": 2, "detail": "not the judge's call"}]}"#;
    for _ in 0..400 {
        server.push(Reply::Text(answer.into()));
    }
    let out = temp_dir("analysis-judge-out");
    assert_ok(&tracer(&root, &out, &["analyze", "--domain", "airline"]));
    let report = python(&format!(
        r#"
import pyarrow.parquet as pq
rows = pq.read_table({path:?}).to_pylist()
episodes = {{(r["source"], r["task_id"], r["trial"]) for r in rows}}
judged = [r for r in rows if r["model_label"]]
assert judged and all(r["detector"] == "judge:judge-model" for r in judged), judged[:2]
assert {{r["fault"] for r in judged}} == {{"emotional_neglect"}}, {{r["fault"] for r in judged}}
assert all(r["step"] == 3 for r in judged)
assert len(judged) == len(episodes)
print(len(episodes))
"#,
        path = out
            .join("analysis/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    let episodes: usize = report.trim().parse().unwrap();
    let chats = server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .count();
    assert_eq!(chats, episodes, "one judge request per analysed episode");
    let first = server
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/chat/completions"))
        .unwrap();
    let prompt = first.body.to_string();
    assert!(
        prompt.contains("Automatic findings") && prompt.contains("emotional_neglect"),
        "{prompt}"
    );
}

#[test]
fn analyze_reads_a_tracer_rollout_directory_and_refuses_another_database() {
    let dir = temp_dir("analyze-rollout");
    let out = dir.join("run");
    let db = repo().join("tests/fixtures/tau_bench/retail");
    let tasks = db.join("tasks.json");
    assert_ok(&tracer(
        &repo(),
        &dir,
        &[
            "rollout",
            "--domain",
            "retail",
            "--db",
            db.to_str().unwrap(),
            "--tasks",
            tasks.to_str().unwrap(),
            "--trials",
            "8",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let o = tracer(
        &repo(),
        &dir,
        &[
            "analyze",
            "--rollouts",
            out.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
    );
    assert_ok(&o);
    let report = python(&format!(
        r#"
import pyarrow.parquet as pq
ro = pq.read_table({ro:?}).to_pylist()
assert pq.read_metadata({an:?}).metadata[b"tracer.stage"] == b"analyze"
an = pq.read_table({an:?}).to_pylist()
failed = {{(r["task_id"], r["trial"]) for r in ro if r["reward"] < 1}}
assert {{(r["task_id"], r["trial"]) for r in an}} == failed
assert all(r["source"] == "rollout" and r["domain"] == "retail" for r in an)
print(len(failed))
"#,
        ro = out.join("rollouts.parquet").display().to_string(),
        an = out.join("analysis.parquet").display().to_string()
    ));
    assert!(report.trim().parse::<usize>().unwrap() > 0, "{report}");
    // Without --db the generated database is not the one the rollouts ran on.
    let o = tracer(
        &repo(),
        &dir,
        &["analyze", "--rollouts", out.to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("another database") && stderr(&o).contains("rollouts.parquet"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
}
