//! Endpoint-backed roles through the real HTTP path (a loopback OpenAI-compatible server
//! started by each test): harness episodes with several tool calls in one message, a
//! malformed call and a stop token glued to text; the LLM refiner with its checks and the
//! response cache; endpoint faults during rollouts counted, nothing lost.

use crate::common::*;
use crate::openai_server::{OpenAiServer, Reply};
use std::sync::Arc;
use tracer::domain::{self, Split};
use tracer::harness::endpoint::{EndpointAgent, EndpointUser};
use tracer::harness::{MessageRole, Termination, run_episode};
use tracer::llm::{Provider, Role, RoleConfig, RoleModel, build_role};

/// The user simulator's shipped rules.
fn user_rules() -> tracer::llm::Prompt {
    tracer::llm::prompt::builtin("user").unwrap()
}

fn role(server: &OpenAiServer, retries: u32) -> RoleConfig {
    RoleConfig {
        provider: Provider::Openai,
        base_url: Some(server.base_url()),
        model: Some("test-model".into()),
        max_retries: Some(retries),
        retry_initial_ms: Some(1),
        timeout_secs: Some(5.0),
        ..Default::default()
    }
}

fn endpoint(
    server: &OpenAiServer,
    r: Role,
    cache: &std::path::Path,
) -> Arc<dyn tracer::llm::ChatModel> {
    match build_role(r, &role(server, 2), cache).unwrap() {
        RoleModel::Endpoint(m) => m,
        RoleModel::Scripted(_) => unreachable!("configured as an endpoint"),
    }
}

/// One episode (at most 20 steps) of an endpoint agent with `model` and `tools` against a
/// user on the same loopback server, on a fresh fork of `env`.
fn episode(
    env: &dyn tracer::domain::Environment,
    server: &OpenAiServer,
    model: Arc<dyn tracer::llm::ChatModel>,
    tools: &[serde_json::Value],
    cache: &std::path::Path,
    seed: u64,
    policy: &str,
) -> tracer::harness::Episode {
    let mut agent = EndpointAgent {
        model,
        tools: tools.into(),
        seed,
    };
    let mut user = EndpointUser::new(
        endpoint(server, Role::User, cache),
        &user_rules(),
        "Ask.",
        None,
        seed,
    );
    let mut fork = env.fork();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(run_episode(
        fork.as_mut(),
        policy,
        &mut agent,
        &mut user,
        20,
    ))
}

#[test]
fn an_episode_runs_every_tool_call_and_stops_on_a_glued_marker() {
    let server = OpenAiServer::start(&["test-model"]);
    let dir = temp_dir("episode");
    let cache = dir.join("cache.redb");
    let env = domain::find("airline").unwrap().generate(1, Split::Eval);
    let user_id = env.customers()[0].clone();
    let profile: serde_json::Value = serde_json::from_str(
        &env.fork()
            .invoke("get_user_details", &serde_json::json!({"user_id": user_id}))
            .text,
    )
    .unwrap();
    let reservation = profile["reservations"][0].as_str().unwrap().to_string();
    // Order of POSTs: user opens, agent calls two tools, agent answers, user stops.
    server.push(Reply::Text("Hi, what's on my reservation?".into()));
    server.push(Reply::ToolCalls(vec![
        (
            "get_user_details".into(),
            format!("{{\"user_id\": \"{user_id}\"}}"),
        ),
        (
            "get_reservation_details".into(),
            format!("{{\"reservation_id\": \"{reservation}\"}}"),
        ),
    ]));
    server.push(Reply::Text(format!(
        "Reservation {reservation} is confirmed."
    )));
    server.push(Reply::Text("Perfect, thanks!###STOP###".into()));

    let tools: Vec<serde_json::Value> = env.tool_specs().iter().map(|s| s.openai()).collect();
    let mut agent = EndpointAgent {
        model: endpoint(&server, Role::Agent, &cache),
        tools: tools.into(),
        seed: 1,
    };
    let mut user = EndpointUser::new(
        endpoint(&server, Role::User, &cache),
        &user_rules(),
        "Ask about your reservation.",
        Some("You are calm."),
        1,
    );
    let mut fork = env.fork();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ep = rt.block_on(run_episode(
        fork.as_mut(),
        "policy",
        &mut agent,
        &mut user,
        20,
    ));
    assert_eq!(ep.termination, Termination::UserStop, "{:?}", ep.error);
    let tool_msgs: Vec<_> = ep
        .messages
        .iter()
        .filter(|m| m.role == MessageRole::Tool)
        .collect();
    assert_eq!(
        tool_msgs.len(),
        2,
        "each call of the message gets its own tool message"
    );
    assert_eq!(tool_msgs[0].tool_call_id.as_deref(), Some("call_0"));
    assert_eq!(tool_msgs[1].tool_call_id.as_deref(), Some("call_1"));
    assert!(
        tool_msgs[1]
            .content
            .as_deref()
            .unwrap()
            .contains(&reservation)
    );
    assert_eq!(server.post_count(), 4);
    // The user simulator saw the emotion instruction in its system prompt, never labels.
    let requests = server.requests();
    let first = &requests.iter().find(|r| r.method == "POST").unwrap().body;
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("You are calm.")
    );

    // A malformed (truncated) tool call ends the episode as an agent error, never a crash.
    server.push(Reply::Text("Hello again.".into()));
    server.push(Reply::ToolCalls(vec![(
        "get_user_details".into(),
        "{\"user_id\": ".into(),
    )]));
    let mut agent = EndpointAgent {
        model: endpoint(&server, Role::Agent, &cache),
        tools: Vec::new().into(),
        seed: 2,
    };
    let mut user = EndpointUser::new(
        endpoint(&server, Role::User, &cache),
        &user_rules(),
        "Say hello.",
        None,
        2,
    );
    let mut fork = env.fork();
    let ep = rt.block_on(run_episode(
        fork.as_mut(),
        "policy",
        &mut agent,
        &mut user,
        20,
    ));
    assert_eq!(ep.termination, Termination::AgentError);
    assert!(ep.error.unwrap().contains("get_user_details"));
}

/// Append TOML (e.g. a `[roles.<role>]` table) to a stage config of a project copy.
fn append_config(root: &std::path::Path, stage: &str, toml: &str) {
    let cfg = root.join(format!("stages/{stage}.toml"));
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push('\n');
    text.push_str(toml);
    std::fs::write(&cfg, text).unwrap();
}

fn with_refiner(root: &std::path::Path, server: &OpenAiServer) {
    append_config(
        root,
        "refined",
        &format!(
            "[roles.refiner]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nmax_retries = 1\nretry_initial_ms = 1\n",
            server.base_url()
        ),
    );
}

#[test]
fn the_llm_refiner_is_checked_and_a_rerun_is_served_from_the_cache() {
    let server = OpenAiServer::start(&["test-model"]);
    let root = project_copy("llm-refiner");
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 20\nmax_eval = 10\n",
    )
    .unwrap();
    with_refiner(&root, &server);
    // The test model without faults answers each draft as it is: the checks pass at once.
    server.set_handler(
        crate::test_model::TestModel::new(crate::test_model::Faults::none()).handler(),
    );
    let out = temp_dir("llm-refiner-out");
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "refined", "--domain", "airline"],
    ));
    let grounded: usize = python(&format!(
        "import pyarrow.parquet as pq; print(pq.read_table({:?}).num_rows)",
        out.join("grounded/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ))
    .trim()
    .parse()
    .unwrap();
    assert!(grounded >= 25, "most of the 30 traces ground: {grounded}");
    let first = server.post_count();
    assert_eq!(first, grounded, "one request per grounded task");
    let rows = python(&format!(
        "import pyarrow.parquet as pq; t = pq.read_table({:?}).to_pylist(); print(len(t), t[0]['refiner'], {{r['refinement'] for r in t}}, t[0]['instruction'][:12])",
        out.join("refined/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    assert!(
        rows.starts_with(&format!("{grounded} test-model {{'first'}} Your name is")),
        "{rows}"
    );

    assert_ok(&tracer(
        &root,
        &out,
        &["run", "refined", "--domain", "airline", "--force"],
    ));
    assert_eq!(
        server.post_count(),
        first,
        "the re-run must be served from the cache"
    );

    // Output that breaks the checks is asked for again with the reason, then the task
    // falls back to its draft (`on_refused = "draft"`, the default): never kept as given.
    let server2 = OpenAiServer::start(&["test-model"]);
    let root2 = project_copy("llm-refiner-bad");
    std::fs::write(
        root2.join("stages/grounded.toml"),
        "max_train = 3\nmax_eval = 0\n",
    )
    .unwrap();
    with_refiner(&root2, &server2);
    for _ in 0..6 {
        server2.push(Reply::Text("You want help with something.".into()));
    }
    let out2 = temp_dir("llm-refiner-bad-out");
    assert_ok(&tracer(
        &root2,
        &out2,
        &["run", "refined", "--domain", "airline"],
    ));
    assert_eq!(server2.post_count(), 6, "each task asked twice");
    let rows = python(&format!(
        "import pyarrow.parquet as pq; t = pq.read_table({:?}).to_pylist(); print(len(t), sorted({{r['refinement'].split(':')[0] for r in t}}), any('help with something' in r['instruction'] for r in t))",
        out2.join("refined/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    assert_eq!(rows.trim(), "3 ['fallback'] False", "{rows}");
    let stats = stdout(&tracer(&root2, &out2, &["stats", "--domain", "airline"]));
    assert!(
        stats.contains("0 / 0 / 3"),
        "the funnel counts the fallbacks: {stats}"
    );
}

#[test]
fn preflight_names_the_missing_key_before_any_work() {
    let root = project_copy("preflight");
    append_config(
        &root,
        "refined",
        "[roles.refiner]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"TRACER_TEST_SURELY_UNSET_KEY\"\n",
    );
    let out = temp_dir("preflight-out");
    let o = tracer(&root, &out, &["run", "refined", "--domain", "airline"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("TRACER_TEST_SURELY_UNSET_KEY"),
        "{}",
        stderr(&o)
    );
    assert!(
        !out.join("db").exists(),
        "nothing ran before the preflight failed"
    );
}

#[test]
fn endpoint_faults_in_rollouts_are_counted_and_nothing_is_lost() {
    let server = OpenAiServer::start(&["test-model"]);
    let root = project_copy("faults");
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 12\nmax_eval = 0\n",
    )
    .unwrap();
    let cfg = root.join("stages/rollouts.toml");
    // Tolerate up to half the episodes lost to the endpoint (the default, 0, fails the
    // stage: see chaos::an_endpoint_outage_*).
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("max_steps = 50", "max_steps = 4\nmax_errored_share = 0.5");
    std::fs::write(&cfg, text).unwrap();
    append_config(
        &root,
        "rollouts",
        &format!(
            "[roles.agent]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\nmax_retries = 0\n",
            server.base_url()
        ),
    );
    let out = temp_dir("faults-out");
    assert_ok(&tracer(
        &root,
        &out,
        &["run", "tasks", "--domain", "airline"],
    ));
    for code in [500, 503, 429] {
        server.push(Reply::Status {
            code,
            retry_after: None,
            message: "injected".into(),
        });
    }
    let o = tracer(&root, &out, &["run", "trajectories", "--domain", "airline"]);
    assert_ok(&o);
    // Tolerated failures are said so, with the way to retry them.
    assert!(
        stderr(&o).contains("tracer: warning: stage 'rollouts', domain 'airline': 3 of 12 episodes errored on infrastructure and were tolerated (max_errored_share = 0.5)")
            && stderr(&o).contains("`tracer run rollouts --force` retries them"),
        "{}",
        stderr(&o)
    );
    let report = python(&format!(
        "import pyarrow.parquet as pq\nt = pq.read_table({:?}).to_pylist()\nprint(len(t), sum(1 for r in t if r['error']), sum(1 for r in t if r['termination'] == 'endpoint_error'), t[0]['agent_model'])",
        out.join("rollouts/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    assert_eq!(
        report.trim(),
        "12 3 3 test-model",
        "every task has its episode; the 3 faults are errored"
    );
    let kept = python(&format!(
        "import pyarrow.parquet as pq; print(sum(1 for r in pq.read_table({:?}).to_pylist() if r['error']))",
        out.join("trajectories/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    assert_eq!(
        kept.trim(),
        "0",
        "errored episodes never reach the training data"
    );
    // A plain rerun finds the stage fresh; --force retries exactly the errored episodes
    // (the finished ones come from the response cache).
    let asked = server.post_count();
    let o = tracer(&root, &out, &["run", "rollouts", "--domain", "airline"]);
    assert_ok(&o);
    assert_eq!(server.post_count(), asked, "a plain rerun asks nothing");
    let o = tracer(
        &root,
        &out,
        &["run", "rollouts", "--domain", "airline", "--force"],
    );
    assert_ok(&o);
    assert!(!stderr(&o).contains("tolerated"), "{}", stderr(&o));
    let seeds: std::collections::BTreeSet<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .skip(asked)
        .map(|r| r.body["seed"].to_string())
        .collect();
    assert_eq!(
        seeds.len(),
        3,
        "only the 3 errored episodes were asked again"
    );
    let errors = python(&format!(
        "import pyarrow.parquet as pq; print(sum(1 for r in pq.read_table({:?}).to_pylist() if r['error']))",
        out.join("rollouts/domain=airline/part-00000.parquet")
            .display()
            .to_string()
    ));
    assert_eq!(errors.trim(), "0");
}

#[test]
fn the_llm_grounder_only_advances_on_executed_calls_of_the_trace() {
    let server = OpenAiServer::start(&["test-model"]);
    let dir = temp_dir("llm-grounder");
    let env: Arc<dyn tracer::domain::Environment> =
        Arc::from(domain::find("airline").unwrap().generate(1, Split::Eval));
    let user_id = env.customers()[3].clone();
    let profile: serde_json::Value = serde_json::from_str(
        &env.fork()
            .invoke("get_user_details", &serde_json::json!({"user_id": user_id}))
            .text,
    )
    .unwrap();
    let reservation = profile["reservations"][0].as_str().unwrap().to_string();
    // Out of order first (refused), then an unknown id (tool error), then the right calls.
    let lookup = format!("{{\"reservation_id\": \"{reservation}\"}}");
    server.push(Reply::ToolCalls(vec![(
        "get_reservation_details".into(),
        lookup.clone(),
    )]));
    server.push(Reply::ToolCalls(vec![(
        "get_user_details".into(),
        "{\"user_id\": \"nobody\"}".into(),
    )]));
    server.push(Reply::ToolCalls(vec![(
        "get_user_details".into(),
        format!("{{\"user_id\": \"{user_id}\"}}"),
    )]));
    server.push(Reply::ToolCalls(vec![(
        "get_reservation_details".into(),
        lookup,
    )]));
    let model = endpoint(&server, Role::Grounder, &dir.join("cache.redb"));
    let intents = vec![vec![
        "get_user_details".to_string(),
        "get_reservation_details".to_string(),
    ]];
    let rt = tokio::runtime::Runtime::new().unwrap();
    let g = rt
        .block_on(tracer::grounding::llm_ground_trace(
            model,
            Arc::clone(&env),
            intents,
            user_id.clone(),
            9,
            Arc::new(tracer::llm::prompt::builtin("grounder").unwrap()),
        ))
        .expect("grounded");
    assert_eq!(g.steps.len(), 2);
    assert_eq!(g.steps[1].args["reservation_id"], reservation.as_str());
    assert_eq!(server.post_count(), 4);
    let requests = server.requests();
    let last = &requests.last().unwrap().body["messages"];
    let observations: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        observations[0].starts_with("Error: the next call must be get_user_details"),
        "{observations:?}"
    );
    assert!(
        observations[1].starts_with("Error: user not found"),
        "{observations:?}"
    );
    // Reads leave the state unchanged: the grounding's final state is the database's.
    assert_eq!(g.final_hash, env.state_hash().to_hex());
}

#[test]
fn an_endpoint_embedder_maps_feelings_and_is_cached() {
    let server = OpenAiServer::start(&["embed-model"]);
    let root = project_copy("embedder");
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 6\nmax_eval = 0\n",
    )
    .unwrap();
    std::fs::write(
        root.join("stages/emotions.toml"),
        format!("k = 10\n\n[embedder]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"embed-model\"\n", server.base_url()),
    )
    .unwrap();
    let out = temp_dir("embedder-out");
    let o = tracer(&root, &out, &["run", "emotions", "--domain", "airline"]);
    assert_ok(&o);
    assert!(
        stderr(&o).contains("6 tasks mapped with endpoint:embed-model"),
        "{}",
        stderr(&o)
    );
    let first = server.post_count();
    assert!(
        first >= 2,
        "anchors and feelings were embedded by the endpoint ({first} requests)"
    );
    let o = tracer(
        &root,
        &out,
        &["run", "emotions", "--domain", "airline", "--force"],
    );
    assert_ok(&o);
    assert_eq!(
        server.post_count(),
        first,
        "a re-run is served from the response cache"
    );
}

/// A server started without reasoning or tool-call parsers: the agent thinks in `<think>`
/// and calls tools in Hermes text, the user deliberates about `###STOP###` inside its
/// thinking before it is done, then stops as a model writes it (`###stop###.`). The
/// episode runs the text calls, keeps both roles' thinking out of what is said, and ends
/// on the real stop; a second episode outgrows the agent's context window and ends as
/// `context_exceeded` after one request.
#[test]
fn an_episode_against_a_server_without_parsers() {
    let server = OpenAiServer::start(&["test-model"]);
    let dir = temp_dir("no-parsers");
    let cache = dir.join("cache.redb");
    let env = domain::find("airline").unwrap().generate(1, Split::Eval);
    let user_id = env.customers()[0].clone();
    server.push(Reply::Text(
        "<think>I should not say ###STOP### yet.</think>Hi, can you look me up?".into(),
    ));
    server.push(Reply::Text(format!(
        "<think>Identify the user first.</think>\n<tool_call>\n{{\"name\": \"get_user_details\", \"arguments\": {{\"user_id\": \"{user_id}\"}}}}\n</tool_call>"
    )));
    server.push(Reply::Text(
        "<think>Found them.</think>I found your profile.".into(),
    ));
    server.push(Reply::Text(
        "<think>All done.</think>Great, thanks. ###stop###.".into(),
    ));
    let tools: Vec<serde_json::Value> = env.tool_specs().iter().map(|s| s.openai()).collect();
    let agent = endpoint(&server, Role::Agent, &cache);
    let ep = episode(env.as_ref(), &server, agent, &tools, &cache, 3, "policy");
    assert_eq!(ep.termination, Termination::UserStop, "{:?}", ep.error);
    let call = ep
        .messages
        .iter()
        .find(|m| !m.tool_calls.is_empty())
        .expect("the text call was read");
    assert_eq!(call.tool_calls[0].name, "get_user_details");
    assert_eq!(
        call.reasoning_content.as_deref(),
        Some("Identify the user first.")
    );
    let observation = ep
        .messages
        .iter()
        .find(|m| m.role == MessageRole::Tool)
        .unwrap();
    let observed = observation.content.as_deref().unwrap();
    assert!(observed.contains("reservations"), "{observed}");
    let said: Vec<&str> = ep
        .messages
        .iter()
        .filter_map(|m| m.content.as_deref())
        .collect();
    assert!(
        said.iter().all(|t| !t.contains("<think>")),
        "thinking never reaches the transcript's text: {said:?}"
    );
    assert_eq!(server.post_count(), 4);

    // The agent's window is too small for the conversation: the episode ends on its own
    // reason after the user's opening, with no agent request sent.
    let small = RoleConfig {
        context_window: Some(300),
        ..role(&server, 2)
    };
    let RoleModel::Endpoint(model) = build_role(Role::Agent, &small, &cache).unwrap() else {
        unreachable!()
    };
    server.push(Reply::Text("Hello, I need help with a booking.".into()));
    let ep = episode(env.as_ref(), &server, model, &tools, &cache, 4, "policy");
    assert_eq!(
        ep.termination,
        Termination::ContextExceeded,
        "{:?}",
        ep.error
    );
    assert!(ep.error.as_deref().unwrap().contains("context window"));
    assert_eq!(server.post_count(), 5, "only the user's opening was sent");
}

/// A server that refuses `tools` (llama-server without `--jinja`): with `tools_in_prompt`
/// the agent's requests carry no `tools`, the system prompt lists every tool in the Hermes
/// format, the model's `<tool_call>` text comes back as a call that runs, the call and its
/// result go back as text (no `tool_calls`, no `tool` role), and the episode completes.
#[test]
fn an_agent_with_tools_in_the_prompt_runs_against_a_server_that_refuses_tools() {
    let server = OpenAiServer::start(&["test-model"]);
    server.refuse_tools();
    let dir = temp_dir("tools-in-prompt");
    let cache = dir.join("cache.redb");
    let env = domain::find("airline").unwrap().generate(1, Split::Eval);
    let user_id = env.customers()[0].clone();
    server.push(Reply::Text("Hi, can you look me up?".into()));
    server.push(Reply::Text(format!(
        "Sure.\n<tool_call>\n{{\"name\": \"get_user_details\", \"arguments\": {{\"user_id\": \"{user_id}\"}}}}\n</tool_call>"
    )));
    server.push(Reply::Text("I found your profile.".into()));
    server.push(Reply::Text("Great, thanks. ###STOP###".into()));
    let tools: Vec<serde_json::Value> = env.tool_specs().iter().map(|s| s.openai()).collect();
    let in_prompt = RoleConfig {
        tools_in_prompt: true,
        ..role(&server, 0)
    };
    let RoleModel::Endpoint(model) = build_role(Role::Agent, &in_prompt, &cache).unwrap() else {
        unreachable!()
    };
    let ep = episode(
        env.as_ref(),
        &server,
        model,
        &tools,
        &cache,
        5,
        "Airline policy.",
    );
    assert_eq!(ep.termination, Termination::UserStop, "{:?}", ep.error);
    let call = ep
        .messages
        .iter()
        .find(|m| !m.tool_calls.is_empty())
        .expect("the text call was read as a call");
    assert_eq!(call.tool_calls[0].name, "get_user_details");
    assert_eq!(call.content.as_deref(), Some("Sure."));
    let observed = ep
        .messages
        .iter()
        .find(|m| m.role == MessageRole::Tool)
        .and_then(|m| m.content.clone())
        .unwrap();
    assert!(observed.contains("reservations"), "{observed}");
    assert_eq!(server.post_count(), 4, "nothing was refused or retried");

    // The agent's two requests (POSTs 2 and 3): no tools, the tools in the system prompt.
    let posts = server.posts();
    for agent_post in [&posts[1], &posts[2]] {
        let body = &agent_post.body;
        assert!(body.get("tools").is_none(), "{body}");
        assert!(body.get("tool_choice").is_none(), "{body}");
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.starts_with("Airline policy.\n\n# Tools"), "{system}");
        for tool in &tools {
            let listed = serde_json::to_string(tool).unwrap();
            assert!(system.contains(&listed), "{listed} not in the prompt");
        }
        assert!(
            system.contains("<tool_call></tool_call> XML tags"),
            "{system}"
        );
    }
    // The second carries the call as the model wrote it and the result as user text.
    let messages = posts[2].body["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none()),
        "{messages:?}"
    );
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "assistant");
    let said = messages[n - 2]["content"].as_str().unwrap();
    assert!(
        said.starts_with("Sure.\n<tool_call>\n{\"name\": \"get_user_details\"")
            && said.contains(&user_id),
        "{said}"
    );
    assert_eq!(messages[n - 1]["role"], "user");
    let result = messages[n - 1]["content"].as_str().unwrap();
    assert!(
        result.starts_with("<tool_response>\n") && result.contains("reservations"),
        "{result}"
    );

    // The same agent without the option: the server refuses its first request.
    server.push(Reply::Text("Hello, I need help.".into()));
    let agent = endpoint(&server, Role::Agent, &cache);
    let ep = episode(
        env.as_ref(),
        &server,
        agent,
        &tools,
        &cache,
        6,
        "Airline policy.",
    );
    assert_ne!(ep.termination, Termination::UserStop);
    assert!(
        ep.error.as_deref().unwrap_or("").contains("--jinja"),
        "{:?}",
        ep.error
    );
}
