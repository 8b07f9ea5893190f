//! Build script: the crate's sources as the code fingerprints see them, so the pipeline's
//! staleness check can tell which stages a code change touches. Every file under `src/`
//! (Rust and the data files it includes, such as `requests.toml`) is scanned by
//! `src/pipeline/code_scan.rs`: its hash (comments, tests and blank lines left out), the
//! domain folder it lives in, and the files it reaches along its imports.
//! `pipeline::fingerprint` follows those edges from a stage's own file and the domain's
//! folder, so a stage's fingerprint covers only the code it can reach.
//!
//! Output: `$OUT_DIR/code_files.rs`, the table `CODE_FILES: &[CodeFile]`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "src/pipeline/code_scan.rs"]
mod code_scan;

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    let mut paths = Vec::new();
    collect(Path::new("src"), &mut paths);
    let mut files: Vec<(String, Vec<u8>)> = paths
        .iter()
        .map(|p| {
            let name = p.to_string_lossy().replace('\\', "/");
            (name, std::fs::read(p).unwrap_or_default())
        })
        .collect();
    files.sort();
    let domain_dirs: BTreeSet<String> = std::fs::read_dir("src/domain")
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|d| d != "kit")
                .collect()
        })
        .unwrap_or_default();
    let scanned = code_scan::scan(&files, &domain_dirs);
    let mut table = String::new();
    for f in &scanned {
        table.push_str(&format!(
            "    CodeFile {{ path: {:?}, hash: 0x{:016x}, domain: {:?}, deps: &{:?} }},\n",
            f.path, f.hash, f.domain, f.deps
        ));
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let code = format!(
        "/// The crate's sources, scanned by build.rs (`pipeline::code_scan`).\npub const CODE_FILES: &[CodeFile] = &[\n{table}];\n"
    );
    std::fs::write(out.join("code_files.rs"), code).unwrap_or_default();
}
