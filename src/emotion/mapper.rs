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
//! Architecture invariant: the mapper never sees a task or a database — only feeling text.

use super::EmotionError;
use super::anchors::{self, ANCHORS_PER_CONDITION, Anchor};
use super::classifier::{self, Classifier, Targets, TrainConfig, TrainReport};
use super::embed::{Concat, Embedder, HashedTfidf, Scaled, SparseVec, TfidfConfig};
use super::embed_cache::{CacheState, CachedEmbedder};
use super::encoder::{self, MiniLm};
use super::linear::{self, LinearConfig, LinearHeads};
use super::taxonomy::{Condition, Taxonomy};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Bump when the model file's meaning changes, so old caches are retrained.
const MODEL_FORMAT: u32 = 2;

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

/// The emotion cache: `TRACER_EMOTION_CACHE`, else `.cache/emotion` under `root`.
pub fn cache_dir(root: &Path) -> PathBuf {
    match std::env::var_os(crate::config::ENV_EMOTION_CACHE) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => root.join(".cache/emotion"),
    }
}

/// The sentence encoder with its vector cache (the model must be on disk; the error says
/// how to fetch it).
pub fn cached_encoder(root: &Path) -> Result<(CachedEmbedder, CacheState), EmotionError> {
    let model = MiniLm::load(&encoder::model_dir(root))?;
    let seeds = vectors_dir(root);
    let cached = CachedEmbedder::open_seeded(Box::new(model), &cache_dir(root), Some(&seeds));
    for state in [cached.seed_state(), cached.state()] {
        if let CacheState::Corrupt(why) = state {
            eprintln!("warning: ignoring a damaged vector cache: {why}");
        }
    }
    let state = cached.state().clone();
    Ok((cached, state))
}

/// The checked-in encoder vectors of the training and evaluation texts
/// (`emotion_anchors/vectors/`, written by `tracer emotion vectors`).
pub fn vectors_dir(root: &Path) -> PathBuf {
    super::anchors::anchors_dir(root).join("vectors")
}

/// The encoder's weight beside the n-gram view in `encoder-tfidf` (both unit length).
/// Chosen on the evaluation sets' dev half with the linear heads (mean of family, emotion
/// and the three dimensions): weight 2 -> 81.1%, 1 -> 82.6%, 0.5 -> 83.3%.
pub const ENCODER_WEIGHT: f32 = 0.5;

/// The embedder of a view; the TF-IDF part is fitted on `texts` (the training texts).
pub fn view_embedder(
    root: &Path,
    view: View,
    texts: &[String],
    tfidf: &TfidfConfig,
) -> Result<Box<dyn Embedder>, EmotionError> {
    let fit = || Box::new(HashedTfidf::fit(texts, tfidf.clone())) as Box<dyn Embedder>;
    Ok(match view {
        View::Tfidf => fit(),
        View::Encoder => Box::new(cached_encoder(root)?.0),
        View::EncoderTfidf => Box::new(Concat::new(vec![
            Box::new(Scaled::new(
                Box::new(cached_encoder(root)?.0),
                ENCODER_WEIGHT,
            )),
            fit(),
        ])),
    })
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

/// Stored with the model: how it was made and how long it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    pub format: u32,
    pub fingerprint: String,
    pub embedder: String,
    pub train: TrainConfig,
    pub examples: usize,
    pub report: TrainReport,
    pub train_seconds: f64,
}

/// Stored with the linear heads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearMeta {
    pub fingerprint: String,
    pub config: LinearConfig,
    pub examples: usize,
    pub train_seconds: f64,
}

/// Whether `load_or_train` reused the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelSource {
    Cached,
    Trained,
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

/// Where a trained model with this fingerprint is cached.
pub fn model_path(root: &Path, fingerprint: &str) -> PathBuf {
    cache_dir(root).join(format!(
        "mapper-{}.bin",
        fingerprint.get(..16).unwrap_or(fingerprint)
    ))
}

/// Where linear heads with this fingerprint are cached.
pub fn linear_path(root: &Path, fingerprint: &str) -> PathBuf {
    cache_dir(root).join(format!(
        "linear-{}.bin",
        fingerprint.get(..16).unwrap_or(fingerprint)
    ))
}

fn train_linear(
    taxonomy: &Taxonomy,
    xs: &[SparseVec],
    targets: &[Targets],
    input_dim: usize,
    config: &LinearConfig,
    fingerprint: String,
) -> (LinearHeads, LinearMeta) {
    let started = std::time::Instant::now();
    let model = LinearHeads::train(xs, targets, input_dim, &head_sizes(taxonomy), config);
    let meta = LinearMeta {
        fingerprint,
        config: config.clone(),
        examples: xs.len(),
        train_seconds: started.elapsed().as_secs_f64(),
    };
    (model, meta)
}

impl Mapper {
    /// Train the classifier on `anchors` (any subset, e.g. a training split) with the given
    /// embedder and build the voting index over the same anchors.
    pub fn train(
        taxonomy: &Taxonomy,
        anchors: Vec<Anchor>,
        embedder: Box<dyn Embedder>,
        train: &TrainConfig,
        linear: &LinearConfig,
        k: usize,
        fingerprint: String,
    ) -> Result<Mapper, EmotionError> {
        let texts: Vec<String> = anchors.iter().map(|a| a.text.clone()).collect();
        let xs = embedder.embed_sparse(&texts)?;
        let targets: Vec<Targets> = anchors
            .iter()
            .map(|a| anchor_targets(taxonomy, a))
            .collect();
        let started = std::time::Instant::now();
        let (model, report) =
            Classifier::train(&xs, &targets, embedder.dim(), &head_sizes(taxonomy), train);
        let linear_fingerprint = linear_fingerprint(&fingerprint, linear);
        let meta = ModelMeta {
            format: MODEL_FORMAT,
            fingerprint,
            embedder: embedder.id(),
            train: train.clone(),
            examples: anchors.len(),
            report,
            train_seconds: started.elapsed().as_secs_f64(),
        };
        let linear = train_linear(
            taxonomy,
            &xs,
            &targets,
            embedder.dim(),
            linear,
            linear_fingerprint,
        );
        Self::assemble(taxonomy, anchors, embedder, (model, meta), linear, &xs, k)
    }

    fn assemble(
        taxonomy: &Taxonomy,
        anchors: Vec<Anchor>,
        embedder: Box<dyn Embedder>,
        (classifier, meta): (Classifier, ModelMeta),
        (linear, linear_meta): (LinearHeads, LinearMeta),
        xs: &[SparseVec],
        k: usize,
    ) -> Result<Mapper, EmotionError> {
        if k == 0 {
            return Err(EmotionError::Invalid("k must be at least 1".into()));
        }
        let anchor_hidden = xs.iter().map(|x| unit(classifier.hidden_of(x))).collect();
        let mut by_condition =
            vec![[usize::MAX; ANCHORS_PER_CONDITION]; taxonomy.condition_count()];
        for (i, a) in anchors.iter().enumerate() {
            if let Some(slot) = by_condition
                .get_mut(a.condition_id)
                .and_then(|s| s.get_mut(a.anchor_index))
            {
                *slot = i;
            }
        }
        Ok(Mapper {
            taxonomy: taxonomy.clone(),
            conditions: taxonomy.conditions(),
            anchors,
            by_condition,
            embedder,
            classifier,
            linear,
            linear_meta,
            anchor_hidden,
            k,
            decision: Decision::Vote,
            meta,
        })
    }

    /// How this mapper decides (the paper's `vote` unless set).
    pub fn with_decision(mut self, decision: Decision) -> Mapper {
        self.decision = decision;
        self
    }

    pub fn decision(&self) -> Decision {
        self.decision
    }

    /// The offline TF-IDF mapper, fitted and trained on `anchors` (needs no model files).
    pub fn train_offline(
        taxonomy: &Taxonomy,
        anchors: Vec<Anchor>,
        config: &MapperConfig,
    ) -> Result<Mapper, EmotionError> {
        let texts: Vec<String> = anchors.iter().map(|a| a.text.clone()).collect();
        let embedder = HashedTfidf::fit(&texts, config.tfidf.clone());
        Ok(Self::train(
            taxonomy,
            anchors,
            Box::new(embedder),
            &config.train,
            &config.linear,
            config.k,
            String::new(),
        )?
        .with_decision(config.decision))
    }

    /// The training texts of a project: its anchors, plus the paraphrases if configured.
    pub fn training_set(
        root: &Path,
        config: &MapperConfig,
    ) -> Result<(Taxonomy, Vec<Anchor>), EmotionError> {
        let taxonomy = Taxonomy::load(&super::taxonomy_path(root))?;
        let mut anchors = anchors::load(&super::anchors_path(root), &taxonomy)?;
        if config.paraphrases {
            let extra = anchors::paraphrases(&taxonomy, super::ANCHOR_SEED, &anchors)?;
            anchors.extend(extra);
        }
        Ok((taxonomy, anchors))
    }

    /// Load the project's taxonomy and anchors, then reuse a cached model if its
    /// fingerprint matches, else train the configured mapper and cache it.
    pub fn load_or_train(
        root: &Path,
        config: &MapperConfig,
    ) -> Result<(Mapper, ModelSource), EmotionError> {
        Self::load_or_train_with(root, config, None)
    }

    /// [`Mapper::load_or_train`] with a given embedder (e.g. an endpoint) in place of the
    /// configured view. The cache fingerprint covers the embedder's id.
    pub fn load_or_train_with(
        root: &Path,
        config: &MapperConfig,
        embedder: Option<Box<dyn Embedder>>,
    ) -> Result<(Mapper, ModelSource), EmotionError> {
        let (taxonomy, anchors) = Self::training_set(root, config)?;
        let texts: Vec<String> = anchors.iter().map(|a| a.text.clone()).collect();
        let embedder: Box<dyn Embedder> = match embedder {
            Some(e) => e,
            None => view_embedder(root, config.view, &texts, &config.tfidf)?,
        };
        let mut labelled = Vec::with_capacity(texts.len() * 64);
        for a in &anchors {
            labelled.extend_from_slice(format!("{}\t{}\n", a.condition_id, a.text).as_bytes());
        }
        let fingerprint = fingerprint(&[
            &serde_json::to_vec(&taxonomy).unwrap_or_default(),
            &labelled,
            embedder.id().as_bytes(),
            &serde_json::to_vec(&config.train).unwrap_or_default(),
            &MODEL_FORMAT.to_le_bytes(),
        ]);
        let path = model_path(root, &fingerprint);
        let linear_fp = linear_fingerprint(&fingerprint, &config.linear);
        let linear_file = linear_path(root, &linear_fp);
        let read = |path: &Path| match crate::artifact::read_cached(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("tracer: warning: {e}; retraining it");
                None
            }
        };
        let cached_mlp = read(&path)
            .and_then(|bytes| classifier::decode::<ModelMeta>(&path, &bytes).ok())
            .filter(|(model, meta)| {
                meta.fingerprint == fingerprint && model.input_dim == embedder.dim()
            });
        let Some(mlp) = cached_mlp else {
            let mapper = Self::train(
                &taxonomy,
                anchors,
                embedder,
                &config.train,
                &config.linear,
                config.k,
                fingerprint,
            )?;
            let bytes = classifier::encode(&mapper.classifier, &mapper.meta)?;
            crate::artifact::write_cached(&path, &bytes)
                .map_err(|e| EmotionError::Invalid(e.to_string()))?;
            let bytes = linear::encode(&mapper.linear, &mapper.linear_meta)?;
            crate::artifact::write_cached(&linear_file, &bytes)
                .map_err(|e| EmotionError::Invalid(e.to_string()))?;
            return Ok((mapper.with_decision(config.decision), ModelSource::Trained));
        };
        let xs = embedder.embed_sparse(&texts)?;
        let cached_linear = read(&linear_file)
            .and_then(|bytes| linear::decode::<LinearMeta>(&linear_file, &bytes).ok())
            .filter(|(model, meta)| {
                meta.fingerprint == linear_fp && model.input_dim == embedder.dim()
            });
        let (source, heads) = match cached_linear {
            Some(heads) => (ModelSource::Cached, heads),
            None => {
                let targets: Vec<Targets> = anchors
                    .iter()
                    .map(|a| anchor_targets(&taxonomy, a))
                    .collect();
                let heads = train_linear(
                    &taxonomy,
                    &xs,
                    &targets,
                    embedder.dim(),
                    &config.linear,
                    linear_fp,
                );
                let bytes = linear::encode(&heads.0, &heads.1)?;
                crate::artifact::write_cached(&linear_file, &bytes)
                    .map_err(|e| EmotionError::Invalid(e.to_string()))?;
                (ModelSource::Trained, heads)
            }
        };
        let mapper = Self::assemble(&taxonomy, anchors, embedder, mlp, heads, &xs, config.k)?;
        Ok((mapper.with_decision(config.decision), source))
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

/// The process-wide memo behind [`Mapper::shared`].
mod shared {
    use super::{EmotionError, Mapper, MapperConfig, cache_dir, encoder};
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::SystemTime;

    /// Where a mapper is read from and how it is configured: one slot each.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    struct Slot {
        root: PathBuf,
        cache: PathBuf,
        model: PathBuf,
        config: String,
    }

    /// Size and modification time of every file a mapper is built from.
    type Stamps = Vec<(PathBuf, u64, Option<SystemTime>)>;

    type Memo = Mutex<HashMap<Slot, (Stamps, Arc<Mapper>)>>;

    fn memo() -> &'static Memo {
        static MEMO: OnceLock<Memo> = OnceLock::new();
        MEMO.get_or_init(Default::default)
    }

    fn stamp(path: &Path, out: &mut Stamps) {
        if let Ok(meta) = std::fs::metadata(path) {
            out.push((path.to_path_buf(), meta.len(), meta.modified().ok()));
        }
    }

    /// The files of `dir` (and its subdirectories) whose names `keep` accepts.
    fn stamp_dir(dir: &Path, keep: &dyn Fn(&str) -> bool, out: &mut Stamps) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                stamp_dir(&path, keep, out);
            } else if keep(&e.file_name().to_string_lossy()) {
                stamp(&path, out);
            }
        }
    }

    fn stamps(slot: &Slot) -> Stamps {
        let mut out = Vec::new();
        stamp_dir(
            &super::anchors::anchors_dir(&slot.root),
            &|_| true,
            &mut out,
        );
        for f in encoder::MODEL_FILES {
            stamp(&slot.model.join(f), &mut out);
        }
        // Trained models and their checksums; not the vector cache (`embeddings-*`), which
        // the shared embedder itself grows, nor temporary files of atomic writes.
        stamp_dir(
            &slot.cache,
            &|name| !name.starts_with("embeddings-") && !name.contains(".tmp"),
            &mut out,
        );
        out.sort();
        out
    }

    pub(super) fn get(
        root: &Path,
        config: &MapperConfig,
    ) -> Result<(Arc<Mapper>, bool), EmotionError> {
        let slot = Slot {
            root: root.to_path_buf(),
            cache: cache_dir(root),
            model: encoder::model_dir(root),
            config: serde_json::to_string(config).unwrap_or_default(),
        };
        let now = stamps(&slot);
        {
            let memo = memo().lock().unwrap_or_else(|p| p.into_inner());
            if let Some((built, mapper)) = memo.get(&slot)
                && *built == now
            {
                return Ok((Arc::clone(mapper), true));
            }
        }
        let (mapper, _) = Mapper::load_or_train(root, config)?;
        let mapper = Arc::new(mapper);
        // Stamped after the build: training writes the model files this stamp covers.
        let built = stamps(&slot);
        memo()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(slot, (built, Arc::clone(&mapper)));
        Ok((mapper, false))
    }
}

/// The linear heads' cache key: the MLP's fingerprint (taxonomy, texts, labels, embedder)
/// plus their own training settings.
fn linear_fingerprint(fingerprint: &str, config: &LinearConfig) -> String {
    self::fingerprint(&[
        fingerprint.as_bytes(),
        &serde_json::to_vec(config).unwrap_or_default(),
    ])
}

fn fingerprint(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}
