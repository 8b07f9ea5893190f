//! The form of a model-written instruction: what a refiner's answer must not carry beyond
//! the instruction itself — a preamble ("Here is the rewritten instruction:"), Markdown
//! (headings, bullets, bold, code), thinking or role markup, the customer's own voice ("I
//! need ..."), words addressed to the agent ("Hello, could you ..."), quotes around the whole
//! text, or more words than the budget allows. Each finding names its rule and the words
//! that broke it, so a refused answer can be asked again with the reason.
//!
//! Quoted spans ("a note the customer dictates") are left out of the voice checks: a
//! customer's note may well say "I".

/// Words an instruction may have: the budget of issue 22 (every domain's p90 <= 250), or the
/// draft's own length when the draft is longer (a rewrite may not be longer than its draft).
pub const WORD_BUDGET: usize = 250;

/// One thing wrong with an instruction's form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormFinding {
    pub rule: &'static str,
    pub detail: String,
}

impl std::fmt::Display for FormFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.rule, self.detail)
    }
}

/// Openings that introduce an answer instead of being it (lower case, at the very start).
const PREAMBLES: &[&str] = &[
    "here is",
    "here's",
    "sure",
    "certainly",
    "of course",
    "okay",
    "ok,",
    "rewritten instruction",
    "instruction:",
    "the instruction",
    "below is",
    "as requested",
    "revised instruction",
    "rewrite:",
];

/// Greetings and requests addressed to the agent (lower case, at a sentence start).
const TO_THE_AGENT: &[&str] = &[
    "hello",
    "hi,",
    "hi ",
    "hey",
    "dear ",
    "good morning",
    "good afternoon",
    "good evening",
    "thank you",
    "thanks",
    "can you",
    "could you",
    "would you",
    "please help",
];

/// Markup that is never part of an instruction.
const MARKUP: &[&str] = &[
    "<think>",
    "</think>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "[INST]",
    "```",
    "**",
    "__",
];

/// Text without the stars that mask a number ("account ****6639"): they are a value as
/// the customer's statement shows it, not bold markup.
fn without_masks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut stars = 0;
    for c in text.chars() {
        if c == '*' {
            stars += 1;
            continue;
        }
        if !c.is_ascii_digit() {
            out.extend(std::iter::repeat_n('*', stars));
        }
        stars = 0;
        out.push(c);
    }
    out.extend(std::iter::repeat_n('*', stars));
    out
}

/// Text with double-quoted spans blanked out.
fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for c in text.chars() {
        match c {
            '"' | '\u{201c}' | '\u{201d}' => {
                inside = !inside;
                out.push(' ');
            }
            _ if inside => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

fn sentence_starts(text: &str) -> Vec<&str> {
    let mut starts = vec![text.trim_start()];
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n') {
            starts.push(text[i + c.len_utf8()..].trim_start());
        }
    }
    starts
}

/// The values of a draft a rewrite must keep as written: every word holding a digit or an
/// `@` (ids, dates, times, amounts, card endings, email addresses), with the currency code
/// after an amount, trimmed of the punctuation around it.
fn draft_values(draft: &str) -> Vec<String> {
    let words: Vec<&str> = draft.split_whitespace().collect();
    let trim = |w: &str| {
        w.trim_matches(|c: char| {
            matches!(
                c,
                ',' | '.' | ';' | ':' | '(' | ')' | '"' | '\'' | '!' | '?'
            )
        })
        .to_string()
    };
    let mut out: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let v = trim(w);
        if v.is_empty() || !(v.chars().any(|c| c.is_ascii_digit()) || v.contains('@')) {
            continue;
        }
        // An amount and the currency code after it are one value ("59.03 CAD").
        let next = words.get(i + 1).map(|n| trim(n)).unwrap_or_default();
        let currency = next.len() == 3 && next.chars().all(|c| c.is_ascii_uppercase());
        let value = if currency && !w.ends_with([',', ';', '.']) {
            format!("{v} {next}")
        } else {
            v
        };
        if !out.contains(&value) {
            out.push(value);
        }
    }
    out
}

/// Every form problem of `instruction`, a rewrite of `draft`: the form rules, and every
/// value of the draft said as the draft says it (`value_changed`).
pub fn check(instruction: &str, draft: &str) -> Vec<FormFinding> {
    let draft_words = draft.split_whitespace().count();
    let mut found = form_problems(instruction, draft_words);
    let missing: Vec<String> = draft_values(draft)
        .into_iter()
        .filter(|v| !instruction.contains(v.as_str()))
        .collect();
    if !missing.is_empty() {
        found.push(FormFinding {
            rule: "value_changed",
            detail: format!(
                "the draft's {} not said as written ({}); keep every value exactly",
                if missing.len() == 1 {
                    "value is"
                } else {
                    "values are"
                },
                missing.join(", ")
            ),
        });
    }
    found
}

/// The form rules alone, for an instruction of a draft of `draft_words` words.
fn form_problems(instruction: &str, draft_words: usize) -> Vec<FormFinding> {
    let mut found = Vec::new();
    let mut add = |rule: &'static str, detail: String| found.push(FormFinding { rule, detail });
    let text = instruction.trim();
    let lower = text.to_lowercase();
    if let Some(p) = PREAMBLES.iter().find(|p| lower.starts_with(**p)) {
        let shown: String = text.chars().take(p.len() + 20).collect();
        add(
            "preamble",
            format!("opens with \"{shown}...\" instead of the instruction"),
        );
    }
    let quoted_whole =
        |open: char, close: char| text.len() > 2 && text.starts_with(open) && text.ends_with(close);
    if quoted_whole('"', '"') || quoted_whole('\u{201c}', '\u{201d}') || quoted_whole('\'', '\'') {
        add(
            "quoted",
            "the whole answer is in quotes; answer with the text itself".to_string(),
        );
    }
    let unmasked = without_masks(text);
    if let Some(m) = MARKUP.iter().find(|m| unmasked.contains(**m)) {
        add("markup", format!("contains the markup {m}"));
    }
    for line in text.lines().map(str::trim_start) {
        let bullet = line.starts_with("- ") || line.starts_with("* ") || line.starts_with("• ");
        let numbered = line.split_once(". ").is_some_and(|(n, _)| {
            !n.is_empty() && n.len() <= 2 && n.chars().all(|c| c.is_ascii_digit())
        });
        if line.starts_with('#') || bullet || numbered {
            let shown: String = line.chars().take(40).collect();
            add("markdown", format!("a heading or list line: \"{shown}\""));
            break;
        }
    }
    let plain = unquoted(text);
    let first_person = plain
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .find(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "i" | "i'm" | "i'd" | "i've" | "i'll" | "me" | "my" | "mine" | "myself"
            )
        });
    if let Some(w) = first_person {
        add(
            "first_person",
            format!(
                "speaks as the customer (\"{w}\"); write about the customer in the second person"
            ),
        );
    }
    let plain_lower = plain.to_lowercase();
    if let Some(s) = sentence_starts(&plain_lower)
        .into_iter()
        .find(|s| TO_THE_AGENT.iter().any(|g| s.starts_with(g)))
    {
        let shown: String = s.chars().take(30).collect();
        add(
            "addresses_agent",
            format!(
                "a sentence speaks to the agent (\"{shown}...\"); describe what the customer wants"
            ),
        );
    }
    let words = text.split_whitespace().count();
    let budget = WORD_BUDGET.max(draft_words);
    if words > budget {
        add("too_long", format!("{words} words; the limit is {budget}"));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<&'static str> {
        form_problems(text, 40)
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn a_plain_second_person_instruction_passes() {
        let ok = "Your name is Ada Lee. You want reservation ABC123 cancelled, and you want to \
                  add this note: \"I will call back tomorrow.\" If asked who you are, your user \
                  id is ada_lee_1.";
        assert!(rules(ok).is_empty(), "{:?}", form_problems(ok, 40));
    }

    #[test]
    fn a_masked_number_is_no_markup() {
        let ok = "Your name is Ada. You want to pay Jonas from account ****6639 and card \
                  ****1234.";
        assert!(rules(ok).is_empty(), "{:?}", form_problems(ok, 40));
    }

    #[test]
    fn each_fault_is_named() {
        for (text, rule) in [
            (
                "Here is the rewritten instruction: Your name is Ada.",
                "preamble",
            ),
            ("Sure! Your name is Ada.", "preamble"),
            ("\"Your name is Ada. You want a refund.\"", "quoted"),
            ("Your name is Ada.\n- cancel ABC123\n- refund", "markdown"),
            ("## Instruction\nYour name is Ada.", "markdown"),
            ("Your name is **Ada**.", "markup"),
            ("Your name is Ada. Pay from ****6639 to **Bob**.", "markup"),
            ("<think>ok</think>Your name is Ada.", "markup"),
            ("My name is Ada and I want a refund.", "first_person"),
            ("My name is Ada. You want a refund.", "first_person"),
            (
                "Your name is Ada. Could you cancel ABC123 for you?",
                "addresses_agent",
            ),
            ("Hello, your name is Ada.", "addresses_agent"),
        ] {
            assert!(
                rules(text).contains(&rule),
                "{text:?} -> {:?}",
                form_problems(text, 40)
            );
        }
        let long = "word ".repeat(300);
        assert_eq!(rules(&long), ["too_long"]);
        // A long draft may be rewritten at its own length.
        assert!(form_problems(&long, 320).is_empty());
    }

    #[test]
    fn every_value_of_the_draft_is_kept_as_written() {
        let draft = "Your name is Hana Novak. You want to pay the 638,705.73 NGN due on \
                     2025-06-30 from the account ending in 7299. If asked who you are: your \
                     email address is hana.novak@example.ng.";
        let good = "Your name is Hana Novak. You want to cover the 638,705.73 NGN due on \
                    2025-06-30 from your account ending in 7299. If asked who you are, your \
                    email address is hana.novak@example.ng.";
        assert!(check(good, draft).is_empty(), "{:?}", check(good, draft));
        for (bad, missing) in [
            (
                good.replace("638,705.73 NGN", "638705.73"),
                "638,705.73 NGN",
            ),
            (good.replace("NGN", "in local currency"), "638,705.73 NGN"),
            (good.replace("2025-06-30", "June 30"), "2025-06-30"),
            (
                good.replace(
                    " If asked who you are, your email address is hana.novak@example.ng.",
                    "",
                ),
                "hana.novak@example.ng",
            ),
        ] {
            let found = check(&bad, draft);
            let f = found
                .iter()
                .find(|f| f.rule == "value_changed")
                .unwrap_or_else(|| panic!("{bad}"));
            assert!(f.detail.contains(missing), "{f}");
        }
    }
}
