//! Composing one anchor text for a condition in a [`Style`]: the phrase banks
//! (`banks.toml`, and `implied.toml` for the implied and cued registers) drawn from the
//! caller's RNG, dimension sentences sometimes stated against the grain of the feeling, and
//! units glued into two to four sentences.
//!
//! Architecture invariant: knows the taxonomy and the phrase banks, not embeddings or models.

use super::Style;
use crate::emotion::EmotionError;
use crate::emotion::banks;
use crate::emotion::taxonomy::Condition;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::BTreeMap;

fn bank<'a>(table: &'a [(&str, &'a [&str])], key: &str) -> Result<&'a [&'a str], EmotionError> {
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .ok_or_else(|| EmotionError::Invalid(format!("no phrase bank for '{key}'")))
}

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items[rng.random_range(0..items.len())]
}

/// Join sentence `b` onto `a` with a semicolon (drop `a`'s period, lowercase `b`'s start).
fn join_semicolon(a: &str, b: &str) -> String {
    let a = a.strip_suffix('.').unwrap_or(a);
    let mut chars = b.chars();
    let first = chars.next().map(|c| c.to_lowercase().to_string());
    format!("{a}; {}{}", first.unwrap_or_default(), chars.as_str())
}

/// The implied register's phrase banks (`implied.toml`): a sentence per emotion and per
/// level of each dimension.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImpliedBanks {
    emotion: BTreeMap<String, Vec<String>>,
    politeness: BTreeMap<String, Vec<String>>,
    urgency: BTreeMap<String, Vec<String>>,
    trust: BTreeMap<String, Vec<String>>,
    cued_politeness: BTreeMap<String, Vec<String>>,
    cued_urgency: BTreeMap<String, Vec<String>>,
    cued_trust: BTreeMap<String, Vec<String>>,
}

fn implied_banks() -> Result<&'static ImpliedBanks, EmotionError> {
    static BANKS: std::sync::OnceLock<Result<ImpliedBanks, String>> = std::sync::OnceLock::new();
    BANKS
        .get_or_init(|| {
            toml::from_str(include_str!("../implied.toml"))
                .map_err(|e| format!("src/emotion/implied.toml: {e}"))
        })
        .as_ref()
        .map_err(|e| EmotionError::Invalid(e.clone()))
}

fn implied_pick(
    rng: &mut ChaCha8Rng,
    table: &BTreeMap<String, Vec<String>>,
    key: &str,
) -> Result<String, EmotionError> {
    match table.get(key) {
        Some(v) if !v.is_empty() => Ok(v[rng.random_range(0..v.len())].clone()),
        _ => Err(EmotionError::Invalid(format!(
            "src/emotion/implied.toml: no sentences for '{key}'"
        ))),
    }
}

fn emotion_bank<'a>(
    table: &'a [(&str, &'a [&str])],
    emotion: &str,
) -> Result<&'a [&'a str], EmotionError> {
    bank(table, emotion)
}

/// A dimension sentence, sometimes replaced by a contrast sentence that states the level
/// against the grain of the feeling (so the classifier learns the dimension apart from it).
fn dimension_sentence(
    rng: &mut ChaCha8Rng,
    family: &str,
    dimension: &str,
    level: &str,
    table: &[(&str, &[&str])],
) -> Result<String, EmotionError> {
    let contrast = banks::banks()
        .contrasts
        .iter()
        .find(|(d, l, families, _)| *d == dimension && *l == level && families.contains(&family));
    if let Some((_, _, _, lines)) = contrast
        && rng.random_bool(0.25)
    {
        return Ok(pick(rng, lines).to_string());
    }
    Ok(pick(rng, bank(table, level)?).to_string())
}

/// Join units into 2..=4 sentences by gluing random disjoint neighbours with semicolons.
fn into_sentences(units: Vec<String>, rng: &mut ChaCha8Rng) -> String {
    let n = units.len();
    if n <= 2 {
        return units.join(" ");
    }
    let target = rng.random_range(n.div_ceil(2).max(2)..=4usize.min(n));
    let merges = n - target;
    // Random disjoint pairs, redrawn if a choice leaves no joinable pair (e.g. joining the
    // middle two of four).
    let joined = loop {
        let mut starts: Vec<usize> = Vec::new();
        let mut free: Vec<usize> = (0..n - 1).collect();
        while starts.len() < merges && !free.is_empty() {
            let i = free[rng.random_range(0..free.len())];
            starts.push(i);
            free.retain(|&j| j + 1 < i || j > i + 1);
        }
        if starts.len() == merges {
            break starts;
        }
    };
    let mut sentences: Vec<String> = Vec::new();
    let mut i = 0;
    while i < n {
        if joined.contains(&i) && !units[i].ends_with(['?', '!']) {
            sentences.push(join_semicolon(&units[i], &units[i + 1]));
            i += 2;
        } else {
            sentences.push(units[i].clone());
            i += 1;
        }
    }
    sentences.join(" ")
}

/// One candidate anchor text for a condition in a style.
pub fn compose(c: &Condition, style: Style, rng: &mut ChaCha8Rng) -> Result<String, EmotionError> {
    compose_with(c, style, rng, false)
}

/// [`compose`], where `brief` lets a situational description leave out how the feeling
/// shows (as a directive may), so that it can fit [`INSTRUCTION_WORDS`].
pub(super) fn compose_with(
    c: &Condition,
    style: Style,
    rng: &mut ChaCha8Rng,
    brief: bool,
) -> Result<String, EmotionError> {
    let (_, states, shows) = banks::banks()
        .emotions
        .iter()
        .find(|(e, _, _)| *e == c.emotion)
        .ok_or_else(|| EmotionError::Invalid(format!("no phrase bank for '{}'", c.emotion)))?;
    match style {
        Style::Directive | Style::Situational => {
            let first = if style == Style::Directive {
                let causes = bank(banks::banks().causes, &c.family)?;
                let frame = pick(rng, banks::banks().state_frames);
                format!(
                    "{}{}.",
                    frame.replace("{}", pick(rng, states)),
                    pick(rng, causes)
                )
            } else {
                pick(rng, bank(banks::banks().situations, &c.family)?)
                    .replace("{}", pick(rng, states))
            };
            let mut units = vec![first];
            if style == Style::Situational && !brief || rng.random_bool(0.5) {
                units.push(pick(rng, shows).to_string());
            }
            let mut dims = vec![
                dimension_sentence(
                    rng,
                    &c.family,
                    "politeness",
                    &c.politeness,
                    banks::banks().politeness,
                )?,
                dimension_sentence(
                    rng,
                    &c.family,
                    "urgency",
                    &c.urgency,
                    banks::banks().urgency,
                )?,
                dimension_sentence(rng, &c.family, "trust", &c.trust, banks::banks().trust)?,
            ];
            dims.shuffle(rng);
            units.extend(dims);
            Ok(into_sentences(units, rng))
        }
        Style::FirstPerson => {
            let mut units = vec![
                pick(rng, emotion_bank(banks::banks().emotion_first, &c.emotion)?).to_string(),
            ];
            let mut dims = vec![
                pick(rng, bank(banks::banks().politeness_first, &c.politeness)?).to_string(),
                pick(rng, bank(banks::banks().urgency_first, &c.urgency)?).to_string(),
                pick(rng, bank(banks::banks().trust_first, &c.trust)?).to_string(),
            ];
            dims.shuffle(rng);
            units.extend(dims);
            Ok(units.join(" "))
        }
        Style::ThirdPerson => {
            let who = pick(
                rng,
                &[
                    "The customer",
                    "The caller",
                    "This customer",
                    "The user",
                    "The client",
                ],
            );
            let feeling = pick(rng, emotion_bank(banks::banks().emotion_third, &c.emotion)?);
            let mut dims = [
                pick(rng, bank(banks::banks().politeness_third, &c.politeness)?).to_string(),
                pick(rng, bank(banks::banks().urgency_third, &c.urgency)?).to_string(),
                pick(rng, bank(banks::banks().trust_third, &c.trust)?).to_string(),
            ];
            dims.shuffle(rng);
            Ok(if rng.random_bool(0.5) {
                format!(
                    "{who} {feeling}. They {}, {}, and {}.",
                    dims[0], dims[1], dims[2]
                )
            } else {
                format!(
                    "{who} {feeling}. They {} and {}, and they {}.",
                    dims[0], dims[1], dims[2]
                )
            })
        }
        Style::Implied | Style::Cued => {
            let banks = implied_banks()?;
            let (politeness, urgency, trust) = if style == Style::Implied {
                (&banks.politeness, &banks.urgency, &banks.trust)
            } else {
                (
                    &banks.cued_politeness,
                    &banks.cued_urgency,
                    &banks.cued_trust,
                )
            };
            let mut units = vec![implied_pick(rng, &banks.emotion, &c.emotion)?];
            let mut dims = vec![
                implied_pick(rng, politeness, &c.politeness)?,
                implied_pick(rng, urgency, &c.urgency)?,
                implied_pick(rng, trust, &c.trust)?,
            ];
            dims.shuffle(rng);
            units.extend(dims);
            Ok(into_sentences(units, rng))
        }
        Style::Described => {
            let who = pick(
                rng,
                &[
                    "The customer",
                    "The caller",
                    "The user",
                    "The client",
                    "The traveller",
                    "The patient",
                    "The shopper",
                    "The subscriber",
                ],
            );
            let again = pick(rng, &["This person", "The customer", "They"]);
            let feeling = pick(rng, emotion_bank(banks::banks().emotion_third, &c.emotion)?);
            let matter = pick(rng, banks::banks().matters_described);
            // A writer often leaves the middle levels unsaid: sometimes omit a neutral tone or
            // a moderate pace, so their absence is learned as what they mean.
            let say_politeness = c.politeness != "neutral" || rng.random_bool(0.5);
            let say_urgency = c.urgency != "moderate" || rng.random_bool(0.5);
            if rng.random_bool(0.3) {
                let mut terse: Vec<&str> = Vec::new();
                if say_politeness {
                    terse.push(pick(
                        rng,
                        bank(banks::banks().politeness_terse, &c.politeness)?,
                    ));
                }
                if say_urgency {
                    terse.push(pick(rng, bank(banks::banks().urgency_terse, &c.urgency)?));
                }
                terse.push(pick(rng, bank(banks::banks().trust_terse, &c.trust)?));
                terse.shuffle(rng);
                let list = match terse.as_slice() {
                    [a] => a.to_string(),
                    [a, b] => format!("{a} and {b}"),
                    [a, b, last] => format!("{a}, {b} and {last}"),
                    _ => terse.join(", "),
                };
                return Ok(format!("{who} {feeling}; {list}."));
            }
            let mut dims: Vec<&str> = Vec::new();
            if say_politeness {
                dims.push(pick(
                    rng,
                    bank(banks::banks().politeness_described, &c.politeness)?,
                ));
            }
            if say_urgency {
                dims.push(pick(
                    rng,
                    bank(banks::banks().urgency_described, &c.urgency)?,
                ));
            }
            dims.push(pick(rng, bank(banks::banks().trust_described, &c.trust)?));
            dims.shuffle(rng);
            // "They" takes the plural verb; the phrase banks are singular.
            let clause = |phrases: &[&str]| {
                let verbs: Vec<String> = phrases
                    .iter()
                    .map(|p| {
                        if again == "They" {
                            plural_verb_phrase(p)
                        } else {
                            p.to_string()
                        }
                    })
                    .collect();
                format!("{again} {}", verbs.join(" and "))
            };
            let lower = who.to_lowercase();
            let n = dims.len();
            Ok(match (rng.random_range(0..4u32), n) {
                (0, 3) => format!(
                    "{who} {feeling}, {}, {}, and {}.",
                    dims[0], dims[1], dims[2]
                ),
                (0, _) | (1, 1) => format!("{who} {feeling} and {}.", dims.join(" and ")),
                (1, _) => format!("{who} {feeling} but {}. {}.", dims[0], clause(&dims[1..])),
                (2, _) => format!(
                    "Writing in about {matter}, {lower} {feeling}{}. {}.",
                    dims[..n - 1]
                        .iter()
                        .map(|d| format!(", {d}"))
                        .collect::<String>(),
                    clause(&dims[n - 1..])
                ),
                _ => format!("{who} {feeling}. {}.", clause(&dims)),
            })
        }
    }
}

/// The plural form of a singular verb phrase's first verb ("stays kind" -> "stay kind"),
/// for a clause whose subject is "They".
fn plural_verb_phrase(phrase: &str) -> String {
    let (verb, rest) = phrase.split_once(' ').unwrap_or((phrase, ""));
    let plural = match verb {
        "is" => "are".to_string(),
        "has" => "have".to_string(),
        "does" => "do".to_string(),
        "goes" => "go".to_string(),
        v if v.ends_with("ies") => format!("{}y", &v[..v.len() - 3]),
        v if v.ends_with("ches") || v.ends_with("shes") || v.ends_with("sses") => {
            v[..v.len() - 2].to_string()
        }
        v if v.ends_with('s') && !v.ends_with("ss") => v[..v.len() - 1].to_string(),
        v => v.to_string(),
    };
    if rest.is_empty() {
        plural
    } else {
        format!("{plural} {rest}")
    }
}
