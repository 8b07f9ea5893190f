//! Named policy rules: the machine-checkable part of `policies/<name>.md`, declared per
//! write tool as `(tool, rule name, check)` rows. The same rows serve grounding (proposals
//! that break a rule are dropped), graph verification and task verification, and a broken
//! rule's name groups rejections in `tracer stats`.
//!
//! Architecture invariant: evaluates checks a domain declares; knows no domain.

use crate::domain::PolicyViolation;
use serde_json::Value;

/// One rule: `check` returns `Err(detail)` when the call on this state breaks it.
pub struct Rule<D> {
    pub tool: &'static str,
    pub name: &'static str,
    pub check: fn(&D, &Value) -> Result<(), String>,
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
