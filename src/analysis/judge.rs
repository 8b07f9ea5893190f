//! The judge role: a model reads a failed episode and names the faults rules cannot decide
//! — misread intent, hallucination, inconsistency, friction, emotional neglect
//! ([`Fault::JUDGED`]) — given the customer's instruction, the emotion instruction, the
//! transcript (without the agent's reasoning) and what the detectors already found. Its
//! labels carry the detector name `judge:<model>`: they are model labels, to be read as
//! such. Labels outside its vocabulary are dropped (the detectors decide those), and an
//! answer that is not the asked-for JSON yields no label (counted by the caller).
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

const TOOL_OUTPUT_CHARS: usize = 400;

/// The transcript as numbered lines (the system prompt left out; numbering kept).
pub fn render_transcript(ep: &Episode) -> String {
    let mut out = String::new();
    for (i, m) in ep.messages.iter().enumerate().skip(1) {
        if m.role == MessageRole::Tool {
            let text: String = ep.text(i).chars().take(TOOL_OUTPUT_CHARS).collect();
            out.push_str(&format!("[{i}] tool result: {text}\n"));
            continue;
        }
        if !ep.text(i).is_empty() {
            out.push_str(&format!("[{i}] {}: {}\n", m.role, ep.text(i)));
        }
        for c in &m.tool_calls {
            out.push_str(&format!(
                "[{i}] {} calls {}({})\n",
                m.role, c.name, c.arguments
            ));
        }
    }
    out
}

/// The judge's request for one episode (`prompt`: `prompts/analysis_judge.md`).
pub fn request(prompt: &Prompt, ep: &Episode, findings: &[Finding], seed: u64) -> ChatRequest {
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
    let mut messages = prompt.messages(None);
    messages.push(ChatMessage::user(format!(
            "Customer instruction:\n{}\n\nHow the customer behaves:\n{}\n\nOutcome: reward {} ({})\n\nAutomatic findings:\n{found}\n\nConversation:\n{}",
            ep.instruction.as_deref().unwrap_or("(none)"),
            ep.emotion_instruction.as_deref().unwrap_or("(no emotion condition)"),
            ep.reward,
            ep.termination,
            render_transcript(ep)
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
    prompt: &Prompt,
    episodes: &[(&Episode, Vec<Finding>)],
    seed: u64,
) -> Result<Vec<Result<Vec<Finding>, String>>, String> {
    let id = model.model_id().to_string();
    let requests: Vec<ChatRequest> = episodes
        .iter()
        .map(|(ep, found)| {
            let s = crate::seed::derive_seed(seed, &["judge", &ep.task_id, &ep.trial.to_string()]);
            request(prompt, ep, found, s)
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
            "Here you go: {{\"faults\": [{{\"fault\": \"hallucination\", \"step\": {said}, \"detail\": \"invented rule\"}}, \
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
        assert!(parse_answer("I think it went fine.", "m1", &ep).is_err());
        let prompt = crate::llm::prompt::builtin("analysis_judge").unwrap();
        let req = request(&prompt, &ep, &[], 1);
        let text = serde_json::to_string(&req).unwrap();
        assert!(
            text.contains("Bags are free") && text.contains("emotional_neglect"),
            "{text}"
        );
    }
}
