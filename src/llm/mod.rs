//! The LLM role layer: how each role (grounder, refiner, feeler, user, agent, judge,
//! graph proposer) is answered - by the stage's own scripted stand-in or by an
//! OpenAI-compatible endpoint - and the reliability of the endpoint path (bounded
//! concurrency per endpoint, round-robin over replicas, retries honouring `Retry-After`,
//! timeouts, typed malformed-answer errors, a persistent response cache, token accounting,
//! preflight).
//!
//! Code map:
//! - [`config`]: `Role`, the `[roles.<role>]` TOML table (`RoleConfig`) and its checks.
//! - [`chat`]: messages, requests and responses in the OpenAI shape.
//! - [`provider`]: `openai` (async-openai, bring-your-own-types JSON), its `transport`, and
//!   the `scripted` hook that labels stand-in output `scripted:<role>`.
//! - [`shape`]: thinking and tool calls wherever the server left them (fields, `<think>`
//!   text, Hermes / Llama 3 / Mistral text calls), moved into the fields the stages read.
//! - [`cache`]: the redb response cache keyed by SHA-256 of the canonical request.
//! - [`limits`]: per-endpoint semaphores, round-robin, the backoff schedule.
//! - [`stats`]: per-role counters and their snapshot; [`role_usage`] turns them into the
//!   per-role record of a run's cost (`crate::cost`).
//! - [`preflight`]: key, reachability and model checks before any work.
//! - `tls` (the `tls` feature, on by default): HTTPS - rustls with ring, the roots trusted
//!   (system store, else Mozilla's bundled roots, plus `TRACER_CA_BUNDLE`), and the one-line
//!   error for a certificate that is not trusted.
//!
//! Usage from a stage:
//! ```no_run
//! # async fn demo(cfg: &tracer::llm::RoleConfig) -> Result<(), tracer::llm::LlmError> {
//! use tracer::llm::{ChatMessage, ChatRequest, Role, RoleModel, build_role, preflight};
//! preflight(Role::Refiner, cfg).await?;
//! match build_role(Role::Refiner, cfg, std::path::Path::new("output/.llm-cache.redb"))? {
//!     RoleModel::Scripted(_) => { /* the stage's template refiner */ }
//!     RoleModel::Endpoint(model) => {
//!         let req = ChatRequest::new(vec![ChatMessage::user("Rewrite: ...")]).with_seed(7);
//!         let answer = model.chat(req).await?;
//!         println!("{:?} from {}", answer.message.content, answer.model);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! Architecture invariant: this layer knows nothing about stages, domains or artifacts; it
//! never reads an API key except through the variable a config names, and never writes one
//! anywhere (errors, logs, cache).

pub mod cache;
pub mod chat;
pub mod config;
pub mod error;
pub mod limits;
pub mod preflight;
pub mod prompt;
pub mod provider;
pub mod shape;
pub mod stats;
#[cfg(feature = "tls")]
pub mod tls;

use crate::cost::RoleUsage;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

pub use chat::{
    AssistantMessage, ChatMessage, ChatRequest, ChatResponse, MessageRole, Sampling, ToolCall,
    Usage,
};
pub use config::{Provider, Role, RoleConfig, RolesConfig, SendReasoning};
pub use error::{ErrorKind, LlmError};
pub use preflight::{preflight, preflight_with_env};
pub use prompt::Prompt;
pub use provider::openai::OpenAiModel;
pub use provider::scripted::{scripted_model_id, scripted_response};
pub use shape::{ReasoningFormat, ToolCallFormat};
pub use stats::{RoleStats, StatsSnapshot};

/// A boxed, `Send` future: keeps [`ChatModel`] and [`EmbeddingModel`] object-safe without a macro.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How the layer reads environment variables (the process environment in production, a map
/// in tests).
pub type EnvLookup = dyn Fn(&str) -> Option<String> + Sync;

/// The process environment as an [`EnvLookup`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A chat-completion model behind a role.
pub trait ChatModel: Send + Sync {
    fn chat(&self, req: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>>;
    /// The configured model id.
    fn model_id(&self) -> &str;
    /// Requests, cache hits, tokens and errors so far.
    fn stats(&self) -> StatsSnapshot;
    /// Wait until every answer this model stored in its response cache is durable; `Err`
    /// once a commit of the cache has failed (also counted in [`Self::stats`] as a `cache`
    /// error). Answers are stored behind the calls; the harness syncs before an episode
    /// reaches its journal and counts an episode whose answers are not durable as errored.
    fn sync(&self) -> BoxFuture<'_, Result<(), LlmError>> {
        Box::pin(async { Ok(()) })
    }
}

/// A text-embedding model (`/v1/embeddings`): the transport the emotion module's
/// `emotion::embed::Embedder` (synchronous, with a fixed dimension) wraps for endpoints.
pub trait EmbeddingModel: Send + Sync {
    /// One vector per text, in order.
    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, LlmError>>;
    fn model_id(&self) -> &str;
    fn stats(&self) -> StatsSnapshot;
}

/// What answers a role: the stage's scripted stand-in, or an endpoint.
#[derive(Clone)]
pub enum RoleModel {
    Scripted(Role),
    Endpoint(Arc<dyn ChatModel>),
}

impl std::fmt::Debug for RoleModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoleModel::Scripted(role) => write!(f, "Scripted({role})"),
            RoleModel::Endpoint(m) => write!(f, "Endpoint({})", m.model_id()),
        }
    }
}

impl RoleModel {
    /// The id recorded with the role's output: `scripted:<role>` or the endpoint's model.
    pub fn model_id(&self) -> String {
        match self {
            RoleModel::Scripted(role) => scripted_model_id(*role),
            RoleModel::Endpoint(m) => m.model_id().to_string(),
        }
    }

    pub fn is_scripted(&self) -> bool {
        matches!(self, RoleModel::Scripted(_))
    }

    /// Counters of the endpoint; all zero for scripted roles.
    pub fn stats(&self) -> StatsSnapshot {
        match self {
            RoleModel::Scripted(_) => StatsSnapshot::default(),
            RoleModel::Endpoint(m) => m.stats(),
        }
    }

    /// Wait until the endpoint's stored answers are durable ([`ChatModel::sync`]).
    pub async fn sync(&self) -> Result<(), LlmError> {
        match self {
            RoleModel::Endpoint(m) => m.sync().await,
            RoleModel::Scripted(_) => Ok(()),
        }
    }
}

/// The model id a role records, from its config alone (as [`RoleModel::model_id`] reports
/// it once opened): readers of a run (a merge, the dataset card) name it without opening
/// any endpoint.
pub fn configured_model_id(roles: &RolesConfig, role: Role) -> String {
    match roles.get(&role) {
        Some(cfg) if cfg.provider == Provider::Openai => cfg.model.clone().unwrap_or_default(),
        _ => scripted_model_id(role),
    }
}

/// A role's entry in a run's record of cost: scripted (no tokens, no price) when `cfg` is
/// scripted, else `tokens` with the price `cfg` sets.
pub fn usage_record(role: Role, cfg: &RoleConfig, model: String, tokens: Usage) -> RoleUsage {
    match cfg.provider {
        Provider::Scripted => RoleUsage::scripted(role.as_str(), &model),
        Provider::Openai => RoleUsage {
            role: role.as_str().to_string(),
            model,
            scripted: false,
            tokens,
            price: cfg.price,
        },
    }
}

/// What `model`, opened from `cfg` for `role`, has used so far: the tokens of every answer
/// it gave, fresh or replayed from the response cache (see [`StatsSnapshot::answers`]).
pub fn role_usage(role: Role, cfg: &RoleConfig, model: &RoleModel) -> RoleUsage {
    usage_record(role, cfg, model.model_id(), model.stats().answers())
}

/// Build what answers `role`. No network: run [`preflight`] first to check the endpoint.
/// The cache file at `cache_path` is opened (created if missing) only for endpoint roles;
/// roles may share one file.
pub fn build_role(role: Role, cfg: &RoleConfig, cache_path: &Path) -> Result<RoleModel, LlmError> {
    build_role_with_env(role, cfg, cache_path, &process_env)
}

/// [`build_role`] with the environment given as a lookup function.
pub fn build_role_with_env(
    role: Role,
    cfg: &RoleConfig,
    cache_path: &Path,
    env: &EnvLookup,
) -> Result<RoleModel, LlmError> {
    let context = role.context();
    cfg.validate(&context)?;
    match cfg.provider {
        Provider::Scripted => Ok(RoleModel::Scripted(role)),
        Provider::Openai => Ok(RoleModel::Endpoint(Arc::new(OpenAiModel::new(
            &context, cfg, cache_path, env,
        )?))),
    }
}

/// [`build_role_with_env`] with its answers kept in memory for the model's life only
/// ([`cache::ResponseCache::in_memory`]), never in a cache file: for endpoints a server's
/// clients name (`tracer serve`'s `/episode`), whose answers are theirs.
pub fn build_role_uncached(
    role: Role,
    cfg: &RoleConfig,
    env: &EnvLookup,
) -> Result<RoleModel, LlmError> {
    let context = role.context();
    cfg.validate(&context)?;
    match cfg.provider {
        Provider::Scripted => Ok(RoleModel::Scripted(role)),
        Provider::Openai => Ok(RoleModel::Endpoint(Arc::new(OpenAiModel::with_cache(
            &context,
            cfg,
            cache::ResponseCache::in_memory,
            env,
        )?))),
    }
}

/// An `/v1/embeddings` endpoint configured like a role (errors say `embedder '<name>'`).
/// A scripted config is an error here: the offline embedder belongs to the emotion module.
pub fn build_embedder(
    name: &str,
    cfg: &RoleConfig,
    cache_path: &Path,
) -> Result<Arc<dyn EmbeddingModel>, LlmError> {
    build_embedder_with_env(name, cfg, cache_path, &process_env)
}

/// [`build_embedder`] with the environment given as a lookup function.
pub fn build_embedder_with_env(
    name: &str,
    cfg: &RoleConfig,
    cache_path: &Path,
    env: &EnvLookup,
) -> Result<Arc<dyn EmbeddingModel>, LlmError> {
    let context = format!("embedder '{name}'");
    cfg.validate(&context)?;
    if cfg.provider == Provider::Scripted {
        return Err(LlmError::Config {
            context,
            message: "needs provider = \"openai\" (an embeddings endpoint)".to_string(),
        });
    }
    Ok(Arc::new(OpenAiModel::new(&context, cfg, cache_path, env)?))
}

/// A multi-threaded tokio runtime for endpoint calls (stages, batches, preflight).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}
