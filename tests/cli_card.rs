//! `tracer card` and the release recipe: a dataset card that Hugging Face's own card parser
//! and `datasets` loader read back (configs resolving to the files we wrote, with their row
//! counts), byte-identical for the same artifacts, refused in one line for a missing or
//! stale stage; stage overrides with per-domain grounding caps, as `make release` uses them.

use crate::common::*;
use std::path::Path;

/// A project copy whose release override grounds a few traces per domain: the release
/// recipe's mechanism (TRACER_STAGE_OVERRIDES + `[caps.<d>]`) at a tiny scale.
fn tiny_release(label: &str) -> TempDir {
    let root = project_copy(label);
    std::fs::create_dir_all(root.join("configs/tiny")).unwrap();
    std::fs::write(
        root.join("configs/tiny/grounded.toml"),
        "max_train = 12\nmax_eval = 6\n[caps.airline]\nmax_train = 20\nmax_eval = 8\n",
    )
    .unwrap();
    // The offline roles' rows are published only when asked for (and marked scripted).
    std::fs::write(
        root.join("configs/tiny/trajectories.toml"),
        "export_scripted = true\n",
    )
    .unwrap();
    root
}

fn release(root: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    tracer_command(root, out)
        .env("TRACER_STAGE_OVERRIDES", "configs/tiny")
        .args(args)
        .output()
        .expect("run tracer")
}

#[test]
fn the_card_reads_back_with_hugging_face_and_is_deterministic() {
    let root = tiny_release("card");
    let (a, b) = (temp_dir("card-a"), temp_dir("card-b"));

    // Before rollouts exist, the card names what is missing and writes nothing.
    assert_ok(&release(&root, &a, &["run", "tasks"]));
    let o = release(&root, &a, &["card"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("rollouts/domain=airline: missing") && err.contains("tracer run rollouts"),
        "{err}"
    );
    assert!(!a.join("README.md").exists());

    for out in [&a, &b] {
        assert_ok(&release(&root, out, &["run", "trajectories"]));
        assert_ok(&release(&root, out, &["run", "eval"]));
        assert_ok(&release(&root, out, &["card"]));
    }
    let card = std::fs::read_to_string(a.join("README.md")).unwrap();
    assert_eq!(
        card,
        std::fs::read_to_string(b.join("README.md")).unwrap(),
        "same artifacts, same card"
    );
    assert_ok(&release(&root, &a, &["card"]));
    assert_eq!(card, std::fs::read_to_string(a.join("README.md")).unwrap());

    // Offline, every role is a scripted simulator: listed as such, at no cost.
    let cost = card
        .split("\n## Cost\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a cost section");
    let all = cost
        .lines()
        .find(|l| l.starts_with("| all |"))
        .expect("the all-domains cost row");
    let cells: Vec<&str> = all.trim_matches('|').split('|').map(str::trim).collect();
    assert_eq!([cells[2], cells[3], cells[5], cells[6]], ["$0"; 4], "{all}");
    assert!(
        cost.lines()
            .filter(|l| l.contains("| scripted:"))
            .all(|l| l.ends_with("| scripted | $0 |")),
        "{cost}"
    );

    // The per-domain cap applied: airline grounded 20 + 8 traces, the others 12 + 6 (a
    // trace that does not ground counts as a grounding rejection).
    let funnel_airline = card
        .lines()
        .find(|l| l.starts_with("| airline | train |"))
        .unwrap();
    let cols: Vec<&str> = funnel_airline.split('|').map(str::trim).collect();
    let grounded: usize = cols[4].parse().unwrap();
    let not_grounded: usize = cols[9]
        .split(", ")
        .filter(|r| r.starts_with("grounded: "))
        .filter_map(|r| r.rsplit(" x ").next()?.parse::<usize>().ok())
        .sum();
    assert_eq!(grounded + not_grounded, 20, "{funnel_airline}");
    // Scripted roles are named as the built-in simulators, never as a model.
    assert!(
        card.contains(
            "| agent (rollouts) | built-in deterministic simulator `scripted:oracle-agent`"
        )
    );
    assert!(card.contains("| feeler | built-in deterministic simulator `scripted:feeler`"));
    assert!(card.contains("**Offline stand-ins.**"));
    assert!(!card.contains("(OpenAI-compatible endpoint)"));
    assert!(card.contains("- Seed: 20261129."));
    // The eval table gives every figure with its 95% interval and states the estimators.
    let eval = card
        .split("\nEvaluation (Avg@k and Pass^k over k trials per task, with 95% intervals):\n")
        .nth(1)
        .expect("an eval table");
    for scope in ["| airline |", "| overall |"] {
        let row = eval.lines().find(|l| l.starts_with(scope)).unwrap();
        assert_eq!(row.matches("%, ").count(), 4, "Avg@3, Pass^1..3: {row}");
    }
    assert!(
        eval.contains("C(c, j) / C(n, j)") && eval.contains("95% percentile bootstrap"),
        "{eval}"
    );
    // The quality report of the same artifacts is a section of the card.
    let quality = card
        .split("\n## Data quality\n")
        .nth(1)
        .expect("a Data quality section");
    assert!(
        quality.contains("| airline | train |")
            && quality.contains("| domain | split | kept SFT rows |"),
        "{quality}"
    );

    let report = python(&format!(
        r#"
import glob, datasets, pyarrow.parquet as pq
from huggingface_hub import DatasetCard
from huggingface_hub.repocard import metadata_load
out = {out:?}
card = DatasetCard.load(out + "/README.md")
meta = metadata_load(out + "/README.md")
assert card.data.license == "mit" and meta["task_categories"] == ["text-generation"], meta
names = [c["config_name"] for c in meta["configs"]]
assert names == ["trajectories", "sft", "trajectories_low", "tasks", "rollouts", "eval_tasks", "eval"], names
domains = sorted(p.split("domain=")[1].rstrip("/") for p in glob.glob(out + "/tasks/domain=*/"))
assert len(domains) >= 5, domains
assert [c for c in meta["configs"] if c.get("default")][0]["config_name"] == "trajectories"
assert meta["size_categories"] == ["n<1K"], meta["size_categories"]
def shown(paths):
    stage, pattern = paths[0].split("/domain=")[0], paths[0].rsplit("/", 1)[1]
    doms = [p.split("domain=")[1].split("/")[0] for p in paths]
    inner = doms[0] if len(doms) == 1 else "{{" + ",".join(doms) + "}}"
    return f"{{stage}}/domain={{inner}}/{{pattern}}"
for c in meta["configs"]:
    (files,) = c["data_files"]
    paths = sorted(p for pat in files["path"] for p in glob.glob(out + "/" + pat))
    # every domain's file, except the Low set's, which holds the paper's four Low domains
    low = ["airline", "retail", "telecom", "telehealth"]
    want = len(low) if c["config_name"] == "trajectories_low" else len(domains)
    assert len(paths) == want and all("/domain=" in p for p in paths), (c, paths)
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in paths)
    ds = datasets.load_dataset(out, c["config_name"], split=files["split"])
    assert len(ds) == rows > 0, (c["config_name"], len(ds), rows)
    assert f"| `{{c['config_name']}}` | {{files['split']}} | `{{shown(files['path'])}}` ({{len(paths)}} files) | {{rows}} |" in card.text, c
    print(c["config_name"], rows)
tasks = datasets.load_dataset(out, "tasks", split="verified")
assert set(tasks["split"]) == {{"train", "eval"}}
assert sorted(set(tasks["domain"])) == domains, (sorted(set(tasks["domain"])), domains)
"#,
        out = a.display().to_string()
    ));
    assert!(report.contains("trajectories "), "{report}");

    // A changed stage config makes the artifacts stale: refused in one line, card kept.
    std::fs::write(
        root.join("stages/refined.toml"),
        "preference_rate = 0.25\nambiguity_rate = 0.5\n",
    )
    .unwrap();
    let o = release(&root, &a, &["card"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("refined/domain=airline: stale (config changed)")
            && err.contains("tracer run trajectories"),
        "{err}"
    );
    assert_eq!(card, std::fs::read_to_string(a.join("README.md")).unwrap());
}

#[test]
fn the_release_overrides_validate_and_bad_ones_are_named() {
    let root = project_copy("release-config");
    let out = temp_dir("release-config-out");
    let o = tracer_command(&root, &out)
        .env("TRACER_STAGE_OVERRIDES", repo().join("configs/release"))
        .arg("validate")
        .output()
        .unwrap();
    assert_ok(&o);
    // The recipe's caps are the documented shares of the paper's counts.
    let text = std::fs::read_to_string(repo().join("configs/release/grounded.toml")).unwrap();
    let caps: toml::Table = text.parse().unwrap();
    let caps = caps["caps"].as_table().unwrap();
    for d in ["airline", "retail", "telecom"] {
        assert_eq!(caps[d]["max_train"].as_integer(), Some(777), "{d}");
        assert_eq!(caps[d]["max_eval"].as_integer(), Some(274), "{d}");
    }

    let bad = root.join("configs/bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("grounding.toml"), "max_train = 1\n").unwrap();
    std::fs::write(bad.join("grounded.toml"), "[caps.airlin]\nmax_train = 3\n").unwrap();
    let o = tracer_command(&root, &out)
        .env("TRACER_STAGE_OVERRIDES", "configs/bad")
        .arg("validate")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let text = stdout(&o) + &stderr(&o);
    assert!(
        text.contains("grounding.toml: not a stage config"),
        "{text}"
    );
    assert!(
        text.contains("grounded.toml: caps: unknown domain 'airlin'"),
        "{text}"
    );
}

#[test]
fn a_card_for_some_domains_publishes_exactly_their_files() {
    let root = tiny_release("card-subset");
    let out = temp_dir("card-subset");
    for d in ["airline", "retail"] {
        assert_ok(&release(
            &root,
            &out,
            &["run", "trajectories", "--domain", d],
        ));
    }
    // The other domain's tasks are tampered with: the card for airline neither publishes
    // nor needs them.
    let retail = out.join("tasks/domain=retail/part-00000.parquet");
    let mut bytes = std::fs::read(&retail).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&retail, bytes).unwrap();
    assert_ok(&release(&root, &out, &["card", "--domain", "airline"]));
    let card = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(!card.contains("domain=*"), "a glob over every domain");
    assert!(!card.contains("domain=retail"), "retail is not described");
    let report = python(&format!(
        r#"
import glob, pyarrow.parquet as pq
from huggingface_hub.repocard import metadata_load
out = {out:?}
meta = metadata_load(out + "/README.md")
text = open(out + "/README.md").read()
for c in meta["configs"]:
    (files,) = c["data_files"]
    paths = sorted(p for pat in files["path"] for p in glob.glob(out + "/" + pat))
    assert paths and all("/domain=airline/" in p for p in paths), (c, paths)
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in paths)
    assert f"({{len(paths)}} files) | {{rows}} |" in text, (c["config_name"], rows)
print(len(meta["configs"]))
"#,
        out = out.display().to_string()
    ));
    assert_eq!(report.trim(), "5", "{report}");

    // A file the card's paths match that its stage did not write makes the card refuse.
    let stray = out.join("trajectories/domain=airline/part-00001.parquet");
    std::fs::copy(
        out.join("trajectories/domain=airline/part-00000.parquet"),
        &stray,
    )
    .unwrap();
    let o = release(&root, &out, &["card", "--domain", "airline"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("trajectories/domain=airline: stale (outputs modified or missing)"),
        "{err}"
    );
}
