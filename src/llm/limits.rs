//! Load limits of the endpoint path: a round-robin pool of endpoints each guarded by its
//! own semaphore (the role's `concurrency`), and the retry schedule (exponential backoff
//! with deterministic jitter, or the server's `Retry-After` when it sent one).
//!
//! Jitter is drawn from a ChaCha stream seeded by (request key, attempt), not from the
//! clock or thread-local randomness, so two runs of the same work wait the same way and
//! tests can reason about the schedule. Architecture invariant: nothing here knows what is
//! being sent.

use rand::RngExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;

/// Endpoints served round-robin; each `T` carries its own client.
pub struct EndpointPool<T> {
    endpoints: Vec<Endpoint<T>>,
    next: AtomicUsize,
}

pub struct Endpoint<T> {
    pub base_url: String,
    pub client: T,
    pub permits: Arc<Semaphore>,
}

impl<T> EndpointPool<T> {
    /// `concurrency` permits per endpoint.
    pub fn new(endpoints: Vec<(String, T)>, concurrency: usize) -> EndpointPool<T> {
        EndpointPool {
            endpoints: endpoints
                .into_iter()
                .map(|(base_url, client)| Endpoint {
                    base_url,
                    client,
                    permits: Arc::new(Semaphore::new(concurrency.max(1))),
                })
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// The next endpoint in turn (retries move on to the next replica too).
    pub fn pick(&self) -> &Endpoint<T> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.endpoints.len();
        &self.endpoints[i]
    }

    pub fn base_urls(&self) -> Vec<&str> {
        self.endpoints.iter().map(|e| e.base_url.as_str()).collect()
    }
}

/// Longest `Retry-After` we honour; a server asking for more is treated as failing.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub initial: Duration,
    pub max: Duration,
}

impl RetryPolicy {
    /// How long to wait before retry number `retry` (1-based) of the request whose key
    /// starts with `key_seed`. A server's `Retry-After` is honoured as given (it is a lower
    /// bound the server asked for); otherwise `initial * 2^(retry-1)`, capped at `max`,
    /// scaled by a jitter factor in [0.5, 1.0).
    pub fn delay(&self, retry: u32, key_seed: u64, retry_after: Option<Duration>) -> Duration {
        if let Some(after) = retry_after {
            return after.min(MAX_RETRY_AFTER);
        }
        let exp = retry.saturating_sub(1).min(30);
        let base = self
            .initial
            .saturating_mul(1u32 << exp.min(31))
            .min(self.max);
        let mut rng = crate::seed::derive_rng(key_seed, &["llm-backoff", &retry.to_string()]);
        let factor: f64 = rng.random_range(0.5..1.0);
        base.mul_f64(factor)
    }
}

/// `Retry-After` as delay-seconds (integer or decimal). The HTTP-date form is not used by
/// the servers we target (OpenAI, vLLM, llama.cpp); it yields `None`, and the backoff
/// schedule applies instead.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e6)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_is_capped_and_deterministic() {
        let p = RetryPolicy {
            max_retries: 5,
            initial: Duration::from_millis(100),
            max: Duration::from_millis(1000),
        };
        for retry in 1..=6 {
            let d = p.delay(retry, 42, None);
            let base = (100u64 << (retry - 1)).min(1000);
            assert!(d >= Duration::from_millis(base / 2), "{retry}: {d:?}");
            assert!(d < Duration::from_millis(base), "{retry}: {d:?}");
            assert_eq!(d, p.delay(retry, 42, None));
        }
        assert_ne!(p.delay(1, 1, None), p.delay(1, 2, None));
        assert_eq!(
            p.delay(1, 1, Some(Duration::from_secs(3))),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("1"), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn round_robin() {
        let pool = EndpointPool::new(vec![("a".into(), ()), ("b".into(), ())], 2);
        let order: Vec<&str> = (0..4).map(|_| pool.pick().base_url.as_str()).collect();
        assert_eq!(order, ["a", "b", "a", "b"]);
    }
}
