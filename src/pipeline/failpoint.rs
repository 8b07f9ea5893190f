//! Test-only kill switches: `TRACER_FAILPOINT=<phase>@<stage>[#n]` makes the process abort
//! (as abruptly as `kill -9`: no destructors, no cleanup) the n-th time (default: the first)
//! it reaches that phase boundary, so the chaos tests can stop a run at every moment that
//! matters and check what the next run finds on disk. Never set in normal runs; unset, a
//! failpoint costs one environment lookup.
//!
//! Phases: `stage-started` (temporary directory created), `outputs-written` (the stage's
//! files are in the temporary directory), `manifest-written` (the temporary directory is
//! complete), `swap-half-done` (old output moved aside, new one not yet in place),
//! `swap-done` (new output in place, leftovers not yet removed), `journal-appended` (one
//! more finished episode in a journal).
//!
//! Architecture invariant: failpoints observe; they never change what a run computes.

use std::collections::HashMap;
use std::sync::Mutex;

/// Abort here if `TRACER_FAILPOINT` names this phase of this stage (or command).
pub fn hit(phase: &str, stage: &str) {
    let Ok(spec) = std::env::var(crate::config::ENV_FAILPOINT) else {
        return;
    };
    let (name, nth) = match spec.split_once('#') {
        Some((name, n)) => (name, n.parse::<usize>().unwrap_or(1)),
        None => (spec.as_str(), 1),
    };
    if name != format!("{phase}@{stage}") {
        return;
    }
    static HITS: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);
    let count = {
        let mut hits = HITS.lock().unwrap_or_else(|p| p.into_inner());
        let n = hits
            .get_or_insert_with(HashMap::new)
            .entry(name.to_string())
            .or_default();
        *n += 1;
        *n
    };
    if count == nth {
        eprintln!("tracer: failpoint {spec} reached: aborting (test hook)");
        std::process::abort();
    }
}
