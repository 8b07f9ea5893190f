//! Policy breaches the domain can check: every write the agent executed, re-checked with
//! the domain's `check_policy` on the state it actually ran on (the replay's fork), so a
//! rule that depends on earlier changes (a second cancellation, bags already added) is
//! judged as the agent met it. Writes the tool refused changed nothing and are not breaches.

use super::episode::Episode;
use super::{Fault, Finding};

pub const NAME: &str = "policy";

pub fn detect(ep: &Episode) -> Vec<Finding> {
    ep.calls
        .iter()
        .filter_map(|c| {
            let v = c.policy.as_ref()?;
            Some(
                Finding::new(
                    Fault::PolicyBreach,
                    NAME,
                    format!("{} breaks rule '{}': {}", c.name, v.rule, v.detail),
                )
                .at_call(c),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn a_write_the_tool_accepts_but_the_policy_forbids_is_a_breach_at_its_call() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let breach = f.overcharged_bags();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        let step = s.call(&breach.0, breach.1.clone());
        let got = detect(&s.episode("user_stop", 0));
        assert_eq!(labels(&got), [(Fault::PolicyBreach, Some(step), Some(1))]);
        assert!(
            got[0].detail.contains("update_reservation_baggages"),
            "{got:?}"
        );
        // The reference call itself is within policy.
        let mut s = f.script(std::slice::from_ref(&a));
        s.call(&a.0, a.1);
        assert!(detect(&s.episode("user_stop", 1)).is_empty());
    }
}
