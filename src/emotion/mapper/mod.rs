//! Feeling text -> emotion condition + emotion instruction.
//!
//! The mapper embeds a feeling with the configured [`View`] (the sentence encoder, the
//! hashed n-gram TF-IDF, or both side by side), projects it into the classifier's hidden
//! layer, and decides the condition ([`Decision`]):
//! - `vote` — the paper's rule: the k nearest training texts (cosine similarity in the
//!   hidden space) vote for their condition, each with weight equal to its similarity
//!   (negative similarities count zero); the condition with the largest summed weight wins
//!   (ties: the lower id); its share of the weight is the confidence.
//! - `heads` — each classifier head's arg-max, combined into a condition.
//! - `blend` — per label, the mean of the head's probability and the neighbours' weighted
//!   vote for that label alone (a per-dimension vote: a neighbour that agrees on urgency
//!   but not on the emotion still counts for urgency).
//! - `linear` — every label from the [`LinearHeads`] (a softmax regression per label on
//!   the view itself, no hidden layer).
//! - `mixed` — the emotion from the MLP's head, politeness, urgency and trust from the
//!   linear heads: each label decided by the classifier that reads its evidence best on
//!   the dev half.
//!
//! The training texts are the 5,940 anchors plus the generated training paraphrases
//! (`anchors::paraphrases`); only the published anchors are ever chosen as an emotion
//! instruction: one of the winning condition's 10, drawn from the caller's RNG.
//!
//! [`Mapper::load_or_train`] is what commands call ([`Mapper::shared`], what the `emotions`
//! stage calls, is the same built once per process, so a run over ten domains builds one
//! mapper): it reuses a trained model from the emotion cache (`.cache/emotion/`, see
//! [`cache_dir`]) when the file still hashes as recorded in that directory's
//! `_checksums.json` and its fingerprint (taxonomy, every
//! training text and label, embedder id with its model hash, training settings) matches,
//! and otherwise trains and writes it. A model that fails its checksum (corrupted or
//! edited: its labels could silently differ) is retrained, with a warning on stderr;
//! training is deterministic, so the retrained model is the one the fingerprint stands
//! for. The sentence encoder's vectors are cached there too ([`super::embed_cache`]).
//!
//! This module holds the configuration, the mapper and its decision rules; building one
//! (view embedders, training, the model cache) is `train.rs`'s, the per-process memo
//! behind [`Mapper::shared`] is `shared.rs`'s.
//!
//! Architecture invariant: the mapper never sees a task or a database — only feeling text.

use super::EmotionError;
use super::anchors::{ANCHORS_PER_CONDITION, Anchor};
use super::classifier::{self, Classifier, Targets, TrainConfig};
use super::embed::{Embedder, SparseVec, TfidfConfig};
use super::linear::{LinearConfig, LinearHeads};
use super::taxonomy::{Condition, Taxonomy};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::path::Path;

mod shared;
mod train;

pub use train::{
    ENCODER_WEIGHT, LinearMeta, ModelMeta, ModelSource, cache_dir, cached_encoder, linear_path,
    model_path, vectors_dir, view_embedder,
};

/// What the classifier reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum View {
    /// The sentence encoder alone (all-MiniLM-L6-v2).
    Encoder,
    /// The hashed word + character n-gram TF-IDF alone (no model files needed).
    Tfidf,
    /// Both, concatenated: meaning from the encoder, explicit cues ("curt", "no rush")
    /// from the n-grams.
    EncoderTfidf,
}

impl View {
    pub const ALL: [View; 3] = [View::Encoder, View::Tfidf, View::EncoderTfidf];

    pub fn as_str(self) -> &'static str {
        match self {
            View::Encoder => "encoder",
            View::Tfidf => "tfidf",
            View::EncoderTfidf => "encoder-tfidf",
        }
    }

    pub fn needs_encoder(self) -> bool {
        self != View::Tfidf
    }
}

/// How a condition is chosen from the classifier (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Vote,
    Heads,
    Blend,
    Linear,
    Mixed,
}

impl Decision {
    pub const ALL: [Decision; 5] = [
        Decision::Vote,
        Decision::Heads,
        Decision::Blend,
        Decision::Linear,
        Decision::Mixed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Vote => "vote",
            Decision::Heads => "heads",
            Decision::Blend => "blend",
            Decision::Linear => "linear",
            Decision::Mixed => "mixed",
        }
    }
}

/// Everything that decides the offline mapper.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapperConfig {
    /// Neighbours that vote.
    pub k: usize,
    pub view: View,
    pub decision: Decision,
    /// Train on the generated paraphrases as well as the anchors.
    pub paraphrases: bool,
    pub tfidf: TfidfConfig,
    pub train: TrainConfig,
    /// The linear heads' training (`linear` and `mixed` decisions).
    #[serde(default)]
    pub linear: LinearConfig,
}

impl Default for MapperConfig {
    fn default() -> Self {
        MapperConfig {
            k: 10,
            view: View::EncoderTfidf,
            decision: Decision::Linear,
            paraphrases: true,
            tfidf: TfidfConfig::default(),
            train: TrainConfig::default(),
            linear: LinearConfig::default(),
        }
    }
}

/// The result of mapping one feeling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mapping {
    pub family: String,
    pub emotion: String,
    pub politeness: String,
    pub urgency: String,
    pub trust: String,
    pub condition_id: usize,
    /// The winning condition's share of the neighbours' similarity weight (0..=1].
    pub confidence: f32,
    pub anchor_index: usize,
    pub anchor_text: String,
}

/// The vote for one feeling, before an anchor is chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Vote {
    pub condition_id: usize,
    pub confidence: f32,
}

pub struct Mapper {
    taxonomy: Taxonomy,
    conditions: Vec<Condition>,
    anchors: Vec<Anchor>,
    /// Index into `anchors` by (condition id, anchor index).
    by_condition: Vec<[usize; ANCHORS_PER_CONDITION]>,
    embedder: Box<dyn Embedder>,
    classifier: Classifier,
    linear: LinearHeads,
    linear_meta: LinearMeta,
    /// Unit-length hidden vectors of `anchors`, in order.
    anchor_hidden: Vec<Vec<f32>>,
    k: usize,
    decision: Decision,
    meta: ModelMeta,
}

/// Targets of an anchor (label indices in taxonomy order).
pub fn anchor_targets(taxonomy: &Taxonomy, a: &Anchor) -> Targets {
    let l = taxonomy.labels_of(a.condition_id);
    [l.emotion, l.politeness, l.urgency, l.trust]
}

/// Head sizes in the order emotion, politeness, urgency, trust.
pub fn head_sizes(taxonomy: &Taxonomy) -> Vec<usize> {
    vec![
        taxonomy.emotion_names().len(),
        taxonomy.politeness.len(),
        taxonomy.urgency.len(),
        taxonomy.trust.len(),
    ]
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.into_iter().map(|x| x / n).collect()
    } else {
        v
    }
}

impl Mapper {
    /// How this mapper decides (the paper's `vote` unless set).
    pub fn with_decision(mut self, decision: Decision) -> Mapper {
        self.decision = decision;
        self
    }

    pub fn decision(&self) -> Decision {
        self.decision
    }

    /// [`Mapper::load_or_train`] once per process for a project and configuration: what
    /// the `emotions` stage calls, so a run over ten domains loads the encoder, reads and
    /// checks the vector cache, fits the n-gram view and assembles the mapper once instead
    /// of ten times. The second value says whether this call reused a mapper already built.
    ///
    /// The shared mapper is rebuilt (through `load_or_train`, with all its checks and
    /// warnings) when any file it is built from has changed size or modification time since
    /// it was built: the taxonomy, anchors and checked-in vectors, the encoder's files, and
    /// the trained models and their checksums in the emotion cache. The writable vector
    /// cache is not among them: the mapper's own embedder grows it with each domain's new
    /// feelings, and it only ever holds what the encoder computes for a text.
    pub fn shared(
        root: &Path,
        config: &MapperConfig,
    ) -> Result<(std::sync::Arc<Mapper>, bool), EmotionError> {
        shared::get(root, config)
    }

    pub fn taxonomy(&self) -> &Taxonomy {
        &self.taxonomy
    }

    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    pub fn embedder(&self) -> &dyn Embedder {
        self.embedder.as_ref()
    }

    pub fn meta(&self) -> &ModelMeta {
        &self.meta
    }

    pub fn linear_meta(&self) -> &LinearMeta {
        &self.linear_meta
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// Embed texts (one call to the embedder, so an endpoint sees one batch).
    pub fn embed(&self, texts: &[String]) -> Result<Vec<SparseVec>, EmotionError> {
        Ok(self.embedder.embed_sparse(texts)?)
    }

    /// The nearest-anchor vote for an embedded feeling.
    pub fn vote_embedded(&self, x: &SparseVec) -> Vote {
        let sims = self.neighbours(&self.classifier.hidden_of(x));
        let top = &sims[..];
        let mut weight = vec![0.0f32; self.taxonomy.condition_count()];
        let mut total = 0.0f32;
        for &(s, i) in top {
            let w = s.max(0.0);
            weight[self.anchors[i].condition_id] += w;
            total += w;
        }
        if total <= 0.0 {
            // Nothing similar at all: fall back to an unweighted vote.
            for &(_, i) in top {
                weight[self.anchors[i].condition_id] += 1.0;
            }
            total = top.len() as f32;
        }
        let mut best = 0;
        for (c, w) in weight.iter().enumerate() {
            if *w > weight[best] {
                best = c;
            }
        }
        Vote {
            condition_id: best,
            confidence: if total > 0.0 {
                weight[best] / total
            } else {
                0.0
            },
        }
    }

    /// The k nearest training texts: (similarity, index), most similar first.
    fn neighbours(&self, hidden: &[f32]) -> Vec<(f32, usize)> {
        let q = unit(hidden.to_vec());
        let mut sims: Vec<(f32, usize)> = self
            .anchor_hidden
            .iter()
            .enumerate()
            .map(|(i, a)| (a.iter().zip(&q).map(|(x, y)| x * y).sum::<f32>(), i))
            .collect();
        // Highest similarity first; equal similarities keep file order.
        sims.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        sims.truncate(self.k);
        sims
    }

    /// The condition for an embedded feeling under a decision rule.
    pub fn decide_embedded(&self, x: &SparseVec, decision: Decision) -> Vote {
        match decision {
            Decision::Vote => self.vote_embedded(x),
            Decision::Heads | Decision::Linear | Decision::Mixed => {
                let mlp = self.classifier.head_probabilities(x);
                let lin = self.linear.head_probabilities(x);
                // Per label: `heads` reads the MLP, `linear` the linear heads, `mixed` the
                // MLP for the emotion and the linear heads for the dimensions.
                let p: Vec<&Vec<f32>> = (0..4)
                    .map(|h| match decision {
                        Decision::Linear => &lin[h],
                        Decision::Mixed if h > 0 => &lin[h],
                        _ => &mlp[h],
                    })
                    .collect();
                let l = [0, 1, 2, 3].map(|h| classifier::argmax(p[h]));
                let confidence = (0..4).map(|h| p[h][l[h]]).product();
                Vote {
                    condition_id: self.condition_of(l),
                    confidence,
                }
            }
            Decision::Blend => {
                let hidden = self.classifier.hidden_of(x);
                let p = self.classifier.head_probabilities(x);
                let mut share: Vec<Vec<f32>> = p.iter().map(|h| vec![0.0; h.len()]).collect();
                let top = self.neighbours(&hidden);
                let total: f32 = top.iter().map(|(s, _)| s.max(0.0)).sum();
                for &(s, i) in &top {
                    let w = if total > 0.0 {
                        s.max(0.0) / total
                    } else {
                        1.0 / top.len() as f32
                    };
                    let t = anchor_targets(&self.taxonomy, &self.anchors[i]);
                    for h in 0..4 {
                        share[h][t[h]] += w;
                    }
                }
                let mut labels = [0usize; 4];
                let mut confidence = 1.0;
                for h in 0..4 {
                    let blended: Vec<f32> = p[h]
                        .iter()
                        .zip(&share[h])
                        .map(|(a, b)| 0.5 * (a + b))
                        .collect();
                    labels[h] = classifier::argmax(&blended);
                    confidence *= blended[labels[h]];
                }
                Vote {
                    condition_id: self.condition_of(labels),
                    confidence,
                }
            }
        }
    }

    fn condition_of(&self, l: [usize; 4]) -> usize {
        self.taxonomy.condition_id(super::taxonomy::LabelIndex {
            emotion: l[0],
            politeness: l[1],
            urgency: l[2],
            trust: l[3],
        })
    }

    /// Decisions for many feelings (embedded in one batch), under the mapper's rule.
    pub fn votes(&self, texts: &[String]) -> Result<Vec<Vote>, EmotionError> {
        Ok(self
            .embed(texts)?
            .iter()
            .map(|x| self.decide_embedded(x, self.decision))
            .collect())
    }

    /// Turn a vote into a mapping: one of the condition's anchors, drawn from `rng`.
    pub fn choose_anchor<R: rand::Rng + ?Sized>(&self, vote: &Vote, rng: &mut R) -> Mapping {
        self.choose_anchor_where(vote, rng, &|_| true)
    }

    /// [`Mapper::choose_anchor`] among the anchors `suits` accepts (say, those that tell
    /// of no event the task lacks); among all of the condition's anchors when it accepts
    /// none. Every published anchor is a second-person instruction of 30-60 words
    /// (validated on load), so any of them can be the simulated user's emotion instruction.
    pub fn choose_anchor_where<R: rand::Rng + ?Sized>(
        &self,
        vote: &Vote,
        rng: &mut R,
        suits: &dyn Fn(&str) -> bool,
    ) -> Mapping {
        let c = &self.conditions[vote.condition_id];
        let slots = &self.by_condition[vote.condition_id];
        let present: Vec<usize> = slots.iter().copied().filter(|&i| i != usize::MAX).collect();
        let suiting: Vec<usize> = present
            .iter()
            .copied()
            .filter(|&i| suits(&self.anchors[i].text))
            .collect();
        let available = if suiting.is_empty() { present } else { suiting };
        // The mapper is only built from validated anchor sets, but a training split may lack
        // some of a condition's anchors; choose among those present.
        let (anchor_index, anchor_text) = if available.is_empty() {
            (0, String::new())
        } else {
            let a = &self.anchors[available[rng.random_range(0..available.len())]];
            (a.anchor_index, a.text.clone())
        };
        Mapping {
            family: c.family.clone(),
            emotion: c.emotion.clone(),
            politeness: c.politeness.clone(),
            urgency: c.urgency.clone(),
            trust: c.trust.clone(),
            condition_id: c.id,
            confidence: vote.confidence,
            anchor_index,
            anchor_text,
        }
    }

    /// Map one feeling: vote, then pick one of the winning condition's anchors with `rng`.
    pub fn map<R: rand::Rng + ?Sized>(
        &self,
        text: &str,
        rng: &mut R,
    ) -> Result<Mapping, EmotionError> {
        let vote = self.votes(&[text.to_string()])?.remove(0);
        Ok(self.choose_anchor(&vote, rng))
    }
}
