//! The reward of an episode (PAPER_FACTS, "Harness and reward"): -1 when the user ended
//! with `###UNSATISFIED###`; otherwise 1 iff the final database state equals the state the
//! reference actions produce and every required output was told to the user; else 0.

use super::{Episode, Termination};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewardBreakdown {
    pub reward: i32,
    pub state_match: bool,
    pub outputs_required: usize,
    pub outputs_told: usize,
    pub user_unsatisfied: bool,
}

/// Score an episode against the task's reference hash and required outputs.
pub fn score(
    episode: &Episode,
    reference_hash: &str,
    required_outputs: &[String],
) -> RewardBreakdown {
    let said: String = episode
        .messages
        .iter()
        .filter(|m| m.role == "assistant")
        .filter_map(|m| m.content.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
        .to_lowercase();
    let told = required_outputs
        .iter()
        .filter(|o| said.contains(&o.to_lowercase()))
        .count();
    let state_match = episode.final_hash == reference_hash;
    let unsatisfied = episode.termination == Termination::UserUnsatisfied;
    let reward = if unsatisfied {
        -1
    } else if state_match && told == required_outputs.len() {
        1
    } else {
        0
    };
    RewardBreakdown {
        reward,
        state_match,
        outputs_required: required_outputs.len(),
        outputs_told: told,
        user_unsatisfied: unsatisfied,
    }
}
