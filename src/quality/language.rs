//! The language check: deterministic rules for the mechanical errors that template
//! composition (and careless models) make — a wrong article, a doubled word or determiner,
//! "Titans's", an amount without its currency, a sentence that starts in lower case, a
//! first-person rewrite that left "me" as a subject, a template piece left unfilled. Each
//! hit names its rule and quotes the words around it, so a rejection says what to fix.
//!
//! The rules are deliberately narrow: each must fire on the error and stay silent on the
//! ordinary text of every domain (a false positive rejects a good task).
//!
//! Architecture invariant: text in, hits out; knows no task, domain or stage.

/// A rule of the language check (the `rule` of a `language` rejection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// "a annual", "a iPhone", "an booking".
    Article,
    /// "the the", "your next your".
    Doubled,
    /// "Titans's".
    Possessive,
    /// "pay the 37.80": a money amount without its currency sign.
    BareAmount,
    /// ". the Oak Hollow": a sentence that starts in lower case.
    SentenceCase,
    /// "means me cannot travel": a pronoun in the wrong person or case.
    Pronoun,
    /// "{name}", "because of this:", " ." : a template piece unfilled or left over.
    Template,
}

impl Rule {
    pub const ALL: [Rule; 7] = [
        Rule::Article,
        Rule::Doubled,
        Rule::Possessive,
        Rule::BareAmount,
        Rule::SentenceCase,
        Rule::Pronoun,
        Rule::Template,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Article => "article",
            Rule::Doubled => "doubled",
            Rule::Possessive => "possessive",
            Rule::BareAmount => "bare_amount",
            Rule::SentenceCase => "sentence_case",
            Rule::Pronoun => "pronoun",
            Rule::Template => "template",
        }
    }
}

/// One hit: the rule and the words where it fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    pub rule: Rule,
    pub excerpt: String,
}

impl std::fmt::Display for Hit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: \"{}\"", self.rule.as_str(), self.excerpt)
    }
}

/// A word with its surrounding punctuation split off.
struct Word<'a> {
    /// The word as written, punctuation included.
    raw: &'a str,
    /// Letters, digits and inner apostrophes / hyphens only.
    core: &'a str,
}

fn words(text: &str) -> Vec<Word<'_>> {
    text.split_whitespace()
        .map(|raw| {
            let core = raw.trim_matches(|c: char| !(c.is_alphanumeric() || c == '$'));
            Word { raw, core }
        })
        .collect()
}

fn excerpt(ws: &[Word<'_>], from: usize, to: usize) -> String {
    ws[from..to.min(ws.len())]
        .iter()
        .map(|w| w.raw)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words that start with a vowel letter but a consonant sound ("a user", "a one-way").
const CONSONANT_SOUND: &[&str] = &[
    "uni", "use", "usu", "uti", "ura", "ure", "uro", "eu", "one", "once", "ubi",
];
/// Words that start with a consonant letter but a vowel sound ("an hour").
const VOWEL_SOUND: &[&str] = &["hour", "honest", "honor", "honour", "heir"];
/// Capital letters whose name starts with a vowel sound (an SMS, an MRI, an FAQ).
const VOWEL_LETTERS: &str = "AEFHILMNORSX";

/// Whether `word` wants "an" (`Some(true)`), "a" (`Some(false)`), or cannot tell (`None`).
fn wants_an(word: &str) -> Option<bool> {
    let first = word.chars().next()?;
    let lower = word.to_lowercase();
    if first.is_ascii_digit() {
        // "an 8-day", "an 11", "an 18"; other numbers take "a".
        let digits: String = word.chars().take_while(char::is_ascii_digit).collect();
        return Some(digits.starts_with('8') || digits == "11" || digits == "18");
    }
    if !first.is_alphabetic() {
        return None;
    }
    let letters: Vec<char> = word.chars().filter(|c| c.is_alphabetic()).collect();
    let acronym = letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase());
    if acronym {
        return Some(VOWEL_LETTERS.contains(first));
    }
    if VOWEL_SOUND.iter().any(|p| lower.starts_with(p)) {
        return Some(true);
    }
    if CONSONANT_SOUND.iter().any(|p| lower.starts_with(p)) {
        return Some(false);
    }
    Some(matches!(
        lower.chars().next(),
        Some('a' | 'e' | 'i' | 'o' | 'u')
    ))
}

const DETERMINERS: &[&str] = &["the", "a", "an", "your", "my", "their", "his", "her", "our"];
const POSSESSIVE_DETERMINERS: &[&str] = &["your", "my", "their", "our"];
/// After "me", a word that only a subject takes.
const SUBJECT_VERBS: &[&str] = &[
    "cannot", "can't", "can", "will", "would", "am", "want", "need", "have", "should", "must",
    "could", "was", "do", "did", "don't", "didn't", "wanted", "needed", "hope", "think",
];
/// Abbreviations after which a lower-case word does not start a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "vs.", "etc.", "approx.", "no.", "st.", "dr.", "mr.", "ms.", "mrs.",
];
/// Leftover pieces of templates that were filled with something of the wrong shape.
const STRAY_PIECES: &[&str] = &[
    "because of this:",
    " .",
    " ,",
    ",,",
    "..",
    ": .",
    "()",
    "( )",
    "{",
    "}",
    "None.",
    "null",
];

/// Every hit of every rule in `text`, in rule order.
pub fn check(text: &str) -> Vec<Hit> {
    let ws = words(text);
    let mut hits = Vec::new();
    let hit = |rule, excerpt: String| Hit { rule, excerpt };
    for i in 0..ws.len() {
        let w = ws[i].core;
        let next = ws.get(i + 1).map(|n| n.core);
        let ends_clause = ws[i].raw.ends_with(|c: char| ",.;:!?".contains(c));
        // Article agreement.
        if let (Some(n), false) = (next, ends_clause)
            && (w.eq_ignore_ascii_case("a") || w.eq_ignore_ascii_case("an"))
            && let Some(an) = wants_an(n)
            && an != w.eq_ignore_ascii_case("an")
        {
            hits.push(hit(Rule::Article, excerpt(&ws, i, i + 2)));
        }
        // Doubled words and determiners.
        if let Some(n) = next
            && !ends_clause
            && w.chars().any(char::is_alphabetic)
        {
            let (lw, ln) = (w.to_lowercase(), n.to_lowercase());
            let det = |s: &str| DETERMINERS.contains(&s);
            // "Piri Piri", "Bora Bora": a repeated capitalised word is a name.
            let name = w.starts_with(char::is_uppercase) && n.starts_with(char::is_uppercase);
            if (lw == ln && lw != "that" && lw != "had" && !name) || (det(&lw) && det(&ln)) {
                hits.push(hit(Rule::Doubled, excerpt(&ws, i, i + 2)));
            } else if POSSESSIVE_DETERMINERS.contains(&lw.as_str())
                && !ws[i + 1].raw.ends_with(|c: char| ",.;:!?".contains(c))
                && ws
                    .get(i + 2)
                    .is_some_and(|t| t.core.eq_ignore_ascii_case(&lw))
            {
                hits.push(hit(Rule::Doubled, excerpt(&ws, i, i + 3)));
            }
        }
        // "Titans's".
        if w.ends_with("s's") {
            hits.push(hit(Rule::Possessive, ws[i].raw.to_string()));
        }
        // An amount without its currency.
        let amount = {
            let (int, frac) = w.split_once('.').unwrap_or((w, ""));
            !int.is_empty()
                && int.chars().all(|c| c.is_ascii_digit() || c == ',')
                && frac.len() == 2
                && frac.chars().all(|c| c.is_ascii_digit())
        };
        if amount && i > 0 {
            let prev = ws[i - 1].core.to_lowercase();
            // "the 4,876.37 INR", "the 20.00 euros", "the 20.00 in euros": the currency
            // follows ("in local currency" names none).
            let after_in = ws.get(i + 2).map(|w| w.core.to_lowercase());
            let currency_after = next.is_some_and(|n| {
                (n.len() == 3 && n.chars().all(|c| c.is_ascii_uppercase()))
                    || ["dollars", "euros", "pounds", "rupees"].contains(&n.to_lowercase().as_str())
                    || n.eq_ignore_ascii_case("in")
                        && after_in.as_deref().is_some_and(|w| w != "local")
            });
            if !currency_after
                && ["the", "pay", "paying", "paid", "of", "costs", "cost"].contains(&prev.as_str())
            {
                hits.push(hit(Rule::BareAmount, excerpt(&ws, i - 1, i + 1)));
            }
        }
        // "me" as a subject.
        if w == "me"
            && let Some(n) = next
            && SUBJECT_VERBS.contains(&n.to_lowercase().as_str())
            && !ends_clause
        {
            hits.push(hit(Rule::Pronoun, excerpt(&ws, i, i + 2)));
        }
        // A sentence that starts in lower case.
        let starts_sentence = i == 0
            || (ws[i - 1].raw.ends_with(['.', '!', '?'])
                && !ws[i - 1].raw.ends_with("...")
                && !ABBREVIATIONS.contains(&ws[i - 1].raw.to_lowercase().as_str()));
        let first = ws[i]
            .raw
            .trim_start_matches(['"', '(', '\''])
            .chars()
            .next();
        if starts_sentence && first.is_some_and(char::is_lowercase) {
            let from = i.saturating_sub(1);
            hits.push(hit(Rule::SentenceCase, excerpt(&ws, from, i + 2)));
        }
    }
    for piece in STRAY_PIECES {
        if let Some(at) = find_piece(text, piece) {
            let start = floor_char(text, at.saturating_sub(24));
            let end = floor_char(text, (at + piece.len() + 24).min(text.len()));
            hits.push(hit(Rule::Template, text[start..end].trim().to_string()));
        }
    }
    hits.sort_by_key(|h| h.rule);
    hits
}

/// The mechanical corrections a template engine owes its output: "a"/"an" agreed with the
/// next word, an exact doubled lower-case word said once ("round trip trip"), "Titans's"
/// as "Titans'", and every sentence started in upper case. Template composition (the
/// scripted roles) runs its sentences through this; [`check`] still judges the result, and
/// every producer's, with the same rules.
pub fn tidy(text: &str) -> String {
    let tokens: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    for (i, tok) in tokens.iter().enumerate() {
        let core = |t: &str| {
            t.trim_matches(|c: char| !(c.is_alphanumeric() || c == '$'))
                .to_string()
        };
        let mut word = tok.to_string();
        // Doubled lower-case word: drop the second when nothing separates them.
        if let Some(prev) = out.last() {
            let (p, c) = (core(prev), core(tok));
            let plain = |t: &str, w: &str| t == w;
            if !p.is_empty()
                && p == c
                && p.chars().all(|ch| ch.is_lowercase())
                && plain(prev, &p)
                && p != "that"
                && p != "had"
            {
                // Keep the second's punctuation ("trip trip," -> "trip,").
                if let Some(last) = out.last_mut() {
                    *last = tok.to_string();
                }
                continue;
            }
        }
        // Article agreement.
        if (word == "a" || word == "an" || word == "A" || word == "An")
            && let Some(next) = tokens.get(i + 1)
            && let Some(an) = wants_an(&core(next))
        {
            let upper = word.starts_with('A');
            word = match (an, upper) {
                (true, true) => "An",
                (true, false) => "an",
                (false, true) => "A",
                (false, false) => "a",
            }
            .to_string();
        }
        // "Titans's" -> "Titans'".
        if let Some(at) = word.find("s's")
            && !word[at + 3..].starts_with(char::is_alphanumeric)
        {
            word.replace_range(at..at + 3, "s'");
        }
        // Sentence case.
        let starts = match out.last() {
            None => true,
            Some(prev) => {
                prev.ends_with(['.', '!', '?'])
                    && !prev.ends_with("...")
                    && !ABBREVIATIONS.contains(&prev.to_lowercase().as_str())
            }
        };
        if starts
            && let Some(first) = word.chars().next()
            && first.is_lowercase()
        {
            word = first.to_uppercase().collect::<String>() + &word[first.len_utf8()..];
        }
        out.push(word);
    }
    out.join(" ")
}

/// Where `piece` occurs as a stray piece: "..." is an ellipsis, not two stray periods, and a
/// bare "null" must be a word of its own.
fn find_piece(text: &str, piece: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = text[from..].find(piece).map(|a| a + from) {
        let after = text[at + piece.len()..].chars().next();
        let before = text[..at].chars().next_back();
        let ok = match piece {
            ".." => after != Some('.') && before != Some('.'),
            "null" => {
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            }
            " ." | " ," => before.is_some_and(|c| !c.is_whitespace()) && after != Some('.'),
            _ => true,
        };
        if ok {
            return Some(at);
        }
        from = at + piece.len();
    }
    None
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<&'static str> {
        check(text).iter().map(|h| h.rule.as_str()).collect()
    }

    #[test]
    fn each_rule_fires_on_the_error_it_names() {
        assert_eq!(rules("You want a annual pass."), ["article"]);
        assert_eq!(rules("You want a iPhone case."), ["article"]);
        assert_eq!(rules("It is an booking for two."), ["article"]);
        assert_eq!(
            rules("You want to pay your next your auto loan installment."),
            ["doubled"]
        );
        assert_eq!(rules("You want the the seats."), ["doubled"]);
        assert_eq!(rules("You support the Titans's season."), ["possessive"]);
        assert_eq!(
            rules("You will pay the 37.80 with your gift card."),
            ["bare_amount"]
        );
        // Movie's requests said this in 103 tasks: a currency no one can name.
        assert_eq!(
            rules("You will pay the 59.03 in local currency with your card."),
            ["bare_amount"]
        );
        assert_eq!(
            rules("You want a table. the Oak Hollow branch is fine."),
            ["sentence_case"]
        );
        assert_eq!(
            rules("I cannot travel: a health problem means me cannot travel."),
            ["pronoun"]
        );
        assert_eq!(
            rules("You want to block it because of this: travelling."),
            ["template"]
        );
        assert_eq!(rules("You want {count} seats."), ["template", "template"]);
        assert_eq!(rules("You want two seats ."), ["template"]);
    }

    #[test]
    fn tidy_corrects_what_the_rules_name_and_leaves_the_rest() {
        let fixed =
            tidy("you need a round trip trip on a iPhone. the Titans's game is an booking.");
        assert_eq!(
            fixed,
            "You need a round trip on an iPhone. The Titans' game is a booking."
        );
        assert_eq!(check(&fixed), []);
        let fine = "You heard that that course was full; Piri Piri chicken, e.g. the spicy one.";
        assert_eq!(tidy(fine), fine);
    }

    #[test]
    fn ordinary_text_is_clean() {
        for ok in [
            "You want an hour of help, a user id check, a one-way trip and an SMS alert.",
            "You want a European plan, an MRI slot, an 8-day tour and a 3-day pass.",
            "You will pay the $37.80 with your gift card ending in 7147.",
            "Your GPA is 3.75 and you want a seat... if possible.",
            "You heard that that course was full, e.g. the morning one.",
            "Your daughter's account and the Lakers' game, at 10.30 if you can.",
            "Tell me your name; give me the total. You want it done.",
            "You had had enough. Please help me.",
            "You love Piri Piri chicken and pay the 4,876.37 INR today.",
            "You will pay the 59.03 EUR with your card, or the 20.00 in euros.",
        ] {
            assert_eq!(check(ok), [], "{ok}");
        }
    }
}
