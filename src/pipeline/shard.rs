//! Shards of an item-parallel stage: which items shard `i` of `N` owns, where its part is
//! written, and whether a set of parts is complete and consistent enough to merge.
//!
//! An item belongs to shard `u64(SHA-256(id)[..8]) mod N`: a function of the item's stable
//! id alone (a trace or task id), never of its position, a thread or the clock, so every
//! shard agrees on the split without talking to the others and the same `i/N` always gets
//! the same items. Shard `i` of stage `s` for domain `d` writes what the stage writes,
//! restricted to its items, into
//! `output/.shards/<s>/domain=<d>/part-<i>-of-<N>/` (the stage's own file names plus a
//! `_manifest.json` that records the stage's fingerprint and `i/N`). The dot keeps parts
//! out of the hive-partitioned stage tree readers scan (`output/<s>/domain=<d>/`), which
//! only a merge writes. Per stage, `output/.shards/<s>/` also holds each shard's lock file
//! and response cache (`part-<i>-of-<N>.lock`, `llm-cache-part-<i>-of-<N>.redb`).
//!
//! Architecture invariant: this module knows no stage; it checks parts by their manifests
//! and hashes only.

use super::{MANIFEST, Manifest, read_manifest};
use crate::artifact::sha256_hex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest shard count accepted (a Slurm array is rarely wider than a few thousand).
pub const MAX_SHARDS: u32 = 10_000;

/// Shard `index` of `count`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `i/N` with `0 <= i < N <= MAX_SHARDS`; the error is one line naming the flag.
    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = |why: String| format!("--shard '{text}': {why}");
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| bad("expected i/N, e.g. 0/4 for the first of four shards".into()))?;
        let parse = |s: &str, what: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| bad(format!("{what} '{s}' is not a non-negative integer")))
        };
        let (index, count) = (parse(i, "index")?, parse(n, "count")?);
        if count == 0 || count > MAX_SHARDS {
            return Err(bad(format!("the count must be 1..={MAX_SHARDS}")));
        }
        if index >= count {
            return Err(bad(format!(
                "the index must be below the count (0..={})",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }
}

/// The shard (of `count`) an item id belongs to.
pub fn shard_of(id: &str, count: u32) -> u32 {
    let digest = sha256_hex(id.as_bytes());
    let head = u64::from_str_radix(&digest[..16], 16).unwrap_or(0);
    (head % u64::from(count.max(1))) as u32
}

impl Shard {
    pub fn owns(&self, id: &str) -> bool {
        shard_of(id, self.count) == self.index
    }

    /// `part-<i>-of-<N>`: the part directory's name (and the stem of the lock and cache).
    pub fn part_name(&self) -> String {
        format!("part-{}-of-{}", self.index, self.count)
    }

    /// Parse a part directory's name back.
    pub fn from_part_name(name: &str) -> Option<Shard> {
        let rest = name.strip_prefix("part-")?;
        let (i, n) = rest.split_once("-of-")?;
        let shard: Shard = format!("{i}/{n}").parse().ok()?;
        (shard.part_name() == name).then_some(shard)
    }
}

/// `output/.shards/<stage>/`: the parts of every domain, shard locks and caches.
pub fn stage_shards_dir(output: &Path, stage: &str) -> PathBuf {
    output.join(".shards").join(stage)
}

/// `output/.shards/<stage>/domain=<d>/`: the part directories of one (stage, domain).
pub fn parts_dir(output: &Path, stage: &str, domain: &str) -> PathBuf {
    stage_shards_dir(output, stage).join(format!("domain={domain}"))
}

/// The lock file a shard run holds exclusively.
pub fn lock_path(output: &Path, stage: &str, shard: Shard) -> PathBuf {
    stage_shards_dir(output, stage).join(format!("{}.lock", shard.part_name()))
}

/// The response cache a shard run writes (redb allows one writer per file).
pub fn cache_path(output: &Path, stage: &str, shard: Shard) -> PathBuf {
    stage_shards_dir(output, stage).join(format!("llm-cache-{}.redb", shard.part_name()))
}

/// The response caches shard runs left under `output/.shards/`: (stage, shard, file), in
/// name order.
pub fn cache_files(output: &Path) -> Vec<(String, Shard, PathBuf)> {
    let mut found = Vec::new();
    let Ok(stages) = std::fs::read_dir(output.join(".shards")) else {
        return found;
    };
    for stage in stages.flatten() {
        let Ok(files) = std::fs::read_dir(stage.path()) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            if let Some(shard) = name
                .strip_prefix("llm-cache-")
                .and_then(|n| n.strip_suffix(".redb"))
                .and_then(Shard::from_part_name)
            {
                let stage_name = stage.file_name().to_string_lossy().to_string();
                found.push((stage_name, shard, f.path()));
            }
        }
    }
    found.sort();
    found
}

/// What the parts directory of one (stage, domain) holds.
#[derive(Debug, Default)]
pub struct PartScan {
    /// Parts whose name parses, by name order: (shard from the name, directory, manifest).
    pub parts: Vec<(Shard, PathBuf, Option<Manifest>)>,
    /// Entries that are not parts (temporary directories of live or killed runs aside).
    pub foreign: Vec<PathBuf>,
}

/// List the parts of one (stage, domain); a missing directory is an empty scan.
pub fn scan(dir: &Path) -> PartScan {
    let mut scan = PartScan::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return scan;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with(".tmp-") || name.starts_with(".old-") {
            continue;
        }
        match Shard::from_part_name(&name).filter(|_| e.path().is_dir()) {
            Some(shard) => {
                let manifest = read_manifest(&e.path());
                scan.parts.push((shard, e.path(), manifest));
            }
            None => scan.foreign.push(e.path()),
        }
    }
    scan
}

/// A part set that passed every check: the part directories in shard order.
#[derive(Debug)]
pub struct CompleteParts {
    pub count: u32,
    pub dirs: Vec<PathBuf>,
}

/// Check that `scan` holds exactly one complete, consistent set of parts made with
/// `fingerprint`: one shard count, every index once, each part's manifest naming this
/// stage, domain and shard, its fingerprint the current one, its files as recorded.
/// `hash_outputs` recomputes a part's file hashes. The error is one line.
pub fn check_complete(
    scan: &PartScan,
    dir: &Path,
    stage: &str,
    domain: &str,
    fingerprint: &str,
    hash_outputs: impl Fn(&Path) -> Option<BTreeMap<String, String>>,
) -> Result<CompleteParts, String> {
    let rerun = |s: Shard| format!("`tracer run {stage} --shard {s} --domain {domain}`");
    if let Some(f) = scan.foreign.first() {
        return Err(format!(
            "{}: not a shard part (expected part-<i>-of-<N> directories only); move it away",
            f.display()
        ));
    }
    let Some((first, ..)) = scan.parts.first() else {
        return Err(format!(
            "no shard parts in {}; run `tracer run {stage} --shard i/N` for every i first",
            dir.display()
        ));
    };
    let count = first.count;
    if let Some((other, path, _)) = scan.parts.iter().find(|(s, ..)| s.count != count) {
        return Err(format!(
            "parts of different shard counts ({count} and {}) in {}: {} does not belong; \
             keep one run's parts",
            other.count,
            dir.display(),
            path.display()
        ));
    }
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    for (shard, path, manifest) in &scan.parts {
        let Some(m) = manifest else {
            return Err(format!(
                "{}: incomplete part (no readable {MANIFEST}); rerun {}",
                path.display(),
                rerun(*shard)
            ));
        };
        let claimed = m.shard.unwrap_or(Shard {
            index: u32::MAX,
            count: 0,
        });
        if m.stage != stage || m.domain != domain || claimed.count != count {
            return Err(format!(
                "{}: foreign part (its manifest is stage '{}', domain '{}', shard {}); move it away",
                path.display(),
                m.stage,
                m.domain,
                m.shard.map_or("none".to_string(), |s| s.to_string())
            ));
        }
        if let Some(before) = seen.insert(claimed.index, path) {
            return Err(format!(
                "duplicate part {claimed}: {} and {} (a copied part?); keep one",
                before.display(),
                path.display()
            ));
        }
        if m.fingerprint != fingerprint {
            return Err(format!(
                "{}: foreign part, made with other code, config, seed or inputs than this \
                 run's (fingerprint {} vs {}); rerun {}",
                path.display(),
                &m.fingerprint[..m.fingerprint.len().min(12)],
                &fingerprint[..fingerprint.len().min(12)],
                rerun(*shard)
            ));
        }
        if hash_outputs(path).as_ref() != Some(&m.outputs) {
            return Err(format!(
                "{}: its files do not match its manifest (modified or truncated); rerun {}",
                path.display(),
                rerun(*shard)
            ));
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| Shard { index: i, count }.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing shard part(s) {} of {count} in {}; run {} first",
            missing.join(", "),
            dir.display(),
            rerun(Shard {
                index: missing[0]
                    .split('/')
                    .next()
                    .and_then(|i| i.parse().ok())
                    .unwrap_or(0),
                count
            })
        ));
    }
    Ok(CompleteParts {
        count,
        dirs: seen.values().map(|p| p.to_path_buf()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_flags_parse_or_name_the_problem() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        for (bad, why) in [
            ("3/3", "below the count"),
            ("0/0", "1..="),
            ("-1/3", "not a non-negative integer"),
            ("1", "expected i/N"),
            ("0/10001", "1..="),
        ] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(
                err.starts_with(&format!("--shard '{bad}'")) && err.contains(why),
                "{err}"
            );
        }
        let s = Shard {
            index: 12,
            count: 40,
        };
        assert_eq!(Shard::from_part_name(&s.part_name()), Some(s));
        assert_eq!(Shard::from_part_name("part-012-of-40"), None);
        assert_eq!(Shard::from_part_name("part-40-of-40"), None);
    }

    #[test]
    fn every_item_has_exactly_one_owner_and_the_split_is_balanced() {
        let ids: Vec<String> = (0..3000).map(|i| format!("airline-train-{i:05}")).collect();
        for count in [1, 2, 3, 7] {
            let mut sizes = vec![0usize; count as usize];
            for id in &ids {
                let owners: Vec<u32> = (0..count)
                    .filter(|&index| Shard { index, count }.owns(id))
                    .collect();
                assert_eq!(owners.len(), 1, "{id} of {count}");
                sizes[owners[0] as usize] += 1;
            }
            let fair = ids.len() / count as usize;
            assert!(
                sizes.iter().all(|&s| s.abs_diff(fair) < fair / 5 + 10),
                "{count}: {sizes:?}"
            );
        }
        // Pinned: the split is part of the on-disk contract (a resubmitted Slurm array must
        // give every shard the items it had): SHA-256("abc") starts ba7816bf8f01cfea.
        assert_eq!(shard_of("abc", 7), (0xba78_16bf_8f01_cfea_u64 % 7) as u32);
        assert_eq!(shard_of("abc", 1000), 74);
    }
}
