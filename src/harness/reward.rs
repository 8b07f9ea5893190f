//! The reward of an episode (PAPER_FACTS, "Harness and reward"): -1 when the user ended
//! with `###UNSATISFIED###`; otherwise 1 iff the final database state equals the state the
//! reference actions produce and every required output was told to the user; else 0. An
//! episode cut short by an error (the agent's malformed output, or an endpoint failure) is
//! never a success, whatever state it reached: it did not finish the conversation.

use super::MessageRole;
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
        .filter(|m| m.role == MessageRole::Assistant)
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
    let errored = matches!(
        episode.termination,
        Termination::AgentError | Termination::EndpointError
    );
    let reward = if unsatisfied {
        -1
    } else if !errored && state_match && told == required_outputs.len() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{ChatMessage, Usage};

    fn episode(termination: Termination, hash: &str, said: &str) -> Episode {
        Episode {
            messages: vec![ChatMessage::assistant(said)],
            termination,
            error: None,
            final_hash: hash.into(),
            agent_usage: Usage::default(),
            user_usage: Usage::default(),
        }
    }

    #[test]
    fn each_reward_case() {
        let outputs = vec!["HAT030".to_string()];
        let ok = score(
            &episode(Termination::UserStop, "h", "Your flight is hat030."),
            "h",
            &outputs,
        );
        assert_eq!((ok.reward, ok.state_match, ok.outputs_told), (1, true, 1));
        let wrong_state = score(
            &episode(Termination::UserStop, "x", "HAT030"),
            "h",
            &outputs,
        );
        assert_eq!((wrong_state.reward, wrong_state.state_match), (0, false));
        let untold = score(
            &episode(Termination::UserStop, "h", "All done."),
            "h",
            &outputs,
        );
        assert_eq!((untold.reward, untold.outputs_told), (0, 0));
        let left = score(
            &episode(Termination::UserUnsatisfied, "h", "HAT030"),
            "h",
            &outputs,
        );
        assert_eq!((left.reward, left.user_unsatisfied), (-1, true));
        let cut = score(
            &episode(Termination::MaxSteps, "h", "HAT030"),
            "h",
            &outputs,
        );
        assert_eq!(
            cut.reward, 1,
            "state and outputs decide, whatever ended the episode"
        );
        for broken in [Termination::AgentError, Termination::EndpointError] {
            let e = score(&episode(broken, "h", "HAT030"), "h", &outputs);
            assert_eq!((e.reward, e.state_match), (0, true), "{broken:?}");
        }
    }
}
