//! The process-wide memo behind [`Mapper::shared`]: one mapper per project and
//! configuration, rebuilt when a file it is built from changes.
//!
//! Architecture invariant: the mapper never sees a task or a database — only feeling text.

use super::{Mapper, MapperConfig, cache_dir};
use crate::emotion::{EmotionError, encoder};
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
        &crate::emotion::anchors::anchors_dir(&slot.root),
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

pub(super) fn get(root: &Path, config: &MapperConfig) -> Result<(Arc<Mapper>, bool), EmotionError> {
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
