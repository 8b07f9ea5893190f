//! The preflight probe against loopback servers: one tiny real request of each role's shape
//! before any stage starts. A server that drops `tools`, one that writes calls as text while
//! `field` is configured, one whose context window is too small and one that leaves
//! `<think>` in the content while `fields` is configured are each refused with a one-line
//! reason naming the role and endpoint; a well-configured server passes, and the probe is
//! sent as the role is configured (its tools, its `extra_body`, a small token cap).

use crate::common::{assert_ok, project_copy, stderr, tracer};
use crate::openai_server::{OpenAiServer, ProbeMode};
use tracer::llm::preflight::{Fits, PROBE_MAX_TOKENS, ProbeFit, preflight_roles, probe_tools};
use tracer::llm::{ChatMessage, Role, RoleConfig, RolesConfig};

const MODEL: &str = "probe-model";

fn role(server: &OpenAiServer, extra: &str) -> RoleConfig {
    RoleConfig::from_toml(
        "role 'agent'",
        &format!(
            "provider = \"openai\"\nbase_url = \"{}\"\nmodel = \"{MODEL}\"\nmax_retries = 0\n{extra}",
            server.base_url()
        ),
    )
    .unwrap()
}

fn roles(pairs: &[(Role, RoleConfig)]) -> RolesConfig {
    pairs.iter().cloned().collect()
}

/// The refusal of `roles` on a server answering probes as `mode`, checked to be one line
/// naming the role and the endpoint.
fn refused(roles: &RolesConfig, fits: &Fits, server: &OpenAiServer, who: &str) -> String {
    let err = preflight_roles(roles, fits).unwrap_err();
    assert!(!err.contains('\n'), "not one line: {err}");
    assert!(
        err.starts_with(&format!(
            "role '{who}' at {}: preflight probe: ",
            server.base_url()
        )),
        "{err}"
    );
    err
}

#[test]
fn a_well_configured_server_passes_and_is_probed_as_configured() {
    let server = OpenAiServer::start(&[MODEL]);
    let off = "extra_body = { chat_template_kwargs = { enable_thinking = false } }\n";
    let rs = roles(&[
        (Role::Agent, role(&server, off)),
        (Role::User, role(&server, "max_tokens = 16\n")),
    ]);
    preflight_roles(&rs, &Fits::new()).unwrap();
    let probes = server.probes();
    assert_eq!(probes.len(), 2, "one probe per endpoint role");
    let agent = probes
        .iter()
        .find(|p| p.body.get("tools").is_some())
        .unwrap();
    let names: Vec<&str> = agent.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_weather", "get_time"]);
    assert_eq!(
        agent.body["chat_template_kwargs"]["enable_thinking"], false,
        "extra_body is sent as configured"
    );
    assert_eq!(agent.body["max_tokens"], PROBE_MAX_TOKENS);
    let user = probes
        .iter()
        .find(|p| p.body.get("tools").is_none())
        .unwrap();
    assert_eq!(
        user.body["max_tokens"], 16,
        "never above the role's own cap"
    );
    // Probes are not work: no POST among the requests, nothing answered from a cache (a
    // second preflight asks the server again).
    assert_eq!(server.post_count(), 0);
    preflight_roles(&rs, &Fits::new()).unwrap();
    assert_eq!(server.probes().len(), 4);
    // The existing checks still come first: a model the server does not list.
    let mut other = role(&server, "");
    other.model = Some("not-served".into());
    let err = preflight_roles(&roles(&[(Role::User, other)]), &Fits::new()).unwrap_err();
    assert!(err.contains("model 'not-served' not served by"), "{err}");
}

#[test]
fn a_template_that_drops_tools_is_refused() {
    let server = OpenAiServer::start(&[MODEL]);
    server.set_probe(ProbeMode::DropsTools);
    let rs = roles(&[(Role::Agent, role(&server, ""))]);
    let err = refused(&rs, &Fits::new(), &server, "agent");
    assert!(err.contains("no tool call back"), "{err}");
    assert!(err.contains("drops `tools`"), "{err}");
    // A plain-chat role on the same server is fine: only tool requests show it.
    let user = roles(&[(Role::User, role(&server, ""))]);
    preflight_roles(&user, &Fits::new()).unwrap();
}

#[test]
fn calls_as_text_are_refused_only_when_the_field_is_configured() {
    let server = OpenAiServer::start(&[MODEL]);
    server.set_probe(ProbeMode::CallsAsText);
    let field = roles(&[(Role::Agent, role(&server, "tool_call_format = \"field\"\n"))]);
    let err = refused(&field, &Fits::new(), &server, "agent");
    assert!(err.contains("came back as text"), "{err}");
    assert!(err.contains("tool_call_format = \"field\""), "{err}");
    // `auto` reads the Hermes text as the call: the same server passes.
    preflight_roles(&roles(&[(Role::Agent, role(&server, ""))]), &Fits::new()).unwrap();
}

#[test]
fn thinking_left_in_the_content_is_refused_when_fields_are_configured() {
    let server = OpenAiServer::start(&[MODEL]);
    server.set_probe(ProbeMode::ThinkInContent);
    for who in [Role::User, Role::Agent] {
        let rs = roles(&[(who, role(&server, "reasoning_format = \"fields\"\n"))]);
        let err = refused(&rs, &Fits::new(), &server, who.as_str());
        assert!(err.contains("`<think>`"), "{err}");
        assert!(err.contains("reasoning_format = \"fields\""), "{err}");
        // `auto` moves the block out of the content: passes.
        preflight_roles(&roles(&[(who, role(&server, ""))]), &Fits::new()).unwrap();
    }
}

#[test]
fn a_context_window_too_small_for_the_largest_prompt_is_refused() {
    let server = OpenAiServer::start(&[MODEL]);
    let policy = ChatMessage::system("Follow the policy. ".repeat(300));
    let mut fits = Fits::new();
    fits.insert(
        Role::Agent,
        ProbeFit {
            messages: vec![policy],
            tools: probe_tools(),
        },
    );
    let agent = |extra: &str| roles(&[(Role::Agent, role(&server, extra))]);
    // The window the server reports (vLLM's `max_model_len`).
    server.report_context_window(2048);
    let err = refused(&agent("max_tokens = 1024\n"), &fits, &server, "agent");
    assert!(
        err.contains("context window of 2048 tokens is too small"),
        "{err}"
    );
    assert!(err.contains("max_tokens 1024"), "{err}");
    assert!(server.probes().is_empty(), "refused before any request");
    // A small enough cap fits; a configured window wins over the server's.
    preflight_roles(&agent("max_tokens = 128\n"), &fits).unwrap();
    let err = refused(
        &agent("max_tokens = 128\ncontext_window = 1000\n"),
        &fits,
        &server,
        "agent",
    );
    assert!(err.contains("context window of 1000 tokens"), "{err}");
}

/// Through the CLI: a stage's probe refuses before anything runs.
#[test]
fn a_run_stops_at_the_probe_before_any_stage_runs() {
    let server = OpenAiServer::start(&[MODEL]);
    server.set_probe(ProbeMode::ThinkInContent);
    let root = project_copy("probe-cli");
    std::fs::write(
        root.join("roles.toml"),
        format!(
            "[roles.refiner]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"{MODEL}\"\nreasoning_format = \"fields\"\n",
            server.base_url()
        ),
    )
    .unwrap();
    let out = root.join("output");
    assert_ok(&tracer(&root, &out, &["validate"]));
    let o = tracer(&root, &out, &["run", "refined", "--domain", "bank"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "role 'refiner' at {}: preflight probe: the model's thinking came back in the content",
            server.base_url()
        )),
        "{err}"
    );
    assert!(!out.join("db").exists(), "nothing ran before the probe");
    assert_eq!(server.post_count(), 0);
}
