//! Phrase banks of the scripted anchor generator, written for this project, as data
//! (`banks.toml`, compiled in): each emotion's states and shows, and for each level of
//! politeness, urgency and trust the sentences telling the simulated user how to
//! communicate, in first, second and third person, terse and described. The file is read
//! once; a malformed one is a build-time bug, so the first use panics naming the field (a
//! unit test reads it on every `cargo test`).
//!
//! Architecture invariant: plain data; the generator in `anchors.rs` decides how to combine.

use serde::Deserialize;
use std::sync::LazyLock;

/// A bank keyed by a label (an emotion, a family or a dimension level).
pub type Keyed = [(&'static str, &'static [&'static str])];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    state_frames: Vec<String>,
    matters_described: Vec<String>,
    emotions: Vec<EmotionRow>,
    causes: Vec<KeyedRow>,
    politeness: Vec<KeyedRow>,
    urgency: Vec<KeyedRow>,
    trust: Vec<KeyedRow>,
    emotion_first: Vec<KeyedRow>,
    emotion_third: Vec<KeyedRow>,
    situations: Vec<KeyedRow>,
    politeness_first: Vec<KeyedRow>,
    urgency_first: Vec<KeyedRow>,
    trust_first: Vec<KeyedRow>,
    politeness_third: Vec<KeyedRow>,
    urgency_third: Vec<KeyedRow>,
    trust_third: Vec<KeyedRow>,
    contrasts: Vec<ContrastRow>,
    politeness_described: Vec<KeyedRow>,
    urgency_described: Vec<KeyedRow>,
    trust_described: Vec<KeyedRow>,
    politeness_terse: Vec<KeyedRow>,
    urgency_terse: Vec<KeyedRow>,
    trust_terse: Vec<KeyedRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmotionRow {
    name: String,
    states: Vec<String>,
    shows: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyedRow {
    key: String,
    phrases: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContrastRow {
    dimension: String,
    level: String,
    families: Vec<String>,
    sentences: Vec<String>,
}

/// The banks, with `'static` text (the file is compiled in and read once per process); each
/// bank's meaning is documented beside it in `banks.toml`.
pub struct Banks {
    /// (emotion, states, shows).
    pub emotions: &'static [(
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    )],
    /// Frames that turn a state into a sentence ("{}" is the state).
    pub state_frames: &'static [&'static str],
    /// Per family: causes appended to the state after a comma ("" = no cause).
    pub causes: &'static Keyed,
    /// Per level of each dimension: second-person sentences.
    pub politeness: &'static Keyed,
    pub urgency: &'static Keyed,
    pub trust: &'static Keyed,
    /// Per emotion / level: first-person and third-person registers.
    pub emotion_first: &'static Keyed,
    pub emotion_third: &'static Keyed,
    /// Per family: situations a state is set in ("{}" is the state).
    pub situations: &'static Keyed,
    pub politeness_first: &'static Keyed,
    pub urgency_first: &'static Keyed,
    pub trust_first: &'static Keyed,
    pub politeness_third: &'static Keyed,
    pub urgency_third: &'static Keyed,
    pub trust_third: &'static Keyed,
    /// (dimension, level, the families it is written for, sentences): a level stated
    /// against the grain of the emotion's family ("upset, yet courteous").
    pub contrasts: &'static [(
        &'static str,
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
    )],
    /// The described register: a customer described from outside.
    pub politeness_described: &'static Keyed,
    pub urgency_described: &'static Keyed,
    pub trust_described: &'static Keyed,
    /// What a described customer is contacting support about (neutral on every dimension).
    pub matters_described: &'static [&'static str],
    /// The terse register: one short clause per level.
    pub politeness_terse: &'static Keyed,
    pub urgency_terse: &'static Keyed,
    pub trust_terse: &'static Keyed,
}

fn text(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn list(v: Vec<String>) -> &'static [&'static str] {
    Box::leak(
        v.into_iter()
            .map(text)
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
}

fn keyed(v: Vec<KeyedRow>) -> &'static Keyed {
    Box::leak(
        v.into_iter()
            .map(|r| (text(r.key), list(r.phrases)))
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    )
}

/// Parse a banks file (the built-in one, or a test's).
fn parse(source: &str) -> Result<Banks, String> {
    let f: File = toml::from_str(source).map_err(|e| format!("src/emotion/banks.toml: {e}"))?;
    Ok(Banks {
        emotions: Box::leak(
            f.emotions
                .into_iter()
                .map(|r| (text(r.name), list(r.states), list(r.shows)))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        ),
        state_frames: list(f.state_frames),
        causes: keyed(f.causes),
        politeness: keyed(f.politeness),
        urgency: keyed(f.urgency),
        trust: keyed(f.trust),
        emotion_first: keyed(f.emotion_first),
        emotion_third: keyed(f.emotion_third),
        situations: keyed(f.situations),
        politeness_first: keyed(f.politeness_first),
        urgency_first: keyed(f.urgency_first),
        trust_first: keyed(f.trust_first),
        politeness_third: keyed(f.politeness_third),
        urgency_third: keyed(f.urgency_third),
        trust_third: keyed(f.trust_third),
        contrasts: Box::leak(
            f.contrasts
                .into_iter()
                .map(|r| {
                    (
                        text(r.dimension),
                        text(r.level),
                        list(r.families),
                        list(r.sentences),
                    )
                })
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        ),
        politeness_described: keyed(f.politeness_described),
        urgency_described: keyed(f.urgency_described),
        trust_described: keyed(f.trust_described),
        matters_described: list(f.matters_described),
        politeness_terse: keyed(f.politeness_terse),
        urgency_terse: keyed(f.urgency_terse),
        trust_terse: keyed(f.trust_terse),
    })
}

static BANKS: LazyLock<Banks> =
    LazyLock::new(|| parse(include_str!("banks.toml")).unwrap_or_else(|e| panic!("{e}")));

/// The built-in banks.
pub fn banks() -> &'static Banks {
    &BANKS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_banks_parse_and_every_bank_has_phrases() {
        let b = banks();
        assert_eq!(b.emotions.len(), 22);
        assert!(
            b.emotions
                .iter()
                .all(|(_, s, w)| !s.is_empty() && !w.is_empty())
        );
        for bank in [b.causes, b.politeness, b.urgency, b.trust, b.emotion_first] {
            assert!(bank.iter().all(|(k, p)| !k.is_empty() && !p.is_empty()));
        }
        assert!(b.state_frames.iter().all(|f| f.contains("{}")));
        assert!(
            b.contrasts
                .iter()
                .all(|(_, _, f, s)| !f.is_empty() && !s.is_empty())
        );
    }

    #[test]
    fn an_unknown_field_is_named() {
        let e = parse("state_frames = []\nstates = []").err().unwrap();
        assert!(e.contains("banks.toml") && e.contains("states"), "{e}");
    }
}
