//! The reward of an episode (PAPER_FACTS, "Harness and reward"): -1 when the user ended
//! with `###UNSATISFIED###`; otherwise 1 iff the final database state equals the state the
//! reference actions produce and every required output was told to the user (found in the
//! agent's messages as tau-bench looks: ignoring case and commas); else 0. An
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
        .to_lowercase()
        .replace(',', "");
    // As tau-bench: case and thousands separators aside ("4,100.00" tells "4100.0"). An
    // output with a comma of its own is compared without it too (tau-bench could never
    // find one).
    let told = required_outputs
        .iter()
        .filter(|o| said.contains(&o.to_lowercase().replace(',', "")))
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
        // Thousands separators are not part of what is compared.
        let amounts = vec!["4100.0".to_string(), "Paris, Texas".to_string()];
        let grouped = score(
            &episode(
                Termination::UserStop,
                "h",
                "You sent 4,100.00 EUR to Paris Texas.",
            ),
            "h",
            &amounts,
        );
        assert_eq!((grouped.reward, grouped.outputs_told), (1, 2));
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
