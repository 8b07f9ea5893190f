//! OpenAI provider tests: the written body is the canonical text of the tree it replaced,
//! reasoning sent back by policy, context windows from model listings.

use super::*;
use crate::llm::chat::ToolCall;

/// The body as the JSON tree it was built as before [`ChatBody`]: the definition the
/// written text must equal (its canonical form), so cache keys stay what they were.
fn tree_body(m: &OpenAiModel, req: &ChatRequest) -> Value {
    let mut body = m.extra_body.clone();
    body.insert("model".into(), json!(m.model));
    let messages = reasoning_sent(&req.messages, m.send_reasoning);
    if m.tools_in_prompt {
        // No `tools` and no `tool_choice`: the server may refuse either; the prompt
        // carries the tools and the answer's text the calls.
        body.insert(
            "messages".into(),
            json!(shape::tools_in_prompt(&messages, &req.tools)),
        );
    } else {
        body.insert("messages".into(), json!(messages));
        if !req.tools.is_empty() {
            body.insert("tools".into(), json!(req.tools));
        }
        if let Some(choice) = &req.tool_choice {
            body.insert("tool_choice".into(), choice.clone());
        }
    }
    let s = req.sampling.or(&m.defaults);
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            body.insert(k.to_string(), v);
        }
    };
    put("temperature", s.temperature.map(|x| json!(x)));
    put("top_p", s.top_p.map(|x| json!(x)));
    put("top_k", s.top_k.map(|x| json!(x)));
    put("min_p", s.min_p.map(|x| json!(x)));
    put("max_tokens", s.max_tokens.map(|x| json!(x)));
    put("seed", s.seed.map(|x| json!(x)));
    body.insert("stream".into(), Value::Bool(false));
    Value::Object(body)
}

/// A rough prompt size: the JSON of the messages and tools at four characters a token, plus
/// four per message. The server's own count decides; this only spares a request that
/// cannot fit.
fn estimate_prompt_tokens(body: &Value) -> u64 {
    let chars = |k: &str| {
        body.get(k)
            .map_or(0, |v| v.to_string().chars().count() as u64)
    };
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map_or(0, |m| m.len() as u64);
    (chars("messages") + chars("tools")).div_ceil(4) + 4 * messages
}

#[test]
fn the_written_body_is_the_canonical_text_of_the_tree_it_replaced() {
    let call = |id: &str, name: &str, args: &str| ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    };
    let messages = vec![
        ChatMessage::system("You are an \"agent\".\n\tBe brief: caf\u{e9} \u{1F600}"),
        ChatMessage::assistant("Hi! How can I help?"),
        ChatMessage::user("Cancel reservation ABC123 \\ please"),
        ChatMessage::assistant_tool_calls(
            Some("Checking.".into()),
            vec![
                call(
                    "c1",
                    "get_reservation_details",
                    r#"{"reservation_id":"ABC123"}"#,
                ),
                call("c2", "get_user_details", r#"{ "user_id" : "u\"1" }"#),
            ],
        )
        .with_reasoning("The user wants a cancellation."),
        ChatMessage::tool("c1", "get_reservation_details", r#"{"status":"ok"}"#),
        ChatMessage::tool("c2", "get_user_details", "Error: not found"),
        ChatMessage::assistant_tool_calls(None, vec![call("c3", "cancel", "{}")]),
        ChatMessage::user("Thanks"),
        ChatMessage::assistant_tool_calls(None, vec![call("c4", "think", "{}")])
            .with_reasoning("After the last user turn."),
        ChatMessage {
            name: Some("helper".into()),
            ..ChatMessage::text(MessageRole::Tool, "")
        },
    ];
    let tools = vec![
        json!({"type": "function", "function": {"name": "cancel", "description": "Cancel.",
            "parameters": {"type": "object", "properties": {"z": {"type": "string"},
            "a": {"type": "number", "enum": [1.5, -0.0, 2e-7]}}, "required": ["z"]}}}),
        json!({"type": "function", "function": {"name": "think", "parameters": {}}}),
    ];
    let sampling = Sampling {
        temperature: Some(0.7),
        top_p: Some(0.95),
        top_k: Some(-1),
        min_p: Some(0.05),
        max_tokens: Some(512),
        seed: Some(u64::MAX),
    };
    let mut extra = Map::new();
    extra.insert(
        "chat_template_kwargs".into(),
        json!({"enable_thinking": false, "a": [{"y": 1, "b": null}]}),
    );
    extra.insert("repetition_penalty".into(), json!(1.05));
    extra.insert("seed".into(), json!(3));
    extra.insert("max_tokens".into(), json!(64));
    let env = |_: &str| -> Option<String> { None };
    let dir = std::env::temp_dir().join(format!("tracer-body-{}", std::process::id()));
    let mut checked = 0;
    for tools_in_prompt in [false, true] {
        for send_reasoning in [
            SendReasoning::Never,
            SendReasoning::WithinTurn,
            SendReasoning::All,
        ] {
            for (extra_body, with_tools, sampled, choice) in [
                (Map::new(), false, false, None),
                (extra.clone(), true, true, Some(json!("auto"))),
                (extra.clone(), true, false, None),
            ] {
                let cfg = RoleConfig {
                    provider: Provider::Openai,
                    base_url: Some("http://127.0.0.1:9/v1".into()),
                    model: Some("model-\"x\"".into()),
                    temperature: Some(0.2),
                    extra_body,
                    tools_in_prompt,
                    send_reasoning,
                    ..Default::default()
                };
                let m = OpenAiModel::new("test", &cfg, &dir.join("c.redb"), &env).unwrap();
                let mut req = ChatRequest::new(messages.clone());
                if with_tools {
                    req = req.with_tools(tools.clone());
                }
                if sampled {
                    req = req.with_sampling(sampling.clone());
                }
                req.tool_choice = choice;
                let tree = tree_body(&m, &req);
                let body = m.chat_body(&req);
                assert_eq!(body.text(), crate::llm::cache::canonical_json(&tree));
                assert_eq!(
                    text_key("chat", "ns", body.text()),
                    request_key("chat", "ns", &tree)
                );
                assert_eq!(body.estimate_prompt_tokens(), estimate_prompt_tokens(&tree));
                // The incremental estimate `tracer plan` and the probe use is the same
                // figure for a role that sends no reasoning back.
                if send_reasoning == SendReasoning::Never && !tools_in_prompt {
                    let offered: &[Value] = if with_tools { &tools } else { &[] };
                    assert_eq!(
                        super::super::body::estimate_prompt_tokens(&messages, offered),
                        body.estimate_prompt_tokens()
                    );
                }
                assert_eq!(
                    body.max_tokens(),
                    tree.get("max_tokens").and_then(Value::as_u64)
                );
                let sent: Value = serde_json::from_str(body.raw().get()).unwrap();
                assert_eq!(sent, tree);
                // The tool list is written once per list: the same list again gives
                // the same text, another list its own.
                assert_eq!(m.chat_body(&req).text(), body.text());
                let other = req.clone().with_tools(vec![tools[1].clone()]);
                assert_eq!(
                    m.chat_body(&other).text(),
                    crate::llm::cache::canonical_json(&tree_body(&m, &other))
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 18);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reasoning_goes_back_by_policy() {
    let think = |m: ChatMessage, r: &str| m.with_reasoning(r);
    let call = ToolCall {
        id: "c".into(),
        name: "f".into(),
        arguments: "{}".into(),
    };
    let messages = vec![
        ChatMessage::system("policy"),
        ChatMessage::user("hi"),
        think(ChatMessage::assistant("hello"), "t1"),
        ChatMessage::user("cancel it"),
        think(ChatMessage::assistant_tool_calls(None, vec![call]), "t2"),
        ChatMessage::tool("c", "f", "{}"),
    ];
    let kept = |p| -> Vec<Option<String>> {
        reasoning_sent(&messages, p)
            .into_iter()
            .map(|m| m.reasoning_content)
            .collect()
    };
    let none = vec![None; 6];
    assert_eq!(kept(SendReasoning::Never), none);
    let mut within = none.clone();
    within[4] = Some("t2".into());
    assert_eq!(kept(SendReasoning::WithinTurn), within);
    let mut all = within.clone();
    all[2] = Some("t1".into());
    assert_eq!(kept(SendReasoning::All), all);
    // On the wire the field is `reasoning_content` of the assistant message.
    let wire = json!(reasoning_sent(&messages, SendReasoning::WithinTurn));
    assert_eq!(wire[4]["reasoning_content"], "t2");
    assert!(wire[2].get("reasoning_content").is_none());
}

#[test]
fn context_windows_from_models_listings() {
    let listed = json!({"data": [
        {"id": "a", "max_model_len": 32768},
        {"id": "b", "context_length": 8192},
        {"id": "c"}
    ]});
    assert_eq!(served_context_window(&listed, "a"), Some(32768));
    assert_eq!(served_context_window(&listed, "b"), Some(8192));
    assert_eq!(served_context_window(&listed, "c"), None);
    assert_eq!(served_context_window(&listed, "d"), None);
    let body = json!({"messages": [{"role": "user", "content": "x".repeat(400)}]});
    let t = estimate_prompt_tokens(&body);
    assert!((100..=120).contains(&t), "{t}");
}
