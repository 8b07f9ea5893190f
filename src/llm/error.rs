//! The one error type of the LLM layer, and the coarse kinds it is counted under.
//!
//! Every variant carries the context it happened in (`role 'agent'`, `embedder 'emotion'`)
//! and, where there is one, the endpoint. Architecture invariant: no variant ever holds an
//! API key; text that came from a server is scrubbed of the key before it lands here
//! (`provider::openai` does the scrubbing).

use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// A role's TOML table is invalid; the message names the field.
    #[error("{context}: {message}")]
    Config { context: String, message: String },
    #[error("{context}: env var {var} is not set")]
    MissingApiKey { context: String, var: String },
    #[error("{context}: env var {var} does not hold a usable API key ({reason})")]
    InvalidApiKey {
        context: String,
        var: String,
        reason: &'static str,
    },
    /// Preflight could not reach the endpoint at all.
    #[error("{context}: endpoint {endpoint} unreachable: {cause}")]
    Unreachable {
        context: String,
        endpoint: String,
        cause: String,
    },
    #[error("{context}: model '{model}' not served by {endpoint} (has: {available})")]
    ModelNotServed {
        context: String,
        model: String,
        endpoint: String,
        available: String,
    },
    /// The server answered with a non-success HTTP status.
    #[error("{context}: {endpoint} answered HTTP {status}: {message}")]
    Status {
        context: String,
        endpoint: String,
        status: u16,
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("{context}: {endpoint} did not answer within {secs}s")]
    Timeout {
        context: String,
        endpoint: String,
        secs: f64,
    },
    /// Connect failure, reset or broken body while talking to an endpoint during work.
    #[error("{context}: connection to {endpoint} failed: {cause}")]
    Connection {
        context: String,
        endpoint: String,
        cause: String,
    },
    /// A 2xx answer we cannot use: not JSON, not the OpenAI shape, or tool-call arguments
    /// that are not valid JSON (typically truncated by `max_tokens`).
    #[error("{context}: malformed response: {detail}")]
    Malformed { context: String, detail: String },
    #[error("response cache {path}: {message}")]
    Cache { path: String, message: String },
}

/// The coarse kinds errors are counted under in [`super::stats::RoleStats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    Config,
    ApiKey,
    Unreachable,
    ModelNotServed,
    RateLimited,
    ServerError,
    ClientError,
    Timeout,
    Connection,
    Malformed,
    Cache,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::Config,
        ErrorKind::ApiKey,
        ErrorKind::Unreachable,
        ErrorKind::ModelNotServed,
        ErrorKind::RateLimited,
        ErrorKind::ServerError,
        ErrorKind::ClientError,
        ErrorKind::Timeout,
        ErrorKind::Connection,
        ErrorKind::Malformed,
        ErrorKind::Cache,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::ApiKey => "api_key",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::ModelNotServed => "model_not_served",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::ServerError => "server_error",
            ErrorKind::ClientError => "client_error",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Malformed => "malformed",
            ErrorKind::Cache => "cache",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl LlmError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            LlmError::Config { .. } => ErrorKind::Config,
            LlmError::MissingApiKey { .. } | LlmError::InvalidApiKey { .. } => ErrorKind::ApiKey,
            LlmError::Unreachable { .. } => ErrorKind::Unreachable,
            LlmError::ModelNotServed { .. } => ErrorKind::ModelNotServed,
            LlmError::Status { status: 429, .. } => ErrorKind::RateLimited,
            LlmError::Status { status, .. } if *status >= 500 => ErrorKind::ServerError,
            LlmError::Status { .. } => ErrorKind::ClientError,
            LlmError::Timeout { .. } => ErrorKind::Timeout,
            LlmError::Connection { .. } => ErrorKind::Connection,
            LlmError::Malformed { .. } => ErrorKind::Malformed,
            LlmError::Cache { .. } => ErrorKind::Cache,
        }
    }

    /// Transient failures worth another attempt: 408, 429, 5xx, timeouts and connection
    /// failures. 400/401/403/404 and malformed answers are not (the same request would fail
    /// the same way).
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Status { status, .. } => *status == 408 || *status == 429 || *status >= 500,
            LlmError::Timeout { .. } | LlmError::Connection { .. } => true,
            _ => false,
        }
    }

    /// The server's `Retry-After`, when it sent one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
