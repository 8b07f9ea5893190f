//! The generic tools many domains add beside their own (DOMAINS.md section 10.1): `think`
//! (a private note; nothing changes), `transfer_to_human_agents` (hands the conversation to
//! a person and ends the episode; answers "Transfer successful" as tau-bench and tau2 do)
//! and `calculate` (the kit's calculator). One constructor each, so every domain lists the
//! same schema and behaviour; descriptions are ours.
//!
//! Architecture invariant: builds tools only; knows no domain.

use super::calc;
use super::schema::{object, string, tool};
use crate::domain::{Tool, ToolKind};

/// `think(thought)`: returns an empty string.
pub fn think<D>() -> Tool<D> {
    tool(
        "think",
        ToolKind::Read,
        "Write down a private line of reasoning. Nothing is looked up and nothing changes; use it to plan multi-step work or keep notes.",
        object(&[("thought", string("The note to record."))], &["thought"]),
        |_, a| a.str("thought").map(|_| String::new()),
    )
}

/// `transfer_to_human_agents(summary)`: ends the episode with "Transfer successful".
pub fn transfer_to_human_agents<D>() -> Tool<D> {
    tool(
        "transfer_to_human_agents",
        ToolKind::Read,
        "Hand the conversation to a human agent together with a summary of the issue. Use it only when the customer explicitly asks for a person or the request cannot be handled with the other tools.",
        object(
            &[(
                "summary",
                string("Short summary of the customer's issue for the human agent."),
            )],
            &["summary"],
        ),
        |_, a| a.str("summary").map(|_| "Transfer successful".into()),
    )
}

/// `calculate(expression)`: [`calc::evaluate`].
pub fn calculate<D>() -> Tool<D> {
    tool(
        "calculate",
        ToolKind::Read,
        "Evaluate an arithmetic expression and return the result rounded to two decimals. Only digits, + - * /, parentheses, decimal points and spaces are allowed.",
        object(
            &[(
                "expression",
                string("Arithmetic to evaluate, e.g. '129.99 + 24.5 - 10'."),
            )],
            &["expression"],
        ),
        |_, a| calc::evaluate(a.str("expression")?),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Args, Intent};
    use serde_json::json;

    #[test]
    fn generic_tools_answer_and_are_tagged() {
        let t: Tool<()> = think();
        assert_eq!(t.spec.intent, Intent::Helper);
        assert!(!t.spec.terminates);
        assert_eq!(
            (t.run)(&mut (), &Args::new(&json!({"thought": "x"}))),
            Ok(String::new())
        );
        let t: Tool<()> = transfer_to_human_agents();
        assert_eq!((t.spec.intent, t.spec.terminates), (Intent::Transfer, true));
        assert_eq!(
            (t.run)(&mut (), &Args::new(&json!({"summary": "s"}))).unwrap(),
            "Transfer successful"
        );
        let t: Tool<()> = calculate();
        assert_eq!(
            (t.run)(&mut (), &Args::new(&json!({"expression": "1/8"}))).unwrap(),
            "0.12"
        );
        assert_eq!(t.spec.kind, ToolKind::Read);
    }
}
