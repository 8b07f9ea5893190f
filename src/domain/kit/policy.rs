//! Named policy rules: the machine-checkable part of `policies/<name>.md`, declared per
//! write tool as `(tool, rule name, check)` rows. The same rows serve grounding (proposals
//! that break a rule are dropped), graph verification and task verification, and a broken
//! rule's name groups rejections in `tracer stats`.
//!
//! Architecture invariant: evaluates checks a domain declares; knows no domain.

use super::text::arg_str;
use crate::domain::PolicyViolation;
use serde_json::Value;

/// One rule: `check` returns `Err(detail)` when the call on this state breaks it.
pub struct Rule<D> {
    pub tool: &'static str,
    pub name: &'static str,
    pub check: fn(&D, &Value) -> Result<(), String>,
}

/// Rule rows from `"tool" => check` pairs, each rule named after its check function:
/// `static RULES: [Rule<MyDb>; 2] = policy_rules!["pay" => within_balance, "pay" => dated_today];`
#[macro_export]
macro_rules! policy_rules {
    ($($tool:literal => $check:ident),* $(,)?) => {
        [$($crate::domain::kit::policy::Rule {
            tool: $tool,
            name: stringify!($check),
            check: $check,
        }),*]
    };
}

/// Run every rule declared for `tool`, in order; the first broken one is reported.
pub fn check_rules<D>(
    rules: &[Rule<D>],
    db: &D,
    tool: &str,
    args: &Value,
) -> Result<(), PolicyViolation> {
    for rule in rules.iter().filter(|r| r.tool == tool || r.tool == "*") {
        (rule.check)(db, args).map_err(|detail| PolicyViolation::new(rule.name, detail))?;
    }
    Ok(())
}

/// One rule row (see [`Rule`]), for a domain's `RULES` table.
pub const fn rule<D>(
    tool: &'static str,
    name: &'static str,
    check: fn(&D, &Value) -> Result<(), String>,
) -> Rule<D> {
    Rule { tool, name, check }
}

/// A rule's verdict: the reason when the call breaks it, else `Ok(())`.
pub fn refuse_if(broken: bool, reason: impl FnOnce() -> String) -> Result<(), String> {
    if broken { Err(reason()) } else { Ok(()) }
}

/// Every address field but the `optional` ones is given and not blank.
pub fn address_complete(args: &Value, fields: &[&str], optional: &[&str]) -> Result<(), String> {
    match fields
        .iter()
        .filter(|f| !optional.contains(f))
        .find(|f| arg_str(args, f).trim().is_empty())
    {
        Some(f) => Err(format!("the new address has no {f}")),
        None => Ok(()),
    }
}

/// Whether the address fields of the arguments are exactly `current`'s, field by field.
pub fn same_address(args: &Value, fields: &[&str], current: &[&String]) -> bool {
    fields
        .iter()
        .zip(current)
        .all(|(f, v)| arg_str(args, f) == v.as_str())
}

/// Every payment in the list argument `key` has an `amount` that `positive` accepts (a
/// payment without one has not); the error quotes the first that has not.
pub fn positive_payments(
    args: &Value,
    key: &str,
    positive: impl Fn(&Value) -> bool,
) -> Result<(), String> {
    let mut payments = args
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    match payments.find(|p| !p.get("amount").is_some_and(&positive)) {
        Some(p) => Err(format!("every payment must be a positive amount, not {p}")),
        None => Ok(()),
    }
}

/// The common rule "`what` must be one of `allowed`": `Err` names the value and the list.
pub fn one_of(what: &str, value: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{what} must be one of {}, not '{value}'",
            allowed.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positive(_: &(), args: &Value) -> Result<(), String> {
        match args["n"].as_i64() {
            Some(n) if n > 0 => Ok(()),
            _ => Err("n must be positive".into()),
        }
    }

    #[test]
    fn rules_are_named_after_their_checks_and_run_per_tool() {
        static RULES: [Rule<()>; 1] = crate::policy_rules!["pay" => positive];
        let err = check_rules(&RULES, &(), "pay", &serde_json::json!({"n": 0})).unwrap_err();
        assert_eq!(
            (err.rule, err.detail.as_str()),
            ("positive", "n must be positive")
        );
        assert!(check_rules(&RULES, &(), "other", &serde_json::json!({})).is_ok());
    }

    #[test]
    fn positive_payments_quote_the_first_that_is_not() {
        let whole = |v: &Value| v.as_i64().is_some_and(|n| n > 0);
        let args = serde_json::json!({"pay": [{"amount": 5}, {"amount": 0}, {"id": "x"}]});
        assert_eq!(
            positive_payments(&args, "pay", whole).unwrap_err(),
            r#"every payment must be a positive amount, not {"amount":0}"#
        );
        assert!(
            positive_payments(&serde_json::json!({"pay": [{"amount": 2}]}), "pay", whole).is_ok()
        );
        assert!(positive_payments(&serde_json::json!({}), "pay", whole).is_ok());
    }

    #[test]
    fn one_of_names_the_value_and_the_choices() {
        assert!(one_of("cycle", "monthly", &["monthly", "annual"]).is_ok());
        assert_eq!(
            one_of("cycle", "weekly", &["monthly", "annual"]).unwrap_err(),
            "cycle must be one of monthly, annual, not 'weekly'"
        );
    }
}
