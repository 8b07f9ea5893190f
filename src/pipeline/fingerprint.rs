//! Fingerprints: what a stage's run for one domain depends on (tool version, the hash of
//! the code the stage reaches, config hash, seed, the hashes of every input) and the
//! hashes of what it wrote.

use super::*;
use std::collections::BTreeSet;

/// Inputs (upstream outputs and source files) of one (stage, domain), with their hashes.
pub(super) fn collect_inputs(
    paths: &Paths,
    stage: &dyn Stage,
    domain: &str,
    config: &toml::Table,
) -> Result<BTreeMap<String, String>, Result<PipelineError, String>> {
    let mut inputs = BTreeMap::new();
    for upstream in stage.inputs() {
        let dir = stage_dir(&paths.output, upstream, domain);
        let manifest =
            read_manifest(&dir).ok_or_else(|| Err(format!("input '{upstream}' missing")))?;
        for (file, hash) in manifest.outputs {
            inputs.insert(format!("{upstream}/domain={domain}/{file}"), hash);
        }
    }
    for rel in stage.source_files(domain, config) {
        let path = paths.root.join(&rel);
        let hash = sha256_file(&path).map_err(|e| Ok(PipelineError::Artifact(e)))?;
        inputs.insert(rel.display().to_string(), hash);
    }
    for rel in stage.optional_source_files(domain, config) {
        let path = paths.root.join(&rel);
        let hash = if path.exists() {
            sha256_file(&path).map_err(|e| Ok(PipelineError::Artifact(e)))?
        } else {
            "absent".to_string()
        };
        inputs.insert(rel.display().to_string(), hash);
    }
    Ok(inputs)
}

/// One source file of the crate as build.rs scanned it (`pipeline::code_scan`).
pub struct CodeFile {
    /// Crate-relative path, e.g. `src/stage/db.rs`.
    pub path: &'static str,
    /// Hash of its code (comments, tests and blank lines left out).
    pub hash: u64,
    /// The domain whose folder holds it (`src/domain/<d>/`).
    pub domain: Option<&'static str>,
    /// Indices into [`CODE_FILES`] of the files it reaches directly.
    pub deps: &'static [usize],
}

include!(concat!(env!("OUT_DIR"), "/code_files.rs"));

/// Where a remote domain's code starts in the crate (its `Domain` implementation); its own
/// code is its folder, hashed when it is loaded.
const REMOTE_ROOT: &str = "src/remote/mod.rs";

/// The files of the crate a stage whose code starts at `root` (its module's `file!()`)
/// reaches when it runs for `domain`: everything along the imports from `root` and from
/// the domain's own folder, other domains' folders excepted. An empty or unknown `root`
/// reaches the whole crate (less other domains' folders).
pub fn code_reach(root: &str, domain: &str) -> BTreeSet<&'static str> {
    let remote = crate::domain::find(domain)
        .ok()
        .is_some_and(|d| d.own_code_hash().is_some());
    let other_domain = |f: &CodeFile| f.domain.is_some_and(|d| d != domain);
    let start = CODE_FILES.iter().position(|f| f.path == root);
    let mut stack: Vec<usize> = match start {
        Some(i) => vec![i],
        None => (0..CODE_FILES.len()).collect(),
    };
    stack.extend(
        CODE_FILES
            .iter()
            .enumerate()
            .filter(|(_, f)| f.domain == Some(domain) || (remote && f.path == REMOTE_ROOT))
            .map(|(i, _)| i),
    );
    let mut seen = BTreeSet::new();
    while let Some(i) = stack.pop() {
        let f = &CODE_FILES[i];
        if other_domain(f) || !seen.insert(f.path) {
            continue;
        }
        stack.extend(f.deps.iter().copied());
    }
    seen
}

/// The source hash a stage's run for `domain` depends on: the code it reaches (see
/// [`code_reach`]), plus a remote domain's folder. Editing one domain leaves the others
/// fresh; editing a module a stage cannot reach (the scripted agent, for the stages before
/// rollouts) leaves that stage fresh; comments and tests never count.
pub fn code_hash(root: &str, domain: &str) -> String {
    code_hash_edited(root, domain, None)
}

/// [`code_hash`] as it would be with `edited`'s code changed: which stages an edit of that
/// file makes stale.
pub fn code_hash_edited(root: &str, domain: &str, edited: Option<&str>) -> String {
    let mut material = String::new();
    for path in code_reach(root, domain) {
        let f = CODE_FILES
            .iter()
            .find(|f| f.path == path)
            .expect("reached file");
        let hash = if edited == Some(path) {
            !f.hash
        } else {
            f.hash
        };
        material.push_str(&format!("{path} {hash:016x}\n"));
    }
    if let Some(own) = crate::domain::find(domain)
        .ok()
        .and_then(|d| d.own_code_hash())
    {
        material.push_str(&format!("folder {own}\n"));
    }
    sha256_hex(material.as_bytes())[..16].to_string()
}

pub(super) fn fingerprint_material(
    stage: &str,
    code_root: &str,
    domain: &str,
    config_hash: &str,
    seed: u64,
    inputs: &BTreeMap<String, String>,
) -> String {
    serde_json::json!({
        "tool": env!("CARGO_PKG_VERSION"),
        "code": code_hash(code_root, domain),
        "stage": stage,
        "config": config_hash,
        "seed": seed,
        "inputs": inputs,
    })
    .to_string()
}

pub(super) fn fingerprint(
    stage: &dyn Stage,
    domain: &str,
    config_hash: &str,
    seed: u64,
    inputs: &BTreeMap<String, String>,
) -> String {
    let material = fingerprint_material(
        stage.name(),
        stage.code_root(),
        domain,
        config_hash,
        seed,
        inputs,
    );
    sha256_hex(format!("{material}|{}", stage.version()).as_bytes())
}

/// Hash every file of a finished output directory (the manifest excluded).
pub(super) fn hash_outputs(dir: &Path) -> Result<BTreeMap<String, String>, ArtifactError> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| ArtifactError::io(&d, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| ArtifactError::io(&d, e))?;
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().and_then(|n| n.to_str()) != Some(MANIFEST) {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, sha256_file(&path)?);
            }
        }
    }
    Ok(out)
}
