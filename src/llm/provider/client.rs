//! The connection to one OpenAI-compatible endpoint: the API key (read once from the
//! variable the config names, kept out of `Debug` output), the async-openai client over
//! our transport, and async-openai's errors mapped to ours ([`classify`]).
//!
//! Architecture invariant: the key is handed only to async-openai's config (a
//! `SecretString`) and never printed (`Secret`'s `Debug`); the caller scrubs it from the
//! server text an error of [`classify`] carries.

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use std::time::Duration;

use super::transport::{HttpStatusError, StatusTransport, shorten};
use crate::llm::EnvLookup;
use crate::llm::config::RoleConfig;
use crate::llm::error::LlmError;

/// An API key, kept out of `Debug` output.
#[derive(Clone)]
pub(super) struct Secret(pub(super) String);

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

#[cfg(test)]
mod tests {
    use super::*;

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
