//! Action alignment: the agent's executed writes against the task's reference writes —
//! missed, extra, repeated, wrong order, wrong arguments — each at the first message where
//! the agent left the reference path.
//!
//! Only writes that act for the customer are aligned: extra lookups are normal (the paper's
//! successful trajectories average 9.5 calls for 5.2 reference actions) and change nothing
//! the reward compares; hand-overs are the `transfer` detector's. A reference write is
//! *matched* by the first successful call of the same tool with equal arguments (numbers
//! by value); an unmatched one is *attempted* by the first unused call of its tool with
//! other arguments: wrong arguments when the call ran or the tool refused it, a schema
//! error (the `schema` detector's label) when the arguments broke the tool's schema. Unmatched and unattempted
//! writes are *missed* when the agent went on to a later reference write, else they are the
//! tail the episode stopped short of (the `early_stop` detector's). Wrong order is only
//! judged within one intent of the trace (intents are independent requests).

use super::episode::{CallOutcome, Episode, argument_diff, same_value};
use super::{Fault, Finding};

pub const NAME: &str = "alignment";

/// How the executed calls line up with the reference actions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Alignment {
    /// Per reference action: the call (index into `Episode::calls`) that executed it.
    pub matched: Vec<Option<usize>>,
    /// Per reference action: the call of its tool that ran with other arguments.
    pub attempted: Vec<Option<usize>>,
    /// Reference writes neither executed nor attempted after the last one that was.
    pub tail_missing: Vec<usize>,
    pub findings: Vec<Finding>,
}

pub fn align(ep: &Episode) -> Alignment {
    let calls = &ep.calls;
    let n = ep.reference.len();
    let writes: Vec<usize> = (0..n).filter(|&j| ep.reference[j].write).collect();
    let mut matched: Vec<Option<usize>> = vec![None; n];
    let mut attempted: Vec<Option<usize>> = vec![None; n];
    let mut used = vec![false; calls.len()];
    let mut findings = Vec::new();
    for (k, c) in calls.iter().enumerate() {
        let Some(args) = c
            .args
            .as_ref()
            .filter(|_| c.succeeded() && c.is_action_write())
        else {
            continue;
        };
        let exact = writes.iter().copied().find(|&j| {
            matched[j].is_none()
                && ep.reference[j].name == c.name
                && same_value(args, &ep.reference[j].args)
        });
        if let Some(j) = exact {
            matched[j] = Some(k);
            used[k] = true;
        }
    }
    for &j in &writes {
        if matched[j].is_some() {
            continue;
        }
        let r = &ep.reference[j];
        let attempt = (0..calls.len())
            .find(|&k| !used[k] && calls[k].name == r.name && calls[k].args.is_some());
        if let Some(k) = attempt {
            used[k] = true;
            attempted[j] = Some(k);
            let c = &calls[k];
            // Arguments outside the schema are the `schema` detector's: tried, not missed.
            if matches!(c.outcome, CallOutcome::SchemaError(_)) {
                continue;
            }
            let refused = match &c.outcome {
                CallOutcome::ToolError(e) => format!(" (the tool refused: {e})"),
                _ => String::new(),
            };
            findings.push(
                Finding::new(
                    Fault::WrongArguments,
                    NAME,
                    format!(
                        "{} (reference action {}): {}{refused}",
                        c.name,
                        j + 1,
                        argument_diff(c.args.as_ref().unwrap_or(&r.args), &r.args)
                    ),
                )
                .at_call(c),
            );
        }
    }
    for (k, c) in calls.iter().enumerate() {
        if used[k] || !(c.succeeded() && c.is_action_write()) {
            continue;
        }
        let args = c.args.as_ref();
        let repeats = (0..n).find_map(|j| {
            let m = matched[j]?;
            (calls[m].name == c.name && args.is_some_and(|a| same_value(a, &ep.reference[j].args)))
                .then_some(m)
        });
        let finding = match repeats {
            Some(m) => Finding::new(
                Fault::RepeatedAction,
                NAME,
                format!(
                    "{} repeats call {} (reference action already done)",
                    c.name, calls[m].ordinal
                ),
            ),
            None => Finding::new(
                Fault::ExtraAction,
                NAME,
                format!(
                    "{} {} is not among the reference actions",
                    c.name,
                    args.map(|a| a.to_string()).unwrap_or_default()
                ),
            ),
        };
        findings.push(finding.at_call(c));
    }
    // Wrong order: a call that ran a reference write ahead of an earlier one of its intent.
    let done: Vec<(usize, usize)> = {
        let mut v: Vec<(usize, usize)> =
            (0..n).filter_map(|j| matched[j].map(|k| (k, j))).collect();
        v.sort();
        v
    };
    for (a, &(k1, j1)) in done.iter().enumerate() {
        let passed: Vec<usize> = done[a + 1..]
            .iter()
            .filter(|&&(_, j2)| j2 < j1 && ep.reference[j2].intent == ep.reference[j1].intent)
            .map(|&(_, j2)| j2)
            .collect();
        if let Some(&j2) = passed.first() {
            findings.push(
                Finding::new(
                    Fault::WrongOrder,
                    NAME,
                    format!(
                        "{} (reference action {}) ran before {} (reference action {})",
                        calls[k1].name,
                        j1 + 1,
                        ep.reference[j2].name,
                        j2 + 1
                    ),
                )
                .at_call(&calls[k1]),
            );
        }
    }
    // Missed: skipped while a later reference write was done or tried.
    let reached = |j: usize| matched[j].or(attempted[j]);
    let mut tail_missing = Vec::new();
    for &j in &writes {
        if reached(j).is_some() {
            continue;
        }
        let later = writes
            .iter()
            .filter(|&&l| l > j)
            .filter_map(|&l| reached(l))
            .min();
        match later {
            Some(k) => findings.push(
                Finding::new(
                    Fault::MissedAction,
                    NAME,
                    format!(
                        "{} (reference action {}) was never made; the agent went on to {}",
                        ep.reference[j].name,
                        j + 1,
                        calls[k].name
                    ),
                )
                .at_call(&calls[k]),
            ),
            None => tail_missing.push(j),
        }
    }
    findings.sort_by_key(|f| f.step);
    Alignment {
        matched,
        attempted,
        tail_missing,
        findings,
    }
}

pub fn detect(ep: &Episode) -> Vec<Finding> {
    align(ep).findings
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use serde_json::json;

    #[test]
    fn a_skipped_write_is_missed_at_the_call_that_went_past_it() {
        let f = Fixture::new();
        let (a, b) = f.two_baggage_writes();
        let mut s = f.script(&[a.clone(), b.clone()]);
        s.user("I want two changes.");
        let step = s.call(&b.0, b.1.clone());
        let ep = s.episode("user_stop", 0);
        let got = detect(&ep);
        assert_eq!(labels(&got), [(Fault::MissedAction, Some(step), Some(1))]);
        assert!(got[0].detail.contains("reference action 1"), "{got:?}");
    }

    #[test]
    fn other_arguments_on_the_reference_tool_are_wrong_arguments() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut wrong = a.1.clone();
        wrong["total_baggages"] = json!(a.1["total_baggages"].as_i64().unwrap() + 1);
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        let step = s.call(&a.0, wrong);
        let got = detect(&s.episode("user_stop", 0));
        assert_eq!(labels(&got), [(Fault::WrongArguments, Some(step), Some(1))]);
        assert!(got[0].detail.contains("total_baggages"), "{got:?}");
        // Outside the schema it is a schema error, neither wrong arguments nor missed.
        let mut bad = a.1.clone();
        bad["total_baggages"] = json!("many");
        let mut s = f.script(std::slice::from_ref(&a));
        s.call(&a.0, bad);
        let al = align(&s.episode("user_stop", 0));
        assert!(
            al.findings.is_empty() && al.tail_missing.is_empty(),
            "{al:?}"
        );
        assert_eq!(al.attempted[0], Some(0));
    }

    #[test]
    fn a_write_made_twice_is_repeated_and_an_unasked_one_is_extra() {
        let f = Fixture::new();
        let (a, b) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.call(&a.0, a.1.clone());
        let again = s.call(&a.0, a.1.clone());
        let got = detect(&s.episode("user_stop", 0));
        // The airline tool accepts the same bag count again (it changes nothing).
        assert_eq!(
            labels(&got),
            [(Fault::RepeatedAction, Some(again), Some(2))]
        );
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.call(&a.0, a.1.clone());
        let extra = s.call(&b.0, b.1.clone());
        let got = detect(&s.episode("user_stop", 0));
        assert_eq!(labels(&got), [(Fault::ExtraAction, Some(extra), Some(2))]);
    }

    #[test]
    fn two_writes_of_one_intent_swapped_are_wrong_order() {
        let f = Fixture::new();
        let (a, b) = f.two_baggage_writes();
        let mut s = f.script(&[a.clone(), b.clone()]);
        s.user("Two changes.");
        let first = s.call(&b.0, b.1.clone());
        s.call(&a.0, a.1.clone());
        let got = detect(&s.episode("user_stop", 0));
        assert_eq!(labels(&got), [(Fault::WrongOrder, Some(first), Some(1))]);
    }

    #[test]
    fn the_reference_path_has_no_findings() {
        let f = Fixture::new();
        let (a, b) = f.two_baggage_writes();
        let mut s = f.script(&[a.clone(), b.clone()]);
        s.user("Two changes.");
        s.call(&a.0, a.1.clone());
        s.call(&b.0, b.1.clone());
        let al = align(&s.episode("user_stop", 1));
        assert!(
            al.findings.is_empty() && al.tail_missing.is_empty(),
            "{al:?}"
        );
    }
}
