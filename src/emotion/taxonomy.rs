//! The emotion taxonomy as data: `emotion_anchors/taxonomy.json` -> typed [`Taxonomy`] of
//! 5 families, 22 emotions and three behavioural dimensions (politeness, urgency, trust),
//! whose cross product is the 594 [`Condition`]s.
//!
//! Condition ids are stable: they follow the file's order,
//! `id = emotion_index * 27 + politeness_index * 9 + urgency_index * 3 + trust_index`, and
//! every condition also has a readable key `emotion/politeness/urgency/trust`. Reordering
//! the file changes ids, so the loader insists on the expected counts.
//!
//! Architecture invariant: knows nothing about anchors, embeddings or the classifier.

use super::EmotionError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The number of conditions the paper defines (22 emotions x 3 x 3 x 3).
pub const CONDITION_COUNT: usize = 594;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub name: String,
    pub emotions: Vec<String>,
}

/// The taxonomy file as written.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Taxonomy {
    pub version: u32,
    #[serde(default)]
    pub source: String,
    pub families: Vec<Family>,
    pub politeness: Vec<String>,
    pub urgency: Vec<String>,
    pub trust: Vec<String>,
}

/// One of the 594 emotion conditions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Condition {
    pub id: usize,
    pub family: String,
    pub emotion: String,
    pub politeness: String,
    pub urgency: String,
    pub trust: String,
}

impl Condition {
    /// `emotion/politeness/urgency/trust`, e.g. `anxiety/warm/high/cautious`.
    pub fn key(&self) -> String {
        condition_key(&self.emotion, &self.politeness, &self.urgency, &self.trust)
    }
}

/// The readable key of a condition from its four labels.
pub fn condition_key(emotion: &str, politeness: &str, urgency: &str, trust: &str) -> String {
    format!("{emotion}/{politeness}/{urgency}/{trust}")
}

/// Label indices of one condition, in taxonomy order (the classifier's targets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LabelIndex {
    pub emotion: usize,
    pub politeness: usize,
    pub urgency: usize,
    pub trust: usize,
}

impl Taxonomy {
    /// The taxonomy shipped with the project (`emotion_anchors/taxonomy.json`).
    pub fn load(path: &Path) -> Result<Taxonomy, EmotionError> {
        let text = std::fs::read_to_string(path).map_err(|e| EmotionError::file(path, e))?;
        Self::parse(&text).map_err(|m| EmotionError::File {
            path: path.display().to_string(),
            message: m,
        })
    }

    /// Parse and check counts and uniqueness (the error names the field).
    pub fn parse(text: &str) -> Result<Taxonomy, String> {
        let t: Taxonomy = serde_json::from_str(text).map_err(|e| e.to_string())?;
        t.check()?;
        Ok(t)
    }

    fn check(&self) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for f in &self.families {
            if !seen.insert(f.name.as_str()) {
                return Err(format!("families: duplicate family '{}'", f.name));
            }
            if f.emotions.is_empty() {
                return Err(format!("families.{}: no emotions", f.name));
            }
        }
        let emotions = self.emotions();
        let mut seen_e = std::collections::BTreeSet::new();
        for (_, e) in &emotions {
            if !seen_e.insert(e.as_str()) {
                return Err(format!("families: emotion '{e}' listed twice"));
            }
        }
        for (field, values) in [
            ("politeness", &self.politeness),
            ("urgency", &self.urgency),
            ("trust", &self.trust),
        ] {
            if values.len() != 3 {
                return Err(format!(
                    "{field}: expected 3 levels, found {}",
                    values.len()
                ));
            }
            let set: std::collections::BTreeSet<_> = values.iter().collect();
            if set.len() != 3 {
                return Err(format!("{field}: duplicate level"));
            }
        }
        if self.condition_count() != CONDITION_COUNT {
            return Err(format!(
                "families: {} emotions give {} conditions, expected {CONDITION_COUNT}",
                emotions.len(),
                self.condition_count()
            ));
        }
        Ok(())
    }

    /// (family, emotion) in file order.
    pub fn emotions(&self) -> Vec<(String, String)> {
        self.families
            .iter()
            .flat_map(|f| f.emotions.iter().map(|e| (f.name.clone(), e.clone())))
            .collect()
    }

    pub fn emotion_names(&self) -> Vec<String> {
        self.emotions().into_iter().map(|(_, e)| e).collect()
    }

    pub fn family_names(&self) -> Vec<String> {
        self.families.iter().map(|f| f.name.clone()).collect()
    }

    pub fn family_of(&self, emotion: &str) -> Option<&str> {
        self.families
            .iter()
            .find(|f| f.emotions.iter().any(|e| e == emotion))
            .map(|f| f.name.as_str())
    }

    /// Check the emotion labels a task carries (each optional): every one must be in this
    /// taxonomy. The error names the field and the labels it may take. A family that is
    /// not its emotion's is no error ([`Taxonomy::family_disagreement`] says so): the
    /// authors' own task files carry such pairs.
    pub fn check_labels(
        &self,
        family: Option<&str>,
        emotion: Option<&str>,
        politeness: Option<&str>,
        urgency: Option<&str>,
        trust: Option<&str>,
    ) -> Result<(), String> {
        let one_of = |field: &str, value: &str, known: &[String]| -> Result<(), String> {
            if known.iter().any(|k| k == value) {
                Ok(())
            } else {
                let shown: Vec<&str> = known.iter().take(12).map(String::as_str).collect();
                Err(format!(
                    "{field} '{value}' is not in the taxonomy (one of: {}{})",
                    shown.join(", "),
                    if known.len() > shown.len() {
                        ", ..."
                    } else {
                        ""
                    }
                ))
            }
        };
        if let Some(f) = family {
            one_of("emotion_family", f, &self.family_names())?;
        }
        if let Some(e) = emotion {
            one_of("emotion_leaf", e, &self.emotion_names())?;
        }
        for (field, value, known) in [
            ("dimension_politeness", politeness, &self.politeness),
            ("dimension_urgency", urgency, &self.urgency),
            ("dimension_trust_in_agent", trust, &self.trust),
        ] {
            if let Some(v) = value {
                one_of(field, v, known)?;
            }
        }
        Ok(())
    }

    /// When a task's `emotion_leaf` belongs to another family than its `emotion_family`
    /// (both known labels), what disagrees, in words.
    pub fn family_disagreement(
        &self,
        family: Option<&str>,
        emotion: Option<&str>,
    ) -> Option<String> {
        let (f, e) = (family?, emotion?);
        let of = self.family_of(e)?;
        (f != of && self.family_names().iter().any(|n| n == f)).then(|| {
            format!("emotion_leaf '{e}' belongs to family '{of}', not emotion_family '{f}'")
        })
    }

    pub fn condition_count(&self) -> usize {
        self.emotions().len() * self.politeness.len() * self.urgency.len() * self.trust.len()
    }

    /// All conditions in id order.
    pub fn conditions(&self) -> Vec<Condition> {
        let mut out = Vec::with_capacity(self.condition_count());
        for (family, emotion) in self.emotions() {
            for p in &self.politeness {
                for u in &self.urgency {
                    for t in &self.trust {
                        out.push(Condition {
                            id: out.len(),
                            family: family.clone(),
                            emotion: emotion.clone(),
                            politeness: p.clone(),
                            urgency: u.clone(),
                            trust: t.clone(),
                        });
                    }
                }
            }
        }
        out
    }

    /// The label indices of a condition given by its four labels, if all are known.
    pub fn label_index(
        &self,
        emotion: &str,
        politeness: &str,
        urgency: &str,
        trust: &str,
    ) -> Option<LabelIndex> {
        Some(LabelIndex {
            emotion: self.emotion_names().iter().position(|e| e == emotion)?,
            politeness: self.politeness.iter().position(|p| p == politeness)?,
            urgency: self.urgency.iter().position(|u| u == urgency)?,
            trust: self.trust.iter().position(|t| t == trust)?,
        })
    }

    /// The condition id of a label index.
    pub fn condition_id(&self, l: LabelIndex) -> usize {
        let (np, nu, nt) = (self.politeness.len(), self.urgency.len(), self.trust.len());
        ((l.emotion * np + l.politeness) * nu + l.urgency) * nt + l.trust
    }

    /// The label index of a condition id.
    pub fn labels_of(&self, id: usize) -> LabelIndex {
        let (np, nu, nt) = (self.politeness.len(), self.urgency.len(), self.trust.len());
        LabelIndex {
            trust: id % nt,
            urgency: (id / nt) % nu,
            politeness: (id / (nt * nu)) % np,
            emotion: id / (nt * nu * np),
        }
    }
}
