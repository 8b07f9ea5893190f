//! A checked on-disk cache of one embedder's vectors, keyed by the embedder's id (which for
//! the sentence encoder carries the model files' hash) and by the SHA-256 of each text.
//!
//! Why: encoding the ~11,000 training texts takes about 20 CPU-minutes, and every `tracer
//! emotion map`, every `emotions` stage run and every test would pay it. A cache entry is
//! only ever a function of (model, text), so reusing it changes nothing.
//!
//! Two files can feed one cache: a read-only *seed* checked in beside the anchors
//! (`emotion_anchors/vectors/`, written by `tracer emotion vectors`, so a fresh clone
//! never has to encode the anchors), and the writable cache in the cache directory, where
//! whatever else gets encoded is kept. Both are checked the same way.
//!
//! The file (`<cache dir>/embeddings-<id hash>.bin`) is a magic line, a JSON header (the
//! embedder id, the vector length, the entry count), the entries (32-byte text hash + the
//! vector as little-endian f32), and a SHA-256 of everything before it. A file that fails
//! any check — wrong magic, another embedder, a bad length, a checksum mismatch — is
//! reported as [`CacheState::Corrupt`] and ignored: its vectors are recomputed and the file
//! rewritten, never trusted.
//!
//! Architecture invariant: knows texts, vectors and its own file; nothing about labels.

use super::embed::{EmbedError, Embedder, SparseVec};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: &[u8] = b"TRACER-EMBEDDINGS v1\n";

/// Texts embedded between two saves of the cache file.
const SAVE_EVERY: usize = 1024;

/// From this many uncached texts on, say on stderr what is happening (a first run).
const NOTICE_AT: usize = 256;

/// What was found on disk when the cache was opened.
#[derive(Clone, Debug, PartialEq)]
pub enum CacheState {
    Missing,
    Loaded {
        entries: usize,
    },
    /// The file failed a check and was not used (the reason names the file).
    Corrupt(String),
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    embedder: String,
    dim: usize,
    entries: usize,
}

type TextKey = [u8; 32];

fn text_key(text: &str) -> TextKey {
    Sha256::digest(text.as_bytes()).into()
}

/// An embedder whose vectors are remembered on disk.
pub struct CachedEmbedder {
    inner: Box<dyn Embedder>,
    path: PathBuf,
    state: CacheState,
    seed_state: CacheState,
    vectors: Mutex<HashMap<TextKey, Vec<f32>>>,
}

/// The cache file of an embedder id inside `dir`.
pub fn cache_file(dir: &Path, embedder_id: &str) -> PathBuf {
    let h: String = Sha256::digest(embedder_id.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(format!("embeddings-{h}.bin"))
}

/// Read and check a cache file. `Err` carries why it cannot be used.
fn read_cache(
    path: &Path,
    embedder: &str,
    dim: usize,
) -> Result<HashMap<TextKey, Vec<f32>>, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let bad = |m: &str| format!("{}: {m}", path.display());
    if bytes.len() < MAGIC.len() + 8 + 32 {
        return Err(bad("truncated"));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(body).as_slice() != sum {
        return Err(bad("checksum mismatch"));
    }
    let rest = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("not an embedding cache"))?;
    let (len, rest) = rest.split_at(8);
    let len = u64::from_le_bytes(len.try_into().map_err(|_| bad("truncated header"))?) as usize;
    if rest.len() < len {
        return Err(bad("truncated header"));
    }
    let (json, mut entries) = rest.split_at(len);
    let header: Header = serde_json::from_slice(json).map_err(|e| bad(&format!("header: {e}")))?;
    if header.embedder != embedder || header.dim != dim {
        return Err(bad(&format!(
            "made by {} (dim {}), not {embedder} (dim {dim})",
            header.embedder, header.dim
        )));
    }
    let entry = 32 + 4 * dim;
    if entries.len() != header.entries * entry {
        return Err(bad("entry count does not match the header"));
    }
    let mut out = HashMap::with_capacity(header.entries);
    while !entries.is_empty() {
        let (e, tail) = entries.split_at(entry);
        entries = tail;
        let mut key = [0u8; 32];
        key.copy_from_slice(&e[..32]);
        let v = e[32..]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        out.insert(key, v);
    }
    Ok(out)
}

/// Read one cache file into `into`, reporting what was found.
fn load_into(
    path: &Path,
    inner: &dyn Embedder,
    into: &mut HashMap<TextKey, Vec<f32>>,
) -> CacheState {
    if !path.exists() {
        return CacheState::Missing;
    }
    match read_cache(path, &inner.id(), inner.dim()) {
        Ok(v) => {
            let entries = v.len();
            into.extend(v);
            CacheState::Loaded { entries }
        }
        Err(why) => CacheState::Corrupt(why),
    }
}

impl CachedEmbedder {
    /// Open (or start) the cache of `inner` in `dir`.
    pub fn open(inner: Box<dyn Embedder>, dir: &Path) -> CachedEmbedder {
        Self::open_seeded(inner, dir, None)
    }

    /// Open the cache of `inner` in `dir`, first reading the read-only seed file of the same
    /// embedder in `seed_dir`, if there is one.
    pub fn open_seeded(
        inner: Box<dyn Embedder>,
        dir: &Path,
        seed_dir: Option<&Path>,
    ) -> CachedEmbedder {
        let mut vectors = HashMap::new();
        let seed_state = match seed_dir {
            Some(d) => load_into(&cache_file(d, &inner.id()), inner.as_ref(), &mut vectors),
            None => CacheState::Missing,
        };
        let path = cache_file(dir, &inner.id());
        let state = load_into(&path, inner.as_ref(), &mut vectors);
        CachedEmbedder {
            inner,
            path,
            state,
            seed_state,
            vectors: Mutex::new(vectors),
        }
    }

    /// How many of `texts` have no vector yet (nothing is embedded).
    pub fn count_missing(&self, texts: &[String]) -> usize {
        let vectors = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        let keys: std::collections::HashSet<TextKey> = texts.iter().map(|t| text_key(t)).collect();
        keys.iter().filter(|k| !vectors.contains_key(*k)).count()
    }

    /// What the writable cache file held when opened.
    pub fn state(&self) -> &CacheState {
        &self.state
    }

    /// What the seed file held when opened.
    pub fn seed_state(&self) -> &CacheState {
        &self.seed_state
    }

    /// Write the vectors of `texts` (embedding any not yet known) to the seed file in
    /// `seed_dir`; returns its path.
    pub fn write_seed(&self, texts: &[String], seed_dir: &Path) -> Result<PathBuf, EmbedError> {
        let vectors = self.embed(texts)?;
        let entries: HashMap<TextKey, Vec<f32>> =
            texts.iter().map(|t| text_key(t)).zip(vectors).collect();
        let path = cache_file(seed_dir, &self.inner.id());
        self.write_file(&path, &entries)?;
        Ok(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn save(&self, vectors: &HashMap<TextKey, Vec<f32>>) -> Result<(), EmbedError> {
        self.write_file(&self.path, vectors)
    }

    fn write_file(
        &self,
        path: &Path,
        vectors: &HashMap<TextKey, Vec<f32>>,
    ) -> Result<(), EmbedError> {
        let fail = |e: String| EmbedError {
            embedder: self.inner.id(),
            message: format!("{}: {e}", path.display()),
        };
        let header = Header {
            embedder: self.inner.id(),
            dim: self.inner.dim(),
            entries: vectors.len(),
        };
        let json = serde_json::to_vec(&header).map_err(|e| fail(e.to_string()))?;
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&(json.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&json);
        // Sorted by key, so the same entries always make the same file.
        let mut keys: Vec<&TextKey> = vectors.keys().collect();
        keys.sort();
        for k in keys {
            bytes.extend_from_slice(k);
            for x in &vectors[k] {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        let sum = Sha256::digest(&bytes);
        bytes.extend_from_slice(&sum);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
        }
        crate::artifact::write_atomic(path, &bytes).map_err(|e| fail(e.to_string()))
    }
}

impl Embedder for CachedEmbedder {
    fn id(&self) -> String {
        self.inner.id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = self.vectors.lock().unwrap_or_else(|p| p.into_inner());
        let keys: Vec<TextKey> = texts.iter().map(|t| text_key(t)).collect();
        let mut missing: Vec<String> = Vec::new();
        let mut missing_keys: Vec<TextKey> = Vec::new();
        let mut queued = std::collections::HashSet::new();
        for (t, k) in texts.iter().zip(&keys) {
            if !vectors.contains_key(k) && queued.insert(*k) {
                missing.push(t.clone());
                missing_keys.push(*k);
            }
        }
        if missing.len() >= NOTICE_AT {
            eprintln!(
                "embedding {} texts with {} (once; cached in {})",
                missing.len(),
                self.inner.id(),
                self.path.display()
            );
        }
        // In chunks, saving after each, so an interrupted first run keeps its progress.
        for (texts, keys) in missing
            .chunks(SAVE_EVERY)
            .zip(missing_keys.chunks(SAVE_EVERY))
        {
            let fresh = self.inner.embed(texts)?;
            for (k, v) in keys.iter().zip(fresh) {
                vectors.insert(*k, v);
            }
            // A handful of new texts (a feeling or two) is not worth rewriting the file for.
            if missing.len() >= 16 {
                self.save(&vectors)?;
            }
        }
        Ok(keys.iter().map(|k| vectors[k].clone()).collect())
    }

    fn embed_sparse(&self, texts: &[String]) -> Result<Vec<SparseVec>, EmbedError> {
        Ok(self
            .embed(texts)?
            .iter()
            .map(|v| SparseVec::from_dense(v))
            .collect())
    }
}
