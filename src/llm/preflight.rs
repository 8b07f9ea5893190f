//! Preflight: before any work, check that a role's endpoint can be used at all - the key's
//! environment variable is set (when one is named), every base URL answers `GET /models`,
//! and each one lists the configured model. One clear one-line error for each failure.
//!
//! Architecture invariant: preflight sends no chat request, costs no tokens and writes
//! nothing (no cache).

use serde_json::Value;
use std::time::Duration;

use crate::llm::config::{Provider, Role, RoleConfig};
use crate::llm::error::LlmError;
use crate::llm::provider::client::{classify, endpoint_client, read_api_key};
use crate::llm::{EnvLookup, process_env};

/// Preflight never waits longer than this per endpoint, whatever the role's timeout.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(10);

/// Check `role`'s configuration against the real environment and endpoints. Scripted
/// roles pass trivially.
pub async fn preflight(role: Role, cfg: &RoleConfig) -> Result<(), LlmError> {
    preflight_with_env(&role.context(), cfg, &process_env).await
}

/// [`preflight`] with the error context spelled out (`embedder 'emotion'`) and the
/// environment given as a lookup function.
pub async fn preflight_with_env(
    context: &str,
    cfg: &RoleConfig,
    env: &EnvLookup,
) -> Result<(), LlmError> {
    cfg.validate(context)?;
    if cfg.provider == Provider::Scripted {
        return Ok(());
    }
    let key = read_api_key(context, cfg, env)?;
    let model = cfg.model.clone().unwrap_or_default();
    let timeout = cfg.timeout().min(PREFLIGHT_TIMEOUT);
    for base_url in cfg.endpoints() {
        let client = endpoint_client(context, &base_url, key.as_deref(), timeout, env)?;
        let listed = client.models().list_byot::<Value>().await.map_err(|e| {
            match classify(context, &base_url, timeout, e) {
                LlmError::Connection { cause, .. } => LlmError::Unreachable {
                    context: context.to_string(),
                    endpoint: base_url.clone(),
                    cause,
                },
                LlmError::Timeout { secs, .. } => LlmError::Unreachable {
                    context: context.to_string(),
                    endpoint: base_url.clone(),
                    cause: format!("no answer within {secs}s"),
                },
                other => redact(other, key.as_deref()),
            }
        })?;
        let ids: Vec<&str> = listed
            .get("data")
            .and_then(Value::as_array)
            .map(|d| {
                d.iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        if !ids.contains(&model.as_str()) {
            let mut available = ids.iter().take(20).copied().collect::<Vec<_>>().join(", ");
            if ids.len() > 20 {
                available.push_str(&format!(", ... ({} in all)", ids.len()));
            }
            if available.is_empty() {
                available = "no models".to_string();
            }
            return Err(LlmError::ModelNotServed {
                context: context.to_string(),
                model,
                endpoint: base_url,
                available,
            });
        }
    }
    Ok(())
}

fn redact(err: LlmError, key: Option<&str>) -> LlmError {
    match (err, key) {
        (
            LlmError::Status {
                context,
                endpoint,
                status,
                retry_after,
                message,
            },
            Some(key),
        ) => LlmError::Status {
            context,
            endpoint,
            status,
            retry_after,
            message: message.replace(key, "[redacted]"),
        },
        (LlmError::Malformed { context, detail }, Some(key)) => LlmError::Malformed {
            context,
            detail: detail.replace(key, "[redacted]"),
        },
        (other, _) => other,
    }
}

/// Check every endpoint role of a config before any work (key set, reachable, model served).
pub fn preflight_roles(roles: &crate::llm::RolesConfig) -> Result<(), String> {
    let endpoints: Vec<_> = roles
        .iter()
        .filter(|(_, c)| c.provider == Provider::Openai)
        .collect();
    if endpoints.is_empty() {
        return Ok(());
    }
    let rt = super::runtime()?;
    for (role, cfg) in endpoints {
        rt.block_on(preflight(*role, cfg))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
