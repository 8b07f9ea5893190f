//! Feeling text -> emotion condition + emotion instruction.
//!
//! The mapper embeds a feeling, projects it into the classifier's hidden layer, and lets
//! the k nearest anchors (cosine similarity in that hidden space) vote, each with weight
//! equal to its similarity (negative similarities count zero). The condition with the
//! largest summed weight wins (ties: the lower condition id); its share of the total weight
//! is the confidence. One of the winning condition's 10 anchors, drawn from the caller's
//! RNG, becomes the emotion instruction.
//!
//! [`Mapper::load_or_train`] is what commands and stages call: it reuses the model cached
//! at `output/emotion/model.bin` when the file still hashes as recorded in
//! `output/emotion/_checksums.json` and its fingerprint (taxonomy, anchors, embedder,
//! training settings) matches, and otherwise trains and writes it. A model that fails its
//! checksum (corrupted or edited: its labels could silently differ) is retrained, with a
//! warning on stderr; training is deterministic, so the retrained model is the one the
//! fingerprint stands for.
//!
//! Architecture invariant: the mapper never sees a task or a database — only feeling text.

use super::EmotionError;
use super::anchors::{self, ANCHORS_PER_CONDITION, Anchor};
use super::classifier::{self, Classifier, Targets, TrainConfig, TrainReport};
use super::embed::{Embedder, HashedTfidf, SparseVec, TfidfConfig};
use super::taxonomy::{Condition, Taxonomy};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Bump when the model file's meaning changes, so old caches are retrained.
const MODEL_FORMAT: u32 = 1;

/// Everything that decides the offline mapper.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapperConfig {
    /// Neighbours that vote.
    pub k: usize,
    pub tfidf: TfidfConfig,
    pub train: TrainConfig,
}

impl Default for MapperConfig {
    fn default() -> Self {
        MapperConfig {
            k: 10,
            tfidf: TfidfConfig::default(),
            train: TrainConfig::default(),
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
    /// Unit-length hidden vectors of `anchors`, in order.
    anchor_hidden: Vec<Vec<f32>>,
    k: usize,
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

/// The default model cache.
pub fn model_path(output: &Path) -> PathBuf {
    output.join("emotion").join("model.bin")
}

impl Mapper {
    /// Train the classifier on `anchors` (any subset, e.g. a training split) with the given
    /// embedder and build the voting index over the same anchors.
    pub fn train(
        taxonomy: &Taxonomy,
        anchors: Vec<Anchor>,
        embedder: Box<dyn Embedder>,
        train: &TrainConfig,
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
        let meta = ModelMeta {
            format: MODEL_FORMAT,
            fingerprint,
            embedder: embedder.id(),
            train: train.clone(),
            examples: anchors.len(),
            report,
            train_seconds: started.elapsed().as_secs_f64(),
        };
        Self::assemble(taxonomy, anchors, embedder, model, &xs, k, meta)
    }

    fn assemble(
        taxonomy: &Taxonomy,
        anchors: Vec<Anchor>,
        embedder: Box<dyn Embedder>,
        classifier: Classifier,
        xs: &[SparseVec],
        k: usize,
        meta: ModelMeta,
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
            anchor_hidden,
            k,
            meta,
        })
    }

    /// The offline mapper: TF-IDF fitted on `anchors`, classifier trained on them.
    pub fn train_offline(
        taxonomy: &Taxonomy,
        anchors: Vec<Anchor>,
        config: &MapperConfig,
    ) -> Result<Mapper, EmotionError> {
        let texts: Vec<String> = anchors.iter().map(|a| a.text.clone()).collect();
        let embedder = HashedTfidf::fit(&texts, config.tfidf.clone());
        Self::train(
            taxonomy,
            anchors,
            Box::new(embedder),
            &config.train,
            config.k,
            String::new(),
        )
    }

    /// Load the project's taxonomy and anchors, then reuse `output/emotion/model.bin` if its
    /// fingerprint matches, else train the offline mapper and cache it.
    pub fn load_or_train(
        root: &Path,
        output: &Path,
        config: &MapperConfig,
    ) -> Result<(Mapper, ModelSource), EmotionError> {
        Self::load_or_train_with(root, output, config, None)
    }

    /// [`Mapper::load_or_train`] with a given embedder (e.g. an endpoint); `None` fits the
    /// offline hashed TF-IDF on the anchors. The cache fingerprint covers the embedder's id.
    pub fn load_or_train_with(
        root: &Path,
        output: &Path,
        config: &MapperConfig,
        embedder: Option<Box<dyn Embedder>>,
    ) -> Result<(Mapper, ModelSource), EmotionError> {
        let tax_path = super::taxonomy_path(root);
        let anchors_path = super::anchors_path(root);
        let taxonomy = Taxonomy::load(&tax_path)?;
        let anchors = anchors::load(&anchors_path, &taxonomy)?;
        let texts: Vec<String> = anchors.iter().map(|a| a.text.clone()).collect();
        let embedder: Box<dyn Embedder> = match embedder {
            Some(e) => e,
            None => Box::new(HashedTfidf::fit(&texts, config.tfidf.clone())),
        };
        let fingerprint = fingerprint(&[
            &std::fs::read(&tax_path).map_err(|e| EmotionError::file(&tax_path, e))?,
            &std::fs::read(&anchors_path).map_err(|e| EmotionError::file(&anchors_path, e))?,
            embedder.id().as_bytes(),
            &serde_json::to_vec(&config.train).unwrap_or_default(),
            &MODEL_FORMAT.to_le_bytes(),
        ]);
        let path = model_path(output);
        let cached = match crate::artifact::read_cached(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("tracer: warning: {e}; retraining it");
                None
            }
        };
        if let Some(Ok((model, meta))) =
            cached.map(|bytes| classifier::decode::<ModelMeta>(&path, &bytes))
            && meta.fingerprint == fingerprint
            && model.input_dim == embedder.dim()
        {
            let xs = embedder.embed_sparse(&texts)?;
            let mapper = Self::assemble(&taxonomy, anchors, embedder, model, &xs, config.k, meta)?;
            return Ok((mapper, ModelSource::Cached));
        }
        let mapper = Self::train(
            &taxonomy,
            anchors,
            embedder,
            &config.train,
            config.k,
            fingerprint,
        )?;
        let bytes = classifier::encode(&mapper.classifier, &mapper.meta)?;
        crate::artifact::write_cached(&path, &bytes)
            .map_err(|e| EmotionError::Invalid(e.to_string()))?;
        Ok((mapper, ModelSource::Trained))
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

    pub fn k(&self) -> usize {
        self.k
    }

    /// Embed texts (one call to the embedder, so an endpoint sees one batch).
    pub fn embed(&self, texts: &[String]) -> Result<Vec<SparseVec>, EmotionError> {
        Ok(self.embedder.embed_sparse(texts)?)
    }

    /// The nearest-anchor vote for an embedded feeling.
    pub fn vote_embedded(&self, x: &SparseVec) -> Vote {
        let q = unit(self.classifier.hidden_of(x));
        let mut sims: Vec<(f32, usize)> = self
            .anchor_hidden
            .iter()
            .enumerate()
            .map(|(i, a)| (a.iter().zip(&q).map(|(x, y)| x * y).sum::<f32>(), i))
            .collect();
        // Highest similarity first; equal similarities keep file order.
        sims.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let top = &sims[..self.k.min(sims.len())];
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

    /// Votes for many feelings (embedded in one batch).
    pub fn votes(&self, texts: &[String]) -> Result<Vec<Vote>, EmotionError> {
        Ok(self
            .embed(texts)?
            .iter()
            .map(|x| self.vote_embedded(x))
            .collect())
    }

    /// Turn a vote into a mapping: one of the condition's anchors, drawn from `rng`.
    pub fn choose_anchor<R: rand::Rng + ?Sized>(&self, vote: &Vote, rng: &mut R) -> Mapping {
        let c = &self.conditions[vote.condition_id];
        let slots = &self.by_condition[vote.condition_id];
        let available: Vec<usize> = slots.iter().copied().filter(|&i| i != usize::MAX).collect();
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
