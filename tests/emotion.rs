//! Emotion conditioning: taxonomy completeness, anchor validation (and rejection of a
//! corrupted file, naming the line), deterministic training and mapping, the quality report
//! (printing its numbers, asserting only a floor) and `tracer emotion map`.

use crate::common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tracer::emotion::classifier::{self, TrainConfig};
use tracer::emotion::mapper::ModelMeta;
use tracer::emotion::{self, Anchor, Mapper, MapperConfig, Taxonomy, anchors};

fn taxonomy() -> Taxonomy {
    Taxonomy::load(&emotion::taxonomy_path(&repo())).unwrap()
}

fn repo_anchors(t: &Taxonomy) -> Vec<Anchor> {
    anchors::load(&emotion::anchors_path(&repo()), t).unwrap()
}

/// A small, fast configuration for determinism checks (debug builds are slow).
fn small_config(seed: u64) -> MapperConfig {
    MapperConfig {
        k: 5,
        train: TrainConfig {
            hidden: 16,
            epochs: 2,
            seed,
            ..TrainConfig::default()
        },
        ..MapperConfig::default()
    }
}

/// Every 9th anchor: all families and levels, ~660 anchors.
fn subset(all: &[Anchor]) -> Vec<Anchor> {
    all.iter().step_by(9).cloned().collect()
}

#[test]
fn taxonomy_has_594_conditions_with_stable_ids() {
    let t = taxonomy();
    let conditions = t.conditions();
    assert_eq!(conditions.len(), 594);
    assert_eq!(t.family_names().len(), 5);
    assert_eq!(t.emotion_names().len(), 22);
    let keys: std::collections::BTreeSet<String> = conditions.iter().map(|c| c.key()).collect();
    assert_eq!(keys.len(), 594);
    for c in &conditions {
        let l = t
            .label_index(&c.emotion, &c.politeness, &c.urgency, &c.trust)
            .unwrap();
        assert_eq!(t.condition_id(l), c.id);
        assert_eq!(t.labels_of(c.id), l);
        assert_eq!(t.family_of(&c.emotion), Some(c.family.as_str()));
    }
    assert_eq!(conditions[0].key(), "annoyance/warm/low/trusting");
    assert_eq!(conditions[593].key(), "excitement/cold/high/skeptical");
    // A taxonomy with an emotion missing is rejected, naming the field.
    let text = std::fs::read_to_string(emotion::taxonomy_path(&repo())).unwrap();
    let err = Taxonomy::parse(&text.replace("\"pride\", ", "")).unwrap_err();
    assert!(
        err.contains("21 emotions give 567 conditions, expected 594"),
        "{err}"
    );
}

#[test]
fn checked_in_anchors_are_complete_unique_and_regenerable() {
    let t = taxonomy();
    let list = repo_anchors(&t);
    assert_eq!(list.len(), 5940);
    assert!(anchors::validate(&t, &list).is_empty());
    for a in list.iter().take(200) {
        assert!(
            a.text.starts_with("You ") || a.text.contains(" you "),
            "{}",
            a.text
        );
    }
    let o = tracer(
        &repo(),
        &temp_dir("anchors-check"),
        &["anchors", "generate", "--check"],
    );
    assert_ok(&o);
    assert!(stdout(&o).contains("5940 anchors"), "{}", stdout(&o));
}

#[test]
fn corrupted_anchors_are_rejected_naming_the_line() {
    let t = taxonomy();
    let path = emotion::anchors_path(&repo());
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();

    // A label that disagrees with the condition id, on line 42.
    let mut bad = lines.clone();
    bad[41] = bad[41].replace("\"annoyance\"", "\"pride\"");
    let err = anchors::parse_jsonl(&path, &bad.join("\n"))
        .map(|l| anchors::validate(&t, &l))
        .unwrap();
    assert_eq!(err[0].line, 42, "{err:?}");

    // A duplicated text, an unknown emotion, a missing line, broken JSON.
    let mut dup = lines.clone();
    let first_text: Anchor = serde_json::from_str(&dup[0]).unwrap();
    let mut second: Anchor = serde_json::from_str(&dup[1]).unwrap();
    second.text = first_text.text.clone();
    dup[1] = serde_json::to_string(&second).unwrap();
    let problems = anchors::validate(&t, &anchors::parse_jsonl(&path, &dup.join("\n")).unwrap());
    assert!(
        problems
            .iter()
            .any(|p| p.line == 2 && p.message.contains("duplicates line 1")),
        "{problems:?}"
    );
    let short = lines[..5939].join("\n");
    let problems = anchors::validate(&t, &anchors::parse_jsonl(&path, &short).unwrap());
    assert!(
        problems
            .iter()
            .any(|p| p.message.contains("5939 anchors, expected 5940")),
        "{problems:?}"
    );
    lines[99] = "{not json".into();
    let err = anchors::parse_jsonl(&path, &lines.join("\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("anchors.jsonl:100:"), "{err}");

    // `tracer validate` reports it, naming the file and line.
    let root = project_copy("bad-anchors");
    copy_dir(
        &repo().join("emotion_anchors"),
        &root.join("emotion_anchors"),
    );
    std::fs::write(
        root.join("emotion_anchors/anchors.jsonl"),
        bad.join("\n") + "\n",
    )
    .unwrap();
    let o = tracer(&root, &temp_dir("bad-anchors-out"), &["validate"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("anchors.jsonl:42: labels"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn training_and_mapping_are_deterministic_for_a_seed() {
    let t = taxonomy();
    let list = subset(&repo_anchors(&t));
    let a = Mapper::train_offline(&t, list.clone(), &small_config(3)).unwrap();
    let b = Mapper::train_offline(&t, list.clone(), &small_config(3)).unwrap();
    let c = Mapper::train_offline(&t, list, &small_config(4)).unwrap();
    assert_eq!(a.classifier().weight_bytes(), b.classifier().weight_bytes());
    assert_ne!(a.classifier().weight_bytes(), c.classifier().weight_bytes());
    assert_eq!(a.meta().report, b.meta().report);

    let feeling = "The customer is worried the refund will not arrive before rent is due; polite but pressed for time.";
    let m1 = a.map(feeling, &mut ChaCha8Rng::seed_from_u64(11)).unwrap();
    let m2 = b.map(feeling, &mut ChaCha8Rng::seed_from_u64(11)).unwrap();
    assert_eq!(m1, m2);
    assert!(m1.confidence > 0.0 && m1.confidence <= 1.0);
    assert_eq!(t.conditions()[m1.condition_id].emotion, m1.emotion);
    assert!(!m1.anchor_text.is_empty());

    // The artifact round-trips bit for bit.
    let path = temp_dir("model").join("model.bin");
    classifier::save(&path, a.classifier(), a.meta()).unwrap();
    let (loaded, meta) = classifier::load::<ModelMeta>(&path).unwrap();
    assert_eq!(&loaded, a.classifier());
    assert_eq!(&meta, a.meta());
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 3);
    std::fs::write(&path, bytes).unwrap();
    let err = classifier::load::<ModelMeta>(&path)
        .unwrap_err()
        .to_string();
    assert!(err.contains("truncated weights"), "{err}");
}

#[test]
fn eval_reports_accuracy_above_a_floor_and_map_writes_jsonl() {
    let out = temp_dir("emotion-eval");
    let o = tracer(&repo(), &out, &["emotion", "eval", "--json"]);
    assert_ok(&o);
    println!("{}", stdout(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let get = |m: &str, f: &str| report[m][f].as_f64().unwrap();
    assert_eq!(report["feelings_vote"]["n"].as_u64().unwrap(), 153);
    assert!(get("heldout_heads", "emotion") >= 0.9, "{report}");
    assert!(get("feelings_vote", "family") >= 0.6, "{report}");
    assert!(get("feelings_vote", "emotion") >= 0.4, "{report}");

    // `emotion map` reuses the cached model; plain lines and JSONL both work.
    let input = out.join("in.txt");
    std::fs::write(
        &input,
        "The customer is thrilled about the honeymoon upgrade and thanks the agent warmly.\n\
         {\"id\": \"t-7\", \"text\": \"The passenger is furious and fed up, demanding an immediate refund.\"}\n\
         \n\
         The caller is grieving a loss and speaks quietly.\n",
    )
    .unwrap();
    let run = |seed: &str| {
        let o = tracer(
            &repo(),
            &out,
            &[
                "emotion",
                "map",
                "--input",
                input.to_str().unwrap(),
                "--seed",
                seed,
            ],
        );
        assert_ok(&o);
        assert!(stderr(&o).contains("(cached)"), "{}", stderr(&o));
        stdout(&o)
    };
    let text = run("5");
    assert_eq!(text, run("5"));
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1]["id"], "t-7");
    for r in &rows {
        for f in [
            "family",
            "emotion",
            "politeness",
            "urgency",
            "trust",
            "condition_id",
            "confidence",
            "anchor_index",
            "anchor_text",
        ] {
            assert!(!r[f].is_null(), "{f} missing in {r}");
        }
    }
    let bad = out.join("bad.jsonl");
    std::fs::write(&bad, "{\"txt\": \"no text field\"}\n").unwrap();
    let o = tracer(
        &repo(),
        &out,
        &["emotion", "map", "--input", bad.to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bad.jsonl:1: no string field `text`"),
        "{}",
        stderr(&o)
    );
}
