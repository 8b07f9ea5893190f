//! What a run's artifacts measure, per domain: its funnel (the items at each step, per
//! split) and the size of each role's requests as the stages would send them. An offline
//! (scripted) run is the usual source: its drafts are what the refiner would rewrite
//! (request = prompt file + draft + facts), its instructions what the feeler reads, its
//! inconclusive verdicts what the judge settles, and its scripted episodes' transcripts
//! what the agent and the user simulator would be sent turn by turn (the system prompt,
//! the tools, the transcript so far; the completion is the message itself).
//!
//! Requests are priced with the LLM layer's own prompt estimate (the JSON of the messages
//! and tools at four characters a token, plus four per message), and answers at four
//! characters a token.
//!
//! Architecture invariant: reads artifacts and project files only; no request is sent.

use super::{EpisodeSize, Funnel, PerCall, PlanError, Prompts, Sizes, text_tokens};
use crate::artifact::{self, RejectRecord, RolloutRecord, TaskRecord, TraceRecord};
use crate::domain::Domain;
use crate::llm::provider::body::{PromptEstimate, estimate_prompt_tokens};
use crate::llm::{ChatMessage, MessageRole};
use crate::pipeline::stage_dir;
use crate::split::Split;
use std::collections::HashMap;
use std::path::Path;

/// The index of a split in `[train, eval]` pairs.
pub fn at(split: Split) -> usize {
    usize::from(split == Split::Eval)
}

/// Records of `file` in (`stage`, `domain`) of `output`, when the file exists.
pub fn read<T: artifact::Record>(
    output: &Path,
    stage: &str,
    domain: &str,
    file: &str,
) -> Result<Option<Vec<T>>, PlanError> {
    let path = stage_dir(output, stage, domain).join(file);
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some(artifact::read_records::<T>(&path)?.0))
}

const PART: &str = "part-00000.parquet";
const REJECTS: &str = "_rejects.parquet";

/// What one domain of a run measured; `None` where the run holds no such artifact.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Traces per split of at most the planned `max_actions` calls.
    pub eligible: Option<[f64; 2]>,
    /// The run's own funnel; a field is 0 where its stage did not run (see `ran`).
    pub funnel: Funnel,
    /// Which stages' artifacts were found.
    pub ran: Vec<&'static str>,
    /// Eval tasks that went into screening (the verified eval tasks).
    pub screened_tasks: f64,
    /// Scored episodes and the failed ones among them, per rollout stage.
    pub scored: HashMap<&'static str, (f64, f64)>,
    pub sizes: Sizes,
    /// Endpoint failures per stage: (errored items, items).
    pub errored: Vec<(&'static str, f64, f64)>,
    /// The refiner's requests, from the `refinement` column and the rejections: a first
    /// answer kept is one, a retried or refused one two, a task without a draft none.
    pub refiner_requests: f64,
}

impl Measured {
    pub fn has(&self, stage: &str) -> bool {
        self.ran.contains(&stage)
    }
}

fn count_by_split<'a>(splits: impl Iterator<Item = &'a Split>) -> [f64; 2] {
    let mut out = [0.0; 2];
    for s in splits {
        out[at(*s)] += 1.0;
    }
    out
}

/// A running mean of per-request sizes.
#[derive(Default)]
struct Mean {
    n: f64,
    prompt: f64,
    completion: f64,
}

impl Mean {
    fn add(&mut self, prompt: u64, completion: u64) {
        self.n += 1.0;
        self.prompt += prompt as f64;
        self.completion += completion as f64;
    }
    fn per_call(&self) -> Option<PerCall> {
        (self.n > 0.0).then(|| PerCall {
            prompt: self.prompt / self.n,
            completion: self.completion / self.n,
        })
    }
}

/// The tokens of an assistant message as the model writes it: its text and its calls.
fn answer_tokens(m: &ChatMessage) -> u64 {
    let mut chars = m.content.as_deref().map_or(0, |c| c.chars().count());
    for c in &m.tool_calls {
        chars += c.name.chars().count() + c.arguments.chars().count();
    }
    (chars as u64).div_ceil(4)
}

/// One episode's requests: the agent's (each assistant message after the greeting, sent the
/// system prompt, the tools and the transcript before it) and the user simulator's (each
/// customer message, sent its rules, the instruction and the conversation with the agent's
/// words as its user turns). `rules_and_task`: the user simulator's system message.
pub fn episode_requests(
    messages: &[ChatMessage],
    tools: &[serde_json::Value],
    user_system: Option<&str>,
) -> EpisodeSize {
    let mut out = EpisodeSize::default();
    let mut agent = PromptEstimate::new(tools);
    let mut user = PromptEstimate::new(&[]);
    if let Some(s) = user_system {
        user.push(&ChatMessage::system(s));
    }
    for (i, m) in messages.iter().enumerate() {
        if i >= 2 && m.role == MessageRole::Assistant {
            out.agent.requests += 1.0;
            out.agent.prompt += agent.tokens() as f64;
            out.agent.completion += answer_tokens(m) as f64;
        }
        agent.push(m);
        match m.role {
            MessageRole::Assistant if m.tool_calls.is_empty() => {
                user.push(&ChatMessage::user(m.content.clone().unwrap_or_default()));
            }
            MessageRole::User if user_system.is_some() => {
                let text = m.content.clone().unwrap_or_default();
                out.user.requests += 1.0;
                out.user.prompt += user.tokens() as f64;
                out.user.completion += text_tokens(&text);
                user.push(&ChatMessage::assistant(text));
            }
            _ => {}
        }
    }
    out
}

/// The user simulator's system message for `task` (as `harness::endpoint::EndpointUser`
/// writes it).
pub fn user_system(rules: &str, task: &TaskRecord, emotion: bool) -> String {
    let mut system = format!(
        "{rules}\n\n## Instruction\n{}",
        task.instruction.as_deref().unwrap_or_default()
    );
    if let (true, Some(e)) = (emotion, task.emotion_instruction.as_deref()) {
        system.push_str("\n\n## How you feel and communicate\n");
        system.push_str(e);
    }
    system
}

/// The analysis judge's request for one episode, approximately: its prompt, the
/// instruction, the emotion instruction and the transcript as numbered lines (tool results
/// cut at 400 characters, as the judge's rendering cuts them).
fn analysis_prompt_tokens(
    prompt: &[ChatMessage],
    task: Option<&TaskRecord>,
    r: &RolloutRecord,
) -> u64 {
    let mut chars = 200usize;
    if let Some(t) = task {
        chars += t.instruction.as_deref().map_or(0, str::len);
        chars += t.emotion_instruction.as_deref().map_or(0, str::len);
    }
    for m in r.messages.iter().skip(1) {
        let text = m.content.as_deref().unwrap_or("");
        chars += 12
            + if m.role == MessageRole::Tool {
                text.chars().take(400).count()
            } else {
                text.chars().count()
            };
        for c in &m.tool_calls {
            chars += 20 + c.name.len() + c.arguments.len();
        }
    }
    estimate_prompt_tokens(prompt, &[]) + (chars as u64).div_ceil(4)
}

/// Measure one domain of the run in `output`. `max_actions`: the planned cap on a trace's
/// calls (which traces `grounded` may take).
pub fn measure(
    output: &Path,
    domain: &'static dyn Domain,
    max_actions: usize,
    prompts: &Prompts,
    emotion: &dyn Fn(&str) -> bool,
) -> Result<Measured, PlanError> {
    let d = domain.name();
    let mut m = Measured::default();
    let f = &mut m.funnel;
    if let Some(traces) = read::<TraceRecord>(output, "traces", d, PART)? {
        m.eligible = Some(count_by_split(
            traces
                .iter()
                .filter(|t| t.length as usize <= max_actions)
                .map(|t| &t.split),
        ));
    }
    if let (Some(tasks), Some(rejects)) = (
        read::<TaskRecord>(output, "grounded", d, PART)?,
        read::<RejectRecord>(output, "grounded", d, REJECTS)?,
    ) {
        m.ran.push("grounded");
        f.grounded = count_by_split(tasks.iter().map(|t| &t.split));
        let lost = count_by_split(rejects.iter().map(|r| &r.split));
        f.attempted = [f.grounded[0] + lost[0], f.grounded[1] + lost[1]];
        m.errored.push(errored("grounded", &rejects, f.attempted));
    }
    let mut refiner = Mean::default();
    if let (Some(tasks), Some(rejects)) = (
        read::<TaskRecord>(output, "refined", d, PART)?,
        read::<RejectRecord>(output, "refined", d, REJECTS)?,
    ) {
        m.ran.push("refined");
        f.refined = count_by_split(tasks.iter().map(|t| &t.split));
        let no_draft = count_by_split(
            rejects
                .iter()
                .filter(|r| r.reason_kind == "no_request")
                .map(|r| &r.split),
        );
        f.drafted = [f.grounded[0] - no_draft[0], f.grounded[1] - no_draft[1]];
        m.errored.push(errored("refined", &rejects, f.grounded));
        for t in &tasks {
            m.refiner_requests += match t.refinement.as_deref() {
                Some(r) if r == "retried" || r.starts_with("fallback") => 2.0,
                _ => 1.0,
            };
        }
        for r in &rejects {
            m.refiner_requests += match r.reason_kind.as_str() {
                "no_request" => 0.0,
                "refused" => 2.0,
                _ => 1.0,
            };
        }
        for t in &tasks {
            let draft = t.instruction.as_deref().unwrap_or_default();
            let req = crate::roles::refiner::refiner_request(
                &prompts.refiner,
                d,
                draft,
                &t.user_facts,
                0,
            );
            refiner.add(
                estimate_prompt_tokens(&req.messages, &[]),
                text_tokens(draft) as u64,
            );
        }
    }
    m.sizes.refiner = refiner.per_call();
    let (mut feeler, mut embed) = (Mean::default(), Mean::default());
    if let Some(tasks) = read::<TaskRecord>(output, "feelings", d, PART)? {
        m.ran.push("feelings");
        for t in &tasks {
            let Ok(input) = crate::roles::feeler::feeler_input(t) else {
                continue;
            };
            let req = crate::roles::feeler::feeler_request(&prompts.feeler, d, &input, 0);
            let feeling = t.feeling.as_deref().unwrap_or_default();
            feeler.add(
                estimate_prompt_tokens(&req.messages, &[]),
                text_tokens(feeling) as u64,
            );
            embed.add(text_tokens(feeling) as u64, 0);
        }
    }
    m.sizes.feeler = feeler.per_call();
    m.sizes.embedder = embed.per_call();
    let mut judge = Mean::default();
    let mut eval_verified = 0.0;
    if let (Some(kept), Some(rejects)) = (
        read::<TaskRecord>(output, "tasks", d, PART)?,
        read::<RejectRecord>(output, "tasks", d, REJECTS)?,
    ) {
        m.ran.push("tasks");
        let judged: Vec<&RejectRecord> = rejects
            .iter()
            .filter(|r| r.reason_kind == "judge")
            .collect();
        f.judged = count_by_split(judged.iter().map(|r| &r.split));
        let verified = count_by_split(kept.iter().map(|t| &t.split));
        eval_verified = verified[1];
        f.verified = [verified[0] + f.judged[0], verified[1] + f.judged[1]];
        m.errored.push(errored("tasks", &rejects, f.refined));
        let inputs: HashMap<String, TaskRecord> = read::<TaskRecord>(output, "emotions", d, PART)?
            .unwrap_or_default()
            .into_iter()
            .map(|t| (t.task_id.clone(), t))
            .collect();
        for r in judged {
            let Some(t) = r.task_id.as_ref().and_then(|id| inputs.get(id)) else {
                continue;
            };
            let gap = r
                .reason
                .split_once("judge: ")
                .map_or(r.reason.as_str(), |(_, g)| g);
            let req = crate::roles::judge::judge_request(
                &prompts.judge,
                t.instruction.as_deref().unwrap_or_default(),
                &crate::artifact::JsonText::to_json(&t.actions),
                gap,
                0,
            );
            judge.add(
                estimate_prompt_tokens(&req.messages, &[]),
                super::DEFAULT_JUDGE_COMPLETION as u64,
            );
        }
    }
    m.sizes.judge = judge.per_call();
    m.screened_tasks = eval_verified;
    measure_episodes(output, domain, prompts, emotion, &mut m)?;
    Ok(m)
}

/// Errored items of a stage's rejections among `items` (both splits).
fn errored(
    stage: &'static str,
    rejects: &[RejectRecord],
    items: [f64; 2],
) -> (&'static str, f64, f64) {
    let n = rejects
        .iter()
        .filter(|r| r.reason_kind == "errored")
        .count() as f64;
    (stage, n, items[0] + items[1])
}

/// The episode stages' part of [`measure`]: per stage the mean requests and tokens of an
/// episode, the scored and failed episodes, screening's and review's keeps, and the
/// analysis judge's request size.
fn measure_episodes(
    output: &Path,
    domain: &'static dyn Domain,
    prompts: &Prompts,
    emotion: &dyn Fn(&str) -> bool,
    m: &mut Measured,
) -> Result<(), PlanError> {
    let d = domain.name();
    let tools: Vec<serde_json::Value> = domain.tool_specs().iter().map(|s| s.openai()).collect();
    let mut tasks: HashMap<String, TaskRecord> = HashMap::new();
    for stage in ["tasks", "reviewed"] {
        for t in read::<TaskRecord>(output, stage, d, PART)?.unwrap_or_default() {
            tasks.insert(t.task_id.clone(), t);
        }
    }
    let analysis_prompt = prompts.analysis_judge.messages(None);
    let mut analysis = Mean::default();
    for (stage, file) in [
        ("rollouts", PART),
        ("screened", "episodes.parquet"),
        ("eval", PART),
    ] {
        let Some(rows) = read::<RolloutRecord>(output, stage, d, file)? else {
            continue;
        };
        m.ran.push(stage);
        let mut size = EpisodeSize::default();
        let (mut scored, mut failed, mut errored) = (0.0, 0.0, 0.0);
        for r in &rows {
            let task = tasks.get(&r.task_id);
            let system = task.map(|t| user_system(&prompts.user.system, t, emotion(stage)));
            size.add(&episode_requests(&r.messages, &tools, system.as_deref()));
            if crate::harness::metrics::is_infrastructure_failure(r) {
                errored += 1.0;
                continue;
            }
            scored += 1.0;
            if r.reward < 1 {
                failed += 1.0;
            }
            if stage != "screened" && r.reward < 1 {
                analysis.add(
                    analysis_prompt_tokens(&analysis_prompt, task, r),
                    super::DEFAULT_ANALYSIS_COMPLETION as u64,
                );
            }
        }
        let n = rows.len() as f64;
        m.sizes.episodes.insert(stage, size.mean(n));
        m.scored.insert(stage, (scored, failed));
        m.errored.push((stage, errored, n));
        match stage {
            "rollouts" => m.funnel.rollout_episodes = n,
            "screened" => {
                m.funnel.screened_episodes = n;
                if let Some(kept) = read::<TaskRecord>(output, stage, d, PART)? {
                    m.funnel.screened_kept = kept.len() as f64;
                }
            }
            _ => m.funnel.eval_episodes = n,
        }
    }
    if let Some(reviewed) = read::<TaskRecord>(output, "reviewed", d, PART)? {
        m.ran.push("reviewed");
        m.funnel.reviewed = reviewed.len() as f64;
    }
    m.sizes.analysis = analysis.per_call();
    Ok(())
}
