//! Unseen ids: a tool call whose arguments carry an id that nothing before the call gave
//! the agent — not the customer, not an earlier tool result, not the policy. Only the
//! reference knows such an id (a guest's internal `guest_ref`, a reservation the customer
//! never named), so the call was a guess or a leak: a row that teaches a model to guess
//! record ids is not training data, even when the guess was right.
//!
//! A given id with a short suffix counts as given (a policy derives a new payee's id from
//! its client's). An id here is one token that does not read as a word: letters with digits
//! (`credit_card_7815826`, `BKG-04590`), or a capital after the first letter (`YvzlLDj`,
//! `MYMHLLX`), or a number of eight digits or more (an item id). Words, dates, times,
//! amounts, zip codes and short numbers are not checked.

use super::episode::{Episode, string_leaves};
use super::{Fault, Finding};
use crate::harness::MessageRole;

pub const NAME: &str = "unseen_id";

pub use crate::domain::kit::text::id_like;

pub fn detect(ep: &Episode) -> Vec<Finding> {
    let mut out = Vec::new();
    for call in &ep.calls {
        let Some(args) = &call.args else {
            continue;
        };
        let mut leaves = Vec::new();
        string_leaves(args, &mut leaves);
        let unseen: Vec<&String> = leaves
            .iter()
            .filter(|l| id_like(l))
            .filter(|l| !given_before(ep, call.step, l.trim_start_matches('#')))
            .filter(|l| !derived(ep, call.step, l))
            .collect();
        if let Some(first) = unseen.first() {
            out.push(
                Finding::new(
                    Fault::Hallucination,
                    NAME,
                    format!(
                        "call {} ({}) uses {first}, which neither the customer nor an earlier tool result gave",
                        call.ordinal, call.name
                    ),
                )
                .at_call(call),
            );
        }
    }
    out
}

/// Whether `value` is a given id with a short suffix, as a policy derives a new record's
/// id from its owner's (bank: a client's `K3ZQ7XP2` -> a new payee's `K3ZQ7XP2-B03`).
fn derived(ep: &Episode, step: usize, value: &str) -> bool {
    value.rsplit_once('-').is_some_and(|(owner, suffix)| {
        (1..=4).contains(&suffix.len()) && id_like(owner) && given_before(ep, step, owner)
    })
}

/// Whether `value` appears (case aside) in a message before `step` that the agent did not
/// write: the policy, the customer's turns, tool results.
fn given_before(ep: &Episode, step: usize, value: &str) -> bool {
    let value = value.to_lowercase();
    ep.messages[..step.min(ep.messages.len())]
        .iter()
        .filter(|m| m.role != MessageRole::Assistant)
        .any(|m| {
            m.content
                .as_deref()
                .is_some_and(|c| c.to_lowercase().contains(&value))
        })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_tokens_that_do_not_read_as_words() {
        for id in [
            "credit_card_7815826",
            "BKG-04590",
            "YvzlLDj",
            "MYMHLLX",
            "#W1234567",
            "1008292230",
        ] {
            assert!(id_like(id), "{id}");
        }
        for not in [
            "economy",
            "Economy",
            "2024-05-17",
            "13:30-15:00",
            "83702",
            "a b C1",
        ] {
            assert!(!id_like(not), "{not}");
        }
    }

    #[test]
    fn a_reservation_the_customer_never_named_is_an_unseen_id() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let reservation = a.1["reservation_id"].as_str().unwrap().to_string();
        // Straight to the reservation: nobody said it.
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Hi, I want to add a bag.");
        let guess = s.call(
            "get_reservation_details",
            json!({"reservation_id": reservation}),
        );
        let got = detect(&s.episode("user_stop", 1));
        assert_eq!(labels(&got), [(Fault::Hallucination, Some(guess), Some(1))]);
        assert!(got[0].detail.contains(&reservation), "{got:?}");
        // Found through the profile lookup, or said by the customer: seen.
        let mut s = f.script(std::slice::from_ref(&a));
        s.user(&format!("My user id is {}.", f.user_id));
        s.call("get_user_details", json!({"user_id": f.user_id}));
        s.call(
            "get_reservation_details",
            json!({"reservation_id": reservation}),
        );
        assert!(detect(&s.episode("user_stop", 1)).is_empty());
        // An id derived from a given one by a short suffix (a new record's, by policy).
        let mut s = f.script(std::slice::from_ref(&a));
        s.user(&format!("My user id is {}.", f.user_id));
        s.call(
            "get_reservation_details",
            json!({"reservation_id": format!("{}-B01", f.user_id)}),
        );
        assert!(detect(&s.episode("user_stop", 1)).is_empty());
        let mut s = f.script(std::slice::from_ref(&a));
        s.user(&format!(
            "Reservation {}, please.",
            reservation.to_lowercase()
        ));
        s.call(
            "get_reservation_details",
            json!({"reservation_id": reservation}),
        );
        assert!(detect(&s.episode("user_stop", 1)).is_empty());
    }
}
