//! What the scripted user can say apart from the task's own requests and facts, by its
//! condition ([`Voice`]): lines naming its emotion, reactions, greetings, its pace and
//! trust, confirmations, acknowledgements and closings; [`spoken_lines`] lists them all
//! (for the SFT-row checks).
//!
//! Architecture invariant: phrase data and the choice of bank by condition; no state.

use crate::artifact::TaskRecord;
use crate::domain::Intent;

/// The condition the scripted user speaks in (all `None`: the no-emotion variant).
#[derive(Clone, Debug, Default)]
pub struct Voice {
    pub family: Option<String>,
    pub emotion: Option<String>,
    pub politeness: Option<String>,
    pub urgency: Option<String>,
    pub trust: Option<String>,
}

impl Voice {
    pub(super) fn of(task: &TaskRecord) -> Voice {
        Voice {
            family: task.emotion_family.clone(),
            emotion: task.emotion.clone(),
            politeness: task.politeness.clone(),
            urgency: task.urgency.clone(),
            trust: task.trust.clone(),
        }
    }
    pub(super) fn politeness(&self) -> &str {
        self.politeness.as_deref().unwrap_or("neutral")
    }
    pub(super) fn urgency(&self) -> &str {
        self.urgency.as_deref().unwrap_or("moderate")
    }
    pub(super) fn trust(&self) -> &str {
        self.trust.as_deref().unwrap_or("cautious")
    }
}

/// A line in which the customer names its emotion (first person; each carries a word of
/// its family that `quality::voice` recognises).
pub(super) fn emotion_lines(emotion: &str) -> &'static [&'static str] {
    match emotion {
        "annoyance" => &[
            "This is a bit of an annoyance, honestly.",
            "I'm mildly irritated to be dealing with this at all.",
        ],
        "frustration" => &[
            "I'm frustrated that this needs a call at all.",
            "I'm getting fed up with all this.",
        ],
        "argumentativeness" => &[
            "I want this done properly, and I will argue the point if I have to.",
            "I'm not going to accept a runaround on this.",
        ],
        "bitterness" => &[
            "I'm resentful that I have to sort this out myself.",
            "To be frank, I expected better from you.",
        ],
        "exasperation" => &[
            "I've had about enough of this.",
            "My patience is wearing thin with all of this.",
        ],
        "anxiety" => &[
            "I'm worried about getting this wrong.",
            "I'm a little anxious about this, to be honest.",
        ],
        "nervousness" => &[
            "Sorry, I'm a bit nervous about doing this over chat.",
            "I get uneasy with these things.",
        ],
        "dread" => &[
            "I was dreading having to do this.",
            "I'm scared this is going to cost me.",
        ],
        "desperation" => &[
            "I really need this to work; I'm running out of options.",
            "Please help, I'm desperate to get this sorted.",
        ],
        "dislike" => &[
            "I'm not happy with how things stand.",
            "Honestly, I don't like how this works.",
        ],
        "aversion" => &[
            "I'd rather have nothing more to do with this.",
            "I just want to be rid of the whole thing.",
        ],
        "distaste" => &[
            "Frankly, this whole business leaves a bad taste.",
            "I find all of this rather off-putting.",
        ],
        "repugnance" => &[
            "Frankly, I find this appalling.",
            "Honestly, this whole thing disgusts me.",
        ],
        "disappointment" => &[
            "I'm disappointed, to be honest.",
            "I feel let down by how this turned out.",
        ],
        "discouragement" => &[
            "I'm a bit discouraged by all of this.",
            "I'm not sure it's worth the effort, but here goes.",
        ],
        "helplessness" => &[
            "I can't figure this out on my own, so I need your help.",
            "I feel helpless with this, honestly.",
        ],
        "hopelessness" => &[
            "It feels hopeless; I doubt anything can be done.",
            "I feel pretty hopeless about this, but here goes.",
        ],
        "sorrow" => &[
            "It's been a sad time for me.",
            "I'm feeling pretty down at the moment.",
        ],
        "relief" => &[
            "It will be a relief to have this sorted.",
            "I'm relieved to finally get to this.",
        ],
        "pride" => &[
            "I've got everything planned out, so I'm pleased this should be quick.",
            "I'm proud to have all my details ready.",
        ],
        "peace" => &[
            "No stress on my end, just a few things to sort out.",
            "I'm calm about this; it's just a few things.",
        ],
        "excitement" => &[
            "I'm really excited about this!",
            "I'm so looking forward to getting this set up!",
        ],
        _ => &[],
    }
}

/// The customer reacting to a finished request, by its family.
pub(super) fn reaction_lines(family: &str) -> &'static [&'static str] {
    match family {
        "anger" => &["Finally.", "Good, at least that part is done."],
        "fear" => &["Good, that's one worry less.", "Phew, okay."],
        "disgust" => &[
            "Fine, one less thing to deal with.",
            "Good riddance to that.",
        ],
        "sadness" => &["Okay... thank you.", "Alright, that helps a little."],
        "enjoyment" => &["Great, that went smoothly!", "Lovely."],
        _ => &[],
    }
}

pub(super) fn greetings(politeness: &str) -> &'static [&'static str] {
    match politeness {
        "warm" => &[
            "Hi there, thanks for picking up.",
            "Hello! I hope your day is going well.",
            "Hi, thank you for helping me.",
        ],
        "cold" => &[],
        _ => &["Hello.", "Hi."],
    }
}

pub(super) fn pace_lines(urgency: &str) -> &'static [&'static str] {
    match urgency {
        "high" => &[
            "I'm short on time, so let's be quick.",
            "I need this done quickly, please.",
        ],
        "low" => &["There's no rush on my side.", "Take your time."],
        _ => &[],
    }
}

pub(super) fn trust_lines(trust: &str) -> &'static [&'static str] {
    match trust {
        "trusting" => &[
            "I'm sure you can sort this out.",
            "I'll go with whatever you suggest.",
        ],
        "skeptical" => &[
            "I'll believe it when I see it.",
            "I hope you actually get this right.",
        ],
        _ => &[
            "Please walk me through each step.",
            "I'd like the details confirmed as we go.",
        ],
    }
}

/// The first request stated in general terms, by its kind.
pub(super) fn vague_goal(kind: Intent) -> &'static [&'static str] {
    match kind {
        Intent::Cancel => &[
            "I need to cancel something.",
            "I'd like to call something off.",
        ],
        Intent::Change => &[
            "I need to make a change to something I have with you.",
            "Something I arranged needs changing.",
        ],
        Intent::Book => &[
            "I'd like to arrange something new.",
            "I want to set something up.",
        ],
        Intent::Return => &["I want to send something back."],
        Intent::Exchange => &["I'd like to swap something I bought."],
        Intent::Pay => &["I need to sort out a payment."],
        Intent::Report => &[
            "I have a problem I need help with.",
            "Something isn't working and I need help.",
        ],
        Intent::Transfer | Intent::Helper => &["I need some help with my account."],
        Intent::Lookup => &[
            "I have a question about my account.",
            "I need to check on a few things.",
        ],
    }
}

/// Yes to a proposed change, in the manner of the customer's trust and politeness. Never
/// a hesitant word ("wait", "not yet", "don't"): the confirmation detector reads those as
/// a no.
pub(super) fn confirmations(voice: &Voice) -> &'static [&'static str] {
    match (voice.trust(), voice.politeness()) {
        ("skeptical", _) => &[
            "Yes, go ahead. I'll be checking that it went through.",
            "Yes. Go ahead, and make sure it actually goes through.",
        ],
        (_, "cold") => &["Yes.", "Yes, go ahead."],
        ("trusting", "warm") => &[
            "Yes, please go ahead. Thank you!",
            "Yes, that's right. Please do, thank you.",
        ],
        ("trusting", _) => &["Yes, please go ahead.", "Yes, that's right. Please do."],
        (_, "warm") => &[
            "Yes, that matches what I want. Please go ahead, thank you.",
            "Yes, that's correct. Please go ahead.",
        ],
        _ => &[
            "Yes, that matches what I want. Go ahead.",
            "Yes, that's correct; go ahead.",
        ],
    }
}

pub(super) fn acknowledgements(voice: &Voice) -> &'static [&'static str] {
    match (voice.trust(), voice.politeness()) {
        ("skeptical", _) => &["Hm. All right.", "If you say so."],
        (_, "warm") => &["Thank you, that's great.", "Wonderful, thank you."],
        (_, "cold") => &["Fine.", "Okay."],
        _ => &["Okay, thanks.", "Alright."],
    }
}

pub(super) fn closings(politeness: &str) -> &'static [&'static str] {
    match politeness {
        "warm" => &[
            "That's everything, thank you so much for your help!",
            "That's all I needed. You've been very kind, thank you.",
            "Perfect, that's all. Have a lovely day!",
            "Wonderful, that's everything. Thanks again!",
            "That's it from me. Thank you for your patience!",
        ],
        "cold" => &[
            "That's all.",
            "Nothing else.",
            "That's it.",
            "We're done here.",
            "Fine. That's everything.",
        ],
        _ => &[
            "That's all, thanks.",
            "That covers everything. Thank you.",
            "Nothing else. Thanks for the help.",
            "That's everything I needed.",
            "That will be all, thanks.",
        ],
    }
}

pub(super) fn closing_tails(family: &str) -> &'static [&'static str] {
    match family {
        "anger" => &[
            "It took longer than it should have.",
            "At least it's done now.",
        ],
        "fear" => &["I feel a lot calmer now.", "That's a weight off my mind."],
        "disgust" => &[
            "I'd rather never have to do that again.",
            "Glad to be done with it.",
        ],
        "sadness" => &[
            "It helps a little, thanks.",
            "It's not how I wanted things to go, but okay.",
        ],
        "enjoyment" => &["That was easy!", "Great, I'm all set!"],
        _ => &[],
    }
}

/// One line of the scripted user's banks, for checks that live outside the harness
/// (language, affirmation, the emotion lexicon: `analysis::clean`'s tests).
#[derive(Clone, Debug)]
pub struct SpokenLine {
    pub text: &'static str,
    /// The family the line shows, when it is meant to show one.
    pub family: Option<&'static str>,
    /// A yes to a proposed change.
    pub confirmation: bool,
}

/// Every line the scripted user can say apart from the task's own requests and facts.
pub fn spoken_lines() -> Vec<SpokenLine> {
    const TAXONOMY: [(&str, &[&str]); 5] = [
        (
            "anger",
            &[
                "annoyance",
                "frustration",
                "argumentativeness",
                "bitterness",
                "exasperation",
            ],
        ),
        ("fear", &["anxiety", "nervousness", "dread", "desperation"]),
        (
            "disgust",
            &["dislike", "aversion", "distaste", "repugnance"],
        ),
        (
            "sadness",
            &[
                "disappointment",
                "discouragement",
                "helplessness",
                "hopelessness",
                "sorrow",
            ],
        ),
        ("enjoyment", &["relief", "pride", "peace", "excitement"]),
    ];
    let line = |text, family, confirmation| SpokenLine {
        text,
        family,
        confirmation,
    };
    let mut out = Vec::new();
    for (family, emotions) in TAXONOMY {
        for e in emotions {
            out.extend(
                emotion_lines(e)
                    .iter()
                    .map(|t| line(*t, Some(family), false)),
            );
        }
        out.extend(reaction_lines(family).iter().map(|t| line(*t, None, false)));
        out.extend(closing_tails(family).iter().map(|t| line(*t, None, false)));
    }
    for p in ["warm", "neutral", "cold"] {
        out.extend(greetings(p).iter().map(|t| line(*t, None, false)));
        out.extend(closings(p).iter().map(|t| line(*t, None, false)));
        for trust in ["trusting", "cautious", "skeptical"] {
            let voice = Voice {
                trust: Some(trust.into()),
                politeness: Some(p.into()),
                ..Voice::default()
            };
            out.extend(confirmations(&voice).iter().map(|t| line(*t, None, true)));
            out.extend(
                acknowledgements(&voice)
                    .iter()
                    .map(|t| line(*t, None, false)),
            );
        }
    }
    for u in ["low", "high"] {
        out.extend(pace_lines(u).iter().map(|t| line(*t, None, false)));
    }
    for t in ["trusting", "cautious", "skeptical"] {
        out.extend(trust_lines(t).iter().map(|x| line(*x, None, false)));
    }
    out
}
