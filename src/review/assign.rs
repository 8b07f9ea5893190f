//! Who reviews what: `assignment.toml` in the reviews folder, data under version control
//! like the decisions.
//!
//! ```toml
//! reviewers = ["ana", "ben", "cy"]
//! mode = "round_robin"     # or "by_domain"
//! second_share = 0.25      # share of tasks also given to a second reviewer (0 to 1)
//! [domains]                # by_domain: a domain's reviewers (round robin among them)
//! airline = ["ana"]
//! ```
//!
//! A domain's reviewable tasks, in the order the app lists them, go round robin over the
//! pool (all reviewers, or the domain's under `by_domain`). A task is also given to a second
//! reviewer, the next one of the pool (or of `reviewers` when the domain's pool has one),
//! when a hash of its domain and id falls under `second_share`: the same tasks every time,
//! independent of the list order. Nothing here reads the clock.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The assignment file's name inside the reviews folder.
pub const ASSIGNMENT_FILE: &str = "assignment.toml";

pub fn assignment_path(root: &Path, dir: &str) -> PathBuf {
    root.join(dir).join(ASSIGNMENT_FILE)
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    pub reviewers: Vec<String>,
    #[serde(default = "round_robin")]
    pub mode: String,
    #[serde(default)]
    pub second_share: f64,
    #[serde(default)]
    pub domains: BTreeMap<String, Vec<String>>,
}

fn round_robin() -> String {
    "round_robin".into()
}

impl Assignment {
    /// Read and check the assignment file; `None` when there is none. Errors name the file
    /// and the field.
    pub fn read(path: &Path) -> Result<Option<Assignment>, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let a: Assignment =
            toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
        a.check()
            .map_err(|(field, e)| format!("{}: {field}: {e}", path.display()))?;
        Ok(Some(a))
    }

    fn check(&self) -> Result<(), (String, String)> {
        let name_ok = |r: &String| !r.trim().is_empty() && r.trim() == r;
        if self.reviewers.is_empty() {
            return Err(("reviewers".into(), "names no reviewer".into()));
        }
        if let Some(r) = self.reviewers.iter().find(|r| !name_ok(r)) {
            return Err((
                "reviewers".into(),
                format!("'{r}' is not a name (blank or padded)"),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(r) = self.reviewers.iter().find(|r| !seen.insert(r.as_str())) {
            return Err(("reviewers".into(), format!("'{r}' is listed twice")));
        }
        if !matches!(self.mode.as_str(), "round_robin" | "by_domain") {
            return Err((
                "mode".into(),
                format!("must be 'round_robin' or 'by_domain', not '{}'", self.mode),
            ));
        }
        if !(0.0..=1.0).contains(&self.second_share) {
            return Err((
                "second_share".into(),
                format!("must be between 0 and 1, not {}", self.second_share),
            ));
        }
        for (d, pool) in &self.domains {
            if pool.is_empty() {
                return Err((format!("domains.{d}"), "names no reviewer".into()));
            }
            if let Some(r) = pool.iter().find(|r| !self.reviewers.contains(r)) {
                return Err((
                    format!("domains.{d}"),
                    format!("'{r}' is not among 'reviewers'"),
                ));
            }
        }
        if self.mode == "round_robin" && !self.domains.is_empty() {
            return Err((
                "domains".into(),
                "only used with mode = \"by_domain\"".into(),
            ));
        }
        Ok(())
    }

    /// A domain's pool: its own reviewers under `by_domain` (every reviewer for a domain it
    /// does not list), else every reviewer.
    fn pool(&self, domain: &str) -> &[String] {
        match self.domains.get(domain) {
            Some(p) if self.mode == "by_domain" => p,
            _ => &self.reviewers,
        }
    }

    /// The reviewers of each of a domain's reviewable tasks (`task_ids` in list order):
    /// the first by round robin, a second one for the `second_share` of tasks.
    pub fn assign(&self, domain: &str, task_ids: &[&str]) -> Vec<Vec<String>> {
        let pool = self.pool(domain);
        task_ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let first = &pool[i % pool.len()];
                let mut out = vec![first.clone()];
                if share_point(domain, id) < self.second_share {
                    let second = if pool.len() > 1 {
                        Some(&pool[(i + 1) % pool.len()])
                    } else {
                        let at = self.reviewers.iter().position(|r| r == first).unwrap_or(0);
                        Some(&self.reviewers[(at + 1) % self.reviewers.len()])
                            .filter(|r| *r != first)
                    };
                    out.extend(second.cloned());
                }
                out
            })
            .collect()
    }

    pub fn names(&self, reviewer: &str) -> bool {
        self.reviewers.iter().any(|r| r == reviewer)
    }
}

/// A task's place in [0, 1), from a hash of its domain and id.
fn share_point(domain: &str, task_id: &str) -> f64 {
    let h = crate::artifact::sha256_hex(format!("second-review/{domain}/{task_id}").as_bytes());
    let n = u64::from_str_radix(&h[..13], 16).unwrap_or(0);
    n as f64 / (1u64 << 52) as f64
}
