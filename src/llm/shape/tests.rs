//! Shape tests: thinking blocks, each text format of tool calls, text left as text, broken
//! calls, and tools written into the prompt.

use super::*;
use crate::llm::chat::{AssistantMessage, ChatMessage, MessageRole};
use crate::llm::error::ErrorKind;
use serde_json::json;

fn answer(content: &str) -> ChatResponse {
    ChatResponse {
        message: AssistantMessage {
            content: Some(content.to_string()),
            ..AssistantMessage::default()
        },
        finish_reason: Some("stop".into()),
        usage: Default::default(),
        model: "m".into(),
        from_cache: false,
    }
}

fn tools() -> Vec<Value> {
    ["get_user_details", "cancel_reservation"]
        .iter()
        .map(|n| json!({"type": "function", "function": {"name": n, "parameters": {}}}))
        .collect()
}

fn calls(r: &ChatResponse) -> Vec<(String, Value)> {
    r.message
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments_json().unwrap()))
        .collect()
}

fn norm(content: &str, fmt: ToolCallFormat) -> Result<ChatResponse, LlmError> {
    let mut r = answer(content);
    normalize("role 'agent'", &mut r, ReasoningFormat::Auto, fmt, &tools())?;
    Ok(r)
}

#[test]
fn think_blocks_leave_the_content() {
    let mut r = answer("<think>Check the policy.</think>\n\nYour flight is HAT030.");
    normalize(
        "r",
        &mut r,
        ReasoningFormat::Auto,
        ToolCallFormat::Auto,
        &[],
    )
    .unwrap();
    assert_eq!(r.message.content.as_deref(), Some("Your flight is HAT030."));
    assert_eq!(
        r.message.reasoning_content.as_deref(),
        Some("Check the policy.")
    );
    // The template opened the block: only the closing tag is in the answer.
    let (t, rest) = extract_think("The user wants a refund.</think>Sure.");
    assert_eq!(
        (t.as_str(), rest.as_str()),
        ("The user wants a refund.", "Sure.")
    );
    // Cut off by max_tokens: all thinking, no content.
    let mut r = answer("<think>Let me see, the booking");
    normalize(
        "r",
        &mut r,
        ReasoningFormat::Auto,
        ToolCallFormat::Auto,
        &[],
    )
    .unwrap();
    assert_eq!(r.message.content, None);
    assert_eq!(
        r.message.reasoning_content.as_deref(),
        Some("Let me see, the booking")
    );
    // A field is kept and the tags are added after it.
    let mut r = answer("<think>b</think>ok");
    r.message.reasoning_content = Some("a".into());
    normalize(
        "r",
        &mut r,
        ReasoningFormat::Tags,
        ToolCallFormat::Auto,
        &[],
    )
    .unwrap();
    assert_eq!(r.message.reasoning_content.as_deref(), Some("a\nb"));
    // `fields` leaves the text alone.
    let mut r = answer("<think>b</think>ok");
    normalize(
        "r",
        &mut r,
        ReasoningFormat::Fields,
        ToolCallFormat::Auto,
        &[],
    )
    .unwrap();
    assert_eq!(r.message.content.as_deref(), Some("<think>b</think>ok"));
}

#[test]
fn hermes_calls_with_text_and_thinking_around_them() {
    let r = norm(
        "<think>Need the user first.</think>Let me look.\n<tool_call>\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"ab_1\"}}\n</tool_call>\n<tool_call>{\"name\": \"cancel_reservation\", \"arguments\": \"{\\\"reservation_id\\\": \\\"X1\\\"}\"}</tool_call>",
        ToolCallFormat::Auto,
    )
    .unwrap();
    assert_eq!(
        calls(&r),
        [
            ("get_user_details".into(), json!({"user_id": "ab_1"})),
            ("cancel_reservation".into(), json!({"reservation_id": "X1"}))
        ]
    );
    assert_eq!(r.message.content.as_deref(), Some("Let me look."));
    assert_eq!(
        r.message.reasoning_content.as_deref(),
        Some("Need the user first.")
    );
    assert_eq!(r.message.tool_calls[1].id, "text_call_1");
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
}

#[test]
fn llama3_json_only_when_it_names_an_offered_tool() {
    for text in [
        "{\"name\": \"get_user_details\", \"parameters\": {\"user_id\": \"ab_1\"}}",
        "<|python_tag|>{\"name\": \"get_user_details\", \"parameters\": {\"user_id\": \"ab_1\"}}",
        "[{\"name\": \"get_user_details\", \"parameters\": {\"user_id\": \"ab_1\"}}]",
    ] {
        let r = norm(text, ToolCallFormat::Auto).unwrap();
        assert_eq!(
            calls(&r),
            [("get_user_details".into(), json!({"user_id": "ab_1"}))],
            "{text}"
        );
        assert_eq!(r.message.content, None);
    }
    let two = norm(
        "{\"name\": \"get_user_details\", \"parameters\": {}}; {\"name\": \"cancel_reservation\", \"parameters\": {\"reservation_id\": \"X\"}}",
        ToolCallFormat::Llama3,
    )
    .unwrap();
    assert_eq!(two.message.tool_calls.len(), 2);
    // JSON that is not a call of an offered tool stays text.
    for text in [
        "{\"name\": \"Ann\", \"parameters\": {}}",
        "{\"total\": 3}",
        "[1, 2]",
    ] {
        let r = norm(text, ToolCallFormat::Auto).unwrap();
        assert!(r.message.tool_calls.is_empty(), "{text}");
        assert_eq!(r.message.content.as_deref(), Some(text));
    }
}

#[test]
fn mistral_both_generations() {
    let old = norm(
        "[TOOL_CALLS][{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"ab_1\"}}, {\"name\": \"cancel_reservation\", \"arguments\": {\"reservation_id\": \"X\"}}]",
        ToolCallFormat::Auto,
    )
    .unwrap();
    assert_eq!(old.message.tool_calls.len(), 2);
    let new = norm(
        "[TOOL_CALLS]get_user_details[ARGS]{\"user_id\": \"ab_1\"}[TOOL_CALLS]cancel_reservation[ARGS]{\"reservation_id\": \"X\"}",
        ToolCallFormat::Mistral,
    )
    .unwrap();
    assert_eq!(calls(&new), calls(&old));
}

#[test]
fn text_without_calls_and_requests_without_tools_stay_text() {
    let r = norm("Your reservation is cancelled.", ToolCallFormat::Auto).unwrap();
    assert!(r.message.tool_calls.is_empty());
    // No tools offered (a user simulator or a refiner): nothing is read as a call.
    let mut r = answer("<tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call>");
    normalize(
        "r",
        &mut r,
        ReasoningFormat::Auto,
        ToolCallFormat::Auto,
        &[],
    )
    .unwrap();
    assert!(r.message.tool_calls.is_empty());
    // A field call wins; the text is not read.
    let mut r =
        answer("<tool_call>{\"name\": \"cancel_reservation\", \"arguments\": {}}</tool_call>");
    r.message.tool_calls = vec![ToolCall {
        id: "a".into(),
        name: "get_user_details".into(),
        arguments: "{}".into(),
    }];
    normalize(
        "r",
        &mut r,
        ReasoningFormat::Auto,
        ToolCallFormat::Auto,
        &tools(),
    )
    .unwrap();
    assert_eq!(r.message.tool_calls.len(), 1);
}

#[test]
fn broken_text_calls_are_malformed_and_field_mode_names_the_flag() {
    for text in [
        "<tool_call>{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"ab</tool_call>",
        "<tool_call>{\"arguments\": {}}</tool_call>",
        "[TOOL_CALLS]get_user_details[ARGS]{\"user_id\"",
        "<tool_call>{\"name\": \"get_user_details\", \"arguments\": [1]}</tool_call>",
    ] {
        let err = norm(text, ToolCallFormat::Auto).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Malformed, "{text}: {err}");
    }
    let err = norm(
        "<tool_call>{\"name\": \"get_user_details\", \"arguments\": {}}</tool_call>",
        ToolCallFormat::Field,
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TextToolCall);
    let line = err.to_string();
    assert!(
        line.contains("--tool-call-parser") && line.contains("--jinja"),
        "{line}"
    );
    assert!(!line.contains('\n'));
    // Plain text in field mode is fine.
    assert!(norm("Hello.", ToolCallFormat::Field).is_ok());
}

#[test]
fn tools_in_prompt_lists_the_tools_and_writes_calls_and_results_as_text() {
    let call = |id: &str, name: &str, args: &str| ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    };
    let messages = vec![
        ChatMessage::system("Airline policy."),
        ChatMessage::user("Cancel X1 for ab_1."),
        ChatMessage::assistant_tool_calls(
            Some("Let me look.".into()),
            vec![
                call("text_call_0", "get_user_details", "{\"user_id\":\"ab_1\"}"),
                call(
                    "text_call_1",
                    "cancel_reservation",
                    "{\"reservation_id\":\"X1\"}",
                ),
            ],
        ),
        ChatMessage::tool("text_call_0", "get_user_details", "{\"name\": \"Ann\"}"),
        ChatMessage::tool("text_call_1", "cancel_reservation", "Error: not found"),
        ChatMessage::assistant("It was not found."),
    ];
    let sent = tools_in_prompt(&messages, &tools());
    let roles: Vec<MessageRole> = sent.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            MessageRole::System,
            MessageRole::User,
            MessageRole::Assistant,
            MessageRole::User,
            MessageRole::Assistant
        ],
        "the two results share one user message; no tool role is left"
    );
    let system = sent[0].content.as_deref().unwrap();
    assert!(system.starts_with("Airline policy.\n\n# Tools"), "{system}");
    assert!(system.contains("<tools>\n{"), "{system}");
    assert!(
        system.contains("\"name\":\"cancel_reservation\""),
        "{system}"
    );
    assert!(system.contains("</tools>"), "{system}");
    assert!(system.contains("<tool_call>\n{\"name\": <function-name>"));
    assert!(sent.iter().all(|m| m.tool_calls.is_empty()));
    assert_eq!(
        sent[2].content.as_deref(),
        Some(
            "Let me look.\n<tool_call>\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\":\"ab_1\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"cancel_reservation\", \"arguments\": {\"reservation_id\":\"X1\"}}\n</tool_call>"
        )
    );
    assert_eq!(
        sent[3].content.as_deref(),
        Some(
            "<tool_response>\n{\"name\": \"Ann\"}\n</tool_response>\n<tool_response>\nError: not found\n</tool_response>"
        )
    );
    // What the prompt asks for is what the parser reads back.
    let mut r = answer(sent[2].content.as_deref().unwrap());
    normalize(
        "r",
        &mut r,
        ReasoningFormat::Auto,
        ToolCallFormat::Hermes,
        &tools(),
    )
    .unwrap();
    assert_eq!(r.message.tool_calls.len(), 2);
    assert_eq!(
        calls(&r)[1],
        ("cancel_reservation".into(), json!({"reservation_id": "X1"}))
    );
    // Without a system message one is added; without tools nothing is added.
    let bare = tools_in_prompt(&messages[1..2], &tools());
    assert_eq!(bare[0].role, MessageRole::System);
    assert!(bare[0].content.as_deref().unwrap().starts_with("# Tools"));
    assert_eq!(tools_in_prompt(&messages[..2], &[]), messages[..2].to_vec());
}
