//! Emotion conditioning: taxonomy completeness, anchor validation (and rejection of a
//! corrupted file, naming the line), anchor styles and paraphrases, deterministic training
//! and mapping, the encoder's vector cache (a corrupted cache is detected and not used), the
//! one-line error when the model is missing, the quality report per register (printing its
//! numbers, asserting floors) and `tracer emotion map`, and the `anchor_writer` role
//! against the loopback server.

use crate::common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tracer::emotion::classifier::{self, TrainConfig};
use tracer::emotion::embed::Embedder;
use tracer::emotion::embed_cache::{CacheState, CachedEmbedder};
use tracer::emotion::mapper::ModelMeta;
use tracer::emotion::mapper::{Decision, View};
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
        view: View::Tfidf,
        decision: Decision::Vote,
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
    // Every anchor instructs the simulated user in the second person, in 30-60 words.
    for a in &list {
        assert!(
            a.text.contains("You ") || a.text.contains(" you"),
            "{}",
            a.text
        );
        assert!(anchors::fits(&a.text), "{}", a.text);
    }
    // Training paraphrases: 8 + 4 described + 4 implied + 2 cued per condition, then the first
    // generator's texts that are not published (its first-person voices among them), none
    // equal to an anchor, never index < 10, mostly third person; a pure function of the
    // seed.
    let extra = anchors::paraphrases(&t, emotion::ANCHOR_SEED, &list).unwrap();
    let generated = 594
        * (anchors::PARAPHRASE_STYLES.len()
            + anchors::DESCRIBED_PARAPHRASES
            + anchors::IMPLIED_PARAPHRASES
            + anchors::CUED_PARAPHRASES);
    assert!(extra.len() >= generated + 594 * 3, "{}", extra.len());
    let voices = extra[generated..]
        .iter()
        .filter(|a| {
            ["I ", "I'", "my ", "My ", " me", "me.", "Me "]
                .iter()
                .any(|w| a.text.contains(w))
        })
        .count();
    // The first generator's 1,782 voices ("Of course it went wrong. It always does with
    // you." has no first-person word).
    assert!(voices >= 1_750, "{voices} first-person training texts");
    // The described paraphrases are grammatical: "They" never takes a singular verb the
    // singular phrase banks would give it.
    for a in extra.iter().filter(|a| a.anchor_index >= 18) {
        for bad in [
            "They is ",
            "They has ",
            "They keeps ",
            "They stays ",
            "They needs ",
            "They wants ",
            "They says ",
        ] {
            assert!(!a.text.contains(bad), "{}", a.text);
        }
    }

    let texts: std::collections::BTreeSet<&str> =
        list.iter().chain(&extra).map(|a| a.text.as_str()).collect();
    assert_eq!(texts.len(), list.len() + extra.len(), "all texts distinct");
    assert!(extra.iter().all(|a| a.anchor_index >= 10));
    let third = extra.iter().filter(|a| a.text.contains(". They ")).count();
    assert!(third >= 594 * 5, "{third} third-person paraphrases");
    assert_eq!(
        extra,
        anchors::paraphrases(&t, emotion::ANCHOR_SEED, &list).unwrap()
    );
    let o = tracer(
        &repo(),
        &temp_dir("anchors-check"),
        &["anchors", "generate", "--check"],
    );
    assert_ok(&o);
    assert!(stdout(&o).contains("5940 anchors"), "{}", stdout(&o));
    // The checked-in encoder vectors cover every anchor, paraphrase and evaluation text, so
    // no run (and no test) has to encode them.
    let o = tracer(
        &repo(),
        &temp_dir("vectors-check"),
        &["emotion", "vectors", "--check"],
    );
    assert_ok(&o);
    assert!(stdout(&o).contains("cover all"), "{}", stdout(&o));
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
    let c = Mapper::train_offline(&t, list.clone(), &small_config(4)).unwrap();
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
    // The emotion instruction the simulated user gets is a second-person instruction of
    // 30-60 words, one of the published ten (never a training text).
    for (i, feeling) in [
        feeling,
        "The caller is furious and curt; they need it done right now and trust nobody.",
        "This customer is calm and happy, in no hurry, and takes the agent at their word.",
        "The customer is sad and discouraged, polite, and wants every step confirmed.",
    ]
    .iter()
    .enumerate()
    {
        for k in 0..8 {
            let m = a
                .map(feeling, &mut ChaCha8Rng::seed_from_u64(i as u64 * 100 + k))
                .unwrap();
            assert!(m.anchor_index < 10, "{m:?}");
            assert!(anchors::fits(&m.anchor_text), "{m:?}");
        }
    }

    // The artifact round-trips bit for bit.
    let tmp = temp_dir("model");
    let path = tmp.join("model.bin");
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
fn eval_reports_every_register_above_a_floor_and_map_writes_jsonl() {
    let out = temp_dir("emotion-eval");
    let o = tracer(
        &repo(),
        &out,
        &[
            "emotion",
            "eval",
            "--json",
            "--views",
            "encoder-tfidf,tfidf",
            "--no-heldout",
        ],
    );
    assert_ok(&o);
    println!("{}", stdout(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cells = report["cells"].as_array().unwrap();
    let cell = |view: &str, decision: &str, register: &str, half: &str| -> serde_json::Value {
        cells
            .iter()
            .find(|c| {
                c["view"] == view
                    && c["decision"] == decision
                    && c["register"] == register
                    && c["half"] == half
            })
            .unwrap_or_else(|| panic!("no cell {view}/{decision}/{register}/{half}"))["accuracy"]
            .clone()
    };
    // Every item of the four registers is scored once per combination (dev + test).
    let mut n = 0;
    for register in ["feelings", "directives", "messages", "narratives"] {
        n += cell("tfidf", "vote", register, "dev")["n"]
            .as_u64()
            .unwrap()
            + cell("tfidf", "vote", register, "test")["n"]
                .as_u64()
                .unwrap();
    }
    assert!(n >= 820, "{n} labelled items");
    // The chosen combination is the one with the best dev mean (never the test half).
    let f = |a: &serde_json::Value, k: &str| a[k].as_f64().unwrap();
    let mean5 = |a: &serde_json::Value| {
        ["family", "emotion", "politeness", "urgency", "trust"]
            .iter()
            .map(|k| f(a, k))
            .sum::<f64>()
            / 5.0
    };
    let dev_mean = |view: &str, decision: &str| {
        ["feelings", "directives", "messages", "narratives"]
            .iter()
            .map(|r| mean5(&cell(view, decision, r, "dev")))
            .sum::<f64>()
    };
    let chosen = report["chosen"].as_array().unwrap();
    let (view, decision) = (chosen[0].as_str().unwrap(), chosen[1].as_str().unwrap());
    for v in ["encoder-tfidf", "tfidf"] {
        for d in ["vote", "heads", "blend", "linear", "mixed"] {
            assert!(
                dev_mean(view, decision) >= dev_mean(v, d) - 1e-9,
                "{v}/{d} beats the choice"
            );
        }
    }
    // The shipped default (encoder + n-grams, linear heads) stays above these floors on the
    // test half of every register (measured: family 90-99%, emotion 84-98%, politeness
    // 66-85%, urgency 72-85%, trust 82-88%), and its politeness and urgency, averaged over
    // the registers as docs/emotion-mapping.md reports them (72.9% and 80.0%), lose at most
    // 3 points.
    let mut dims = [0.0f64; 2];
    for register in ["feelings", "directives", "messages"] {
        let a = cell("encoder-tfidf", "linear", register, "test");
        assert!(f(&a, "family") >= 0.85, "{register}: {a}");
        assert!(f(&a, "emotion") >= 0.8, "{register}: {a}");
        assert!(f(&a, "trust") >= 0.78, "{register}: {a}");
        for (i, dim) in ["politeness", "urgency"].iter().enumerate() {
            assert!(f(&a, dim) >= 0.6, "{register} {dim}: {a}");
            dims[i] += f(&a, dim) / 3.0;
        }
    }
    assert!(dims[0] >= 0.699, "politeness {:.3}", dims[0]);
    assert!(dims[1] >= 0.77, "urgency {:.3}", dims[1]);
    // The harder register, written to another plan (measured: family 66%, emotion 50%,
    // politeness 76%, urgency 81%, trust 84%; before the cued training register
    // politeness 69%, urgency 69%, trust 79%).
    let a = cell("encoder-tfidf", "linear", "narratives", "test");
    for (dim, floor) in [
        ("family", 0.6),
        ("emotion", 0.44),
        ("politeness", 0.7),
        ("urgency", 0.74),
        ("trust", 0.77),
    ] {
        assert!(f(&a, dim) >= floor, "narratives {dim}: {a}");
    }
    let confusion = report["confusion"].as_array().unwrap();
    assert_eq!(confusion.len(), 4);
    let test_n: u64 = confusion[0]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()))
        .sum();
    assert_eq!(
        test_n,
        cell("encoder-tfidf", decision, "feelings", "test")["n"]
            .as_u64()
            .unwrap()
    );

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
    assert_eq!(rows[0]["family"], "enjoyment", "{}", rows[0]);
    assert_eq!(rows[1]["family"], "anger", "{}", rows[1]);
    assert_eq!(rows[2]["family"], "sadness", "{}", rows[2]);
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
        assert!(
            r["anchor_index"].as_u64().unwrap() < 10,
            "a published anchor"
        );
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

/// A tiny stand-in embedder that counts how often it is asked.
struct Counting {
    calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Embedder for Counting {
    fn id(&self) -> String {
        "counting-test-embedder".into()
    }
    fn dim(&self) -> usize {
        3
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, emotion::EmbedError> {
        self.calls
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| vec![t.len() as f32, 1.0, -1.0])
            .collect())
    }
}

#[test]
fn the_vector_cache_is_reused_and_a_corrupted_one_is_detected_not_used() {
    let dir = temp_dir("vector-cache");
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let texts: Vec<String> = (0..40).map(|i| format!("text number {i}")).collect();
    let open = || {
        CachedEmbedder::open(
            Box::new(Counting {
                calls: calls.clone(),
            }),
            &dir,
        )
    };
    let first = open();
    assert_eq!(first.state(), &CacheState::Missing);
    let v1 = first.embed(&texts).unwrap();
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 40);
    let second = open();
    assert_eq!(second.state(), &CacheState::Loaded { entries: 40 });
    assert_eq!(second.embed(&texts).unwrap(), v1);
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        40,
        "served from disk"
    );

    // Flip one byte of one vector: the checksum catches it and every vector is recomputed.
    let path = second.path().to_path_buf();
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 40;
    bytes[at] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let third = open();
    match third.state() {
        CacheState::Corrupt(why) => assert!(why.contains("checksum mismatch"), "{why}"),
        s => panic!("corruption not detected: {s:?}"),
    }
    assert_eq!(third.embed(&texts).unwrap(), v1);
    assert_eq!(
        calls.load(std::sync::atomic::Ordering::SeqCst),
        80,
        "recomputed"
    );
    assert_eq!(
        open().state(),
        &CacheState::Loaded { entries: 40 },
        "rewritten whole"
    );
}

#[test]
fn a_seed_grows_by_small_delta_files_and_compacts_back_to_one() {
    let root = temp_dir("vector-seed");
    let (seeds, cache) = (root.join("seeds"), root.join("cache"));
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let open = || {
        CachedEmbedder::open_seeded(
            Box::new(Counting {
                calls: calls.clone(),
            }),
            &cache,
            Some(&seeds),
        )
    };
    let texts = |n: usize| -> Vec<String> { (0..n).map(|i| format!("text number {i}")).collect() };
    let files = || {
        let mut names: Vec<String> = std::fs::read_dir(&seeds)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    // No seed yet: the first write is the base file.
    let base = open()
        .write_seed(&texts(30), &seeds, false)
        .unwrap()
        .unwrap();
    assert_eq!(files().len(), 1);
    assert!(!base.to_string_lossy().contains('+'));
    // Ten new texts: a delta with only those ten; an unchanged set writes nothing.
    let delta = open()
        .write_seed(&texts(40), &seeds, false)
        .unwrap()
        .unwrap();
    assert!(delta.to_string_lossy().ends_with("+1.bin"), "{delta:?}");
    assert!(std::fs::metadata(&delta).unwrap().len() < std::fs::metadata(&base).unwrap().len() / 2);
    assert_eq!(open().write_seed(&texts(40), &seeds, false).unwrap(), None);
    let seeded = CachedEmbedder::open_seed(
        Box::new(Counting {
            calls: calls.clone(),
        }),
        &seeds,
    );
    assert_eq!(seeded.state(), &CacheState::Loaded { entries: 40 });
    assert_eq!(seeded.count_missing(&texts(41)), 1);
    // A fresh cache directory is served from base + delta without embedding anything.
    std::fs::remove_dir_all(&cache).ok();
    let before = calls.load(std::sync::atomic::Ordering::SeqCst);
    open().embed(&texts(40)).unwrap();
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), before);
    // A damaged delta is reported, and the next write rewrites one whole base file.
    let mut bytes = std::fs::read(&delta).unwrap();
    let at = bytes.len() - 40;
    bytes[at] ^= 0x10;
    std::fs::write(&delta, &bytes).unwrap();
    match open().seed_state() {
        CacheState::Corrupt(why) => assert!(why.contains("+1.bin"), "{why}"),
        s => panic!("corruption not detected: {s:?}"),
    }
    open()
        .write_seed(&texts(40), &seeds, false)
        .unwrap()
        .unwrap();
    assert_eq!(files().len(), 1);
    // Compacting keeps exactly the texts in use.
    open()
        .write_seed(&texts(45), &seeds, false)
        .unwrap()
        .unwrap();
    assert_eq!(files().len(), 2);
    open()
        .write_seed(&texts(20), &seeds, true)
        .unwrap()
        .unwrap();
    assert_eq!(files().len(), 1);
    assert_eq!(open().seed_state(), &CacheState::Loaded { entries: 20 });
}

#[test]
fn a_missing_model_is_one_line_naming_how_to_fetch_it_and_tfidf_needs_none() {
    let root = project_copy("no-model");
    let out = temp_dir("no-model-out");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
            .args(args)
            .env("TRACER_ROOT", &root)
            .env("TRACER_OUTPUT", &out)
            .env("TRACER_EMBED_MODEL", root.join("nowhere"))
            .env("TRACER_EMOTION_CACHE", repo().join(".cache/emotion"))
            .current_dir(&root)
            .output()
            .unwrap()
    };
    let o = run(&["emotion", "map", "--input", "-"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("nowhere/config.json") && err.contains("make model"),
        "{err}"
    );

    // Configured for the n-gram view alone, nothing needs the model.
    std::fs::write(
        root.join("stages/emotions.toml"),
        "k = 10\nview = \"tfidf\"\n",
    )
    .unwrap();
    let o = run(&["emotion", "map", "--input", "/dev/null"]);
    assert_ok(&o);
    let o = run(&["validate"]);
    assert_ok(&o);
    std::fs::write(root.join("stages/emotions.toml"), "view = \"bert\"\n").unwrap();
    let o = run(&["validate"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("emotions.toml"), "{}", stderr(&o));
}

#[test]
fn the_anchor_writer_role_writes_validated_anchors_through_an_endpoint() {
    use crate::openai_server::{OpenAiServer, Reply};
    let t = taxonomy();
    let server = OpenAiServer::start(&["writer-model"]);
    let root = project_copy("anchor-writer");
    std::fs::write(
        root.join("emotion_anchors/writer.toml"),
        format!(
            "[roles.anchor_writer]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"writer-model\"\nconcurrency = 1\n",
            server.base_url()
        ),
    )
    .unwrap();
    let before = std::fs::read(root.join("emotion_anchors/anchors.jsonl")).unwrap();
    let reply = |c: usize| -> Vec<String> {
        (0..10)
            .map(|i| {
                format!(
                    "Written for condition {c}, text {i}. You feel uneasy about the change and \
                     say so early on. You keep every answer short, ask the agent to confirm \
                     each step before it goes ahead, and do not mind waiting a little."
                )
            })
            .collect()
    };
    for c in 0..594 {
        server.push(Reply::Text(serde_json::to_string(&reply(c)).unwrap()));
    }
    let out = temp_dir("anchor-writer-out");
    let o = tracer(&root, &out, &["anchors", "generate"]);
    assert_ok(&o);
    assert!(
        stdout(&o).contains("by anchor_writer writer-model"),
        "{}",
        stdout(&o)
    );
    let written = anchors::load(&root.join("emotion_anchors/anchors.jsonl"), &t).unwrap();
    assert_eq!(written.len(), 5940);
    let requests = server.requests();
    let posts: Vec<_> = requests.iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 594);
    assert!(
        posts[0].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Politeness:")
    );
    // Replies may be matched to conditions in any order, but every text written is one the
    // server sent, each exactly once, in the order it came within its reply.
    let sent: std::collections::BTreeSet<String> = (0..594).flat_map(reply).collect();
    let got: std::collections::BTreeSet<String> = written.iter().map(|a| a.text.clone()).collect();
    assert_eq!(sent, got);
    assert!(
        written
            .iter()
            .all(|a| a.text.contains(&format!("text {}.", a.anchor_index)))
    );

    // A reply with nine texts: one line naming the condition; the file is left alone.
    std::fs::write(root.join("emotion_anchors/anchors.jsonl"), &before).unwrap();
    std::fs::remove_file(out.join(".llm-cache.redb")).ok();
    for c in 0..594 {
        let mut texts = reply(c + 1000);
        if c == 3 {
            texts.pop();
        }
        server.push(Reply::Text(serde_json::to_string(&texts).unwrap()));
    }
    let o = tracer(&root, &out, &["anchors", "generate"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("anchor_writer, condition ") && err.contains("9 texts, expected 10"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read(root.join("emotion_anchors/anchors.jsonl")).unwrap(),
        before
    );

    // Texts that pass parsing but fail the shared validation (a one-sentence anchor).
    std::fs::remove_file(out.join(".llm-cache.redb")).ok();
    for c in 0..594 {
        let mut texts = reply(c + 2000);
        if c == 5 {
            texts[2] = "Too short".into();
        }
        server.push(Reply::Text(serde_json::to_string(&texts).unwrap()));
    }
    let o = tracer(&root, &out, &["anchors", "generate"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("anchor 2: text has 0 sentences"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(root.join("emotion_anchors/anchors.jsonl")).unwrap(),
        before
    );
}

#[test]
fn the_mapper_reads_the_scripted_feelers_real_output_as_meant() {
    // Real `feelings` stage output (every domain, scripted feeler, 40 traces each), then
    // `emotion agreement`: it rewrites each feeling from the task and the artifact's seed (so
    // it knows what the feeler meant) and maps it with the default mapper.
    let out = temp_dir("emotion-agreement");
    let o = tracer(&repo(), &out, &["emotion", "agreement"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no feelings artifacts"),
        "{}",
        stderr(&o)
    );
    let overrides = out.join("overrides");
    std::fs::create_dir_all(&overrides).unwrap();
    let traces = std::fs::read_to_string(repo().join("stages/traces.toml")).unwrap();
    let small: String = traces
        .lines()
        .map(|l| match l.split_once(" = ") {
            Some((d, n))
                if d.chars().all(|c| c.is_ascii_lowercase()) && n.parse::<u64>().is_ok() =>
            {
                format!("{d} = 40\n")
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(overrides.join("traces.toml"), small).unwrap();
    assert_ok(
        &tracer_command(&repo(), &out)
            .env("TRACER_STAGE_OVERRIDES", &overrides)
            .args(["run", "feelings"])
            .output()
            .unwrap(),
    );
    let o = tracer(&repo(), &out, &["emotion", "agreement", "--json"]);
    assert_ok(&o);
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = rows.as_array().unwrap();
    let domains: Vec<&str> = rows.iter().map(|r| r["domain"].as_str().unwrap()).collect();
    let registered: Vec<&str> = tracer::domain::registry_builtin()
        .iter()
        .map(|d| d.name())
        .collect();
    assert_eq!(domains, registered);
    // Measured on the first 150 traces of each domain: 95.8-100% on every label (bank's
    // urgency lowest); on these 40 every label was at least 94% in every domain. Travel
    // grounds only traces of at most 8 calls (`[caps.travel]`): 12 of these 40.
    for row in rows {
        let n = row["feelings"].as_u64().unwrap();
        assert!(n >= 10, "{row}");
        assert_eq!(row["skipped"], 0, "{row}");
        for label in ["family", "emotion", "politeness", "urgency", "trust"] {
            let hits = row[label].as_u64().unwrap();
            assert!(hits * 100 >= n * 90, "{label}: {hits} of {n} ({row})");
        }
    }
}

/// The `emotions` stage maps every domain of a run with one mapper (`Mapper::shared`):
/// built once per process for a project and configuration, reused while none of the files
/// it is built from changes, built again through `load_or_train` (with its checks: a
/// damaged model is retrained) when one does, and mapping exactly as a fresh build.
#[test]
fn the_shared_mapper_is_built_once_per_process_and_maps_as_a_fresh_one() {
    use std::sync::Arc;
    // A project of its own (taxonomy and anchors), so no other test shares its slot; the
    // n-gram view with a small classifier, so training is quick.
    let root = temp_dir("shared-mapper");
    std::fs::create_dir_all(root.join("emotion_anchors")).unwrap();
    for f in [
        emotion::taxonomy_path(&repo()),
        emotion::anchors_path(&repo()),
    ] {
        std::fs::copy(
            &f,
            root.join("emotion_anchors").join(f.file_name().unwrap()),
        )
        .unwrap();
    }
    let config = MapperConfig {
        paraphrases: false,
        ..small_config(5)
    };
    let (first, reused) = Mapper::shared(&root, &config).unwrap();
    assert!(!reused, "the first call builds");
    let (second, reused) = Mapper::shared(&root, &config).unwrap();
    assert!(
        reused && Arc::ptr_eq(&first, &second),
        "the second reuses it"
    );

    // It maps as a mapper built afresh (from the model the first build cached).
    let feelings: Vec<String> = [
        "The customer is worried the refund will not arrive before rent is due; polite but pressed for time.",
        "This caller is furious about the double charge, curt, and does not believe a word.",
        "Relaxed and friendly, no rush at all, just wants the details read back.",
    ]
    .map(String::from)
    .to_vec();
    let (fresh, source) = Mapper::load_or_train(&root, &config).unwrap();
    assert_eq!(source, emotion::ModelSource::Cached);
    let votes = first.votes(&feelings).unwrap();
    assert_eq!(votes, fresh.votes(&feelings).unwrap());
    for v in &votes {
        assert_eq!(
            first.choose_anchor(v, &mut ChaCha8Rng::seed_from_u64(9)),
            fresh.choose_anchor(v, &mut ChaCha8Rng::seed_from_u64(9))
        );
    }

    // A damaged model in the cache is not hidden by the shared copy: the next call builds
    // again, `load_or_train` refuses the file and retrains it, and the result is the same.
    let cache = root.join(".cache/emotion");
    let model = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mapper-")
        })
        .expect("the first build cached its model");
    std::fs::write(&model, b"damaged").unwrap();
    let (rebuilt, reused) = Mapper::shared(&root, &config).unwrap();
    assert!(!reused && !Arc::ptr_eq(&first, &rebuilt));
    assert!(
        tracer::artifact::read_cached(&model).unwrap().is_some(),
        "retrained and checksummed again"
    );
    assert_eq!(rebuilt.votes(&feelings).unwrap(), votes);

    // Another configuration has a slot of its own and does not evict this one.
    let other = MapperConfig {
        k: 3,
        ..config.clone()
    };
    let (three, _) = Mapper::shared(&root, &other).unwrap();
    assert_eq!(three.k(), 3);
    let (again, reused) = Mapper::shared(&root, &config).unwrap();
    assert!(reused && Arc::ptr_eq(&rebuilt, &again));

    // A training file that changed (here only its modification time) makes a new mapper.
    std::fs::File::options()
        .write(true)
        .open(emotion::anchors_path(&root))
        .unwrap()
        .set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    let (after, reused) = Mapper::shared(&root, &config).unwrap();
    assert!(!reused && !Arc::ptr_eq(&again, &after));
    assert_eq!(after.votes(&feelings).unwrap(), votes);
}
