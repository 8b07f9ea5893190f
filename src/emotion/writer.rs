//! The `anchor_writer` role: a chat model writes the ten anchors of each condition for
//! `tracer anchors generate` when `emotion_anchors/writer.toml` names an endpoint. The
//! scripted compositional generator (`anchors::generate`) stays the offline default.
//!
//! One request per condition asks for a JSON array of ten texts, one per anchor style
//! ([`ANCHOR_STYLES`]: six short directives and four situational descriptions, all in the
//! second person, 30 to 60 words each). The reply is parsed and the whole set then goes
//! through the same validation as the checked-in file (`anchors::validate`: 594 x 10,
//! labels, unique texts, 2 to 6 sentences, 30 to 60 words); a reply that is not ten strings, or a set that fails validation, is
//! an error naming the condition (or the first problem) — nothing is written.
//! Each request carries a seed derived from (seed, condition key), and the LLM layer's
//! response cache makes a re-run reproduce the same file.
//!
//! Architecture invariant: knows the taxonomy, the anchor format and the chat interface;
//! never the embedder or the classifier.

use super::EmotionError;
use super::anchors::{ANCHOR_STYLES, Anchor, INSTRUCTION_WORDS, Style};
use super::taxonomy::{Condition, Taxonomy};
use crate::llm::{ChatMessage, ChatModel, ChatRequest};
use crate::seed::derive_seed;
use std::sync::Arc;

/// The writer's standing instructions (our own words).
pub const WRITER_PROMPT: &str = "You write instructions for a simulated customer in a \
customer-service conversation. Each instruction tells the customer how they feel and how they \
come across: the emotion, how polite or curt they are, how urgent the matter is to them, and \
how far they trust the agent. Write the way people naturally describe someone; vary wording \
and length; never name the labels mechanically. Answer with a JSON array of strings only.";

fn style_note(style: Style) -> &'static str {
    match style {
        Style::Directive => {
            "two to four short second-person sentences telling the customer how to behave"
        }
        Style::Situational => {
            "three or four second-person sentences that open with the customer's situation"
        }
        Style::FirstPerson => {
            "two to five sentences in the customer's own first-person voice, as they might say them"
        }
        Style::ThirdPerson => "two sentences describing the customer in the third person",
        Style::Described => {
            "one or two sentences describing the customer in the third person singular"
        }
        Style::Implied => {
            "two to four second-person sentences that show the feeling through what happened and what the customer does"
        }
        Style::Cued => {
            "two to four second-person sentences: what happened, then the caller's tone, time and trust in plain descriptive words"
        }
    }
}

/// The user message for one condition.
pub fn request_text(c: &Condition) -> String {
    let mut s = format!(
        "Emotion: {} (family: {}). Politeness: {}. Urgency: {}. Trust in the agent: {}.\n\
         Write {} different instructions, each of {} to {} words, in this order:\n",
        c.emotion,
        c.family,
        c.politeness,
        c.urgency,
        c.trust,
        ANCHOR_STYLES.len(),
        INSTRUCTION_WORDS.start(),
        INSTRUCTION_WORDS.end()
    );
    for (i, style) in ANCHOR_STYLES.iter().enumerate() {
        s.push_str(&format!("{}. {}\n", i + 1, style_note(*style)));
    }
    s.push_str("Return exactly that many strings as one JSON array.");
    s
}

/// Parse a reply into exactly ten non-empty texts (the array may sit inside prose or a
/// code fence).
pub fn parse_reply(c: &Condition, reply: &str) -> Result<Vec<String>, EmotionError> {
    let bad =
        |m: String| EmotionError::Invalid(format!("anchor_writer, condition {}: {m}", c.key()));
    let start = reply.find('[');
    let end = reply.rfind(']');
    let (Some(start), Some(end)) = (start, end) else {
        return Err(bad("the reply holds no JSON array".into()));
    };
    if end < start {
        return Err(bad("the reply holds no JSON array".into()));
    }
    let texts: Vec<String> = serde_json::from_str(&reply[start..=end])
        .map_err(|e| bad(format!("the reply is not a JSON array of strings: {e}")))?;
    if texts.len() != ANCHOR_STYLES.len() {
        return Err(bad(format!(
            "{} texts, expected {}",
            texts.len(),
            ANCHOR_STYLES.len()
        )));
    }
    let texts: Vec<String> = texts
        .into_iter()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    if let Some(i) = texts.iter().position(|t| t.is_empty()) {
        return Err(bad(format!("text {} is empty", i + 1)));
    }
    Ok(texts)
}

/// Ask the model for every condition's anchors (concurrently; the model bounds its own
/// concurrency) and return them in condition-id then anchor-index order.
pub fn write_anchors(
    model: Arc<dyn ChatModel>,
    taxonomy: &Taxonomy,
    seed: u64,
) -> Result<Vec<Anchor>, EmotionError> {
    type Call = std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>> + Send>>;
    let conditions = taxonomy.conditions();
    let calls: Vec<Call> = conditions
        .iter()
        .map(|c| {
            let model = Arc::clone(&model);
            let req = ChatRequest::new(vec![
                ChatMessage::system(WRITER_PROMPT),
                ChatMessage::user(request_text(c)),
            ])
            .with_seed(derive_seed(seed, &["anchor_writer", &c.key()]));
            Box::pin(async move {
                let r = model.chat(req).await.map_err(|e| e.to_string())?;
                Ok(r.message.content.unwrap_or_default())
            }) as Call
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| EmotionError::Invalid(format!("tokio runtime: {e}")))?;
    let replies: Vec<Result<String, String>> = runtime.block_on(async move {
        let mut set = tokio::task::JoinSet::new();
        for (i, call) in calls.into_iter().enumerate() {
            set.spawn(async move { (i, call.await) });
        }
        let mut out: Vec<Result<String, String>> =
            (0..set.len()).map(|_| Err("not run".to_string())).collect();
        while let Some(done) = set.join_next().await {
            match done {
                Ok((i, r)) => out[i] = r,
                Err(e) => return vec![Err(e.to_string())],
            }
        }
        out
    });
    if replies.len() != conditions.len() {
        let why = replies
            .into_iter()
            .find_map(Result::err)
            .unwrap_or_default();
        return Err(EmotionError::Invalid(format!("anchor_writer: {why}")));
    }
    let mut out = Vec::with_capacity(conditions.len() * ANCHOR_STYLES.len());
    for (c, reply) in conditions.iter().zip(replies) {
        let reply = reply.map_err(|e| {
            EmotionError::Invalid(format!("anchor_writer, condition {}: {e}", c.key()))
        })?;
        for (index, text) in parse_reply(c, &reply)?.into_iter().enumerate() {
            out.push(Anchor::of(c, index, text));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition() -> Condition {
        Condition {
            id: 0,
            family: "anger".into(),
            emotion: "annoyance".into(),
            politeness: "warm".into(),
            urgency: "low".into(),
            trust: "trusting".into(),
        }
    }

    #[test]
    fn replies_must_be_ten_non_empty_strings() {
        let c = condition();
        let ten: Vec<String> = (0..10).map(|i| format!("Text {i}. More.")).collect();
        let fenced = format!("```json\n{}\n```", serde_json::to_string(&ten).unwrap());
        assert_eq!(parse_reply(&c, &fenced).unwrap(), ten);
        let nine = serde_json::to_string(&ten[..9]).unwrap();
        let err = parse_reply(&c, &nine).unwrap_err().to_string();
        assert!(
            err.contains("annoyance/warm/low/trusting") && err.contains("9 texts, expected 10"),
            "{err}"
        );
        assert!(parse_reply(&c, "echo: hello").is_err());
        let mut blank = ten.clone();
        blank[3] = "  ".into();
        let err = parse_reply(&c, &serde_json::to_string(&blank).unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("text 4 is empty"), "{err}");
        assert!(request_text(&c).contains("Politeness: warm"));
    }
}
