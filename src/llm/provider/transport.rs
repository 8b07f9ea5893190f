//! The HTTP transport under async-openai: sends the request async-openai built and turns
//! every non-2xx answer into a typed [`HttpStatusError`] that keeps the status and the
//! `Retry-After` header.
//!
//! Why our own transport: async-openai's built-in executor wraps reqwest in its own retry
//! layer (3 retries, its own backoff, not configurable per call) and its error type keeps
//! only the status code and message of a failed answer, so `Retry-After` is lost before we
//! could see it. Installing this service through `Client::with_http_service` (the
//! `middleware` feature) removes that layer - all retrying happens once, in
//! `provider::openai`, where it is counted - and hands the header to the retry schedule.
//! Architecture invariant: this service never retries and never logs request headers.

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use reqwest::header::{AUTHORIZATION, RETRY_AFTER};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::llm::limits::parse_retry_after;

/// A non-2xx answer.
#[derive(Debug)]
pub struct HttpStatusError {
    pub status: u16,
    pub retry_after: Option<Duration>,
    /// The error message the server gave (OpenAI `error.message` when present), shortened.
    pub message: String,
}

impl std::fmt::Display for HttpStatusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {}: {}", self.status, self.message)
    }
}

impl std::error::Error for HttpStatusError {}

/// Longest server text we carry in an error.
const MAX_MESSAGE_CHARS: usize = 300;

pub fn shorten(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_MESSAGE_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    format!("{cut}...")
}

fn error_message(body: &[u8]) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str())
            .map(str::to_string)
    });
    shorten(&message.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned()))
}

#[derive(Clone, Debug)]
pub struct StatusTransport {
    client: reqwest::Client,
}

impl StatusTransport {
    pub fn new(client: reqwest::Client) -> StatusTransport {
        StatusTransport { client }
    }
}

type TransportFuture =
    Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send + 'static>>;

impl tower::Service<HttpRequestFactory> for StatusTransport {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = TransportFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), OpenAIError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> TransportFuture {
        let client = self.client.clone();
        Box::pin(async move {
            let mut request = factory.build().await?;
            // async-openai always sends `Authorization: Bearer <key>`; with no key configured
            // (local servers) that is an empty bearer, which some proxies reject.
            if request
                .headers()
                .get(AUTHORIZATION)
                .is_some_and(|v| v.as_bytes().trim_ascii() == b"Bearer")
            {
                request.headers_mut().remove(AUTHORIZATION);
            }
            let response = client.execute(request).await?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let body = response.bytes().await.unwrap_or_default();
            Err(OpenAIError::Boxed(Box::new(HttpStatusError {
                status: status.as_u16(),
                retry_after,
                message: error_message(&body),
            })))
        })
    }
}
