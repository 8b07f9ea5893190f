//! The plan's arithmetic: dollars from tokens and prices, the grounded caps as the stage
//! reads them, one episode's requests, a funnel from yields, and the lines' sums.

use super::measure::episode_requests;
use super::*;
use crate::llm::provider::body::estimate_prompt_tokens;
use crate::llm::{ChatMessage, ToolCall};

#[test]
fn dollars_are_tokens_times_the_price_per_million() {
    let price = Price {
        input: 0.05,
        cached_input: Some(0.02),
        output: 0.20,
    };
    // 1M prompt tokens at $0.05 and 200k completion tokens at $0.20; no cached discount.
    let d = dollars(1_000_000.0, 200_000.0, &price);
    assert!((d - 0.09).abs() < 1e-12, "{d}");
    let openai = Price {
        input: 2.5,
        cached_input: None,
        output: 10.0,
    };
    assert!((dollars(3_000.0, 500.0, &openai) - 0.0125).abs() < 1e-12);
    assert_eq!(dollars(0.0, 0.0, &openai), 0.0);
}

#[test]
fn the_caps_are_the_grounded_stages_own() {
    use crate::pipeline::StageConfig;
    use crate::stage::grounded::GroundedConfig;
    for text in [
        "",
        "max_train = 7\nmax_eval = 0\n",
        "max_train = 7\nmax_actions = 6\n[caps.bank]\nmax_eval = 3\nmax_actions = 8\n",
        "[caps.travel]\nmax_train = 776\nmax_eval = 195\nmax_actions = 8\n",
    ] {
        let table: toml::Table = text.parse().unwrap();
        let cfg =
            GroundedConfig::load(std::path::Path::new("stages/grounded.toml"), &table).unwrap();
        for d in ["bank", "travel", "airline"] {
            let (train, eval) = cfg.caps_for(d);
            assert_eq!(
                caps_for(&table, d),
                Caps {
                    train,
                    eval,
                    max_actions: cfg.max_actions_for(d)
                },
                "{text:?} {d}"
            );
        }
    }
}

#[test]
fn an_episode_is_priced_turn_by_turn_as_each_role_is_sent_it() {
    let call = ToolCall {
        id: "c1".into(),
        name: "get_user".into(),
        arguments: "{\"id\":\"u1\"}".into(),
    };
    let messages = vec![
        ChatMessage::system("Policy text."),
        ChatMessage::assistant("Hi! How can I help you today?"),
        ChatMessage::user("I want to check my account."),
        ChatMessage::assistant_tool_calls(None, vec![call]),
        ChatMessage::tool("c1", "get_user", "{\"name\":\"Ada\"}"),
        ChatMessage::assistant("Your account is fine."),
        ChatMessage::user("Thanks! ###STOP###"),
    ];
    let tools = vec![serde_json::json!({"type": "function", "function": {"name": "get_user"}})];
    let e = episode_requests(&messages, &tools, Some("Rules."));
    // The agent: its call and its answer, each sent everything before it.
    assert_eq!(e.agent.requests, 2.0);
    let expected = estimate_prompt_tokens(&messages[..3], &tools)
        + estimate_prompt_tokens(&messages[..5], &tools);
    assert_eq!(e.agent.prompt, expected as f64);
    // Completions: the call's name and arguments, then the text, at 4 characters a token.
    let call_chars = "get_user".len() + "{\"id\":\"u1\"}".len();
    let text = "Your account is fine.".len();
    assert_eq!(
        e.agent.completion,
        (call_chars.div_ceil(4) + text.div_ceil(4)) as f64
    );
    // The user: two replies, each sent its rules and the conversation turned around.
    assert_eq!(e.user.requests, 2.0);
    let first = vec![
        ChatMessage::system("Rules."),
        ChatMessage::user("Hi! How can I help you today?"),
    ];
    let mut second = first.clone();
    second.push(ChatMessage::assistant("I want to check my account."));
    second.push(ChatMessage::user("Your account is fine."));
    assert_eq!(
        e.user.prompt,
        (estimate_prompt_tokens(&first, &[]) + estimate_prompt_tokens(&second, &[])) as f64
    );
    // Without a user simulator's prompt (a task unknown), only the agent is priced.
    assert_eq!(episode_requests(&messages, &tools, None).user.requests, 0.0);
}

fn settings() -> RunSettings {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths = Paths {
        root: root.to_path_buf(),
        output: root.join("no-such-output"),
        overrides: None,
        roles: None,
    };
    RunSettings::load(&paths).unwrap()
}

#[test]
fn a_funnel_carries_the_traces_through_the_yields_and_trials() {
    let s = settings();
    let rates = Rates {
        grounded: [0.5, 0.5],
        drafted: [1.0, 1.0],
        refined: [0.8, 0.8],
        judged: [0.1, 0.1],
        verified: [0.9, 0.9],
        kept: 0.5,
        reviewed: 1.0,
        failed_rollouts: 0.25,
        failed_eval: 0.5,
    };
    let f = rates.apply([100.0, 40.0], &s);
    assert_eq!(f.grounded, [50.0, 20.0]);
    assert_eq!(f.refined, [40.0, 16.0]);
    assert_eq!(f.judged, [4.0, 1.6]);
    assert!((f.verified[0] - 36.0).abs() < 1e-9);
    // The project's stages: one training rollout, 3 screening and 3 eval trials.
    assert_eq!(f.rollout_episodes, f.verified[0] * 1.0);
    assert!((f.screened_episodes - f.verified[1] * 3.0).abs() < 1e-9);
    assert!((f.eval_episodes - f.verified[1] * 0.5 * 3.0).abs() < 1e-9);
    assert!((f.analysed - (f.rollout_episodes * 0.25 + f.eval_episodes * 0.5)).abs() < 1e-9);
}

#[test]
fn lines_price_endpoints_say_what_is_scripted_and_flag_the_unpriced() {
    let mut s = settings();
    let endpoint = |price: Option<Price>| {
        Some(crate::llm::RoleConfig {
            provider: crate::llm::Provider::Openai,
            model: Some("m".into()),
            price,
            ..Default::default()
        })
    };
    for r in s.roles.iter_mut() {
        r.endpoint = match (r.stage, r.role) {
            ("refined", _) => endpoint(Some(Price {
                input: 1.0,
                cached_input: None,
                output: 2.0,
            })),
            ("feelings", _) => endpoint(None),
            _ => None,
        };
    }
    let mut lines = Lines::new(&s);
    let calls = Calls {
        requests: 10.0,
        prompt: 1_000_000.0,
        completion: 500_000.0,
    };
    lines.add("refined", "refiner", Some(calls));
    lines.add("refined", "refiner", Some(calls));
    lines.add("feelings", "feeler", Some(calls));
    lines.add("tasks", "judge", Some(calls));
    let (lines, total) = lines.finish();
    let refiner = lines.iter().find(|l| l.stage == "refined").unwrap();
    assert_eq!(refiner.requests, Some(20.0));
    // 2M prompt tokens at $1 + 1M completion tokens at $2.
    assert_eq!(refiner.dollars, Some(4.0));
    let judge = lines.iter().find(|l| l.stage == "tasks").unwrap();
    assert!(judge.scripted && judge.dollars == Some(0.0) && judge.requests.is_none());
    assert!(judge.note.contains("scripted"), "{}", judge.note);
    let feeler = lines.iter().find(|l| l.stage == "feelings").unwrap();
    assert_eq!(feeler.dollars, None);
    assert!(total.unpriced);
    assert_eq!(total.dollars, 4.0);
    assert_eq!(total.requests, 30.0);
    let md = table::markdown(&Plan {
        basis: Basis::Defaults {
            output: "out".into(),
        },
        domains: vec![],
        lines,
        total,
        counts: vec![],
        notes: vec![],
        pilot: None,
    });
    assert!(
        md.contains("| tasks | judge | scripted | - | - | - | $0 (scripted) |"),
        "{md}"
    );
    assert!(md.contains("$4.00 + unpriced"), "{md}");
    assert_eq!(table::count(Some(1_234_567.4)), "1,234,567");
}
