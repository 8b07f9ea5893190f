//! Build script: a hash of the crate's sources, so the pipeline's staleness check can tell
//! when a stage's code changed (`TRACER_CODE_HASH`, part of every stage fingerprint). The
//! sources are the `.rs` files and the data files compiled into them (`.toml` under `src/`,
//! e.g. a domain's `requests.toml`).
//! FNV-1a over sorted paths and bytes: no dependencies, stable across platforms.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs" || x == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    let mut files = Vec::new();
    collect(Path::new("src"), &mut files);
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for f in &files {
        eat(f.to_string_lossy().replace('\\', "/").as_bytes());
        eat(&std::fs::read(f).unwrap_or_default());
    }
    println!("cargo:rustc-env=TRACER_CODE_HASH={h:016x}");
}
