//! Embedders behind one trait, and the offline default: a hashed word + character n-gram
//! TF-IDF embedding.
//!
//! [`Embedder`] is the extension point: texts in, one vector per text out, plus `dim()` and
//! an `id()` that names the embedder and its settings (it goes into the model fingerprint).
//! An OpenAI-compatible `/v1/embeddings` client plugs in by implementing `embed` and `dim`;
//! `embed_sparse` has a default that keeps every component, so the classifier consumes
//! dense and sparse embedders alike.
//!
//! **The offline default, [`HashedTfidf`]**, downloads nothing and compiles in seconds. A
//! text is lower-cased and split into words; its features are the words, adjacent word
//! pairs, and character 3–5-grams of each word with boundary marks (`<wor`, `ord>`), hashed
//! with FNV-1a into 2^14 buckets. Values are `ln(1 + tf) * idf` with the IDF fitted on the
//! anchors; buckets no anchor touches are dropped (a weight the classifier never trained
//! would only add noise), and the vector is L2-normalised. Character n-grams carry
//! morphology across the anchors' second-person instructions and a feeler's third-person
//! descriptions (`worried`/`worry`, `frustrat…`); word pairs carry short phrases (`no rush`,
//! `let down`). It is bit-exact across platforms (no float reductions depend on threads,
//! and the hash is ours, not std's). Its limit is lexical: a feeling that shares no words or
//! word pieces with any anchor falls back to weak cues. Measured figures (accuracy, cost)
//! are in `emotion/mod.rs`.
//!
//! Architecture invariant: no network, no files; knows nothing about labels or anchors
//! beyond the texts it is fitted on.

use serde::{Deserialize, Serialize};

/// A failed embedding call (an endpoint embedder reports its transport errors here).
#[derive(Debug, thiserror::Error)]
#[error("embedder {embedder}: {message}")]
pub struct EmbedError {
    pub embedder: String,
    pub message: String,
}

/// A sparse vector: sorted, distinct indices and their values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseVec {
    pub indices: Vec<u32>,
    pub values: Vec<f32>,
}

impl SparseVec {
    /// Keep the non-zero components of a dense vector.
    pub fn from_dense(v: &[f32]) -> SparseVec {
        let mut s = SparseVec::default();
        for (i, &x) in v.iter().enumerate() {
            if x != 0.0 {
                s.indices.push(i as u32);
                s.values.push(x);
            }
        }
        s
    }

    pub fn to_dense(&self, dim: usize) -> Vec<f32> {
        let mut v = vec![0.0; dim];
        for (&i, &x) in self.indices.iter().zip(&self.values) {
            v[i as usize] = x;
        }
        v
    }

    pub fn nnz(&self) -> usize {
        self.indices.len()
    }
}

/// Texts -> vectors. Implementations must be deterministic for a given configuration.
pub trait Embedder: Send + Sync {
    /// Names the embedder and every setting that changes its output.
    fn id(&self) -> String;
    /// Length of every vector `embed` returns.
    fn dim(&self) -> usize;
    /// One vector of length `dim()` per text, in order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// The same embeddings as sparse vectors (what the classifier consumes).
    fn embed_sparse(&self, texts: &[String]) -> Result<Vec<SparseVec>, EmbedError> {
        Ok(self
            .embed(texts)?
            .iter()
            .map(|v| SparseVec::from_dense(v))
            .collect())
    }
}

/// Settings of [`HashedTfidf`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfidfConfig {
    /// log2 of the number of hash buckets.
    pub bits: u32,
    /// Character n-gram lengths (inclusive); `char_max = 0` disables them.
    pub char_min: usize,
    pub char_max: usize,
    /// Add adjacent word pairs as features.
    pub word_pairs: bool,
    /// Weight of one character n-gram occurrence relative to one word.
    pub char_weight: f32,
}

impl Default for TfidfConfig {
    fn default() -> Self {
        TfidfConfig {
            bits: 14,
            char_min: 3,
            char_max: 5,
            word_pairs: true,
            char_weight: 0.5,
        }
    }
}

/// Hashed word + character n-gram TF-IDF, fitted on a corpus (the anchors).
#[derive(Clone, Debug)]
pub struct HashedTfidf {
    config: TfidfConfig,
    /// Per bucket; 0 for buckets no fitted text touches.
    idf: Vec<f32>,
}

const KIND_WORD: u8 = b'w';
const KIND_PAIR: u8 = b'p';
const KIND_CHAR: u8 = b'c';

/// FNV-1a, 64-bit: stable across platforms and Rust versions (std's hasher is not).
fn fnv1a(kind: u8, parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    eat(kind);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            eat(0x1f);
        }
        for &b in *p {
            eat(b);
        }
    }
    h
}

/// Lower-cased words: runs of letters, digits and inner apostrophes.
pub fn words(text: &str) -> Vec<String> {
    let lower = text.to_lowercase().replace('\u{2019}', "'");
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

impl HashedTfidf {
    /// Fit the IDF on a corpus.
    pub fn fit(texts: &[String], config: TfidfConfig) -> HashedTfidf {
        let dim = 1usize << config.bits;
        let mut df = vec![0u32; dim];
        let unfitted = HashedTfidf {
            config: config.clone(),
            idf: vec![1.0; dim],
        };
        for t in texts {
            for (bucket, _) in unfitted.term_counts(t) {
                df[bucket as usize] += 1;
            }
        }
        let n = texts.len() as f32;
        let idf = df
            .iter()
            .map(|&d| {
                if d == 0 {
                    0.0
                } else {
                    ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0
                }
            })
            .collect();
        HashedTfidf { config, idf }
    }

    pub fn config(&self) -> &TfidfConfig {
        &self.config
    }

    /// Weighted term counts per bucket, sorted by bucket.
    fn term_counts(&self, text: &str) -> Vec<(u32, f32)> {
        let mask = (1u64 << self.config.bits) - 1;
        let mut terms: Vec<(u32, f32)> = Vec::new();
        let ws = words(text);
        for (i, w) in ws.iter().enumerate() {
            terms.push(((fnv1a(KIND_WORD, &[w.as_bytes()]) & mask) as u32, 1.0));
            if self.config.word_pairs && i + 1 < ws.len() {
                let h = fnv1a(KIND_PAIR, &[w.as_bytes(), ws[i + 1].as_bytes()]);
                terms.push(((h & mask) as u32, 1.0));
            }
            if self.config.char_max >= self.config.char_min && self.config.char_max > 0 {
                let marked: Vec<char> = format!("<{w}>").chars().collect();
                for n in self.config.char_min..=self.config.char_max {
                    if n > marked.len() {
                        break;
                    }
                    for gram in marked.windows(n) {
                        let s: String = gram.iter().collect();
                        let h = fnv1a(KIND_CHAR, &[s.as_bytes()]);
                        terms.push(((h & mask) as u32, self.config.char_weight));
                    }
                }
            }
        }
        terms.sort_by_key(|t| t.0);
        let mut merged: Vec<(u32, f32)> = Vec::with_capacity(terms.len());
        for (b, w) in terms {
            match merged.last_mut() {
                Some(last) if last.0 == b => last.1 += w,
                _ => merged.push((b, w)),
            }
        }
        merged
    }

    /// The sparse, L2-normalised TF-IDF vector of one text.
    pub fn embed_one(&self, text: &str) -> SparseVec {
        let mut v = SparseVec::default();
        for (b, tf) in self.term_counts(text) {
            let idf = self.idf[b as usize];
            if idf > 0.0 {
                v.indices.push(b);
                v.values.push((1.0 + tf).ln() * idf);
            }
        }
        let norm = v.values.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            for x in &mut v.values {
                *x /= norm;
            }
        }
        v
    }
}

impl Embedder for HashedTfidf {
    fn id(&self) -> String {
        let c = &self.config;
        format!(
            "hashed-tfidf-v1(bits={},chars={}-{},pairs={},char_weight={})",
            c.bits, c.char_min, c.char_max, c.word_pairs, c.char_weight
        )
    }

    fn dim(&self) -> usize {
        1 << self.config.bits
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| self.embed_one(t).to_dense(self.dim()))
            .collect())
    }

    fn embed_sparse(&self, texts: &[String]) -> Result<Vec<SparseVec>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

/// Several embedders side by side: the classifier sees their vectors concatenated (each
/// part keeps its own unit length, so neither view drowns the other). This is how the
/// sentence encoder and the character n-gram view are combined.
pub struct Concat {
    parts: Vec<Box<dyn Embedder>>,
}

impl Concat {
    pub fn new(parts: Vec<Box<dyn Embedder>>) -> Concat {
        Concat { parts }
    }
}

impl Embedder for Concat {
    fn id(&self) -> String {
        let ids: Vec<String> = self.parts.iter().map(|p| p.id()).collect();
        format!("concat({})", ids.join(" + "))
    }

    fn dim(&self) -> usize {
        self.parts.iter().map(|p| p.dim()).sum()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let dim = self.dim();
        Ok(self
            .embed_sparse(texts)?
            .iter()
            .map(|v| v.to_dense(dim))
            .collect())
    }

    fn embed_sparse(&self, texts: &[String]) -> Result<Vec<SparseVec>, EmbedError> {
        let mut out = vec![SparseVec::default(); texts.len()];
        let mut offset = 0u32;
        for part in &self.parts {
            for (o, v) in out.iter_mut().zip(part.embed_sparse(texts)?) {
                o.indices.extend(v.indices.iter().map(|i| i + offset));
                o.values.extend(v.values);
            }
            offset += part.dim() as u32;
        }
        Ok(out)
    }
}

/// An embedder whose vectors are multiplied by a constant weight: how much one view counts
/// next to another inside a [`Concat`] (both parts are unit length, but 384 dense encoder
/// dimensions and a few hundred sparse n-grams do not carry equal evidence per unit).
pub struct Scaled {
    inner: Box<dyn Embedder>,
    weight: f32,
}

impl Scaled {
    pub fn new(inner: Box<dyn Embedder>, weight: f32) -> Scaled {
        Scaled { inner, weight }
    }
}

impl Embedder for Scaled {
    fn id(&self) -> String {
        format!("scaled({} x {})", self.weight, self.inner.id())
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = self.inner.embed(texts)?;
        for v in &mut out {
            for x in v.iter_mut() {
                *x *= self.weight;
            }
        }
        Ok(out)
    }

    fn embed_sparse(&self, texts: &[String]) -> Result<Vec<SparseVec>, EmbedError> {
        let mut out = self.inner.embed_sparse(texts)?;
        for v in &mut out {
            for x in v.values.iter_mut() {
                *x *= self.weight;
            }
        }
        Ok(out)
    }
}
