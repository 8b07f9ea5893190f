//! Providers: one module per way a role can be answered. `scripted` is the hook for the
//! stages' built-in stand-ins; `openai` is any OpenAI-compatible endpoint; `transport` is
//! the HTTP layer under it; `body` writes a chat request's JSON.

pub mod body;
pub mod openai;
pub mod scripted;
pub mod transport;
