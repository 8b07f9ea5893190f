//! The generic tools as ToolOrchestra's tau2 toolkits define them, where they differ from
//! [`super::generic`]'s tau-bench forms: tau2's `calculate` raises a `ValueError` with a
//! capitalised message ("Invalid characters in expression"), which the environment prints
//! as `Error: Invalid characters in expression`; arithmetic errors are Python's, as in
//! [`super::calc`]. `think` and `transfer_to_human_agents` are the same in both families.
//!
//! Architecture invariant: builds tools only; knows no domain.

use super::calc;
use super::schema::{object, string, tool};
use crate::domain::{Tool, ToolKind};

/// `calculate(expression)` with tau2's error text.
pub fn calculate<D>() -> Tool<D> {
    tool(
        "calculate",
        ToolKind::Read,
        "Evaluate an arithmetic expression and return the result rounded to two decimals. Only digits, + - * /, parentheses, decimal points and spaces are allowed.",
        object(
            &[(
                "expression",
                string("Arithmetic to evaluate, e.g. '1899 * 2 + 150'."),
            )],
            &["expression"],
        ),
        |_, a| {
            calc::evaluate(a.str("expression")?).map_err(|e| match e.as_str() {
                "invalid characters in expression" => "Invalid characters in expression".into(),
                _ => e,
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Args, Intent};
    use serde_json::json;

    #[test]
    fn tau2_calculate_capitalises_the_filter_error_only() {
        let t: Tool<()> = calculate();
        assert_eq!(t.spec.intent, Intent::Helper);
        let run = |e: &str| (t.run)(&mut (), &Args::new(&json!({"expression": e})));
        assert_eq!(run("1899 * 2 + 150").unwrap(), "3948.0");
        assert_eq!(
            run("2 ^ 3").unwrap_err(),
            "Invalid characters in expression"
        );
        assert_eq!(run("1 / 0").unwrap_err(), "division by zero");
    }
}
