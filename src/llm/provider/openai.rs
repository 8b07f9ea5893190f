//! The OpenAI-compatible provider: one role's endpoint(s) behind [`ChatModel`] and
//! [`EmbeddingModel`], through async-openai's bring-your-own-types calls (`create_byot`), so the
//! JSON we build - vLLM extras such as `top_k`, `min_p`, `chat_template_kwargs` included -
//! goes out untouched and the JSON that comes back is read by us, not by a fixed schema.
//!
//! Per call: build the body -> look the key up in the response cache -> otherwise take a
//! permit of the next endpoint (round-robin, bounded per endpoint), send, classify a failure,
//! retry what is transient (429, 408, 5xx, timeouts, connection failures) after the server's
//! `Retry-After` or a deterministic backoff -> parse (a malformed answer is a typed
//! [`LlmError::Malformed`], never a panic, never cached) -> store -> count.
//! Retrying lives here and only here: async-openai's own retry layer is replaced by
//! `transport::StatusTransport` (see there for why).
//!
//! Architecture invariant: the API key is read once, from the environment variable the
//! config names, and only handed to async-openai's config (a `SecretString`). It is not part
//! of the request body (so not of the cache key or the cache), `Debug` does not print it,
//! any server text that ends up in an error is scrubbed of it, and an answer that repeats
//! it (in its content, thinking, tool-call names or arguments, or model id) is redacted
//! before it is cached or returned ([`redact_response`]).

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::body::{ChatBody, Part, keeps_reasoning};
use super::transport::{HttpStatusError, StatusTransport, shorten};
use crate::llm::cache::{ResponseCache, request_key, text_key};
use crate::llm::chat::{
    AssistantMessage, ChatMessage, ChatRequest, ChatResponse, MessageRole, Sampling, ToolCall,
    Usage,
};
use crate::llm::config::{Provider, RoleConfig, SendReasoning};
use crate::llm::error::{ErrorKind, LlmError};
use crate::llm::limits::{EndpointPool, MAX_RETRY_AFTER, RetryPolicy};
use crate::llm::shape::{self, ReasoningFormat, ToolCallFormat};
use crate::llm::stats::{RoleStats, StatsSnapshot};
use crate::llm::{BoxFuture, ChatModel, EmbeddingModel, EnvLookup};

/// An API key, kept out of `Debug` output.
#[derive(Clone)]
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Read the key from the variable the config names. `Ok(None)` when no variable is named
/// (local servers).
pub(crate) fn read_api_key(
    context: &str,
    cfg: &RoleConfig,
    env: &EnvLookup,
) -> Result<Option<String>, LlmError> {
    let Some(var) = &cfg.api_key_env else {
        return Ok(None);
    };
    let Some(raw) = env(var) else {
        return Err(LlmError::MissingApiKey {
            context: context.to_string(),
            var: var.clone(),
        });
    };
    // Keys read from files often carry a trailing newline.
    let key = raw.trim();
    let invalid = |reason| LlmError::InvalidApiKey {
        context: context.to_string(),
        var: var.clone(),
        reason,
    };
    if key.is_empty() {
        return Err(invalid("it is empty"));
    }
    if !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(invalid("it holds characters not allowed in an HTTP header"));
    }
    Ok(Some(key.to_string()))
}

/// An async-openai client for one base URL: our transport, our timeout, our key, and no
/// `OPENAI_*` environment defaults (org/project ids would otherwise leak to local servers).
/// HTTPS (the `tls` feature) trusts the roots `llm::tls` picks, plus the CA bundle `env`
/// names.
pub(crate) fn endpoint_client(
    context: &str,
    base_url: &str,
    key: Option<&str>,
    timeout: Duration,
    env: &EnvLookup,
) -> Result<Client<OpenAIConfig>, LlmError> {
    let builder = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)));
    #[cfg(feature = "tls")]
    let builder = builder.tls_backend_preconfigured(crate::llm::tls::client_config(context, env)?);
    #[cfg(not(feature = "tls"))]
    let _ = env;
    let http = builder.build().map_err(|e| LlmError::Config {
        context: context.to_string(),
        message: format!("cannot build an HTTP client: {e}"),
    })?;
    let config = OpenAIConfig::new()
        .with_api_base(base_url)
        .with_api_key(key.unwrap_or(""))
        .with_org_id("")
        .with_project_id("");
    Ok(Client::build(http.clone(), config).with_http_service(StatusTransport::new(http)))
}

/// The deepest cause of an error chain (`Connection refused (os error 111)` rather than
/// `error sending request for url (...)`).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Why the server's certificate was refused, when that is why `e` failed.
#[cfg(feature = "tls")]
fn certificate_problem(e: &reqwest::Error) -> Option<String> {
    crate::llm::tls::certificate_problem(e)
}

#[cfg(not(feature = "tls"))]
fn certificate_problem(_: &reqwest::Error) -> Option<String> {
    None
}

/// Map async-openai's error for a call on `endpoint` to ours.
pub(crate) fn classify(
    context: &str,
    endpoint: &str,
    timeout: Duration,
    e: OpenAIError,
) -> LlmError {
    let context = context.to_string();
    let endpoint = endpoint.to_string();
    match e {
        OpenAIError::Boxed(b) => match b.downcast::<HttpStatusError>() {
            Ok(s) => LlmError::Status {
                context,
                endpoint,
                status: s.status,
                retry_after: s.retry_after,
                message: s.message,
            },
            Err(other) => LlmError::Connection {
                context,
                endpoint,
                cause: root_cause(other.as_ref()),
            },
        },
        OpenAIError::Reqwest(e) if e.is_timeout() => LlmError::Timeout {
            context,
            endpoint,
            secs: timeout.as_secs_f64(),
        },
        OpenAIError::Reqwest(e) => match certificate_problem(&e) {
            Some(detail) => LlmError::Certificate {
                context,
                endpoint,
                detail,
            },
            None => LlmError::Connection {
                context,
                endpoint,
                cause: root_cause(&e),
            },
        },
        OpenAIError::ApiError(api) => LlmError::Status {
            context,
            endpoint,
            status: api.status_code.as_u16(),
            retry_after: None,
            message: shorten(&api.api_error.message),
        },
        OpenAIError::JSONDeserialize(e, content) => LlmError::Malformed {
            context,
            detail: format!("body is not the expected JSON ({e}): {}", shorten(&content)),
        },
        OpenAIError::InvalidArgument(message) => LlmError::Config { context, message },
        other => LlmError::Malformed {
            context,
            detail: shorten(&other.to_string()),
        },
    }
}

fn malformed(context: &str, detail: String) -> LlmError {
    LlmError::Malformed {
        context: context.to_string(),
        detail,
    }
}

/// Read a chat completion. Accepts what OpenAI, vLLM, llama.cpp and DeepSeek send:
/// `content` as a string or a list of text parts, thinking as `reasoning_content` or
/// `reasoning`, tool-call arguments as a JSON string (or, leniently, an object; `""` means
/// no arguments). Arguments that do not parse as a JSON object - typically cut off by
/// `max_tokens` - make the whole answer malformed.
pub fn parse_chat_response(
    context: &str,
    json: &Value,
    fallback_model: &str,
) -> Result<ChatResponse, LlmError> {
    let choice = json
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| malformed(context, "no `choices[0]` in the answer".to_string()))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| malformed(context, "no `choices[0].message` object".to_string()))?;
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<String>(),
        ),
        Some(other) => {
            return Err(malformed(
                context,
                format!(
                    "`content` is neither text nor null: {}",
                    shorten(&other.to_string())
                ),
            ));
        }
    };
    let reasoning_content = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| message.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|v| !v.is_null()) {
        let calls = calls
            .as_array()
            .ok_or_else(|| malformed(context, "`tool_calls` is not a list".to_string()))?;
        for (i, call) in calls.iter().enumerate() {
            tool_calls.push(parse_tool_call(context, i, call, finish_reason.as_deref())?);
        }
    }
    Ok(ChatResponse {
        message: AssistantMessage {
            content,
            tool_calls,
            reasoning_content,
        },
        finish_reason,
        usage: parse_usage(json),
        model: json
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(fallback_model)
            .to_string(),
        from_cache: false,
    })
}

fn parse_tool_call(
    context: &str,
    i: usize,
    call: &Value,
    finish_reason: Option<&str>,
) -> Result<ToolCall, LlmError> {
    let name = call
        .pointer("/function/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| malformed(context, format!("tool call #{i} has no function name")))?;
    let arguments = match call.pointer("/function/arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(s)) if s.trim().is_empty() => "{}".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Object(_)) => v.to_string(),
        Some(other) => {
            return Err(malformed(
                context,
                format!("tool call #{i} '{name}': arguments are {other}, not a JSON object"),
            ));
        }
    };
    match serde_json::from_str::<Value>(&arguments) {
        Ok(Value::Object(_)) => {}
        Ok(_) => {
            return Err(malformed(
                context,
                format!("tool call #{i} '{name}': arguments are not a JSON object"),
            ));
        }
        Err(e) => {
            let hint = if finish_reason == Some("length") {
                " (finish_reason=length: cut off by max_tokens)"
            } else {
                ""
            };
            return Err(malformed(
                context,
                format!(
                    "tool call #{i} '{name}': arguments are not valid JSON ({e}){hint}: {}",
                    shorten(&arguments)
                ),
            ));
        }
    }
    let id = call
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("call_{i}"));
    Ok(ToolCall {
        id,
        name: name.to_string(),
        arguments,
    })
}

/// What a key is replaced with wherever a server repeats it.
const REDACTED: &str = "[redacted]";

/// Replace `key` in text, spelled as is or as it appears inside a JSON string (a `"` or
/// `\` in it escaped), so a tool call written as JSON in the content cannot bring it back
/// when the call is read out of the text.
fn redact_text(text: &mut String, key: &str) {
    if text.contains(key) {
        *text = text.replace(key, REDACTED);
    }
    let quoted = serde_json::to_string(key).unwrap_or_default();
    let escaped = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(key);
    if escaped != key && text.contains(escaped) {
        *text = text.replace(escaped, REDACTED);
    }
}

/// Replace `key` in every string and object key of a JSON value; true when one changed.
fn redact_value(value: &mut Value, key: &str) -> bool {
    match value {
        Value::String(s) if s.contains(key) => {
            *s = s.replace(key, REDACTED);
            true
        }
        Value::Array(items) => {
            // Every item is visited: `any` would stop at the first one redacted.
            let mut changed = false;
            for item in items {
                changed |= redact_value(item, key);
            }
            changed
        }
        Value::Object(map) => {
            let mut changed = false;
            let entries = std::mem::take(map);
            for (mut name, mut v) in entries {
                if name.contains(key) {
                    name = name.replace(key, REDACTED);
                    changed = true;
                }
                changed |= redact_value(&mut v, key);
                map.insert(name, v);
            }
            changed
        }
        _ => false,
    }
}

/// Tool-call arguments with `key` replaced inside their JSON string values, so they stay
/// valid JSON whatever the key holds; re-encoded only when something changed (arguments
/// that do not parse are redacted as text).
fn redact_arguments(arguments: &mut String, key: &str) {
    match serde_json::from_str::<Value>(arguments) {
        Ok(mut value) => {
            if redact_value(&mut value, key) {
                *arguments = value.to_string();
            }
        }
        Err(_) => redact_text(arguments, key),
    }
}

/// Remove an API key a server repeated in its answer: content, thinking, tool-call ids,
/// names and arguments (arguments stay valid JSON), and the model id. An empty key
/// redacts nothing.
pub fn redact_response(response: &mut ChatResponse, key: &str) {
    if key.is_empty() {
        return;
    }
    let message = &mut response.message;
    for text in [&mut message.content, &mut message.reasoning_content]
        .into_iter()
        .flatten()
    {
        redact_text(text, key);
    }
    for call in &mut message.tool_calls {
        redact_text(&mut call.id, key);
        redact_text(&mut call.name, key);
        redact_arguments(&mut call.arguments, key);
    }
    redact_text(&mut response.model, key);
    if let Some(reason) = &mut response.finish_reason {
        redact_text(reason, key);
    }
}

/// The messages as sent under a [`SendReasoning`] policy: `never` strips every message's
/// thinking, `within_turn` keeps it on the assistant messages after the last user message
/// (the tool-call loop of the current turn), `all` keeps it everywhere.
pub fn reasoning_sent(messages: &[ChatMessage], policy: SendReasoning) -> Vec<ChatMessage> {
    let last_user = messages.iter().rposition(|m| m.role == MessageRole::User);
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if keeps_reasoning(policy, last_user, i) {
                m.clone()
            } else {
                m.without_reasoning()
            }
        })
        .collect()
}

/// The context window a `/models` answer reports for `model`: vLLM's `max_model_len`,
/// or `context_length` / `max_context_length` (OpenRouter, LM Studio and others).
pub fn served_context_window(listed: &Value, model: &str) -> Option<u64> {
    let entry = listed
        .get("data")?
        .as_array()?
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))?;
    ["max_model_len", "context_length", "max_context_length"]
        .iter()
        .find_map(|k| entry.get(*k).and_then(Value::as_u64))
}

/// Read an embeddings answer: one vector per input, in input order.
pub fn parse_embeddings(
    context: &str,
    json: &Value,
    expected: usize,
) -> Result<(Vec<Vec<f32>>, u64), LlmError> {
    let data = json
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(context, "no `data` list in the answer".to_string()))?;
    if data.len() != expected {
        return Err(malformed(
            context,
            format!("{} embeddings for {expected} inputs", data.len()),
        ));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (pos, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(pos, |i| i as usize);
        let vector = item
            .get("embedding")
            .and_then(Value::as_array)
            .and_then(|v| {
                v.iter()
                    .map(|x| x.as_f64().map(|f| f as f32))
                    .collect::<Option<Vec<f32>>>()
            })
            .ok_or_else(|| {
                malformed(
                    context,
                    format!("embedding #{pos} is not a list of numbers"),
                )
            })?;
        match out.get_mut(index) {
            Some(slot @ None) => *slot = Some(vector),
            _ => {
                return Err(malformed(
                    context,
                    format!("embedding index {index} is out of range or repeated"),
                ));
            }
        }
    }
    let tokens = json
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok((out.into_iter().flatten().collect(), tokens))
}

/// The token counts of an answer: `usage.prompt_tokens` and `usage.completion_tokens`, and
/// the prompt tokens the server read from its prompt cache where it says so
/// (`usage.prompt_tokens_details.cached_tokens`, the OpenAI and vLLM shape; at most the
/// prompt tokens). Missing counts are 0.
pub fn parse_usage(json: &Value) -> Usage {
    let tokens = |pointer: &str| json.pointer(pointer).and_then(Value::as_u64);
    let prompt_tokens = tokens("/usage/prompt_tokens").unwrap_or(0);
    Usage {
        prompt_tokens,
        cached_prompt_tokens: tokens("/usage/prompt_tokens_details/cached_tokens")
            .unwrap_or(0)
            .min(prompt_tokens),
        completion_tokens: tokens("/usage/completion_tokens").unwrap_or(0),
    }
}

/// A tool list and its canonical JSON text.
type WrittenTools = (Arc<[Value]>, Arc<str>);

#[derive(Clone, Copy)]
enum CallKind {
    Chat,
    Embeddings,
}

/// A `Retry-After` longer than this client waits: the error says so.
fn giving_up_on_retry_after(err: LlmError, after: Duration) -> LlmError {
    match err {
        LlmError::Status {
            context,
            endpoint,
            status,
            retry_after,
            message,
        } => LlmError::Status {
            context,
            endpoint,
            status,
            retry_after,
            message: format!(
                "{message} (the server asked to retry after {:.0}s, longer than the {}s this client waits; not retried)",
                after.as_secs_f64(),
                MAX_RETRY_AFTER.as_secs()
            ),
        },
        other => other,
    }
}

/// One role's OpenAI-compatible endpoint(s).
pub struct OpenAiModel {
    context: String,
    model: String,
    pool: EndpointPool<Client<OpenAIConfig>>,
    defaults: Sampling,
    extra_body: Map<String, Value>,
    retry: RetryPolicy,
    timeout: Duration,
    cache: ResponseCache,
    /// Which server's answers this role reads and writes in the cache.
    cache_namespace: String,
    stats: Arc<RoleStats>,
    secret: Option<Secret>,
    reasoning_format: ReasoningFormat,
    tool_call_format: ToolCallFormat,
    send_reasoning: SendReasoning,
    tools_in_prompt: bool,
    /// The configured context window, if any.
    context_window: Option<u64>,
    /// The window the server reports, asked once (`None`: it reports none).
    served_window: tokio::sync::OnceCell<Option<u64>>,
    /// The last tool list sent and its canonical JSON: a role offers the same list on
    /// every call, so it is written once, not once per call.
    tools_text: std::sync::Mutex<Option<WrittenTools>>,
}

impl std::fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("context", &self.context)
            .field("model", &self.model)
            .field("endpoints", &self.pool.base_urls())
            .field("cache", &self.cache.path())
            .field("api_key", &self.secret)
            .finish()
    }
}

impl OpenAiModel {
    /// Build from a validated config: reads the key (no network), opens the cache.
    /// `context` names the user in errors (`role 'agent'`).
    pub fn new(
        context: &str,
        cfg: &RoleConfig,
        cache_path: &Path,
        env: &EnvLookup,
    ) -> Result<OpenAiModel, LlmError> {
        cfg.validate(context)?;
        if cfg.provider != Provider::Openai {
            return Err(LlmError::Config {
                context: context.to_string(),
                message: "provider is not \"openai\"".to_string(),
            });
        }
        let key = read_api_key(context, cfg, env)?;
        let timeout = cfg.timeout();
        let endpoints = cfg
            .endpoints()
            .into_iter()
            .map(|url| {
                let client = endpoint_client(context, &url, key.as_deref(), timeout, env)?;
                Ok((url, client))
            })
            .collect::<Result<Vec<_>, LlmError>>()?;
        Ok(OpenAiModel {
            context: context.to_string(),
            model: cfg.model.clone().unwrap_or_default(),
            pool: EndpointPool::new(endpoints, cfg.concurrency()),
            defaults: Sampling {
                temperature: cfg.temperature,
                top_p: cfg.top_p,
                top_k: cfg.top_k,
                min_p: cfg.min_p,
                max_tokens: cfg.max_tokens,
                seed: cfg.seed,
            },
            extra_body: cfg.extra_body.clone(),
            retry: RetryPolicy {
                max_retries: cfg.max_retries(),
                initial: cfg.retry_initial(),
                max: cfg.retry_max(),
            },
            timeout,
            cache: ResponseCache::open(cache_path)?,
            cache_namespace: cfg.cache_namespace(),
            stats: Arc::new(RoleStats::default()),
            secret: key.map(Secret),
            reasoning_format: cfg.reasoning_format,
            tool_call_format: cfg.tool_call_format,
            send_reasoning: cfg.send_reasoning,
            tools_in_prompt: cfg.tools_in_prompt,
            context_window: cfg.context_window,
            served_window: tokio::sync::OnceCell::new(),
            tools_text: std::sync::Mutex::new(None),
        })
    }

    /// The canonical JSON of a tool list, written once per list.
    fn written_tools(&self, tools: &Arc<[Value]>) -> Arc<str> {
        let mut last = self.tools_text.lock().unwrap_or_else(|p| p.into_inner());
        match &*last {
            Some((list, text)) if Arc::ptr_eq(list, tools) => Arc::clone(text),
            _ => {
                let text: Arc<str> = super::body::tools_text(tools).into();
                *last = Some((Arc::clone(tools), Arc::clone(&text)));
                text
            }
        }
    }

    /// The exact JSON body a chat request is sent as, and keyed by in the cache
    /// ([`ChatBody`]): `extra_body`, then the model, the messages (with the reasoning the
    /// role sends back) and tools, and every resolved sampling parameter over it.
    pub fn chat_body(&self, req: &ChatRequest) -> ChatBody {
        let mut parts: std::collections::BTreeMap<&str, Part> = self
            .extra_body
            .iter()
            .map(|(k, v)| (k.as_str(), Part::Json(std::borrow::Cow::Borrowed(v))))
            .collect();
        parts.insert("model", Part::Str(&self.model));
        if self.tools_in_prompt {
            // No `tools` and no `tool_choice`: the server may refuse either; the prompt
            // carries the tools and the answer's text the calls.
            let messages = reasoning_sent(&req.messages, self.send_reasoning);
            let messages = shape::tools_in_prompt(&messages, &req.tools);
            parts.insert(
                "messages",
                Part::Messages(messages.into(), SendReasoning::All),
            );
        } else {
            parts.insert(
                "messages",
                Part::Messages(req.messages.as_slice().into(), self.send_reasoning),
            );
            if !req.tools.is_empty() {
                parts.insert("tools", Part::Written(self.written_tools(&req.tools)));
            }
            if let Some(choice) = &req.tool_choice {
                parts.insert(
                    "tool_choice",
                    Part::Json(std::borrow::Cow::Borrowed(choice)),
                );
            }
        }
        let s = req.sampling.or(&self.defaults);
        let mut put = |k: &'static str, v: Option<Value>| {
            if let Some(v) = v {
                parts.insert(k, Part::Json(std::borrow::Cow::Owned(v)));
            }
        };
        put("temperature", s.temperature.map(|x| json!(x)));
        put("top_p", s.top_p.map(|x| json!(x)));
        put("top_k", s.top_k.map(|x| json!(x)));
        put("min_p", s.min_p.map(|x| json!(x)));
        put("max_tokens", s.max_tokens.map(|x| json!(x)));
        put("seed", s.seed.map(|x| json!(x)));
        put("stream", Some(Value::Bool(false)));
        ChatBody::write(parts)
    }

    fn embeddings_body(&self, texts: &[String]) -> Value {
        let mut body = self.extra_body.clone();
        body.insert("model".into(), json!(self.model));
        body.insert("input".into(), json!(texts));
        body.insert("encoding_format".into(), json!("float"));
        Value::Object(body)
    }

    pub fn cache(&self) -> &ResponseCache {
        &self.cache
    }

    /// Replace the key in server-provided text.
    fn scrub(&self, err: LlmError) -> LlmError {
        let Some(Secret(key)) = &self.secret else {
            return err;
        };
        let clean = |s: String| s.replace(key.as_str(), "[redacted]");
        match err {
            LlmError::Status {
                context,
                endpoint,
                status,
                retry_after,
                message,
            } => LlmError::Status {
                context,
                endpoint,
                status,
                retry_after,
                message: clean(message),
            },
            LlmError::Malformed { context, detail } => LlmError::Malformed {
                context,
                detail: clean(detail),
            },
            LlmError::Connection {
                context,
                endpoint,
                cause,
            } => LlmError::Connection {
                context,
                endpoint,
                cause: clean(cause),
            },
            LlmError::Config { context, message } => LlmError::Config {
                context,
                message: clean(message),
            },
            other => other,
        }
    }

    /// The answer without the key, if the server repeated it.
    fn redacted(&self, mut response: ChatResponse) -> ChatResponse {
        if let Some(Secret(key)) = &self.secret {
            redact_response(&mut response, key);
        }
        response
    }

    fn fail(&self, err: LlmError) -> LlmError {
        let err = self.scrub(err);
        self.stats.record_error(err.kind());
        self.stats.record_failure();
        err
    }

    async fn cached<T: DeserializeOwned>(&self, key: [u8; 32]) -> Result<Option<T>, LlmError> {
        let bytes = self.cache.get(key).await.map_err(|e| self.fail(e))?;
        // An entry we cannot read (older format) is a miss and gets overwritten.
        Ok(bytes.and_then(|b| serde_json::from_slice(&b).ok()))
    }

    /// Store an answer. A failed write does not fail the call (the answer is paid for);
    /// it is counted as a `cache` error, and a re-run would ask again.
    async fn store<T: Serialize>(&self, key: [u8; 32], value: &T) {
        let stored = match serde_json::to_vec(value) {
            Ok(bytes) => self.cache.put(key, bytes).await,
            Err(e) => Err(LlmError::Cache {
                path: self.cache.path().display().to_string(),
                message: e.to_string(),
            }),
        };
        if stored.is_err() {
            self.stats.record_error(ErrorKind::Cache);
        }
    }

    /// Send with retries; the answer's JSON on success.
    async fn send(
        &self,
        kind: CallKind,
        body: &RawValue,
        key: &[u8; 32],
    ) -> Result<Value, LlmError> {
        let key_seed = u64::from_le_bytes([
            key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7],
        ]);
        let mut retry = 0u32;
        loop {
            let endpoint = self.pool.pick();
            let result = {
                let _permit = endpoint.permits.acquire().await.map_err(|_| {
                    self.fail(LlmError::Connection {
                        context: self.context.clone(),
                        endpoint: endpoint.base_url.clone(),
                        cause: "endpoint pool closed".to_string(),
                    })
                })?;
                self.stats.record_http_request();
                match kind {
                    CallKind::Chat => {
                        endpoint
                            .client
                            .chat()
                            .create_byot::<&RawValue, Value>(body)
                            .await
                    }
                    CallKind::Embeddings => {
                        endpoint
                            .client
                            .embeddings()
                            .create_byot::<&RawValue, Value>(body)
                            .await
                    }
                }
            };
            let err = match result {
                Ok(json) => return Ok(json),
                Err(e) => self
                    .scrub(classify(&self.context, &endpoint.base_url, self.timeout, e))
                    .context_refusal(),
            };
            let retry_after = err.retry_after();
            if let (Some(after), true) = (retry_after, err.is_retryable())
                && after > MAX_RETRY_AFTER
            {
                // Say why we stop rather than fail as if the retries had run out.
                return Err(self.fail(giving_up_on_retry_after(err, after)));
            }
            if err.is_retryable() && retry < self.retry.max_retries {
                self.stats.record_error(err.kind());
                retry += 1;
                self.stats.record_retry();
                tokio::time::sleep(self.retry.delay(retry, key_seed, retry_after)).await;
                continue;
            }
            return Err(self.fail(err));
        }
    }

    async fn chat_call(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.stats.record_call();
        let body = self.chat_body(&req);
        let key = text_key("chat", &self.cache_namespace, body.text());
        if let Some(hit) = self.cached::<ChatResponse>(key).await? {
            self.stats.record_cache_hit();
            self.stats.record_replayed_usage(hit.usage);
            // Redacted again: an entry written before answers were redacted may hold it.
            let hit = self.redacted(ChatResponse {
                from_cache: true,
                ..hit
            });
            return self.shaped(hit, &req.tools);
        }
        self.check_window(&body).await?;
        let json = self.send(CallKind::Chat, body.raw(), &key).await?;
        let response =
            parse_chat_response(&self.context, &json, &self.model).map_err(|e| self.fail(e))?;
        self.stats.record_usage(response.usage);
        // The cache keeps what the server said, less the key; the shape is read from it on
        // every use.
        let response = self.redacted(response);
        self.store(key, &response).await;
        self.shaped(response, &req.tools)
    }

    /// Thinking and tool calls moved where the role's formats say they are.
    fn shaped(&self, mut r: ChatResponse, tools: &[Value]) -> Result<ChatResponse, LlmError> {
        shape::normalize(
            &self.context,
            &mut r,
            self.reasoning_format,
            self.tool_call_format,
            tools,
        )
        .map_err(|e| self.fail(e))?;
        // A call read out of the text is decoded JSON: a key spelt with escapes there is
        // plain again, so the shaped answer is redacted once more.
        Ok(self.redacted(r))
    }

    /// The context window: configured, else what the server's `/models` reports for the
    /// model (asked once; a failed or silent answer means unknown).
    async fn window(&self) -> Option<u64> {
        if self.context_window.is_some() {
            return self.context_window;
        }
        *self
            .served_window
            .get_or_init(|| async {
                let listed = self
                    .pool
                    .pick()
                    .client
                    .models()
                    .list_byot::<Value>()
                    .await
                    .ok()?;
                served_context_window(&listed, &self.model)
            })
            .await
    }

    /// Refuse a request that cannot fit: estimated prompt tokens plus the answer's
    /// `max_tokens` over the window.
    async fn check_window(&self, body: &ChatBody) -> Result<(), LlmError> {
        let Some(window) = self.window().await else {
            return Ok(());
        };
        let estimated = body.estimate_prompt_tokens();
        let reserve = body.max_tokens().unwrap_or(0);
        if estimated + reserve > window {
            return Err(self.fail(LlmError::ContextExceeded {
                context: self.context.clone(),
                detail: format!(
                    "about {estimated} prompt tokens + max_tokens {reserve} > the model's {window}"
                ),
            }));
        }
        Ok(())
    }

    async fn embed_call(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.stats.record_call();
        let body = self.embeddings_body(texts);
        let key = request_key("embeddings", &self.cache_namespace, &body);
        if let Some(hit) = self.cached::<Vec<Vec<f32>>>(key).await? {
            self.stats.record_cache_hit();
            return Ok(hit);
        }
        let raw = serde_json::value::to_raw_value(&body).map_err(|e| {
            self.fail(LlmError::Config {
                context: self.context.clone(),
                message: format!("cannot write the request body: {e}"),
            })
        })?;
        let json = self.send(CallKind::Embeddings, &raw, &key).await?;
        let (vectors, tokens) =
            parse_embeddings(&self.context, &json, texts.len()).map_err(|e| self.fail(e))?;
        self.stats.record_usage(Usage {
            prompt_tokens: tokens,
            ..Usage::default()
        });
        self.store(key, &vectors).await;
        Ok(vectors)
    }
}

impl ChatModel for OpenAiModel {
    fn chat(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(self.chat_call(req))
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }
}

impl EmbeddingModel for OpenAiModel {
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, LlmError>> {
        Box::pin(self.embed_call(texts))
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_repeated_key_is_redacted_and_arguments_stay_json() {
        // ASCII graphic keys may hold a quote and a backslash, which JSON text escapes.
        for key in ["sk-plain-123", r#"sk-"quoted"\slash"#] {
            let quoted = serde_json::to_string(key).unwrap();
            let escaped = &quoted[1..quoted.len() - 1];
            let args = json!({"token": key, "list": [format!("a {key} b")], (key): 1}).to_string();
            let mut r = ChatResponse {
                message: AssistantMessage {
                    content: Some(format!("key {key}; as JSON {{\"k\": \"{escaped}\"}}")),
                    tool_calls: vec![ToolCall {
                        id: format!("call-{key}"),
                        name: format!("tool{key}"),
                        arguments: args,
                    }],
                    reasoning_content: Some(format!("thinking about {key}")),
                },
                finish_reason: Some("stop".into()),
                usage: Usage::default(),
                model: format!("m-{key}"),
                from_cache: false,
            };
            redact_response(&mut r, key);
            let text = serde_json::to_string(&r).unwrap();
            assert!(!text.contains(key) && !text.contains(escaped), "{text}");
            assert!(!format!("{r:?}").contains(key));
            let call = &r.message.tool_calls[0];
            let back = call.arguments_json().unwrap();
            assert_eq!(back["token"], "[redacted]");
            assert_eq!(back["list"][0], "a [redacted] b");
            assert_eq!(back["[redacted]"], 1);
            assert_eq!(
                r.message.reasoning_content.as_deref(),
                Some("thinking about [redacted]")
            );
            assert_eq!(call.name, "tool[redacted]");
        }
        // Arguments without the key are left byte for byte as the model wrote them.
        let mut r = ChatResponse {
            message: AssistantMessage {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "c".into(),
                    name: "t".into(),
                    arguments: "{ \"b\": 1,  \"a\": 2 }".into(),
                }],
                reasoning_content: None,
            },
            finish_reason: None,
            usage: Usage::default(),
            model: "m".into(),
            from_cache: false,
        };
        redact_response(&mut r, "sk-x");
        assert_eq!(r.message.tool_calls[0].arguments, "{ \"b\": 1,  \"a\": 2 }");
    }

    #[test]
    fn chat_response_with_tool_calls_and_reasoning() {
        let json = json!({
            "model": "served-model",
            "choices": [{"finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "reasoning": "think",
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
                    {"type": "function", "function": {"name": "g", "arguments": ""}},
                    {"id": "c", "type": "function", "function": {"name": "h", "arguments": {"y": 2}}}
                ]}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7}
        });
        let r = parse_chat_response("role 'agent'", &json, "cfg-model").unwrap();
        assert_eq!(r.model, "served-model");
        assert_eq!(r.message.reasoning_content.as_deref(), Some("think"));
        let calls: Vec<(&str, &str, &str)> = r
            .message
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("a", "f", "{\"x\":1}"),
                ("call_1", "g", "{}"),
                ("c", "h", "{\"y\":2}")
            ]
        );
        assert_eq!(r.usage.completion_tokens, 7);
    }

    #[test]
    fn malformed_answers_are_typed_errors() {
        let cases = [
            json!({}),
            json!({"choices": []}),
            json!({"choices": [{"message": "text"}]}),
            json!({"choices": [{"message": {"content": 5}}]}),
            json!({"choices": [{"finish_reason": "length", "message": {"tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": "{\"user_id\": \"ab"}}]}}]}),
            json!({"choices": [{"message": {"tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}}]}),
            json!({"choices": [{"message": {"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "[1]"}}]}}]}),
        ];
        for json in cases {
            let err = parse_chat_response("role 'agent'", &json, "m").unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Malformed, "{json}: {err}");
        }
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

    #[test]
    fn embeddings_in_index_order() {
        let json = json!({"data": [
            {"index": 1, "embedding": [0.5, 1.0]},
            {"index": 0, "embedding": [0.25, 2.0]}
        ], "usage": {"prompt_tokens": 4}});
        let (v, tokens) = parse_embeddings("e", &json, 2).unwrap();
        assert_eq!(v, vec![vec![0.25, 2.0], vec![0.5, 1.0]]);
        assert_eq!(tokens, 4);
        assert!(parse_embeddings("e", &json, 3).is_err());
        assert!(parse_embeddings("e", &json!({"data": [{"embedding": "AAAA"}]}), 1).is_err());
    }

    #[test]
    fn usage_reads_the_cached_prompt_tokens_where_the_server_reports_them() {
        let answer = |usage: Value| json!({"choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": usage});
        let usage_of = |usage: Value| {
            parse_chat_response("role 'agent'", &answer(usage), "m")
                .unwrap()
                .usage
        };
        let with_details = usage_of(json!({"prompt_tokens": 120, "completion_tokens": 9,
            "prompt_tokens_details": {"cached_tokens": 96}}));
        assert_eq!(
            (
                with_details.prompt_tokens,
                with_details.cached_prompt_tokens,
                with_details.completion_tokens
            ),
            (120, 96, 9)
        );
        // A server that says nothing of its cache: every prompt token is uncached.
        let plain = usage_of(json!({"prompt_tokens": 120, "completion_tokens": 9}));
        assert_eq!(plain.cached_prompt_tokens, 0);
        let null_details = usage_of(json!({"prompt_tokens": 7, "prompt_tokens_details": null}));
        assert_eq!(
            (
                null_details.prompt_tokens,
                null_details.cached_prompt_tokens
            ),
            (7, 0)
        );
        // Never more cached than prompt tokens.
        let odd =
            usage_of(json!({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 50}}));
        assert_eq!(odd.cached_prompt_tokens, 10);
        assert_eq!(usage_of(json!(null)), Usage::default());
    }

    #[test]
    fn key_from_env_is_checked() {
        let cfg = RoleConfig {
            api_key_env: Some("K".into()),
            ..RoleConfig::default()
        };
        let none = |_: &str| None;
        let err = read_api_key("role 'refiner'", &cfg, &none).unwrap_err();
        assert_eq!(err.to_string(), "role 'refiner': env var K is not set");
        let newline = |_: &str| Some("sk-abc\n".to_string());
        assert_eq!(
            read_api_key("r", &cfg, &newline).unwrap().as_deref(),
            Some("sk-abc")
        );
        let bad = |_: &str| Some("sk a\u{7f}".to_string());
        let err = read_api_key("r", &cfg, &bad).unwrap_err().to_string();
        assert!(!err.contains("sk a"), "{err}");
    }
}
