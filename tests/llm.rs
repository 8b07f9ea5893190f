//! The LLM role layer over the real HTTP path: every test starts its own loopback
//! OpenAI-compatible server (tests/support/openai_server.rs), builds a role the way a stage
//! does, and checks answers, faults, retries, the cache, limits, preflight and key hygiene.
//! No network beyond 127.0.0.1. Timing assertions are lower bounds only.

use crate::openai_server::{OpenAiServer, Reply, expected_embedding};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tracer::llm::{
    ChatMessage, ChatModel, ChatRequest, ErrorKind, LlmError, Role, RoleConfig, RoleModel,
    RolesConfig, build_embedder_with_env, build_role, build_role_with_env, preflight,
    preflight_with_env,
};

const MODEL: &str = "test-model";
const KEY_VAR: &str = "TRACER_TEST_LLM_KEY";
const KEY: &str = "sk-test-4f9a1c7e2b-SECRET";

/// The environment tests see: only the test key is set.
fn env_with_key(name: &str) -> Option<String> {
    (name == KEY_VAR).then(|| KEY.to_string())
}

/// A response-cache path in a fresh directory, removed with it when the test ends.
struct CachePath {
    path: PathBuf,
    _dir: crate::common::TempDir,
}

impl AsRef<std::path::Path> for CachePath {
    fn as_ref(&self) -> &std::path::Path {
        &self.path
    }
}

impl std::ops::Deref for CachePath {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.path
    }
}

fn cache_path(label: &str) -> CachePath {
    let dir = crate::common::temp_dir(&format!("llm-{label}"));
    CachePath {
        path: dir.join("cache.redb"),
        _dir: dir,
    }
}

/// An openai role config for `base_url` plus extra TOML lines. Short backoff so fault
/// tests are quick; a `Retry-After` still wins over it.
fn config(base_url: &str, extra: &str) -> RoleConfig {
    let text = format!(
        "provider = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"{MODEL}\"\nretry_initial_ms = 10\n{extra}"
    );
    RoleConfig::from_toml("role 'agent'", &text).unwrap()
}

fn endpoint(cfg: &RoleConfig, cache: &std::path::Path) -> Arc<dyn ChatModel> {
    match build_role_with_env(Role::Agent, cfg, cache, &env_with_key).unwrap() {
        RoleModel::Endpoint(m) => m,
        RoleModel::Scripted(_) => panic!("expected an endpoint role"),
    }
}

fn hello(text: &str) -> ChatRequest {
    ChatRequest::new(vec![
        ChatMessage::system("You are a customer-service agent."),
        ChatMessage::user(text),
    ])
}

fn tools() -> Vec<Value> {
    vec![json!({"type": "function", "function": {
        "name": "get_user_details",
        "description": "Get a user's profile.",
        "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}},
                       "required": ["user_id"]}}})]
}

#[tokio::test]
async fn chat_plain_text_sends_config_and_extra_body() {
    let server = OpenAiServer::start(&[MODEL]);
    let cfg = config(
        &server.base_url(),
        "temperature = 0.6\ntop_k = 20\nmin_p = 0.05\nmax_tokens = 64\nextra_body = { chat_template_kwargs = { enable_thinking = false } }",
    );
    let cache = cache_path("plain");
    let model = endpoint(&cfg, &cache);
    let mut req = hello("hello there");
    req.sampling.temperature = Some(0.2);
    let r = model.chat(req).await.unwrap();
    assert_eq!(r.message.content.as_deref(), Some("echo: hello there"));
    assert!(r.message.tool_calls.is_empty());
    assert_eq!(r.model, MODEL);
    assert!(!r.from_cache);
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (20, 5));

    let seen = server.posts();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    let body = &seen[0].body;
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["temperature"], 0.2, "per-call override wins");
    assert_eq!(body["top_k"], 20);
    assert_eq!(body["min_p"], 0.05);
    assert_eq!(body["max_tokens"], 64);
    assert_eq!(body["stream"], false);
    assert_eq!(body["chat_template_kwargs"]["enable_thinking"], false);
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hello there"})
    );
    assert_eq!(seen[0].authorization, None, "no key configured, no header");

    let stats = model.stats();
    assert_eq!(
        (stats.calls, stats.http_requests, stats.cache_hits),
        (1, 1, 0)
    );
    assert_eq!((stats.prompt_tokens, stats.completion_tokens), (20, 5));
}

#[tokio::test]
async fn chat_with_several_tool_calls_in_one_message() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::ToolCalls(vec![
        (
            "get_user_details".into(),
            "{\"user_id\": \"mia_li_3668\"}".into(),
        ),
        (
            "get_reservation_details".into(),
            "{\"reservation_id\": \"NO6JO3\"}".into(),
        ),
    ]));
    let cache = cache_path("tools");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    let r = model
        .chat(hello("Where is my booking?").with_tools(tools()))
        .await
        .unwrap();
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    let calls = &r.message.tool_calls;
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].name, "get_user_details");
    assert_eq!(
        calls[0].arguments_json().unwrap(),
        json!({"user_id": "mia_li_3668"})
    );
    assert_eq!(calls[1].name, "get_reservation_details");
    assert_eq!(calls[1].id, "call_1");
    assert_eq!(server.posts()[0].body["tools"], json!(tools()));

    // The assistant turn goes back into the conversation in OpenAI shape.
    let turn = serde_json::to_value(r.message.to_message()).unwrap();
    assert_eq!(
        turn["tool_calls"][1]["function"]["name"],
        "get_reservation_details"
    );
}

#[tokio::test]
async fn reasoning_content_is_kept_under_either_field_name() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::Reasoning {
        field: "reasoning_content",
        reasoning: "The user wants a refund.".into(),
        content: "Let me check.".into(),
    });
    server.push(Reply::Reasoning {
        field: "reasoning",
        reasoning: "Second thought.".into(),
        content: "Done.".into(),
    });
    let cache = cache_path("reasoning");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    let a = model.chat(hello("one")).await.unwrap();
    assert_eq!(
        a.message.reasoning_content.as_deref(),
        Some("The user wants a refund.")
    );
    assert_eq!(a.message.content.as_deref(), Some("Let me check."));
    let b = model.chat(hello("two")).await.unwrap();
    assert_eq!(
        b.message.reasoning_content.as_deref(),
        Some("Second thought.")
    );
    // Reasoning survives the cache too.
    let again = model.chat(hello("one")).await.unwrap();
    assert!(again.from_cache);
    assert_eq!(again.message.reasoning_content, a.message.reasoning_content);
}

#[tokio::test]
async fn embeddings_in_order_and_cached() {
    let server = OpenAiServer::start(&["embed-model"]);
    let text = format!(
        "provider = \"openai\"\nbase_url = \"{}\"\nmodel = \"embed-model\"",
        server.base_url()
    );
    let cfg = RoleConfig::from_toml("embedder 'emotion'", &text).unwrap();
    let cache = cache_path("embed");
    let embedder = build_embedder_with_env("emotion", &cfg, &cache, &env_with_key).unwrap();
    let texts: Vec<String> = ["I am furious", "thanks!", ""].map(String::from).to_vec();
    let vectors = embedder.embed(&texts).await.unwrap();
    let expected: Vec<Vec<f32>> = texts.iter().map(|t| expected_embedding(t)).collect();
    assert_eq!(vectors, expected);
    assert_eq!(server.requests()[0].path, "/v1/embeddings");
    assert_eq!(server.requests()[0].body["encoding_format"], "float");
    assert_eq!(embedder.embed(&texts).await.unwrap(), expected);
    assert_eq!(server.post_count(), 1, "second call served from the cache");
    assert_eq!(embedder.stats().cache_hits, 1);
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::Status {
        code: 429,
        retry_after: Some(1),
        message: "slow down".into(),
    });
    let cache = cache_path("429");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    let r = model.chat(hello("hi")).await.unwrap();
    assert_eq!(r.message.content.as_deref(), Some("echo: hi"));
    let seen = server.posts();
    assert_eq!(seen.len(), 2);
    let gap = seen[1].at.duration_since(seen[0].at);
    // A lower bound only: the backoff alone (10 ms initial) would be far shorter.
    assert!(
        gap >= Duration::from_secs(1),
        "second attempt after {gap:?}"
    );
    let stats = model.stats();
    assert_eq!(stats.retries, 1);
    assert_eq!(stats.errors_of(ErrorKind::RateLimited), 1);
    assert_eq!(stats.failures, 0);
}

#[tokio::test]
async fn server_errors_and_hangups_are_retried() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::Status {
        code: 500,
        retry_after: None,
        message: "internal".into(),
    });
    server.push(Reply::Status {
        code: 503,
        retry_after: Some(1),
        message: "overloaded".into(),
    });
    server.push(Reply::Hangup);
    let cache = cache_path("5xx");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    let r = model.chat(hello("hi")).await.unwrap();
    assert_eq!(r.message.content.as_deref(), Some("echo: hi"));
    let seen = server.posts();
    assert_eq!(seen.len(), 4);
    // 503 honours Retry-After as well (lower bound only).
    let gap = seen[2].at.duration_since(seen[1].at);
    assert!(
        gap >= Duration::from_secs(1),
        "attempt after the 503 came after {gap:?}"
    );
    let stats = model.stats();
    assert_eq!(
        (stats.retries, stats.http_requests, stats.failures),
        (3, 4, 0)
    );
    assert_eq!(stats.errors_of(ErrorKind::ServerError), 2);
    assert_eq!(stats.errors_of(ErrorKind::Connection), 1, "the hang-up");
}

#[tokio::test]
async fn exhausted_retries_surface_the_last_error() {
    let server = OpenAiServer::start(&[MODEL]);
    for _ in 0..3 {
        server.push(Reply::Status {
            code: 500,
            retry_after: None,
            message: "down".into(),
        });
    }
    let cache = cache_path("exhaust");
    let model = endpoint(&config(&server.base_url(), "max_retries = 2"), &cache);
    let err = model.chat(hello("hi")).await.unwrap_err();
    assert!(matches!(err, LlmError::Status { status: 500, .. }), "{err}");
    assert!(err.to_string().starts_with("role 'agent': "), "{err}");
    assert_eq!(server.post_count(), 3);
    assert_eq!(model.stats().failures, 1);
}

#[tokio::test]
async fn timeouts_are_retried_then_surfaced() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::Delay(Duration::from_secs(2)));
    let cfg = config(&server.base_url(), "timeout_secs = 0.3");
    let slow_cache = cache_path("timeout");
    let model = endpoint(&cfg, &slow_cache);
    let r = model.chat(hello("hi")).await.unwrap();
    assert_eq!(r.message.content.as_deref(), Some("echo: hi"));
    assert_eq!(server.post_count(), 2);
    assert_eq!(model.stats().errors_of(ErrorKind::Timeout), 1);

    server.push(Reply::Delay(Duration::from_secs(2)));
    let cfg = config(&server.base_url(), "timeout_secs = 0.3\nmax_retries = 0");
    let final_cache = cache_path("timeout-final");
    let model = endpoint(&cfg, &final_cache);
    let err = model.chat(hello("again")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
}

#[tokio::test]
async fn a_retry_after_past_the_limit_gives_up_saying_so() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::Status {
        code: 429,
        retry_after: Some(3600),
        message: "come back in an hour".into(),
    });
    let cache = cache_path("retry-after");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    let err = model.chat(hello("hi")).await.unwrap_err().to_string();
    assert!(err.contains("come back in an hour"), "{err}");
    assert!(
        err.contains(
            "asked to retry after 3600s, longer than the 600s this client waits; not retried"
        ),
        "{err}"
    );
    assert_eq!(server.post_count(), 1);
}

#[tokio::test]
async fn another_server_is_another_cache_namespace_unless_named() {
    let (a, b) = (OpenAiServer::start(&[MODEL]), OpenAiServer::start(&[MODEL]));
    let cache = cache_path("namespace");
    endpoint(&config(&a.base_url(), ""), &cache)
        .chat(hello("hi"))
        .await
        .unwrap();
    // Same model id, same request, another server: asked, not answered from A's cache.
    let r = endpoint(&config(&b.base_url(), ""), &cache)
        .chat(hello("hi"))
        .await
        .unwrap();
    assert!(!r.from_cache);
    assert_eq!((a.post_count(), b.post_count()), (1, 1));
    // A namespace named in the config survives a server move.
    let named = "cache_namespace = \"test-model-vllm\"";
    endpoint(&config(&a.base_url(), named), &cache)
        .chat(hello("hello"))
        .await
        .unwrap();
    let r = endpoint(&config(&b.base_url(), named), &cache)
        .chat(hello("hello"))
        .await
        .unwrap();
    assert!(r.from_cache);
    assert_eq!((a.post_count(), b.post_count()), (2, 1));
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for code in [400, 401, 404] {
        let server = OpenAiServer::start(&[MODEL]);
        server.push(Reply::Status {
            code,
            retry_after: None,
            message: format!("nope {code}"),
        });
        let cache = cache_path("4xx");
        let model = endpoint(&config(&server.base_url(), ""), &cache);
        let err = model.chat(hello("hi")).await.unwrap_err();
        assert!(
            matches!(&err, LlmError::Status { status, .. } if *status == code),
            "{err}"
        );
        assert!(err.to_string().contains(&format!("nope {code}")), "{err}");
        assert_eq!(err.kind(), ErrorKind::ClientError);
        assert_eq!(server.post_count(), 1, "HTTP {code} must not be retried");
    }
}

#[tokio::test]
async fn malformed_body_is_a_typed_error_and_not_cached() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::MalformedBody);
    let cache = cache_path("malformed");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    let err = model.chat(hello("hi")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
    assert_eq!(server.post_count(), 1);
    let stats = model.stats();
    assert_eq!(
        (stats.failures, stats.errors_of(ErrorKind::Malformed)),
        (1, 1)
    );
    // Nothing was cached: the same request asks again and now succeeds.
    let r = model.chat(hello("hi")).await.unwrap();
    assert!(!r.from_cache);
    assert_eq!(server.post_count(), 2);
}

#[tokio::test]
async fn truncated_tool_call_arguments_are_malformed() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::ToolCalls(vec![
        (
            "get_user_details".into(),
            "{\"user_id\": \"mia_li_3668\"}".into(),
        ),
        (
            "cancel_reservation".into(),
            "{\"reservation_id\": \"NO6".into(),
        ),
    ]));
    let cache = cache_path("truncated");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    let err = model
        .chat(hello("cancel it").with_tools(tools()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    let text = err.to_string();
    assert!(
        text.contains("cancel_reservation") && text.contains("not valid JSON"),
        "{text}"
    );
}

#[tokio::test]
async fn rerun_is_served_from_the_cache() {
    let server = OpenAiServer::start(&[MODEL]);
    let cfg = config(&server.base_url(), "seed = 1");
    let cache = cache_path("rerun");
    let first = {
        let model = endpoint(&cfg, &cache);
        let r = model.chat(hello("hi").with_tools(tools())).await.unwrap();
        let again = model.chat(hello("hi").with_tools(tools())).await.unwrap();
        assert!(again.from_cache);
        assert_eq!(again.message, r.message);
        assert_eq!(model.stats().cache_hits, 1);
        r
    };
    assert_eq!(server.post_count(), 1);
    // A new run (a fresh model on the same cache file) pays nothing either.
    let model = endpoint(&cfg, &cache);
    let rerun = model.chat(hello("hi").with_tools(tools())).await.unwrap();
    assert!(rerun.from_cache);
    assert_eq!(rerun.message, first.message);
    assert_eq!(server.post_count(), 1, "server count unchanged");
    // Anything that changes the answer is part of the key: a seed, the tools, a message.
    model
        .chat(hello("hi").with_tools(tools()).with_seed(2))
        .await
        .unwrap();
    model.chat(hello("hi")).await.unwrap();
    model.chat(hello("hi!").with_tools(tools())).await.unwrap();
    assert_eq!(server.post_count(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_per_endpoint_is_bounded() {
    let server = OpenAiServer::start(&[MODEL]);
    server.hold_each_request(Duration::from_millis(300));
    let cache = cache_path("limit");
    let model = endpoint(&config(&server.base_url(), "concurrency = 2"), &cache);
    let tasks: Vec<_> = (0..6)
        .map(|i| {
            let model = model.clone();
            tokio::spawn(async move { model.chat(hello(&format!("request {i}"))).await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(server.post_count(), 6);
    assert!(
        server.max_in_flight() <= 2,
        "in flight: {}",
        server.max_in_flight()
    );
}

#[tokio::test]
async fn base_urls_are_used_round_robin() {
    let a = OpenAiServer::start(&[MODEL]);
    let b = OpenAiServer::start(&[MODEL]);
    let text = format!(
        "provider = \"openai\"\nbase_urls = [\"{}\", \"{}/\"]\nmodel = \"{MODEL}\"",
        a.base_url(),
        b.base_url()
    );
    let cfg = RoleConfig::from_toml("role 'user'", &text).unwrap();
    let cache = cache_path("rr");
    let model = endpoint(&cfg, &cache);
    for i in 0..4 {
        model.chat(hello(&format!("q{i}"))).await.unwrap();
    }
    assert_eq!((a.post_count(), b.post_count()), (2, 2));
    preflight_with_env("role 'user'", &cfg, &env_with_key)
        .await
        .unwrap();
}

#[tokio::test]
async fn preflight_names_the_problem() {
    let server = OpenAiServer::start(&[MODEL, "other-model"]);
    // Missing key variable (the real process environment: this name is never set).
    let cfg = config(
        &server.base_url(),
        "api_key_env = \"TRACER_TEST_UNSET_KEY_VAR\"",
    );
    let err = preflight(Role::Refiner, &cfg).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "role 'refiner': env var TRACER_TEST_UNSET_KEY_VAR is not set"
    );
    let cache = cache_path("nokey");
    let err = build_role(Role::Refiner, &cfg, &cache).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ApiKey);

    // Unreachable: a port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dead = format!("http://127.0.0.1:{port}/v1");
    let err = preflight(Role::Agent, &config(&dead, ""))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("role 'agent': endpoint {dead} unreachable: ")),
        "{text}"
    );
    assert_eq!(err.kind(), ErrorKind::Unreachable);

    // Unknown model.
    let mut cfg = config(&server.base_url(), "");
    cfg.model = Some("x".into());
    let err = preflight(Role::Agent, &cfg).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "role 'agent': model 'x' not served by {} (has: {MODEL}, other-model)",
            server.base_url()
        )
    );

    // All good, with the key sent.
    let cfg = config(&server.base_url(), &format!("api_key_env = \"{KEY_VAR}\""));
    preflight_with_env("role 'agent'", &cfg, &env_with_key)
        .await
        .unwrap();
    let models_call = server.requests().pop().unwrap();
    assert_eq!(models_call.path, "/v1/models");
    assert_eq!(models_call.authorization, Some(format!("Bearer {KEY}")));
    assert_eq!(server.post_count(), 0, "preflight costs no tokens");
}

#[tokio::test]
async fn api_key_never_leaks() {
    let server = OpenAiServer::start(&[MODEL]);
    let cache = cache_path("key");
    let cfg = config(&server.base_url(), &format!("api_key_env = \"{KEY_VAR}\""));
    let role = build_role_with_env(Role::Agent, &cfg, &cache, &env_with_key).unwrap();
    assert!(!format!("{role:?}").contains(KEY));
    let RoleModel::Endpoint(model) = role else {
        panic!("endpoint expected")
    };

    // A server that echoes the credentials back in its error message.
    server.push(Reply::EchoAuthorization(401));
    let err = model.chat(hello("hi")).await.unwrap_err();
    assert_eq!(
        server.requests()[0].authorization,
        Some(format!("Bearer {KEY}"))
    );
    let text = err.to_string();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
    assert!(!format!("{err:?}").contains(KEY));

    // Successful answers are cached; the cache file never holds the key.
    model.chat(hello("hi")).await.unwrap();
    model.chat(hello("second")).await.unwrap();
    drop(model);
    let bytes = std::fs::read(&cache).unwrap();
    assert!(!bytes.is_empty());
    assert!(
        !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "key found in the cache file"
    );
    // The request body (what the cache key is made of) does not hold it either.
    for r in server.requests() {
        assert!(!r.body.to_string().contains(KEY));
    }
}

#[tokio::test]
async fn a_key_echoed_in_an_answer_is_neither_returned_nor_cached() {
    let server = OpenAiServer::start(&[MODEL]);
    let cache = cache_path("key-in-answer");
    let cfg = config(&server.base_url(), &format!("api_key_env = \"{KEY_VAR}\""));
    let role = build_role_with_env(Role::Agent, &cfg, &cache, &env_with_key).unwrap();
    let RoleModel::Endpoint(model) = role else {
        panic!("endpoint expected")
    };
    server.push(Reply::EchoAuthorizationInAnswer);
    let fresh = model.chat(hello("hi")).await.unwrap();
    assert_eq!(
        server.requests()[0].authorization,
        Some(format!("Bearer {KEY}")),
        "the server did see the key"
    );
    // Asked again: the answer now comes from the cache, and is as clean.
    let hit = model.chat(hello("hi")).await.unwrap();
    assert!(hit.from_cache);
    for r in [&fresh, &hit] {
        let text = serde_json::to_string(r).unwrap();
        assert!(!text.contains(KEY), "{text}");
        assert!(!format!("{r:?}").contains(KEY));
        assert_eq!(
            r.message.content.as_deref(),
            Some("You sent Bearer [redacted].")
        );
        assert_eq!(
            r.message.reasoning_content.as_deref(),
            Some("The header was Bearer [redacted].")
        );
        let args = r.message.tool_calls[0].arguments_json().unwrap();
        assert_eq!(args["note"], "Bearer [redacted]");
        assert_eq!(args["seen"][0], "header Bearer [redacted] seen");
        assert_eq!(args["Bearer [redacted]"], true);
    }
    drop(model);
    let bytes = std::fs::read(&cache).unwrap();
    assert!(
        !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "key found in the cache file"
    );
}

#[test]
fn scripted_roles_are_labelled_and_touch_nothing() {
    let cache = cache_path("scripted");
    let cfg = RoleConfig::from_toml("role 'judge'", "").unwrap();
    let role = build_role(Role::Judge, &cfg, &cache).unwrap();
    assert!(role.is_scripted());
    assert_eq!(role.model_id(), "scripted:judge");
    assert!(!cache.exists(), "scripted roles open no cache");
}

#[test]
fn stage_config_errors_name_the_field() {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct StageToml {
        #[allow(dead_code)]
        roles: RolesConfig,
    }
    let ok = "[roles.refiner]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:8000/v1\"\nmodel = \"m\"\n[roles.agent]\n";
    let parsed: StageToml = toml::from_str(ok).unwrap();
    assert_eq!(parsed.roles.len(), 2);
    for (text, field) in [
        ("[roles.refiner]\ntempreature = 0.5\n", "tempreature"),
        ("[roles.refiner]\ntop_p = \"high\"\n", "top_p"),
        ("[roles.refinr]\n", "refinr"),
    ] {
        let err = toml::from_str::<StageToml>(text).err().unwrap().to_string();
        assert!(err.contains(field), "{text:?} -> {err}");
    }
    let err = RoleConfig::from_toml(
        "role 'judge'",
        "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nconcurrency = 0",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "role 'judge': field `concurrency`: 0 is outside 1..=4096"
    );
}

/// Tools the shape tests offer: the user lookup and a cancellation.
fn two_tools() -> Vec<Value> {
    let mut t = tools();
    t.push(json!({"type": "function", "function": {
        "name": "cancel_reservation",
        "description": "Cancel a reservation.",
        "parameters": {"type": "object", "properties": {"reservation_id": {"type": "string"}}}}}));
    t
}

fn call_list(r: &tracer::llm::ChatResponse) -> Vec<(String, Value)> {
    r.message
        .tool_calls
        .iter()
        .map(|c| (c.name.clone(), c.arguments_json().unwrap()))
        .collect()
}

#[tokio::test]
async fn answers_in_every_server_shape_come_out_in_fields() {
    let server = OpenAiServer::start(&[MODEL]);
    let lookup = (
        "get_user_details".to_string(),
        json!({"user_id": "mia_li_3668"}),
    );
    let cancel = (
        "cancel_reservation".to_string(),
        json!({"reservation_id": "NO6JO3"}),
    );
    // (what the server sends, the reasoning, the content, the calls) per shape.
    type Case = (
        Reply,
        Option<&'static str>,
        Option<&'static str>,
        Vec<(String, Value)>,
    );
    let cases: Vec<Case> = vec![
        // A reasoning model without a reasoning parser: <think> in the content.
        (
            Reply::Text("<think>The user asks for the policy.</think>\n\nRefunds take 5 days.".into()),
            Some("The user asks for the policy."),
            Some("Refunds take 5 days."),
            vec![],
        ),
        // The template opened the block in the prompt: only the closing tag comes back.
        (
            Reply::Text("Look the user up first.</think>One moment.".into()),
            Some("Look the user up first."),
            Some("One moment."),
            vec![],
        ),
        // Hermes / Qwen without a tool parser, thinking included.
        (
            Reply::Text("<think>Find the user.</think>\n<tool_call>\n{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"mia_li_3668\"}}\n</tool_call>".into()),
            Some("Find the user."),
            None,
            vec![lookup.clone()],
        ),
        // Llama 3 JSON, two calls joined by ';'.
        (
            Reply::Text("<|python_tag|>{\"name\": \"get_user_details\", \"parameters\": {\"user_id\": \"mia_li_3668\"}}; {\"name\": \"cancel_reservation\", \"parameters\": {\"reservation_id\": \"NO6JO3\"}}".into()),
            None,
            None,
            vec![lookup.clone(), cancel.clone()],
        ),
        // Mistral, both generations of the format.
        (
            Reply::Text("[TOOL_CALLS][{\"name\": \"cancel_reservation\", \"arguments\": {\"reservation_id\": \"NO6JO3\"}}]".into()),
            None,
            None,
            vec![cancel.clone()],
        ),
        (
            Reply::Text("[TOOL_CALLS]get_user_details[ARGS]{\"user_id\": \"mia_li_3668\"}".into()),
            None,
            None,
            vec![lookup.clone()],
        ),
        // A reasoning parser but no tool parser: thinking in the field, the call in text.
        (
            Reply::Reasoning {
                field: "reasoning",
                reasoning: "Cancel it.".into(),
                content: "<tool_call>{\"name\": \"cancel_reservation\", \"arguments\": \"{\\\"reservation_id\\\": \\\"NO6JO3\\\"}\"}</tool_call>".into(),
            },
            Some("Cancel it."),
            None,
            vec![cancel.clone()],
        ),
        // Both parsers on: the fields as they are.
        (
            Reply::ToolCalls(vec![(
                "cancel_reservation".into(),
                "{\"reservation_id\": \"NO6JO3\"}".into(),
            )]),
            None,
            None,
            vec![cancel.clone()],
        ),
    ];
    let cache = cache_path("shapes");
    let model = endpoint(&config(&server.base_url(), ""), &cache);
    for (i, (reply, reasoning, content, calls)) in cases.into_iter().enumerate() {
        server.push(reply);
        let r = model
            .chat(hello(&format!("case {i}")).with_tools(two_tools()))
            .await
            .unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(
            r.message.reasoning_content.as_deref(),
            reasoning,
            "case {i}"
        );
        assert_eq!(r.message.content.as_deref(), content, "case {i}");
        assert_eq!(call_list(&r), calls, "case {i}");
        // The same shape comes back out of the cache.
        let again = model
            .chat(hello(&format!("case {i}")).with_tools(two_tools()))
            .await
            .unwrap();
        assert!(again.from_cache);
        assert_eq!(call_list(&again), calls, "case {i} from the cache");
    }
}

#[tokio::test]
async fn a_field_only_role_names_the_missing_server_flag() {
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::Text(
        "<tool_call>{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"a\"}}</tool_call>"
            .into(),
    ));
    server.push(Reply::Text(
        "<tool_call>{\"name\": \"get_user_details\", \"arguments\": {\"user_id\": \"a".into(),
    ));
    let field_cache = cache_path("field-only");
    let strict = endpoint(
        &config(&server.base_url(), "tool_call_format = \"field\""),
        &field_cache,
    );
    let err = strict
        .chat(hello("who am I").with_tools(tools()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TextToolCall);
    let line = err.to_string();
    assert!(line.starts_with("role 'agent': "), "{line}");
    assert!(line.contains("--tool-call-parser"), "{line}");
    assert!(!line.contains('\n'));
    assert_eq!(server.post_count(), 1, "a server setting is not retried");
    // Reading text calls, a broken one is a malformed answer (the agent's fault).
    let lenient_cache = cache_path("broken-text");
    let lenient = endpoint(&config(&server.base_url(), ""), &lenient_cache);
    let err = lenient
        .chat(hello("and now").with_tools(tools()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed, "{err}");
}

#[tokio::test]
async fn thinking_goes_back_as_the_role_says() {
    let conversation = || {
        let call = tracer::llm::ToolCall {
            id: "call_0".into(),
            name: "get_user_details".into(),
            arguments: "{\"user_id\": \"a\"}".into(),
        };
        ChatRequest::new(vec![
            ChatMessage::system("policy"),
            ChatMessage::user("hi"),
            ChatMessage::assistant("Hello, who are you?").with_reasoning("greet"),
            ChatMessage::user("I am a."),
            ChatMessage::assistant_tool_calls(None, vec![call]).with_reasoning("look a up"),
            ChatMessage::tool("call_0", "get_user_details", "{\"name\": \"A\"}"),
        ])
        .with_tools(tools())
    };
    let mut sent = Vec::new();
    for policy in ["never", "within_turn", "all"] {
        let server = OpenAiServer::start(&[MODEL]);
        let cache = cache_path(&format!("send-{policy}"));
        let model = endpoint(
            &config(
                &server.base_url(),
                &format!("send_reasoning = \"{policy}\""),
            ),
            &cache,
        );
        model.chat(conversation()).await.unwrap();
        let body = &server.posts()[0].body;
        let thinking: Vec<Option<String>> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["reasoning_content"].as_str().map(str::to_string))
            .collect();
        sent.push(thinking);
    }
    let some = |s: &str| Some(s.to_string());
    assert_eq!(sent[0], vec![None; 6], "never");
    assert_eq!(
        sent[1],
        vec![None, None, None, None, some("look a up"), None],
        "within_turn: only the tool-call loop after the last user message"
    );
    assert_eq!(
        sent[2],
        vec![None, None, some("greet"), None, some("look a up"), None],
        "all"
    );
}

#[tokio::test]
async fn an_overflowing_conversation_is_its_own_error_and_never_retried() {
    // The window the server reports: a prompt that cannot fit is not sent at all.
    let server = OpenAiServer::start(&[MODEL]);
    server.report_context_window(300);
    let served_cache = cache_path("window-served");
    let model = endpoint(
        &config(&server.base_url(), "max_tokens = 100"),
        &served_cache,
    );
    let fits = model.chat(hello("short")).await;
    assert!(fits.is_ok(), "{fits:?}");
    let err = model.chat(hello(&"word ".repeat(200))).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ContextExceeded, "{err}");
    assert!(err.to_string().contains("300"), "{err}");
    assert_eq!(server.post_count(), 1, "the long prompt was never sent");
    let gets = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET")
        .count();
    assert_eq!(gets, 1, "the window is asked once");

    // A configured window wins over the server's.
    let config_cache = cache_path("window-config");
    let model = endpoint(
        &config(&server.base_url(), "context_window = 100000"),
        &config_cache,
    );
    assert!(model.chat(hello(&"word ".repeat(200))).await.is_ok());

    // The server's own refusal (no window known): not retried, same error kind.
    let server = OpenAiServer::start(&[MODEL]);
    server.push(Reply::Status {
        code: 400,
        retry_after: None,
        message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 5120 tokens.".into(),
    });
    let refused_cache = cache_path("refused");
    let model = endpoint(&config(&server.base_url(), ""), &refused_cache);
    let err = model.chat(hello("long")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ContextExceeded, "{err}");
    assert!(!err.is_retryable());
    assert_eq!(server.post_count(), 1);
    assert_eq!(model.stats().errors_of(ErrorKind::ContextExceeded), 1);
}
