//! The LLM grounder: a tool-calling model grounds a trace on a fork of the environment,
//! told the calls to make in order; only calls of the expected next tool that execute and
//! obey the policy advance the trace, so the result replays by construction.
//!
//! Architecture invariant: knows domains through `Environment`, models through
//! `llm::ChatModel`; nothing of stages or the pipeline.

use super::{GroundedStep, Grounding, add_answer_lookups, answer, name_created_in_words};
use crate::domain::Environment;
use serde_json::Value;

/// The LLM grounder's instructions (our own words).
/// The prefix of a grounder's error that is the endpoint's, not the trace's: the stage
/// counts such a trace as errored (asked again on a rerun), never as rejected.
pub const ENDPOINT_ERROR: &str = "grounder endpoint: ";

/// Ground one trace with a tool-calling model working on a fork of the environment. Only
/// calls of the expected next tool that execute and obey the policy advance the trace; the
/// result therefore replays by construction.
pub async fn llm_ground_trace(
    model: std::sync::Arc<dyn crate::llm::ChatModel>,
    env: std::sync::Arc<dyn Environment>,
    intents: Vec<Vec<String>>,
    user_id: String,
    seed: u64,
    prompt: std::sync::Arc<crate::llm::Prompt>,
) -> Result<Grounding, String> {
    use crate::llm::{ChatMessage, ChatRequest};
    let steps: Vec<(usize, String)> = intents
        .iter()
        .enumerate()
        .flat_map(|(i, w)| w.iter().map(move |t| (i, t.clone())))
        .collect();
    let tools: std::sync::Arc<[Value]> = env
        .tool_specs()
        .iter()
        .filter(|s| !s.terminates)
        .map(|s| s.openai())
        .collect();
    let plan: Vec<String> = steps.iter().map(|(_, t)| t.clone()).collect();
    let mut messages = prompt.messages(None);
    messages.push(ChatMessage::user(format!(
        "Customer user id: {user_id}\nCalls, in order: {}",
        plan.join(", ")
    )));
    let mut state = env.fork();
    let mut path: Vec<GroundedStep> = Vec::new();
    let salt = format!("{seed}\0{user_id}");
    for turn in 0..steps.len() * 3 {
        let Some((intent, expected)) = steps.get(path.len()).cloned() else {
            break;
        };
        let req = ChatRequest::new(messages.clone())
            .with_tools(std::sync::Arc::clone(&tools))
            .with_seed(seed.wrapping_add(turn as u64));
        let r = model
            .chat(req)
            .await
            .map_err(|e| format!("{ENDPOINT_ERROR}{e}"))?;
        let Some(call) = r.message.tool_calls.first().cloned() else {
            return Err(format!(
                "the grounder stopped calling tools after {} of {} calls",
                path.len(),
                steps.len()
            ));
        };
        messages.push(ChatMessage::assistant_tool_calls(
            r.message.content.clone(),
            vec![call.clone()],
        ));
        let observation = if call.name != expected {
            format!("Error: the next call must be {expected}, not {}", call.name)
        } else {
            match call.arguments_json() {
                Err(e) => format!("Error: arguments are not valid JSON: {e}"),
                Ok(args) => match state.check_policy(&call.name, &args) {
                    Err(rule) => format!("Error: the policy forbids this call: {rule}"),
                    Ok(()) => {
                        let mut next = state.fork();
                        let out = next.invoke(&call.name, &args);
                        if !out.is_error {
                            let request = crate::domain::kit::templates::with_salt(&salt, || {
                                state.describe_request(&call.name, &args, &out.text)
                            })
                            .map(|r| crate::quality::language::tidy(&r))
                            .map(|r| super::said_again(state.as_ref(), &call.name, &r, &path));
                            path.push(GroundedStep {
                                intent,
                                tool: call.name.clone(),
                                required_outputs: answer(
                                    state.as_ref(),
                                    &call.name,
                                    &args,
                                    &out.text,
                                    request.as_deref(),
                                ),
                                request,
                                args,
                                output: out.text.clone(),
                            });
                            state = next;
                        }
                        out.text
                    }
                },
            }
        };
        messages.push(ChatMessage::tool(
            call.id.clone(),
            call.name.clone(),
            observation,
        ));
    }
    if path.len() < steps.len() {
        return Err(format!(
            "the grounder completed {} of {} calls",
            path.len(),
            steps.len()
        ));
    }
    let mut path = add_answer_lookups(env.as_ref(), path);
    name_created_in_words(env.as_ref(), &user_id, &mut path);
    Ok(Grounding {
        facts: env.user_facts(&user_id),
        user_id,
        steps: path,
        final_hash: state.state_hash().to_hex(),
    })
}
