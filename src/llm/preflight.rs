//! Preflight: before any work, check that a role's endpoint can be used at all - the key's
//! environment variable is set (when one is named), every base URL answers `GET /models`,
//! and each one lists the configured model ([`preflight`]). One clear one-line error for
//! each failure.
//!
//! Before a stage starts, [`preflight_roles`] also probes every endpoint role with one tiny
//! real request of the shape the role will send ([`probe`]): the agent and the grounder a
//! request offering two small tools that must come back as a tool call in the configured
//! shape, every other role a plain chat that must come back non-empty; the role's own
//! `extra_body` (thinking on or off), sampling and token-cap spelling are sent as
//! configured. It refuses, naming the role and endpoint: a template that drops `tools` (no
//! call, neither in `tool_calls` nor as text), calls written as text while
//! `tool_call_format = "field"`, thinking left in the content (`<think>`) while
//! `reasoning_format = "fields"`, and a context window (configured, else the one `/models`
//! reports) too small for the largest prompt the role will send plus its `max_tokens`
//! ([`ProbeFit`], handed in by the stage layer). The probe asks for at most
//! [`PROBE_MAX_TOKENS`] tokens, [`PROBE_THINKING_MAX_TOKENS`] when the role may think, and
//! never more than the role's own `max_tokens`.
//!
//! Architecture invariant: the model-listing check sends no chat request and costs no
//! tokens; the probe costs a few dozen tokens per endpoint and its answers are never
//! written to (or read from) the response cache, nor counted in a run's usage.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

use crate::llm::chat::{ChatMessage, ChatRequest, ChatResponse};
use crate::llm::config::{Provider, Role, RoleConfig};
use crate::llm::error::LlmError;
use crate::llm::provider::answer::served_context_window;
use crate::llm::provider::body::estimate_prompt_tokens;
use crate::llm::provider::client::{classify, endpoint_client, read_api_key};
use crate::llm::provider::openai::OpenAiModel;
use crate::llm::shape::{ReasoningFormat, extract_think, tools_in_prompt};
use crate::llm::{ChatModel, EnvLookup, process_env};

/// Preflight never waits longer than this per endpoint, whatever the role's timeout.
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(10);

/// How every probe's system message opens: a server's logs (and a test server) can tell a
/// probe from work.
pub const PROBE_MARK: &str = "Preflight check by tracer.";

/// The probe's token cap for a role that does not think (`extra_body` switches thinking
/// off): enough for a short answer or one small tool call.
pub const PROBE_MAX_TOKENS: u32 = 64;

/// The probe's token cap for a role that may think: room for a short thought before the
/// answer. A probe cut at this cap while thinking is inconclusive (a warning, no refusal).
pub const PROBE_THINKING_MAX_TOKENS: u32 = 1024;

/// The largest request a role will send, for the probe's context check: its leading
/// messages (the agent: the largest domain policy; other roles: their prompt file with the
/// most examples any of the run's domains gets) and the largest tool list it offers.
#[derive(Clone, Debug, Default)]
pub struct ProbeFit {
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<Value>,
}

/// The fit of each role a stage's preflight knows one for (a role without one is probed
/// without the context check).
pub type Fits = BTreeMap<Role, ProbeFit>;

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
    listed_models(context, cfg, env).await.map(|_| ())
}

/// Why a failed `GET /models` did not reach an OpenAI-compatible API, when its error shows
/// a web page (a proxy's or a web server's, not the API's) or runs long: one line naming
/// the request instead of the page.
fn not_an_api(error: &str) -> Option<String> {
    let lower = error.to_lowercase();
    let page = lower.contains("<html") || lower.contains("<!doctype") || lower.contains("<body");
    if !page && error.len() <= 400 {
        return None;
    }
    let what = if page { "a web page" } else { "an answer" };
    Some(format!(
        "GET /models answered {what} that is not an OpenAI-compatible model list (is base_url the API's root, such as http://host:8000/v1?)"
    ))
}

/// The model checks of [`preflight_with_env`]; per endpoint, its `/models` listing.
async fn listed_models(
    context: &str,
    cfg: &RoleConfig,
    env: &EnvLookup,
) -> Result<Vec<(String, Value)>, LlmError> {
    cfg.validate(context)?;
    if cfg.provider == Provider::Scripted {
        return Ok(Vec::new());
    }
    let key = read_api_key(context, cfg, env)?;
    let model = cfg.model.clone().unwrap_or_default();
    let timeout = cfg.timeout().min(PREFLIGHT_TIMEOUT);
    let mut out = Vec::new();
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
                other => match not_an_api(&other.to_string()) {
                    Some(cause) => LlmError::Unreachable {
                        context: context.to_string(),
                        endpoint: base_url.clone(),
                        cause,
                    },
                    None => redact(other, key.as_deref()),
                },
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
        out.push((base_url, listed));
    }
    Ok(out)
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

/// Whether a role sends tools (and so is probed with a tool request).
pub fn offers_tools(role: Role) -> bool {
    matches!(role, Role::Agent | Role::Grounder)
}

/// Whether a role's `extra_body` switches thinking off (`chat_template_kwargs =
/// { enable_thinking = false }`, vLLM and llama.cpp's spelling, or a top-level
/// `enable_thinking = false`); anything else may think.
fn thinking_off(cfg: &RoleConfig) -> bool {
    let off = |v: Option<&Value>| v.and_then(Value::as_bool) == Some(false);
    off(cfg
        .extra_body
        .get("chat_template_kwargs")
        .and_then(|k| k.get("enable_thinking")))
        || off(cfg.extra_body.get("enable_thinking"))
}

/// The probe's token cap for `cfg` (see [`PROBE_MAX_TOKENS`]).
pub fn probe_max_tokens(cfg: &RoleConfig) -> u32 {
    let cap = if thinking_off(cfg) {
        PROBE_MAX_TOKENS
    } else {
        PROBE_THINKING_MAX_TOKENS
    };
    cfg.max_tokens.map_or(cap, |m| m.min(cap))
}

/// The two small tools of the probe's tool request.
pub fn probe_tools() -> Vec<Value> {
    let tool = |name: &str, description: &str, param: &str| {
        json!({"type": "function", "function": {"name": name, "description": description,
            "parameters": {"type": "object",
                "properties": {param: {"type": "string"}}, "required": [param]}}})
    };
    vec![
        tool("get_weather", "The current weather in a city.", "city"),
        tool("get_time", "The current time in a time zone.", "timezone"),
    ]
}

/// The probe request for `role`: a two-tool request for a role that offers tools, a plain
/// chat otherwise.
pub fn probe_request(role: Role, cfg: &RoleConfig) -> ChatRequest {
    let mut req = if offers_tools(role) {
        ChatRequest::new(vec![
            ChatMessage::system(format!(
                "{PROBE_MARK} Answer by calling the one tool that fits the question."
            )),
            ChatMessage::user("What is the weather in Paris right now?"),
        ])
        .with_tools(probe_tools())
    } else {
        ChatRequest::new(vec![
            ChatMessage::system(format!("{PROBE_MARK} Answer in one word.")),
            ChatMessage::user("Say OK."),
        ])
    };
    req.sampling.max_tokens = Some(probe_max_tokens(cfg));
    req
}

/// Why an answer to the probe shows the role cannot work as configured; `Ok(None)` for a
/// usable answer, `Ok(Some(note))` for an inconclusive one (cut at the probe's cap while
/// thinking: a warning).
fn judge_answer(role: Role, cfg: &RoleConfig, r: &ChatResponse) -> Result<Option<String>, String> {
    let content = r.message.content.as_deref().unwrap_or("");
    if cfg.reasoning_format == ReasoningFormat::Fields
        && (content.contains("<think>") || content.contains("</think>"))
    {
        return Err(
            "the model's thinking came back in the content (`<think>`) while reasoning_format = \"fields\": start vLLM with `--reasoning-parser <qwen3|deepseek_r1|...>` (llama-server: `--reasoning-format deepseek`), or set reasoning_format = \"auto\"".to_string(),
        );
    }
    let cut = r.finish_reason.as_deref() == Some("length");
    if offers_tools(role) {
        if !r.message.tool_calls.is_empty() {
            return Ok(None);
        }
        let (thinking, _) = extract_think(content);
        if cut && (r.message.reasoning_content.is_some() || !thinking.is_empty()) {
            return Ok(Some(format!(
                "the probe was cut at its {}-token cap while thinking; the tool-call shape was not checked",
                probe_max_tokens(cfg)
            )));
        }
        return Err(format!(
            "a request offering two tools got no tool call back (neither in `tool_calls` nor as text; it answered {:?}): the chat template drops `tools`; serve the model with its tool-calling template (vLLM `--enable-auto-tool-choice --tool-call-parser <parser>`, llama-server `--jinja`) or set tools_in_prompt = true",
            crate::llm::provider::transport::shorten(content)
        ));
    }
    if !content.trim().is_empty() {
        return Ok(None);
    }
    if cut && r.message.reasoning_content.is_some() {
        return Ok(Some(format!(
            "the probe was cut at its {}-token cap while thinking; its answer was not seen",
            probe_max_tokens(cfg)
        )));
    }
    Err(match r.incomplete() {
        Some(why) => format!("a plain chat request came back without an answer: {why}"),
        None => "a plain chat request came back empty".to_string(),
    })
}

/// The context check: the largest prompt `fit` holds, as the role sends it, plus the
/// role's `max_tokens`, against `window`.
fn fits_window(cfg: &RoleConfig, fit: &ProbeFit, window: u64) -> Result<(), String> {
    let estimated = if cfg.tools_in_prompt {
        estimate_prompt_tokens(&tools_in_prompt(&fit.messages, &fit.tools), &[])
    } else {
        estimate_prompt_tokens(&fit.messages, &fit.tools)
    };
    let reserve = u64::from(cfg.max_tokens.unwrap_or(0));
    if estimated + reserve > window {
        return Err(format!(
            "the context window of {window} tokens is too small: the largest system prompt{} this role sends takes about {estimated} tokens, plus max_tokens {reserve}; serve the model with a longer context (vLLM `--max-model-len`, llama-server `-c`) or lower max_tokens",
            if fit.tools.is_empty() {
                ""
            } else {
                " and tools"
            }
        ));
    }
    Ok(())
}

/// Probe every endpoint of `role`: the model checks of [`preflight_with_env`], the context
/// check against `fit` (when given and the window is known), then one tiny real request of
/// the role's shape per endpoint. Inconclusive probes are returned as warnings.
pub async fn probe(
    role: Role,
    cfg: &RoleConfig,
    fit: Option<&ProbeFit>,
    env: &EnvLookup,
) -> Result<Vec<String>, LlmError> {
    let context = role.context();
    let listed = listed_models(&context, cfg, env).await?;
    let model = cfg.model.clone().unwrap_or_default();
    let mut warnings = Vec::new();
    for (endpoint, models) in listed {
        let refuse = |reason: String| LlmError::Probe {
            context: context.clone(),
            endpoint: endpoint.clone(),
            reason,
        };
        let window = cfg
            .context_window
            .or_else(|| served_context_window(&models, &model));
        if let (Some(window), Some(fit)) = (window, fit) {
            fits_window(cfg, fit, window).map_err(refuse)?;
        }
        let one = RoleConfig {
            base_url: Some(endpoint.clone()),
            base_urls: Vec::new(),
            ..cfg.clone()
        };
        let answer = OpenAiModel::uncached(&context, &one, env)?
            .chat(probe_request(role, cfg))
            .await;
        let answer = match answer {
            Ok(a) => a,
            Err(LlmError::TextToolCall { .. }) => {
                return Err(refuse(format!(
                    "the tool call came back as text while tool_call_format = \"field\": {}",
                    crate::llm::shape::TEXT_CALL_HINT
                )));
            }
            Err(e) => return Err(e),
        };
        match judge_answer(role, cfg, &answer).map_err(refuse)? {
            None => {}
            Some(note) => warnings.push(format!("{context} at {endpoint}: {note}")),
        }
    }
    Ok(warnings)
}

/// Check every endpoint role of a config before any work: key set, reachable, model served,
/// and the probe of [`probe`] (`fits`: the largest prompt each role will send, where the
/// stage knows it). Inconclusive probes are printed as warnings.
pub fn preflight_roles(roles: &crate::llm::RolesConfig, fits: &Fits) -> Result<(), String> {
    let endpoints: Vec<_> = roles
        .iter()
        .filter(|(_, c)| c.provider == Provider::Openai)
        .collect();
    if endpoints.is_empty() {
        return Ok(());
    }
    let rt = super::runtime()?;
    for (role, cfg) in endpoints {
        let warnings = rt
            .block_on(probe(*role, cfg, fits.get(role), &process_env))
            .map_err(|e| e.to_string())?;
        for w in warnings {
            eprintln!("tracer: warning: {w}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_web_page_for_a_model_list_is_one_line_naming_the_request() {
        let page = "failed to deserialize api response: expected value at line 1 column 1 \
                    content:<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>";
        let why = super::not_an_api(page).unwrap();
        assert!(why.starts_with("GET /models answered a web page"), "{why}");
        assert!(!why.contains("nginx"), "{why}");
        assert_eq!(super::not_an_api("connection refused"), None);
    }

    use super::*;
    use crate::llm::chat::{AssistantMessage, ToolCall};

    fn cfg(extra: &str) -> RoleConfig {
        RoleConfig::from_toml(
            "role 'agent'",
            &format!("provider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n{extra}"),
        )
        .unwrap()
    }

    fn answer(content: Option<&str>, calls: usize, finish: &str, thinking: bool) -> ChatResponse {
        ChatResponse {
            message: AssistantMessage {
                content: content.map(str::to_string),
                reasoning_content: thinking.then(|| "hmm".to_string()),
                tool_calls: (0..calls)
                    .map(|i| ToolCall {
                        id: format!("c{i}"),
                        name: "get_weather".into(),
                        arguments: "{\"city\":\"Paris\"}".into(),
                    })
                    .collect(),
            },
            finish_reason: Some(finish.to_string()),
            usage: Default::default(),
            model: "m".into(),
            from_cache: false,
        }
    }

    #[test]
    fn the_cap_follows_thinking_and_never_exceeds_the_roles_own() {
        assert_eq!(probe_max_tokens(&cfg("")), PROBE_THINKING_MAX_TOKENS);
        let off = "extra_body = { chat_template_kwargs = { enable_thinking = false } }\n";
        assert_eq!(probe_max_tokens(&cfg(off)), PROBE_MAX_TOKENS);
        assert_eq!(probe_max_tokens(&cfg("max_tokens = 16\n")), 16);
        let req = probe_request(Role::Agent, &cfg(off));
        assert_eq!(req.tools.len(), 2);
        assert_eq!(req.sampling.max_tokens, Some(PROBE_MAX_TOKENS));
        assert!(probe_request(Role::User, &cfg("")).tools.is_empty());
    }

    #[test]
    fn answers_are_judged_by_the_roles_shape() {
        let c = cfg("");
        assert_eq!(
            judge_answer(Role::Agent, &c, &answer(None, 1, "tool_calls", false)),
            Ok(None)
        );
        let dropped =
            judge_answer(Role::Agent, &c, &answer(Some("Sunny."), 0, "stop", false)).unwrap_err();
        assert!(dropped.contains("drops `tools`"), "{dropped}");
        // Cut while thinking: inconclusive, not refused.
        assert!(matches!(
            judge_answer(Role::Agent, &c, &answer(None, 0, "length", true)),
            Ok(Some(_))
        ));
        assert_eq!(
            judge_answer(Role::User, &c, &answer(Some("OK"), 0, "stop", false)),
            Ok(None)
        );
        let empty = judge_answer(Role::User, &c, &answer(Some(" "), 0, "stop", false)).unwrap_err();
        assert!(empty.contains("empty"), "{empty}");
        let fields = cfg("reasoning_format = \"fields\"\n");
        let think = judge_answer(
            Role::User,
            &fields,
            &answer(Some("<think>x</think>OK"), 0, "stop", false),
        )
        .unwrap_err();
        assert!(think.contains("reasoning_format = \"fields\""), "{think}");
        // The same answer under `auto` was split by the shape layer already: passes.
        assert_eq!(
            judge_answer(Role::User, &c, &answer(Some("OK"), 0, "stop", true)),
            Ok(None)
        );
    }

    #[test]
    fn the_window_must_hold_the_largest_prompt_and_max_tokens() {
        let fit = ProbeFit {
            messages: vec![ChatMessage::system("policy ".repeat(400))],
            tools: probe_tools(),
        };
        let c = cfg("max_tokens = 512\n");
        let need = estimate_prompt_tokens(&fit.messages, &fit.tools) + 512;
        assert!(fits_window(&c, &fit, need).is_ok());
        let e = fits_window(&c, &fit, need - 1).unwrap_err();
        assert!(
            e.contains(&format!("{} tokens is too small", need - 1)),
            "{e}"
        );
        assert!(e.contains("max_tokens 512"), "{e}");
    }
}
