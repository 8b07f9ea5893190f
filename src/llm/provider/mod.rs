//! Providers: one module per way a role can be answered. `scripted` is the hook for the
//! stages' built-in stand-ins; `openai` is any OpenAI-compatible endpoint; `client` is its
//! connection to one endpoint (key, client, error mapping); `transport` is the HTTP layer
//! under it; `body` writes a chat request's JSON, `answer` reads the answers, `redact`
//! removes a key a server repeated.

pub mod answer;
pub mod body;
pub mod client;
pub mod openai;
pub mod redact;
pub mod scripted;
pub mod transport;
