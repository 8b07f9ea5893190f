//! The crash-safe output: a stage's new directory swapped into place, and the recovery of
//! what a killed run left behind ([`Runner::recover`] for stage directories, `recover_slot`
//! for a shard's part): a missing output is restored from a complete temporary directory or
//! the one moved aside, every other leftover removed.
//!
//! Architecture invariant: a kill at any instant leaves either the old or the new complete
//! output, never a partial one.

use super::fingerprint::hash_outputs;
use super::{PipelineError, Runner, failpoint, lock, read_manifest};
use crate::artifact::ArtifactError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// True when `dir` holds a complete stage output: a manifest whose every file hashes as
/// recorded.
pub(super) fn is_complete(dir: &Path) -> bool {
    read_manifest(dir).is_some_and(|m| hash_outputs(dir).is_ok_and(|o| o == m.outputs))
}

impl Runner<'_> {
    /// Finish or undo what killed runs left behind in every stage directory, and remove
    /// leftovers: a stage output that is missing is restored from a complete temporary
    /// directory (the new output, its swap was cut short) or else from the directory moved
    /// aside (the old one); every other `.tmp-*` / `.old-*` directory is removed. Call it
    /// holding the output lock (another writer's temporary directory looks the same). Returns
    /// one line per action, to log.
    pub fn recover(&self) -> Result<Vec<String>, PipelineError> {
        let mut notes = Vec::new();
        for stage in self.dag.stages() {
            let stage_root = self.paths.output.join(stage.name());
            let Ok(entries) = std::fs::read_dir(&stage_root) else {
                continue;
            };
            let mut leftovers: BTreeMap<String, (Vec<PathBuf>, Vec<PathBuf>)> = BTreeMap::new();
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                for (prefix, is_tmp) in [(".tmp-", true), (".old-", false)] {
                    if let Some((target, _pid)) =
                        name.strip_prefix(prefix).and_then(|r| r.rsplit_once('-'))
                    {
                        let slot = leftovers.entry(target.to_string()).or_default();
                        if is_tmp {
                            slot.0.push(e.path());
                        } else {
                            slot.1.push(e.path());
                        }
                    }
                }
            }
            for (target, (mut tmps, mut olds)) in leftovers {
                tmps.sort();
                olds.sort();
                let dir = stage_root.join(&target);
                if !dir.exists() {
                    let restore = tmps
                        .iter()
                        .position(|t| is_complete(t))
                        .map(|i| (tmps.remove(i), "finished the interrupted swap with"))
                        .or_else(|| olds.pop().map(|o| (o, "restored the previous output from")));
                    if let Some((from, what)) = restore {
                        std::fs::rename(&from, &dir).map_err(|e| ArtifactError::io(&dir, e))?;
                        notes.push(format!("{}: {what} {}", dir.display(), from.display()));
                    }
                }
                for left in tmps.iter().chain(&olds) {
                    std::fs::remove_dir_all(left).map_err(|e| ArtifactError::io(left, e))?;
                    notes.push(format!("removed leftover {}", left.display()));
                }
            }
        }
        // Temporary files of atomic writes outside stage directories (the emotion model).
        if let Ok(entries) = std::fs::read_dir(self.paths.output.join("emotion")) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "tmp") && std::fs::remove_file(&p).is_ok() {
                    notes.push(format!("removed leftover {}", p.display()));
                }
            }
        }
        Ok(notes)
    }
}

/// Finish or undo a killed run's swap of one directory (a shard's part): when `dir` is
/// missing, a complete `.tmp-<name>-<pid>` sibling is moved into place, else a
/// `.old-<name>-<pid>` one; other such leftovers are removed. Only the holder of the
/// directory's lock may call it.
pub(super) fn recover_slot(dir: &Path) -> Result<Vec<String>, PipelineError> {
    let mut notes = Vec::new();
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Ok(notes);
    };
    let name = name.to_string_lossy();
    let (mut tmps, mut olds) = (Vec::new(), Vec::new());
    if let Ok(entries) = std::fs::read_dir(parent) {
        for e in entries.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with(&format!(".tmp-{name}-")) {
                tmps.push(e.path());
            } else if n.starts_with(&format!(".old-{name}-")) {
                olds.push(e.path());
            }
        }
    }
    tmps.sort();
    olds.sort();
    if !dir.exists() {
        let restore = tmps
            .iter()
            .position(|t| is_complete(t))
            .map(|i| (tmps.remove(i), "finished the interrupted swap with"))
            .or_else(|| olds.pop().map(|o| (o, "restored the previous output from")));
        if let Some((from, what)) = restore {
            std::fs::rename(&from, dir).map_err(|e| ArtifactError::io(dir, e))?;
            notes.push(format!(
                "recovered: {}: {what} {}",
                dir.display(),
                from.display()
            ));
        }
    }
    for left in tmps.iter().chain(&olds) {
        std::fs::remove_dir_all(left).map_err(|e| ArtifactError::io(left, e))?;
        notes.push(format!("recovered: removed leftover {}", left.display()));
    }
    Ok(notes)
}

/// Replace `dir` by `tmp`: the old directory is moved aside first and removed last. Between
/// the two renames `dir` is missing; a kill there leaves a complete `tmp` (its manifest is
/// written before the swap starts), which [`Runner::recover`] moves into place.
pub(super) fn swap_into_place(tmp: &Path, dir: &Path, stage: &str) -> Result<(), PipelineError> {
    // A run whose lock file was deleted under it may no longer be the only writer.
    lock::verify_held(dir)?;
    let old = dir.with_file_name(format!(
        ".old-{}-{}",
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("out"),
        std::process::id()
    ));
    if dir.exists() {
        std::fs::rename(dir, &old).map_err(|e| ArtifactError::io(dir, e))?;
    }
    failpoint::hit("swap-half-done", stage);
    std::fs::rename(tmp, dir).map_err(|e| ArtifactError::io(dir, e))?;
    failpoint::hit("swap-done", stage);
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}
