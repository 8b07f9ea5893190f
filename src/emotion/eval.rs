//! The quality report of `tracer emotion eval`.
//!
//! What it measures. The hand-labelled evaluation sets in `tests/fixtures/feelings/`, one
//! per register — `feelings` (third-person descriptions, what a feeling generator writes),
//! `directives` (short second-person behavioural directives, the emotion often only
//! implied) and `messages` (first-person customer messages) — written by hand for this
//! project, independently of the anchor phrase banks — and a harder fourth, `narratives`
//! (220 items, ten per emotion, written to another plan by a writer who never read the
//! banks, the anchors or the other three sets: second-person instructions of 30-60 words
//! that tell what happened and how the customer behaves, the emotion and the behaviour
//! mostly shown rather than named, some cues mixed on purpose). Each item is assigned to a *dev* or
//! a *test* half by the first byte of the SHA-256 of its text, so the split never depends on
//! file order. Every combination of [`View`] and [`Decision`] is scored on both halves; the
//! combination with the best mean accuracy (family, emotion, politeness, urgency, trust,
//! averaged over the registers) on *dev* is the one recommended, and its *test* figures are
//! the ones to quote. A family confusion matrix per register (test half) shows where the
//! winner goes wrong. A second, easy, in-distribution check holds out one anchor per
//! condition (594) and trains on the rest.
//!
//! Architecture invariant: reads only the fixtures and the anchors it is given; never
//! trains on the evaluation sets.

use super::EmotionError;
use super::anchors::{ANCHORS_PER_CONDITION, Anchor};
use super::embed::SparseVec;
use super::mapper::{Decision, Mapper, MapperConfig, View, anchor_targets};
use super::taxonomy::Taxonomy;
use crate::seed::derive_rng;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The registers and their fixture files, relative to the project root.
pub const REGISTERS: [(&str, &str); 4] = [
    ("feelings", "tests/fixtures/feelings/feelings.jsonl"),
    ("directives", "tests/fixtures/feelings/directives.jsonl"),
    ("messages", "tests/fixtures/feelings/messages.jsonl"),
    ("narratives", "tests/fixtures/feelings/heldout.jsonl"),
];

/// The registers of the first, 602-item set (the fourth, `narratives`, is the harder one).
pub const FIRST_SET: [&str; 3] = ["feelings", "directives", "messages"];

/// One hand-labelled text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeelingExample {
    pub text: String,
    pub family: String,
    pub emotion: String,
    pub politeness: String,
    pub urgency: String,
    pub trust: String,
}

/// Read a labelled fixture; every label must be known and the family must own the emotion.
pub fn load_feelings(
    path: &Path,
    taxonomy: &Taxonomy,
) -> Result<Vec<FeelingExample>, EmotionError> {
    let text = std::fs::read_to_string(path).map_err(|e| EmotionError::file(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let f: FeelingExample = serde_json::from_str(line).map_err(|e| EmotionError::File {
            path: at(),
            message: e.to_string(),
        })?;
        if taxonomy.family_of(&f.emotion) != Some(f.family.as_str())
            || taxonomy
                .label_index(&f.emotion, &f.politeness, &f.urgency, &f.trust)
                .is_none()
        {
            return Err(EmotionError::File {
                path: at(),
                message: format!(
                    "unknown or inconsistent labels {}/{}/{}/{}/{}",
                    f.family, f.emotion, f.politeness, f.urgency, f.trust
                ),
            });
        }
        out.push(f);
    }
    Ok(out)
}

/// Whether a text is in the test half (else dev): a property of the text alone.
pub fn is_test(text: &str) -> bool {
    Sha256::digest(text.as_bytes())[0] & 1 == 1
}

/// Accuracy of each label, as fractions in 0..=1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    pub n: usize,
    pub family: f64,
    pub emotion: f64,
    pub politeness: f64,
    pub urgency: f64,
    pub trust: f64,
    /// All four labels right (the exact condition).
    pub condition: f64,
}

impl Accuracy {
    /// The mean of family, emotion and the three dimensions (what selection maximises).
    /// The unweighted mean of several registers' accuracies (`n` summed).
    pub fn mean_of(xs: &[&Accuracy]) -> Accuracy {
        let k = xs.len().max(1) as f64;
        let avg = |f: fn(&Accuracy) -> f64| xs.iter().map(|a| f(a)).sum::<f64>() / k;
        Accuracy {
            n: xs.iter().map(|a| a.n).sum(),
            family: avg(|a| a.family),
            emotion: avg(|a| a.emotion),
            politeness: avg(|a| a.politeness),
            urgency: avg(|a| a.urgency),
            trust: avg(|a| a.trust),
            condition: avg(|a| a.condition),
        }
    }

    /// Family, emotion, politeness, urgency, trust and condition as percentages ("93.4%").
    pub fn percents(&self) -> [String; 6] {
        [
            self.family,
            self.emotion,
            self.politeness,
            self.urgency,
            self.trust,
            self.condition,
        ]
        .map(pct)
    }

    pub fn mean(&self) -> f64 {
        (self.family + self.emotion + self.politeness + self.urgency + self.trust) / 5.0
    }
}

#[derive(Default)]
struct Tally {
    n: usize,
    hits: [usize; 6],
}

impl Tally {
    fn add(&mut self, taxonomy: &Taxonomy, predicted: [usize; 4], truth: [usize; 4]) {
        self.n += 1;
        let ok = [
            family_index(taxonomy, predicted[0]) == family_index(taxonomy, truth[0]),
            predicted[0] == truth[0],
            predicted[1] == truth[1],
            predicted[2] == truth[2],
            predicted[3] == truth[3],
            predicted == truth,
        ];
        for (h, o) in self.hits.iter_mut().zip(ok) {
            *h += o as usize;
        }
    }

    fn accuracy(&self) -> Accuracy {
        let f = |h: usize| h as f64 / self.n.max(1) as f64;
        Accuracy {
            n: self.n,
            family: f(self.hits[0]),
            emotion: f(self.hits[1]),
            politeness: f(self.hits[2]),
            urgency: f(self.hits[3]),
            trust: f(self.hits[4]),
            condition: f(self.hits[5]),
        }
    }
}

fn family_index(taxonomy: &Taxonomy, emotion: usize) -> usize {
    let names = taxonomy.emotion_names();
    let family = taxonomy.family_of(&names[emotion]).unwrap_or("");
    taxonomy
        .family_names()
        .iter()
        .position(|f| f == family)
        .unwrap_or(0)
}

/// One (view, decision, register, half) measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub view: View,
    pub decision: Decision,
    pub register: String,
    pub half: String,
    pub accuracy: Accuracy,
}

/// A family confusion matrix: `counts[truth][predicted]`, families in taxonomy order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Confusion {
    pub register: String,
    pub families: Vec<String>,
    pub counts: Vec<Vec<usize>>,
}

/// The full report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub k: usize,
    /// Embedder id per view evaluated.
    pub embedders: Vec<(View, String)>,
    pub cells: Vec<Cell>,
    /// The combination with the best dev mean.
    pub chosen: (View, Decision),
    pub confusion: Vec<Confusion>,
    /// One anchor per condition held out, the chosen view trained on the rest.
    pub heldout_anchors: Option<Accuracy>,
    /// Seconds to train each view's MLP and linear heads (as recorded when trained).
    pub train_seconds: Vec<(View, f64)>,
    /// Milliseconds to map one feeling with the chosen view, embedding included.
    pub mapping_ms: f64,
}

/// The labelled texts of one register, with their label indices.
pub struct Register {
    pub name: String,
    pub examples: Vec<FeelingExample>,
}

impl Register {
    fn truth(&self, taxonomy: &Taxonomy) -> Vec<[usize; 4]> {
        self.examples
            .iter()
            .filter_map(|f| taxonomy.label_index(&f.emotion, &f.politeness, &f.urgency, &f.trust))
            .map(|l| [l.emotion, l.politeness, l.urgency, l.trust])
            .collect()
    }
}

/// Load the registers from a project root.
pub fn load_registers(root: &Path, taxonomy: &Taxonomy) -> Result<Vec<Register>, EmotionError> {
    REGISTERS
        .iter()
        .map(|(name, path)| {
            Ok(Register {
                name: name.to_string(),
                examples: load_feelings(&root.join(path), taxonomy)?,
            })
        })
        .collect()
}

/// The seeded held-out split: one anchor index per condition, drawn from the seed.
/// Paraphrases (index >= 10) always train.
pub fn heldout_split(anchors: &[Anchor], seed: u64) -> (Vec<Anchor>, Vec<Anchor>) {
    let mut rng = derive_rng(seed, &["emotion-eval", "heldout"]);
    let conditions = anchors
        .iter()
        .map(|a| a.condition_id)
        .max()
        .map_or(0, |m| m + 1);
    let held: Vec<usize> = (0..conditions)
        .map(|_| rng.random_range(0..ANCHORS_PER_CONDITION))
        .collect();
    anchors
        .iter()
        .cloned()
        .partition(|a| held[a.condition_id] != a.anchor_index)
}

fn labels(mapper: &Mapper, condition_id: usize) -> [usize; 4] {
    let l = mapper.taxonomy().labels_of(condition_id);
    [l.emotion, l.politeness, l.urgency, l.trust]
}

/// Score embedded texts under one decision rule.
pub fn score(
    mapper: &Mapper,
    xs: &[SparseVec],
    truth: &[[usize; 4]],
    decision: Decision,
) -> Accuracy {
    let mut tally = Tally::default();
    for (x, t) in xs.iter().zip(truth) {
        let v = mapper.decide_embedded(x, decision);
        tally.add(mapper.taxonomy(), labels(mapper, v.condition_id), *t);
    }
    tally.accuracy()
}

/// Options of [`evaluate`].
pub struct EvalOptions {
    pub views: Vec<View>,
    pub split_seed: u64,
    pub heldout_anchors: bool,
}

/// Run every measurement. `base` supplies k, the training and TF-IDF settings; its view
/// and decision are what the report compares against.
pub fn evaluate(
    root: &Path,
    base: &MapperConfig,
    registers: &[Register],
    options: &EvalOptions,
) -> Result<EvalReport, EmotionError> {
    let mut cells = Vec::new();
    let mut embedders = Vec::new();
    let mut train_seconds = Vec::new();
    let mut mappers = Vec::new();
    for &view in &options.views {
        let config = MapperConfig {
            view,
            ..base.clone()
        };
        let (mapper, _) = Mapper::load_or_train(root, &config)?;
        embedders.push((view, mapper.embedder().id()));
        train_seconds.push((
            view,
            mapper.meta().train_seconds + mapper.linear_meta().train_seconds,
        ));
        for r in registers {
            let texts: Vec<String> = r.examples.iter().map(|e| e.text.clone()).collect();
            let truth = r.truth(mapper.taxonomy());
            let xs = mapper.embed(&texts)?;
            for half in ["dev", "test"] {
                let pick: Vec<usize> = (0..texts.len())
                    .filter(|&i| is_test(&texts[i]) == (half == "test"))
                    .collect();
                let hx: Vec<SparseVec> = pick.iter().map(|&i| xs[i].clone()).collect();
                let ht: Vec<[usize; 4]> = pick.iter().map(|&i| truth[i]).collect();
                for decision in Decision::ALL {
                    cells.push(Cell {
                        view,
                        decision,
                        register: r.name.clone(),
                        half: half.into(),
                        accuracy: score(&mapper, &hx, &ht, decision),
                    });
                }
            }
        }
        mappers.push((view, mapper));
    }
    let dev_mean = |v: View, d: Decision| -> f64 {
        let c: Vec<f64> = cells
            .iter()
            .filter(|c| c.view == v && c.decision == d && c.half == "dev")
            .map(|c| c.accuracy.mean())
            .collect();
        c.iter().sum::<f64>() / c.len().max(1) as f64
    };
    let mut chosen = (options.views[0], Decision::Vote);
    for &v in &options.views {
        for d in Decision::ALL {
            if dev_mean(v, d) > dev_mean(chosen.0, chosen.1) + 1e-12 {
                chosen = (v, d);
            }
        }
    }
    let (_, mapper) = mappers
        .iter()
        .find(|(v, _)| *v == chosen.0)
        .ok_or_else(|| EmotionError::Invalid("no view evaluated".into()))?;

    let families = mapper.taxonomy().family_names();
    let mut confusion = Vec::new();
    for r in registers {
        let test: Vec<&FeelingExample> = r.examples.iter().filter(|e| is_test(&e.text)).collect();
        let texts: Vec<String> = test.iter().map(|e| e.text.clone()).collect();
        let xs = mapper.embed(&texts)?;
        let mut counts = vec![vec![0usize; families.len()]; families.len()];
        for (x, e) in xs.iter().zip(&test) {
            let v = mapper.decide_embedded(x, chosen.1);
            let predicted = family_index(mapper.taxonomy(), labels(mapper, v.condition_id)[0]);
            let truth = families.iter().position(|f| *f == e.family).unwrap_or(0);
            counts[truth][predicted] += 1;
        }
        confusion.push(Confusion {
            register: r.name.clone(),
            families: families.clone(),
            counts,
        });
    }

    // Latency: one feeling at a time, embedding included. A trailing space tokenises the
    // same but misses the vector cache, so the encoder really runs.
    let sample: Vec<String> = registers
        .first()
        .map(|r| {
            r.examples
                .iter()
                .take(40)
                .map(|e| format!("{} ", e.text))
                .collect()
        })
        .unwrap_or_default();
    let started = std::time::Instant::now();
    for t in &sample {
        let x = mapper.embed(std::slice::from_ref(t))?;
        let _ = mapper.decide_embedded(&x[0], chosen.1);
    }
    let mapping_ms = started.elapsed().as_secs_f64() * 1000.0 / sample.len().max(1) as f64;

    let heldout_anchors = if options.heldout_anchors {
        let config = MapperConfig {
            view: chosen.0,
            ..base.clone()
        };
        let (taxonomy, all) = Mapper::training_set(root, &config)?;
        let (train, test) = heldout_split(&all, options.split_seed);
        let train_texts: Vec<String> = train.iter().map(|a| a.text.clone()).collect();
        let embedder = super::mapper::view_embedder(root, chosen.0, &train_texts, &config.tfidf)?;
        let split = Mapper::train(
            &taxonomy,
            train,
            embedder,
            &config.train,
            &config.linear,
            config.k,
            String::new(),
        )?;
        let texts: Vec<String> = test.iter().map(|a| a.text.clone()).collect();
        let truth: Vec<[usize; 4]> = test.iter().map(|a| anchor_targets(&taxonomy, a)).collect();
        let xs = split.embed(&texts)?;
        Some(score(&split, &xs, &truth, chosen.1))
    } else {
        None
    };

    Ok(EvalReport {
        k: base.k,
        embedders,
        cells,
        chosen,
        confusion,
        heldout_anchors,
        train_seconds,
        mapping_ms,
    })
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

impl EvalReport {
    /// The cell of one combination.
    pub fn cell(
        &self,
        view: View,
        decision: Decision,
        register: &str,
        half: &str,
    ) -> Option<&Accuracy> {
        self.cells
            .iter()
            .find(|c| {
                c.view == view && c.decision == decision && c.register == register && c.half == half
            })
            .map(|c| &c.accuracy)
    }

    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let (view, decision) = self.chosen;
        let mut s = format!(
            "# Emotion mapping quality\n\nchosen on the dev half: view `{}`, decision `{}` (k = {})\n\n",
            view.as_str(),
            decision.as_str(),
            self.k
        );
        s.push_str("## Test half, chosen combination\n\n");
        s.push_str(
            "| register | n | family | emotion | politeness | urgency | trust | condition |\n",
        );
        s.push_str("|---|---|---|---|---|---|---|---|\n");
        let registers: Vec<String> = self.confusion.iter().map(|c| c.register.clone()).collect();
        let row = |name: &str, a: &Accuracy| {
            format!("| {name} | {} | {} |\n", a.n, a.percents().join(" | "))
        };
        for r in &registers {
            if let Some(a) = self.cell(view, decision, r, "test") {
                s.push_str(&row(r, a));
            }
        }
        // The first set's figures as they were reported before the fourth register came.
        let first: Vec<&Accuracy> = FIRST_SET
            .iter()
            .filter_map(|r| self.cell(view, decision, r, "test"))
            .collect();
        if first.len() == FIRST_SET.len() && registers.len() > first.len() {
            s.push_str(&row("first three (mean)", &Accuracy::mean_of(&first)));
        }
        s.push_str("\n## Every combination: mean over registers of (family, emotion, politeness, urgency, trust)\n\n");
        s.push_str("| view | decision | dev mean | test mean | test family | test emotion | test politeness | test urgency | test trust |\n");
        s.push_str("|---|---|---|---|---|---|---|---|---|\n");
        let views: Vec<View> = self.embedders.iter().map(|(v, _)| *v).collect();
        for &v in &views {
            for d in Decision::ALL {
                let of = |half: &str| -> Vec<&Accuracy> {
                    registers
                        .iter()
                        .filter_map(|r| self.cell(v, d, r, half))
                        .collect()
                };
                let dev = Accuracy::mean_of(&of("dev"));
                let test = Accuracy::mean_of(&of("test"));
                let [family, emotion, politeness, urgency, trust, _] = test.percents();
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {family} | {emotion} | {politeness} | {urgency} | {trust} |\n",
                    v.as_str(),
                    d.as_str(),
                    pct(dev.mean()),
                    pct(test.mean()),
                ));
            }
        }
        s.push_str("\n## Family confusion, chosen combination, test half (rows: truth, columns: predicted)\n");
        for c in &self.confusion {
            s.push_str(&format!(
                "\n{}\n\n| | {} |\n|---|{}\n",
                c.register,
                c.families.join(" | "),
                "---|".repeat(c.families.len())
            ));
            for (f, row) in c.families.iter().zip(&c.counts) {
                let cells: Vec<String> = row.iter().map(|n| n.to_string()).collect();
                s.push_str(&format!("| {f} | {} |\n", cells.join(" | ")));
            }
        }
        if let Some(a) = &self.heldout_anchors {
            let [family, emotion, politeness, urgency, trust, condition] = a.percents();
            s.push_str(&format!(
                "\nheld-out anchors (one per condition, {} texts; in-distribution): family {family}, emotion {emotion}, politeness {politeness}, urgency {urgency}, trust {trust}, condition {condition}\n",
                a.n,
            ));
        }
        s.push_str("\nembedders:\n");
        for (v, id) in &self.embedders {
            s.push_str(&format!("- {}: {id}\n", v.as_str()));
        }
        let train: Vec<String> = self
            .train_seconds
            .iter()
            .map(|(v, t)| format!("{} {:.1} s", v.as_str(), t))
            .collect();
        s.push_str(&format!(
            "\ntraining, MLP + linear heads (as recorded when each model was trained): {}\nmapping: {:.1} ms per feeling (chosen view, embedding included, uncached)\n",
            train.join(", "),
            self.mapping_ms
        ));
        s
    }
}
