//! Request sentences as data: each domain keeps the sentences a customer says for each tool
//! in `src/domain/<name>/requests.toml`, so wording is edited without touching Rust.
//!
//! ```toml
//! # one table per tool; `say` lists interchangeable sentences
//! [cancel_appointment]
//! say = ["You want to cancel your {kind} appointment with {provider} on {date} at {time}."]
//! ```
//!
//! `{name}` placeholders are filled from the variables the domain computes for the call
//! (its request hook) and, failing that, from the call's own string and number arguments.
//! One sentence is chosen per call, deterministically from the call's content; a sentence
//! with a placeholder that has no value is skipped in favour of the next one.
//!
//! A tool whose request reads differently by case (an order with or without a tracking
//! number) keeps one table per case, `[<tool>.<case>]` (TOML: `[get_order_details.tracked]`),
//! and the domain renders `"<tool>.<case>"`; the choice among a case's sentences depends on
//! the tool and the call, as for a plain table.
//!
//! The same call recurs across tasks (a customer's reservation is read in many of them; a
//! call without arguments, a theater list, in every one), so the choice also follows a salt
//! that the caller may set around the call ([`with_salt`]: grounding sets the trace and the
//! customer), and follows the call alone otherwise. Within one salt a call always reads the
//! same, so a task that repeats a call repeats its sentence.
//!
//! Architecture invariant: parsing and substitution only; knows no domain.

use super::text::variant;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;

thread_local! {
    static SALT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Run `f` with `salt` choosing among the sentences of every call (see the module docs);
/// the previous salt is restored afterwards.
pub fn with_salt<T>(salt: &str, f: impl FnOnce() -> T) -> T {
    let before = SALT.with(|s| std::mem::replace(&mut *s.borrow_mut(), salt.to_string()));
    let out = f();
    SALT.with(|s| *s.borrow_mut() = before);
    out
}

/// The parsed sentences of one domain: tool -> sentences.
#[derive(Clone, Debug, Default)]
pub struct Templates {
    by_tool: BTreeMap<String, Vec<String>>,
}

impl Templates {
    /// Parse a `requests.toml`; the error names the tool table that is wrong.
    pub fn parse(source: &str) -> Result<Templates, String> {
        let table: toml::Table = source.parse().map_err(|e| format!("requests.toml: {e}"))?;
        let mut by_tool = BTreeMap::new();
        let mut entries: Vec<(String, toml::Value)> = Vec::new();
        for (tool, entry) in table {
            // `[tool.case]` tables: a tool table without `say` whose entries are cases.
            match entry.as_table() {
                Some(t) if !t.contains_key("say") && t.values().all(toml::Value::is_table) => {
                    entries.extend(
                        t.iter()
                            .map(|(case, e)| (format!("{tool}.{case}"), e.clone())),
                    );
                }
                Some(t) if t.contains_key("say") && t.values().any(toml::Value::is_table) => {
                    return Err(format!(
                        "requests.toml: [{tool}] mixes a `say` list with case tables; \
                         give every case its own table"
                    ));
                }
                _ => entries.push((tool, entry)),
            }
        }
        for (tool, entry) in entries {
            let say = entry
                .get("say")
                .and_then(toml::Value::as_array)
                .ok_or_else(|| format!("requests.toml: [{tool}] needs a `say` list"))?;
            let mut sentences = Vec::new();
            for s in say {
                let s = s
                    .as_str()
                    .ok_or_else(|| format!("requests.toml: [{tool}] `say` holds a non-string"))?;
                check_braces(s).map_err(|e| format!("requests.toml: [{tool}] {e}"))?;
                sentences.push(s.to_string());
            }
            if sentences.is_empty() {
                return Err(format!("requests.toml: [{tool}] `say` is empty"));
            }
            by_tool.insert(tool, sentences);
        }
        Ok(Templates { by_tool })
    }

    /// Parse a domain's built-in file; a broken built-in file is a bug caught by the
    /// conformance tests, so this yields an empty set rather than panicking at run time.
    pub fn builtin(source: &str) -> Templates {
        Templates::parse(source).unwrap_or_default()
    }

    pub fn tools(&self) -> impl Iterator<Item = &str> {
        self.by_tool.keys().map(String::as_str)
    }

    pub fn sentences(&self, tool: &str) -> &[String] {
        self.by_tool.get(tool).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The sentence for one call, or `None` when the tool has no sentence whose
    /// placeholders can all be filled.
    pub fn render(
        &self,
        tool: &str,
        args: &Value,
        vars: &BTreeMap<&str, String>,
    ) -> Option<String> {
        let name = tool.split_once('.').map_or(tool, |(t, _)| t);
        self.render_keyed(tool, &format!("{name}\0{args}"), args, vars)
    }

    /// [`Templates::render`] with the choice among the sentences driven by `key` instead of
    /// the tool and the call: for a domain whose phrasing varies with something else (the
    /// arguments alone, so a sentence and the phrases inside it vary together), and for
    /// tables of phrases that are not a tool's (`[cancel_reason.weather]`). The salt, when
    /// one is set, joins the key.
    pub fn render_keyed(
        &self,
        table: &str,
        key: &str,
        args: &Value,
        vars: &BTreeMap<&str, String>,
    ) -> Option<String> {
        let sentences = self.by_tool.get(table)?;
        let start = SALT.with(|s| {
            let salt = s.borrow();
            if salt.is_empty() {
                variant(key, sentences.len())
            } else {
                variant(&format!("{key}\0{salt}"), sentences.len())
            }
        });
        (0..sentences.len())
            .map(|i| &sentences[(start + i) % sentences.len()])
            .find_map(|s| fill(s, args, vars))
    }
}

/// The placeholder names of a sentence.
pub fn placeholders(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = sentence;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    out
}

fn check_braces(s: &str) -> Result<(), String> {
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("unbalanced braces in \"{s}\""));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced braces in \"{s}\""));
    }
    if placeholders(s).iter().any(|p| p.is_empty()) {
        return Err(format!("empty placeholder in \"{s}\""));
    }
    Ok(())
}

fn fill(sentence: &str, args: &Value, vars: &BTreeMap<&str, String>) -> Option<String> {
    let mut out = String::with_capacity(sentence.len() + 32);
    let mut rest = sentence;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}')? + open;
        let name = &rest[open + 1..close];
        let value = match vars.get(name) {
            Some(v) => v.clone(),
            None => match args.get(name)? {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            },
        };
        if value.is_empty() {
            return None;
        }
        out.push_str(&value);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_from_vars_then_args_and_skips_unfillable_sentences() {
        let t = Templates::parse(
            r#"
            [cancel]
            say = ["Cancel {id} for {who}.", "Cancel {id}."]
            "#,
        )
        .unwrap();
        let mut vars = BTreeMap::new();
        let args = json!({"id": "A1"});
        // Without `who` only the second sentence can be filled.
        assert_eq!(t.render("cancel", &args, &vars).unwrap(), "Cancel A1.");
        vars.insert("who", "Ann".to_string());
        let s = t.render("cancel", &args, &vars).unwrap();
        assert!(s == "Cancel A1 for Ann." || s == "Cancel A1.");
        assert!(t.render("other", &args, &vars).is_none());
        assert_eq!(placeholders("a {x} b {y}"), ["x", "y"]);
    }

    #[test]
    fn cases_of_a_tool_choose_like_the_tool() {
        let t = Templates::parse(
            r#"
            [ask]
            say = ["a0 {id}", "a1 {id}", "a2 {id}"]
            [ask_cased.one]
            say = ["a0 {id}", "a1 {id}", "a2 {id}"]
            [ask_cased.two]
            say = ["b {id}"]
            "#,
        )
        .unwrap();
        let vars = BTreeMap::new();
        for id in ["x", "y", "z", "w"] {
            let args = json!({"id": id});
            // Same choice as a plain table of the same tool name would make.
            let plain = t.render("ask", &args, &vars).unwrap();
            let cased = Templates::parse(
                r#"
                [ask.one]
                say = ["a0 {id}", "a1 {id}", "a2 {id}"]
                "#,
            )
            .unwrap()
            .render("ask.one", &args, &vars)
            .unwrap();
            assert_eq!(plain, cased);
            assert_eq!(
                t.render("ask_cased.two", &args, &vars).unwrap(),
                format!("b {id}")
            );
        }
        assert!(t.render("ask_cased", &json!({"id": "x"}), &vars).is_none());
    }

    #[test]
    fn a_key_chooses_the_sentence_when_given() {
        let t = Templates::parse(
            r#"
            [pick]
            say = ["s0 {id}", "s1 {id}", "s2 {id}"]
            "#,
        )
        .unwrap();
        let vars = BTreeMap::new();
        let args = json!({"id": "x"});
        for key in ["a", "b", "c", "d", "e"] {
            let i = variant(key, 3);
            assert_eq!(
                t.render_keyed("pick", key, &args, &vars).unwrap(),
                format!("s{i} x")
            );
        }
        assert_eq!(
            t.render("pick", &args, &vars),
            t.render_keyed("pick", &format!("pick\0{args}"), &args, &vars)
        );
    }

    #[test]
    fn a_salt_varies_every_call_and_one_salt_repeats_itself() {
        let t = Templates::parse(
            r#"
            [list]
            say = ["l0", "l1", "l2", "l3", "l4"]
            [pick]
            say = ["s0 {id}", "s1 {id}", "s2 {id}"]
            "#,
        )
        .unwrap();
        let vars = BTreeMap::new();
        let none = json!({});
        let unsalted = t.render("list", &none, &vars);
        let salted: std::collections::BTreeSet<String> = ["u1", "u2", "u3", "u4", "u5", "u6"]
            .iter()
            .filter_map(|s| with_salt(s, || t.render("list", &none, &vars)))
            .collect();
        assert!(salted.len() > 1, "{salted:?}");
        // Deterministic per salt, and restored afterwards.
        assert_eq!(
            with_salt("u1", || t.render("list", &none, &vars)),
            with_salt("u1", || t.render("list", &none, &vars))
        );
        assert_eq!(t.render("list", &none, &vars), unsalted);
        // A call with arguments varies with the salt too, and repeats itself within one.
        let args = json!({"id": "x"});
        let picks: std::collections::BTreeSet<String> = ["u1", "u2", "u3", "u4", "u5", "u6"]
            .iter()
            .filter_map(|s| with_salt(s, || t.render("pick", &args, &vars)))
            .collect();
        assert!(picks.len() > 1, "{picks:?}");
        assert_eq!(
            with_salt("u2", || t.render("pick", &args, &vars)),
            with_salt("u2", || t.render("pick", &args, &vars))
        );
    }

    #[test]
    fn rejects_broken_files_naming_the_tool() {
        assert!(
            Templates::parse("[t]\nsay = []")
                .unwrap_err()
                .contains("[t]")
        );
        assert!(
            Templates::parse("[t]\nsay = [\"a {b\"]")
                .unwrap_err()
                .contains("[t]")
        );
        assert!(
            Templates::parse("[t]\nx = 1")
                .unwrap_err()
                .contains("`say`")
        );
        // A case table beside a `say` list would never be read.
        let mixed = Templates::parse("[t]\nsay = [\"a\"]\n[t.other]\nsay = [\"b\"]").unwrap_err();
        assert!(mixed.contains("[t] mixes"), "{mixed}");
    }
}
