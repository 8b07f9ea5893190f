//! Token and request accounting per role: lock-free counters updated by the provider and a
//! serialisable snapshot for progress bars and `tracer stats`.
//!
//! Counting rules: `calls` are logical requests (one `chat`/`embed`); `cache_hits` of them
//! cost nothing; `http_requests` are attempts on the wire (retries included); `errors`
//! counts every failed attempt by kind, `failures` the calls that finally failed. Tokens are
//! what the server reported for fresh answers (cached answers cost no tokens);
//! `replayed` holds the tokens the cached answers cost when they were first paid for, so
//! [`StatsSnapshot::answers`] - the tokens of every answer the role gave - is the same
//! whether a run paid for its answers or a re-run took them from the response cache.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::chat::Usage;
use super::error::ErrorKind;

#[derive(Debug, Default)]
pub struct RoleStats {
    calls: AtomicU64,
    cache_hits: AtomicU64,
    http_requests: AtomicU64,
    retries: AtomicU64,
    failures: AtomicU64,
    prompt_tokens: AtomicU64,
    cached_prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    replayed_prompt_tokens: AtomicU64,
    replayed_cached_prompt_tokens: AtomicU64,
    replayed_completion_tokens: AtomicU64,
    errors: [AtomicU64; ErrorKind::ALL.len()],
}

/// A point-in-time copy of [`RoleStats`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StatsSnapshot {
    pub calls: u64,
    pub cache_hits: u64,
    pub http_requests: u64,
    pub retries: u64,
    pub failures: u64,
    pub prompt_tokens: u64,
    /// The part of `prompt_tokens` the server read from its prompt cache.
    pub cached_prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Tokens of the answers served from the response cache, as first reported.
    pub replayed: Usage,
    /// Failed attempts by kind (`rate_limited`, `timeout`, `malformed`, ...); zeros left out.
    pub errors: BTreeMap<&'static str, u64>,
}

impl StatsSnapshot {
    pub fn errors_of(&self, kind: ErrorKind) -> u64 {
        self.errors.get(kind.as_str()).copied().unwrap_or(0)
    }

    /// Tokens of the fresh answers (what this process paid for).
    pub fn fresh(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens,
            cached_prompt_tokens: self.cached_prompt_tokens,
            completion_tokens: self.completion_tokens,
        }
    }

    /// Tokens of every answer the role gave, fresh or replayed from the response cache.
    pub fn answers(&self) -> Usage {
        self.fresh() + self.replayed
    }
}

fn bump(c: &AtomicU64, by: u64) {
    c.fetch_add(by, Ordering::Relaxed);
}

impl RoleStats {
    pub fn record_call(&self) {
        bump(&self.calls, 1);
    }

    pub fn record_cache_hit(&self) {
        bump(&self.cache_hits, 1);
    }

    pub fn record_http_request(&self) {
        bump(&self.http_requests, 1);
    }

    pub fn record_retry(&self) {
        bump(&self.retries, 1);
    }

    pub fn record_failure(&self) {
        bump(&self.failures, 1);
    }

    pub fn record_error(&self, kind: ErrorKind) {
        bump(&self.errors[kind.index()], 1);
    }

    /// The tokens of a fresh answer.
    pub fn record_usage(&self, usage: Usage) {
        bump(&self.prompt_tokens, usage.prompt_tokens);
        bump(&self.cached_prompt_tokens, usage.cached_prompt_tokens);
        bump(&self.completion_tokens, usage.completion_tokens);
    }

    /// The tokens an answer served from the response cache cost when it was first paid for.
    pub fn record_replayed_usage(&self, usage: Usage) {
        bump(&self.replayed_prompt_tokens, usage.prompt_tokens);
        bump(
            &self.replayed_cached_prompt_tokens,
            usage.cached_prompt_tokens,
        );
        bump(&self.replayed_completion_tokens, usage.completion_tokens);
    }

    pub fn snapshot(&self) -> StatsSnapshot {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StatsSnapshot {
            calls: get(&self.calls),
            cache_hits: get(&self.cache_hits),
            http_requests: get(&self.http_requests),
            retries: get(&self.retries),
            failures: get(&self.failures),
            prompt_tokens: get(&self.prompt_tokens),
            cached_prompt_tokens: get(&self.cached_prompt_tokens),
            completion_tokens: get(&self.completion_tokens),
            replayed: Usage {
                prompt_tokens: get(&self.replayed_prompt_tokens),
                cached_prompt_tokens: get(&self.replayed_cached_prompt_tokens),
                completion_tokens: get(&self.replayed_completion_tokens),
            },
            errors: ErrorKind::ALL
                .iter()
                .map(|k| (k.as_str(), get(&self.errors[k.index()])))
                .filter(|(_, n)| *n > 0)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_counts() {
        let s = RoleStats::default();
        s.record_call();
        s.record_error(ErrorKind::Timeout);
        s.record_error(ErrorKind::Timeout);
        s.record_usage(Usage {
            prompt_tokens: 10,
            cached_prompt_tokens: 4,
            completion_tokens: 3,
        });
        let snap = s.snapshot();
        assert_eq!(snap.calls, 1);
        assert_eq!(snap.errors_of(ErrorKind::Timeout), 2);
        assert_eq!(snap.errors.len(), 1);
        assert_eq!(
            (
                snap.prompt_tokens,
                snap.cached_prompt_tokens,
                snap.completion_tokens
            ),
            (10, 4, 3)
        );
    }

    #[test]
    fn answers_count_replayed_answers_with_what_they_first_cost() {
        let s = RoleStats::default();
        let answer = Usage {
            prompt_tokens: 50,
            cached_prompt_tokens: 20,
            completion_tokens: 5,
        };
        s.record_usage(answer);
        s.record_cache_hit();
        s.record_replayed_usage(answer);
        let snap = s.snapshot();
        assert_eq!(snap.fresh(), answer, "the replay was not paid again");
        assert_eq!(snap.replayed, answer);
        assert_eq!(
            snap.answers(),
            Usage {
                prompt_tokens: 100,
                cached_prompt_tokens: 40,
                completion_tokens: 10,
            }
        );
    }
}
