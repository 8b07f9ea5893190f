//! The feeler role: per task, a free-text description of how the customer most likely
//! feels, written from the user context and the requested actions only (the feeler cannot
//! see the database: a [`FeelerInput`] holds plain strings and intent tags).
//!
//! The scripted feeler reads what the customer asks for the way the paper's feeler does —
//! every requested action and the customer's own words — and never a tool's name: each
//! requested tool maps, through its domain's tool specs, to its [`Intent`] tag (cancel,
//! return, change, book, report, pay, lookup, ...), so any registered domain works without
//! changes here. The kinds of request lean the emotion family (a return towards disgust, a
//! payment towards fear), cues in the instruction ("cancelled by the airline", "passed
//! away", "no rush", "double-check", "again") lean the family and decide urgency and trust;
//! half of each family draw is spread evenly, so all 22 emotions and all 27 behaviour
//! combinations occur in every domain while the mix still follows the requests. The cause
//! names what the customer is doing in domain-neutral words; only a cue in the customer's
//! words lets it speak of something that happened (a fault, a loss, an occasion). Sentences
//! are third person with singular verbs for the customer and plural ones for "they".
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

/// How the customer reads, as the feeler sees it: which kinds of request the task holds
/// (every intent, in order, without repeats) and which cues the customer's own words carry.
struct Reading {
    intents: Vec<Intent>,
    /// The company got something wrong (a disruption, a fault, a damaged item).
    trouble: bool,
    /// A bereavement or illness is part of the story.
    loss: bool,
    /// Something to look forward to (a honeymoon, a birthday).
    happy: bool,
    urgent: bool,
    soon: bool,
    relaxed: bool,
    /// The customer wants things checked ("make sure", "double-check").
    careful: bool,
    /// The customer has been let down before ("again", "last time", "promised").
    doubt: bool,
    writes: usize,
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
    "suffers from",
    "fraud",
    "suspicious",
    "compromised",
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
    "health problem",
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
    "in an hour",
    "quickly",
    "emergency",
    "deadline",
    "before it ships",
];
const SOON_CUES: &[&str] = &["today", "this week", "this afternoon"];
const RELAXED_CUES: &[&str] = &[
    "no rush",
    "no hurry",
    "whenever",
    "next month",
    "not urgent",
    "happy to wait",
    "take your time",
];
/// Only what the customer asks to be checked: the identity sentence every instruction
/// ends with ("if the agent asks you to verify who you are") says nothing about trust.
const CAREFUL_CUES: &[&str] = &[
    "make sure",
    "double-check",
    "double check",
    "exactly",
    "check that",
    "confirm each change",
];
const DOUBT_CUES: &[&str] = &[
    "again",
    "last time",
    "previous time",
    "complain",
    "promised",
    "once more",
];

/// Every phrase the scripted feeler reads as a cue (text written around the requests, such
/// as who the customer is, must hold none of them).
#[cfg(test)]
pub(crate) fn cue_words() -> impl Iterator<Item = &'static str> {
    [
        TROUBLE_CUES,
        LOSS_CUES,
        HAPPY_CUES,
        URGENT_CUES,
        SOON_CUES,
        RELAXED_CUES,
        CAREFUL_CUES,
        DOUBT_CUES,
    ]
    .into_iter()
    .flatten()
    .copied()
}

fn read(input: &FeelerInput) -> Reading {
    let text = input.instruction.to_lowercase();
    let mut intents: Vec<Intent> = Vec::new();
    for i in &input.intents {
        if *i != Intent::Helper && !intents.contains(i) {
            intents.push(*i);
        }
    }
    Reading {
        trouble: any_of(&text, TROUBLE_CUES),
        loss: any_of(&text, LOSS_CUES),
        happy: any_of(&text, HAPPY_CUES),
        urgent: any_of(&text, URGENT_CUES),
        soon: any_of(&text, SOON_CUES),
        relaxed: any_of(&text, RELAXED_CUES),
        careful: any_of(&text, CAREFUL_CUES),
        doubt: any_of(&text, DOUBT_CUES),
        writes: input
            .intents
            .iter()
            .filter(|i| !matches!(i, Intent::Lookup | Intent::Helper))
            .count(),
        intents,
    }
}

/// The families in taxonomy order.
const FAMILIES: [&str; 5] = ["anger", "fear", "disgust", "sadness", "enjoyment"];

/// How strongly a kind of request suggests each family (anger, fear, disgust, sadness,
/// enjoyment): a cancellation leans to anger and sadness, a payment to fear, a return to
/// disgust, a booking to enjoyment.
fn family_lean(intent: Intent) -> [f64; 5] {
    match intent {
        Intent::Lookup => [1.0, 2.0, 1.0, 1.0, 3.0],
        Intent::Book => [1.0, 2.0, 0.5, 1.0, 4.0],
        Intent::Cancel => [3.0, 1.0, 2.0, 3.0, 1.0],
        Intent::Change => [2.0, 3.0, 1.0, 2.0, 1.0],
        Intent::Return => [2.0, 1.0, 4.0, 2.0, 1.0],
        Intent::Exchange => [2.0, 1.0, 3.0, 1.0, 2.0],
        Intent::Pay => [1.0, 4.0, 1.0, 1.0, 2.0],
        Intent::Report | Intent::Transfer => [4.0, 2.0, 1.0, 3.0, 0.5],
        Intent::Helper => [1.0; 5],
    }
}

/// What the customer is doing, as a gerund phrase the causes can name ("calling off
/// something they had arranged"); domain-neutral, so it never names what is not there.
fn act(intent: Intent) -> &'static str {
    match intent {
        Intent::Lookup => "getting information they need",
        Intent::Book => "arranging something new",
        Intent::Cancel => "calling off something they had arranged",
        Intent::Change => "changing something already arranged",
        Intent::Return => "sending back something they bought",
        Intent::Exchange => "swapping something they bought",
        Intent::Pay => "sorting out a payment",
        Intent::Report => "getting a problem fixed",
        Intent::Transfer => "reaching someone who can help",
        Intent::Helper => "getting help",
    }
}

/// Why the customer feels `emotion`, with `{acts}` for what they are doing. Each cause is
/// true of any task with those requests: only the cue-gated ones (`trouble`, `loss`,
/// `happy`) speak of something that happened, and only when the customer's words say so.
fn causes(emotion: &str, r: &Reading) -> &'static [&'static str] {
    match emotion {
        "annoyance" => &[
            "they see {acts} as a chore they would rather not have",
            "they begrudge the time spent {acts}",
        ],
        "frustration" if r.trouble => {
            &["something went wrong on the company's side, which leaves them {acts}"]
        }
        "frustration" => &[
            "they expect {acts} to be harder than necessary",
            "they see {acts} as more effort than necessary",
        ],
        "argumentativeness" => &[
            "they are ready to contest anything that stands in the way of {acts}",
            "they intend to insist on their terms while {acts}",
        ],
        "bitterness" if r.trouble => &["the company let them down, and now they are {acts}"],
        "bitterness" => &["they feel the company owes them smooth service for {acts}"],
        "exasperation" if r.writes >= 3 => &["they have a whole list to get through: {acts}"],
        "exasperation" => &["they just want {acts} over and done with"],
        "anxiety" => &[
            "they worry that {acts} could go wrong",
            "a mistake in {acts} would cost them",
        ],
        "nervousness" => &[
            "they are unsure how {acts} works",
            "they feel uneasy {acts} with a support agent",
        ],
        "dread" => &[
            "they fear {acts} will bring bad news or extra costs",
            "they fear what {acts} may reveal",
        ],
        "desperation" => &[
            "they badly need {acts} to work out",
            "they see no way out of their situation other than {acts}",
        ],
        "dislike" => &[
            "they are not happy with what the company offers, hence {acts}",
            "they dislike how things stand, which is why they are {acts}",
        ],
        "aversion" => &["they want as little to do with the company as possible while {acts}"],
        "distaste" if r.trouble => &["the poor service they got has put them off, hence {acts}"],
        "distaste" => &["the whole business of {acts} puts them off"],
        "repugnance" if r.trouble => {
            &["what went wrong strikes them as outrageous, and now they are {acts}"]
        }
        "repugnance" => &["they find the way they are made to go about {acts} offensive"],
        "disappointment" if r.trouble => {
            &["what they were promised did not happen, so they are {acts}"]
        }
        "disappointment" => &[
            "they had hoped not to end up {acts}",
            "things did not turn out as they had hoped, so they are {acts}",
        ],
        "discouragement" => &["they doubt {acts} will be worth the effort"],
        "helplessness" => &[
            "they cannot manage {acts} on their own",
            "they do not know where to start with {acts}",
        ],
        "hopelessness" => &["they expect {acts} to fail whatever they do"],
        "sorrow" if r.loss => &["a loss or illness in the family lies behind {acts}"],
        "sorrow" => &["they are feeling low and find {acts} a burden"],
        "relief" => &[
            "they expect {acts} to take a weight off their mind",
            "they want to settle something that has been nagging them by {acts}",
        ],
        "pride" => &[
            "they have thought {acts} through and are pleased with their plan",
            "they take pride in staying on top of things such as {acts}",
        ],
        "peace" => &[
            "they treat {acts} as routine",
            "they see {acts} as a small errand",
        ],
        "excitement" if r.happy => &["they are arranging something they look forward to"],
        "excitement" => &["they are keen to get on with {acts}"],
        _ => &["they are {acts}"],
    }
}

/// How plausible each emotion of a family is for this reading (1 = as likely as any).
/// Every emotion keeps some weight, so all 22 stay reachable in every domain.
fn emotion_weight(emotion: &str, r: &Reading) -> f64 {
    let has = |i: Intent| r.intents.contains(&i);
    match emotion {
        "sorrow" if r.loss => 6.0,
        "sorrow" => 0.4,
        "excitement" if r.happy || has(Intent::Book) => 2.0,
        "excitement" => 0.6,
        "pride" if has(Intent::Book) || has(Intent::Pay) => 1.5,
        "repugnance" | "bitterness" | "frustration" if r.trouble => 2.0,
        "repugnance" => 0.5,
        "bitterness" if r.doubt => 2.0,
        "exasperation" if r.writes >= 3 => 2.0,
        "desperation" if r.urgent => 2.0,
        "dread" if has(Intent::Pay) || has(Intent::Cancel) => 1.5,
        "hopelessness" | "helplessness" if has(Intent::Report) || has(Intent::Transfer) => 1.5,
        _ => 1.0,
    }
}

/// Draw an index by weight.
fn weighted(rng: &mut ChaCha8Rng, weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    let mut roll = rng.random::<f64>() * total;
    for (i, w) in weights.iter().enumerate() {
        if roll < *w {
            return i;
        }
        roll -= w;
    }
    weights.len() - 1
}

fn pick<'a>(rng: &mut ChaCha8Rng, bank: &[&'a str]) -> &'a str {
    bank[rng.random_range(0..bank.len())]
}

/// "a", "a and b", "a, b and c" (at most three, in order).
fn join_acts(acts: &[&str]) -> String {
    match acts {
        [] => "getting help".to_string(),
        [a] => a.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
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

/// The emotions of a family, in taxonomy order.
fn family_emotions(family: &str) -> &'static [&'static str] {
    match family {
        "anger" => &[
            "annoyance",
            "frustration",
            "argumentativeness",
            "bitterness",
            "exasperation",
        ],
        "fear" => &["anxiety", "nervousness", "dread", "desperation"],
        "disgust" => &["dislike", "aversion", "distaste", "repugnance"],
        "sadness" => &[
            "disappointment",
            "discouragement",
            "helplessness",
            "hopelessness",
            "sorrow",
        ],
        _ => &["relief", "pride", "peace", "excitement"],
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

/// The share of each family's draw that is spread evenly over the five families: the
/// requests and cues lean the rest, so every family keeps at least a tenth of the tasks
/// of any domain and the mix still follows what customers ask for.
const EVEN_SHARE: f64 = 0.5;

/// The family the reading suggests (see [`family_lean`] and the cues) mixed with an even
/// spread ([`EVEN_SHARE`]).
fn family_weights(r: &Reading) -> [f64; 5] {
    let mut lean = [0.0; 5];
    for i in &r.intents {
        for (l, w) in lean.iter_mut().zip(family_lean(*i)) {
            *l += w;
        }
    }
    let cues = [
        (r.trouble, [3.0, 0.0, 2.0, 1.0, 0.0]),
        (r.loss, [0.0, 0.0, 0.0, 6.0, 0.0]),
        (r.happy, [0.0, 0.0, 0.0, 0.0, 4.0]),
        (r.careful, [0.0, 2.0, 0.0, 0.0, 0.0]),
        (r.doubt, [2.0, 0.0, 0.0, 0.0, 0.0]),
    ];
    for (on, add) in cues {
        if on {
            for (l, a) in lean.iter_mut().zip(add) {
                *l += a;
            }
        }
    }
    let total: f64 = lean.iter().sum::<f64>().max(f64::EPSILON);
    lean.map(|l| (1.0 - EVEN_SHARE) * l / total + EVEN_SHARE / 5.0)
}

/// Low / moderate / high: the customer's own words first ("no rush", "right away"), else
/// how people with the feeling and the requests tend to be.
fn urgency_weights(family: &str, r: &Reading) -> [f64; 3] {
    if r.relaxed {
        return [0.8, 0.15, 0.05];
    }
    if r.urgent {
        return [0.05, 0.15, 0.8];
    }
    if r.soon {
        return [0.1, 0.6, 0.3];
    }
    let mut w = match family {
        "fear" => [0.2, 0.35, 0.45],
        "anger" => [0.25, 0.35, 0.4],
        "enjoyment" => [0.5, 0.35, 0.15],
        "sadness" => [0.4, 0.4, 0.2],
        _ => [0.3, 0.4, 0.3],
    };
    if r.intents.contains(&Intent::Report) || r.intents.contains(&Intent::Transfer) {
        w[2] += 0.2;
    }
    w
}

/// Warm / neutral / cold: anger and disgust run colder, enjoyment warmer.
fn politeness_weights(family: &str) -> [f64; 3] {
    match family {
        "anger" => [0.15, 0.35, 0.5],
        "disgust" => [0.2, 0.35, 0.45],
        "enjoyment" => [0.6, 0.3, 0.1],
        _ => [0.45, 0.35, 0.2],
    }
}

/// Trusting / cautious / skeptical: a customer let down before ("again", "promised")
/// doubts, one who asks for checks is cautious; otherwise it leans with the feeling.
fn trust_weights(family: &str, r: &Reading) -> [f64; 3] {
    if r.doubt {
        return [0.05, 0.25, 0.7];
    }
    if r.careful {
        return [0.1, 0.65, 0.25];
    }
    match family {
        "anger" => [0.15, 0.35, 0.5],
        "disgust" => [0.2, 0.4, 0.4],
        "fear" => [0.3, 0.5, 0.2],
        "sadness" => [0.45, 0.35, 0.2],
        _ => [0.6, 0.3, 0.1],
    }
}

/// [`scripted_feeling`] with the labels behind it (the same draws from `rng`).
pub fn scripted_feeling_labelled(input: &FeelerInput, rng: &mut ChaCha8Rng) -> ScriptedFeeling {
    let r = read(input);
    let family = FAMILIES[weighted(rng, &family_weights(&r))];
    let emotions = family_emotions(family);
    let weights: Vec<f64> = emotions.iter().map(|e| emotion_weight(e, &r)).collect();
    let emotion = emotions[weighted(rng, &weights)];
    let urgency = weighted(rng, &urgency_weights(family, &r));
    let politeness = weighted(rng, &politeness_weights(family));
    let trust = weighted(rng, &trust_weights(family, &r));
    let acts: Vec<&str> = r.intents.iter().take(3).map(|i| act(*i)).collect();
    let who = pick(rng, &["The customer", "The caller", "This customer"]);
    let feeling = pick(rng, emotion_phrase(emotion));
    let cause = pick(rng, causes(emotion, &r)).replace("{acts}", &join_acts(&acts));
    let politeness_text = pick(
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
    let urgency_text = pick(
        rng,
        [
            &["are in no hurry", "are happy to wait"][..],
            &["would like it done today", "want steady progress"][..],
            &["need it settled right away", "cannot afford any delay"][..],
        ][urgency],
    );
    let trust_text = pick(
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
            "{who} {feeling} because {cause}. They {politeness_text}, {urgency_text}, and {trust_text}."
        ),
        emotion,
        politeness: ["warm", "neutral", "cold"][politeness],
        urgency: ["low", "moderate", "high"][urgency],
        trust: ["trusting", "cautious", "skeptical"][trust],
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

/// The feeler's view of a task: its instruction and its actions' tools and intents.
/// A tool its domain does not list is an error naming the task and the tool.
pub fn feeler_input(task: &crate::artifact::TaskRecord) -> Result<FeelerInput, String> {
    let domain = crate::domain::find(&task.domain).map_err(|e| e.to_string())?;
    let specs = domain.tool_specs();
    let mut input = FeelerInput {
        instruction: task.instruction.clone().unwrap_or_default(),
        requested_tools: Vec::new(),
        intents: Vec::new(),
    };
    for a in &task.actions {
        let name = a.name.as_str();
        let spec = specs.iter().find(|s| s.name == name).ok_or_else(|| {
            format!(
                "task {}: tool '{name}' is not a {} tool",
                task.task_id, task.domain
            )
        })?;
        input.requested_tools.push(name.to_string());
        input.intents.push(spec.intent);
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_feeler_is_deterministic_and_reads_intents_not_tool_names() {
        let case = input("The lamp arrived damaged.", &[Intent::Return]);
        for k in 0..20 {
            assert_eq!(
                scripted_feeling(&case, &mut derive_rng(k, &["t"])),
                scripted_feeling(&case, &mut derive_rng(k, &["t"])),
                "deterministic"
            );
        }
        // The same intents under a tool name no rule has ever seen give the same feelings.
        let mut renamed = case.clone();
        renamed.requested_tools = vec!["send_back_parcel".into()];
        let mut a = derive_rng(3, &["x"]);
        let mut b = derive_rng(3, &["x"]);
        assert_eq!(
            scripted_feeling(&case, &mut a),
            scripted_feeling(&renamed, &mut b)
        );
    }

    /// Tasks the way the pipeline hands them over: a few requests drawn from one domain's
    /// tools, and the identity sentence every instruction ends with.
    fn domain_tasks(domain: &dyn crate::domain::Domain, n: usize) -> Vec<FeelerInput> {
        let specs = domain.tool_specs();
        let mut rng = derive_rng(7, &["tasks", domain.name()]);
        (0..n)
            .map(|_| {
                let k = rng.random_range(1..=4);
                let picked: Vec<_> = (0..k)
                    .map(|_| &specs[rng.random_range(0..specs.len())])
                    .collect();
                FeelerInput {
                    instruction: "Your name is Ada Lee. You want this sorted out. If the agent \
                                  asks you to verify who you are: your email is ada@example.com."
                        .into(),
                    requested_tools: picked.iter().map(|s| s.name.to_string()).collect(),
                    intents: picked.iter().map(|s| s.intent).collect(),
                }
            })
            .collect()
    }

    #[test]
    fn every_domain_reaches_every_emotion_and_behaviour_and_the_mix_is_spread() {
        use std::collections::{BTreeMap, BTreeSet};
        let mut conditions = BTreeSet::new();
        let mut values: BTreeMap<&str, usize> = BTreeMap::new();
        let mut total = 0;
        for d in crate::domain::registry() {
            let mut emotions = BTreeSet::new();
            let mut behaviours = BTreeSet::new();
            let mut families: BTreeMap<&str, usize> = BTreeMap::new();
            let tasks = domain_tasks(*d, 400);
            for (i, t) in tasks.iter().enumerate() {
                let f =
                    scripted_feeling_labelled(t, &mut derive_rng(1, &[d.name(), &i.to_string()]));
                emotions.insert(f.emotion);
                behaviours.insert((f.politeness, f.urgency, f.trust));
                *families.entry(family_of(f.emotion)).or_default() += 1;
                for v in [f.politeness, f.urgency, f.trust] {
                    *values.entry(v).or_default() += 1;
                }
                conditions.insert((f.emotion, f.politeness, f.urgency, f.trust));
                total += 1;
            }
            assert_eq!(emotions.len(), 22, "{}: {emotions:?}", d.name());
            assert_eq!(behaviours.len(), 27, "{}: {behaviours:?}", d.name());
            for family in FAMILIES {
                let share = families.get(family).copied().unwrap_or(0) as f64 / 400.0;
                assert!(share >= 0.08, "{}: {family} {share}", d.name());
            }
        }
        assert!(conditions.len() >= 400, "{} conditions", conditions.len());
        for v in [
            "warm",
            "neutral",
            "cold",
            "low",
            "moderate",
            "high",
            "trusting",
            "cautious",
            "skeptical",
        ] {
            let share = values.get(v).copied().unwrap_or(0) as f64 / total as f64;
            assert!(share >= 0.15, "{v}: {share}");
        }
    }

    #[test]
    fn the_customers_words_decide_urgency_and_trust_and_the_identity_sentence_does_not() {
        let share = |text: &str, intents: &[Intent], want: &dyn Fn(&ScriptedFeeling) -> bool| {
            let case = input(text, intents);
            (0..200)
                .filter(|k| {
                    want(&scripted_feeling_labelled(
                        &case,
                        &mut derive_rng(*k, &["c"]),
                    ))
                })
                .count() as f64
                / 200.0
        };
        let verify = "If the agent asks you to verify who you are: your email is a@b.c.";
        assert!(share(verify, &[Intent::Lookup], &|f| f.trust == "cautious") < 0.5);
        assert!(
            share("You are happy to wait.", &[Intent::Change], &|f| f.urgency
                == "low")
                > 0.7
        );
        assert!(
            share("You need it right away.", &[Intent::Lookup], &|f| f.urgency
                == "high")
                > 0.7
        );
        assert!(
            share("They promised this last time.", &[Intent::Pay], &|f| f
                .trust
                == "skeptical")
                > 0.6
        );
        assert!(
            share("Please double-check it.", &[Intent::Book], &|f| f.trust
                == "cautious")
                > 0.55
        );
        // A loss in the customer's words makes sadness, and sorrow, far more likely.
        let loss = share("Your father passed away.", &[Intent::Cancel], &|f| {
            f.emotion == "sorrow"
        });
        let none = share("You changed your plans.", &[Intent::Cancel], &|f| {
            f.emotion == "sorrow"
        });
        assert!(loss > 0.15 && none < 0.05, "{loss} {none}");
    }

    #[test]
    fn causes_name_only_what_the_task_has() {
        for (i, intents) in [
            vec![Intent::Lookup],
            vec![Intent::Cancel, Intent::Pay],
            vec![
                Intent::Return,
                Intent::Exchange,
                Intent::Change,
                Intent::Book,
            ],
            vec![Intent::Report],
        ]
        .iter()
        .enumerate()
        {
            let case = input("You want to sort out your account.", intents);
            for k in 0..300 {
                let text = scripted_feeling(&case, &mut derive_rng(k, &["n", &i.to_string()]));
                for invented in [
                    "loss",
                    "illness",
                    "went wrong",
                    "let them down",
                    "promised",
                    "look forward to",
                    "poor service",
                ] {
                    assert!(!text.contains(invented), "{text}");
                }
                assert!(!text.contains("{acts}") && !text.contains("  "), "{text}");
            }
        }
        // Every request kind is named, up to three of them.
        let many = input("", &[Intent::Cancel, Intent::Pay, Intent::Lookup]);
        let text = (0..50)
            .map(|k| scripted_feeling(&many, &mut derive_rng(k, &["m"])))
            .find(|t| t.contains("calling off"))
            .expect("the acts are named");
        assert!(
            text.contains("sorting out a payment") && text.contains("getting information"),
            "{text}"
        );
    }

    #[test]
    fn feelings_are_grammatical() {
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
        }
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
                    _ => says(&["right away", "afford any delay"]),
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
