//! The 5,940 anchor instructions (`emotion_anchors/anchors.jsonl`): the scripted
//! compositional generator behind `tracer anchors generate`, reading and writing the JSONL
//! file, and its validation (completeness 594 x 10, uniqueness, known labels, length).
//!
//! An anchor tells the simulated user how it feels and how it communicates (politeness,
//! urgency, trust), in the second person and in 30 to 60 words ([`INSTRUCTION_WORDS`]):
//! six short directives and four situational descriptions per condition ([`Style`]).
//! Dimension sentences are sometimes stated against the grain of the feeling ("however
//! upset you are, you stay courteous") so the classifier learns them apart. Beside the
//! published ten, [`paraphrases`] writes the training-only texts: eight per condition,
//! mostly third-person descriptions (the register a feeling generator writes in), four in
//! a described register, four in an implied one (second person, the feeling shown by what
//! happened and what the customer does, from `implied.toml`), and the first generator's
//! texts that are not published (three first-person voices per condition, and
//! descriptions outside 30-60 words). Every random choice
//! comes from a ChaCha stream derived from (seed, stream, condition key), so both sets are
//! pure functions of the seed and the phrase banks; a duplicate text is redrawn, so no two
//! texts are alike.
//!
//! This module holds the anchors, their styles and the generation of both sets;
//! `compose.rs` writes one text in a style, `file.rs` reads, writes and validates the file.
//!
//! Architecture invariant: knows the taxonomy and the phrase banks, not embeddings or models.

use super::EmotionError;
use super::taxonomy::{Condition, Taxonomy, condition_key};
use crate::seed::derive_rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

mod compose;
mod file;

pub use compose::compose;
use compose::compose_with;
pub use file::{AnchorProblem, anchors_dir, load, parse_jsonl, to_jsonl, validate};

/// Anchors per condition (the paper's 10).
pub const ANCHORS_PER_CONDITION: usize = 10;

/// The longest anchor in sentences (a first-person anchor is four short utterances, one
/// of which may itself be two sentences, e.g. "Typical. This happened last time too.").
pub const MAX_SENTENCES: usize = 6;

/// One line of `anchors.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    pub condition_id: usize,
    pub family: String,
    pub emotion: String,
    pub politeness: String,
    pub urgency: String,
    pub trust: String,
    pub anchor_index: usize,
    pub text: String,
}

impl Anchor {
    /// Condition `c`'s anchor (or training text) at `anchor_index`.
    pub fn of(c: &Condition, anchor_index: usize, text: String) -> Self {
        Anchor {
            condition_id: c.id,
            family: c.family.clone(),
            emotion: c.emotion.clone(),
            politeness: c.politeness.clone(),
            urgency: c.urgency.clone(),
            trust: c.trust.clone(),
            anchor_index,
            text,
        }
    }

    pub fn condition_key(&self) -> String {
        condition_key(&self.emotion, &self.politeness, &self.urgency, &self.trust)
    }
}

/// How an anchor is written. The published ten per condition are directives and
/// situational descriptions ([`ANCHOR_STYLES`]); the other styles are only ever training
/// texts (the customer's own voice, and how a feeling generator writes: not instructions
/// to a simulated user).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Two to four second-person sentences: the feeling, then how to communicate.
    Directive,
    /// A longer second-person description that opens with the customer's situation.
    Situational,
    /// The customer's own voice: what they feel and how they talk, in the first person.
    FirstPerson,
    /// A third-person description of the customer ("The customer is ... They ...").
    ThirdPerson,
    /// A third-person description in the singular, the way a feeling generator writes
    /// ("The caller is uneasy about a seat change, stays pleasant and is not in any rush"),
    /// from its own phrase banks (`banks.toml`, `*_described`). Training paraphrases only.
    Described,
    /// Second-person sentences that imply the feeling and each level through what
    /// happened and what the customer does ("Your train boards in ten minutes and you keep
    /// checking the time"), from `implied.toml`. Training paraphrases only.
    Implied,
    /// An implied emotion sentence with each level in the words people use to describe a
    /// caller's manner ("You are curt and terse", "You do not believe what the agent tells
    /// you"), from `implied.toml`'s `cued_*` tables. Training paraphrases only.
    Cued,
}

/// Styles of the published anchors, by anchor index: all second-person instructions to
/// the simulated user (trait plus behaviour), of [`INSTRUCTION_WORDS`] words.
pub const ANCHOR_STYLES: [Style; ANCHORS_PER_CONDITION] = [
    Style::Directive,
    Style::Directive,
    Style::Directive,
    Style::Directive,
    Style::Directive,
    Style::Directive,
    Style::Situational,
    Style::Situational,
    Style::Situational,
    Style::Situational,
];

/// How long a published anchor is, in words: the register of the paper's and the public
/// benchmark's emotion instructions.
pub const INSTRUCTION_WORDS: std::ops::RangeInclusive<usize> = 30..=60;

/// Whether a text has the published anchors' length.
pub fn fits(text: &str) -> bool {
    INSTRUCTION_WORDS.contains(&text.split_whitespace().count())
}

/// The styles of the first generator's ten per condition (stream "anchors"), published
/// until every anchor had to be a second-person instruction of [`INSTRUCTION_WORDS`]
/// words: the ones that qualify are still published, the rest (three first-person voices
/// per condition and the longer descriptions) are training texts ([`paraphrases`]), so the
/// mapper keeps every text it learned from.
const FIRST_STYLES: [Style; ANCHORS_PER_CONDITION] = [
    Style::Directive,
    Style::Directive,
    Style::Directive,
    Style::Directive,
    Style::Situational,
    Style::Situational,
    Style::Situational,
    Style::FirstPerson,
    Style::FirstPerson,
    Style::FirstPerson,
];

/// Training paraphrases per condition beside the published ten, and their styles.
pub const PARAPHRASE_STYLES: [Style; 8] = [
    Style::ThirdPerson,
    Style::ThirdPerson,
    Style::ThirdPerson,
    Style::ThirdPerson,
    Style::ThirdPerson,
    Style::Directive,
    Style::FirstPerson,
    Style::Situational,
];

/// Described-register paraphrases per condition, after the [`PARAPHRASE_STYLES`] ones
/// (their own RNG stream, so adding them changed none of the earlier paraphrases). Chosen on
/// the evaluation sets' dev half: without them, politeness and urgency of third-person
/// feelings were the mapper's weakest labels.
pub const DESCRIBED_PARAPHRASES: usize = 4;

/// Implied-register paraphrases per condition, after the described ones (their own RNG
/// stream). People who write emotion instructions mostly imply the emotion; the anchor
/// banks name it.
pub const IMPLIED_PARAPHRASES: usize = 4;

/// Cued-register paraphrases per condition, after the implied ones (their own RNG stream,
/// so adding them changed none of the earlier paraphrases). Chosen on the dev half of the
/// `narratives` evaluation register, where tone words ("curt", "flat") read as neutral and
/// negated trust ("you do not believe ...") as trusting.
pub const CUED_PARAPHRASES: usize = 2;

/// Generate all anchors: 10 per condition, in condition-id then anchor-index order. Each
/// style's slots take the first generator's texts of that style that fit
/// ([`FIRST_STYLES`], in order), then new texts of the style that fit, drawn from the
/// condition's own "instructions" stream and unlike every text before them.
pub fn generate(taxonomy: &Taxonomy, seed: u64) -> Result<Vec<Anchor>, EmotionError> {
    let first = first_generation(taxonomy, seed)?;
    let mut seen: BTreeSet<String> = first.iter().map(|a| a.text.clone()).collect();
    let mut out = Vec::with_capacity(taxonomy.condition_count() * ANCHORS_PER_CONDITION);
    for (c, earlier) in taxonomy
        .conditions()
        .into_iter()
        .zip(first.chunks(FIRST_STYLES.len()))
    {
        let mut rng = derive_rng(seed, &["instructions", &c.key()]);
        let mut kept: Vec<(Style, &str)> = FIRST_STYLES
            .iter()
            .zip(earlier)
            .filter(|(_, a)| fits(&a.text))
            .map(|(style, a)| (*style, a.text.as_str()))
            .collect();
        for (i, style) in ANCHOR_STYLES.iter().enumerate() {
            let text = match kept.iter().position(|(s, _)| s == style) {
                Some(k) => kept.remove(k).1.to_string(),
                None => draw(&c, *style, &mut rng, &mut seen, true)?,
            };
            out.push(Anchor::of(&c, i, text));
        }
    }
    Ok(out)
}

/// The first generator's ten per condition, as it wrote them (see [`FIRST_STYLES`]).
fn first_generation(taxonomy: &Taxonomy, seed: u64) -> Result<Vec<Anchor>, EmotionError> {
    generate_styled(
        taxonomy,
        seed,
        "anchors",
        &FIRST_STYLES,
        &mut BTreeSet::new(),
        0,
    )
}

/// The training paraphrases beside the published anchors: [`PARAPHRASE_STYLES`],
/// [`DESCRIBED_PARAPHRASES`], [`IMPLIED_PARAPHRASES`] and [`CUED_PARAPHRASES`] per condition, none equal to an anchor, then the first
/// generator's texts that are not published (its first-person voices and longer
/// descriptions), with `anchor_index` 10.. so they are never chosen as a task's emotion
/// instruction. A pure function of the seed, the banks and the published anchors.
pub fn paraphrases(
    taxonomy: &Taxonomy,
    seed: u64,
    anchors: &[Anchor],
) -> Result<Vec<Anchor>, EmotionError> {
    let first = first_generation(taxonomy, seed)?;
    let mut seen: BTreeSet<String> = first
        .iter()
        .chain(anchors)
        .map(|a| a.text.clone())
        .collect();
    let mut out = generate_styled(
        taxonomy,
        seed,
        "paraphrases",
        &PARAPHRASE_STYLES,
        &mut seen,
        ANCHORS_PER_CONDITION,
    )?;
    let described = ANCHORS_PER_CONDITION + PARAPHRASE_STYLES.len();
    out.extend(generate_styled(
        taxonomy,
        seed,
        "described",
        &[Style::Described; DESCRIBED_PARAPHRASES],
        &mut seen,
        described,
    )?);
    let implied = described + DESCRIBED_PARAPHRASES;
    out.extend(generate_styled(
        taxonomy,
        seed,
        "implied",
        &[Style::Implied; IMPLIED_PARAPHRASES],
        &mut seen,
        implied,
    )?);
    let cued = implied + IMPLIED_PARAPHRASES;
    out.extend(generate_styled(
        taxonomy,
        seed,
        "cued",
        &[Style::Cued; CUED_PARAPHRASES],
        &mut seen,
        cued,
    )?);
    let published: BTreeSet<&str> = anchors.iter().map(|a| a.text.as_str()).collect();
    let mut next: BTreeMap<usize, usize> = BTreeMap::new();
    for a in first {
        if published.contains(a.text.as_str()) {
            continue;
        }
        let index = next
            .entry(a.condition_id)
            .or_insert(cued + CUED_PARAPHRASES);
        out.push(Anchor {
            anchor_index: *index,
            ..a
        });
        *index += 1;
    }
    Ok(out)
}

/// A new text of `style` for condition `c` that no earlier text equals; a `published` one
/// is brief and fits [`INSTRUCTION_WORDS`].
fn draw(
    c: &Condition,
    style: Style,
    rng: &mut ChaCha8Rng,
    seen: &mut BTreeSet<String>,
    published: bool,
) -> Result<String, EmotionError> {
    for _ in 0..10_000 {
        let t = compose_with(c, style, rng, published)?;
        let keep = |t: &str| !published || fits(t);
        if keep(&t) && seen.insert(t.clone()) {
            return Ok(t);
        }
    }
    Err(EmotionError::Invalid(format!(
        "could not find a new anchor for {}",
        c.key()
    )))
}

fn generate_styled(
    taxonomy: &Taxonomy,
    seed: u64,
    stream: &str,
    styles: &[Style],
    seen: &mut BTreeSet<String>,
    first_index: usize,
) -> Result<Vec<Anchor>, EmotionError> {
    let mut out = Vec::with_capacity(taxonomy.condition_count() * styles.len());
    for c in taxonomy.conditions() {
        let mut rng = derive_rng(seed, &[stream, &c.key()]);
        for (i, style) in styles.iter().enumerate() {
            let text = draw(&c, *style, &mut rng, seen, false)?;
            out.push(Anchor::of(&c, first_index + i, text));
        }
    }
    Ok(out)
}
