//! `stages/emotions.toml`: which embedder and decision the nearest-anchor mapper of the
//! `emotions` stage uses (also read by `tracer emotion` commands, so they map as the
//! pipeline does).

use super::mapper::{Decision, MapperConfig, View};
use crate::config::ConfigError;
use serde::Deserialize;
use std::path::Path;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmotionsConfig {
    /// Neighbouring anchors that vote.
    #[serde(default = "ten")]
    pub k: usize,
    /// What the classifier reads: `encoder-tfidf` (default), `encoder` or `tfidf`.
    #[serde(default = "default_view")]
    pub view: View,
    /// How the condition is chosen: `linear` (default, chosen on the dev half), `mixed`,
    /// `heads`, `blend` or `vote` (the paper's nearest-anchor vote).
    #[serde(default = "default_decision")]
    pub decision: Decision,
    /// `[embedder]`: an OpenAI-compatible `/v1/embeddings` model (same fields as a role) in
    /// place of `view`; absent = the offline view.
    #[serde(default)]
    pub embedder: Option<crate::llm::RoleConfig>,
}

fn ten() -> usize {
    10
}

fn default_view() -> View {
    MapperConfig::default().view
}

fn default_decision() -> Decision {
    MapperConfig::default().decision
}

impl EmotionsConfig {
    /// The mapper settings this config selects.
    pub fn mapper_config(&self) -> MapperConfig {
        MapperConfig {
            k: self.k,
            view: self.view,
            decision: self.decision,
            ..MapperConfig::default()
        }
    }

    /// The project's `stages/emotions.toml` (defaults when absent); errors name the file.
    pub fn of_project(root: &Path) -> Result<EmotionsConfig, ConfigError> {
        let path = root.join("stages/emotions.toml");
        crate::config::parse_typed(&path, &crate::config::read_table(&path)?)
    }
}
