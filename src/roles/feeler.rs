//! The feeler role: per task, a free-text description of how the customer most likely
//! feels, written from the user context and the requested actions only (the feeler cannot
//! see the database: a [`FeelerInput`] holds plain strings and intent tags).
//!
//! The scripted feeler reads what the customer asks for the way the paper's feeler does —
//! the requested actions and the customer's own words — and never a tool's name: each
//! requested tool maps, through its domain's tool specs, to its [`Intent`] tag (cancel,
//! return, change, book, report, pay, lookup, ...), so any registered domain works without
//! changes here. The intents and cues in the instruction ("cancelled by the airline",
//! "damaged", "urgent", "double-check", "again") pick a situation, the emotions that fit
//! it, and the politeness, urgency and trust the customer most plausibly shows; the seeded
//! RNG only varies among plausible choices and the wording. Sentences are written in the
//! third person with singular verbs for the customer and plural ones for "they".
//! The endpoint feeler asks a chat model for the same two or three sentences.

use super::{Call, run_all};
use crate::domain::Intent;
use crate::llm::{ChatMessage, ChatModel, ChatRequest};
use crate::seed::{derive_rng, derive_seed};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Everything the feeler may know: who the customer says they are and what they ask for.
#[derive(Clone, Debug, PartialEq)]
pub struct FeelerInput {
    /// The user instruction (goals, context, preferences).
    pub instruction: String,
    /// Tool names of the requested actions, in order (what the customer wants done).
    pub requested_tools: Vec<String>,
    /// The intent of each requested tool (from its domain's tool specs), in order.
    pub intents: Vec<Intent>,
}

/// The LLM feeler's instructions (our own words).
pub const FEELER_PROMPT: &str = "You read what a customer wants from customer support and \
describe, in two or three sentences in the third person, how this customer most likely feels \
and how they will come across: which emotion, how polite or curt, how urgent, how much they \
trust the agent. Use only what is given; do not invent account details.";

/// What the customer is going through, as the feeler reads it.
struct Situation {
    /// Emotions that fit, most plausible first.
    emotions: &'static [&'static str],
    /// Why, as a clause after "because".
    causes: &'static [&'static str],
    /// The urgency the situation itself suggests when the customer's words do not say.
    urgency: Level,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Low,
    Moderate,
    High,
}

fn any_of(text: &str, cues: &[&str]) -> bool {
    cues.iter().any(|c| text.contains(c))
}

/// Something went wrong on the company's side (a disruption, a fault, a damaged item).
const TROUBLE_CUES: &[&str] = &[
    "cancelled by",
    "canceled by",
    "airline cancel",
    "delayed",
    "delay",
    "weather",
    "outage",
    "not working",
    "stopped working",
    "no signal",
    "broken",
    "damaged",
    "defective",
    "faulty",
    "wrong item",
    "missing",
    "overcharged",
    "charged twice",
    "double charged",
];
const LOSS_CUES: &[&str] = &[
    "passed away",
    "funeral",
    "died",
    "bereavement",
    "in hospital",
    "hospitalised",
    "hospitalized",
    "sick",
    "illness",
    "family emergency",
];
const HAPPY_CUES: &[&str] = &[
    "honeymoon",
    "anniversary",
    "birthday",
    "wedding",
    "vacation",
    "holiday",
    "graduation",
    "celebrat",
    "gift",
    "surprise",
];
const URGENT_CUES: &[&str] = &[
    "urgent",
    "asap",
    "as soon as possible",
    "right away",
    "immediately",
    "tonight",
    "tomorrow",
    "in an hour",
    "quickly",
    "emergency",
    "deadline",
    "before it ships",
];
const SOON_CUES: &[&str] = &["today", "this week", "soon", "this afternoon"];
const RELAXED_CUES: &[&str] = &[
    "no rush",
    "no hurry",
    "whenever",
    "next month",
    "not urgent",
];
const CAREFUL_CUES: &[&str] = &[
    "make sure",
    "confirm",
    "double-check",
    "double check",
    "verify",
    "exactly",
    "check that",
];
const DOUBT_CUES: &[&str] = &[
    "again",
    "last time",
    "previous",
    "complain",
    "still",
    "promised",
];

fn situation(input: &FeelerInput) -> Situation {
    let text = input.instruction.to_lowercase();
    let has = |i: Intent| input.intents.contains(&i);
    let trouble = any_of(&text, TROUBLE_CUES);
    let writes = input
        .intents
        .iter()
        .filter(|i| !matches!(i, Intent::Lookup | Intent::Helper))
        .count();
    if any_of(&text, LOSS_CUES) {
        return Situation {
            emotions: &["sorrow", "helplessness", "discouragement"],
            causes: &["a loss or illness in the family has upended their plans"],
            urgency: Level::Moderate,
        };
    }
    if has(Intent::Cancel) && trouble {
        return Situation {
            emotions: &[
                "exasperation",
                "bitterness",
                "frustration",
                "discouragement",
            ],
            causes: &[
                "a disruption they did not cause now forces them to cancel",
                "something went wrong on the company's side and they have to cancel",
            ],
            urgency: Level::Moderate,
        };
    }
    if has(Intent::Cancel) {
        return Situation {
            emotions: &["disappointment", "sorrow", "frustration", "aversion"],
            causes: &[
                "their plans fell through and they have to cancel",
                "they no longer need what they booked and want to call it off",
            ],
            urgency: Level::Moderate,
        };
    }
    if has(Intent::Report) || has(Intent::Transfer) {
        return Situation {
            emotions: &["frustration", "exasperation", "helplessness", "anxiety"],
            causes: &[
                "a service they rely on has stopped working",
                "they have a problem they cannot solve on their own",
            ],
            urgency: Level::High,
        };
    }
    if has(Intent::Return) && trouble {
        return Situation {
            emotions: &["distaste", "repugnance", "annoyance"],
            causes: &["what arrived was damaged or not as described"],
            urgency: Level::Moderate,
        };
    }
    if has(Intent::Return) {
        return Situation {
            emotions: &["dislike", "disappointment", "aversion"],
            causes: &["an item they bought did not live up to what they expected"],
            urgency: Level::Low,
        };
    }
    if has(Intent::Exchange) {
        return Situation {
            emotions: &["annoyance", "dislike", "nervousness"],
            causes: &["the item they ordered is not quite right and they want a different one"],
            urgency: Level::Low,
        };
    }
    if has(Intent::Book) && any_of(&text, HAPPY_CUES) {
        return Situation {
            emotions: &["excitement", "pride", "relief"],
            causes: &["they are arranging something they are looking forward to"],
            urgency: Level::Low,
        };
    }
    if has(Intent::Pay) {
        return Situation {
            emotions: &["anxiety", "relief", "nervousness"],
            causes: &["money is involved and they want the payment to go through correctly"],
            urgency: Level::Moderate,
        };
    }
    if writes >= 3 {
        return Situation {
            emotions: &["exasperation", "helplessness", "argumentativeness"],
            causes: &["they have several things to sort out at once"],
            urgency: Level::Moderate,
        };
    }
    if has(Intent::Change) {
        return Situation {
            emotions: &["anxiety", "nervousness", "desperation", "frustration"],
            causes: &[
                "they need a change made before it is too late",
                "a detail of what they booked or ordered has to be corrected",
            ],
            urgency: Level::High,
        };
    }
    if has(Intent::Book) {
        return Situation {
            emotions: &["excitement", "anxiety", "pride", "peace"],
            causes: &["they are making a new booking or appointment"],
            urgency: Level::Moderate,
        };
    }
    Situation {
        emotions: &["peace", "anxiety", "relief"],
        causes: &["they only want to check on something"],
        urgency: Level::Low,
    }
}

fn pick<'a>(rng: &mut ChaCha8Rng, bank: &[&'a str]) -> &'a str {
    bank[rng.random_range(0..bank.len())]
}

/// How a customer with each emotion comes across, as a clause after "The customer".
fn emotion_phrase(emotion: &str) -> &'static [&'static str] {
    match emotion {
        "annoyance" => &["is mildly irritated", "is a bit irked"],
        "frustration" => &["is frustrated", "feels thwarted and fed up"],
        "argumentativeness" => &[
            "is ready to argue every point",
            "is combative and quick to dispute",
        ],
        "bitterness" => &[
            "is bitter and resentful",
            "feels resentful after past let-downs",
        ],
        "exasperation" => &["is exasperated", "has run out of patience"],
        "anxiety" => &["is anxious", "is worried and tense"],
        "nervousness" => &["is nervous", "is uneasy and a little jittery"],
        "dread" => &["dreads what they might hear", "fears the worst"],
        "desperation" => &["is desperate", "feels they are running out of options"],
        "dislike" => &[
            "plainly dislikes what they got",
            "is displeased with the product",
        ],
        "aversion" => &[
            "wants nothing more to do with it",
            "wants to be rid of the whole thing",
        ],
        "distaste" => &[
            "finds the poor quality distasteful",
            "is put off by the sloppiness",
        ],
        "repugnance" => &["is disgusted by what happened", "finds it revolting"],
        "disappointment" => &["is disappointed", "feels let down"],
        "discouragement" => &["is discouraged", "feels disheartened"],
        "helplessness" => &["feels helpless", "does not know what else to do"],
        "hopelessness" => &["feels it is hopeless", "expects nothing to work"],
        "sorrow" => &["is sad and grieving", "is heavy-hearted"],
        "relief" => &["is relieved", "is glad it seems to be getting sorted"],
        "pride" => &[
            "is proud of planning ahead",
            "is pleased with their own arrangements",
        ],
        "peace" => &["is calm and at ease", "is relaxed"],
        "excitement" => &["is excited", "is eager and upbeat"],
        _ => &["is unsettled"],
    }
}

fn family_of(emotion: &str) -> &'static str {
    match emotion {
        "annoyance" | "frustration" | "argumentativeness" | "bitterness" | "exasperation" => {
            "anger"
        }
        "anxiety" | "nervousness" | "dread" | "desperation" => "fear",
        "dislike" | "aversion" | "distaste" | "repugnance" => "disgust",
        "disappointment" | "discouragement" | "helplessness" | "hopelessness" | "sorrow" => {
            "sadness"
        }
        _ => "enjoyment",
    }
}

/// The scripted feeler's sentence and the labels it meant to convey (taxonomy names), so
/// the mapper's reading of the sentence can be checked against the writer's intent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedFeeling {
    pub text: String,
    pub emotion: &'static str,
    pub politeness: &'static str,
    pub urgency: &'static str,
    pub trust: &'static str,
}

/// The scripted feeling for one task (no database: `FeelerInput` holds strings only).
pub fn scripted_feeling(input: &FeelerInput, rng: &mut ChaCha8Rng) -> String {
    scripted_feeling_labelled(input, rng).text
}

/// [`scripted_feeling`] with the labels behind it (the same draws from `rng`).
pub fn scripted_feeling_labelled(input: &FeelerInput, rng: &mut ChaCha8Rng) -> ScriptedFeeling {
    let s = situation(input);
    let text = input.instruction.to_lowercase();
    // Earlier emotions are the more plausible: weight 3, 2, 1, 1, ...
    let weights: Vec<u32> = (0..s.emotions.len())
        .map(|i| 3u32.saturating_sub(i as u32).max(1))
        .collect();
    let mut roll = rng.random_range(0..weights.iter().sum::<u32>());
    let mut emotion = s.emotions[0];
    for (e, w) in s.emotions.iter().zip(&weights) {
        if roll < *w {
            emotion = e;
            break;
        }
        roll -= w;
    }
    let family = family_of(emotion);
    let urgency = if any_of(&text, RELAXED_CUES) {
        Level::Low
    } else if any_of(&text, URGENT_CUES) {
        Level::High
    } else if any_of(&text, SOON_CUES) {
        Level::Moderate
    } else if rng.random_bool(0.7) {
        s.urgency
    } else {
        Level::Moderate
    };
    // Politeness leans with the feeling: anger and disgust run colder.
    let roll = rng.random_range(0..10u32);
    let politeness = if matches!(family, "anger" | "disgust") {
        match roll {
            0..=1 => 0,
            2..=5 => 1,
            _ => 2,
        }
    } else {
        match roll {
            0..=4 => 0,
            5..=7 => 1,
            _ => 2,
        }
    };
    let trust = if any_of(&text, DOUBT_CUES) && matches!(family, "anger" | "disgust") {
        2
    } else if any_of(&text, CAREFUL_CUES) {
        1
    } else {
        let roll = rng.random_range(0..10u32);
        match family {
            "anger" | "disgust" => [0, 0, 1, 1, 1, 1, 2, 2, 2, 2][roll as usize],
            "enjoyment" => [0, 0, 0, 0, 0, 0, 0, 1, 1, 1][roll as usize],
            _ => [0, 0, 0, 0, 1, 1, 1, 1, 1, 2][roll as usize],
        }
    };
    let labels = (
        ["warm", "neutral", "cold"][politeness],
        match urgency {
            Level::Low => "low",
            Level::Moderate => "moderate",
            Level::High => "high",
        },
        ["trusting", "cautious", "skeptical"][trust],
    );
    let who = pick(rng, &["The customer", "The caller", "This customer"]);
    let feeling = pick(rng, emotion_phrase(emotion));
    let cause = pick(rng, s.causes);
    let politeness = pick(
        rng,
        [
            &[
                "stay warm and thank the agent",
                "keep it courteous and friendly",
            ][..],
            &[
                "keep the tone neutral and businesslike",
                "are matter-of-fact",
            ][..],
            &[
                "are curt and cold",
                "answer tersely and without pleasantries",
            ][..],
        ][politeness],
    );
    let urgency = pick(
        rng,
        match urgency {
            Level::Low => &["are in no hurry", "are happy to wait"][..],
            Level::Moderate => &["would like it done today", "want steady progress"][..],
            Level::High => &["need it settled right away", "are pressed for time"][..],
        },
    );
    let trust = pick(
        rng,
        [
            &[
                "expect the agent to simply take care of it",
                "take the agent at their word",
            ][..],
            &[
                "want each step confirmed before believing it",
                "want the details read back",
            ][..],
            &[
                "doubt the agent will get it right",
                "suspect they will be brushed off again",
            ][..],
        ][trust],
    );
    ScriptedFeeling {
        text: format!(
            "{who} {feeling} because {cause}. They {politeness}, {urgency}, and {trust}."
        ),
        emotion,
        politeness: labels.0,
        urgency: labels.1,
        trust: labels.2,
    }
}

/// One task to describe: what the feeler may know, and the task's domain and id (the
/// request seed and the scripted feeler's draws derive from them).
pub struct FeelJob {
    pub input: FeelerInput,
    pub domain: String,
    pub task_id: String,
}

pub trait Feeler {
    /// The id recorded with the stage's summary (`scripted` or the endpoint's model).
    fn model_id(&self) -> String;
    /// One feeling per job, in order; `Err` per job is that request's failure, the outer
    /// `Err` a runtime failure.
    fn feel(&self, jobs: Vec<FeelJob>) -> Result<Vec<Result<String, String>>, String>;
}

/// The built-in feeler: [`scripted_feeling`] with draws seeded per domain and task.
pub struct ScriptedFeeler {
    pub id: String,
    pub seed: u64,
}

impl Feeler for ScriptedFeeler {
    fn model_id(&self) -> String {
        self.id.clone()
    }
    fn feel(&self, jobs: Vec<FeelJob>) -> Result<Vec<Result<String, String>>, String> {
        Ok(jobs
            .iter()
            .map(|j| {
                let mut rng = derive_rng(self.seed, &["feelings", &j.domain, &j.task_id]);
                Ok(scripted_feeling(&j.input, &mut rng))
            })
            .collect())
    }
}

pub struct EndpointFeeler {
    pub model: Arc<dyn ChatModel>,
    pub seed: u64,
}

/// The request the LLM feeler gets for one task.
pub fn feeler_request(input: &FeelerInput, seed: u64) -> ChatRequest {
    let actions: Vec<String> = input
        .requested_tools
        .iter()
        .zip(&input.intents)
        .map(|(t, i)| format!("{t} ({})", i.as_str()))
        .collect();
    ChatRequest::new(vec![
        ChatMessage::system(FEELER_PROMPT),
        ChatMessage::user(format!(
            "What the customer wants:\n{}\n\nRequested actions: {}",
            input.instruction,
            actions.join(", ")
        )),
    ])
    .with_seed(seed)
}

impl Feeler for EndpointFeeler {
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }
    fn feel(&self, jobs: Vec<FeelJob>) -> Result<Vec<Result<String, String>>, String> {
        let calls: Vec<Call<Result<String, String>>> = jobs
            .iter()
            .map(|j| {
                let model = Arc::clone(&self.model);
                let req =
                    feeler_request(&j.input, derive_seed(self.seed, &["feelings", &j.task_id]));
                Box::pin(async move {
                    let r = model.chat(req).await.map_err(|e| e.to_string())?;
                    Ok(r.message.content.unwrap_or_default().trim().to_string())
                }) as Call<_>
            })
            .collect();
        run_all(calls)
    }
}

/// The feeler a role config opened: scripted or endpoint-backed; `seed` is the run's.
pub fn feeler(model: &crate::llm::RoleModel, seed: u64) -> Box<dyn Feeler> {
    match model {
        crate::llm::RoleModel::Scripted(_) => Box::new(ScriptedFeeler {
            id: model.model_id(),
            seed,
        }),
        crate::llm::RoleModel::Endpoint(m) => Box::new(EndpointFeeler {
            model: Arc::clone(m),
            seed,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(instruction: &str, intents: &[Intent]) -> FeelerInput {
        FeelerInput {
            instruction: instruction.into(),
            requested_tools: intents
                .iter()
                .map(|i| format!("tool_{}", i.as_str()))
                .collect(),
            intents: intents.to_vec(),
        }
    }

    #[test]
    fn the_feeler_reads_intents_not_tool_names_and_covers_all_five_families() {
        let cases = [
            input(
                "Your flight was cancelled by the airline.",
                &[Intent::Cancel],
            ),
            input("The lamp arrived damaged.", &[Intent::Return]),
            input("You need to move your appointment.", &[Intent::Change]),
            input("You want to check your balance.", &[Intent::Lookup]),
            input("You are planning your honeymoon.", &[Intent::Book]),
            input("Your grandmother passed away.", &[Intent::Cancel]),
        ];
        let mut families = std::collections::BTreeSet::new();
        for (i, case) in cases.iter().enumerate() {
            let allowed = situation(case).emotions;
            for k in 0..20 {
                let mut rng = derive_rng(k, &["t", &i.to_string()]);
                let mut again = derive_rng(k, &["t", &i.to_string()]);
                let text = scripted_feeling(case, &mut rng);
                assert_eq!(text, scripted_feeling(case, &mut again), "deterministic");
                let e = allowed
                    .iter()
                    .find(|e| emotion_phrase(e).iter().any(|p| text.contains(p)))
                    .unwrap_or_else(|| panic!("{text}: no emotion of {allowed:?}"));
                families.insert(family_of(e));
            }
        }
        assert_eq!(families.len(), 5, "{families:?}");
        // The same intents under a tool name no rule has ever seen give the same feelings.
        let mut renamed = cases[1].clone();
        renamed.requested_tools = vec!["send_back_parcel".into()];
        let mut a = derive_rng(3, &["x"]);
        let mut b = derive_rng(3, &["x"]);
        assert_eq!(
            scripted_feeling(&cases[1], &mut a),
            scripted_feeling(&renamed, &mut b)
        );
    }

    #[test]
    fn feelings_are_grammatical_and_follow_the_customers_words() {
        for k in 0..60 {
            let case = input(
                "You need this fixed right away, and please double-check the new time.",
                &[Intent::Change],
            );
            let text = scripted_feeling(&case, &mut derive_rng(k, &["g"]));
            for bad in [
                "They is",
                "They answers",
                "They keeps",
                "They stays",
                "They needs",
                "They wants",
            ] {
                assert!(!text.contains(bad), "{text}");
            }
            assert!(text.ends_with('.') && text.starts_with("Th"), "{text}");
            // "right away" is an urgency cue, "double-check" a caution cue.
            assert!(
                text.contains("right away") || text.contains("pressed for time"),
                "{text}"
            );
            assert!(
                text.contains("confirmed") || text.contains("read back"),
                "{text}"
            );
        }
        let relaxed = input("There is no rush; whenever suits.", &[Intent::Lookup]);
        let text = scripted_feeling(&relaxed, &mut derive_rng(1, &["g"]));
        assert!(
            text.contains("no hurry") || text.contains("happy to wait"),
            "{text}"
        );
    }

    #[test]
    fn the_labels_behind_a_feeling_are_the_ones_its_words_say() {
        let cases = [
            input("There is no rush; whenever suits.", &[Intent::Lookup]),
            input("You need this fixed right away.", &[Intent::Change]),
            input(
                "Your flight was cancelled by the airline.",
                &[Intent::Cancel],
            ),
            input("Please double-check the new time.", &[Intent::Book]),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for (i, case) in cases.iter().enumerate() {
            for k in 0..30 {
                let key = i.to_string();
                let labelled = scripted_feeling_labelled(case, &mut derive_rng(k, &["l", &key]));
                assert_eq!(
                    labelled.text,
                    scripted_feeling(case, &mut derive_rng(k, &["l", &key])),
                    "the same draws"
                );
                let t = &labelled.text;
                let says = |phrases: &[&str]| phrases.iter().any(|p| t.contains(p));
                let politeness_ok = match labelled.politeness {
                    "warm" => says(&["stay warm", "courteous and friendly"]),
                    "neutral" => says(&["neutral and businesslike", "matter-of-fact"]),
                    _ => says(&["curt and cold", "answer tersely"]),
                };
                let urgency_ok = match labelled.urgency {
                    "low" => says(&["no hurry", "happy to wait"]),
                    "moderate" => says(&["done today", "steady progress"]),
                    _ => says(&["right away", "pressed for time"]),
                };
                let trust_ok = match labelled.trust {
                    "trusting" => says(&["simply take care", "at their word"]),
                    "cautious" => says(&["step confirmed", "read back"]),
                    _ => says(&["doubt the agent", "brushed off again"]),
                };
                assert!(politeness_ok && urgency_ok && trust_ok, "{labelled:?}");
                assert!(
                    emotion_phrase(labelled.emotion)
                        .iter()
                        .any(|p| t.contains(p)),
                    "{labelled:?}"
                );
                seen.insert((labelled.politeness, labelled.urgency, labelled.trust));
            }
        }
        assert!(seen.len() >= 10, "{seen:?}");
    }

    #[test]
    fn every_registered_domain_tool_has_an_intent_the_feeler_reads() {
        for d in crate::domain::registry() {
            for spec in d.tool_specs() {
                let case = FeelerInput {
                    instruction: String::new(),
                    requested_tools: vec![spec.name.to_string()],
                    intents: vec![spec.intent],
                };
                let text = scripted_feeling(&case, &mut derive_rng(0, &[spec.name]));
                assert!(
                    text.starts_with("Th") && text.contains(" because "),
                    "{}: {text}",
                    spec.name
                );
            }
        }
    }
}
