//! Dollar cost: priced endpoint roles against a loopback server, whose `tracer stats` and
//! dataset card figures must equal the recorded token counts times the configured prices
//! (cached prompt tokens at the cached rate); an offline run costs nothing; prices are
//! checked like every other role setting.

use crate::common::*;
use crate::openai_server::OpenAiServer;
use serde_json::Value;
use std::path::Path;

fn append_config(root: &Path, stage: &str, toml: &str) {
    let cfg = root.join(format!("stages/{stage}.toml"));
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push('\n');
    text.push_str(toml);
    std::fs::write(&cfg, text).unwrap();
}

/// (prompt, cached prompt, completion) tokens a stage's manifest recorded for `role`.
fn recorded_tokens(out: &Path, stage: &str, role: &str) -> (u64, u64, u64) {
    let path = out.join(format!("{stage}/domain=airline/_manifest.json"));
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let entry = manifest["usage"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no usage", path.display()))
        .iter()
        .find(|u| u["role"] == role)
        .unwrap_or_else(|| panic!("{}: no {role}", path.display()))
        .clone();
    let n = |k: &str| entry["tokens"][k].as_u64().unwrap();
    (
        n("prompt_tokens"),
        n("cached_prompt_tokens"),
        n("completion_tokens"),
    )
}

/// The cells of the Markdown table row starting with `prefix`.
fn row(text: &str, prefix: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no row {prefix:?} in:\n{text}"));
    line.trim_matches('|')
        .split('|')
        .map(|c| c.trim().to_string())
        .collect()
}

/// Assert a shown dollar amount (`$0.001234`) is `expected` to the digits shown.
#[track_caller]
fn assert_dollars(shown: &str, expected: f64) {
    let digits = shown.strip_prefix('$').unwrap_or_else(|| panic!("{shown}"));
    let value: f64 = digits.parse().unwrap_or_else(|_| panic!("{shown}"));
    let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let tolerance = 0.5 * 10f64.powi(-decimals) + 1e-15;
    assert!(
        (value - expected).abs() <= tolerance,
        "shown {shown}, expected {expected}"
    );
}

#[test]
fn priced_endpoint_roles_cost_their_recorded_tokens_times_the_price() {
    let server = OpenAiServer::start(&["test-model"]);
    let root = project_copy("cost-priced");
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 10\nmax_eval = 4\n",
    )
    .unwrap();
    // The feeler (the server echoes its prompt: a feeling the mapper reads like any other)
    // with a cached rate; the evaluation's user simulator with none (its cached tokens cost
    // the input rate).
    append_config(
        &root,
        "feelings",
        &format!(
            "[roles.feeler]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nprice = {{ input = 2.0, cached_input = 0.5, output = 8.0 }}\n",
            server.base_url()
        ),
    );
    let eval = root.join("stages/eval.toml");
    let text = std::fs::read_to_string(&eval)
        .unwrap()
        .replace("trials = 3", "trials = 1")
        .replace("max_steps = 200", "max_steps = 4");
    std::fs::write(&eval, text).unwrap();
    append_config(
        &root,
        "eval",
        &format!(
            "[roles.user]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nprice = {{ input = 1.0, output = 4.0 }}\n",
            server.base_url()
        ),
    );
    let out = temp_dir("cost-priced-out");
    let run = |stage: &str| assert_ok(&tracer(&root, &out, &["run", stage, "--domain", "airline"]));
    run("trajectories");
    run("eval");

    let (p, c, o) = recorded_tokens(&out, "feelings", "feeler");
    assert!(p > 0 && c > 0 && o > 0, "the feeler's tokens: {p} {c} {o}");
    assert!(c < p, "only part of the prompt was cached: {c} of {p}");
    let feeler = ((p - c) as f64 * 2.0 + c as f64 * 0.5 + o as f64 * 8.0) / 1e6;
    let (up, _, uo) = recorded_tokens(&out, "eval", "user");
    assert!(up > 0 && uo > 0, "the user simulator's tokens: {up} {uo}");
    let user = (up as f64 * 1.0 + uo as f64 * 4.0) / 1e6;
    // The rollout stages' figures are their episodes' token columns, summed.
    let columns = python(&format!(
        "import pyarrow.parquet as pq\nt = pq.read_table({:?})\nprint(sum(t.column('user_prompt_tokens').to_pylist()), sum(t.column('user_completion_tokens').to_pylist()), sum(t.column('agent_prompt_tokens').to_pylist()))",
        out.join("eval/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    assert_eq!(
        columns.trim(),
        format!("{up} {uo} 0"),
        "scripted agent: no tokens"
    );

    let stats = stdout(&tracer(&root, &out, &["stats", "--domain", "airline"]));
    assert!(stats.contains("## Cost"), "{stats}");
    let r = row(&stats, "| feelings | feeler | test-model |");
    assert_eq!(
        r[3..7],
        [
            p.to_string(),
            c.to_string(),
            o.to_string(),
            "2 / 0.5 / 8".to_string()
        ]
    );
    assert_dollars(&r[7], feeler);
    let r = row(&stats, "| eval | user | test-model |");
    assert_eq!(r[6], "1 / 1 / 4", "no cached rate: the input rate");
    assert_dollars(&r[7], user);
    // Scripted roles show as scripted, at no cost, the judge among them.
    for prefix in [
        "| grounded | grounder | scripted:grounder |",
        "| refined | refiner | scripted:refiner |",
        "| tasks | judge | scripted:judge |",
        "| rollouts | agent | scripted:agent |",
        "| eval | agent | scripted:agent |",
    ] {
        let r = row(&stats, prefix);
        assert_eq!(r[6..], ["scripted", "$0"], "{prefix}");
    }

    // Per domain: the tasks cost the feeler's answers; the trajectories add the
    // (scripted) training rollouts; evaluation is not part of either.
    let verified = python(&format!(
        "import pyarrow.parquet as pq\nprint(pq.read_table({:?}).num_rows, pq.read_table({:?}).num_rows)",
        out.join("tasks/domain=airline/part-00000.parquet")
            .display()
            .to_string(),
        out.join("trajectories/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    let counts: Vec<u64> = verified
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let (tasks, accepted) = (counts[0], counts[1]);
    assert!(tasks > 0 && accepted > 0, "{verified}");
    // The funnel and the rollout table have airline rows too: take the cost section's.
    let cost_row = stats
        .split("## Cost")
        .nth(1)
        .and_then(|cost| cost.lines().find(|l| l.starts_with("| airline |")))
        .unwrap_or_else(|| panic!("no cost row:\n{stats}"));
    let r = row(cost_row, "| airline |");
    assert_eq!(r[1], tasks.to_string());
    assert_dollars(&r[2], feeler);
    assert_dollars(&r[3], feeler / tasks as f64);
    assert_eq!(r[4], accepted.to_string());
    assert_dollars(&r[5], feeler);
    assert_dollars(&r[6], feeler / accepted as f64);

    // The dataset card carries the same figures.
    assert_ok(&tracer(&root, &out, &["card", "--domain", "airline"]));
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(card.contains("\n## Cost\n"), "{card}");
    for line in [
        stats
            .lines()
            .find(|l| l.starts_with("| feelings | feeler |"))
            .unwrap(),
        stats
            .lines()
            .find(|l| l.starts_with("| eval | user |"))
            .unwrap(),
        cost_row,
    ] {
        assert!(card.contains(line), "the card lacks {line:?}");
    }
}

#[test]
fn an_offline_run_costs_nothing() {
    let root = project_copy("cost-offline");
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 8\nmax_eval = 2\n",
    )
    .unwrap();
    let out = temp_dir("cost-offline-out");
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "trajectories", "--domain", "airline"],
    ));
    let stats = stdout(&tracer(&root, &out, &["stats", "--domain", "airline"]));
    let cost = stats
        .split("## Cost")
        .nth(1)
        .unwrap_or_else(|| panic!("no cost section:\n{stats}"));
    let roles: Vec<Vec<String>> = cost
        .lines()
        .filter(|l| l.contains("| scripted:"))
        .map(|l| row(l, "|"))
        .collect();
    let named: Vec<&str> = roles.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(
        named,
        ["grounder", "refiner", "feeler", "judge", "agent", "user"],
        "{cost}"
    );
    for r in &roles {
        assert_eq!(r[3..], ["0", "0", "0", "scripted", "$0"], "{r:?}");
    }
    let r = row(
        cost.lines().find(|l| l.starts_with("| airline |")).unwrap(),
        "| airline |",
    );
    assert_eq!([&r[2], &r[3], &r[5], &r[6]], ["$0"; 4], "{r:?}");
}

#[test]
fn prices_are_checked_like_every_role_setting() {
    let cases = [
        (
            "refined",
            "[roles.refiner]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nprice = { input = -0.5, output = 1.0 }\n",
            "stages/refined.toml: roles.refiner: ",
            "field `price.input`: -0.5 is not a price",
        ),
        (
            "tasks",
            "[roles.judge]\nprice = { input = 1.0, output = 1.0 }\n",
            "stages/tasks.toml: roles.judge: ",
            "field `price` needs provider = \"openai\"",
        ),
        (
            "rollouts",
            "[roles.agent]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nprice = { input = 1.0, output = nan }\n",
            "stages/rollouts.toml: roles.agent: ",
            "field `price.output`: NaN is not a price",
        ),
    ];
    for (stage, toml, file, message) in cases {
        let root = project_copy("cost-config");
        append_config(&root, stage, toml);
        let o = tracer(&root, &temp_dir("cost-config-out"), &["validate"]);
        assert!(!o.status.success(), "{stage}: accepted");
        let err = stderr(&o);
        assert!(err.contains("found 1 problem"), "{stage}: {err}");
        let line = err
            .lines()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{stage}: {err}"));
        assert!(line.contains(message), "{stage}: {line}");
    }
}
