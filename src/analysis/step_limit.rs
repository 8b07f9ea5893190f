//! Step-limit hits: the harness cut the episode at its step limit (a label of our own; the
//! paper's taxonomy has none, but a cut episode failed for a reason worth counting).

use super::episode::Episode;
use super::{Fault, Finding};

pub const NAME: &str = "step_limit";

pub fn detect(ep: &Episode) -> Vec<Finding> {
    if ep.termination != "max_steps" {
        return Vec::new();
    }
    vec![
        Finding::new(
            Fault::StepLimit,
            NAME,
            format!(
                "cut at the step limit after {} messages ({} tool calls)",
                ep.messages.len(),
                ep.calls.len()
            ),
        )
        .at(ep.last_step()),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn a_cut_episode_is_labelled_at_its_last_message() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        let last = s.agent("Let me think about it.");
        assert_eq!(
            labels(&detect(&s.episode("max_steps", 0))),
            [(Fault::StepLimit, Some(last), None)]
        );
        assert!(detect(&s.episode("user_stop", 0)).is_empty());
    }
}
