//! The scripted feeling: the family, emotion, urgency, politeness and trust drawn from a
//! task's reading, and the sentence that says them ([`scripted_feeling_labelled`]).

use super::FeelerInput;
use super::reading::{Reading, read};
use super::words::{act, causes, emotion_phrase, join_acts};
use crate::domain::Intent;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// The families in taxonomy order.
pub(super) const FAMILIES: [&str; 5] = ["anger", "fear", "disgust", "sadness", "enjoyment"];

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
