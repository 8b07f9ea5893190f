//! The oracle agent's turns: what it says or calls next once the customer has spoken
//! (`decide`: identity, the lookups an action needs, the confirmation, the write, the
//! closing summary) and what it reports after a tool result (`after_tool`: the values the
//! customer asked to hear, told when a request is done).

use super::OracleAgent;
use crate::harness::ChatMessage;
use crate::harness::readback::{field_of, tell, tool_words};
use serde_json::Value;

impl OracleAgent {
    pub(super) fn decide(&mut self) -> ChatMessage {
        if !self.authenticated {
            if !self.asked_identity {
                self.asked_identity = true;
                let ack = self
                    .acknowledgement
                    .take()
                    .map(|a| format!("{a} "))
                    .unwrap_or_default();
                let ask = self.choose(&[
                    "I can help with that. First, could you please verify your identity?",
                    "Happy to help. Before we start, could you verify your identity for me?",
                    "Sure. So that I can look into this, could you please verify your identity?",
                ]);
                return Self::say(
                    format!("{ack}{ask}"),
                    "Policy: authenticate the customer before anything else.",
                );
            }
            self.authenticated = true;
            if let Some((name, args)) = self.identify.take() {
                return self.call(
                    &name,
                    &args,
                    "Policy: identify the customer with a lookup before taking any action.".into(),
                );
            }
        }
        if self.plan.redundant_question && !self.asked_again && self.next > 0 {
            self.asked_again = true;
            self.made("redundant_question");
            return Self::say(
                "Sorry, could you verify your identity once more?",
                "Asking again for identity (a scripted mistake: redundant question).",
            );
        }
        if !self.awaiting_confirmation
            && let Some((name, args)) = self
                .discover
                .get_mut(self.next)
                .filter(|d| !d.is_empty())
                .map(|d| d.remove(0))
        {
            self.discovering = true;
            return self.call(
                &name,
                &args,
                format!("I need to look this up before I can act on the request: calling {name}."),
            );
        }
        let Some((name, args, write)) = self.actions.get(self.next).cloned() else {
            // Whatever the customer asked to hear and has not heard yet, said once at the end.
            let untold: Vec<String> = self
                .outputs
                .iter()
                .filter(|o| !self.told.contains(o))
                .cloned()
                .collect();
            if !untold.is_empty() {
                self.told.extend(untold.iter().cloned());
                let items: Vec<(String, Option<String>)> = untold
                    .into_iter()
                    .map(|o| {
                        let label = self.label_of(&o);
                        (o, label)
                    })
                    .collect();
                let anything = self.anything_else();
                return Self::say(
                    format!(
                        "To sum up what you asked about: {} {anything}",
                        tell(&items)
                    ),
                    "Every request is handled; I make sure the customer heard each answer.",
                );
            }
            let done = self.choose(&[
                "Everything you asked for is done.",
                "That takes care of everything you asked for.",
            ]);
            let anything = self.anything_else();
            return Self::say(
                format!("{done} {anything}"),
                "Every request is handled; I hand back to the customer.",
            );
        };
        if self.plan.premature_transfer && self.next + 1 == self.actions.len() {
            self.plan.premature_transfer = false;
            if let Some(t) = self.transfer_tool.clone() {
                self.made("premature_transfer");
                return self.call(
                    &t,
                    &serde_json::json!({"summary": "Customer needs further help."}),
                    "Handing over to a human (a scripted mistake: premature transfer).".into(),
                );
            }
        }
        if write && !self.awaiting_confirmation && !self.plan.skip_confirmation {
            self.awaiting_confirmation = true;
            let what = self.summarise(&name, &args);
            let ask = self.choose(&[
                "Before I go ahead, please confirm: I will {what}. Shall I proceed (yes/no)?",
                "Here is the change I would make: {what}. Do you confirm (yes/no)?",
                "To confirm, I am about to {what}. Shall I proceed (yes/no)?",
            ]);
            // What the customer asked to hear before this change is told first: a status
            // read back after the change that alters it would tell the old one as news.
            let found = told_items(std::mem::take(&mut self.found));
            self.told.extend(found.iter().map(|(o, _)| o.clone()));
            let before = if found.is_empty() {
                String::new()
            } else {
                format!("{} ", tell(&found))
            };
            return Self::say(
                format!("{before}{}", ask.replace("{what}", &what)),
                format!(
                    "Policy: describe the change and get an explicit yes before calling {name}."
                ),
            );
        }
        if write && !self.awaiting_confirmation {
            self.made("skip_confirmation");
        }
        if !write
            && self.perturbed != Some(self.next)
            && let Some(output) = self.answered(&name, &args)
        {
            // The same lookup, made since the last change (on the way to an earlier
            // action), already answered this one: its result is read again, not asked twice.
            self.next += 1;
            return match self.after_tool(&name, &output) {
                Some(report) => report,
                None => self.decide(),
            };
        }
        if self.perturbed == Some(self.next) {
            self.made("wrong_argument");
        }
        self.awaiting_confirmation = false;
        let requested = self.requests.get(self.next).is_some_and(Option::is_some);
        let reasoning = self.reasoning_for(&name, write, requested);
        self.next += 1;
        let message = self.call(&name, &args, reasoning);
        if write {
            // A change: what earlier lookups answered may no longer hold.
            self.pending = None;
            self.answers.clear();
        }
        message
    }

    /// The result of a successful earlier call with these arguments since the last change.
    fn answered(&self, name: &str, args: &Value) -> Option<String> {
        self.answers
            .iter()
            .find(|(n, a, _)| n == name && a == args)
            .map(|(_, _, output)| output.clone())
    }

    /// After `tool`'s result: report when the customer's turn is done, else keep acting.
    pub(super) fn after_tool(&mut self, tool: &str, last_output: &str) -> Option<ChatMessage> {
        self.shown.push_str(last_output);
        self.shown.push('\n');
        if std::mem::take(&mut self.discovering) {
            // A lookup made on the way to the next action: go on to it.
            return None;
        }
        let json = serde_json::from_str::<Value>(last_output).ok();
        for o in &self.outputs {
            if last_output.contains(o.as_str()) && !self.found.iter().any(|(f, ..)| f == o) {
                // A value a change's result merely echoes (the payee's name after adding
                // it), or one only inside another value ("delivered" in "delivered
                // (exchange requested)", "3" in "PIXQ9Q1"), is not this result's answer:
                // it is told where a read holds it.
                let wrote = self.actions.get(self.next - 1).is_some_and(|a| a.2);
                if wrote || json.as_ref().is_some_and(|v| !holds_value(v, o)) {
                    continue;
                }
                let label = field_of(last_output, o);
                // A value no field or heading names is what the tool reports ("the senior
                // discount is 130.0").
                let label = label.or_else(|| tool_words(tool));
                if let Some(l) = &label {
                    self.labels.push((o.clone(), l.clone()));
                }
                self.found.push((o.clone(), label, tool.to_string()));
            }
        }
        let done_turn = self.turns.get(self.next - 1).copied();
        let next_turn = self.turns.get(self.next).copied();
        if done_turn == next_turn {
            return None;
        }
        let mut told = told_items(std::mem::take(&mut self.found));
        if self.next == self.actions.len() {
            // The last request: whatever else the customer asked to hear and a result
            // showed, said now (a value no result showed would be made up).
            for o in self.outputs.clone() {
                let new = !self.told.contains(&o) && !told.iter().any(|(t, _)| *t == o);
                if new && self.shown.contains(o.as_str()) {
                    let label = self.label_of(&o);
                    told.push((o, label));
                }
            }
        }
        self.told.extend(told.iter().map(|(o, _)| o.clone()));
        let report = if told.is_empty() {
            self.choose(&[
                "That is done.",
                "All set, that change is made.",
                "Done, that went through.",
            ])
            .to_string()
        } else {
            let lead = self.choose(&[
                "I have checked that for you.",
                "Here is what I found.",
                "I looked that up for you.",
            ]);
            format!("{lead} {}", tell(&told))
        };
        let anything = self.anything_else();
        Some(Self::say(
            format!("{report} {anything}"),
            "The current request is complete; report and hand back to the customer.",
        ))
    }
}

/// Values found, each with its label, ready to tell: a label that two tools' results
/// gave (a booking's status and a show's), or one that another tool's label ends with, is
/// said with each tool's object ("the booking status is confirmed; and the show status is
/// scheduled"), not as one list of values or as a bare "status" beside a "show status".
fn told_items(found: Vec<(String, Option<String>, String)>) -> Vec<(String, Option<String>)> {
    // Another tool's label that is this one or ends with it ("show status" and "status").
    let shared = |label: &str, tool: &str| {
        found.iter().any(|(_, l, t)| {
            t != tool
                && l.as_deref()
                    .is_some_and(|l| l == label || l.ends_with(&format!(" {label}")))
        })
    };
    let qualified = |label: String, tool: &str| {
        let object = tool_words(tool)
            .map(|w| {
                w.trim_end_matches(" details")
                    .trim_end_matches(" status")
                    .to_string()
            })
            .filter(|o| !o.is_empty() && *o != label && !o.contains(' '));
        match object {
            Some(o) if shared(&label, tool) => format!("{o} {label}"),
            _ => label,
        }
    };
    found
        .iter()
        .map(|(o, l, t)| (o.clone(), l.clone().map(|l| qualified(l, t))))
        .collect()
}

/// Whether a JSON result holds `value` as one of its strings or numbers (a map key too:
/// a name -> id map's names), not only inside a longer one.
pub(super) fn holds_value(v: &Value, value: &str) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| k == value || holds_value(x, value)),
        Value::Array(items) => items.iter().any(|x| holds_value(x, value)),
        Value::String(s) => s == value,
        Value::Number(n) => n.to_string() == value,
        Value::Bool(b) => b.to_string() == value,
        Value::Null => false,
    }
}
