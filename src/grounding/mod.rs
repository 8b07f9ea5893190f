//! Grounding (the paper's stage 3): turn a sampled trace into a reference trajectory whose
//! every call executes on the domain's database, for one coherent customer.
//!
//! The scripted grounder is a seeded depth-first search with backtracking: customers are
//! tried in an order drawn from the trace's own RNG; at each step the domain proposes
//! policy-compliant arguments from what earlier calls revealed (`propose_calls` /
//! `observe`), each proposal is executed on a fork, and a dead end backtracks to the
//! previous step's next proposal, within an expansion budget. A trace no customer can carry
//! through is rejected with its reason. Randomness is per trace, so the result does not
//! depend on thread count. The LLM grounder ([`llm_ground_trace`]) has a tool-calling model
//! do the same work on a fork, advancing only on executed, policy-compliant calls.
//!
//! Files: this one holds the search's limits, the grounding it produces, the scripted
//! search and the task row; `llm.rs` the LLM grounder; `created.rs` how ids made in the
//! conversation are said in words; `lookups.rs` the reads an answer needs besides the
//! one asked for.
//!
//! Architecture invariant: knows domains through `Environment`, models through
//! `llm::ChatModel`; nothing of stages or the pipeline.

use crate::artifact::{JsonText, TaskRecord, TraceRecord, sha256_hex};
use crate::domain::{Action, Environment, GroundingContext, UserFact};
use crate::seed::derive_rng;
use rand::RngExt;
use serde::Deserialize;
use serde_json::Value;

mod created;
mod llm;
mod lookups;

pub use created::in_words;
use created::name_created_in_words;
pub use llm::{ENDPOINT_ERROR, llm_ground_trace};
use lookups::add_answer_lookups;
#[cfg(test)]
pub(crate) use lookups::day_with_films;

/// How hard the scripted search tries.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct SearchLimits {
    /// Customers tried per trace.
    pub max_customers: usize,
    /// Argument proposals tried per step.
    pub max_proposals: usize,
    /// Tool executions allowed per customer before giving up on them.
    pub max_expansions: usize,
    /// Refuse a step that makes the composition incoherent (repeats, overwrites or undoes
    /// an earlier write, cancels what the task created, uses what it cancelled), so the
    /// search backtracks to other entities (`quality::coherence`).
    pub coherent: bool,
    /// Refuse a read the customer asks to hear whose output gives nothing to tell (a list
    /// too long to read out, a check with no finding): the search tries other arguments,
    /// so every requested read of a grounded task has `outputs` the reward can check.
    pub answerable: bool,
    /// Share of traces whose search may keep one incoherent step of a kind a customer can
    /// mean (`coherence::CHANGE_OF_MIND`: take a change back, cancel what was just booked
    /// or changed) as a deliberate change of mind; its request then says so ("On second
    /// thought, ...") and verification accepts it only when the instruction states it.
    pub change_of_mind: f64,
}

/// The default share of traces allowed a change of mind.
pub const CHANGE_OF_MIND_SHARE: f64 = 0.1;

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            max_customers: 24,
            max_proposals: 6,
            max_expansions: 400,
            coherent: true,
            answerable: true,
            change_of_mind: CHANGE_OF_MIND_SHARE,
        }
    }
}

/// One executed reference step.
#[derive(Clone, Debug)]
pub struct GroundedStep {
    pub intent: usize,
    pub tool: String,
    pub args: Value,
    pub output: String,
    /// The customer's request sentence for this call, if the customer asked for it.
    pub request: Option<String>,
    /// Values the agent must tell the customer after this call.
    pub required_outputs: Vec<String>,
}

/// A trace grounded for one customer.
pub struct Grounding {
    pub user_id: String,
    pub steps: Vec<GroundedStep>,
    pub facts: Vec<UserFact>,
    pub final_hash: String,
}

struct Search<'a> {
    steps: &'a [(usize, &'a str)],
    limits: &'a SearchLimits,
    budget: usize,
    path: Vec<GroundedStep>,
    /// The path as coherence sees it (state hashes around each call).
    steps_done: Vec<crate::quality::coherence::Step>,
    /// The customer's own ids (never an entity of a call).
    customer: Vec<String>,
    /// What chooses among a request's sentences: the trace and the customer, so a call
    /// that recurs across tasks is told in other words by each.
    salt: String,
    dead_end: DeadEnd,
    /// This trace may keep one change of mind; the step that took it, once taken.
    mind_change_allowed: bool,
    mind_changed: Option<usize>,
}

/// Where a failed search got stuck: the deepest step it tried, and what refused the
/// proposals there. Summed over every customer tried, so the reason names the step and the
/// rule a domain author has to look at.
#[derive(Default)]
struct DeadEnd {
    step: usize,
    no_proposals: usize,
    tool_errors: usize,
    incoherent: std::collections::BTreeMap<&'static str, usize>,
    unanswerable: usize,
    policy: std::collections::BTreeMap<&'static str, usize>,
    out_of_budget: bool,
}

impl DeadEnd {
    /// The counters of step `pos`, starting over when the search gets deeper than before.
    fn at(&mut self, pos: usize) -> Option<&mut DeadEnd> {
        if pos > self.step {
            *self = DeadEnd {
                step: pos,
                ..DeadEnd::default()
            };
        }
        (pos == self.step).then_some(self)
    }

    /// The policy rule that refused most proposals at the dead end, when refusals by rules
    /// outnumber tool errors and empty proposal lists there (ties: the first name).
    fn rule(&self) -> Option<&'static str> {
        let refused: usize = self.policy.values().sum();
        if refused == 0 || refused < self.tool_errors + self.no_proposals {
            return None;
        }
        let top = self.policy.values().copied().max()?;
        self.policy
            .iter()
            .find(|(_, n)| **n == top)
            .map(|(r, _)| *r)
    }

    fn describe(&self, steps: &[(usize, &str)]) -> String {
        let Some((_, tool)) = steps.get(self.step) else {
            return String::new();
        };
        let mut parts = Vec::new();
        for (rule, n) in &self.policy {
            parts.push(format!("{n} refused by policy rule {rule}"));
        }
        if self.tool_errors > 0 {
            parts.push(format!("{} refused by the tool", self.tool_errors));
        }
        for (kind, n) in &self.incoherent {
            parts.push(format!("{n} incoherent ({kind})"));
        }
        if self.unanswerable > 0 {
            parts.push(format!("{} with nothing to tell", self.unanswerable));
        }
        if self.no_proposals > 0 {
            parts.push(format!("{} times nothing to propose", self.no_proposals));
        }
        if self.out_of_budget {
            parts.push("the search budget ran out".to_string());
        }
        format!(
            "; stuck at step {} of {} ({tool}): {}",
            self.step + 1,
            steps.len(),
            if parts.is_empty() {
                "no proposal tried".to_string()
            } else {
                parts.join(", ")
            }
        )
    }
}

/// Why a trace has no grounding: the reason, and the policy rule behind it when one
/// dominates (the funnel counts rejections per rule).
#[derive(Clone, Debug, PartialEq)]
pub struct GroundFailure {
    pub reason: String,
    pub rule: Option<&'static str>,
}

impl From<String> for GroundFailure {
    fn from(reason: String) -> GroundFailure {
        GroundFailure { reason, rule: None }
    }
}

impl std::fmt::Display for GroundFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl Search<'_> {
    /// Depth-first search from step `pos` on `env`; returns the final state on success.
    /// `env_hash` is `env`'s state hash when the caller already computed it (the previous
    /// step's `after`): each state is hashed once, not once per proposal tried on it.
    fn dfs(
        &mut self,
        env: &dyn Environment,
        mut env_hash: Option<crate::domain::StateHash>,
        pos: usize,
        ctx: &GroundingContext,
        rng: &mut rand_chacha::ChaCha8Rng,
    ) -> Option<Box<dyn Environment>> {
        if pos == self.steps.len() {
            return Some(env.fork());
        }
        let (intent, tool) = self.steps[pos];
        let proposals = env.propose_calls(tool, ctx, rng);
        if proposals.is_empty()
            && let Some(d) = self.dead_end.at(pos)
        {
            d.no_proposals += 1;
        }
        // A read whose call and answer would repeat an earlier one: the walk
        // asks again for what the customer already heard, so the task leaves it out.
        let mut redundant = false;
        for args in proposals.into_iter().take(self.limits.max_proposals) {
            if self.budget == 0 {
                if let Some(d) = self.dead_end.at(pos) {
                    d.out_of_budget = true;
                }
                return None;
            }
            self.budget -= 1;
            if let Err(v) = env.check_policy(tool, &args) {
                if let Some(d) = self.dead_end.at(pos) {
                    *d.policy.entry(v.rule).or_default() += 1;
                }
                continue;
            }
            let mut next = env.fork();
            let out = next.invoke(tool, &args);
            if out.is_error {
                if let Some(d) = self.dead_end.at(pos) {
                    d.tool_errors += 1;
                }
                continue;
            }
            let step = self.limits.coherent.then(|| {
                let spec = env.tool_specs().into_iter().find(|s| s.name == tool);
                crate::quality::coherence::Step {
                    tool: tool.to_string(),
                    args: args.clone(),
                    output: out.text.clone(),
                    kind: spec.map_or(crate::domain::ToolKind::Write, |s| s.kind),
                    intent: spec.map_or(crate::domain::Intent::Change, |s| s.intent),
                    before: *env_hash.get_or_insert_with(|| env.state_hash()),
                    after: next.state_hash(),
                    // The search asks `tells_again` once the request is known.
                    told: Vec::new(),
                    target: spec.map_or_else(Vec::new, |s| s.declared.target_values(&args)),
                }
            });
            let next_hash = step.as_ref().map(|s| s.after);
            let mut change_of_mind = false;
            if let Some(step) = &step {
                let ids: Vec<&str> = self.customer.iter().map(String::as_str).collect();
                if let Some(f) = crate::quality::coherence::check_next(&self.steps_done, step, &ids)
                {
                    change_of_mind = self.mind_change_allowed
                        && self.mind_changed.is_none()
                        && crate::quality::coherence::CHANGE_OF_MIND.contains(&f.kind);
                    if f.kind == crate::quality::coherence::Incoherence::RepeatRead {
                        redundant = true;
                    }
                    if !change_of_mind {
                        if let Some(d) = self.dead_end.at(pos) {
                            *d.incoherent.entry(f.kind.as_str()).or_default() += 1;
                        }
                        continue;
                    }
                }
            }
            let mut ctx_next = ctx.clone();
            next.observe(tool, &args, &out.text, &mut ctx_next);
            let request = crate::domain::kit::templates::with_salt(&self.salt, || {
                env.describe_request(tool, &args, &out.text)
            })
            .map(|r| crate::quality::language::tidy(&r));
            // A change of mind the customer does not state would be an accident.
            if change_of_mind && request.is_none() {
                if let Some(d) = self.dead_end.at(pos) {
                    *d.incoherent.entry("unstated change of mind").or_default() += 1;
                }
                continue;
            }
            let request = match request {
                Some(r) if change_of_mind => Some(crate::quality::coherence::as_change_of_mind(
                    &r,
                    pos + self.path.len() * 7 + tool.len(),
                )),
                // A read that is not a repeat (`redundant` above) has a new answer.
                other => other.map(|r| said_again(env, tool, &r, &self.path)),
            };
            let required_outputs = answer(env, tool, &args, &out.text, request.as_deref());
            if self.limits.coherent
                && !change_of_mind
                && tells_again(&self.path, tool, &args, &required_outputs)
                && crate::quality::answers::is_read(env, tool)
            {
                // Asked again after writes that left what the customer is told as it was
                // (a loan's next installment after a payment the schedule does not record):
                // no new answer, so it is a repeat like an identical read.
                redundant = true;
                if let Some(d) = self.dead_end.at(pos) {
                    *d.incoherent.entry("repeat_read").or_default() += 1;
                }
                continue;
            }
            if self.limits.answerable
                && request.is_some()
                && required_outputs.is_empty()
                && crate::quality::answers::is_read(env, tool)
            {
                if let Some(d) = self.dead_end.at(pos) {
                    d.unanswerable += 1;
                }
                continue;
            }
            self.path.push(GroundedStep {
                intent,
                tool: tool.to_string(),
                request,
                args,
                output: out.text,
                required_outputs,
            });
            let pushed = step.is_some();
            self.steps_done.extend(step);
            if change_of_mind {
                self.mind_changed = Some(pos);
            }
            if let Some(done) = self.dfs(next.as_ref(), next_hash, pos + 1, &ctx_next, rng) {
                return Some(done);
            }
            self.path.pop();
            if pushed {
                self.steps_done.pop();
            }
            if change_of_mind {
                self.mind_changed = None;
            }
        }
        if redundant {
            return self.dfs(env, env_hash, pos + 1, ctx, rng);
        }
        None
    }
}

pub use crate::quality::answers::{answer, named_fields};

/// The customer's own ids: their id and the values of their identity facts.
fn customer_ids(env: &dyn Environment, user: &str) -> Vec<String> {
    let mut ids = vec![user.to_string()];
    for f in env
        .user_facts(user)
        .into_iter()
        .filter(|f| f.kind == "identity")
    {
        ids.extend(f.values);
    }
    ids
}

/// Ground one trace; `Err` carries the rejection reason.
pub fn ground_trace(
    env: &dyn Environment,
    domain: &str,
    trace_id: &str,
    intents: &[Vec<String>],
    seed: u64,
    limits: &SearchLimits,
) -> Result<Grounding, GroundFailure> {
    let steps: Vec<(usize, &str)> = intents
        .iter()
        .enumerate()
        .flat_map(|(i, walk)| walk.iter().map(move |t| (i, t.as_str())))
        .collect();
    let customers = env.customers();
    if customers.is_empty() {
        return Err(GroundFailure::from(
            "the database has no customers".to_string(),
        ));
    }
    let mut rng = derive_rng(seed, &["grounded", domain, trace_id]);
    // Its own stream, so allowing changes of mind leaves every other choice as it was.
    let mind_change_allowed = limits.change_of_mind > 0.0
        && derive_rng(seed, &["change-of-mind", domain, trace_id])
            .random_bool(limits.change_of_mind.clamp(0.0, 1.0));
    let mut dead_end = DeadEnd::default();
    for _ in 0..limits.max_customers.min(customers.len()) {
        let user = &customers[rng.random_range(0..customers.len())];
        let mut search = Search {
            steps: &steps,
            limits,
            budget: limits.max_expansions,
            path: Vec::new(),
            steps_done: Vec::new(),
            customer: customer_ids(env, user),
            salt: format!("{trace_id}\0{user}"),
            dead_end: std::mem::take(&mut dead_end),
            mind_change_allowed,
            mind_changed: None,
        };
        let ctx = GroundingContext::for_user(user);
        if let Some(done) = search.dfs(env, None, 0, &ctx, &mut rng) {
            let mut steps = add_answer_lookups(env, search.path);
            name_created_in_words(env, user, &mut steps);
            return Ok(Grounding {
                user_id: user.clone(),
                facts: env.user_facts(user),
                steps,
                final_hash: done.state_hash().to_hex(),
            });
        }
        dead_end = search.dead_end;
    }
    Err(GroundFailure {
        reason: format!(
            "no executable, policy-compliant grounding for {} among {} customers tried{}",
            intents
                .iter()
                .map(|w| w.join(">"))
                .collect::<Vec<_>>()
                .join(" | "),
            limits.max_customers.min(customers.len()),
            dead_end.describe(&steps)
        ),
        rule: dead_end.rule(),
    })
}

/// Whether a read of `tool` with `args` would tell the customer exactly what an earlier
/// step of `path` with the same call already told them (`required` non-empty).
fn tells_again(path: &[GroundedStep], tool: &str, args: &Value, required: &[String]) -> bool {
    !required.is_empty()
        && path
            .iter()
            .any(|s| s.tool == tool && s.args == *args && s.required_outputs == required)
}

/// A request as said: when it is a read whose sentence an earlier step of `path` already
/// said, as a re-check (`coherence::as_recheck`).
fn said_again(env: &dyn Environment, tool: &str, request: &str, path: &[GroundedStep]) -> String {
    if !crate::quality::answers::is_read(env, tool) {
        return request.to_string();
    }
    let earlier = path.iter().map(|s| s.request.as_deref());
    crate::quality::coherence::as_recheck(request, earlier)
}

/// The task row of a grounded trace.
pub fn task_record(trace: &TraceRecord, g: &Grounding) -> TaskRecord {
    let actions: Vec<Action> = g
        .steps
        .iter()
        .map(|s| Action {
            name: s.tool.clone(),
            kwargs: s.args.clone(),
        })
        .collect();
    // The id hashes the actions as their column stores them.
    let task_id = sha256_hex(
        format!(
            "{}\0{}\0{}\0{}",
            trace.domain,
            trace.trace_id,
            g.user_id,
            actions.to_json()
        )
        .as_bytes(),
    )[..16]
        .to_string();
    // The intents the task acts on, in order (a walk's intent made only of redundant reads
    // is left out with them).
    let mut used: Vec<usize> = g.steps.iter().map(|s| s.intent).collect();
    used.sort_unstable();
    used.dedup();
    TaskRecord {
        task_id,
        domain: trace.domain.clone(),
        split: trace.split,
        trace_id: trace.trace_id.clone(),
        user_id: g.user_id.clone(),
        intents: used
            .iter()
            .filter_map(|&i| trace.intents.get(i).cloned())
            .collect(),
        actions,
        action_intents: g
            .steps
            .iter()
            .map(|s| used.iter().position(|&i| i == s.intent).unwrap_or(0) as i32)
            .collect(),
        outputs: g
            .steps
            .iter()
            .flat_map(|s| s.required_outputs.iter().cloned())
            .collect(),
        user_facts: g.facts.clone(),
        requests: g.steps.iter().map(|s| s.request.clone()).collect(),
        reference_hash: g.final_hash.clone(),
        grounder: crate::llm::scripted_model_id(crate::llm::Role::Grounder),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_dead_end_names_the_deepest_step_and_the_dominant_rule() {
        let steps = [(0, "get_user_details"), (0, "cancel_reservation")];
        let mut d = DeadEnd::default();
        // Refusals at step 1 are forgotten once the search gets deeper.
        d.at(0).unwrap().tool_errors += 5;
        let deeper = d.at(1).unwrap();
        *deeper.policy.entry("cancel_window").or_default() += 3;
        *deeper.policy.entry("confirmed_by_customer").or_default() += 1;
        deeper.tool_errors += 2;
        assert!(d.at(0).is_none(), "a shallower step no longer counts");
        assert_eq!(d.rule(), Some("cancel_window"));
        assert_eq!(
            d.describe(&steps),
            "; stuck at step 2 of 2 (cancel_reservation): 3 refused by policy rule \
             cancel_window, 1 refused by policy rule confirmed_by_customer, 2 refused by the tool"
        );
        // Tool errors and empty proposal lists outnumbering refusals: no rule to blame.
        d.at(1).unwrap().no_proposals += 3;
        assert_eq!(d.rule(), None);
    }

    #[test]
    fn a_read_that_would_tell_the_same_values_again_is_a_repeat() {
        let loan = json!({"loan_id": "L1"});
        let read = |out: &str, told: &[&str]| GroundedStep {
            intent: 0,
            tool: "get_loan_details".into(),
            args: loan.clone(),
            output: out.into(),
            request: Some("You want the next installment of your mortgage.".into()),
            required_outputs: told.iter().map(|t| t.to_string()).collect(),
        };
        let path = [read(
            "{\"history\": []}",
            &["active", "2025-10-04", "311.22"],
        )];
        // The output changed (a payment in the history), what is told did not.
        let same = ["active", "2025-10-04", "311.22"].map(String::from);
        assert!(tells_again(&path, "get_loan_details", &loan, &same));
        let later = ["active", "2025-11-04", "311.22"].map(String::from);
        assert!(!tells_again(&path, "get_loan_details", &loan, &later));
        let other = json!({"loan_id": "L2"});
        assert!(!tells_again(&path, "get_loan_details", &other, &same));
        assert!(!tells_again(&path, "get_loan_details", &loan, &[]));
    }

    #[test]
    fn a_requested_read_with_nothing_to_tell_is_refused_so_another_is_found() {
        // Provider lists longer than five names and drug checks without a finding give the
        // customer nothing to hear; the search must pass them over.
        let env = crate::domain::find("telehealth")
            .unwrap()
            .generate(7, crate::domain::Split::Eval);
        let intents = vec![vec![
            "list_available_providers".to_string(),
            "get_provider_details".to_string(),
        ]];
        let unanswered = |limits: &SearchLimits| -> (usize, usize) {
            let (mut grounded, mut unanswered) = (0, 0);
            for seed in 0..12 {
                let Ok(g) = ground_trace(env.as_ref(), "telehealth", "t", &intents, seed, limits)
                else {
                    continue;
                };
                let trace = crate::artifact::TraceRecord {
                    trace_id: "t".into(),
                    domain: "telehealth".into(),
                    split: crate::domain::Split::Eval,
                    sample_index: 0,
                    n_intents: 1,
                    intents: intents.clone(),
                    length: 2,
                };
                let task = task_record(&trace, &g);
                grounded += 1;
                unanswered += crate::quality::measure_task(env.as_ref(), &task).unanswered;
            }
            (grounded, unanswered)
        };
        let (grounded, missing) = unanswered(&SearchLimits::default());
        assert!(grounded > 0, "nothing grounded");
        assert_eq!(missing, 0, "a grounded read has nothing to tell");
        // Without the refusal the same search does ground reads with nothing to tell.
        let loose = SearchLimits {
            answerable: false,
            ..SearchLimits::default()
        };
        assert!(
            unanswered(&loose).1 > 0,
            "the probe no longer exercises the refusal"
        );
    }

    #[test]
    fn a_trace_nothing_can_propose_for_fails_with_its_step() {
        let env = crate::domain::find("airline")
            .unwrap()
            .generate(7, crate::domain::Split::Train);
        let intents = vec![vec![
            "get_user_details".to_string(),
            "no_such_tool".to_string(),
        ]];
        let limits = SearchLimits {
            max_customers: 2,
            ..SearchLimits::default()
        };
        let err = ground_trace(env.as_ref(), "airline", "t", &intents, 1, &limits)
            .err()
            .expect("an unknown tool cannot be grounded");
        assert_eq!(err.rule, None);
        let tail = err.reason.split("; ").last().unwrap();
        assert!(
            tail.starts_with("stuck at step 2 of 2 (no_such_tool): ")
                && tail.ends_with("times nothing to propose"),
            "{}",
            err.reason
        );
    }
}
