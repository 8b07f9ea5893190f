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
//! Retrying lives here, in `send.rs`, and only here: async-openai's own retry layer is replaced by
//! `transport::StatusTransport` (see there for why). The parts it calls live beside it:
//! the key, the endpoint's client and the error mapping in `client`, the request body in
//! `body`, reading an answer in `answer`, removing a repeated key in `redact`.
//!
//! Architecture invariant: the API key is read once, from the environment variable the
//! config names, and only handed to async-openai's config (a `SecretString`). It is not part
//! of the request body (so not of the cache key or the cache), `Debug` does not print it,
//! any server text that ends up in an error is scrubbed of it, and an answer that repeats
//! it (in its content, thinking, tool-call names or arguments, or model id) is redacted
//! before it is cached or returned ([`redact_response`]).

mod send;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use super::answer::{
    parse_chat_response, parse_embeddings, parse_usage, served_context_window,
};
use super::body::{ChatBody, Part, keeps_reasoning};
use super::client::{Secret, endpoint_client, read_api_key};
pub use super::redact::redact_response;
use crate::llm::cache::{ResponseCache, request_key, text_key};
use crate::llm::chat::{ChatMessage, ChatRequest, ChatResponse, MessageRole, Sampling, Usage};
use crate::llm::config::{Provider, RoleConfig, SendReasoning};
use crate::llm::error::{ErrorKind, LlmError};
use crate::llm::limits::{EndpointPool, RetryPolicy};
use crate::llm::shape::{self, ReasoningFormat, ToolCallFormat};
use crate::llm::stats::{RoleStats, StatsSnapshot};
use crate::llm::{BoxFuture, ChatModel, EmbeddingModel, EnvLookup};
use send::CallKind;

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

/// A tool list and its canonical JSON text.
type WrittenTools = (Arc<[Value]>, Arc<str>);

/// One role's OpenAI-compatible endpoint(s).
pub struct OpenAiModel {
    context: String,
    model: String,
    pool: EndpointPool<Client<OpenAIConfig>>,
    defaults: Sampling,
    extra_body: Map<String, Value>,
    retry: RetryPolicy,
    timeout: Duration,
    /// `None` for a model built by [`OpenAiModel::uncached`] (the preflight probe).
    cache: Option<ResponseCache>,
    /// Which server's answers this role reads and writes in the cache.
    cache_namespace: String,
    stats: Arc<RoleStats>,
    secret: Option<Secret>,
    reasoning_format: ReasoningFormat,
    tool_call_format: ToolCallFormat,
    send_reasoning: SendReasoning,
    tools_in_prompt: bool,
    /// The body key of the token cap (`max_tokens` or `max_completion_tokens`).
    max_tokens_key: &'static str,
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
            .field("cache", &self.cache.as_ref().map(ResponseCache::path))
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
        Self::with_cache(context, cfg, || ResponseCache::open(cache_path), env)
    }

    /// [`OpenAiModel::new`] with its cache made by `cache` (after the key is read).
    pub fn with_cache(
        context: &str,
        cfg: &RoleConfig,
        cache: impl FnOnce() -> Result<ResponseCache, LlmError>,
        env: &EnvLookup,
    ) -> Result<OpenAiModel, LlmError> {
        OpenAiModel::build(context, cfg, Some(cache), env)
    }

    /// A model that neither reads nor writes a response cache: the preflight probe's, whose
    /// answers must never be replayed as work.
    pub fn uncached(
        context: &str,
        cfg: &RoleConfig,
        env: &EnvLookup,
    ) -> Result<OpenAiModel, LlmError> {
        type NoCache = fn() -> Result<ResponseCache, LlmError>;
        OpenAiModel::build(context, cfg, None::<NoCache>, env)
    }

    fn build(
        context: &str,
        cfg: &RoleConfig,
        cache: Option<impl FnOnce() -> Result<ResponseCache, LlmError>>,
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
            cache: cache.map(|open| open()).transpose()?,
            cache_namespace: cfg.cache_namespace(),
            stats: Arc::new(RoleStats::default()),
            secret: key.map(Secret),
            reasoning_format: cfg.reasoning_format,
            tool_call_format: cfg.tool_call_format,
            send_reasoning: cfg.send_reasoning,
            tools_in_prompt: cfg.tools_in_prompt,
            max_tokens_key: cfg.max_tokens_field.key(),
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
        put(self.max_tokens_key, s.max_tokens.map(|x| json!(x)));
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

    pub fn cache(&self) -> Option<&ResponseCache> {
        self.cache.as_ref()
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
        let Some(cache) = &self.cache else {
            return Ok(None);
        };
        let bytes = cache.get(key).await.map_err(|e| self.fail(e))?;
        // An entry we cannot read (older format) is a miss and gets overwritten.
        Ok(bytes.and_then(|b| serde_json::from_slice(&b).ok()))
    }

    /// Store an answer, queued for the cache's next group commit (the call does not wait
    /// for the disk; [`ChatModel::sync`] does). An answer that cannot be encoded is counted
    /// as a `cache` error; a failed commit is counted when a sync reports it. Neither fails
    /// the call (the answer is paid for); a re-run would ask again.
    fn store<T: Serialize>(&self, key: [u8; 32], value: &T) {
        let Some(cache) = &self.cache else {
            return;
        };
        match serde_json::to_vec(value) {
            Ok(bytes) => cache.put_behind(key, bytes),
            Err(_) => self.stats.record_error(ErrorKind::Cache),
        }
    }

    /// Wait until every answer stored so far is durable.
    async fn sync_cache(&self) -> Result<(), LlmError> {
        let Some(cache) = &self.cache else {
            return Ok(());
        };
        cache.sync().await.map_err(|e| {
            self.stats.record_error(ErrorKind::Cache);
            self.scrub(e)
        })
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
        self.store(key, &response);
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
        self.store(key, &vectors);
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

    fn sync(&self) -> BoxFuture<'_, Result<(), LlmError>> {
        Box::pin(self.sync_cache())
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
mod tests;
