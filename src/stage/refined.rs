//! `refined` stage: reverse refinement — the grounded task becomes a natural user
//! instruction: second person, the goals of each intent in order with connectives, a
//! feasible preference and some natural ambiguity, the facts the customer needs (payment
//! methods described the way a customer knows them) and, last, how to authenticate. Never an
//! internal id a customer could not know.
//!
//! The scripted refiner is template-based with seeded variation (per task), built from the
//! domain's own request sentences (`describe_request`) and user facts; after the name it
//! says who the customer is (`situations.toml`), and it words the fixed phrases around
//! values one way per task (`wordings.toml`), so a domain's tasks neither open alike nor
//! share their six-word runs. Its output passes the same checks an LLM refiner's would (no
//! forbidden id, every needed fact present), and a task that fails them is rejected with
//! the reason.

use crate::artifact::{self, RejectRecord, TaskRecord};
use crate::config::ConfigError;
use crate::pipeline::{ErrorKind, PipelineError, StageConfig, StageContext, TypedStage};
use crate::roles::RefineJob;
use crate::roles::refiner::Refined;
use crate::seed::derive_rng;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub struct RefinedStage;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefinedConfig {
    /// Probability of adding a preference sentence.
    #[serde(default = "half")]
    pub preference_rate: f64,
    /// Probability of asking the user to reveal details gradually (natural ambiguity).
    #[serde(default = "half")]
    pub ambiguity_rate: f64,
    /// Probability of telling who the customer is right after their name ("You are a
    /// busy nurse who books flights for the whole household."; `situations.toml`).
    #[serde(default = "one")]
    pub situation_rate: f64,
    /// `[roles.refiner]`: scripted (templates, the default) or an endpoint that rewrites the
    /// template draft; its output must pass the same checks.
    #[serde(default)]
    pub roles: crate::llm::RolesConfig,
    /// The directory of the role prompts (`prompts/` by default; the roles file may name
    /// another): an endpoint refiner sends `<prompts>/refiner.md`.
    #[serde(default)]
    pub prompts: Option<String>,
    /// What becomes of a task whose model answer was refused twice by the checks: `draft`
    /// (the default) keeps the template draft as its instruction, marked `fallback` in the
    /// `refinement` column; `drop` rejects the task (reason kind `refused`).
    #[serde(default)]
    pub on_refused: OnRefused,
    /// Share of tasks whose refiner request may fail at the endpoint (after its retries)
    /// before the stage fails and stays stale; failed ones are errored, never rejected.
    #[serde(default)]
    pub max_errored_share: f64,
}

/// What a task whose model answers were refused twice becomes (`on_refused`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnRefused {
    #[default]
    Draft,
    Drop,
}

fn half() -> f64 {
    0.5
}

fn one() -> f64 {
    1.0
}

/// One domain's table of `situations.toml`: who a customer is, in three parts.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct People {
    #[serde(default)]
    traits: Vec<String>,
    #[serde(default)]
    who: Vec<String>,
    #[serde(default)]
    ties: Vec<String>,
}

/// `situations.toml`, parsed once; a malformed file is a build defect the tests catch.
static SITUATIONS: std::sync::LazyLock<std::collections::BTreeMap<String, People>> =
    std::sync::LazyLock::new(|| {
        toml::from_str(include_str!("situations.toml")).unwrap_or_default()
    });

/// `wordings.toml`: groups of phrases that mean the same.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wordings {
    group: Vec<Wording>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Wording {
    say: Vec<String>,
}

static WORDINGS: std::sync::LazyLock<Wordings> =
    std::sync::LazyLock::new(|| toml::from_str(include_str!("wordings.toml")).unwrap_or_default());

/// `text` with each phrase of a `wordings.toml` group said in one wording the instruction
/// draws (the same wording for every occurrence); a phrase only matches at a word start.
pub fn vary_wording(text: &str, rng: &mut ChaCha8Rng) -> String {
    let chosen: Vec<(&str, &str)> = WORDINGS
        .group
        .iter()
        .filter_map(|g| {
            let from = g.say.first()?;
            Some((
                from.as_str(),
                g.say[rng.random_range(0..g.say.len())].as_str(),
            ))
        })
        .collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    let bytes = text.as_bytes();
    'scan: while i < text.len() {
        let at_word_start = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if at_word_start {
            for (from, to) in &chosen {
                if text[i..].starts_with(from) {
                    out.push_str(to);
                    i += from.len();
                    continue 'scan;
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Who the customer of a `domain` task is, as one second-person sentence ("You are a busy
/// nurse who books flights for the whole household."); `None` for a domain that lists no
/// `ties` (a new domain until its table is written).
pub fn situation(domain: &str, rng: &mut ChaCha8Rng) -> Option<String> {
    let own = SITUATIONS.get(domain)?;
    let fallback = SITUATIONS.get("default");
    let or_default = |own: &'static Vec<String>,
                      pick: fn(&'static People) -> &'static Vec<String>| {
        if own.is_empty() {
            fallback.map_or(own, pick)
        } else {
            own
        }
    };
    let traits = or_default(&own.traits, |p| &p.traits);
    let who = or_default(&own.who, |p| &p.who);
    if own.ties.is_empty() || traits.is_empty() || who.is_empty() {
        return None;
    }
    let t = &traits[rng.random_range(0..traits.len())];
    let w = &who[rng.random_range(0..who.len())];
    let tie = &own.ties[rng.random_range(0..own.ties.len())];
    let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    let lead = if rng.random_bool(0.5) {
        "You are"
    } else {
        "You're"
    };
    Some(format!("{lead} {article} {t} {w} {tie}."))
}

/// How the next intent follows the one before; short, since a task has up to ten requests
/// (the longer "Once that is settled, " and "There is one more thing: " cost a ten-request
/// task some fifteen words).
const CONNECTIVES: &[&str] = &[
    "After that, ",
    "Separately, ",
    "Also, ",
    "Besides, ",
    "Next, ",
];

/// How a later request of the same intent follows the one before (one fixed "Then" made
/// every instruction read as the same chain).
const STEP_LINKS: &[&str] = &["Then ", "After that, ", "Next, ", "Also, ", "Once done, "];

/// How the instruction hands the customer its identity (one fixed sentence was the most
/// repeated 6-gram of every domain).
/// Their last words differ, so no 6-gram across a lead and the fact after it is shared by
/// more than one lead.
const IDENTITY_LEADS: &[&str] = &[
    "If asked who you are: ",
    "Should the agent need to identify you: ",
    "To confirm your identity: ",
    "For identification: ",
    "When the agent wants to verify you, say that ",
    "In case the agent looks up your account: ",
    "You can prove who you are with this: ",
    "If verification comes up, ",
    "For the account check, tell them ",
    "The agent may ask for your details; ",
];

const PREFERENCES: &[&str] = &[
    "You would like to sort everything out in this one conversation.",
    "You prefer short, clear answers over long explanations.",
    "If the agent suggests extras you did not ask for, you politely decline them.",
    "You want the agent to confirm each change before making it.",
    "You are happy to wait while the agent looks things up.",
];

/// Each holds a cue the scripted user reads (`harness::user::VAGUE_CUES`).
const AMBIGUITY: &[&str] = &[
    "Open in general terms and give details only when the agent asks.",
    "You do not give every detail at once; answer the agent's questions as they come.",
    "Begin vaguely and let the agent ask for what it needs.",
];

fn pick<'a>(rng: &mut ChaCha8Rng, bank: &[&'a str]) -> &'a str {
    bank[rng.random_range(0..bank.len())]
}

/// A pick from `bank` that differs from the link this instruction used last ("Also, ...
/// Also, ... Also, ..." read as a list, not a person).
fn pick_link<'a>(rng: &mut ChaCha8Rng, bank: &[&'a str], last: &mut &'a str) -> &'a str {
    let mut link = pick(rng, bank);
    if link == *last {
        let i = bank.iter().position(|b| *b == link).unwrap_or(0);
        link = bank[(i + 1) % bank.len()];
    }
    *last = link;
    link
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The scripted instruction for a grounded task; `Err` when the task states no request.
pub fn scripted_instruction(
    task: &TaskRecord,
    is_read: &dyn Fn(&str) -> bool,
    rng: &mut ChaCha8Rng,
    cfg: &RefinedConfig,
) -> Result<String, String> {
    // Drawn from a stream of its own, so every other choice is the one it was without it.
    let mut own = rng.clone();
    own.set_stream(1);
    let who = own
        .random_bool(cfg.situation_rate.clamp(0.0, 1.0))
        .then(|| situation(&task.domain, &mut own))
        .flatten();
    let start = rng.clone();
    let without = compose_instruction(task, is_read, rng, cfg, None)?;
    // A long task tells who the customer is only while it stays within the word budget.
    match who {
        Some(who)
            if without.split_whitespace().count() + who.split_whitespace().count()
                <= WORD_BUDGET =>
        {
            *rng = start;
            compose_instruction(task, is_read, rng, cfg, Some(who))
        }
        _ => Ok(without),
    }
}

/// Words an instruction may reach by telling who the customer is (issue 22 keeps the 90th
/// percentile of every domain at or under 250).
const WORD_BUDGET: usize = 235;

fn compose_instruction(
    task: &TaskRecord,
    is_read: &dyn Fn(&str) -> bool,
    rng: &mut ChaCha8Rng,
    cfg: &RefinedConfig,
    who: Option<String>,
) -> Result<String, String> {
    let TaskRecord {
        actions,
        requests,
        user_facts: facts,
        ..
    } = task;
    let mut parts: Vec<String> = Vec::new();
    if let Some(name) = facts.iter().find(|f| f.kind == "name") {
        parts.push(name.text.clone());
    }
    parts.extend(who);
    let tool_of = |j: usize| actions.get(j).map_or("", |a| a.name.as_str());
    let mut said: Vec<&str> = Vec::new();
    let mut last_link = "";
    let mut stated_intents = 0;
    for intent in 0..task.intents.len() {
        let mut sentences: Vec<String> = Vec::new();
        for (j, (i, request)) in task.action_intents.iter().zip(requests).enumerate() {
            let Some(request) = request.as_deref() else {
                continue;
            };
            if *i as usize != intent {
                continue;
            }
            if said.contains(&request) {
                // Asking for the same information twice reads oddly; a repeated change is
                // a second request of its own and must be said again.
                if is_read(tool_of(j)) {
                    continue;
                }
                sentences.push(format!(
                    "You also want the same again: {}",
                    lower_first(request)
                ));
            } else {
                sentences.push(request.to_string());
            }
            said.push(request);
        }
        if sentences.is_empty() {
            continue;
        }
        let body = sentences
            .iter()
            .enumerate()
            .map(|(k, s)| {
                if k == 0 {
                    s.clone()
                } else {
                    format!(
                        "{}{}",
                        pick_link(rng, STEP_LINKS, &mut last_link),
                        lower_first(s)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        if stated_intents == 0 {
            parts.push(body);
        } else {
            parts.push(format!(
                "{}{}",
                pick_link(rng, CONNECTIVES, &mut last_link),
                lower_first(&body)
            ));
        }
        stated_intents += 1;
    }
    if stated_intents == 0 {
        return Err("no intent of this task states a customer request".into());
    }
    // Facts that resolve internal ids the actions use (payment methods, ...), each only if
    // an id it resolves is not resolved already by a fact the requests state (retail's
    // orders resolve every variant of their products, so the order a return names already
    // resolves the item; another order holding the same product need not be described).
    // The actions as their column stores them: an id is used when it is a quoted value there.
    let action_text = crate::artifact::JsonText::to_json(actions);
    let body = parts.join(" ");
    let used = |id: &String| action_text.contains(&format!("\"{id}\""));
    let candidates = || {
        facts
            .iter()
            .filter(|f| f.kind != "identity" && f.kind != "name")
    };
    let mut resolved: Vec<&String> = candidates()
        .filter(|f| {
            body.contains(&f.text)
                || !f.values.is_empty() && f.values.iter().all(|v| body.contains(v.as_str()))
        })
        .flat_map(|f| f.ids.iter().filter(|id| used(id)))
        .collect();
    for fact in candidates() {
        let open: Vec<&String> = fact
            .ids
            .iter()
            .filter(|id| used(id) && !resolved.contains(id))
            .collect();
        if !open.is_empty() {
            parts.push(fact.text.clone());
            resolved.extend(open);
        }
    }
    if rng.random_bool(cfg.preference_rate.clamp(0.0, 1.0)) {
        let preference = pick(rng, PREFERENCES);
        // A preference about changes only makes sense when the task changes something.
        let writes = (0..actions.len()).any(|j| !is_read(tool_of(j)));
        if writes || !preference.contains("change") {
            parts.push(preference.to_string());
        }
    }
    if rng.random_bool(cfg.ambiguity_rate.clamp(0.0, 1.0)) {
        parts.push(pick(rng, AMBIGUITY).to_string());
    }
    if let Some(id) = facts.iter().find(|f| f.kind == "identity") {
        parts.push(format!(
            "{}{}",
            pick(rng, IDENTITY_LEADS),
            lower_first(&id.text)
        ));
    }
    // Later mentions of the same booking, traveler or card said briefly (each request's
    // sentence names them in full), then the fixed phrases around values in this task's
    // own wording (a stream of its own, as the situation's).
    let brief =
        crate::quality::language::tidy(&crate::quality::brief::brief_repeats(&parts.join(" ")));
    let mut own = rng.clone();
    own.set_stream(2);
    Ok(vary_wording(&brief, &mut own))
}

/// The gates that depend on an instruction's words (the rest, answered requests and the
/// number of actions, are the task's and are checked by verification).
fn instruction_gates() -> crate::verify::Gates {
    crate::verify::Gates {
        answered: false,
        max_actions: usize::MAX,
        ..Default::default()
    }
}

/// The rule or kind a refusal names (`form: preamble: ...` -> `form`).
fn rule_of(reason: &str) -> &str {
    reason.split(':').next().unwrap_or("refused").trim()
}

fn reject_row(task: &TaskRecord, reason: String) -> RejectRecord {
    RejectRecord {
        domain: task.domain.clone(),
        split: task.split,
        trace_id: task.trace_id.clone(),
        task_id: Some(task.task_id.clone()),
        stage: "refined".into(),
        reason_kind: reason.split(':').next().unwrap_or("refinement").to_string(),
        rule: None,
        reason,
    }
}

fn read_grounded(ctx: &StageContext) -> Result<Vec<TaskRecord>, PipelineError> {
    Ok(
        artifact::read_records::<TaskRecord>(
            &ctx.input_dir("grounded").join("part-00000.parquet"),
        )?
        .0,
    )
}

/// Write the refined tasks and the rejections; the summary.
fn write_refined(
    ctx: &StageContext,
    kept: &[TaskRecord],
    rejects: &[RejectRecord],
) -> Result<String, PipelineError> {
    let prov = ctx.provenance();
    artifact::write_records(&ctx.out("part-00000.parquet"), kept, &prov)?;
    artifact::write_records(&ctx.out("_rejects.parquet"), rejects, &prov)?;
    Ok(format!(
        "{} instructions written ({} rejected)",
        kept.len(),
        rejects.len()
    ))
}

impl StageConfig for RefinedConfig {
    fn check(&self, path: &Path) -> Result<(), ConfigError> {
        let c = crate::config::Check::new(path);
        c.share("preference_rate", self.preference_rate)?;
        c.share("ambiguity_rate", self.ambiguity_rate)?;
        c.share("situation_rate", self.situation_rate)?;
        c.share("max_errored_share", self.max_errored_share)?;
        crate::llm::config::check_roles(path, &self.roles, &[crate::llm::Role::Refiner])
    }
    fn preflight(&self, scope: &crate::pipeline::PreflightScope) -> Result<(), String> {
        super::roles::preflight(
            scope,
            &self.roles,
            self.prompts.as_deref(),
            &[(crate::llm::Role::Refiner, "refiner")],
        )
    }
}

impl TypedStage for RefinedStage {
    type Config = RefinedConfig;
    fn name(&self) -> &'static str {
        "refined"
    }
    fn inputs(&self) -> &'static [&'static str] {
        &["db", "grounded"]
    }
    fn source_files(&self, _domain: &str, config: &toml::Table) -> Vec<PathBuf> {
        super::roles::prompt_sources(config, &[(crate::llm::Role::Refiner, "refiner")])
    }
    fn run(&self, ctx: &StageContext, cfg: &RefinedConfig) -> Result<String, PipelineError> {
        let mut grounded = read_grounded(ctx)?;
        grounded.retain(|t| ctx.owns(&t.task_id));
        let db_dir = ctx.input_dir("db");
        let envs = std::sync::Arc::new(crate::project::SplitEnvs::load(&db_dir, ctx.domain)?);
        let specs = ctx.domain.tool_specs();
        let is_read = |tool: &str| {
            specs
                .iter()
                .any(|s| s.name == tool && s.kind == crate::domain::ToolKind::Read)
        };
        let model = super::roles::open_role(ctx, &cfg.roles, crate::llm::Role::Refiner)?;
        let prompt = super::roles::role_prompt(ctx, &model, cfg.prompts.as_deref(), "refiner")?;
        let refiner = crate::roles::refiner::refiner(&model, prompt);
        let drafts: Vec<Result<String, String>> = grounded
            .iter()
            .map(|task| {
                let mut rng = derive_rng(ctx.seed, &["refined", &task.domain, &task.task_id]);
                scripted_instruction(task, &is_read, &mut rng, cfg)
                    .map_err(|e| format!("no_request: {e}"))
            })
            .collect();
        let grounded = std::sync::Arc::new(grounded);
        let draft_texts: Vec<String> = drafts
            .iter()
            .map(|d| d.as_ref().map_or(String::new(), String::clone))
            .collect();
        let check: std::sync::Arc<crate::roles::refiner::Checker> = {
            let (envs, grounded) = (
                std::sync::Arc::clone(&envs),
                std::sync::Arc::clone(&grounded),
            );
            std::sync::Arc::new(move |i: usize, text: &str| {
                let task = &grounded[i];
                crate::verify::check_instruction(
                    envs.for_split(task.split),
                    task,
                    text,
                    &instruction_gates(),
                    &draft_texts[i],
                )
                .map_err(|r| r.reason)
            })
        };
        let jobs = drafts
            .iter()
            .zip(grounded.iter())
            .map(|(draft, task)| RefineJob {
                draft: draft.clone(),
                facts: task.user_facts.clone(),
                domain: task.domain.clone(),
                seed: crate::seed::derive_seed(ctx.seed, &["refined", &task.task_id]),
            })
            .collect();
        let outcomes = refiner
            .refine(jobs, check)
            .map_err(|e| ctx.fail(ErrorKind::Endpoint, e))?;
        let refiner_id = refiner.model_id();
        let scripted = model.is_scripted();
        let mut kept = Vec::new();
        let mut rejects = Vec::new();
        let mut errored: Vec<(String, String)> = Vec::new();
        let grounded = std::sync::Arc::try_unwrap(grounded).unwrap_or_else(|a| (*a).clone());
        for ((task, outcome), draft) in grounded.into_iter().zip(outcomes).zip(drafts) {
            let env = envs.for_split(task.split);
            let (instruction, refinement) = match outcome {
                Refined::Answer { text, retried } => (
                    Ok(text),
                    (!scripted).then(|| if retried { "retried" } else { "first" }.to_string()),
                ),
                Refined::NoDraft(why) => (Err(why), None),
                Refined::Refused(reasons) => {
                    let last = reasons.last().cloned().unwrap_or_default();
                    match (cfg.on_refused, draft) {
                        (OnRefused::Draft, Ok(draft)) => {
                            (Ok(draft), Some(format!("fallback: {}", rule_of(&last))))
                        }
                        _ => (
                            Err(format!("refused: twice by the checks; last: {last}")),
                            None,
                        ),
                    }
                }
                Refined::Errored(why) => {
                    errored.push((task.task_id.clone(), why.clone()));
                    rejects.push(reject_row(&task, format!("errored: {why}")));
                    continue;
                }
            };
            // The checks every instruction meets here (a model's answer has met them all
            // already); a gap only a reader can settle goes on to the judge in `tasks`.
            let checked = instruction.and_then(|instruction| {
                crate::verify::check_no_internal_ids(env, &task, &instruction)
                    .map_err(|e| format!("forbidden_id: {e}"))?;
                match crate::verify::information_gaps(
                    env,
                    &task,
                    &task.user_facts,
                    &instruction,
                    &crate::verify::reference_outputs(env, &task),
                ) {
                    crate::verify::Gaps::Hard(e) => Err(format!("information: {e}")),
                    _ => Ok(instruction),
                }
            });
            match checked {
                Ok(instruction) => kept.push(TaskRecord {
                    instruction: Some(instruction),
                    refiner: Some(refiner_id.clone()),
                    refinement,
                    ..task
                }),
                Err(reason) => rejects.push(reject_row(&task, reason)),
            }
        }
        super::roles::settle_errored(
            ctx,
            "refiner requests",
            &errored,
            kept.len() + rejects.len(),
            cfg.max_errored_share,
        )?;
        write_refined(ctx, &kept, &rejects)
    }
    fn shardable(&self) -> bool {
        true
    }
    fn merge(
        &self,
        ctx: &StageContext,
        _cfg: &RefinedConfig,
        parts: &[PathBuf],
    ) -> Result<String, PipelineError> {
        let grounded = read_grounded(ctx)?;
        let order = super::positions(grounded.iter().map(|t| t.task_id.as_str()));
        let kept = super::merge_rows(ctx, parts, "part-00000.parquet", |t: &TaskRecord| {
            order.get(&t.task_id).copied()
        })?;
        let rejects = super::merge_rows(ctx, parts, "_rejects.parquet", |r: &RejectRecord| {
            order.get(r.task_id.as_deref()?).copied()
        })?;
        write_refined(ctx, &kept, &rejects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Every domain's situation sentence is drawn from its own table, tells nothing the
    /// feeler or the emotions stage would read as a cue or an event, and opens in enough
    /// ways that 300 tasks rarely share their first twelve words after the name.
    #[test]
    fn every_domain_tells_who_its_customer_is_in_many_ways() {
        let cues: Vec<&str> = crate::roles::feeler::cue_words().collect();
        for domain in crate::domain::registry() {
            let d = domain.name();
            let people = SITUATIONS.get(d).unwrap_or_else(|| panic!("{d}: no table"));
            assert!(people.ties.len() >= 15, "{d}: {} ties", people.ties.len());
            let mut starts: Vec<String> = Vec::new();
            for tie in &people.ties {
                let t = tie.to_lowercase();
                for c in &cues {
                    assert!(
                        !t.contains(c),
                        "{d}: tie {tie:?} holds the feeler cue {c:?}"
                    );
                }
                if d != "airline" && d != "travel" {
                    for (_, events) in crate::stage::emotions::EVENTS {
                        for e in *events {
                            assert!(!t.contains(e), "{d}: tie {tie:?} tells of {e:?}");
                        }
                    }
                }
                let start: Vec<&str> = t.split_whitespace().take(3).collect();
                starts.push(start.join(" "));
            }
            starts.sort();
            starts.dedup();
            assert_eq!(starts.len(), people.ties.len(), "{d}: ties share a start");
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            let texts: Vec<String> = (0..300)
                .map(|_| {
                    let s = situation(d, &mut rng).expect("a sentence");
                    assert!(
                        s.starts_with("You are a") || s.starts_with("You're a"),
                        "{s}"
                    );
                    assert!(s.split_whitespace().count() <= 20, "{s}");
                    format!("Your name is Ada Lee. {s} You want to check something.")
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let shared = crate::quality::shared_openings(&refs);
            assert!(shared < 0.10, "{d}: {shared:.2} of openings shared");
        }
        assert!(situation("no_such_domain", &mut ChaCha8Rng::seed_from_u64(1)).is_none());
    }

    #[test]
    fn a_wording_is_one_per_task_and_never_splits_a_word() {
        assert!(WORDINGS.group.len() >= 8, "wordings.toml did not parse");
        let text = "Pay with your Visa credit card ending in 4444, then refund to the Amex \
                    credit card ending in 1000. Check the booking you just made.";
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let out = vary_wording(text, &mut ChaCha8Rng::seed_from_u64(seed));
            // Both card mentions read the same way; every value is kept.
            let group = &WORDINGS.group[0].say;
            let used: Vec<&String> = group.iter().filter(|w| out.contains(w.as_str())).collect();
            assert_eq!(used.len(), 1, "{out}");
            assert_eq!(out.matches(used[0].as_str()).count(), 2, "{out}");
            for v in ["4444", "1000", "Visa", "Amex"] {
                assert!(out.contains(v), "{out}");
            }
            seen.insert(out);
        }
        assert!(seen.len() >= 4, "{seen:?}");
        // A phrase inside a longer word is left alone.
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(
            vary_wording("a discard ending in", &mut rng),
            "a discard ending in"
        );
    }

    #[test]
    fn a_link_is_never_the_one_used_just_before() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut last = "";
        let mut links = Vec::new();
        for _ in 0..200 {
            let bank = if links.len() % 3 == 0 {
                CONNECTIVES
            } else {
                STEP_LINKS
            };
            links.push(pick_link(&mut rng, bank, &mut last));
        }
        assert!(links.windows(2).all(|w| w[0] != w[1]), "{links:?}");
        // Every link of both banks is still used.
        for link in CONNECTIVES.iter().chain(STEP_LINKS) {
            assert!(links.contains(link), "{link} never picked");
        }
    }
}
