//! The scripted feeler's words: what the customer is doing ([`act`]), why they feel an
//! emotion ([`causes`]) and how they come across with it ([`emotion_phrase`]).

use super::reading::Reading;
use crate::domain::Intent;

/// What the customer is doing, as a gerund phrase the causes can name ("calling off
/// something they had arranged"); domain-neutral, so it never names what is not there.
pub(super) fn act(intent: Intent) -> &'static str {
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
pub(super) fn causes(emotion: &str, r: &Reading) -> &'static [&'static str] {
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

/// "a", "a and b", "a, b and c" (at most three, in order).
pub(super) fn join_acts(acts: &[&str]) -> String {
    match acts {
        [] => "getting help".to_string(),
        [a] => a.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// How a customer with each emotion comes across, as a clause after "The customer".
pub(super) fn emotion_phrase(emotion: &str) -> &'static [&'static str] {
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
