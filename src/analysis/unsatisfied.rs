//! The customer gave up: their last message carries `###UNSATISFIED###`; the detail is what
//! they said with it (their stated reason). A label of our own: the paper counts these
//! episodes as reward -1, and the reason often names the fault behind it.

use super::episode::Episode;
use super::{Fault, Finding};
use crate::harness::MessageRole;
use crate::harness::UNSATISFIED;

pub const NAME: &str = "unsatisfied";

pub fn detect(ep: &Episode) -> Vec<Finding> {
    let Some(i) = (0..ep.messages.len())
        .rev()
        .find(|&i| ep.messages[i].role == MessageRole::User && ep.text(i).contains(UNSATISFIED))
    else {
        return Vec::new();
    };
    let reason = ep.text(i).replace(UNSATISFIED, "");
    let reason = reason.trim();
    vec![
        Finding::new(
            Fault::UserUnsatisfied,
            NAME,
            if reason.is_empty() {
                "(no reason given)".to_string()
            } else {
                reason.to_string()
            },
        )
        .at(i),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn the_stated_reason_is_the_detail() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.agent("Sorry, could you repeat that?");
        let left = s.user("You keep asking the same thing. ###UNSATISFIED###");
        let got = detect(&s.episode("user_unsatisfied", -1));
        assert_eq!(labels(&got), [(Fault::UserUnsatisfied, Some(left), None)]);
        assert_eq!(got[0].detail, "You keep asking the same thing.");
    }
}
