//! Schema errors: calls the environment could not even run — an unknown tool, arguments
//! that are not JSON, arguments outside the tool's schema (wrong type, unknown or missing
//! argument, a value outside an enum) — classified by replaying the call, not by reading
//! the error text; and an episode ended by the agent's malformed output.

use super::episode::{CallOutcome, Episode};
use super::{Fault, Finding};

pub const NAME: &str = "schema";

pub fn detect(ep: &Episode) -> Vec<Finding> {
    let mut out: Vec<Finding> = ep
        .calls
        .iter()
        .filter_map(|c| match &c.outcome {
            CallOutcome::SchemaError(e) => {
                Some(Finding::new(Fault::SchemaError, NAME, format!("{}: {e}", c.name)).at_call(c))
            }
            _ => None,
        })
        .collect();
    if ep.termination == "agent_error" {
        out.push(
            Finding::new(
                Fault::SchemaError,
                NAME,
                format!(
                    "the agent's output was unusable: {}",
                    ep.error.as_deref().unwrap_or("no detail")
                ),
            )
            .at(ep.last_step()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_arguments_and_unknown_tools_are_schema_errors_at_their_call() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag.");
        let typed = s.call(&a.0, json!({"reservation_id": 42}));
        let unknown = s.call("teleport_passenger", json!({}));
        let got = detect(&s.episode("user_stop", 0));
        assert_eq!(
            labels(&got),
            [
                (Fault::SchemaError, Some(typed), Some(1)),
                (Fault::SchemaError, Some(unknown), Some(2))
            ]
        );
        assert!(got[1].detail.contains("unknown tool"), "{got:?}");
        // A refusal by a well-formed call is not a schema error.
        let mut s = f.script(std::slice::from_ref(&a));
        s.call(
            "get_reservation_details",
            json!({"reservation_id": "NOSUCH"}),
        );
        assert!(detect(&s.episode("user_stop", 0)).is_empty());
    }
}
