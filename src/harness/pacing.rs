//! How the scripted roles pace a conversation: a customer says at most
//! [`ASKED_PER_TURN`] requests in one message, and the oracle agent acts on those, reports,
//! and hands back before the next ones. A task's intents can hold six requests; said in
//! one breath and answered in one message, they make a conversation no customer has.
//!
//! A change of mind opens a turn of its own: "book it ... on second thought, cancel it" in
//! one message is not a change of mind but a muddle.
//!
//! Both roles read the same turn plan ([`turns`]), so the agent never acts on a request
//! the customer has not said yet. A model-backed user paces itself from the instruction;
//! the plan is only the scripted user's.
//!
//! Architecture invariant: a pure function of the task's intents and requests.

use crate::quality::coherence::states_change_of_mind;

/// The most requests a scripted customer says in one message.
pub const ASKED_PER_TURN: usize = 2;

/// Per reference action, the customer turn that asks for it. Each intent's requested
/// actions are cut into turns of at most [`ASKED_PER_TURN`], a request stating a change of
/// mind starting a new one; an action no request names
/// (a lookup on the way) goes with the next requested action of its intent, or with the
/// last turn of its intent when none follows. An intent with no request at all joins the
/// next turn (the last one when it ends the task), so every turn has something said.
pub fn turns(action_intents: &[i32], requests: &[Option<String>]) -> Vec<i32> {
    let n = action_intents.len();
    let asked = |k: usize| requests.get(k).is_some_and(Option::is_some);
    let mut out = vec![0; n];
    let mut turn = 0;
    let mut start = 0;
    while start < n {
        let end = (start..n)
            .find(|&k| action_intents[k] != action_intents[start])
            .unwrap_or(n);
        let mut chunks: Vec<Vec<usize>> = Vec::new();
        for k in (start..end).filter(|&k| asked(k)) {
            let rethinks = requests[k].as_deref().is_some_and(states_change_of_mind);
            match chunks.last_mut() {
                Some(c) if c.len() < ASKED_PER_TURN && !rethinks => c.push(k),
                _ => chunks.push(vec![k]),
            }
        }
        let mut from = start;
        for (c, chunk) in chunks.iter().enumerate() {
            let to = if c + 1 == chunks.len() {
                end
            } else {
                chunk[chunk.len() - 1] + 1
            };
            out[from..to].fill(turn);
            turn += 1;
            from = to;
        }
        // An intent with nothing said keeps `turn`: the next turn takes it along.
        out[from..end].fill(turn);
        start = end;
    }
    // Unsaid actions at the very end belong to the last turn that says something.
    if turn > 0 {
        for t in out.iter_mut().filter(|t| **t == turn) {
            *t = turn - 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(pattern: &str) -> Vec<Option<String>> {
        pattern
            .chars()
            .map(|c| (c == 'r').then(|| "ask".to_string()))
            .collect()
    }

    #[test]
    fn requests_are_said_two_at_a_time_with_their_lookups() {
        // One intent: lookup, ask, ask, lookup, ask, ask, ask.
        let t = turns(&[0; 7], &said("-rr-rrr"));
        assert_eq!(t, vec![0, 0, 0, 1, 1, 1, 2]);
    }

    #[test]
    fn intents_never_share_a_turn_and_trailing_lookups_stay_with_their_intent() {
        let t = turns(&[0, 0, 0, 1, 1], &said("r-rr-"));
        assert_eq!(t, vec![0, 0, 0, 1, 1]);
        let t = turns(&[0, 0, 0, 0, 1], &said("rrr-r"));
        assert_eq!(t, vec![0, 0, 1, 1, 2]);
    }

    #[test]
    fn a_change_of_mind_is_said_in_a_turn_of_its_own() {
        let mut requests = said("rrr");
        requests[1] = Some("On second thought, you want it cancelled.".into());
        assert_eq!(turns(&[0; 3], &requests), vec![0, 1, 1]);
    }

    #[test]
    fn an_intent_with_nothing_said_goes_with_a_neighbour() {
        assert_eq!(turns(&[0, 1, 1], &said("--r")), vec![0, 0, 0]);
        assert_eq!(turns(&[0, 0, 1], &said("rr-")), vec![0, 0, 0]);
        assert_eq!(turns(&[0, 1], &said("--")), vec![0, 0]);
        assert!(turns(&[], &[]).is_empty());
    }
}
