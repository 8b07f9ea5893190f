//! The anchors file (`emotion_anchors/anchors.jsonl`): its JSONL text written and read,
//! and the validation of a set of anchors against the taxonomy (completeness 594 x 10,
//! uniqueness, known labels, length).
//!
//! Architecture invariant: knows the taxonomy and the phrase banks, not embeddings or models.

use super::{ANCHORS_PER_CONDITION, Anchor, INSTRUCTION_WORDS, MAX_SENTENCES, fits};
use crate::emotion::EmotionError;
use crate::emotion::taxonomy::Taxonomy;
use std::collections::BTreeMap;
use std::path::Path;

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
/// agree with the taxonomy and the condition id, 2 to [`MAX_SENTENCES`] sentences and
/// [`INSTRUCTION_WORDS`] words.
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
        if !(2..=MAX_SENTENCES).contains(&sentences) {
            bad(format!(
                "text has {sentences} sentences, expected 2 to {MAX_SENTENCES}"
            ));
        }
        if !fits(&a.text) {
            bad(format!(
                "text has {} words, expected {} to {}",
                a.text.split_whitespace().count(),
                INSTRUCTION_WORDS.start(),
                INSTRUCTION_WORDS.end()
            ));
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
