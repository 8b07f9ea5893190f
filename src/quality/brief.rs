//! Later mentions said briefly. A template composes each request on its own, so a scripted
//! instruction names the same booking, traveler or card in full every time it comes up:
//! "your booking WQ8OJ32-B for Velvet Frontier (Dolby) at Regent Vienna Movie Theater on
//! 2024-07-02 at 16:00" three times in one task, "for yourself (born 1991-12-23)" twice,
//! "with your American Express credit card ending in 9572" after every purchase. A person
//! says it once and then refers back. [`brief_repeats`] keeps the first mention whole and
//! shortens later ones only where the shortening cannot become ambiguous:
//!
//! - a descriptor that follows an id ("WQ8OJ32-B for Velvet Frontier ... at 16:00") and
//!   repeats, word for word, what followed the same id earlier: the id alone says it; the
//!   same after "you just made" ("the booking you just made for Dune at Odeon on
//!   2024-07-02 at 16:00"), when every "you just made" in the text is for that descriptor
//!   (with two made in one task, each keeps what tells it apart);
//! - an aside in brackets ("(born 1991-12-23)", "(PDX)") repeated after the same two words,
//!   when those two words never carry a different aside in the text (so "the Iceland
//!   package (the 8-day trip)" and "... (the 10-day trip)" both keep theirs);
//! - a showing's venue and day repeated after the same name and time: "Quiet Station at
//!   Odeon Tokyo Screens on 2024-07-12 at 11:00" is then "Quiet Station at 11:00", when
//!   that name and time never come with another venue or day in the text;
//! - a payment method named again right after it was the last one named: "the same card",
//!   "the same account".
//!
//! Architecture invariant: text in, text out; knows no task, domain or stage.

use std::collections::{BTreeMap, BTreeSet};

/// `text` with later repeated mentions shortened (see the module docs).
pub fn brief_repeats(text: &str) -> String {
    same_payment(&drop_repeated_venues(&drop_repeated_asides(
        &drop_repeated_descriptors(text),
    )))
}

/// Words that open a descriptor after an id ("BKG-04104 for the Iceland ...", "order
/// #W1 from your ..."). Not "on": "flight HAT070 on 2024-05-17" — the date is the flight.
const DESCRIPTOR_OPENERS: &[&str] = &["for", "from", "at"];

/// A descriptor shorter than this is left as it is (it costs little and may be the point).
const MIN_DESCRIPTOR_WORDS: usize = 4;

/// Marks that end a clause or sentence.
const CLAUSE_MARKS: [char; 6] = ['.', ',', ';', ':', '!', '?'];

fn bare(word: &str) -> &str {
    word.trim_end_matches(CLAUSE_MARKS)
}

/// An id as a customer quotes it: letters and digits (with '#', '-' or '_'), at least one
/// digit and one upper-case letter or '#', no lower-case letter, not a date or amount.
fn is_id(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_uppercase() || c == '#')
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "#-_".contains(c))
}

fn ends_sentence_or_clause(word: &str) -> bool {
    word.ends_with(CLAUSE_MARKS)
}

/// Words that begin a new clause after a descriptor ("... at 16:00 you want", "... at
/// 16:00 and get back what you paid"): a repeated run ends before one of them, or at a
/// clause mark, or it is not shortened.
const CLAUSE_OPENERS: &[&str] = &[
    "you",
    "your",
    "and",
    "to",
    "with",
    "paying",
    "instead",
    "because",
    "so",
    "but",
    "from",
    "changed",
    "moved",
    "cancelled",
    "is",
    "are",
    "has",
    "have",
];

/// How many words after the id at `i` repeat what followed the same id earlier in `out`,
/// as a whole descriptor: the run stops at a clause mark (included) and before "you" /
/// "your", and it counts only if it ends at a clause mark or before a clause opener.
fn repeated_descriptor(words: &[&str], i: usize, out: &[String]) -> usize {
    let mut best = 0;
    for j in (0..out.len().saturating_sub(1)).filter(|&j| out[j] == words[i]) {
        let mut k = 0;
        while let (Some(now), Some(then)) = (words.get(i + 1 + k), out.get(j + 1 + k)) {
            if matches!(bare(now), "you" | "your") {
                break;
            }
            if *now != then.as_str() {
                // The same last word with other punctuation still ends the run.
                if bare(now) == bare(then)
                    && (ends_sentence_or_clause(now) || ends_sentence_or_clause(then))
                {
                    k += 1;
                }
                break;
            }
            k += 1;
            if ends_sentence_or_clause(now) {
                break;
            }
        }
        // Back off to the longest run that ends a descriptor: at a clause mark, or where
        // the match ends and a clause opens. Never before a word that still matches ("the
        // New Zealand Wine | and Wildlife": "and" opens no clause inside a name).
        let matched = k;
        let whole = |k: usize| {
            ends_sentence_or_clause(words[i + k])
                || k == matched
                    && words
                        .get(i + 1 + k)
                        .is_some_and(|next| CLAUSE_OPENERS.contains(next))
        };
        if let Some(k) = (1..=k).rev().find(|&k| whole(k)) {
            best = best.max(k);
        }
    }
    best
}

/// "... you just made" ending at `i`: something made in the conversation, which the
/// customer names by what it is for rather than by an id.
fn just_made_at(words: &[&str], i: usize) -> bool {
    i >= 2 && words[i] == "made" && words[i - 1] == "just" && words[i - 2] == "you"
}

/// The descriptor after the "you just made" ending at `i`: "for ..." up to a clause mark
/// (bare) or a clause opener.
fn just_made_descriptor(words: &[&str], i: usize) -> Vec<String> {
    let mut out = Vec::new();
    for w in words.iter().skip(i + 1) {
        if !out.is_empty() && CLAUSE_OPENERS.contains(&bare(w)) {
            break;
        }
        out.push(bare(w).to_string());
        if ends_sentence_or_clause(w) {
            break;
        }
    }
    out
}

fn drop_repeated_descriptors(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    // "You just made" anchors a descriptor only when every one in the text is for the same.
    let made: BTreeSet<Vec<String>> = (0..words.len())
        .filter(|&i| just_made_at(&words, i))
        .map(|i| just_made_descriptor(&words, i))
        .collect();
    let made_anchors = made.len() == 1;
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        out.push(w.to_string());
        let opens = words
            .get(i + 1)
            .is_some_and(|next| DESCRIPTOR_OPENERS.contains(next));
        let anchor = is_id(w) || made_anchors && just_made_at(&words, i);
        let run = if anchor && opens {
            repeated_descriptor(&words, i, &out)
        } else {
            0
        };
        if run >= MIN_DESCRIPTOR_WORDS {
            let last = words[i + run];
            let tail = &last[bare(last).len()..];
            out.last_mut().expect("pushed above").push_str(tail);
            i += 1 + run;
        } else {
            i += 1;
        }
    }
    out.join(" ")
}

/// Every " (aside)" with the two words before it: (where the " (" starts, where the ')'
/// ends, the two words, the aside).
fn asides(text: &str) -> Vec<(usize, usize, String, String)> {
    let mut found = Vec::new();
    let mut pos = 0;
    while let Some(open) = text[pos..].find(" (").map(|o| pos + o) {
        let Some(close) = text[open..].find(')').map(|c| open + c + 1) else {
            break;
        };
        let inner = &text[open + 2..close - 1];
        pos = close;
        if inner.contains('(') || inner.is_empty() {
            continue;
        }
        // The two words before the bracket.
        let mut before = text[..open].rsplitn(3, ' ');
        let (Some(last), Some(second)) = (before.next(), before.next()) else {
            continue;
        };
        if last.is_empty() || second.is_empty() {
            continue;
        }
        let key = format!("{second} {last}");
        found.push((open, close, key, inner.to_string()));
    }
    found
}

/// For each (key, what it comes with) in text order: whether it is a later mention that
/// may be shortened — its key never comes with anything else in the text, and it came
/// before.
fn later_unambiguous<'a>(found: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Vec<bool> {
    let mut kinds: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (key, with) in found.clone() {
        kinds.entry(key).or_default().insert(with);
    }
    let mut said: BTreeSet<&str> = BTreeSet::new();
    found
        .map(|(key, _)| !said.insert(key) && kinds[key].len() == 1)
        .collect()
}

fn drop_repeated_asides(text: &str) -> String {
    let found = asides(text);
    let drop = later_unambiguous(
        found
            .iter()
            .map(|(_, _, k, inner)| (k.as_str(), inner.as_str())),
    );
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for ((open, close, _, _), _) in found.iter().zip(drop).filter(|(_, d)| *d) {
        out.push_str(&text[at..*open]);
        at = *close;
    }
    out.push_str(&text[at..]);
    out
}

/// The most words a venue's name has ("at Regent Seoul Cinema on ...").
const MAX_VENUE_WORDS: usize = 6;

fn is_date(word: &str) -> bool {
    let b = bare(word).as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(k, c)| {
            if k == 4 || k == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

fn is_clock(word: &str) -> bool {
    let b = bare(word).as_bytes();
    b.len() == 5
        && b[2] == b':'
        && b.iter()
            .enumerate()
            .all(|(k, c)| k == 2 || c.is_ascii_digit())
}

/// At `i` ("at"), a venue and day before a time: "at <Capitalised words> on <date> at
/// <hh:mm>". The index of that last "at".
fn venue_at(words: &[&str], i: usize) -> Option<usize> {
    if words[i] != "at" {
        return None;
    }
    let mut k = i + 1;
    while words
        .get(k)
        .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_uppercase()) && *w == bare(w))
    {
        k += 1;
    }
    let named = k - i - 1;
    if named == 0 || named > MAX_VENUE_WORDS || words.get(k) != Some(&"on") {
        return None;
    }
    let (Some(day), Some(&"at"), Some(time)) =
        (words.get(k + 1), words.get(k + 2), words.get(k + 3))
    else {
        return None;
    };
    (*day == bare(day) && is_date(day) && is_clock(time)).then_some(k + 2)
}

/// The two words naming what is shown before the venue at `i`, skipping a bracketed aside
/// ("Quiet Station (Dolby) at ..." -> "Quiet Station").
fn shown_before(words: &[&str], i: usize) -> Option<String> {
    let mut named: Vec<&str> = Vec::new();
    let mut k = i;
    let mut in_aside = false;
    while k > 0 && named.len() < 2 {
        k -= 1;
        let w = words[k];
        if w.ends_with(')') && !in_aside {
            in_aside = !w.starts_with('(');
            continue;
        }
        if in_aside {
            in_aside = !w.starts_with('(');
            continue;
        }
        if w != bare(w) || w.is_empty() {
            break;
        }
        named.insert(0, w);
    }
    (named.len() == 2).then(|| named.join(" "))
}

fn drop_repeated_venues(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    // (name, time) -> the venues and days it comes with.
    let found: Vec<(usize, usize, String, String)> = (0..words.len())
        .filter_map(|i| {
            let last = venue_at(&words, i)?;
            let key = format!("{} {}", shown_before(&words, i)?, bare(words[last + 1]));
            Some((i, last, key, words[i..last].join(" ")))
        })
        .collect();
    let later = later_unambiguous(
        found
            .iter()
            .map(|(_, _, k, venue)| (k.as_str(), venue.as_str())),
    );
    let drop: BTreeSet<usize> = found
        .iter()
        .zip(later)
        .filter(|(_, d)| *d)
        .flat_map(|((i, last, _, _), _)| *i..*last)
        .collect();
    words
        .iter()
        .enumerate()
        .filter(|(k, _)| !drop.contains(k))
        .map(|(_, w)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

/// "your <up to five words> card|account ending in <digits>".
fn payment_at(words: &[&str], i: usize) -> Option<(usize, &'static str)> {
    if words[i] != "your" {
        return None;
    }
    for n in 1..=6 {
        let noun = bare(words.get(i + n)?);
        let kind = match noun {
            "card" => "card",
            "account" => "account",
            _ => continue,
        };
        let (Some(&"ending"), Some(&"in"), Some(digits)) = (
            words.get(i + n + 1),
            words.get(i + n + 2),
            words.get(i + n + 3),
        ) else {
            return None;
        };
        if words[i + n] != noun || !bare(digits).chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        return Some((n + 4, kind));
    }
    None
}

fn same_payment(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut last: Option<Vec<&str>> = None;
    let mut i = 0;
    while i < words.len() {
        if let Some((len, kind)) = payment_at(&words, i) {
            let phrase: Vec<&str> = words[i..i + len].to_vec();
            let stripped: Vec<&str> = phrase.iter().map(|w| bare(w)).collect();
            if last.as_deref() == Some(stripped.as_slice()) {
                let end = phrase[len - 1];
                out.push("the".into());
                out.push("same".into());
                out.push(format!("{kind}{}", &end[bare(end).len()..]));
            } else {
                out.extend(phrase.iter().map(|w| w.to_string()));
                last = Some(stripped);
            }
            i += len;
        } else {
            out.push(words[i].to_string());
            i += 1;
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_descriptor_after_an_id_is_said_once() {
        let text = "For your booking WQ8OJ32-B for Velvet Frontier (Dolby) at Regent Vienna on \
                    2024-07-02 at 16:00 you want seats R1-04. Then cancel your booking WQ8OJ32-B \
                    for Velvet Frontier (Dolby) at Regent Vienna on 2024-07-02 at 16:00. Then \
                    check booking 5JD4FW9-B for Quiet Harbor at Aurora Madrid.";
        let brief = brief_repeats(text);
        assert!(
            brief.contains("Then cancel your booking WQ8OJ32-B. Then check booking 5JD4FW9-B for Quiet Harbor at Aurora Madrid."),
            "{brief}"
        );
        assert!(brief.starts_with("For your booking WQ8OJ32-B for Velvet Frontier (Dolby)"));
        // A run stops at the clause end: the next clause is never eaten.
        let text = "For booking BKG-1 for the Iceland Whales of the North, you want a twin room. \
                    For booking BKG-1 for the Iceland Whales of the North, you want a guide.";
        assert_eq!(
            brief_repeats(text),
            "For booking BKG-1 for the Iceland Whales of the North, you want a twin room. \
             For booking BKG-1, you want a guide."
        );
        // A run ends before the clause that follows the descriptor, never inside it.
        let text = "For your booking X-1 for Dune at Odeon on 2024-07-02 at 16:00 you want seat \
                    R1. Later cancel booking X-1 for Dune at Odeon on 2024-07-02 at 16:00 and \
                    get back what you paid. Then for booking X-1 for Dune at Odeon on \
                    2024-07-02 at 16:00 you want seat R2.";
        assert_eq!(
            brief_repeats(text),
            "For your booking X-1 for Dune at Odeon on 2024-07-02 at 16:00 you want seat R1. \
             Later cancel booking X-1 and get back what you paid. Then for booking X-1 you \
             want seat R2."
        );
        // A name with "and" in it is a descriptor of its own, not two clauses.
        let text = "For your booking BKG-1 for the New Zealand Wine and Wildlife, you want a \
                    suite. Move your booking BKG-1 for the New Zealand Wine and Wildlife from \
                    the 2024-09-15 departure.";
        assert_eq!(
            brief_repeats(text),
            "For your booking BKG-1 for the New Zealand Wine and Wildlife, you want a suite. \
             Move your booking BKG-1 from the 2024-09-15 departure."
        );
        // A flight is its date: "on" opens no descriptor; short runs stay.
        let text = "Book flight HAT070 on 2024-05-17 for you. Later book flight HAT070 on \
                    2024-05-17 for you.";
        assert_eq!(brief_repeats(text), text);
    }

    #[test]
    fn a_repeated_descriptor_after_just_made_is_said_once_when_only_one_was_made() {
        let text = "Book the Iceland Whales of the North for you. Then for the booking you just \
                    made for the Iceland Whales of the North, you want a guide. Then cancel the \
                    booking you just made for the Iceland Whales of the North.";
        assert_eq!(
            brief_repeats(text),
            "Book the Iceland Whales of the North for you. Then for the booking you just made \
             for the Iceland Whales of the North, you want a guide. Then cancel the booking \
             you just made."
        );
        // Two made in one task: each mention keeps what tells them apart.
        let text = "Change the booking you just made for the Iceland Whales of the North. Then \
                    change the booking you just made for the Kenya Rift Valley Safari. Then \
                    cancel the booking you just made for the Iceland Whales of the North.";
        assert_eq!(brief_repeats(text), text);
    }

    #[test]
    fn an_aside_is_dropped_only_when_its_words_never_carry_another() {
        let text = "Book it for yourself (born 1991-12-23). Then book another for yourself \
                    (born 1991-12-23). Fly from Portland (PDX) and back from Portland (PDX).";
        assert_eq!(
            brief_repeats(text),
            "Book it for yourself (born 1991-12-23). Then book another for yourself. \
             Fly from Portland (PDX) and back from Portland."
        );
        let text = "Book the Iceland package (the 8-day trip), then the Iceland package \
                    (the 10-day trip), then cancel the Iceland package (the 8-day trip).";
        assert_eq!(brief_repeats(text), text);
    }

    #[test]
    fn a_showing_named_again_keeps_its_name_and_time() {
        let text = "Book seat R1 for Quiet Station (Dolby) at Odeon Tokyo Screens on 2024-07-12 \
                    at 11:00. Then make sure Quiet Station at Odeon Tokyo Screens on 2024-07-12 \
                    at 11:00 is still on. Then book Heat Wave at Odeon Tokyo Screens on \
                    2024-07-12 at 11:00.";
        assert_eq!(
            brief_repeats(text),
            "Book seat R1 for Quiet Station (Dolby) at Odeon Tokyo Screens on 2024-07-12 at \
             11:00. Then make sure Quiet Station at 11:00 is still on. Then book Heat Wave at \
             Odeon Tokyo Screens on 2024-07-12 at 11:00."
        );
        // The same name and time at two venues or on two days: both keep theirs.
        let text = "Check Quiet Station at Odeon Tokyo on 2024-07-12 at 11:00, then Quiet \
                    Station at Regent Seoul on 2024-07-12 at 11:00, then Quiet Station at \
                    Odeon Tokyo on 2024-07-12 at 11:00.";
        assert_eq!(brief_repeats(text), text);
    }

    #[test]
    fn a_payment_method_named_again_right_after_is_the_same_one() {
        let text = "Pay with your Visa credit card ending in 4444. Add a bag, paying with your \
                    Visa credit card ending in 4444. Then refund to your savings account \
                    ending in 0912, and pay the rest with your Visa credit card ending in \
                    4444, please.";
        assert_eq!(
            brief_repeats(text),
            "Pay with your Visa credit card ending in 4444. Add a bag, paying with the same \
             card. Then refund to your savings account ending in 0912, and pay the rest \
             with your Visa credit card ending in 4444, please."
        );
    }
}
