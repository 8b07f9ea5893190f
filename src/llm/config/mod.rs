//! Role configuration: which roles exist and how each one's `[roles.<role>]` TOML table
//! reads into a [`RoleConfig`].
//!
//! Config flows one way: the TOML table deserialises (unknown fields rejected, errors naming
//! the field), [`RoleConfig::validate`] checks it without side effects, and only
//! `build_role` / `preflight` touch the environment or the network. Architecture invariant:
//! this module never reads an environment variable; `api_key_env` is only the variable's
//! NAME, so a config (and its hash) never holds a secret.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use super::error::LlmError;
pub use super::shape::{ReasoningFormat, ToolCallFormat};

/// The LLM roles of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Grounder,
    Refiner,
    Feeler,
    User,
    Agent,
    Judge,
    GraphProposer,
    /// Writes emotion anchors for `tracer anchors generate` (`emotion_anchors/writer.toml`).
    AnchorWriter,
}

impl Role {
    pub const ALL: [Role; 8] = [
        Role::Grounder,
        Role::Refiner,
        Role::Feeler,
        Role::User,
        Role::Agent,
        Role::Judge,
        Role::GraphProposer,
        Role::AnchorWriter,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Grounder => "grounder",
            Role::Refiner => "refiner",
            Role::Feeler => "feeler",
            Role::User => "user",
            Role::Agent => "agent",
            Role::Judge => "judge",
            Role::GraphProposer => "graph_proposer",
            Role::AnchorWriter => "anchor_writer",
        }
    }

    /// How errors name this role: `role 'agent'`.
    pub fn context(self) -> String {
        format!("role '{}'", self.as_str())
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
                format!("unknown role '{s}' (roles: {})", names.join(", "))
            })
    }
}

/// Who answers for a role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// The built-in deterministic stand-in implemented by the stage itself.
    #[default]
    Scripted,
    /// An OpenAI-compatible HTTP endpoint (OpenAI, vLLM, llama.cpp server, ...).
    Openai,
}

/// The `[roles.<role>]` table of a stage TOML. Everything but `provider` is about the
/// `openai` provider; a scripted role with endpoint settings is rejected as a likely mistake.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    #[serde(default)]
    pub provider: Provider,
    /// Base URL including the API prefix, e.g. `http://127.0.0.1:8000/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Several replicas of the same model; requests go round-robin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// NAME of the environment variable holding the API key (none for local servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The body field `max_tokens` is sent as: `max_tokens` (default; vLLM, llama.cpp, most
    /// servers) or `max_completion_tokens` (OpenAI's newer models refuse `max_tokens`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub max_tokens_field: MaxTokensField,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Where the model's thinking is read from: `auto` (the `reasoning_content` /
    /// `reasoning` field, then `<think>` blocks left in the text), `fields`, `tags`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub reasoning_format: ReasoningFormat,
    /// Where tool calls are read from: `auto` (the `tool_calls` field, then the text formats
    /// when the request offered tools), `field`, `hermes`, `llama3`, `mistral`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tool_call_format: ToolCallFormat,
    /// Describe the offered tools in the system prompt (Hermes `<tools>` JSON schemas and the
    /// instruction to answer with `<tool_call>` text) instead of sending the request's
    /// `tools`; earlier calls go back as `<tool_call>` text and tool results as user-role
    /// `<tool_response>` text. For servers that refuse `tools` (llama.cpp's `llama-server`
    /// without `--jinja`) or whose chat template drops them. Needs `tool_call_format`
    /// `auto` or `hermes`, which read the calls back.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tools_in_prompt: bool,
    /// Which of the model's own earlier thinking goes back to it: `never` (default),
    /// `within_turn` (the assistant messages since the last user message: the interleaved
    /// thinking of a tool-call loop), `all`. Sent as `reasoning_content`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub send_reasoning: SendReasoning,
    /// The model's context window in tokens. Default: what the server's `/models` reports
    /// (`max_model_len`, `context_length`, `max_context_length`), else unknown, and only the
    /// server's own refusal ends an episode as `context_exceeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Per HTTP attempt, from connect to the last body byte. Default 120.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<f64>,
    /// Retries after the first attempt. Default 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Requests in flight per endpoint (per base URL). Default 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// First backoff delay; doubles per retry (with jitter). Default 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_initial_ms: Option<u64>,
    /// Ceiling of the backoff delay (not of a server's `Retry-After`). Default 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_max_secs: Option<f64>,
    /// Merged into every request body, e.g. `chat_template_kwargs = { enable_thinking = true }`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
    /// Which answers of the response cache this role may reuse: requests are cached under
    /// (namespace, request body). Default: the role's base URL(s), so pointing a role at
    /// another server never silently reuses the old server's answers. Set a name (e.g.
    /// `"qwen3-8b"`) to keep answers across a server move or a changed replica list; `""`
    /// is the namespace of caches written before namespaces existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_namespace: Option<String>,
    /// US dollars per million tokens: `price = { input = 0.15, cached_input = 0.075,
    /// output = 0.6 }` (`cached_input`, for prompt tokens the server read from its prompt
    /// cache, defaults to `input`). Recorded with each stage run, so `tracer stats` and the
    /// dataset card price the tokens the run used; left out, the role's cost is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<crate::cost::Price>,
}

/// How a request names its token cap (see [`RoleConfig::max_tokens_field`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    #[default]
    MaxTokens,
    MaxCompletionTokens,
}

impl MaxTokensField {
    pub fn key(self) -> &'static str {
        match self {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// Which earlier thinking of the model is sent back to it (see [`RoleConfig::send_reasoning`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendReasoning {
    #[default]
    Never,
    WithinTurn,
    All,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// `[roles]` of a stage TOML: one table per role; roles left out are scripted.
pub type RolesConfig = BTreeMap<Role, RoleConfig>;

pub const DEFAULT_TIMEOUT_SECS: f64 = 120.0;
pub const DEFAULT_MAX_RETRIES: u32 = 4;
pub const DEFAULT_CONCURRENCY: usize = 8;
pub const DEFAULT_RETRY_INITIAL_MS: u64 = 500;
pub const DEFAULT_RETRY_MAX_SECS: f64 = 30.0;

/// Request body keys the layer sets itself; `extra_body` may not override them.
const RESERVED_BODY_KEYS: [&str; 7] = [
    "model",
    "messages",
    "tools",
    "tool_choice",
    "stream",
    "input",
    "n",
];
// `max_tokens` / `max_completion_tokens` in `extra_body` are left to the user, but the cap
// the context check reserves is `max_tokens` (sent under `max_tokens_field`).

/// The host and port of an `http(s)://` URL must be usable: a host, and a port (when
/// given) of 1..=65535, so `validate` refuses what the first request would.
fn check_authority(url: &str) -> Result<(), String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = match host_port.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, tail)) => (h, tail.strip_prefix(':')),
            None => return Err("unclosed '[' in the host".to_string()),
        },
        None => match host_port.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        },
    };
    if host.is_empty() {
        return Err("no host".to_string());
    }
    if let Some(p) = port {
        match p.parse::<u16>() {
            Ok(n) if n > 0 => {}
            _ => return Err(format!("port '{p}' is not in 1..=65535")),
        }
    }
    Ok(())
}

impl RoleConfig {
    /// Parse one role's table (the body of `[roles.<role>]`) from TOML text.
    pub fn from_toml(context: &str, text: &str) -> Result<RoleConfig, LlmError> {
        let cfg: RoleConfig = toml::from_str(text).map_err(|e| LlmError::Config {
            context: context.to_string(),
            message: toml_error_line(&e, text),
        })?;
        cfg.validate(context)?;
        Ok(cfg)
    }

    /// Every base URL, in round-robin order, without trailing slashes.
    pub fn endpoints(&self) -> Vec<String> {
        let urls: Vec<&String> = match &self.base_url {
            Some(u) => vec![u],
            None => self.base_urls.iter().collect(),
        };
        urls.into_iter()
            .map(|u| u.trim_end_matches('/').to_string())
            .collect()
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }

    pub fn max_retries(&self) -> u32 {
        self.max_retries.unwrap_or(DEFAULT_MAX_RETRIES)
    }

    pub fn concurrency(&self) -> usize {
        self.concurrency.unwrap_or(DEFAULT_CONCURRENCY)
    }

    pub fn retry_initial(&self) -> Duration {
        Duration::from_millis(self.retry_initial_ms.unwrap_or(DEFAULT_RETRY_INITIAL_MS))
    }

    pub fn retry_max(&self) -> Duration {
        Duration::from_secs_f64(self.retry_max_secs.unwrap_or(DEFAULT_RETRY_MAX_SECS))
    }

    /// The response-cache namespace: `cache_namespace`, else the endpoints in the order
    /// given (replicas listed together share answers).
    pub fn cache_namespace(&self) -> String {
        match &self.cache_namespace {
            Some(ns) => ns.clone(),
            None => self.endpoints().join(" "),
        }
    }

    /// Pure checks; the error names the field.
    pub fn validate(&self, context: &str) -> Result<(), LlmError> {
        let bad = |message: String| LlmError::Config {
            context: context.to_string(),
            message,
        };
        if self.provider == Provider::Scripted {
            let mut set = Vec::new();
            let mut note = |name: &'static str, present: bool| {
                if present {
                    set.push(name)
                }
            };
            note("base_url", self.base_url.is_some());
            note("base_urls", !self.base_urls.is_empty());
            note("model", self.model.is_some());
            note("api_key_env", self.api_key_env.is_some());
            note("extra_body", !self.extra_body.is_empty());
            note("cache_namespace", self.cache_namespace.is_some());
            note(
                "reasoning_format",
                self.reasoning_format != ReasoningFormat::default(),
            );
            note(
                "tool_call_format",
                self.tool_call_format != ToolCallFormat::default(),
            );
            note(
                "send_reasoning",
                self.send_reasoning != SendReasoning::default(),
            );
            note("tools_in_prompt", self.tools_in_prompt);
            note(
                "max_tokens_field",
                self.max_tokens_field != MaxTokensField::default(),
            );
            note("context_window", self.context_window.is_some());
            // A scripted stand-in costs nothing; a price on it would be a fake figure.
            note("price", self.price.is_some());
            if let Some(field) = set.first() {
                return Err(bad(format!(
                    "field `{field}` needs provider = \"openai\" (this role is scripted)"
                )));
            }
            return Ok(());
        }
        if self.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
            return Err(bad("provider = \"openai\" needs field `model`".to_string()));
        }
        match (&self.base_url, self.base_urls.is_empty()) {
            (None, true) => {
                return Err(bad(
                    "provider = \"openai\" needs field `base_url` (or `base_urls`)".to_string(),
                ));
            }
            (Some(_), false) => {
                return Err(bad(
                    "set either field `base_url` or field `base_urls`, not both".to_string(),
                ));
            }
            _ => {}
        }
        for (i, url) in self.endpoints().iter().enumerate() {
            let field = if self.base_url.is_some() {
                "base_url".to_string()
            } else {
                format!("base_urls[{i}]")
            };
            if let Some(rest) = url.strip_prefix("https://") {
                if !cfg!(feature = "tls") {
                    return Err(bad(format!(
                        "field `{field}`: https://{rest} needs the `tls` feature, which this build \
                         left out (--no-default-features); rebuild without that flag"
                    )));
                }
            } else if !url.starts_with("http://") {
                return Err(bad(format!(
                    "field `{field}`: '{url}' is not an http:// or https:// URL"
                )));
            }
            if let Err(why) = check_authority(url) {
                return Err(bad(format!("field `{field}`: '{url}': {why}")));
            }
        }
        if let Some(var) = &self.api_key_env
            && (var.is_empty() || var.contains('=') || var.contains('\0'))
        {
            return Err(bad(format!(
                "field `api_key_env`: '{var}' is not an environment variable name"
            )));
        }
        let range = |field: &str, v: Option<f64>, lo: f64, hi: f64| -> Result<(), LlmError> {
            match v {
                Some(x) if !(lo..=hi).contains(&x) => {
                    Err(bad(format!("field `{field}`: {x} is outside {lo}..={hi}")))
                }
                _ => Ok(()),
            }
        };
        range("temperature", self.temperature, 0.0, 2.0)?;
        range("top_p", self.top_p, 0.0, 1.0)?;
        range("min_p", self.min_p, 0.0, 1.0)?;
        range("timeout_secs", self.timeout_secs, 0.001, 86_400.0)?;
        range("retry_max_secs", self.retry_max_secs, 0.0, 3_600.0)?;
        let count = |field: &str, v: Option<u64>, lo: u64, hi: u64| -> Result<(), LlmError> {
            match v {
                Some(x) if !(lo..=hi).contains(&x) => {
                    Err(bad(format!("field `{field}`: {x} is outside {lo}..={hi}")))
                }
                _ => Ok(()),
            }
        };
        let max_concurrency = crate::config::MAX_CONCURRENCY as u64;
        count(
            "concurrency",
            self.concurrency.map(|c| c as u64),
            1,
            max_concurrency,
        )?;
        count("max_retries", self.max_retries.map(u64::from), 0, 100)?;
        count("retry_initial_ms", self.retry_initial_ms, 0, 600_000)?;
        count("context_window", self.context_window, 256, 100_000_000)?;
        if self.max_tokens == Some(0) {
            return Err(bad("field `max_tokens`: must be at least 1".to_string()));
        }
        if let Some(key) = RESERVED_BODY_KEYS
            .iter()
            .find(|k| self.extra_body.contains_key(**k))
        {
            return Err(bad(format!(
                "field `extra_body.{key}`: set by tracer itself, cannot be overridden"
            )));
        }
        if self.tools_in_prompt
            && !matches!(
                self.tool_call_format,
                ToolCallFormat::Auto | ToolCallFormat::Hermes
            )
        {
            return Err(bad(
                "field `tools_in_prompt`: the prompt asks for Hermes `<tool_call>` text, so \
                 `tool_call_format` must be \"auto\" or \"hermes\""
                    .to_string(),
            ));
        }
        if let Some(price) = &self.price {
            price.check().map_err(bad)?;
        }
        Ok(())
    }
}

/// A one-line rendering of a TOML error that names the offending line (and so the field)
/// even for type errors, whose message alone (`invalid type: string "hot", expected f64`)
/// would not.
pub fn toml_error_line(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim().to_string();
    let Some(span) = e.span() else {
        return message;
    };
    let start = span.start.min(text.len());
    let line_no = text[..start].matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
    if line.is_empty() {
        message
    } else {
        format!("{message} (line {line_no}: `{line}`)")
    }
}

/// Check the `[roles.*]` tables of a stage config without side effects: only roles the
/// stage uses (`used`), each one valid. Errors name the file and the table.
pub fn check_roles(
    path: &std::path::Path,
    roles: &RolesConfig,
    used: &[Role],
) -> Result<(), crate::config::ConfigError> {
    let c = crate::config::Check::new(path);
    for (role, cfg) in roles {
        let field = format!("roles.{role}");
        if !used.contains(role) {
            let names: Vec<&str> = used.iter().map(|r| r.as_str()).collect();
            return Err(c.error(
                &field,
                if names.is_empty() {
                    "this stage uses no LLM role".to_string()
                } else {
                    format!(
                        "this stage has no {role} role (it uses: {})",
                        names.join(", ")
                    )
                },
            ));
        }
        check_role_table(&c, &field, &role.context(), cfg)?;
    }
    Ok(())
}

/// Check one role-shaped table (`[roles.<role>]`, `[embedder]`).
pub fn check_role_table(
    c: &crate::config::Check,
    field: &str,
    context: &str,
    cfg: &RoleConfig,
) -> Result<(), crate::config::ConfigError> {
    cfg.validate(context).map_err(|e| match e {
        LlmError::Config { message, .. } => c.error(field, message),
        other => c.error(field, other),
    })
}

/// Problems in the run's roles file, one line each: its shape, each role table's fields
/// (as `tracer validate` and every command check them before any work), and a prompts
/// directory that does not exist.
pub fn roles_file_problems(paths: &crate::config::Paths) -> Vec<String> {
    let rf = match paths.roles_file() {
        Ok(Some(rf)) => rf,
        Ok(None) => return Vec::new(),
        Err(e) => return vec![e.to_string()],
    };
    let file = rf.path.display().to_string();
    let mut problems = Vec::new();
    for (at, role, table) in rf.role_tables() {
        let context = if role == "embedder" {
            "embedder 'emotion'".to_string()
        } else {
            match role.parse::<Role>() {
                Ok(r)
                    if crate::config::STAGE_ROLES
                        .iter()
                        .any(|(_, rs)| rs.contains(&r.as_str())) =>
                {
                    r.context()
                }
                _ => {
                    problems.push(format!(
                        "{file}: `{at}`: no stage has a '{role}' role (roles: grounder, refiner, feeler, judge, agent, user; and [embedder])"
                    ));
                    continue;
                }
            }
        };
        let checked = toml::Value::Table(table)
            .try_into::<RoleConfig>()
            .map_err(|e| {
                e.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .and_then(|cfg| {
                cfg.validate(&context).map_err(|e| match e {
                    crate::llm::LlmError::Config { message, .. } => message,
                    other => other.to_string(),
                })
            });
        if let Err(message) = checked {
            problems.push(format!("{file}: `{at}`: {message}"));
        }
    }
    if let Some(dir) = rf.prompts()
        && !paths.root.join(dir).is_dir()
    {
        problems.push(format!(
            "{file}: `prompts`: {} is not a directory",
            paths.root.join(dir).display()
        ));
    }
    problems
}

#[cfg(test)]
mod tests;
