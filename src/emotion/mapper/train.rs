//! Building a mapper: the embedder of a view, training the classifier and the linear heads,
//! and the emotion cache that keeps trained models by fingerprint ([`Mapper::load_or_train`]
//! reuses one when its checksum and fingerprint still match, else trains and writes it).
//!
//! Architecture invariant: the mapper never sees a task or a database — only feeling text.

use super::{Decision, Mapper, MapperConfig, View, anchor_targets, head_sizes, unit};
use crate::emotion::EmotionError;
use crate::emotion::anchors::{self, ANCHORS_PER_CONDITION, Anchor};
use crate::emotion::classifier::{self, Classifier, Targets, TrainConfig, TrainReport};
use crate::emotion::embed::{Concat, Embedder, HashedTfidf, Scaled, SparseVec, TfidfConfig};
use crate::emotion::embed_cache::{CacheState, CachedEmbedder};
use crate::emotion::encoder::{self, MiniLm};
use crate::emotion::linear::{self, LinearConfig, LinearHeads};
use crate::emotion::taxonomy::Taxonomy;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Bump when the model file's meaning changes, so old caches are retrained.
const MODEL_FORMAT: u32 = 2;

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
    crate::emotion::anchors::anchors_dir(root).join("vectors")
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
        let taxonomy = Taxonomy::load(&crate::emotion::taxonomy_path(root))?;
        let mut anchors = anchors::load(&crate::emotion::anchors_path(root), &taxonomy)?;
        if config.paraphrases {
            let extra = anchors::paraphrases(&taxonomy, crate::emotion::ANCHOR_SEED, &anchors)?;
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
