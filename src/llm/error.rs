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
    /// The endpoint's TLS certificate was refused (unknown issuer, wrong host name,
    /// expired). Not transient: the same handshake fails the same way, so it is not retried.
    #[error("{context}: endpoint {endpoint}: TLS certificate not trusted: {detail}")]
    Certificate {
        context: String,
        endpoint: String,
        detail: String,
    },
    /// A 2xx answer we cannot use: not JSON, not the OpenAI shape, or tool-call arguments
    /// that are not valid JSON (typically truncated by `max_tokens`).
    #[error("{context}: malformed response: {detail}")]
    Malformed { context: String, detail: String },
    #[error("response cache {path}: {message}")]
    Cache { path: String, message: String },
    /// The model wrote a tool call as text and the role reads only the `tool_calls` field
    /// (`tool_call_format = "field"`): the server runs without a tool-call parser.
    #[error("{context}: the model wrote a tool call as text, not in `tool_calls`; {hint}")]
    TextToolCall { context: String, hint: String },
    /// The conversation no longer fits the model's context window: by our estimate before
    /// sending (`estimated` prompt tokens plus `max_tokens` over `window`), or by the
    /// server's own refusal. Not transient: the same request fails the same way.
    #[error("{context}: context window exceeded: {detail}")]
    ContextExceeded { context: String, detail: String },
    /// The preflight probe: the role's endpoint answers, but not in the shape the role's
    /// config reads (tools dropped, calls or thinking left in the text) or its context
    /// window cannot hold what the role will send. Not transient.
    #[error("{context} at {endpoint}: preflight probe: {reason}")]
    Probe {
        context: String,
        endpoint: String,
        reason: String,
    },
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
    TextToolCall,
    ContextExceeded,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 13] = [
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
        ErrorKind::TextToolCall,
        ErrorKind::ContextExceeded,
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
            ErrorKind::TextToolCall => "text_tool_call",
            ErrorKind::ContextExceeded => "context_exceeded",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl LlmError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            LlmError::Config { .. } | LlmError::Probe { .. } => ErrorKind::Config,
            LlmError::MissingApiKey { .. } | LlmError::InvalidApiKey { .. } => ErrorKind::ApiKey,
            LlmError::Unreachable { .. } => ErrorKind::Unreachable,
            LlmError::ModelNotServed { .. } => ErrorKind::ModelNotServed,
            LlmError::Status { status: 429, .. } => ErrorKind::RateLimited,
            LlmError::Status { status, .. } if *status >= 500 => ErrorKind::ServerError,
            LlmError::Status { .. } => ErrorKind::ClientError,
            LlmError::Timeout { .. } => ErrorKind::Timeout,
            LlmError::Connection { .. } | LlmError::Certificate { .. } => ErrorKind::Connection,
            LlmError::Malformed { .. } => ErrorKind::Malformed,
            LlmError::Cache { .. } => ErrorKind::Cache,
            LlmError::TextToolCall { .. } => ErrorKind::TextToolCall,
            LlmError::ContextExceeded { .. } => ErrorKind::ContextExceeded,
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

    /// A server's refusal of a prompt too long for the model (vLLM, OpenAI, llama.cpp and
    /// others word it differently), as [`LlmError::ContextExceeded`]; other errors as they are.
    pub fn context_refusal(self) -> LlmError {
        match self {
            LlmError::Status {
                context,
                status: 400 | 413,
                message,
                ..
            } if is_context_message(&message) => LlmError::ContextExceeded {
                context,
                detail: format!("the server refused the prompt: {message}"),
            },
            other => other,
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

/// Whether a server's error text says the prompt does not fit the context window.
pub fn is_context_message(message: &str) -> bool {
    const PHRASES: [&str; 8] = [
        "maximum context length",
        "context length",
        "context_length_exceeded",
        "exceed_context_size",
        "exceeds the available context",
        "context window",
        "prompt is too long",
        "too many tokens",
    ];
    let m = message.to_lowercase();
    PHRASES.iter().any(|p| m.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_refusals_of_common_servers_are_recognised() {
        let status = |status: u16, message: &str| LlmError::Status {
            context: "role 'agent'".into(),
            endpoint: "http://x/v1".into(),
            status,
            retry_after: None,
            message: message.into(),
        };
        for (code, text) in [
            (
                400,
                "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
            ),
            (
                400,
                "the request exceeds the available context size, try increasing it",
            ),
            (
                400,
                "{\"type\": \"exceed_context_size_error\", \"n_ctx\": 4096}",
            ),
            (413, "Prompt is too long"),
        ] {
            let e = status(code, text).context_refusal();
            assert_eq!(e.kind(), ErrorKind::ContextExceeded, "{text}");
            assert!(!e.is_retryable());
        }
        // Other 400s and any 5xx stay what they are.
        assert_eq!(
            status(400, "unknown field `foo`").context_refusal().kind(),
            ErrorKind::ClientError
        );
        assert_eq!(
            status(500, "maximum context length")
                .context_refusal()
                .kind(),
            ErrorKind::ServerError
        );
    }
}
