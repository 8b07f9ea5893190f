//! Fingerprints: what a stage's run for one domain depends on (tool version, source hash of
//! the shared code plus the domain's folder, config hash, seed, the hashes of every input)
//! and the hashes of what it wrote.

use super::*;

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

include!(concat!(env!("OUT_DIR"), "/domain_code_hashes.rs"));

/// The source hash a stage's run for `domain` depends on: the shared code plus that
/// domain's own folder (see build.rs; a remote domain's folder is hashed when it is
/// loaded), so editing one domain leaves the others fresh.
pub fn code_hash(domain: &str) -> String {
    if let Some(own) = crate::domain::find(domain)
        .ok()
        .and_then(|d| d.own_code_hash())
    {
        return format!("{}-{own}", env!("TRACER_CODE_HASH"));
    }
    let own = DOMAIN_CODE_HASHES
        .iter()
        .find(|(d, _)| *d == domain)
        .map_or("", |(_, h)| h);
    format!("{}-{own}", env!("TRACER_CODE_HASH"))
}

pub(super) fn fingerprint_material(
    stage: &str,
    domain: &str,
    config_hash: &str,
    seed: u64,
    inputs: &BTreeMap<String, String>,
) -> String {
    serde_json::json!({
        "tool": env!("CARGO_PKG_VERSION"),
        "code": code_hash(domain),
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
    let material = fingerprint_material(stage.name(), domain, config_hash, seed, inputs);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_domain_has_its_own_code_hash_on_top_of_the_shared_one() {
        let shared = env!("TRACER_CODE_HASH");
        let mut seen = std::collections::BTreeSet::new();
        for d in domain::registry() {
            assert!(
                DOMAIN_CODE_HASHES.iter().any(|(n, _)| *n == d.name()),
                "{}: build.rs found no src/domain/{}/ folder to hash",
                d.name(),
                d.name()
            );
            let h = code_hash(d.name());
            assert!(h.starts_with(shared), "{h}");
            assert!(
                seen.insert(h),
                "{}: same code hash as another domain",
                d.name()
            );
        }
        // The kit is shared code, never a domain of its own.
        assert!(DOMAIN_CODE_HASHES.iter().all(|(n, _)| *n != "kit"));
    }
}
