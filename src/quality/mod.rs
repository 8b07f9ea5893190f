//! Data quality: what a reviewer would check by eye, measured on every task and kept
//! trajectory, and the gates that refuse what a reviewer would refuse — for scripted and
//! model output alike.
//!
//! - [`coherence`]: compositions that repeat, overwrite or undo their own writes, cancel
//!   what they created, or use what they cancelled.
//! - [`knowable`]: instructions that name ids the customer cannot know.
//! - [`language`]: mechanical language errors.
//! - [`form`]: what a model-written instruction must not carry besides the instruction
//!   (preamble, Markdown, markup, the customer's own voice, words to the agent, length).
//! - [`brief`]: later mentions of a booking, traveler or card said briefly (scripted drafts).
//! - [`voice`]: whether a simulated user's turns voice its emotion family.
//! - this module: per-task measures ([`measure_task`]) and the per-domain table of
//!   `tracer quality` ([`Summary`], [`table`]).
//!
//! Architecture invariant: pure functions of task / rollout records and environments; the
//! artifacts are read by the caller. Nothing of stages or roles.

pub mod answers;
pub mod brief;
pub mod coherence;
pub mod form;
pub mod knowable;
pub mod language;
pub mod voice;

use crate::artifact::TaskRecord;
use crate::domain::{Environment, ToolKind};
use std::collections::{BTreeMap, BTreeSet};

/// The measures of one task.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskQuality {
    pub incoherent: Option<coherence::Incoherence>,
    /// The one incoherence is a change of mind the instruction states (not counted as
    /// incoherent).
    pub change_of_mind: bool,
    /// Whether the task asks to hear something (a read the customer requested).
    pub asks: bool,
    /// Requested reads whose values the task's `outputs` do not all carry, or whose values
    /// no reference call shows (the agent following the reference would have to make
    /// them up: a film's title behind a show's movie id that no call looked up).
    pub unanswered: usize,
    pub unknowable: Option<knowable::Unknowable>,
    pub words: usize,
    pub actions: usize,
    /// Language hits in the instruction and the emotion instruction.
    pub language: Vec<language::Rule>,
}

/// Text that a task shows the simulated user: the instruction and the emotion instruction.
pub fn task_texts(task: &TaskRecord) -> Vec<&str> {
    [
        task.instruction.as_deref(),
        task.emotion_instruction.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Measure one task on `env` (the database of its split): one replay.
pub fn measure_task(env: &dyn Environment, task: &TaskRecord) -> TaskQuality {
    measure_steps(env, task, &coherence::replay_steps(env, task))
}

/// The reads the customer asks to hear (a read with a request sentence), each with what it
/// tells ([`coherence::Step::told`]).
fn requested_reads<'a>(
    task: &'a TaskRecord,
    steps: &'a [coherence::Step],
) -> impl Iterator<Item = &'a coherence::Step> {
    steps.iter().enumerate().filter_map(|(j, s)| {
        let asked = task.requests.get(j).is_some_and(Option::is_some);
        (s.kind == ToolKind::Read && asked).then_some(s)
    })
}

/// Requested reads whose values the task's `outputs` do not all carry, or whose values no
/// reference call shows (see [`TaskQuality::unanswered`]), from the replayed steps.
pub fn unanswered(task: &TaskRecord, steps: &[coherence::Step]) -> usize {
    let shown = |w: &String| steps.iter().any(|x| x.output.contains(w.as_str()));
    requested_reads(task, steps)
        .filter(|s| {
            s.told.is_empty() || !s.told.iter().all(|w| task.outputs.contains(w) && shown(w))
        })
        .count()
}

/// Measure one task from its replayed steps (see [`coherence::replay_steps`]).
pub fn measure_steps(
    env: &dyn Environment,
    task: &TaskRecord,
    steps: &[coherence::Step],
) -> TaskQuality {
    let ids = coherence::customer_ids(task);
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let requests = &task.requests;
    let asks = requested_reads(task, steps).next().is_some();
    let unanswered = unanswered(task, steps);
    let instruction = task.instruction.as_deref().unwrap_or_default();
    let records = env.customer_records(&task.user_id).join("\n");
    let findings = coherence::check_steps(steps, &ids);
    let change_of_mind = coherence::is_stated_change_of_mind(&findings, instruction);
    TaskQuality {
        incoherent: (!change_of_mind)
            .then(|| findings.first().map(|f| f.kind))
            .flatten(),
        change_of_mind,
        asks,
        unanswered,
        unknowable: knowable::check(instruction, steps, &records, env.internal_id_fields())
            .or_else(|| knowable::check_made_references(requests, steps, &records))
            .map(|f| f.kind),
        words: instruction.split_whitespace().count(),
        actions: steps.len(),
        language: task_texts(task)
            .into_iter()
            .flat_map(language::check)
            .map(|h| h.rule)
            .collect(),
    }
}

/// Words of a content n-gram: lower-case words without digits (values differ per task;
/// the phrasing around them is what repeats).
fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty() && !w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
        .collect()
}

/// The share of tasks containing the most frequent content 6-gram, and how many distinct
/// 6-grams appear in at least a quarter of the tasks.
pub fn ngram_repetition(instructions: &[&str]) -> (f64, usize) {
    if instructions.is_empty() {
        return (0.0, 0);
    }
    let mut df: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for text in instructions {
        let w = content_words(text);
        let grams: BTreeSet<&[String]> = w.windows(6).collect();
        for g in grams {
            *df.entry(g.to_vec()).or_default() += 1;
        }
    }
    let n = instructions.len() as f64;
    let top = df.values().copied().max().unwrap_or(0) as f64 / n;
    let common = df.values().filter(|&&c| c as f64 >= 0.25 * n).count();
    (top, common)
}

/// The opening of an instruction: its first 12 words after the sentence that gives the
/// customer's name (every task of a customer starts with it).
fn opening(text: &str) -> String {
    let body = match text.strip_prefix("Your name is ") {
        Some(rest) => rest.split_once(". ").map_or(rest, |(_, r)| r),
        None => text,
    };
    content_words(body)
        .into_iter()
        .take(12)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The share of tasks whose opening (first 12 request words) another task shares.
pub fn shared_openings(instructions: &[&str]) -> f64 {
    if instructions.is_empty() {
        return 0.0;
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for t in instructions {
        *counts.entry(opening(t)).or_default() += 1;
    }
    let shared: usize = counts.values().filter(|&&c| c > 1).sum();
    shared as f64 / instructions.len() as f64
}

/// Median, 90th percentile and maximum (nearest-rank) of some counts.
pub fn spread(values: &[usize]) -> (usize, usize, usize) {
    if values.is_empty() {
        return (0, 0, 0);
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (rank(0.5), rank(0.9), v[v.len() - 1])
}

/// The quality figures of one domain and split.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub tasks: usize,
    pub incoherent: BTreeMap<&'static str, usize>,
    /// Tasks with one stated change of mind.
    pub changes_of_mind: usize,
    pub asking: usize,
    /// Tasks that ask and whose every requested read has its values among `outputs`.
    pub answered: usize,
    pub unknowable: BTreeMap<&'static str, usize>,
    pub words: (usize, usize, usize),
    pub actions: (usize, usize, usize),
    pub long_tasks: usize,
    pub top_ngram: f64,
    pub common_ngrams: usize,
    pub shared_openings: f64,
    pub language: BTreeMap<&'static str, usize>,
    pub conditions: usize,
    /// Share of each politeness / urgency / trust value among the tasks with labels.
    pub behaviour: BTreeMap<String, f64>,
}

/// Gold actions from which a task counts as long (the public hand-checked tasks: 7%).
pub const LONG_TASK: usize = 10;

/// Summarise the tasks of one domain and split and their measures.
pub fn summarise(tasks: &[&TaskRecord], measures: &[TaskQuality]) -> Summary {
    let mut s = Summary {
        tasks: tasks.len(),
        ..Summary::default()
    };
    for m in measures {
        if let Some(k) = m.incoherent {
            *s.incoherent.entry(k.as_str()).or_default() += 1;
        }
        s.changes_of_mind += usize::from(m.change_of_mind);
        if m.asks {
            s.asking += 1;
            if m.unanswered == 0 {
                s.answered += 1;
            }
        }
        if let Some(k) = m.unknowable {
            *s.unknowable.entry(k.as_str()).or_default() += 1;
        }
        for r in &m.language {
            *s.language.entry(r.as_str()).or_default() += 1;
        }
    }
    s.words = spread(&measures.iter().map(|m| m.words).collect::<Vec<_>>());
    s.actions = spread(&measures.iter().map(|m| m.actions).collect::<Vec<_>>());
    s.long_tasks = measures.iter().filter(|m| m.actions >= LONG_TASK).count();
    let instructions: Vec<&str> = tasks
        .iter()
        .filter_map(|t| t.instruction.as_deref())
        .collect();
    (s.top_ngram, s.common_ngrams) = ngram_repetition(&instructions);
    s.shared_openings = shared_openings(&instructions);
    let conditions: BTreeSet<(&str, &str, &str, &str)> = tasks
        .iter()
        .filter_map(|t| {
            Some((
                t.emotion.as_deref()?,
                t.politeness.as_deref()?,
                t.urgency.as_deref()?,
                t.trust.as_deref()?,
            ))
        })
        .collect();
    s.conditions = conditions.len();
    let labelled = tasks
        .iter()
        .filter(|t| t.politeness.is_some())
        .count()
        .max(1) as f64;
    for t in tasks {
        for (dim, v) in [
            ("politeness", &t.politeness),
            ("urgency", &t.urgency),
            ("trust", &t.trust),
        ] {
            if let Some(v) = v {
                *s.behaviour.entry(format!("{dim}={v}")).or_default() += 1.0 / labelled;
            }
        }
    }
    s
}

/// "12.5%" of `of`, or "-" when there is nothing to count.
pub fn pct(n: usize, of: usize) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}

/// "kind n, kind n", or "none".
pub fn counts(m: &BTreeMap<&'static str, usize>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `tracer quality` task tables (figures, then the emotion mix), one row per domain
/// and split; the SFT table is `analysis::clean::table`.
pub fn table(rows: &[(String, crate::split::Split, Summary)]) -> String {
    let mut out = String::from(
        "| domain | split | tasks | incoherent (kind n) | stated changes of mind | asking: answered | unknowable ids (kind n) | words med/p90/max | actions med/p90/max | >= 10 actions | top 6-gram | 6-grams in >= 25% | shared openings | language hits (rule n) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (d, split, s) in rows {
        let incoherent: usize = s.incoherent.values().sum();
        let unknowable: usize = s.unknowable.values().sum();
        out.push_str(&format!(
            "| {d} | {split} | {} | {} ({}) | {} | {}: {} | {} ({}) | {}/{}/{} | {}/{}/{} | {} | {:.0}% | {} | {:.1}% | {} |\n",
            s.tasks,
            pct(incoherent, s.tasks),
            counts(&s.incoherent),
            pct(s.changes_of_mind, s.tasks),
            s.asking,
            pct(s.answered, s.asking),
            pct(unknowable, s.tasks),
            counts(&s.unknowable),
            s.words.0,
            s.words.1,
            s.words.2,
            s.actions.0,
            s.actions.1,
            s.actions.2,
            pct(s.long_tasks, s.tasks),
            100.0 * s.top_ngram,
            s.common_ngrams,
            100.0 * s.shared_openings,
            counts(&s.language),
        ));
    }
    out.push_str(
        "\n| domain | split | conditions of 594 | politeness warm/neutral/cold | urgency low/moderate/high | trust trusting/cautious/skeptical |\n|---|---|---|---|---|---|\n",
    );
    for (d, split, s) in rows {
        let share = |dim: &str, vals: [&str; 3]| {
            vals.iter()
                .map(|v| {
                    format!(
                        "{:.0}",
                        100.0
                            * s.behaviour
                                .get(&format!("{dim}={v}"))
                                .copied()
                                .unwrap_or(0.0)
                    )
                })
                .collect::<Vec<_>>()
                .join("/")
        };
        out.push_str(&format!(
            "| {d} | {split} | {} | {}% | {}% | {}% |\n",
            s.conditions,
            share("politeness", ["warm", "neutral", "cold"]),
            share("urgency", ["low", "moderate", "high"]),
            share("trust", ["trusting", "cautious", "skeptical"]),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetition_and_openings_are_measured() {
        let a = "You want to cancel your booking for tomorrow night at the cinema.";
        let b = "You want to cancel your booking for next week, please.";
        let c = "Your card was stolen and you need it blocked before anyone uses it.";
        let d = "A parcel arrived broken so a replacement would be welcome soon.";
        let e = "Moving house means the address on file must change by Friday.";
        let (top, common) = ngram_repetition(&[a, b, c, d, e]);
        assert!((top - 0.4).abs() < 1e-9, "{top}");
        assert_eq!(
            common, 2,
            "the two 6-grams of 'you want to cancel your booking for' are in 2 of 5"
        );
        let same = "Your name is Ann Lee. You want to cancel your booking for tomorrow night at the cinema and more.";
        assert!((shared_openings(&[a, same, c]) - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(spread(&[5, 1, 3, 9, 7]), (5, 9, 9));
        assert_eq!(spread(&[]), (0, 0, 0));
    }
}
