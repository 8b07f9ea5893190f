//! What an edit changed, as HTML: texts word by word (deleted words struck through,
//! inserted ones marked), arguments value by value, outputs line by line. Every edit in a
//! task's history is shown this way against the task as it was generated.

use super::esc;
use crate::artifact::TaskRecord;
use crate::review::{Edit, json_leaves};
use serde_json::Value;
use std::fmt::Write;

/// Words and the spaces after them, so a diff joins back into the text.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in s.char_indices() {
        let space = c.is_whitespace();
        if in_space && !space {
            out.push(&s[start..i]);
            start = i;
        }
        in_space = space;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// A word diff of two texts: `<del>` and `<ins>` around what changed. Texts too long for
/// the quadratic table are shown whole, old then new.
pub fn text_diff(old: &str, new: &str) -> String {
    let (a, b) = (tokens(old), tokens(new));
    if a.len().saturating_mul(b.len()) > 4_000_000 {
        return format!("<del>{}</del><ins>{}</ins>", esc(old), esc(new));
    }
    // lcs[i][j]: longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i].trim_end() == b[j].trim_end() {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    let mut del = String::new();
    let mut ins = String::new();
    let flush = |out: &mut String, del: &mut String, ins: &mut String| {
        if !del.is_empty() {
            let _ = write!(out, "<del>{}</del>", esc(del));
            del.clear();
        }
        if !ins.is_empty() {
            let _ = write!(out, "<ins>{}</ins>", esc(ins));
            ins.clear();
        }
    };
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i].trim_end() == b[j].trim_end() {
            flush(&mut out, &mut del, &mut ins);
            out.push_str(&esc(b[j]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ins.push_str(b[j]);
            j += 1;
        } else {
            del.push_str(a[i]);
            i += 1;
        }
    }
    flush(&mut out, &mut del, &mut ins);
    out
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(Value::String(s)) => format!("\"{s}\""),
        Some(v) => v.to_string(),
    }
}

/// Each argument value an edit changed: `action.path: old → new`.
pub fn arguments_diff(task: &TaskRecord, args: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (a, new)) in task.actions.iter().zip(args).enumerate() {
        let (old, new) = (json_leaves(&a.kwargs), json_leaves(new));
        let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (x, y) = (old.get(k), new.get(k));
            if x != y {
                out.push(format!(
                    "<li><code>{i}. {}{}</code>: <del>{}</del> → <ins>{}</ins></li>",
                    esc(&a.name),
                    esc(k),
                    esc(&show(x)),
                    esc(&show(y))
                ));
            }
        }
    }
    if args.len() != task.actions.len() {
        out.push(format!(
            "<li>{} argument objects for {} actions (refused when applied)</li>",
            args.len(),
            task.actions.len()
        ));
    }
    out
}

/// An edit against the task it was made on, field by field (only the fields it changes).
pub fn edit_diff(task: &TaskRecord, edit: &Edit) -> String {
    let mut out = String::from("<dl class=\"diff\">");
    if let Some(text) = &edit.instruction {
        let _ = write!(
            out,
            "<dt>instruction</dt><dd class=\"text-diff\">{}</dd>",
            text_diff(task.instruction.as_deref().unwrap_or(""), text.trim())
        );
    }
    if let Some(text) = &edit.emotion_instruction {
        let _ = write!(
            out,
            "<dt>emotion instruction</dt><dd class=\"text-diff\">{}</dd>",
            text_diff(
                task.emotion_instruction.as_deref().unwrap_or(""),
                text.trim()
            )
        );
    }
    if let Some(args) = &edit.arguments {
        let changes = arguments_diff(task, args);
        let _ = write!(
            out,
            "<dt>arguments</dt><dd><ul class=\"arg-diff\">{}</ul></dd>",
            if changes.is_empty() {
                "<li class=\"muted\">unchanged</li>".to_string()
            } else {
                changes.concat()
            }
        );
    }
    if let Some(outputs) = &edit.outputs {
        let new: Vec<&str> = outputs
            .iter()
            .map(|o| o.trim())
            .filter(|o| !o.is_empty())
            .collect();
        let mut items = String::new();
        for o in task.outputs.iter().filter(|o| !new.contains(&o.as_str())) {
            let _ = write!(items, "<li><del>{}</del></li>", esc(o));
        }
        for o in new.iter().filter(|o| !task.outputs.iter().any(|x| x == *o)) {
            let _ = write!(items, "<li><ins>{}</ins></li>", esc(o));
        }
        if items.is_empty() {
            items.push_str("<li class=\"muted\">unchanged</li>");
        }
        let _ = write!(out, "<dt>outputs</dt><dd><ul>{items}</ul></dd>");
    }
    out.push_str("</dl>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_diff_marks_only_what_changed() {
        assert_eq!(
            text_diff(
                "You want to cancel order #W1.",
                "You want to keep order #W2."
            ),
            "You want to <del>cancel </del><ins>keep </ins>order <del>#W1.</del><ins>#W2.</ins>"
        );
        assert_eq!(text_diff("same text", "same text"), "same text");
        assert_eq!(text_diff("", "new"), "<ins>new</ins>");
        assert_eq!(text_diff("a <b>", "a"), "a<del>&lt;b&gt;</del>");
    }

    #[test]
    fn an_argument_diff_names_each_changed_value() {
        let task = TaskRecord {
            actions: serde_json::from_value(serde_json::json!([
                {"name": "cancel", "kwargs": {"order_id": "#W1", "reason": "no longer needed"}},
            ]))
            .unwrap(),
            ..Default::default()
        };
        let d = arguments_diff(
            &task,
            &[serde_json::json!({"order_id": "#W2", "reason": "no longer needed"})],
        );
        assert_eq!(
            d,
            [
                "<li><code>0. cancel.order_id</code>: <del>&quot;#W1&quot;</del> → <ins>&quot;#W2&quot;</ins></li>"
            ]
        );
    }
}
