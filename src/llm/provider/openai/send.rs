//! Sending a request body: a permit of the next endpoint, the call, a failure classified,
//! and what is transient retried after the server's `Retry-After` or a deterministic
//! backoff (one longer than this client waits is said, not waited for).

use super::OpenAiModel;
use crate::llm::error::LlmError;
use crate::llm::limits::MAX_RETRY_AFTER;
use crate::llm::provider::client::classify;
use serde_json::Value;
use serde_json::value::RawValue;
use std::time::Duration;

#[derive(Clone, Copy)]
pub(super) enum CallKind {
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

impl OpenAiModel {
    /// Send with retries; the answer's JSON on success.
    pub(super) async fn send(
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
}
