//! `feelings` stage: the feeler role writes, per task, a free-text description of the
//! customer's likely feeling from the user context and the requested actions only.
//!
//! Architecture invariant: the feeler cannot see the database. It receives a
//! [`FeelerInput`] — plain strings built from the refined task — and this stage declares no
//! `db` input, so no environment is ever loaded here.
//!
//! The scripted feeler is rule-based with seeded variation: a cancellation after a
//! disruption, a hurried change, a refund for a damaged item, a routine lookup, a new
//! booking, ... each lead to a family of feelings, worded in the third person the way a
//! feeling generator would describe a customer, with politeness, urgency and trust cues.

use crate::artifact::{self, TaskRecord};
use crate::config::ConfigError;
use crate::llm::{ChatMessage, ChatRequest, Role, RoleModel, RolesConfig};
use crate::pipeline::{PipelineError, Stage, StageContext};
use crate::seed::{derive_rng, derive_seed};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::path::Path;

pub struct FeelingsStage;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeelingsConfig {
    /// `[roles.feeler]`: scripted (rules, the default) or an endpoint.
    #[serde(default)]
    pub roles: RolesConfig,
}

/// Everything the feeler may know: who the customer says they are and what they ask for.
#[derive(Clone, Debug, PartialEq)]
pub struct FeelerInput {
    /// The user instruction (goals, context, preferences).
    pub instruction: String,
    /// Tool names of the requested actions, in order (what the customer wants done).
    pub requested_tools: Vec<String>,
}

impl FeelerInput {
    pub fn from_task(task: &TaskRecord) -> FeelerInput {
        let actions: Vec<serde_json::Value> =
            serde_json::from_str(&task.actions).unwrap_or_default();
        FeelerInput {
            instruction: task.instruction.clone().unwrap_or_default(),
            requested_tools: actions
                .iter()
                .filter_map(|a| a["name"].as_str().map(str::to_string))
                .collect(),
        }
    }
}

/// The LLM feeler's instructions (our own words).
pub const FEELER_PROMPT: &str = "You read what a customer wants from customer support and \
describe, in two or three sentences in the third person, how this customer most likely feels \
and how they will come across: which emotion, how polite or curt, how urgent, how much they \
trust the agent. Use only what is given; do not invent account details.";

struct Situation {
    /// (family, emotion) candidates for this situation.
    feelings: &'static [(&'static str, &'static str)],
    cause: &'static str,
}

fn situation(input: &FeelerInput) -> Situation {
    let text = input.instruction.to_lowercase();
    let has = |p: &str| input.requested_tools.iter().any(|t| t.contains(p));
    let only_reads = input.requested_tools.iter().all(|t| {
        ["get_", "list_", "search_", "find_", "check_"]
            .iter()
            .any(|p| t.starts_with(p))
    });
    if has("cancel")
        && (text.contains("cancelled by the airline")
            || text.contains("airline cancelled")
            || text.contains("weather"))
    {
        return Situation {
            feelings: &[
                ("anger", "exasperation"),
                ("anger", "bitterness"),
                ("sadness", "discouragement"),
            ],
            cause: "after a disruption they did not cause, they now have to cancel",
        };
    }
    if has("cancel") {
        return Situation {
            feelings: &[
                ("sadness", "disappointment"),
                ("anger", "frustration"),
                ("sadness", "sorrow"),
            ],
            cause: "their plans fell through and they have to cancel",
        };
    }
    if has("return") {
        return Situation {
            feelings: &[
                ("disgust", "dislike"),
                ("disgust", "distaste"),
                ("anger", "annoyance"),
            ],
            cause: "an item they bought did not live up to what they expected and they want their money back",
        };
    }
    if has("exchange") || has("modify_pending_order_items") {
        return Situation {
            feelings: &[
                ("anger", "annoyance"),
                ("fear", "nervousness"),
                ("disgust", "aversion"),
            ],
            cause: "the item they ordered is not quite right and they want a different one",
        };
    }
    if has("update_reservation_flights") || has("modify_pending_order_address") {
        return Situation {
            feelings: &[
                ("fear", "anxiety"),
                ("fear", "desperation"),
                ("anger", "frustration"),
            ],
            cause: "they need a change made quickly before it is too late",
        };
    }
    if has("update_reservation_passengers")
        || has("update_reservation_baggages")
        || has("modify_pending_order_payment")
    {
        return Situation {
            feelings: &[
                ("fear", "nervousness"),
                ("fear", "dread"),
                ("sadness", "helplessness"),
            ],
            cause: "they worry a detail of their booking or order is wrong",
        };
    }
    if has("book") {
        return Situation {
            feelings: &[
                ("enjoyment", "excitement"),
                ("enjoyment", "pride"),
                ("fear", "anxiety"),
            ],
            cause: "they are planning a new trip",
        };
    }
    if only_reads {
        return Situation {
            feelings: &[
                ("enjoyment", "peace"),
                ("enjoyment", "relief"),
                ("fear", "anxiety"),
            ],
            cause: "they only want to check on something",
        };
    }
    Situation {
        feelings: &[
            ("anger", "argumentativeness"),
            ("sadness", "hopelessness"),
            ("disgust", "repugnance"),
        ],
        cause: "they have several things to sort out at once",
    }
}

fn pick<'a>(rng: &mut ChaCha8Rng, bank: &[&'a str]) -> &'a str {
    bank[rng.random_range(0..bank.len())]
}

/// Words for each emotion, phrased about a customer.
fn emotion_phrase(emotion: &str) -> &'static [&'static str] {
    match emotion {
        "annoyance" => &["is mildly irritated", "is a bit irked"],
        "frustration" => &["is frustrated", "feels thwarted and fed up"],
        "argumentativeness" => &[
            "is ready to argue every point",
            "is combative and quick to dispute",
        ],
        "bitterness" => &["is bitter and resentful", "feels let down and resentful"],
        "exasperation" => &["is exasperated", "has run out of patience"],
        "anxiety" => &["is anxious", "is worried and tense"],
        "nervousness" => &["is nervous", "is uneasy and a little jittery"],
        "dread" => &["dreads what they might hear", "fears the worst"],
        "desperation" => &["is desperate", "feels they are running out of options"],
        "dislike" => &[
            "plainly dislikes how things turned out",
            "is displeased with the product",
        ],
        "aversion" => &[
            "wants nothing more to do with it",
            "recoils from the whole thing",
        ],
        "distaste" => &["finds the situation distasteful", "is put off"],
        "repugnance" => &["is repulsed by how this was handled", "finds it revolting"],
        "disappointment" => &["is disappointed", "feels let down"],
        "discouragement" => &["is discouraged", "feels disheartened"],
        "helplessness" => &["feels helpless", "does not know what else to do"],
        "hopelessness" => &["feels it is hopeless", "expects nothing to work"],
        "sorrow" => &["is sad", "is quietly grieving the lost plans"],
        "relief" => &["is relieved", "is glad it seems to be sorted"],
        "pride" => &[
            "is proud of planning ahead",
            "feels pleased with themselves",
        ],
        "peace" => &["is calm and at ease", "is relaxed"],
        "excitement" => &["is excited", "is eager and upbeat"],
        _ => &["is unsettled"],
    }
}

/// The scripted feeling for one task (no database: `FeelerInput` holds strings only).
pub fn scripted_feeling(input: &FeelerInput, rng: &mut ChaCha8Rng) -> String {
    let s = situation(input);
    let (_, emotion) = s.feelings[rng.random_range(0..s.feelings.len())];
    let who = pick(rng, &["The customer", "The caller", "This customer"]);
    let feeling = pick(rng, emotion_phrase(emotion));
    let politeness = pick(
        rng,
        &[
            "stays warm and thanks the agent",
            "keeps it courteous and friendly",
            "keeps the tone neutral and businesslike",
            "is matter-of-fact",
            "is curt and cold",
            "answers tersely and without pleasantries",
        ],
    );
    let urgency = pick(
        rng,
        &[
            "is in no hurry",
            "would like it done today",
            "needs it settled right away",
            "is pressed for time",
        ],
    );
    let trust = pick(
        rng,
        &[
            "expects the agent to simply take care of it",
            "wants each step confirmed before believing it",
            "doubts the agent will get it right",
        ],
    );
    format!(
        "{who} {feeling} because {}. They {politeness}, {urgency}, and {trust}.",
        s.cause
    )
}

impl Stage for FeelingsStage {
    fn name(&self) -> &'static str {
        "feelings"
    }
    fn inputs(&self) -> &'static [&'static str] {
        // Deliberately no "db": the feeler never sees the database.
        &["refined"]
    }
    fn validate_config(&self, path: &Path, table: &toml::Table) -> Result<(), ConfigError> {
        let cfg: FeelingsConfig = crate::config::parse_typed(path, table)?;
        super::roles::check_roles(path, &cfg.roles, &[Role::Feeler])
    }
    fn preflight(&self, path: &Path, table: &toml::Table) -> Result<(), String> {
        let cfg: FeelingsConfig =
            crate::config::parse_typed(path, table).map_err(|e| e.to_string())?;
        super::roles::preflight_roles(&cfg.roles)
    }
    fn run(&self, ctx: &StageContext) -> Result<String, PipelineError> {
        let cfg: FeelingsConfig = ctx.typed_config()?;
        let (tasks, _) = artifact::read_records::<TaskRecord>(
            &ctx.input_dir("refined").join("part-00000.parquet"),
        )?;
        let inputs: Vec<FeelerInput> = tasks.iter().map(FeelerInput::from_task).collect();
        let feeler = super::roles::open_role(ctx, &cfg.roles, Role::Feeler)?;
        let feelings: Vec<Result<String, String>> = match &feeler {
            RoleModel::Scripted(_) => tasks
                .iter()
                .zip(&inputs)
                .map(|(t, input)| {
                    Ok(scripted_feeling(
                        input,
                        &mut derive_rng(ctx.seed, &["feelings", &t.domain, &t.task_id]),
                    ))
                })
                .collect(),
            RoleModel::Endpoint(model) => {
                type Call = std::pin::Pin<
                    Box<dyn std::future::Future<Output = Result<String, String>> + Send>,
                >;
                let calls: Vec<Call> = tasks
                    .iter()
                    .zip(&inputs)
                    .map(|(t, input)| {
                        let model = std::sync::Arc::clone(model);
                        let req = ChatRequest::new(vec![
                            ChatMessage::system(FEELER_PROMPT),
                            ChatMessage::user(format!(
                                "What the customer wants:\n{}\n\nRequested actions: {}",
                                input.instruction,
                                input.requested_tools.join(", ")
                            )),
                        ])
                        .with_seed(derive_seed(ctx.seed, &["feelings", &t.task_id]));
                        Box::pin(async move {
                            let r = model.chat(req).await.map_err(|e| e.to_string())?;
                            Ok(r.message.content.unwrap_or_default().trim().to_string())
                        }) as Call
                    })
                    .collect();
                super::roles::run_all(calls).map_err(|e| ctx.fail(e))?
            }
        };
        let mut rows = Vec::with_capacity(tasks.len());
        for (task, feeling) in tasks.into_iter().zip(feelings) {
            let feeling =
                feeling.map_err(|e| ctx.fail(format!("feeler for task {}: {e}", task.task_id)))?;
            rows.push(TaskRecord {
                feeling: Some(feeling),
                ..task
            });
        }
        artifact::write_records(&ctx.out("part-00000.parquet"), &rows, &ctx.provenance())?;
        Ok(format!(
            "{} feelings written by {}",
            rows.len(),
            feeler.model_id()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feeler_sees_only_the_request_and_covers_all_five_families() {
        assert!(
            !FeelingsStage.inputs().contains(&"db"),
            "the feeler must not read the database"
        );
        let cases = [
            vec!["cancel_reservation"],
            vec!["return_delivered_order_items"],
            vec!["update_reservation_flights"],
            vec!["get_reservation_details"],
            vec!["book_reservation"],
        ];
        let mut families = std::collections::BTreeSet::new();
        for (i, tools) in cases.iter().enumerate() {
            let input = FeelerInput {
                instruction: "You want help.".into(),
                requested_tools: tools.iter().map(|s| s.to_string()).collect(),
            };
            for k in 0..20 {
                let mut rng = derive_rng(k, &["t", &i.to_string()]);
                let mut again = derive_rng(k, &["t", &i.to_string()]);
                let text = scripted_feeling(&input, &mut rng);
                assert_eq!(text, scripted_feeling(&input, &mut again), "deterministic");
                let s = situation(&input);
                for (family, emotion) in s.feelings {
                    if emotion_phrase(emotion).iter().any(|p| text.contains(p)) {
                        families.insert(*family);
                    }
                }
            }
        }
        assert_eq!(families.len(), 5, "{families:?}");
    }
}
