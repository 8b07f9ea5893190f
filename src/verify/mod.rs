//! Task verification (the paper's stage 6): a task must replay deterministically to its
//! reference state, obey the domain's policy at every call, name no internal id a customer
//! could not know, and state (or let the agent look up) every value its calls need. What
//! only a reader could settle comes back as `inconclusive`, for the judge role.
//!
//! The rejection kinds, replay and the whole check are here; information sufficiency and
//! the internal-id rule are `information.rs`, the quality gates `gates.rs`.
//!
//! Architecture invariant: knows domains through `Environment` and tasks through
//! `artifact::TaskRecord`; nothing of stages, LLMs or the pipeline.

mod gates;
mod information;

use crate::artifact::TaskRecord;
use crate::domain::Environment;

use crate::quality::coherence::{Step, replay_step};
pub use gates::{Gates, MAX_ACTIONS, check_quality, check_quality_on};
pub use information::{
    Gaps, check_information, check_no_internal_ids, information_gaps, reference_outputs,
};

/// The kinds of verification failure (the `reason_kind` column of `tasks/_rejects.parquet`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectKind {
    /// A JSON column that does not decode, or a task without an instruction.
    Malformed,
    /// A reference action fails on replay, or the final state is not the reference's.
    Replay,
    /// A reference action breaks a named policy rule (`Rejection::rule`).
    Policy,
    /// The instruction prints an internal id.
    ForbiddenId,
    /// The customer could not supply an argument (identity, an unresolved internal id).
    Information,
    /// Only a reader can tell whether a value is stated (handed to the judge).
    Inconclusive,
    /// The judge rejected an inconclusive task.
    Judge,
    /// The judge's endpoint failed (after its retries), or answered unusably twice: errored,
    /// not the task's fault (the stage fails above its tolerated share; a rerun asks again).
    EndpointError,
    /// The composition repeats, overwrites or undoes its own writes, cancels what it
    /// created or uses what it cancelled (`rule`: the kind, `quality::coherence`).
    Incoherent,
    /// The instruction names an id the customer cannot know or an attribute dump (`rule`:
    /// the kind, `quality::knowable`).
    Unknowable,
    /// A mechanical language error (`rule`: the rule, `quality::language`).
    Language,
    /// The customer asks to hear something the task's `outputs` do not carry.
    Unanswered,
    /// More reference actions than `max_actions`.
    TooLong,
    /// A model-written instruction carries more than the instruction (`rule`: the kind,
    /// `quality::form`: a preamble, Markdown, the customer's own voice, ...).
    Form,
}

impl RejectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RejectKind::Malformed => "malformed",
            RejectKind::Replay => "replay",
            RejectKind::Policy => "policy",
            RejectKind::ForbiddenId => "forbidden_id",
            RejectKind::Information => "information",
            RejectKind::Inconclusive => "inconclusive",
            RejectKind::Judge => "judge",
            RejectKind::EndpointError => "errored",
            RejectKind::Incoherent => "incoherent",
            RejectKind::Unknowable => "unknowable",
            RejectKind::Language => "language",
            RejectKind::Unanswered => "unanswered",
            RejectKind::TooLong => "too_long",
            RejectKind::Form => "form",
        }
    }
}

/// Why a task failed verification.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    pub kind: RejectKind,
    /// The policy rule broken, for `RejectKind::Policy`.
    pub rule: Option<&'static str>,
    pub reason: String,
}

pub fn reject(kind: RejectKind, reason: impl Into<String>) -> Rejection {
    Rejection {
        kind,
        rule: None,
        reason: reason.into(),
    }
}

/// Replay with policy checks: the one replay of a task in verification. Returns each
/// call as a step (its output, the state hashes around it, what a read tells), which the
/// quality gates and the information check read.
pub fn replay_checked(env: &dyn Environment, task: &TaskRecord) -> Result<Vec<Step>, Rejection> {
    let specs = env.tool_specs();
    let mut state = env.fork();
    let mut steps = Vec::with_capacity(task.actions.len());
    for (
        j,
        crate::task::Action {
            name: tool,
            kwargs: args,
        },
    ) in task.actions.iter().enumerate()
    {
        let failed = |text: String| {
            reject(
                RejectKind::Replay,
                format!("action {j} ({tool}) failed on replay: {text}"),
            )
        };
        // Policy is judged on the state before the call; a call the tool itself refuses is a
        // replay failure whatever the policy says.
        let policy = state.check_policy(tool, args);
        let Some(spec) = specs.iter().find(|s| s.name == *tool) else {
            return Err(failed(state.invoke(tool, args).text));
        };
        let step = replay_step(state.as_mut(), spec, task, j).map_err(failed)?;
        policy.map_err(|violation| Rejection {
            kind: RejectKind::Policy,
            rule: Some(violation.rule),
            reason: format!("action {j} ({tool}) breaks the policy: {violation}"),
        })?;
        steps.push(step);
    }
    let hash = state.state_hash().to_hex();
    if hash != task.reference_hash {
        return Err(reject(
            RejectKind::Replay,
            format!(
                "final state {hash} differs from the reference {}",
                task.reference_hash
            ),
        ));
    }
    Ok(steps)
}

/// Verify one task with the default gates (see [`verify_task_with`]).
pub fn verify_task(env: &dyn Environment, task: &TaskRecord) -> Result<(), Rejection> {
    verify_task_with(env, task, &Gates::default())
}

/// Verify one task: replay + policy, id rule, the quality gates, information. A task whose
/// only gap is a value not stated verbatim comes back as kind `inconclusive`, for the judge.
pub fn verify_task_with(
    env: &dyn Environment,
    task: &TaskRecord,
    gates: &Gates,
) -> Result<(), Rejection> {
    let steps = replay_checked(env, task)?;
    let outputs: Vec<String> = steps.iter().map(|s| s.output.clone()).collect();
    let instruction = task
        .instruction
        .as_deref()
        .ok_or_else(|| reject(RejectKind::Malformed, "task has no instruction"))?;
    check_no_internal_ids(env, task, instruction)
        .map_err(|e| reject(RejectKind::ForbiddenId, e))?;
    check_quality_on(env, task, instruction, gates, &steps)?;
    match information_gaps(env, task, &task.user_facts, instruction, &outputs) {
        Gaps::None => Ok(()),
        Gaps::Hard(e) => Err(reject(RejectKind::Information, e)),
        Gaps::Inconclusive(e) => Err(reject(RejectKind::Inconclusive, e)),
    }
}

/// Every check a task will meet later that depends on its instruction, applied to a
/// model-written instruction where it arrives (the `refined` stage asks again with the
/// reason): its form and the draft's values (`quality::form`), no internal id, the quality
/// gates, and information sufficiency. A gap only a reader can settle passes: verification
/// hands it to the judge.
pub fn check_instruction(
    env: &dyn Environment,
    task: &TaskRecord,
    instruction: &str,
    gates: &Gates,
    draft: &str,
) -> Result<(), Rejection> {
    if let Some(f) = crate::quality::form::check(instruction, draft)
        .into_iter()
        .next()
    {
        return Err(Rejection {
            kind: RejectKind::Form,
            rule: Some(f.rule),
            reason: format!("form: {f}"),
        });
    }
    check_no_internal_ids(env, task, instruction)
        .map_err(|e| reject(RejectKind::ForbiddenId, e))?;
    let with = TaskRecord {
        instruction: Some(instruction.to_string()),
        ..task.clone()
    };
    let steps = crate::quality::coherence::replay_steps(env, task);
    check_quality_on(env, &with, instruction, gates, &steps)?;
    // Every call replayed: its outputs are the steps'; otherwise each call's output,
    // errors included, as the agent would see them.
    let outputs = if steps.len() == task.actions.len() {
        steps.into_iter().map(|s| s.output).collect()
    } else {
        reference_outputs(env, task)
    };
    match information_gaps(env, task, &task.user_facts, instruction, &outputs) {
        Gaps::Hard(e) => Err(reject(RejectKind::Information, e)),
        Gaps::None | Gaps::Inconclusive(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifact::TraceRecord;
    use crate::domain::Split;
    use crate::grounding::{SearchLimits, ground_trace, task_record};
    use serde_json::Value;

    fn cfg() -> SearchLimits {
        SearchLimits::default()
    }

    fn grounded(env: &dyn Environment, intents: &[&[&str]]) -> TaskRecord {
        let intents: Vec<Vec<String>> = intents
            .iter()
            .map(|w| w.iter().map(|s| s.to_string()).collect())
            .collect();
        let g = ground_trace(env, "airline", "t1", &intents, 5, &cfg()).expect("groundable");
        let trace = TraceRecord {
            trace_id: "t1".into(),
            domain: "airline".into(),
            split: crate::split::Split::Train,
            sample_index: 0,
            n_intents: intents.len() as i32,
            length: intents.iter().map(Vec::len).sum::<usize>() as i32,
            intents,
        };
        task_record(&trace, &g)
    }

    fn airline() -> Box<dyn Environment> {
        crate::domain::find("airline")
            .unwrap()
            .generate(3, Split::Eval)
    }

    /// An environment that counts how often it is forked (each replay forks it once).
    struct CountingForks {
        inner: Box<dyn Environment>,
        forks: std::sync::atomic::AtomicUsize,
    }

    impl crate::domain::Hooks for CountingForks {
        fn tool_specs(&self) -> Vec<&'static crate::domain::ToolSpec> {
            self.inner.tool_specs()
        }
        fn customers(&self) -> Vec<String> {
            self.inner.customers()
        }
        fn propose_calls(
            &self,
            tool: &str,
            ctx: &crate::domain::GroundingContext,
            rng: &mut rand_chacha::ChaCha8Rng,
        ) -> Vec<Value> {
            self.inner.propose_calls(tool, ctx, rng)
        }
        fn check_policy(
            &self,
            tool: &str,
            args: &Value,
        ) -> Result<(), crate::domain::PolicyViolation> {
            self.inner.check_policy(tool, args)
        }
        fn user_facts(&self, user_id: &str) -> Vec<crate::domain::UserFact> {
            self.inner.user_facts(user_id)
        }
        fn describe_request(&self, tool: &str, args: &Value, output: &str) -> Option<String> {
            self.inner.describe_request(tool, args, output)
        }
        fn customer_records(&self, user_id: &str) -> Vec<String> {
            self.inner.customer_records(user_id)
        }
        fn internal_ids(&self, tool: &str, args: &Value) -> Vec<String> {
            self.inner.internal_ids(tool, args)
        }
        fn required_outputs(&self, tool: &str, args: &Value, output: &str) -> Vec<String> {
            self.inner.required_outputs(tool, args, output)
        }
        fn internal_id_fields(&self) -> &'static [&'static str] {
            self.inner.internal_id_fields()
        }
    }

    impl Environment for CountingForks {
        fn fork(&self) -> Box<dyn Environment> {
            self.forks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.inner.fork()
        }
        fn invoke(&mut self, tool: &str, args: &Value) -> crate::domain::ToolOutput {
            self.inner.invoke(tool, args)
        }
        fn state_hash(&self) -> crate::domain::StateHash {
            self.inner.state_hash()
        }
        fn tables(&self) -> Vec<(&'static str, Vec<(String, Value)>)> {
            self.inner.tables()
        }
        fn to_tau_bench(&self) -> std::collections::BTreeMap<String, Value> {
            self.inner.to_tau_bench()
        }
    }

    #[test]
    fn verification_replays_a_task_once() {
        let env = airline();
        let mut task = grounded(
            env.as_ref(),
            &[&["get_user_details", "get_reservation_details"]],
        );
        task.instruction = Some("You want to look at your reservation.".into());
        let counting = CountingForks {
            inner: env,
            forks: Default::default(),
        };
        // The verdict comes from the gates or after them (where the checks used to replay
        // again), and every check read the one replay.
        let verdict = verify_task(&counting, &task);
        let early = [
            RejectKind::Replay,
            RejectKind::Policy,
            RejectKind::ForbiddenId,
        ];
        assert!(
            verdict
                .as_ref()
                .map_or_else(|r| !early.contains(&r.kind), |()| true),
            "{:?}",
            verdict.err().map(|r| r.reason)
        );
        assert_eq!(counting.forks.load(std::sync::atomic::Ordering::SeqCst), 1);
        let _ = crate::quality::measure_task(&counting, &task);
        assert_eq!(counting.forks.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn multi_intent_traces_ground_for_one_customer_and_replay() {
        let env = airline();
        let task = grounded(
            env.as_ref(),
            &[
                &["get_user_details", "get_reservation_details"],
                &["search_direct_flight", "book_reservation"],
            ],
        );
        let actions = task.actions.clone();
        assert_eq!(actions.len(), 4);
        assert_eq!(task.action_intents, vec![0, 0, 1, 1]);
        assert_eq!(actions[0].kwargs["user_id"], task.user_id);
        assert_eq!(
            actions[3].kwargs["user_id"], task.user_id,
            "the booking is for the same customer"
        );
        assert!(replay_checked(env.as_ref(), &task).is_ok());
    }

    #[test]
    fn each_verification_rule_rejects_a_crafted_violation() {
        let env = airline();
        let mut task = grounded(
            env.as_ref(),
            &[&["get_reservation_details", "cancel_reservation"]],
        );
        let actions = task.actions.clone();
        let rid = actions[1].kwargs["reservation_id"]
            .as_str()
            .unwrap()
            .to_string();

        // Replay: a changed reference hash, and an action on a reservation that does not exist.
        let mut wrong_hash = task.clone();
        wrong_hash.reference_hash = "0".repeat(32);
        assert_eq!(
            replay_checked(env.as_ref(), &wrong_hash).unwrap_err().kind,
            RejectKind::Replay
        );
        let mut missing = task.clone();
        for a in &mut missing.actions {
            if a.kwargs.get("reservation_id") == Some(&Value::from(rid.as_str())) {
                a.kwargs["reservation_id"] = "NOSUCH".into();
            }
        }
        assert_eq!(
            replay_checked(env.as_ref(), &missing).unwrap_err().kind,
            RejectKind::Replay
        );

        // Policy: cancel a reservation the policy does not allow to be cancelled (the tool
        // itself would accept it).
        let blocked = env
            .customers()
            .iter()
            .flat_map(|u| {
                let out = env
                    .fork()
                    .invoke("get_user_details", &serde_json::json!({"user_id": u}));
                let v: Value = serde_json::from_str(&out.text).unwrap_or_default();
                v["reservations"].as_array().cloned().unwrap_or_default()
            })
            .filter_map(|r| r.as_str().map(str::to_string))
            .find(|r| {
                let args = serde_json::json!({"reservation_id": r});
                env.check_policy("cancel_reservation", &args).is_err()
                    && !env.fork().invoke("cancel_reservation", &args).is_error
            })
            .expect("some reservation is not cancellable under the policy");
        let mut breach = task.clone();
        breach.actions = vec![crate::task::Action {
            name: "cancel_reservation".into(),
            kwargs: serde_json::json!({"reservation_id": blocked}),
        }];
        let mut after = env.fork();
        after.invoke(
            "cancel_reservation",
            &serde_json::json!({"reservation_id": blocked}),
        );
        breach.reference_hash = after.state_hash().to_hex();
        let breached = replay_checked(env.as_ref(), &breach).unwrap_err();
        assert_eq!(breached.kind, RejectKind::Policy);
        // The rejection names the rule the domain's policy check reports.
        let rule = env
            .check_policy(
                "cancel_reservation",
                &serde_json::json!({"reservation_id": blocked}),
            )
            .unwrap_err()
            .rule;
        assert_eq!(breached.rule, Some(rule));
        assert!(!rule.is_empty());

        // Information: an instruction that never names the reservation is inconclusive, and
        // the scripted judge rejects it; one that prints an internal id breaks the id rule.
        task.instruction = Some("You want to cancel a trip. Your user id is someone.".into());
        let r = verify_task(env.as_ref(), &task).unwrap_err();
        assert!(
            matches!(r.kind, RejectKind::Inconclusive | RejectKind::Information),
            "{r:?}"
        );
        assert!(
            r.reason.contains("reservation_id") || r.reason.contains("authenticates"),
            "{r:?}"
        );
    }

    /// `task` with these actions and the reference hash they replay to.
    fn with_actions(env: &dyn Environment, task: &TaskRecord, actions: Value) -> TaskRecord {
        let mut state = env.fork();
        for a in actions.as_array().unwrap() {
            let out = state.invoke(a["name"].as_str().unwrap(), &a["kwargs"]);
            assert!(!out.is_error, "{}", out.text);
        }
        let n = actions.as_array().unwrap().len();
        TaskRecord {
            actions: serde_json::from_value(actions).unwrap(),
            action_intents: vec![0; n],
            requests: vec![None; n],
            reference_hash: state.state_hash().to_hex(),
            ..task.clone()
        }
    }

    #[test]
    fn a_change_of_mind_is_kept_only_when_stated_and_only_when_allowed() {
        let env = crate::domain::find("bank")
            .unwrap()
            .generate(3, Split::Eval);
        let intents = vec![vec!["freeze_card".to_string(), "unfreeze_card".to_string()]];
        let allowed = SearchLimits {
            change_of_mind: 1.0,
            ..cfg()
        };
        let never = SearchLimits {
            change_of_mind: 0.0,
            ..cfg()
        };
        let gates = Gates::default();
        let mut changed = 0;
        for k in 0..8 {
            let id = format!("t{k}");
            let Ok(g) = ground_trace(env.as_ref(), "bank", &id, &intents, 5, &allowed) else {
                continue;
            };
            let requests: Vec<&str> = g
                .steps
                .iter()
                .filter_map(|s| s.request.as_deref())
                .collect();
            let said = requests.join(" ");
            let trace = TraceRecord {
                trace_id: id.clone(),
                domain: "bank".into(),
                split: crate::split::Split::Train,
                sample_index: 0,
                n_intents: 1,
                length: 2,
                intents: intents.clone(),
            };
            let task = task_record(&trace, &g);
            if !crate::quality::coherence::states_change_of_mind(&said) {
                // Another card was free to unfreeze: a coherent task, no change of mind.
                assert!(
                    check_quality(env.as_ref(), &task, &said, &gates).is_ok(),
                    "{said}"
                );
                continue;
            }
            changed += 1;
            assert!(
                check_quality(env.as_ref(), &task, &said, &gates).is_ok(),
                "{said}"
            );
            // The same actions without the statement are an accident: incoherent/undo.
            let plain = "You want your card frozen. Then you want it unfrozen.";
            let r = check_quality(env.as_ref(), &task, plain, &gates).unwrap_err();
            assert_eq!(
                (r.kind, r.rule),
                (RejectKind::Incoherent, Some("undo")),
                "{r:?}"
            );
            // Never allowed: the search does not keep it.
            if let Ok(g) = ground_trace(env.as_ref(), "bank", &id, &intents, 5, &never) {
                let said: Vec<&str> = g
                    .steps
                    .iter()
                    .filter_map(|s| s.request.as_deref())
                    .collect();
                assert!(!crate::quality::coherence::states_change_of_mind(
                    &said.join(" ")
                ));
            }
        }
        assert!(changed > 0, "no trace grounded as a change of mind");
    }

    #[test]
    fn the_quality_gates_reject_crafted_tasks_with_their_rule() {
        let env = airline();
        let mut task = grounded(
            env.as_ref(),
            &[&["get_reservation_details", "cancel_reservation"]],
        );
        task.instruction = Some("You want to cancel a trip.".into());
        let actions = task.actions.clone();
        let rid = actions[1].kwargs["reservation_id"]
            .as_str()
            .unwrap()
            .to_string();
        let gates = Gates::default();
        // Read after cancelling: incoherent/use_after_cancel.
        let after = with_actions(
            env.as_ref(),
            &task,
            serde_json::json!([
                {"name": "cancel_reservation", "kwargs": {"reservation_id": rid}},
                {"name": "get_reservation_details", "kwargs": {"reservation_id": rid}},
            ]),
        );
        let r =
            check_quality(env.as_ref(), &after, "You want to cancel a trip.", &gates).unwrap_err();
        assert_eq!(
            (r.kind, r.rule),
            (RejectKind::Incoherent, Some("use_after_cancel")),
            "{r:?}"
        );
        let off = Gates {
            coherence: false,
            ..Gates::default()
        };
        assert!(check_quality(env.as_ref(), &after, "You want to cancel a trip.", &off).is_ok());
        // Language and length.
        let one = with_actions(
            env.as_ref(),
            &task,
            serde_json::json!([{"name": "cancel_reservation", "kwargs": {"reservation_id": rid}}]),
        );
        let mut bad = one.clone();
        bad.instruction = Some("You want to cancel a annual trip.".into());
        let r = check_quality(
            env.as_ref(),
            &bad,
            bad.instruction.as_deref().unwrap(),
            &gates,
        )
        .unwrap_err();
        assert_eq!(
            (r.kind, r.rule),
            (RejectKind::Language, Some("article")),
            "{r:?}"
        );
        let short = Gates {
            max_actions: 0,
            ..Gates::default()
        };
        let r =
            check_quality(env.as_ref(), &one, "You want to cancel a trip.", &short).unwrap_err();
        assert_eq!(r.kind, RejectKind::TooLong);
        // A requested read whose values the outputs do not carry: unanswered.
        let mut asked = with_actions(
            env.as_ref(),
            &task,
            serde_json::json!([{"name": "get_reservation_details", "kwargs": {"reservation_id": rid}}]),
        );
        asked.requests = vec![Some("You want to hear which flights it covers.".into())];
        asked.outputs = vec![];
        let r = check_quality(
            env.as_ref(),
            &asked,
            "You want to hear which flights it covers.",
            &gates,
        )
        .unwrap_err();
        assert_eq!(r.kind, RejectKind::Unanswered, "{r:?}");
    }

    #[test]
    fn an_answer_no_reference_call_shows_is_unanswered() {
        // "What is on at this cinema that day?": the shows carry movie ids; the titles
        // the customer hears are the movies' own, which a reference call must look up.
        let env = crate::domain::find("movie")
            .unwrap()
            .generate(3, Split::Eval);
        let call = |tool: &str, args: Value| -> Value {
            serde_json::from_str(&env.fork().invoke(tool, &args).text).unwrap_or(Value::Null)
        };
        let (listing, shows) = crate::grounding::day_with_films(env.as_ref(), 1);
        let mut movies: Vec<&str> = shows
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["movie_id"].as_str())
            .collect();
        movies.sort();
        movies.dedup();
        let mut actions = vec![serde_json::json!({"name": "list_shows", "kwargs": listing})];
        let task = TaskRecord {
            user_id: "nobody".into(),
            ..TaskRecord::default()
        };
        let asked = |actions: &[Value]| {
            let mut t = with_actions(env.as_ref(), &task, Value::Array(actions.to_vec()));
            t.requests[0] = Some("You want to know which films are on that day.".into());
            t.outputs = movies
                .iter()
                .map(|m| call("get_movie_details", serde_json::json!({"movie_id": m})))
                .filter_map(|m| m["title"].as_str().map(str::to_string))
                .collect();
            crate::quality::measure_task(env.as_ref(), &t).unanswered
        };
        assert_eq!(asked(&actions), 1, "the titles were never looked up");
        actions.extend(
            movies.iter().map(
                |m| serde_json::json!({"name": "get_movie_details", "kwargs": {"movie_id": m}}),
            ),
        );
        assert_eq!(asked(&actions), 0, "every title was looked up");
    }

    #[test]
    fn an_instruction_that_prints_an_internal_id_is_rejected() {
        let env = airline();
        let mut task = grounded(
            env.as_ref(),
            &[&["search_direct_flight", "book_reservation"]],
        );
        let actions = task.actions.clone();
        let payment = actions[1].kwargs["payment_methods"][0]["payment_id"]
            .as_str()
            .unwrap()
            .to_string();
        task.instruction = Some(format!(
            "You want to book this trip and pay with {payment}."
        ));
        let r = verify_task(env.as_ref(), &task).unwrap_err();
        assert_eq!(r.kind, RejectKind::ForbiddenId, "{r:?}");
        assert!(r.reason.contains(&payment));
    }
}
