//! The generic tools as ToolOrchestra's tau2 toolkits define them, where they differ from
//! [`super::generic`]'s: tau2's `calculate` raises `ValueError("Invalid characters in
//! expression")` (capitalised; tau-bench's returns the lower-case sentence), and the tau2
//! environment prefixes it with `Error: `. Everything else (the accepted characters, the
//! rounding, how the result prints) is the kit calculator's.
//!
//! Architecture invariant: builds tools only; knows no domain.

use super::calc;
use super::schema::{object, string, tool};
use crate::domain::{Tool, ToolKind};

/// tau2's wording of the calculator's refusals.
pub fn evaluate(expression: &str) -> Result<String, String> {
    calc::evaluate(expression).map_err(|e| match e.as_str() {
        "invalid characters in expression" => "Invalid characters in expression".to_string(),
        _ => e,
    })
}

/// `calculate(expression)` with tau2's error text.
pub fn calculate<D>() -> Tool<D> {
    tool(
        "calculate",
        ToolKind::Read,
        "Evaluate an arithmetic expression and return the result rounded to two decimals. Only digits, + - * /, parentheses, decimal points and spaces are allowed.",
        object(
            &[(
                "expression",
                string("Arithmetic to evaluate, e.g. '18.5 + 2.25 - 4'."),
            )],
            &["expression"],
        ),
        |_, a| evaluate(a.str("expression")?),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Args, Intent};
    use serde_json::json;

    /// Expected strings are what tau2's calculate answers through the tau2 environment
    /// (without the `Error: ` prefix the environment adds).
    #[test]
    fn calculate_answers_with_tau2s_wording() {
        assert_eq!(evaluate("18.5 + 2.25").unwrap(), "20.75");
        assert_eq!(evaluate("1/8").unwrap(), "0.12");
        assert_eq!(
            evaluate("2 + x").unwrap_err(),
            "Invalid characters in expression"
        );
        assert_eq!(evaluate("1 / 0").unwrap_err(), "division by zero");
        let t: Tool<()> = calculate();
        assert_eq!(t.spec.intent, Intent::Helper);
        assert_eq!(
            (t.run)(&mut (), &Args::new(&json!({"expression": "a"}))).unwrap_err(),
            "Invalid characters in expression"
        );
    }

    #[test]
    fn tau2_calculate_capitalises_the_filter_error_only() {
        let t: Tool<()> = calculate();
        let run = |e: &str| (t.run)(&mut (), &Args::new(&json!({"expression": e})));
        assert_eq!(run("1899 * 2 + 150").unwrap(), "3948.0");
        assert_eq!(
            run("2 ^ 3").unwrap_err(),
            "Invalid characters in expression"
        );
        assert_eq!(run("1 / 0").unwrap_err(), "division by zero");
    }
}
