//! Re-verification, the one kind of friction rules can see: the agent asks the customer to
//! identify themself again after they already gave their identity and no lookup with it
//! failed since. (Friction in general — circular questions, unexplained delays — is the
//! judge's.) Identity questions are recognised by their words (verify, identity, user id,
//! email, zip code).

use super::episode::{CallOutcome, Episode, string_leaves};
use super::{Fault, Finding};
use crate::domain::ToolKind;

pub const NAME: &str = "reverification";

fn asks_identity(text: &str) -> bool {
    // Only the question sentences: an answer that reports "the email is ..." is not one.
    let t = crate::harness::questions(text);
    !t.is_empty()
        && ["verify", "identity", "user id", "email", "zip code"]
            .iter()
            .any(|w| t.contains(w))
}

pub fn detect(ep: &Episode) -> Vec<Finding> {
    let mut given: Option<usize> = None;
    for (i, m) in ep.messages.iter().enumerate() {
        match m.role.as_str() {
            "user" if given.is_none() => {
                let t = ep.text(i).to_lowercase();
                if ep
                    .identity_values
                    .iter()
                    .any(|v| t.contains(&v.to_lowercase()))
                {
                    given = Some(i);
                }
            }
            "assistant" if m.tool_calls.is_empty() => {
                if let Some(g) = given
                    && asks_identity(ep.text(i))
                {
                    return vec![
                        Finding::new(
                            Fault::Friction,
                            NAME,
                            format!(
                                "asked for the customer's identity again (given at message {g})"
                            ),
                        )
                        .at(i),
                    ];
                }
            }
            _ => {}
        }
        // A failed lookup with the identity makes asking again legitimate (a refused write
        // that merely carries the user id is not a lookup).
        let failed_lookup = ep.calls.iter().any(|c| {
            c.step == i
                && c.kind == Some(ToolKind::Read)
                && matches!(c.outcome, CallOutcome::ToolError(_))
                && c.args.as_ref().is_some_and(|a| {
                    let mut l = Vec::new();
                    string_leaves(a, &mut l);
                    l.iter()
                        .any(|x| ep.identity_values.iter().any(|v| x.eq_ignore_ascii_case(v)))
                })
        });
        if failed_lookup {
            given = None;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn asking_for_identity_after_it_was_given_is_friction() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.agent("Could you please verify your identity?");
        s.user(&format!("My user id is {}.", f.user_id));
        let again = s.agent("Sorry, could you verify your identity once more?");
        let got = detect(&s.episode("user_unsatisfied", -1));
        assert_eq!(labels(&got), [(Fault::Friction, Some(again), None)]);
        // A refused write carrying the user id is no failed lookup: asking again is still
        // friction.
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.agent("Could you please verify your identity?");
        s.user(&format!("My user id is {}.", f.user_id));
        s.call(
            "send_certificate",
            serde_json::json!({"user_id": f.user_id, "amount": -5}),
        );
        let again = s.agent("Sorry, could you verify your identity once more?");
        let got = detect(&s.episode("user_unsatisfied", -1));
        assert_eq!(labels(&got), [(Fault::Friction, Some(again), None)]);
        // After a failed lookup, asking again is legitimate.
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.agent("Could you please verify your identity?");
        s.user(&format!("My user id is {}.", f.user_id));
        s.call(
            "get_user_details",
            serde_json::json!({"user_id": f.user_id.to_uppercase()}),
        );
        s.agent("I could not find that id. Could you verify your identity again?");
        assert!(detect(&s.episode("user_stop", 0)).is_empty());
        // Asking once is the policy.
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.agent("Could you please verify your identity?");
        s.user(&format!("My user id is {}.", f.user_id));
        s.agent("Thanks. Shall I add the bag?");
        assert!(detect(&s.episode("user_stop", 0)).is_empty());
        // An answer that reports an email address is not an identity question.
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        s.agent("Could you please verify your identity?");
        s.user(&format!("My user id is {}.", f.user_id));
        s.agent("Here is what I found. The email is a.b@example.com. Anything else?");
        assert!(detect(&s.episode("user_stop", 0)).is_empty());
    }
}
