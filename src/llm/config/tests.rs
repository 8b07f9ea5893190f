//! Role config tests: names, defaults, every field of a table, errors naming the field.

use super::*;

#[test]
fn role_names_round_trip() {
    for r in Role::ALL {
        assert_eq!(r.as_str().parse::<Role>().unwrap(), r);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, format!("\"{}\"", r.as_str()));
    }
    assert!("refinr".parse::<Role>().unwrap_err().contains("refinr"));
}

#[test]
fn default_is_scripted() {
    let cfg = RoleConfig::from_toml("role 'judge'", "").unwrap();
    assert_eq!(cfg.provider, Provider::Scripted);
}

#[test]
fn full_openai_table() {
    let text = r#"
        provider = "openai"
        base_urls = ["http://a:8000/v1/", "http://b:8000/v1"]
        model = "Qwen/Qwen3-8B"
        api_key_env = "VLLM_KEY"
        temperature = 0.7
        top_p = 0.9
        top_k = 20
        min_p = 0.0
        max_tokens = 512
        seed = 7
        timeout_secs = 30
        max_retries = 2
        concurrency = 16
        extra_body = { chat_template_kwargs = { enable_thinking = true } }
        reasoning_format = "tags"
        tool_call_format = "hermes"
        send_reasoning = "within_turn"
        context_window = 32768
        tools_in_prompt = true
    "#;
    let cfg = RoleConfig::from_toml("role 'agent'", text).unwrap();
    assert_eq!(cfg.endpoints(), ["http://a:8000/v1", "http://b:8000/v1"]);
    assert_eq!(
        (
            cfg.reasoning_format,
            cfg.tool_call_format,
            cfg.send_reasoning,
            cfg.context_window
        ),
        (
            ReasoningFormat::Tags,
            ToolCallFormat::Hermes,
            SendReasoning::WithinTurn,
            Some(32768)
        )
    );
    assert!(cfg.tools_in_prompt);
    assert_eq!(cfg.timeout(), Duration::from_secs(30));
    assert_eq!(
        cfg.extra_body["chat_template_kwargs"]["enable_thinking"],
        Value::Bool(true)
    );
}

#[test]
fn errors_name_the_field() {
    let cases = [
        ("provider = \"openai\"\ntempreature = 1.0", "tempreature"),
        ("temperature = \"hot\"", "temperature"),
        ("provider = \"anthropic\"", "anthropic"),
        (
            "provider = \"openai\"\nbase_url = \"http://x/v1\"",
            "`model`",
        ),
        ("provider = \"openai\"\nmodel = \"m\"", "`base_url`"),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nbase_urls = [\"http://y/v1\"]",
            "`base_urls`",
        ),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"ftp://x\"",
            "`base_url`",
        ),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:99999/v1\"",
            "port '99999' is not in 1..=65535",
        ),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_urls = [\"http://a:8000/v1\", \"http://:8000/v1\"]",
            "`base_urls[1]`: 'http://:8000/v1': no host",
        ),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nconcurrency = 0",
            "`concurrency`",
        ),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\nextra_body = { stream = true }",
            "`extra_body.stream`",
        ),
        ("model = \"m\"", "`model`"),
        ("send_reasoning = \"all\"", "`send_reasoning`"),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\ntool_call_format = \"xml\"",
            "tool_call_format",
        ),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\ncontext_window = 10",
            "`context_window`",
        ),
        (
            "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\ntools_in_prompt = true\ntool_call_format = \"llama3\"",
            "`tools_in_prompt`",
        ),
        ("tools_in_prompt = true", "`tools_in_prompt`"),
    ];
    for (text, field) in cases {
        let err = RoleConfig::from_toml("role 'refiner'", text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("role 'refiner': "), "{err}");
        assert!(err.contains(field), "{text:?} -> {err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
}

#[test]
fn a_price_is_checked_and_refused_on_a_scripted_role() {
    let endpoint = "provider = \"openai\"\nmodel = \"m\"\nbase_url = \"http://x/v1\"\n";
    let cfg = RoleConfig::from_toml(
        "role 'agent'",
        &format!("{endpoint}price = {{ input = 3.0, output = 15.0 }}"),
    )
    .unwrap();
    let price = cfg.price.unwrap();
    assert_eq!(
        (price.input, price.cached_input_rate(), price.output),
        (3.0, 3.0, 15.0)
    );
    let cases = [
        (
            format!("{endpoint}price = {{ input = -1.0, output = 1.0 }}"),
            "field `price.input`: -1 is not a price",
        ),
        (
            format!("{endpoint}price = {{ input = 1.0, cached_input = -0.1, output = 1.0 }}"),
            "field `price.cached_input`: -0.1 is not a price",
        ),
        (
            format!("{endpoint}price = {{ input = 1.0, output = inf }}"),
            "field `price.output`: inf is not a price",
        ),
        (
            format!("{endpoint}price = {{ input = 1.0, ouptut = 1.0 }}"),
            "ouptut",
        ),
        (
            "price = { input = 1.0, output = 2.0 }".to_string(),
            "field `price` needs provider = \"openai\" (this role is scripted)",
        ),
    ];
    for (text, expected) in cases {
        let err = RoleConfig::from_toml("role 'judge'", &text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("role 'judge': "), "{err}");
        assert!(err.contains(expected), "{text:?} -> {err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
}

#[test]
fn roles_table_rejects_unknown_role() {
    #[derive(Deserialize)]
    struct Stage {
        #[allow(dead_code)]
        roles: RolesConfig,
    }
    let err = toml::from_str::<Stage>("[roles.refinr]\nprovider = \"scripted\"")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("refinr"), "{err}");
}
