//! The plan's documented defaults: what it assumes where no run measured a yield or a
//! request size (docs/real-models.md lists them). They are round figures, not
//! measurements: an offline run (`make trajectories`, free) or a pilot replaces them.
//!
//! The fixed part of every default request is still exact: the prompt file (with the
//! domain's examples), the domain's policy and tools; only the variable part (an
//! instruction, a transcript) is a default.

use super::{Calls, EpisodeSize, PerCall, Prompts, RunSettings, Sizes};
use crate::config::Paths;
use crate::domain::Domain;
use crate::llm::ChatMessage;
use crate::llm::provider::body::estimate_prompt_tokens;

/// Default yields, each a share of the step before ([`super::Rates`]).
pub const DEFAULT_RATES: super::Rates = super::Rates {
    grounded: [0.6, 0.6],
    drafted: [1.0, 1.0],
    refined: [0.95, 0.95],
    judged: [0.03, 0.03],
    verified: [0.85, 0.85],
    kept: 0.8,
    reviewed: 1.0,
    failed_rollouts: 0.3,
    failed_eval: 0.3,
};

/// Tokens of an instruction (about 165 words).
pub const DEFAULT_INSTRUCTION_TOKENS: f64 = 220.0;
/// Tokens of a feeling (two or three sentences).
pub const DEFAULT_FEELING_TOKENS: f64 = 60.0;
/// Tokens of the facts the refiner is given beside the draft.
pub const DEFAULT_FACTS_TOKENS: f64 = 40.0;
/// Tokens of a task's reference calls, as the task judge reads them.
pub const DEFAULT_ACTIONS_TOKENS: f64 = 150.0;
/// The task judge's answer: ACCEPT or REJECT and a reason.
pub const DEFAULT_JUDGE_COMPLETION: f64 = 30.0;
/// The analysis judge's answer: a short JSON list of faults.
pub const DEFAULT_ANALYSIS_COMPLETION: f64 = 60.0;
/// The agent's requests per episode (its messages after the greeting: text and calls).
pub const DEFAULT_AGENT_CALLS: f64 = 12.0;
/// The user simulator's requests per episode.
pub const DEFAULT_USER_CALLS: f64 = 5.0;
/// Tokens of one transcript message (a turn, a call or a tool result).
pub const DEFAULT_MESSAGE_TOKENS: f64 = 50.0;

/// `sizes` with every size nothing measured filled in: an episode stage from another
/// episode stage of the same domain where one was measured, anything else from the
/// defaults. The names of the defaulted sizes come back with it.
pub fn complete(
    paths: &Paths,
    domain: &'static dyn Domain,
    prompts: &Prompts,
    settings: &RunSettings,
    mut sizes: Sizes,
) -> (Sizes, Vec<&'static str>) {
    let d = domain.name();
    let mut guessed = Vec::new();
    let mut fill = |slot: &mut Option<PerCall>, name: &'static str, make: &dyn Fn() -> PerCall| {
        if slot.is_none() {
            *slot = Some(make());
            guessed.push(name);
        }
    };
    let est = |m: &[ChatMessage]| estimate_prompt_tokens(m, &[]) as f64;
    fill(&mut sizes.refiner, "refiner", &|| PerCall {
        prompt: est(&prompts.refiner.messages(Some(d)))
            + DEFAULT_INSTRUCTION_TOKENS
            + DEFAULT_FACTS_TOKENS,
        completion: DEFAULT_INSTRUCTION_TOKENS,
    });
    fill(&mut sizes.feeler, "feeler", &|| PerCall {
        prompt: est(&prompts.feeler.messages(Some(d))) + DEFAULT_INSTRUCTION_TOKENS + 20.0,
        completion: DEFAULT_FEELING_TOKENS,
    });
    fill(&mut sizes.judge, "task judge", &|| PerCall {
        prompt: est(&prompts.judge.messages(None))
            + DEFAULT_INSTRUCTION_TOKENS
            + DEFAULT_ACTIONS_TOKENS,
        completion: DEFAULT_JUDGE_COMPLETION,
    });
    fill(&mut sizes.embedder, "embedder", &|| PerCall {
        prompt: DEFAULT_FEELING_TOKENS,
        completion: 0.0,
    });
    let transcript = (2.0 * DEFAULT_AGENT_CALLS + DEFAULT_USER_CALLS) * DEFAULT_MESSAGE_TOKENS;
    fill(&mut sizes.analysis, "analysis judge", &|| PerCall {
        prompt: est(&prompts.analysis_judge.messages(None))
            + DEFAULT_INSTRUCTION_TOKENS
            + DEFAULT_FEELING_TOKENS
            + transcript,
        completion: DEFAULT_ANALYSIS_COMPLETION,
    });
    let measured = ["rollouts", "screened", "eval"]
        .iter()
        .find_map(|s| sizes.episodes.get(s).copied());
    for stage in ["rollouts", "screened", "eval"] {
        if sizes.episodes.contains_key(stage) {
            continue;
        }
        let size = measured.unwrap_or_else(|| {
            guessed.push(stage);
            default_episode(paths, domain, prompts, settings.emotion(stage))
        });
        sizes.episodes.insert(stage, size);
    }
    (sizes, guessed)
}

/// A default episode of `domain`: the agent sent the policy, the tools and a transcript
/// growing by two messages a request; the user simulator its rules, an instruction (and a
/// feeling) and a conversation growing by two messages a request.
fn default_episode(
    paths: &Paths,
    domain: &'static dyn Domain,
    prompts: &Prompts,
    emotion: bool,
) -> EpisodeSize {
    let policy = std::fs::read_to_string(paths.policy_file(domain.name())).unwrap_or_default();
    let tools: Vec<serde_json::Value> = domain.tool_specs().iter().map(|s| s.openai()).collect();
    let fixed = estimate_prompt_tokens(
        &[
            ChatMessage::system(policy),
            ChatMessage::assistant(crate::harness::GREETING),
        ],
        &tools,
    ) as f64;
    let (c, u, m) = (
        DEFAULT_AGENT_CALLS,
        DEFAULT_USER_CALLS,
        DEFAULT_MESSAGE_TOKENS,
    );
    let user_fixed = estimate_prompt_tokens(&[ChatMessage::system(&prompts.user.system)], &[])
        as f64
        + DEFAULT_INSTRUCTION_TOKENS
        + if emotion { DEFAULT_FEELING_TOKENS } else { 0.0 };
    EpisodeSize {
        agent: Calls {
            requests: c,
            prompt: c * fixed + m * c * (c + 1.0),
            completion: c * m,
        },
        user: Calls {
            requests: u,
            prompt: u * user_fixed + m * u * u,
            completion: u * m,
        },
    }
}
