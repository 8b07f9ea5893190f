//! The quality report of `tracer emotion eval`.
//!
//! Two measurements. (1) *Held-out anchors*: a seeded split holds out one anchor per
//! condition (594); a mapper trained on the other 5,346 predicts them — per-head arg-max
//! accuracy of the classifier and the accuracy of the nearest-anchor vote. This checks that
//! the classifier learned the taxonomy; the held-out anchors share phrase banks with the
//! training ones, so it is an easy, in-distribution test. (2) *Feelings*: the hand-written
//! descriptions in `tests/fixtures/feelings/feelings.jsonl`, worded the way a feeling
//! generator writes about a customer (third person, no instructions), mapped by the
//! production mapper — family, emotion and per-dimension accuracy of the vote, plus the
//! classifier heads' arg-max for comparison. This is the number that matters.
//!
//! Architecture invariant: reads only the fixture and the anchors it is given; never
//! trains on the feelings.

use super::EmotionError;
use super::anchors::{ANCHORS_PER_CONDITION, Anchor};
use super::mapper::{Mapper, MapperConfig, anchor_targets};
use super::taxonomy::Taxonomy;
use crate::seed::derive_rng;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One hand-labelled feeling description.
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

/// Read a feelings fixture; every label must be known and the family must own the emotion.
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

#[derive(Default)]
struct Tally {
    n: usize,
    hits: [usize; 6],
}

impl Tally {
    fn add(&mut self, taxonomy: &Taxonomy, predicted: [usize; 4], truth: [usize; 4]) {
        let names = taxonomy.emotion_names();
        let fam = |e: usize| taxonomy.family_of(&names[e]).unwrap_or("").to_string();
        self.n += 1;
        let ok = [
            fam(predicted[0]) == fam(truth[0]),
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

/// The full report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub embedder: String,
    pub k: usize,
    pub heldout_heads: Accuracy,
    pub heldout_vote: Accuracy,
    pub feelings_vote: Accuracy,
    pub feelings_heads: Accuracy,
    pub train_seconds_split: f64,
    pub train_seconds_full: f64,
    pub mapping_ms: f64,
}

/// The seeded held-out split: one anchor index per condition, drawn from the seed.
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

fn vote_labels(mapper: &Mapper, condition_id: usize) -> [usize; 4] {
    let l = mapper.taxonomy().labels_of(condition_id);
    [l.emotion, l.politeness, l.urgency, l.trust]
}

fn head_labels(mapper: &Mapper, x: &super::embed::SparseVec) -> [usize; 4] {
    let p = mapper.classifier().predict(x);
    [p[0], p[1], p[2], p[3]]
}

/// Score a mapper on labelled texts: (vote accuracy, head accuracy).
pub fn score(
    mapper: &Mapper,
    texts: &[String],
    truth: &[[usize; 4]],
) -> Result<(Accuracy, Accuracy), EmotionError> {
    let xs = mapper.embed(texts)?;
    let (mut vote, mut heads) = (Tally::default(), Tally::default());
    for (x, t) in xs.iter().zip(truth) {
        let v = mapper.vote_embedded(x);
        vote.add(mapper.taxonomy(), vote_labels(mapper, v.condition_id), *t);
        heads.add(mapper.taxonomy(), head_labels(mapper, x), *t);
    }
    Ok((vote.accuracy(), heads.accuracy()))
}

/// Run both measurements. `full` is the production mapper (trained on all anchors).
pub fn evaluate(
    taxonomy: &Taxonomy,
    anchors: &[Anchor],
    full: &Mapper,
    feelings: &[FeelingExample],
    config: &MapperConfig,
    split_seed: u64,
    split_embedder: Option<Box<dyn super::embed::Embedder>>,
) -> Result<EvalReport, EmotionError> {
    let (train, test) = heldout_split(anchors, split_seed);
    let split = match split_embedder {
        None => Mapper::train_offline(taxonomy, train, config)?,
        Some(e) => Mapper::train(taxonomy, train, e, &config.train, config.k, String::new())?,
    };
    let texts: Vec<String> = test.iter().map(|a| a.text.clone()).collect();
    let truth: Vec<[usize; 4]> = test.iter().map(|a| anchor_targets(taxonomy, a)).collect();
    let (heldout_vote, heldout_heads) = score(&split, &texts, &truth)?;

    let texts: Vec<String> = feelings.iter().map(|f| f.text.clone()).collect();
    let truth: Vec<[usize; 4]> = feelings
        .iter()
        .filter_map(|f| taxonomy.label_index(&f.emotion, &f.politeness, &f.urgency, &f.trust))
        .map(|l| [l.emotion, l.politeness, l.urgency, l.trust])
        .collect();
    let started = std::time::Instant::now();
    let (feelings_vote, feelings_heads) = score(full, &texts, &truth)?;
    let mapping_ms = started.elapsed().as_secs_f64() * 1000.0 / texts.len().max(1) as f64;
    Ok(EvalReport {
        embedder: full.embedder().id(),
        k: full.k(),
        heldout_heads,
        heldout_vote,
        feelings_vote,
        feelings_heads,
        train_seconds_split: split.meta().train_seconds,
        train_seconds_full: full.meta().train_seconds,
        mapping_ms,
    })
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

impl EvalReport {
    /// The report as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut s = format!(
            "# Emotion mapping quality\n\nembedder: {}; vote over k = {} nearest anchors\n\n",
            self.embedder, self.k
        );
        s.push_str(
            "| measurement | n | family | emotion | politeness | urgency | trust | condition |\n",
        );
        s.push_str("|---|---|---|---|---|---|---|---|\n");
        for (name, a) in [
            ("held-out anchors, classifier heads", &self.heldout_heads),
            ("held-out anchors, nearest-anchor vote", &self.heldout_vote),
            (
                "feelings fixture, nearest-anchor vote (the mapper)",
                &self.feelings_vote,
            ),
            ("feelings fixture, classifier heads", &self.feelings_heads),
        ] {
            s.push_str(&format!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} |\n",
                a.n,
                pct(a.family),
                pct(a.emotion),
                pct(a.politeness),
                pct(a.urgency),
                pct(a.trust),
                pct(a.condition)
            ));
        }
        s.push_str(&format!(
            "\ntraining: {:.2} s (split model), {:.2} s (production model, as recorded when it was trained)\nmapping: {:.3} ms per feeling\n",
            self.train_seconds_split, self.train_seconds_full, self.mapping_ms
        ));
        s
    }
}
