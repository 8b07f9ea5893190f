//! Which successful rollouts may become SFT rows. Reward 1 says the final state and the
//! required outputs were right; it says nothing about how the agent got there. A row a model
//! is trained on must also end with the user's own stop, carry no policy or interaction fault
//! that the failure analysis finds (a skipped confirmation, a premature or wrong transfer,
//! information revealed before verification, a policy breach, a redundant question) and no
//! write carried out with wrong arguments, and — where the policy requires it — identify the
//! customer with a lookup before the first write.
//!
//! Architecture invariant: decides from an analysed [`Episode`] and its findings; reads no
//! files.

use super::{Episode, Fault, Finding};
use crate::harness::{MessageRole, Termination};
use crate::quality::{counts, pct};
use std::collections::BTreeMap;

/// The fault groups that disqualify a successful episode as training data.
pub fn disqualifies(fault: Fault) -> bool {
    matches!(fault.category(), "policy & interaction" | "integrity")
}

/// Whether a finding disqualifies a successful episode: a fault of a disqualifying group
/// ([`disqualifies`]), or a write the tool carried out that the reference does not hold as
/// made (`wrong_arguments`, or `extra_action` when a later write put the record right):
/// the agent changed the customer's records in a way they did not ask for (retail's kept
/// row `a645f3ac12303e31` wrote an address the customer never gave, then the one a change
/// of mind asked for). A wrong call the tool refused changed nothing; trying again after an
/// error is not a fault of the row.
pub fn disqualifying(ep: &Episode, f: &Finding) -> bool {
    let ran = || {
        f.call
            .and_then(|n| ep.calls.iter().find(|c| c.ordinal == n))
            .is_some_and(|c| c.succeeded())
    };
    disqualifies(f.fault)
        || (matches!(f.fault, Fault::WrongArguments | Fault::ExtraAction) && ran())
}

/// Why a successful episode is not a clean SFT row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unclean {
    /// It ended some other way than the user's `###STOP###`.
    NotStopped(String),
    /// A disqualifying fault, with the detector's detail.
    Fault(Fault, String),
    /// A write came before any lookup that identified the customer.
    NotIdentified,
    /// A turn that must never reach training data (`rule`, detail): an empty turn, leaked
    /// markup or thinking, an end marker inside a sentence, or the customer pasting the
    /// instruction's directions ([`turn_problems`]).
    Turn(&'static str, String),
}

impl Unclean {
    pub fn kind(&self) -> &'static str {
        match self {
            Unclean::NotStopped(_) => "not_stopped",
            Unclean::Fault(f, _) => f.as_str(),
            Unclean::NotIdentified => "not_identified",
            Unclean::Turn(rule, _) => rule,
        }
    }
}

impl std::fmt::Display for Unclean {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unclean::NotStopped(t) => write!(f, "ended with {t}, not the user's stop"),
            Unclean::Fault(fault, d) => write!(f, "{}: {d}", fault.as_str()),
            Unclean::NotIdentified => {
                f.write_str("a write came before any lookup that identified the customer")
            }
            Unclean::Turn(rule, d) => write!(f, "{rule}: {d}"),
        }
    }
}

/// Whether the customer was identified by a successful read carrying an identity value
/// before the first write; `None` when the episode wrote nothing.
pub fn identified_before_first_write(ep: &Episode) -> Option<bool> {
    let first_write = ep.calls.iter().find(|c| c.is_action_write())?;
    Some(ep.calls.iter().any(|c| {
        c.ordinal < first_write.ordinal
            && c.succeeded()
            && c.kind == Some(crate::domain::ToolKind::Read)
            && c.args.as_ref().is_some_and(|a| {
                let mut leaves = Vec::new();
                super::episode::string_leaves(a, &mut leaves);
                leaves
                    .iter()
                    .any(|l| ep.identity_values.iter().any(|v| l.eq_ignore_ascii_case(v)))
            })
    }))
}

/// Every reason a successful episode is not a clean row (empty: keep it).
pub fn unclean(ep: &Episode, findings: &[Finding], identity_first: bool) -> Vec<Unclean> {
    let mut out = Vec::new();
    if ep.termination != Termination::UserStop.as_str() {
        out.push(Unclean::NotStopped(ep.termination.clone()));
    }
    for f in findings.iter().filter(|f| disqualifying(ep, f)) {
        if !out
            .iter()
            .any(|u| matches!(u, Unclean::Fault(g, _) if *g == f.fault))
        {
            out.push(Unclean::Fault(f.fault, f.detail.clone()));
        }
    }
    if identity_first && identified_before_first_write(ep) == Some(false) {
        out.push(Unclean::NotIdentified);
    }
    out.extend(
        turn_problems(&ep.messages, ep.instruction.as_deref().unwrap_or(""))
            .into_iter()
            .take(1)
            .map(|(rule, d)| Unclean::Turn(rule, d)),
    );
    out
}

/// Markup that never belongs in a said turn: thinking, chat-template and tool-call markers.
const LEAKED: &[&str] = &[
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_start|>",
    "<|im_end|>",
    "<|eot_id|>",
    "[TOOL_CALLS]",
    "(thinking:",
];

/// Words in a row a customer may not copy from the instruction's directions.
const DIRECTION_WORDS: usize = 6;

/// The instruction's sentences that direct the simulated customer (how to behave, when to
/// say who it is), not what it wants: a customer who repeats them reads a script aloud.
/// Each as its words and how many of them come before a colon: what follows "If asked who
/// you are:" is what the customer may say in its own name, so only a run that reaches into
/// the words before the colon is a copied direction.
fn directions(instruction: &str) -> Vec<(Vec<String>, usize)> {
    instruction
        .split(['.', ';', '\n'])
        .map(str::trim)
        .filter(|s| {
            let l = s.to_lowercase();
            // "you would like the agent to tell you X" is a request, said as one.
            let request = [
                "like the agent to",
                "want the agent to",
                "need the agent to",
            ]
            .iter()
            .any(|r| l.contains(r));
            (l.contains("the agent") && !request)
                || l.starts_with("if asked")
                || l.starts_with("to confirm your identity")
                || l.starts_with("for identification")
                || l.starts_with("you can prove who you are")
                || l.starts_with("you do not give")
                || l.starts_with("open in general terms")
                || l.starts_with("begin vaguely")
        })
        .map(|s| {
            let all = words(s);
            let head = match s.split_once(':') {
                Some((before, _)) => words(before).len(),
                None => all.len(),
            };
            (all, head)
        })
        .filter(|(w, _)| w.len() >= DIRECTION_WORDS)
        .collect()
}

/// Lower-case words, a value whole ("ada_lee_1", "4,400.00", "a@b.com" are one word each):
/// a customer may say its own ids and amounts, so they do not make a run long.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, ';' | ':' | '(' | ')' | '"'))
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'')))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The first `DIRECTION_WORDS`-word run `turn` shares with a direction, if any (a run that
/// starts among the direction's words before its colon).
fn copied_direction(turn: &str, directions: &[(Vec<String>, usize)]) -> Option<String> {
    let said = words(turn);
    for (d, head) in directions {
        for run in d.windows(DIRECTION_WORDS).take(*head) {
            if said.windows(DIRECTION_WORDS).any(|w| w == run) {
                return Some(run.join(" "));
            }
        }
    }
    None
}

/// The last check on every row that may become training data: no empty turn (an assistant
/// message with neither text nor a call, a customer message with no text), no leaked markup
/// or thinking in what either side says, no end marker inside the customer's sentence (only
/// alone or at the end), the agent never writing a marker, and no customer turn repeating
/// six or more words of the instruction's directions. Each problem as (rule, detail), in
/// message order.
pub fn turn_problems(
    messages: &[crate::harness::ChatMessage],
    instruction: &str,
) -> Vec<(&'static str, String)> {
    let dirs = directions(instruction);
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let text = m.content.as_deref().unwrap_or("");
        let said = text.trim();
        match m.role {
            MessageRole::Assistant if said.is_empty() && m.tool_calls.is_empty() => {
                out.push(("empty_turn", format!("message {i}: the agent said nothing")));
            }
            MessageRole::User if said.is_empty() => {
                out.push((
                    "empty_turn",
                    format!("message {i}: the customer said nothing"),
                ));
            }
            MessageRole::Assistant | MessageRole::User => {
                let lower = said.to_lowercase();
                let leaked = LEAKED
                    .iter()
                    .find(|l| lower.contains(&l.to_lowercase()))
                    .copied()
                    .or_else(|| lower.starts_with("thinking:").then_some("thinking:"));
                if let Some(mark) = leaked {
                    out.push(("leaked_markup", format!("message {i} carries \"{mark}\"")));
                    continue;
                }
                let markers = [crate::harness::STOP, crate::harness::UNSATISFIED];
                if let Some(mark) = markers.iter().find(|mk| said.contains(**mk)) {
                    let at_end = said.trim_end_matches(['.', '!', ' ']).ends_with(*mark);
                    if m.role == MessageRole::Assistant || !at_end {
                        out.push((
                            "marker_inside",
                            format!("message {i}: {mark} inside the text, not alone at its end"),
                        ));
                        continue;
                    }
                }
                if m.role == MessageRole::User
                    && let Some(run) = copied_direction(said, &dirs)
                {
                    out.push((
                        "verbatim_direction",
                        format!("message {i} repeats the instruction's direction \"{run}\""),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// The SFT figures of one domain and split (`tracer quality`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SftSummary {
    pub rows: usize,
    pub not_stopped: usize,
    /// Rows with at least one disqualifying fault, and the faults counted per row.
    pub faulty: usize,
    pub faults: BTreeMap<&'static str, usize>,
    /// Rows that write, and of those the ones whose customer was identified first.
    pub writing: usize,
    pub identified_first: usize,
    /// Rows made by a scripted agent or user.
    pub scripted: usize,
    /// Language hits in the user's turns, by rule.
    pub language: BTreeMap<&'static str, usize>,
    /// Rows with an emotion condition, and of those the ones whose user voices the
    /// condition's family somewhere ([`crate::quality::voice`]).
    pub with_emotion: usize,
    pub voiced: usize,
    /// The user's last words (the end marker removed), for the distinct closings count.
    pub closings: std::collections::BTreeSet<String>,
    /// Per row, the most tool calls the agent made between two customer messages: how
    /// much it did on one word from the customer (pacing).
    pub calls_per_turn: Vec<usize>,
}

impl SftSummary {
    /// Add one kept row: its analysed episode, the detectors' findings and the models;
    /// `identity_required`: whether the domain's policy has the customer identified first
    /// (rows of a domain without sign-in do not count towards that column).
    pub fn add(
        &mut self,
        ep: &Episode,
        findings: &[Finding],
        agent: &str,
        user: &str,
        family: Option<&str>,
        identity_required: bool,
    ) {
        self.rows += 1;
        if ep.termination != Termination::UserStop.as_str() {
            self.not_stopped += 1;
        }
        let mut faulty = false;
        for f in findings.iter().filter(|f| disqualifying(ep, f)) {
            *self.faults.entry(f.fault.as_str()).or_default() += 1;
            faulty = true;
        }
        self.faulty += usize::from(faulty);
        if let Some(first) = identified_before_first_write(ep).filter(|_| identity_required) {
            self.writing += 1;
            self.identified_first += usize::from(first);
        }
        if agent.starts_with("scripted:") || user.starts_with("scripted:") {
            self.scripted += 1;
        }
        let user_turns: Vec<&str> = ep
            .messages
            .iter()
            .filter(|m| m.role == MessageRole::User)
            .map(|m| m.content.as_deref().unwrap_or_default())
            .collect();
        if let Some(f) = family {
            self.with_emotion += 1;
            self.voiced += usize::from(
                user_turns
                    .iter()
                    .any(|t| crate::quality::voice::shows_family(t, f)),
            );
        }
        self.calls_per_turn.push(most_calls_per_turn(&ep.messages));
        if let Some(last) = user_turns.last() {
            let last = last.replace(crate::harness::STOP, "");
            self.closings.insert(last.trim().to_string());
        }
        for m in ep.messages.iter().filter(|m| m.role == MessageRole::User) {
            let text = m.content.as_deref().unwrap_or_default();
            let text = text
                .replace(crate::harness::STOP, "")
                .replace(crate::harness::UNSATISFIED, "");
            for h in crate::quality::language::check(&text) {
                *self.language.entry(h.rule.as_str()).or_default() += 1;
            }
        }
    }
}

/// The most tool calls made between two customer messages of a conversation.
pub fn most_calls_per_turn(messages: &[crate::harness::ChatMessage]) -> usize {
    let mut most = 0;
    let mut run = 0;
    for m in messages {
        if m.role == MessageRole::User {
            run = 0;
        }
        run += m.tool_calls.len();
        most = most.max(run);
    }
    most
}

/// The median of `values` (the lower middle one of an even count), 0 for none.
fn median(values: &[usize]) -> usize {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

/// The kept-SFT-rows table of `tracer quality`, one row per domain and split.
pub fn table(rows: &[(String, crate::split::Split, SftSummary)]) -> String {
    let mut out = String::from(
        "| domain | split | kept SFT rows | not ended by the user's stop | with a policy or interaction fault (fault n) | identified before the first write | scripted agent or user | user-turn language hits | user voices its emotion | distinct closings | calls between customer turns (median of most, max) |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (d, split, s) in rows {
        let (faults, language) = (counts(&s.faults), counts(&s.language));
        out.push_str(&format!(
            "| {d} | {split} | {} | {} | {} ({faults}) | {} | {} | {language} | {} | {} | {}, {} |\n",
            s.rows,
            s.not_stopped,
            s.faulty,
            pct(s.identified_first, s.writing),
            s.scripted,
            pct(s.voiced, s.with_emotion),
            s.closings.len(),
            median(&s.calls_per_turn),
            s.calls_per_turn.iter().max().copied().unwrap_or(0),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::{Unclean, unclean};
    use crate::analysis::{Fault, detect_all};
    use crate::harness::{ChatMessage, MessageRole, ToolCall};

    /// A write carried out with wrong arguments disqualifies the row, even when a later
    /// write put the record right (retail's kept row `a645f3ac12303e31`): the first write is
    /// then an extra action that ran. One the tool refused, retried with the right
    /// arguments, does not.
    #[test]
    fn a_write_that_ran_with_wrong_arguments_is_not_a_clean_row() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let faults = |ep: &super::Episode| -> Vec<&'static str> {
            unclean(ep, &detect_all(ep), false)
                .iter()
                .map(Unclean::kind)
                .collect()
        };
        // Wrong arguments the tool carries out (one more checked bag), then the right ones.
        // Wrong arguments the tool carries out: more checked bags than asked for.
        let wrong = (1..=3)
            .map(|n| {
                let mut wrong = a.1.clone();
                let asked = a.1["total_baggages"].as_i64().unwrap();
                wrong["total_baggages"] = serde_json::json!(asked + n);
                wrong
            })
            .find(|wrong| !f.env.fork().invoke(&a.0, wrong).is_error)
            .expect("a wrong baggage change the tool carries out");
        // The customer names the trip and the card, so no id the agent uses is unseen.
        let said = format!(
            "Add a bag to {}, please, paid with {}.",
            a.1["reservation_id"].as_str().unwrap(),
            a.1["payment_id"].as_str().unwrap()
        );
        let mut s = f.script(std::slice::from_ref(&a));
        s.user(&said);
        s.agent("I will add a bag. Shall I proceed?");
        s.user("Yes, go ahead.");
        s.call(&a.0, wrong);
        s.call(&a.0, a.1.clone());
        let ep = s.episode("user_stop", 1);
        assert!(ep.calls[0].succeeded());
        assert!(
            faults(&ep).contains(&Fault::ExtraAction.as_str()),
            "{:?}",
            detect_all(&ep)
        );
        // Refused by the tool, then made right: clean.
        let mut refused = a.1.clone();
        refused["reservation_id"] = serde_json::json!("NOSUCH");
        let mut s = f.script(std::slice::from_ref(&a));
        s.user(&format!("My trip is NOSUCH. {said}"));
        s.agent("I will add a bag. Shall I proceed?");
        s.user("Yes, go ahead.");
        s.call(&a.0, refused);
        s.call(&a.0, a.1.clone());
        let ep = s.episode("user_stop", 1);
        assert!(!ep.calls[0].succeeded());
        assert!(faults(&ep).is_empty(), "{:?}", faults(&ep));
    }

    #[test]
    fn a_row_with_an_empty_leaked_or_scripted_turn_is_refused() {
        let say = |role, text: &str| ChatMessage::text(role, text);
        let instruction = "Your name is Ada Lee. You want reservation ABC123 cancelled. You do \
                           not give every detail at once; answer the agent's questions as they \
                           come. If asked who you are: your user id is ada_lee_1.";
        let good = [
            say(MessageRole::Assistant, "Hi! How can I help you today?"),
            say(
                MessageRole::User,
                "I want my reservation ABC123 cancelled, please.",
            ),
            say(MessageRole::Assistant, "Done."),
            say(MessageRole::User, "Thanks! ###STOP###"),
        ];
        assert_eq!(super::turn_problems(&good, instruction), []);
        let rule = |i: usize, text: &str| {
            let mut m = good.to_vec();
            m[i] = say(m[i].role, text);
            super::turn_problems(&m, instruction)
                .first()
                .map(|p| p.0)
                .unwrap_or("none")
        };
        assert_eq!(rule(2, "  "), "empty_turn");
        assert_eq!(rule(1, ""), "empty_turn");
        assert_eq!(
            rule(1, "(Thinking: I should say it.) Cancel ABC123."),
            "leaked_markup"
        );
        assert_eq!(rule(2, "<think>ok</think>Done."), "leaked_markup");
        assert_eq!(rule(3, "Thanks ###STOP### bye"), "marker_inside");
        assert_eq!(rule(2, "Done. ###STOP###"), "marker_inside");
        assert_eq!(
            rule(1, "Cancel ABC123. You do not give every detail at once."),
            "verbatim_direction"
        );
        assert_eq!(
            rule(1, "If asked who you are: your user id is ada_lee_1."),
            "verbatim_direction"
        );
        // Saying who you are in your own words is not a copied direction, nor is a
        // request the instruction puts as what the agent should do.
        assert_eq!(rule(1, "My user id is ada_lee_1; cancel ABC123."), "none");
        let asks = "Your name is Ada Lee. You would like the agent to tell you the flight \
                    numbers and dates on reservation ABC123.";
        let m = [say(
            MessageRole::User,
            "I would like you to tell me the flight numbers and dates on reservation ABC123.",
        )];
        assert_eq!(super::turn_problems(&m, asks), []);
    }

    #[test]
    fn calls_are_counted_between_customer_messages() {
        let call = |n: usize| {
            let calls = (0..n)
                .map(|i| ToolCall {
                    id: format!("c{i}"),
                    name: "get_x".into(),
                    arguments: "{}".into(),
                })
                .collect();
            ChatMessage::assistant_tool_calls(None, calls)
        };
        let user = || ChatMessage::text(MessageRole::User, "hi");
        let messages = [user(), call(2), call(1), user(), call(1), user()];
        assert_eq!(super::most_calls_per_turn(&messages), 3);
        assert_eq!(super::median(&[4, 1, 3, 2]), 2);
    }

    #[test]
    fn the_scripted_users_lines_are_clean_say_yes_and_show_their_family() {
        let lines = crate::harness::user::spoken_lines();
        assert!(lines.len() > 100);
        for l in &lines {
            let hits = crate::quality::language::check(l.text);
            assert!(hits.is_empty(), "{}: {hits:?}", l.text);
            if l.confirmation {
                assert!(
                    super::super::confirmation::affirmative(l.text),
                    "{}",
                    l.text
                );
            }
            if let Some(f) = l.family {
                assert!(
                    crate::quality::voice::shows_family(l.text, f),
                    "{f}: {}",
                    l.text
                );
            }
        }
    }
}
