//! Emotion conditioning: the taxonomy of 594 conditions, the 5,940 anchor instructions,
//! embedders, the multi-head classifier and the nearest-anchor mapper that turns a free-text
//! feeling into a condition and an emotion instruction for the user simulator.
//!
//! Entry points for the `feelings` / `emotions` stages:
//! ```no_run
//! use tracer::emotion::{Mapper, MapperConfig};
//! use tracer::seed::derive_rng;
//! # fn main() -> Result<(), tracer::emotion::EmotionError> {
//! let root = std::path::Path::new(".");
//! let (mapper, _source) = Mapper::load_or_train(root, &MapperConfig::default())?;
//! let mut rng = derive_rng(7, &["emotions", "airline", "task-17"]);
//! let m = mapper.map("The customer is worried the refund will not arrive in time; polite but pressed.", &mut rng)?;
//! println!("{} / {} -> {}", m.family, m.emotion, m.anchor_text);
//! # Ok(()) }
//! ```
//!
//! Code map: [`taxonomy`] (the JSON taxonomy, stable condition ids), [`banks`] +
//! [`anchors`] (the scripted anchor generator in three styles, training paraphrases, the
//! JSONL file and its validation), [`writer`] (the `anchor_writer` endpoint role),
//! [`embed`] (the `Embedder` trait, the hashed TF-IDF, side-by-side views), [`encoder`]
//! (all-MiniLM-L6-v2 on candle), [`embed_cache`] (checked vector caches), [`endpoint`] (an
//! OpenAI-compatible embedder), [`classifier`] (the MLP, its training and its artifact),
//! [`linear`] (per-label softmax regressions beside the MLP), [`mapper`] (views, decision rules, the trained-model cache), [`eval`] (the per-register
//! quality report).
//!
//! **Measured**: `tracer emotion eval` prints the mapper's accuracy per register and label
//! on the hand-labelled sets; docs/emotion-mapping.md keeps its tables (figures live there,
//! where they are regenerated, not here).
//! Encoding one text costs ~100-150 ms of CPU in a debug build (opt-level 3 for the tensor
//! crates); the ~18,000 training and evaluation texts are therefore encoded once and checked
//! in (`emotion_anchors/vectors/`). Trained models are cached in `.cache/emotion/` under a
//! fingerprint of the taxonomy, every training text and label, the embedder id (with the
//! model hash) and the training settings; training is deterministic, so the cache is only a
//! speed-up.
//!
//! Architecture invariant: nothing here sees a task, a domain or a database — only feeling
//! text in and labels plus an instruction out.

pub mod anchors;
pub mod banks;
pub mod classifier;
pub mod embed;
pub mod embed_cache;
pub mod encoder;
pub mod endpoint;
pub mod eval;
pub mod linear;
pub mod mapper;
pub mod settings;
pub mod taxonomy;
pub mod writer;

pub use anchors::{ANCHORS_PER_CONDITION, Anchor};
pub use embed::{EmbedError, Embedder, HashedTfidf, SparseVec, TfidfConfig};
pub use mapper::{Mapper, MapperConfig, Mapping, ModelSource, Vote};
pub use taxonomy::{CONDITION_COUNT, Condition, Taxonomy};

use std::path::{Path, PathBuf};

/// The seed `tracer anchors generate` uses for the checked-in file.
pub const ANCHOR_SEED: u64 = 594;

#[derive(Debug, thiserror::Error)]
pub enum EmotionError {
    /// A file could not be read, parsed or validated; `path` may carry `:line`.
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

impl EmotionError {
    pub fn file(path: &Path, e: impl std::fmt::Display) -> EmotionError {
        EmotionError::File {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

/// `emotion_anchors/taxonomy.json` under a project root.
pub fn taxonomy_path(root: &Path) -> PathBuf {
    anchors::anchors_dir(root).join("taxonomy.json")
}

/// `emotion_anchors/anchors.jsonl` under a project root.
pub fn anchors_path(root: &Path) -> PathBuf {
    anchors::anchors_dir(root).join("anchors.jsonl")
}

/// The `tracer validate` check: taxonomy loads, anchors are complete, unique and labelled
/// (each problem names the file and line).
pub fn validation_problems(root: &Path) -> Vec<String> {
    let taxonomy = match Taxonomy::load(&taxonomy_path(root)) {
        Ok(t) => t,
        Err(e) => return vec![e.to_string()],
    };
    let path = anchors_path(root);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return vec![format!("{}: {e}", path.display())],
    };
    let mut problems: Vec<String> = match anchors::parse_jsonl(&path, &text) {
        Err(e) => vec![e.to_string()],
        Ok(list) => anchors::validate(&taxonomy, &list)
            .into_iter()
            .map(|p| format!("{}:{}: {}", path.display(), p.line, p.message))
            .collect(),
    };
    // The encoder's files, when fetched, must be the pinned ones (a view that needs them
    // and finds none fails with the fetch hint when it runs).
    let model = encoder::model_dir(root);
    if encoder::MODEL_FILES.iter().any(|f| model.join(f).is_file())
        && let Err(e) = encoder::check_model_files(&model)
    {
        problems.push(e.to_string());
    }
    problems
}
