//! Wrong transfer: the agent handed the customer to a human (a tool whose intent is
//! `Transfer`) although the task was within policy — its reference actions, verified to
//! execute and obey the policy, need no hand-over.

use super::episode::Episode;
use super::{Fault, Finding};

pub const NAME: &str = "transfer";

pub fn detect(ep: &Episode) -> Vec<Finding> {
    if ep.reference.iter().any(|r| r.transfer) {
        return Vec::new();
    }
    ep.calls
        .iter()
        .filter(|c| c.is_transfer() && c.succeeded())
        .take(1)
        .map(|c| {
            Finding::new(
                Fault::WrongTransfer,
                NAME,
                format!(
                    "{} although the task is within policy ({} reference actions, no hand-over)",
                    c.name,
                    ep.reference.len()
                ),
            )
            .at_call(c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hand_over_on_a_task_within_policy_is_a_wrong_transfer() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        let step = s.call(
            "transfer_to_human_agents",
            json!({"summary": "Customer wants a bag."}),
        );
        let got = detect(&s.episode("agent_transfer", 0));
        assert_eq!(labels(&got), [(Fault::WrongTransfer, Some(step), Some(1))]);
        // A task whose reference hands over is not a wrong transfer.
        let t = (
            "transfer_to_human_agents".to_string(),
            json!({"summary": "x"}),
        );
        let mut s = f.script(std::slice::from_ref(&t));
        s.call(&t.0, t.1);
        assert!(detect(&s.episode("agent_transfer", 1)).is_empty());
    }
}
