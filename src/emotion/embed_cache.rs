//! A checked on-disk cache of one embedder's vectors, keyed by the embedder's id (which for
//! the sentence encoder carries the model files' hash) and by the SHA-256 of each text.
//!
//! Why: encoding the ~11,000 training texts takes about 20 CPU-minutes, and every `tracer
//! emotion map`, every `emotions` stage run and every test would pay it. A cache entry is
//! only ever a function of (model, text), so reusing it changes nothing.
//!
//! Two kinds of file feed one cache: a read-only *seed* checked in beside the anchors
//! (`emotion_anchors/vectors/`, written by `tracer emotion vectors`, so a fresh clone
//! never has to encode the anchors), and the writable cache in the cache directory, where
//! whatever else gets encoded is kept. All are checked the same way. A seed is a base file
//! plus any number of *delta* files (`embeddings-<id hash>+<n>.bin`) holding only the texts
//! the earlier files lack: a change to a few training texts adds a small file to the
//! repository instead of another copy of the whole seed.
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
    /// The seed files read (base first) and the texts they hold.
    seed_paths: Vec<PathBuf>,
    seed_keys: std::collections::HashSet<TextKey>,
    /// Whether `path` is a writable cache (not a seed file opened read-only).
    writable: bool,
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

/// The seed files of an embedder id inside `dir`: the base file (whether or not it exists),
/// then its deltas in order.
pub fn seed_files(dir: &Path, embedder_id: &str) -> Vec<PathBuf> {
    let base = cache_file(dir, embedder_id);
    let stem = base
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let mut deltas: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let n = name
                .strip_prefix(&stem)?
                .strip_prefix('+')?
                .strip_suffix(".bin")?
                .parse()
                .ok()?;
            Some((n, e.path()))
        })
        .collect();
    deltas.sort();
    std::iter::once(base)
        .chain(deltas.into_iter().map(|(_, p)| p))
        .collect()
}

fn delta_file(base: &Path, n: usize) -> PathBuf {
    let stem = base
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    base.with_file_name(format!("{stem}+{n}.bin"))
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

    /// Open the cache of `inner` in `dir`, first reading the read-only seed files of the same
    /// embedder in `seed_dir` (base and deltas), if there are any.
    pub fn open_seeded(
        inner: Box<dyn Embedder>,
        dir: &Path,
        seed_dir: Option<&Path>,
    ) -> CachedEmbedder {
        Self::build(inner, Some(dir), seed_dir)
    }

    fn build(
        inner: Box<dyn Embedder>,
        dir: Option<&Path>,
        seed_dir: Option<&Path>,
    ) -> CachedEmbedder {
        let mut vectors = HashMap::new();
        let seed_paths = seed_dir
            .map(|d| seed_files(d, &inner.id()))
            .unwrap_or_default();
        let mut seed_state = CacheState::Missing;
        for path in &seed_paths {
            match (load_into(path, inner.as_ref(), &mut vectors), &seed_state) {
                (CacheState::Missing, _) | (_, CacheState::Corrupt(_)) => {}
                (CacheState::Loaded { entries }, CacheState::Loaded { entries: before }) => {
                    seed_state = CacheState::Loaded {
                        entries: before + entries,
                    }
                }
                (state, _) => seed_state = state,
            }
        }
        let seed_keys = vectors.keys().copied().collect();
        let (path, state) = match dir {
            Some(dir) => {
                let path = cache_file(dir, &inner.id());
                let state = load_into(&path, inner.as_ref(), &mut vectors);
                (path, state)
            }
            // Seeds only: the base seed file names the cache in messages.
            None => (
                seed_paths.first().cloned().unwrap_or_default(),
                seed_state.clone(),
            ),
        };
        CachedEmbedder {
            inner,
            path,
            state,
            seed_state,
            seed_paths,
            seed_keys,
            writable: dir.is_some(),
            vectors: Mutex::new(vectors),
        }
    }

    /// The seed files of `inner` in `seed_dir` alone (no writable cache): what a fresh
    /// clone has. [`CachedEmbedder::path`] is the base seed file.
    pub fn open_seed(inner: Box<dyn Embedder>, seed_dir: &Path) -> CachedEmbedder {
        Self::build(inner, None, Some(seed_dir))
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

    /// Make the seed files in `seed_dir` cover `texts` (embedding any not yet known).
    /// `compact`: rewrite the base file with exactly `texts` and remove the deltas.
    /// Otherwise add one delta file with the texts the seed files lack, if any.
    /// Returns the file written, `None` when the seed already covered every text.
    pub fn write_seed(
        &self,
        texts: &[String],
        seed_dir: &Path,
        compact: bool,
    ) -> Result<Option<PathBuf>, EmbedError> {
        let base = cache_file(seed_dir, &self.inner.id());
        let existing = seed_files(seed_dir, &self.inner.id());
        let uncovered = !self.seed_paths.starts_with(&existing[..1])
            || !matches!(self.seed_state, CacheState::Loaded { .. });
        let wanted: Vec<String> = if compact || uncovered {
            texts.to_vec()
        } else {
            let mut seen = std::collections::HashSet::new();
            texts
                .iter()
                .filter(|t| {
                    let k = text_key(t);
                    !self.seed_keys.contains(&k) && seen.insert(k)
                })
                .cloned()
                .collect()
        };
        if wanted.is_empty() {
            return Ok(None);
        }
        let vectors = self.embed(&wanted)?;
        let entries: HashMap<TextKey, Vec<f32>> =
            wanted.iter().map(|t| text_key(t)).zip(vectors).collect();
        let path = if compact || uncovered {
            base.clone()
        } else {
            (existing.len()..)
                .map(|n| delta_file(&base, n))
                .find(|p| !p.exists())
                .expect("a free delta number")
        };
        self.write_file(&path, &entries)?;
        if compact || uncovered {
            for stale in existing.iter().skip(1) {
                std::fs::remove_file(stale).map_err(|e| EmbedError {
                    embedder: self.inner.id(),
                    message: format!("{}: {e}", stale.display()),
                })?;
            }
        }
        Ok(Some(path))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn save(&self, vectors: &HashMap<TextKey, Vec<f32>>) -> Result<(), EmbedError> {
        if !self.writable {
            return Ok(());
        }
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
