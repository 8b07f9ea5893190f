//! Step-limit hits and context overflows: the harness cut the episode at its step limit,
//! or a role's model ran out of context window (labels of our own; the paper's taxonomy has
//! none, but a cut episode failed for a reason worth counting).

use super::episode::Episode;
use super::{Fault, Finding};

pub const NAME: &str = "step_limit";

pub fn detect(ep: &Episode) -> Vec<Finding> {
    let (fault, what) = match ep.termination.as_str() {
        "max_steps" => (Fault::StepLimit, "cut at the step limit"),
        "context_exceeded" => (Fault::ContextExceeded, "out of context window"),
        _ => return Vec::new(),
    };
    vec![
        Finding::new(
            fault,
            NAME,
            format!(
                "{what} after {} messages ({} tool calls)",
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
        assert_eq!(
            labels(&detect(&s.episode("context_exceeded", 0))),
            [(Fault::ContextExceeded, Some(last), None)]
        );
        assert!(detect(&s.episode("user_stop", 0)).is_empty());
    }
}
