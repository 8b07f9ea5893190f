//! The 5,940 anchor instructions (`emotion_anchors/anchors.jsonl`): the scripted
//! compositional generator behind `tracer anchors generate`, reading and writing the JSONL
//! file, and its validation (completeness 594 x 10, uniqueness, known labels).
//!
//! An anchor is 2–4 second-person sentences: how the simulated user feels (the emotion, from
//! a state phrase with an optional cause and an optional "how it shows" sentence) and how it
//! communicates (one sentence each for politeness, urgency and trust, in a seeded order,
//! sometimes joined with semicolons). Every random choice comes from a ChaCha stream derived
//! from (seed, "anchors", condition key), so the file is a pure function of the seed and the
//! phrase banks; a duplicate text is redrawn, so no two anchors are alike.
//!
//! Architecture invariant: knows the taxonomy and the phrase banks, not embeddings or models.

use super::EmotionError;
use super::banks;
use super::taxonomy::{Condition, Taxonomy, condition_key};
use crate::seed::derive_rng;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Anchors per condition (the paper's 10).
pub const ANCHORS_PER_CONDITION: usize = 10;

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
    pub fn condition_key(&self) -> String {
        condition_key(&self.emotion, &self.politeness, &self.urgency, &self.trust)
    }
}

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

/// One candidate anchor text for a condition.
fn compose(c: &Condition, rng: &mut ChaCha8Rng) -> Result<String, EmotionError> {
    let (_, states, shows) = banks::EMOTIONS
        .iter()
        .find(|(e, _, _)| *e == c.emotion)
        .ok_or_else(|| EmotionError::Invalid(format!("no phrase bank for '{}'", c.emotion)))?;
    let causes = bank(banks::CAUSES, &c.family)?;
    let frame = pick(rng, banks::STATE_FRAMES);
    let state = format!(
        "{}{}.",
        frame.replace("{}", pick(rng, states)),
        pick(rng, causes)
    );
    let mut units = vec![state];
    if rng.random_bool(0.5) {
        units.push(pick(rng, shows).to_string());
    }
    let mut dims = vec![
        pick(rng, bank(banks::POLITENESS, &c.politeness)?).to_string(),
        pick(rng, bank(banks::URGENCY, &c.urgency)?).to_string(),
        pick(rng, bank(banks::TRUST, &c.trust)?).to_string(),
    ];
    dims.shuffle(rng);
    units.extend(dims);
    // 4 or 5 units become 2..=4 sentences by joining neighbours with a semicolon; no
    // sentence holds more than two units, so none runs on.
    let n = units.len();
    let target = rng.random_range(n.div_ceil(2).max(2)..=4usize.min(n));
    // Choose which neighbours to join: random disjoint pairs (redrawn if a choice leaves no
    // joinable pair, e.g. joining the middle two of four).
    let merges = n - target;
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
        if joined.contains(&i) {
            sentences.push(join_semicolon(&units[i], &units[i + 1]));
            i += 2;
        } else {
            sentences.push(units[i].clone());
            i += 1;
        }
    }
    let units = sentences;
    Ok(units.join(" "))
}

/// Generate all anchors: 10 per condition, in condition-id then anchor-index order.
pub fn generate(taxonomy: &Taxonomy, seed: u64) -> Result<Vec<Anchor>, EmotionError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(taxonomy.condition_count() * ANCHORS_PER_CONDITION);
    for c in taxonomy.conditions() {
        let mut rng = derive_rng(seed, &["anchors", &c.key()]);
        for index in 0..ANCHORS_PER_CONDITION {
            let mut text = None;
            for _ in 0..10_000 {
                let t = compose(&c, &mut rng)?;
                if seen.insert(t.clone()) {
                    text = Some(t);
                    break;
                }
            }
            let text = text.ok_or_else(|| {
                EmotionError::Invalid(format!("could not find a new anchor for {}", c.key()))
            })?;
            out.push(Anchor {
                condition_id: c.id,
                family: c.family.clone(),
                emotion: c.emotion.clone(),
                politeness: c.politeness.clone(),
                urgency: c.urgency.clone(),
                trust: c.trust.clone(),
                anchor_index: index,
                text,
            });
        }
    }
    Ok(out)
}

/// The JSONL text of a list of anchors (one object per line, trailing newline).
pub fn to_jsonl(anchors: &[Anchor]) -> String {
    let mut s = String::new();
    for a in anchors {
        // Serialising a plain struct of strings and integers cannot fail.
        s.push_str(&serde_json::to_string(a).unwrap_or_default());
        s.push('\n');
    }
    s
}

/// Parse `anchors.jsonl` text; the error names the line.
pub fn parse_jsonl(path: &Path, text: &str) -> Result<Vec<Anchor>, EmotionError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let a: Anchor = serde_json::from_str(line).map_err(|e| EmotionError::File {
            path: format!("{}:{}", path.display(), i + 1),
            message: e.to_string(),
        })?;
        out.push(a);
    }
    Ok(out)
}

/// Read and validate the anchors file against the taxonomy.
pub fn load(path: &Path, taxonomy: &Taxonomy) -> Result<Vec<Anchor>, EmotionError> {
    let text = std::fs::read_to_string(path).map_err(|e| EmotionError::file(path, e))?;
    let anchors = parse_jsonl(path, &text)?;
    let problems = validate(taxonomy, &anchors);
    match problems.first() {
        None => Ok(anchors),
        Some(p) => Err(EmotionError::File {
            path: format!("{}:{}", path.display(), p.line),
            message: if problems.len() > 1 {
                format!("{} (and {} more problems)", p.message, problems.len() - 1)
            } else {
                p.message.clone()
            },
        }),
    }
}

/// One problem found by [`validate`]; `line` is 1-based (0 = the file as a whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorProblem {
    pub line: usize,
    pub message: String,
}

/// Completeness (every condition x index 0..10 exactly once), unique texts, labels that
/// agree with the taxonomy and the condition id, and 2–4 sentences of text.
pub fn validate(taxonomy: &Taxonomy, anchors: &[Anchor]) -> Vec<AnchorProblem> {
    let conditions = taxonomy.conditions();
    let mut problems = Vec::new();
    let mut slots: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut texts: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, a) in anchors.iter().enumerate() {
        let line = i + 1;
        let mut bad = |m: String| {
            problems.push(AnchorProblem { line, message: m });
        };
        let Some(c) = conditions.get(a.condition_id) else {
            bad(format!("unknown condition_id {}", a.condition_id));
            continue;
        };
        if (&c.family, &c.emotion, &c.politeness, &c.urgency, &c.trust)
            != (&a.family, &a.emotion, &a.politeness, &a.urgency, &a.trust)
        {
            bad(format!(
                "labels {}/{} do not match condition {} ({}/{})",
                a.family,
                a.condition_key(),
                c.id,
                c.family,
                c.key()
            ));
        }
        if a.anchor_index >= ANCHORS_PER_CONDITION {
            bad(format!(
                "anchor_index {} is not in 0..{ANCHORS_PER_CONDITION}",
                a.anchor_index
            ));
        }
        if let Some(first) = slots.insert((a.condition_id, a.anchor_index), line) {
            bad(format!(
                "condition {} anchor {} repeats line {first}",
                a.condition_id, a.anchor_index
            ));
        }
        let sentences = sentence_count(&a.text);
        if !(2..=4).contains(&sentences) {
            bad(format!("text has {sentences} sentences, expected 2 to 4"));
        }
        if let Some(first) = texts.insert(a.text.as_str(), line) {
            bad(format!("text duplicates line {first}"));
        }
    }
    let expected = conditions.len() * ANCHORS_PER_CONDITION;
    if anchors.len() != expected || slots.len() != expected {
        let missing = conditions
            .iter()
            .flat_map(|c| (0..ANCHORS_PER_CONDITION).map(move |k| (c.id, k)))
            .find(|k| !slots.contains_key(k));
        problems.push(AnchorProblem {
            line: 0,
            message: format!(
                "{} anchors, expected {expected} ({} conditions x {ANCHORS_PER_CONDITION}){}",
                anchors.len(),
                conditions.len(),
                missing
                    .map(|(c, k)| format!("; first missing: condition {c} anchor {k}"))
                    .unwrap_or_default()
            ),
        });
    }
    problems
}

/// Sentence ends: '.', '!' or '?' followed by whitespace or the end of the text (so a quoted
/// "'seriously?'" inside a sentence does not count).
fn sentence_count(text: &str) -> usize {
    let chars: Vec<char> = text.trim_end().chars().collect();
    (0..chars.len())
        .filter(|&i| {
            matches!(chars[i], '.' | '!' | '?')
                && chars.get(i + 1).is_none_or(|c| c.is_whitespace())
        })
        .count()
}

/// Where the project keeps the emotion data.
pub fn anchors_dir(root: &Path) -> std::path::PathBuf {
    root.join("emotion_anchors")
}
