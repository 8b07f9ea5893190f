//! Early stop: the episode ended — the customer said they were done, or the agent handed
//! over — with reference writes still missing after the last one the agent reached (the
//! alignment's tail). Episodes the user abandoned, the step limit cut or an agent error
//! broke have their own labels.

use super::alignment::align;
use super::episode::Episode;
use super::{Fault, Finding};
use crate::harness::MessageRole;

pub const NAME: &str = "early_stop";

pub fn detect(ep: &Episode) -> Vec<Finding> {
    if !matches!(ep.termination.as_str(), "user_stop" | "agent_transfer") {
        return Vec::new();
    }
    let tail = align(ep).tail_missing;
    if tail.is_empty() {
        return Vec::new();
    }
    let names: Vec<&str> = tail
        .iter()
        .map(|&j| ep.reference[j].name.as_str())
        .collect();
    // The agent's last turn is where it stopped.
    let step = (0..ep.messages.len())
        .rev()
        .find(|&i| ep.messages[i].role == MessageRole::Assistant)
        .unwrap_or(ep.last_step());
    vec![
        Finding::new(
            Fault::EarlyStop,
            NAME,
            format!(
                "ended ({}) with {} reference write(s) not made: {}",
                ep.termination,
                names.len(),
                names.join(", ")
            ),
        )
        .at(step),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn stopping_with_the_last_write_undone_is_an_early_stop_at_the_last_agent_turn() {
        let f = Fixture::new();
        let (a, b) = f.two_baggage_writes();
        let mut s = f.script(&[a.clone(), b.clone()]);
        s.user("Two changes.");
        s.call(&a.0, a.1.clone());
        let last = s.agent("That is done. Anything else?");
        s.user("No, thanks. ###STOP###");
        let got = detect(&s.episode("user_stop", 0));
        assert_eq!(labels(&got), [(Fault::EarlyStop, Some(last), None)]);
        assert!(
            got[0].detail.contains("update_reservation_baggages"),
            "{got:?}"
        );
        // An abandoned episode is not an early stop.
        let mut s = f.script(&[a.clone(), b]);
        s.user("Two changes.");
        s.call(&a.0, a.1);
        s.user("I'm done. ###UNSATISFIED###");
        assert!(detect(&s.episode("user_unsatisfied", -1)).is_empty());
    }
}
