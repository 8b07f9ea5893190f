//! The scripted provider hook. Scripted roles are implemented by the stages themselves
//! (template refiner, rule-based feeler, slot-filling user, oracle agent); this module only
//! fixes how their output is labelled, so it can never pass for model output: the model id
//! is always `scripted:<role>`, usage is zero and nothing is cached.
//!
//! Architecture invariant: no scripted behaviour lives here - the llm layer does not know
//! what any stage's stand-in says.

use crate::llm::chat::{AssistantMessage, ChatResponse, Usage};
use crate::llm::config::Role;

/// The model id scripted output carries: `scripted:<role>`.
pub fn scripted_model_id(role: Role) -> String {
    format!("scripted:{}", role.as_str())
}

/// Wrap a scripted stand-in's message as a response labelled `scripted:<role>`.
pub fn scripted_response(role: Role, message: AssistantMessage) -> ChatResponse {
    let finish_reason = if message.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    ChatResponse {
        message,
        finish_reason: Some(finish_reason.to_string()),
        usage: Usage::default(),
        model: scripted_model_id(role),
        from_cache: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_output_is_labelled() {
        let r = scripted_response(
            Role::Refiner,
            AssistantMessage {
                content: Some("I need to change my flight.".into()),
                ..AssistantMessage::default()
            },
        );
        assert_eq!(r.model, "scripted:refiner");
        assert_eq!(
            scripted_model_id(Role::GraphProposer),
            "scripted:graph_proposer"
        );
        assert_eq!(r.usage, Usage::default());
    }
}
