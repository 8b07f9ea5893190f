//! The scripted user simulator: a deterministic, rule-based stand-in for an
//! emotion-conditioned user model, for offline runs and tests (its model id is
//! `scripted:user`; it is never presented as model output).
//!
//! It states one intent at a time (first person, from the task's request sentences),
//! answers identity and payment questions from the task's user facts, confirms proposed
//! actions, and counts friction — being asked for something it already gave, apologies
//! without progress, a change made without its consent, questions it cannot place —
//! against a patience budget set by its urgency, trust and emotion family. It ends with
//! `###STOP###` once every intent was handled, or `###UNSATISFIED###` when friction
//! exceeds its patience (the paper's triggers: repeated questions, delays, eroded trust).
//!
//! It sounds like its condition ([`Voice`]): it opens with a line of its emotion, greets or
//! not by its politeness, says how much time it has or how far it trusts the agent, confirms
//! in the manner of its trust (a skeptical customer says it will check), reacts to each
//! result by its feeling, and closes warmly, plainly or curtly. When the instruction tells
//! it to begin vaguely, it opens with its goal in general terms and gives the details when
//! the agent asks (with the identity answer, or in answer to a question about them). The
//! no-emotion variant speaks plainly.
//!
//! Unlike a model-backed user simulator (which only ever reads the natural-language emotion
//! instruction, see `endpoint.rs`), this rule-based stand-in reads the task's condition
//! labels: it cannot read tone from text, and the labels are what the instruction was
//! drawn from.

use super::{BoxFuture, GREETING, HarnessError, STOP, UNSATISFIED, Usage, User, first_person};
use crate::artifact::TaskRecord;
use crate::domain::{Intent, ToolKind};
use crate::seed::derive_rng;
use crate::task::TaskParts;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

pub struct ScriptedUser {
    intents: Vec<String>,
    intent_has_write: Vec<bool>,
    identity: Option<String>,
    payment: Vec<String>,
    voice: Voice,
    /// The first request's details, held back by a customer told to begin vaguely.
    held_back: Option<String>,
    next_intent: usize,
    identity_given: bool,
    confirmed_in_intent: bool,
    patience: i32,
    friction: i32,
    /// The last line said from each bank (so the same words are not said twice running).
    said: Vec<String>,
    rng: ChaCha8Rng,
}

/// Patience budget: urgent, skeptical, angry or disgusted users tolerate less friction.
pub fn patience(urgency: Option<&str>, trust: Option<&str>, family: Option<&str>) -> i32 {
    let base = match urgency {
        Some("high") => 2,
        Some("low") => 4,
        _ => 3,
    };
    let trust = match trust {
        Some("trusting") => 1,
        Some("skeptical") => -1,
        _ => 0,
    };
    let family = match family {
        Some("anger") | Some("disgust") => -1,
        Some("enjoyment") => 1,
        _ => 0,
    };
    (base + trust + family).max(1)
}

/// Cues of a refiner's instruction to begin vaguely and give details only when asked.
const VAGUE_CUES: &[&str] = &[
    "general terms",
    "every detail at once",
    "begin vaguely",
    "only when the agent asks",
    "let the agent ask",
];

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
    fn of(task: &TaskRecord) -> Voice {
        Voice {
            family: task.emotion_family.clone(),
            emotion: task.emotion.clone(),
            politeness: task.politeness.clone(),
            urgency: task.urgency.clone(),
            trust: task.trust.clone(),
        }
    }
    fn politeness(&self) -> &str {
        self.politeness.as_deref().unwrap_or("neutral")
    }
    fn urgency(&self) -> &str {
        self.urgency.as_deref().unwrap_or("moderate")
    }
    fn trust(&self) -> &str {
        self.trust.as_deref().unwrap_or("cautious")
    }
}

/// A line in which the customer names its emotion (first person; each carries a word of
/// its family that `quality::voice` recognises).
fn emotion_lines(emotion: &str) -> &'static [&'static str] {
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
fn reaction_lines(family: &str) -> &'static [&'static str] {
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

fn greetings(politeness: &str) -> &'static [&'static str] {
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

fn pace_lines(urgency: &str) -> &'static [&'static str] {
    match urgency {
        "high" => &[
            "I'm short on time, so let's be quick.",
            "I need this done quickly, please.",
        ],
        "low" => &["There's no rush on my side.", "Take your time."],
        _ => &[],
    }
}

fn trust_lines(trust: &str) -> &'static [&'static str] {
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
fn vague_goal(kind: Intent) -> &'static [&'static str] {
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
fn confirmations(voice: &Voice) -> &'static [&'static str] {
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

fn acknowledgements(voice: &Voice) -> &'static [&'static str] {
    match (voice.trust(), voice.politeness()) {
        ("skeptical", _) => &["Hm. All right.", "If you say so."],
        (_, "warm") => &["Thank you, that's great.", "Wonderful, thank you."],
        (_, "cold") => &["Fine.", "Okay."],
        _ => &["Okay, thanks.", "Alright."],
    }
}

fn closings(politeness: &str) -> &'static [&'static str] {
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

fn closing_tails(family: &str) -> &'static [&'static str] {
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

/// Lower-case the first letter unless it starts "I" as a word (for text after a lead-in).
fn continue_with(text: &str) -> String {
    if text.starts_with("I ") || text.starts_with("I'") {
        return text.to_string();
    }
    let mut c = text.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

impl ScriptedUser {
    /// Build from a task; `with_emotion = false` is the no-emotion variant.
    pub fn new(
        task: &TaskRecord,
        parts: &TaskParts,
        with_emotion: bool,
        seed: u64,
        trial: u32,
    ) -> ScriptedUser {
        let TaskParts {
            actions,
            requests,
            user_facts: facts,
        } = parts;
        let specs = crate::domain::find(&task.domain)
            .map(|d| d.tool_specs())
            .unwrap_or_default();
        let spec = |name: &str| specs.iter().find(|s| s.name == name);
        let n = task.intents.len();
        let mut intents = vec![String::new(); n];
        let mut intent_has_write = vec![false; n];
        let mut kinds = vec![Intent::Lookup; n];
        for (j, &i) in task.action_intents.iter().enumerate() {
            let i = i as usize;
            if i >= n {
                continue;
            }
            if let Some(Some(r)) = requests.get(j) {
                if !intents[i].is_empty() {
                    intents[i].push(' ');
                }
                intents[i].push_str(&first_person(r));
            }
            let name = actions.get(j).map_or("", |a| a.name.as_str());
            let write = spec(name).is_none_or(|s| s.kind != ToolKind::Read);
            intent_has_write[i] |= write;
            if let Some(s) = spec(name).filter(|_| write)
                && kinds[i] == Intent::Lookup
            {
                kinds[i] = s.intent;
            }
        }
        let keep: Vec<bool> = intents.iter().map(|s| !s.is_empty()).collect();
        fn kept<T>(v: Vec<T>, keep: &[bool]) -> Vec<T> {
            v.into_iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(x, _)| x)
                .collect()
        }
        let intent_has_write = kept(intent_has_write, &keep);
        let kinds = kept(kinds, &keep);
        let intents: Vec<String> = intents.into_iter().filter(|s| !s.is_empty()).collect();
        let voice = if with_emotion {
            Voice::of(task)
        } else {
            Voice::default()
        };
        let vague = task
            .instruction
            .as_deref()
            .is_some_and(|t| VAGUE_CUES.iter().any(|c| t.to_lowercase().contains(c)));
        let mut rng = derive_rng(seed, &["user", &task.task_id, &trial.to_string()]);
        let held_back = if vague {
            kinds.first().map(|k| {
                let goal = vague_goal(*k);
                goal[rng.random_range(0..goal.len())].to_string()
            })
        } else {
            None
        };
        ScriptedUser {
            patience: patience(
                voice.urgency.as_deref(),
                voice.trust.as_deref(),
                voice.family.as_deref(),
            ),
            intents,
            intent_has_write,
            identity: facts
                .iter()
                .find(|f| f.kind == "identity")
                .map(|f| first_person(&f.text)),
            payment: facts
                .iter()
                .filter(|f| f.kind == "payment")
                .map(|f| first_person(&f.text))
                .collect(),
            voice,
            held_back,
            next_intent: 0,
            identity_given: false,
            confirmed_in_intent: false,
            friction: 0,
            said: Vec::new(),
            rng,
        }
    }

    /// One line of `bank`, never the line this user said last from it.
    fn pick(&mut self, bank: &[&str]) -> Option<String> {
        if bank.is_empty() {
            return None;
        }
        let mut i = self.rng.random_range(0..bank.len());
        if bank.len() > 1 && self.said.iter().any(|s| s == bank[i]) {
            i = (i + 1) % bank.len();
        }
        let line = bank[i].to_string();
        self.said.retain(|s| !bank.contains(&s.as_str()));
        self.said.push(line.clone());
        Some(line)
    }

    /// The first message: a greeting by politeness, the emotion's line, the first request
    /// (or its goal in general terms), and how much time or trust the customer has.
    fn opening(&mut self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.pick(greetings(self.voice.politeness())));
        if let Some(e) = self.voice.emotion.clone() {
            parts.extend(self.pick(emotion_lines(&e)));
        }
        let first = self.intents.first().cloned().unwrap_or_default();
        self.next_intent = 1;
        match self.held_back.clone() {
            Some(goal) => {
                parts.push(goal);
                // The details wait until the agent asks for them.
                self.held_back = Some(first);
            }
            None => parts.push(first),
        }
        if self.voice.emotion.is_some() {
            let pace = pace_lines(self.voice.urgency());
            let trust = trust_lines(self.voice.trust());
            let bank = if !pace.is_empty() && self.rng.random_bool(0.5) {
                pace
            } else {
                trust
            };
            parts.extend(self.pick(bank));
        }
        parts.join(" ")
    }

    fn closing(&mut self) -> String {
        let mut text = self
            .pick(closings(self.voice.politeness()))
            .unwrap_or_default();
        if let Some(f) = self.voice.family.clone()
            && self.rng.random_bool(0.6)
            && let Some(tail) = self.pick(closing_tails(&f))
        {
            text = format!("{text} {tail}");
        }
        format!("{text} {STOP}")
    }

    fn next_request(&mut self) -> String {
        self.confirmed_in_intent = false;
        let Some(r) = self.intents.get(self.next_intent).cloned() else {
            return self.closing();
        };
        self.next_intent += 1;
        let mut parts: Vec<String> = Vec::new();
        let reaction = self
            .voice
            .family
            .clone()
            .filter(|_| self.rng.random_bool(0.5))
            .and_then(|f| self.pick(reaction_lines(&f)));
        match reaction {
            Some(r) => parts.push(r),
            None => parts.extend(self.pick(acknowledgements(&self.voice))),
        }
        let lead = self
            .pick(&[
                "Next, ",
                "Also, ",
                "One more thing: ",
                "There's something else: ",
            ])
            .unwrap_or_default();
        parts.push(format!("{lead}{}", continue_with(&r)));
        parts.join(" ")
    }

    fn unsatisfied(&self) -> String {
        let why = match self.voice.politeness() {
            "warm" => "I'm sorry, but this isn't working for me. I'll try another time.",
            "cold" => "This is going nowhere. I'm done.",
            _ => "This is not working for me and I'm done here.",
        };
        format!("{why} {UNSATISFIED}")
    }

    /// The reply to one agent message, before the patience check.
    fn respond(&mut self, agent: &str) -> String {
        if agent == GREETING {
            return self.opening();
        }
        // What the agent asks, not what it reports: "The email is ..." in an answer is not
        // an identity question.
        let lower = super::questions(agent);
        let asks = !lower.is_empty();
        if asks
            && (lower.contains("verify")
                || lower.contains("identity")
                || lower.contains("user id")
                || lower.contains("email"))
        {
            let again = self.identity_given;
            if again {
                self.friction += 1;
            }
            self.identity_given = true;
            let id = self
                .identity
                .clone()
                .unwrap_or_else(|| "I don't have an account number at hand.".into());
            let lead = match (again, self.voice.politeness(), self.voice.trust()) {
                (true, _, "skeptical") | (true, "cold", _) => "I already gave you that. ",
                (true, _, _) => "Sure, again: ",
                (false, "warm", _) => "Of course. ",
                _ => "",
            };
            let mut reply = format!("{lead}{id}");
            if let Some(details) = self.held_back.take() {
                reply = format!("{reply} Here is what I need: {}", continue_with(&details));
            }
            return reply;
        }
        if lower.contains("anything else") {
            let wrote = self
                .next_intent
                .checked_sub(1)
                .and_then(|i| self.intent_has_write.get(i))
                .copied()
                .unwrap_or(false);
            if wrote && !self.confirmed_in_intent {
                // A change made without asking erodes trust.
                self.friction += 2;
            }
            return self.next_request();
        }
        if asks
            && (lower.contains("proceed") || lower.contains("confirm") || lower.contains("yes/no"))
        {
            self.confirmed_in_intent = true;
            let mut yes = self
                .pick(confirmations(&self.voice))
                .unwrap_or_else(|| "Yes, please go ahead.".into());
            if self.voice.urgency() == "high" && self.rng.random_bool(0.3) {
                yes.push_str(" Quickly, please.");
            }
            return yes;
        }
        if asks && lower.contains("payment") {
            return self
                .payment
                .first()
                .cloned()
                .unwrap_or_else(|| "Use whatever is on file.".into());
        }
        let full = agent.to_lowercase();
        if (full.contains("sorry") || full.contains("apolog")) && !full.contains("done") {
            self.friction += 1;
            return match self.voice.urgency() {
                "high" => "I need this fixed, not apologies. Can we keep going?",
                "low" => "That's all right. Shall we carry on?",
                _ => "Okay. Can we keep going, please?",
            }
            .into();
        }
        if asks {
            // A question about what the customer wants, from one who held the details back.
            if let Some(details) = self.held_back.take() {
                return details;
            }
            self.friction += 1;
            return match self.voice.trust() {
                "skeptical" => "I already told you what I need. Why is this so hard?",
                _ => "I've told you what I need; please just help me with that.",
            }
            .into();
        }
        self.pick(&["Okay.", "Alright.", "I see."])
            .unwrap_or_default()
    }
}

impl User for ScriptedUser {
    fn model_id(&self) -> String {
        "scripted:user".into()
    }

    fn reply<'a>(
        &'a mut self,
        agent_text: &'a str,
    ) -> BoxFuture<'a, Result<(String, Usage), HarnessError>> {
        Box::pin(async move {
            let text = self.respond(agent_text);
            if self.friction > self.patience {
                return Ok((self.unsatisfied(), Usage::default()));
            }
            Ok((text, Usage::default()))
        })
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
