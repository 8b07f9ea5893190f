//! The judge role: a model reads a failed episode and names the faults rules cannot decide
//! — misread intent, hallucination, inconsistency, friction, emotional neglect
//! ([`Fault::JUDGED`]) — given what it needs to tell: the agent's policy, the reference
//! actions that solve the task, the customer's instruction and emotion instruction, what the
//! detectors already found, and the whole transcript (without the agent's reasoning) with
//! full tool results. A transcript too long for [`CONTEXT_CHARS`] loses whole tool results,
//! the longest first, each replaced by a note of its size — never a result cut in the middle.
//! Its labels carry whose fault it is (`agent` or `user`), the message, and a severity, and
//! the detector name `judge:<model>`: they are model labels, to be read as such. Labels
//! outside its vocabulary are dropped (the detectors decide those), and an answer that is
//! not the asked-for JSON yields no label (counted by the caller).
//!
//! The scripted judge abstains: it cannot read, so it labels nothing.
//!
//! Architecture invariant: knows the episode and the role layer; nothing of stages or files.

use super::episode::Episode;
use super::{Fault, Finding};
use crate::harness::MessageRole;
use crate::llm::{ChatMessage, ChatModel, ChatRequest, Prompt};
use serde::Deserialize;
use std::sync::Arc;

/// Characters of the judge's request beyond which whole tool results are left out (about
/// 20,000 tokens at four characters a token: the policy, the reference and a long
/// conversation fit a 32k-token model with room for its answer).
pub const CONTEXT_CHARS: usize = 80_000;

/// What the judge reads besides the episode: its prompt and the agent's policy.
pub struct JudgeContext<'a> {
    pub prompt: &'a Prompt,
    pub policy: &'a str,
}

/// The transcript as numbered lines (the system prompt left out; numbering kept), every
/// tool result whole, within `budget` characters (see [`CONTEXT_CHARS`]).
pub fn render_transcript(ep: &Episode, budget: usize) -> String {
    // (message index, line, whether it is a tool result that may be left out)
    let mut lines: Vec<(usize, String, bool)> = Vec::new();
    for (i, m) in ep.messages.iter().enumerate().skip(1) {
        if m.role == MessageRole::Tool {
            lines.push((i, format!("[{i}] tool result: {}\n", ep.text(i)), true));
            continue;
        }
        if !ep.text(i).is_empty() {
            lines.push((i, format!("[{i}] {}: {}\n", m.role, ep.text(i)), false));
        }
        for c in &m.tool_calls {
            lines.push((
                i,
                format!("[{i}] {} calls {}({})\n", m.role, c.name, c.arguments),
                false,
            ));
        }
    }
    let mut total: usize = lines.iter().map(|l| l.1.len()).sum();
    while total > budget {
        let Some(longest) = lines.iter_mut().filter(|l| l.2).max_by_key(|l| l.1.len()) else {
            break;
        };
        let note = format!(
            "[{}] tool result: ({} characters, left out to fit the context)\n",
            longest.0,
            longest.1.len()
        );
        total = total - longest.1.len() + note.len();
        longest.1 = note;
        longest.2 = false;
    }
    let mut out = String::with_capacity(total);
    for (_, line, _) in lines {
        out.push_str(&line);
    }
    out
}

/// The judge's request for one episode (its prompt: `prompts/analysis_judge.md`).
pub fn request(ctx: &JudgeContext, ep: &Episode, findings: &[Finding], seed: u64) -> ChatRequest {
    let found = if findings.is_empty() {
        "none".to_string()
    } else {
        findings
            .iter()
            .map(|f| match f.step {
                Some(s) => format!("- {} at [{s}]: {}", f.fault.as_str(), f.detail),
                None => format!("- {}: {}", f.fault.as_str(), f.detail),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let reference = ep
        .reference
        .iter()
        .map(|a| format!("- {}({})", a.name, a.args))
        .collect::<Vec<_>>()
        .join("\n");
    let head = format!(
        "The agent's policy:\n{}\n\nReference actions (the calls that solve the task, in order):\n{reference}\n\n",
        ctx.policy.trim()
    );
    let budget = CONTEXT_CHARS.saturating_sub(head.len() + 2_000);
    let mut messages = ctx.prompt.messages(None);
    messages.push(ChatMessage::user(format!(
            "{head}Customer instruction:\n{}\n\nHow the customer behaves:\n{}\n\nOutcome: reward {} ({})\n\nAutomatic findings:\n{found}\n\nConversation:\n{}",
            ep.instruction.as_deref().unwrap_or("(none)"),
            ep.emotion_instruction.as_deref().unwrap_or("(no emotion condition)"),
            ep.reward,
            ep.termination,
            render_transcript(ep, budget)
    )));
    ChatRequest::new(messages).with_seed(seed)
}

#[derive(Deserialize)]
struct Answer {
    faults: Vec<Label>,
}

#[derive(Deserialize)]
struct Label {
    fault: String,
    #[serde(default)]
    step: Option<i64>,
    #[serde(default)]
    detail: String,
    /// Whose fault: `agent` or `user`.
    #[serde(default)]
    source: Option<String>,
    /// `minor`, `major` or `critical`.
    #[serde(default)]
    severity: Option<String>,
}

/// A label's party as the record keeps it (`None` for anything but the two names).
fn party(text: Option<&str>) -> Option<&'static str> {
    match text?.trim().to_lowercase().as_str() {
        "agent" => Some("agent"),
        "user" | "customer" => Some("user"),
        _ => None,
    }
}

fn severity(text: Option<&str>) -> Option<&'static str> {
    match text?.trim().to_lowercase().as_str() {
        "minor" => Some("minor"),
        "major" => Some("major"),
        "critical" => Some("critical"),
        _ => None,
    }
}

/// The judge's labels from its answer text: `Err` when the answer holds no readable JSON.
pub fn parse_answer(text: &str, model: &str, ep: &Episode) -> Result<Vec<Finding>, String> {
    let (start, end) = (text.find('{'), text.rfind('}'));
    let json = match (start, end) {
        (Some(s), Some(e)) if s < e => &text[s..=e],
        _ => return Err("no JSON object in the judge's answer".into()),
    };
    let answer: Answer = serde_json::from_str(json).map_err(|e| format!("judge answer: {e}"))?;
    let detector = format!("judge:{model}");
    Ok(answer
        .faults
        .into_iter()
        .filter_map(|l| {
            let fault = Fault::parse(l.fault.trim()).filter(|f| Fault::JUDGED.contains(f))?;
            let step = l
                .step
                .and_then(|s| usize::try_from(s).ok())
                .filter(|&s| s < ep.messages.len());
            let mut f = Finding::new(fault, &detector, l.detail.trim());
            f.step = step;
            f.party = party(l.source.as_deref());
            f.severity = severity(l.severity.as_deref());
            Some(f)
        })
        .collect())
}

/// Ask the judge about each episode (concurrently; the model bounds its own concurrency).
/// Per episode: its labels, or why the answer was unreadable. An endpoint failure after the
/// retries fails the whole call (the caller's stage fails and a rerun asks again, from the
/// response cache for what was answered).
pub fn judge_all(
    model: &Arc<dyn ChatModel>,
    ctx: &JudgeContext,
    episodes: &[(&Episode, Vec<Finding>)],
    seed: u64,
) -> Result<Vec<Result<Vec<Finding>, String>>, String> {
    let id = model.model_id().to_string();
    let requests: Vec<ChatRequest> = episodes
        .iter()
        .map(|(ep, found)| {
            let s = crate::seed::derive_seed(seed, &["judge", &ep.task_id, &ep.trial.to_string()]);
            request(ctx, ep, found, s)
        })
        .collect();
    let rt = crate::llm::runtime()?;
    let answers: Vec<Result<String, String>> = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (i, req) in requests.into_iter().enumerate() {
            let model = Arc::clone(model);
            set.spawn(async move {
                let r = model.chat(req).await;
                (
                    i,
                    r.map(|a| a.message.content.unwrap_or_default())
                        .map_err(|e| e.to_string()),
                )
            });
        }
        let mut out: Vec<Option<Result<String, String>>> = (0..set.len()).map(|_| None).collect();
        while let Some(done) = set.join_next().await {
            let (i, r) = done.map_err(|e| e.to_string())?;
            out[i] = Some(r);
        }
        Ok::<_, String>(out.into_iter().flatten().collect())
    })?;
    answers
        .into_iter()
        .zip(episodes)
        .map(|(a, (ep, _))| match a {
            Ok(text) => Ok(parse_answer(&text, &id, ep)),
            Err(e) => Err(format!("judge {id}: {e}")),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn only_the_judged_faults_are_kept_and_marked_as_model_labels() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("I'm so stressed, please add a bag.");
        let said = s.agent("Bags are free on every flight.");
        let ep = s.episode("user_stop", 0);
        let answer = format!(
            "Here you go: {{\"faults\": [{{\"fault\": \"hallucination\", \"source\": \"agent\", \"severity\": \"Critical\", \"step\": {said}, \"detail\": \"invented rule\"}}, \
             {{\"fault\": \"missed_action\", \"step\": 2, \"detail\": \"not mine\"}}, \
             {{\"fault\": \"emotional_neglect\", \"step\": 999, \"detail\": \"ignored stress\"}}]}}"
        );
        let got = parse_answer(&answer, "m1", &ep).unwrap();
        assert_eq!(
            labels(&got),
            [
                (Fault::Hallucination, Some(said), None),
                (Fault::EmotionalNeglect, None, None)
            ]
        );
        assert!(got.iter().all(|f| f.detector == "judge:m1"));
        assert_eq!(
            (got[0].party, got[0].severity),
            (Some("agent"), Some("critical"))
        );
        assert_eq!((got[1].party, got[1].severity), (None, None));
        assert!(parse_answer("I think it went fine.", "m1", &ep).is_err());
        let prompt = crate::llm::prompt::builtin("analysis_judge").unwrap();
        let ctx = JudgeContext {
            prompt: &prompt,
            policy: "Always ask before adding bags.",
        };
        let req = request(&ctx, &ep, &[], 1);
        let text = serde_json::to_string(&req).unwrap();
        assert!(
            text.contains("Bags are free")
                && text.contains("emotional_neglect")
                && text.contains("Always ask before adding bags")
                && text.contains("Reference actions"),
            "{text}"
        );
    }

    /// Tool results are whole, and when the conversation does not fit, whole results are
    /// left out, the longest first, with a note of their size; nothing is cut mid-result.
    #[test]
    fn tool_results_are_whole_or_left_out_whole() {
        let f = Fixture::new();
        let (a, _) = f.two_baggage_writes();
        let mut s = f.script(std::slice::from_ref(&a));
        s.user("Add a bag please.");
        s.call(&a.0, a.1.clone());
        let ep = s.episode("user_stop", 0);
        let full = render_transcript(&ep, usize::MAX);
        let longest = ep
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == MessageRole::Tool)
            .map(|(i, _)| ep.text(i).to_string())
            .max_by_key(String::len)
            .expect("a tool result");
        assert!(longest.len() > 200, "{longest}");
        assert!(full.contains(&longest), "a tool result was cut");
        let tight = render_transcript(&ep, full.len() - 10);
        assert!(!tight.contains(&longest));
        assert!(
            tight.contains("characters, left out to fit the context"),
            "{tight}"
        );
        assert!(tight.len() <= full.len() - 10, "{}", tight.len());
    }
}
