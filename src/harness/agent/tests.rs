//! Oracle agent tests: which values a result holds, answers told in turn and by their
//! field, and the acknowledgement of a voiced feeling.

use super::{ErrorRates, OracleAgent, acknowledge};

#[test]
fn a_value_only_inside_another_is_not_held() {
    let order: serde_json::Value = serde_json::from_str(
        r#"{"status": "delivered (exchange requested)", "total": 12.5, "items": [{"id": "PIXQ9Q1"}]}"#,
    )
    .unwrap();
    assert!(super::turns::holds_value(
        &order,
        "delivered (exchange requested)"
    ));
    assert!(super::turns::holds_value(&order, "12.5"));
    assert!(!super::turns::holds_value(&order, "delivered"));
    assert!(!super::turns::holds_value(&order, "3"));
    let by_name: serde_json::Value = serde_json::from_str(r#"{"Harbor Hawks": "CLB001"}"#).unwrap();
    assert!(super::turns::holds_value(&by_name, "Harbor Hawks"));
}
use crate::artifact::TaskRecord;
use crate::harness::{Agent, ChatMessage, MessageRole};
use serde_json::json;

fn agent_for(actions: &str, intents: Vec<i32>, outputs: &[&str]) -> OracleAgent {
    use crate::artifact::JsonText;
    let actions: Vec<crate::task::Action> = JsonText::from_json(actions).unwrap();
    let task = TaskRecord {
        task_id: "t".into(),
        domain: "telecom".into(),
        user_id: "c1".into(),
        // Every action asked for: the customer's turns are the intents, two asks a turn.
        requests: vec![Some("ask".to_string()); actions.len()],
        actions,
        action_intents: intents,
        outputs: outputs.iter().map(|o| o.to_string()).collect(),
        ..TaskRecord::default()
    };
    let none = ErrorRates {
        skip_confirmation: 0.0,
        redundant_question: 0.0,
        wrong_argument: 0.0,
        premature_transfer: 0.0,
    };
    let discover = vec![Vec::new(); task.actions.len()];
    let mut agent = OracleAgent::new(&task, &none, None, None, discover, 1, 0);
    agent.asked_identity = true;
    agent.authenticated = true;
    agent
}

/// Play `results` as the answers to the agent's calls (saying yes to a confirmation
/// while results remain); what it says next.
fn said_after(agent: &mut OracleAgent, results: &[&str]) -> String {
    play(agent, results).0
}

/// [`said_after`], with the names of the tools the agent called, in order.
fn play(agent: &mut OracleAgent, results: &[&str]) -> (String, Vec<String>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut transcript = vec![ChatMessage::text(MessageRole::User, "Please help.")];
    let mut results = results.iter();
    let mut calls = Vec::new();
    loop {
        let (m, _) = rt.block_on(agent.respond(&transcript)).unwrap();
        let content = m.content.clone().unwrap_or_default();
        if let Some(call) = m.tool_calls.first().cloned() {
            let result = results.next().expect("a result for each call");
            calls.push(call.name.clone());
            transcript.push(m);
            transcript.push(ChatMessage::tool(call.id, call.name, *result));
        } else if content.contains("(yes/no)") && results.len() > 0 {
            transcript.push(m);
            transcript.push(ChatMessage::text(MessageRole::User, "Yes."));
        } else {
            return (content, calls);
        }
    }
}

/// A lookup before the first action does not hide the first action's result: a value
/// the customer asked to hear there is told when that request is done, by its field.
#[test]
fn a_lookup_before_the_first_action_leaves_its_answer_told_in_turn() {
    let mut agent = agent_for(
        r#"[{"name":"get_service_details","kwargs":{"service_id":"tv_plus"}},{"name":"get_billing_details","kwargs":{"customer_id":"c1"}}]"#,
        vec![0, 1],
        &["60.0"],
    );
    agent.discover[0] = vec![("get_services".to_string(), json!({}))];
    let said = said_after(
        &mut agent,
        &[
            r#"{"tv_plus": {"service_id": "tv_plus", "name": "TV Plus", "price": 60.0}}"#,
            r#"{"service_id": "tv_plus", "name": "TV Plus", "price": 60.0}"#,
        ],
    );
    assert!(said.contains("The price is 60.0"), "{said}");
}

/// A value a change's result only echoes inside a longer text is told from the read
/// that shows it, by that read's label, not named after the change.
#[test]
fn a_value_a_change_echoes_is_told_from_the_read() {
    let mut agent = agent_for(
        r#"[{"name":"modify_support_ticket","kwargs":{"ticket_id":"T1","status":"open"}},{"name":"get_support_ticket_details","kwargs":{"ticket_id":"T1"}}]"#,
        vec![0, 0],
        &["open"],
    );
    let said = said_after(
        &mut agent,
        &[
            r#"{"note": "Modified: it is open now"}"#,
            r#"{"ticket_id": "T1", "status": "open"}"#,
        ],
    );
    assert!(said.contains("The status is open"), "{said}");
}

/// A value read before a change in the same request is told before the change is
/// proposed, not after it (when it would no longer be true).
#[test]
fn a_value_read_before_a_change_is_told_with_its_confirmation() {
    let mut agent = agent_for(
        r#"[{"name":"get_support_ticket_details","kwargs":{"ticket_id":"T1"}},{"name":"modify_support_ticket","kwargs":{"ticket_id":"T1","status":"open"}}]"#,
        vec![0, 0],
        &["closed"],
    );
    let said = said_after(&mut agent, &[r#"{"ticket_id": "T1", "status": "closed"}"#]);
    assert!(said.starts_with("The status is closed. "), "{said}");
    assert!(said.contains("(yes/no)"), "{said}");
}

/// A value the customer asked to hear that no result showed (a film's title behind a
/// movie id) is not said: the agent tells what its tools returned, nothing else.
#[test]
fn a_value_no_result_showed_is_not_told() {
    let mut agent = agent_for(
        r#"[{"name":"list_shows","kwargs":{"theater_id":"T1","date":"24-07-12"}}]"#,
        vec![0],
        &["Velvet Echoes", "Midnight Avenue"],
    );
    let said = said_after(
        &mut agent,
        &[
            r#"[{"show_id": "S1", "movie_id": "M1", "title": "Velvet Echoes"}, {"show_id": "S2", "movie_id": "M2"}]"#,
        ],
    );
    assert!(said.contains("Velvet Echoes"), "{said}");
    assert!(!said.contains("Midnight Avenue"), "{said}");
}

/// One field name shown by two tools' results is said with each tool's object, not as
/// one list ("the status values are confirmed and scheduled"); so is a label another one
/// ends with (the show status, named by its tool, whose result is a bare word).
#[test]
fn a_label_two_tools_share_is_said_with_each_object() {
    let show_reads = [
        (
            "get_show_details",
            r#"{"show_id": "S1", "status": "scheduled"}"#,
        ),
        ("get_show_status", "scheduled"),
    ];
    for (show_tool, show_result) in show_reads {
        let actions = format!(
            r#"[{{"name":"get_booking_details","kwargs":{{"booking_id":"B1"}}}},{{"name":"{show_tool}","kwargs":{{"show_id":"S1"}}}}]"#
        );
        let mut agent = agent_for(&actions, vec![0, 0], &["confirmed", "scheduled"]);
        let said = said_after(
            &mut agent,
            &[
                r#"{"booking_id": "B1", "status": "confirmed"}"#,
                show_result,
            ],
        );
        assert!(
            said.contains("booking status is confirmed; and the show status is scheduled"),
            "{show_tool}: {said}"
        );
    }
}

/// A reference lookup that repeats one made since the last change (on the way to an
/// earlier action) is answered from that result, not called again; after a change it is
/// called again.
#[test]
fn a_lookup_already_made_since_the_last_change_is_not_made_twice() {
    let actions = r#"[{"name":"get_service_details","kwargs":{"service_id":"tv_plus"}},{"name":"get_billing_details","kwargs":{"customer_id":"c1"}}]"#;
    let mut agent = agent_for(actions, vec![0, 0], &["42.0"]);
    agent.discover[0] = vec![(
        "get_billing_details".to_string(),
        json!({"customer_id": "c1"}),
    )];
    // Two results only: a third call would find none and fail the test.
    let said = said_after(
        &mut agent,
        &[
            r#"{"customer_id": "c1", "balance": 42.0}"#,
            r#"{"service_id": "tv_plus", "name": "TV Plus"}"#,
        ],
    );
    assert!(said.contains("42.0"), "{said}");

    let actions = r#"[{"name":"get_billing_details","kwargs":{"customer_id":"c1"}},{"name":"modify_support_ticket","kwargs":{"ticket_id":"T1","status":"open"}},{"name":"get_billing_details","kwargs":{"customer_id":"c1"}}]"#;
    let mut agent = agent_for(actions, vec![0, 0, 0], &[]);
    // The three in one customer turn (as a customer who asks for them at once).
    agent.turns = vec![0, 0, 0];
    let billing = r#"{"customer_id": "c1", "balance": 42.0}"#;
    let ticket = r#"{"ticket_id": "T1", "status": "open"}"#;
    let (_, calls) = play(&mut agent, &[billing, ticket, billing]);
    assert_eq!(
        calls,
        [
            "get_billing_details",
            "modify_support_ticket",
            "get_billing_details"
        ],
        "a change makes the lookup worth making again"
    );
}

#[test]
fn the_agent_acknowledges_a_voiced_feeling_only() {
    assert!(acknowledge("Hi. I'm worried about getting this wrong.").is_some());
    assert!(acknowledge("I feel let down by how this turned out.").is_some());
    assert!(acknowledge("I want to cancel order #W1.").is_none());
}

/// The agent acts on the requests the customer has said: with four asked reads in one
/// intent, it makes the first two and hands back before the next two are said.
#[test]
fn the_agent_reports_after_each_turn_of_requests() {
    let actions = r#"[{"name":"get_billing_details","kwargs":{"customer_id":"c1"}},{"name":"get_service_details","kwargs":{"service_id":"tv_plus"}},{"name":"get_service_details","kwargs":{"service_id":"radio"}},{"name":"get_support_ticket_details","kwargs":{"ticket_id":"T1"}}]"#;
    let mut agent = agent_for(actions, vec![0; 4], &["42.0"]);
    let (said, calls) = play(
        &mut agent,
        &[
            r#"{"balance": 42.0}"#,
            r#"{"service_id": "tv_plus"}"#,
            "{}",
            "{}",
        ],
    );
    assert_eq!(calls, ["get_billing_details", "get_service_details"]);
    assert!(
        said.contains("42.0") && said.contains("anything else"),
        "{said}"
    );
}
