//! A realistic test model on loopback: one OpenAI-compatible server that answers every model
//! role of the pipeline (refiner, feeler, task judge, analysis judge, user simulator, agent)
//! mostly well, and errs the way real mid-size models do, at set rates. It is the proof, in
//! `cargo test`, that a model's bad answer never reaches a released task or an SFT row.
//!
//! How it answers well: the refiner returns the draft it was given; the feeler a plain
//! third-person description; the judges accept or abstain; the user simulator and the agent
//! play the task with Tracer's own scripted customer and oracle agent (mistake-free), found
//! from the request (the user's instruction; the agent's per-episode seed), replayed over the
//! conversation so far. So with every fault off it gives exactly what the scripted roles
//! would, and any difference a fault makes is the fault's.
//!
//! How it errs ([`Fault`], with [`Faults::realistic`] the rates the tests use): preambles and
//! Markdown, the customer's own voice, a reworded amount or date, a dropped identity sentence,
//! answers cut at the token cap, empty answers, 5xx and timeouts (failing both attempts of a
//! role with one retry, so the request errors and a rerun is answered); labels leaked into a feeling; instruction sentences and thinking
//! pasted into a user turn, `###UNSATISFIED###` after success; empty agent turns, wrong
//! arguments, calls written as text. Each fault is drawn per request from a hash of the
//! request's body, so a run is repeatable and a re-asked request (another seed, or the
//! refusal's reason appended) is a fresh draw. What it cannot show: that a real model's
//! answers are good — only that bad ones of these kinds are caught.

#![allow(dead_code)]

use super::openai_server::{Handler, Reply};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tracer::artifact::TaskRecord;
use tracer::harness::{Agent, ChatMessage, MessageRole, User};

/// The kinds of fault, by the role that makes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    // The refiner.
    Preamble,
    Markdown,
    FirstPerson,
    RewordedValue,
    DroppedIdentity,
    // Any text role (refiner, feeler, judge, user).
    CutAtCap,
    EmptyAnswer,
    /// A 5xx on every attempt of a request in the first run (a rerun is answered).
    ServerError,
    /// An answer slower than the role's timeout, on every attempt in the first run.
    Timeout,
    // The feeler.
    LeakedLabels,
    // The user simulator.
    VerbatimInstruction,
    ThinkingInTurn,
    UnsatisfiedAfterSuccess,
    // The agent.
    EmptyAgentTurn,
    WrongArgument,
    CallAsText,
}

impl Fault {
    pub const ALL: [Fault; 16] = [
        Fault::Preamble,
        Fault::Markdown,
        Fault::FirstPerson,
        Fault::RewordedValue,
        Fault::DroppedIdentity,
        Fault::CutAtCap,
        Fault::EmptyAnswer,
        Fault::ServerError,
        Fault::Timeout,
        Fault::LeakedLabels,
        Fault::VerbatimInstruction,
        Fault::ThinkingInTurn,
        Fault::UnsatisfiedAfterSuccess,
        Fault::EmptyAgentTurn,
        Fault::WrongArgument,
        Fault::CallAsText,
    ];
}

/// Per fault, the share of the requests it could apply to that it does.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    pub rates: BTreeMap<Fault, f64>,
}

impl Faults {
    /// No faults: the scripted roles' answers through the real HTTP path.
    pub fn none() -> Faults {
        Faults::default()
    }

    /// The rates the tests use: each fault common enough to occur many times in a small run.
    pub fn realistic() -> Faults {
        let mut rates = BTreeMap::new();
        for (f, r) in [
            (Fault::Preamble, 0.08),
            (Fault::Markdown, 0.05),
            (Fault::FirstPerson, 0.05),
            (Fault::RewordedValue, 0.06),
            (Fault::DroppedIdentity, 0.05),
            (Fault::CutAtCap, 0.04),
            (Fault::EmptyAnswer, 0.04),
            (Fault::ServerError, 0.03),
            (Fault::Timeout, 0.01),
            (Fault::LeakedLabels, 0.10),
            (Fault::VerbatimInstruction, 0.05),
            (Fault::ThinkingInTurn, 0.04),
            (Fault::UnsatisfiedAfterSuccess, 0.10),
            (Fault::EmptyAgentTurn, 0.03),
            (Fault::WrongArgument, 0.02),
            (Fault::CallAsText, 0.05),
        ] {
            rates.insert(f, r);
        }
        Faults { rates }
    }
}

/// Attempts of one request a 5xx or timeout fault fails: a role configured with
/// `max_retries = 1` makes two, so the request errors; its rerun is answered.
pub const FAILED_ATTEMPTS: usize = 2;

/// Text a fault leaves in an answer, so a test can look for it in what was released.
pub const PREAMBLE: &str = "Here is the rewritten instruction: ";
pub const LEAKED_LABELS: &str = "Emotion: anxiety. Politeness: warm. Urgency: high.";
pub const THINKING: &str = "(Thinking: I should answer the agent's question now.) ";

/// What the model knows of a run: its tasks, databases and seed (to find an episode's task).
struct Run {
    /// Instruction -> task.
    by_instruction: HashMap<String, TaskRecord>,
    /// Episode seed -> (task id, trial).
    by_seed: HashMap<u64, (String, u32)>,
    tasks: HashMap<String, TaskRecord>,
    dbs: HashMap<(String, tracer::split::Split), Arc<dyn tracer::domain::Environment>>,
    seed: u64,
}

pub struct TestModel {
    faults: Faults,
    run: Mutex<Option<Run>>,
    /// Requests seen per body hash (a 5xx or timeout fails the first attempts of a request).
    attempts: Mutex<HashMap<String, usize>>,
    /// Faults injected, by kind.
    pub injected: Mutex<BTreeMap<Fault, usize>>,
    /// Requests answered per role.
    pub answered: Mutex<BTreeMap<&'static str, usize>>,
    rt: tokio::runtime::Runtime,
    prompts: BTreeMap<&'static str, String>,
    /// Where to load the run from when an episode names a task not loaded yet (see
    /// [`TestModel::watch_run`]).
    watch: Mutex<Option<Watch>>,
    /// Held while the watched run loads (one load for a burst of misses).
    reload: Mutex<()>,
}

/// A run output to load the tasks from on demand.
#[derive(Clone)]
struct Watch {
    output: std::path::PathBuf,
    domains: Vec<String>,
    seed: u64,
    trials: u32,
}

/// The share `rate` of draws keyed by `key` that hit: a fixed function of the key.
fn hits(key: &str, fault: Fault, rate: f64) -> bool {
    if rate <= 0.0 {
        return false;
    }
    let h = Sha256::digest(format!("{key}\u{0}{fault:?}").as_bytes());
    let x = u64::from_le_bytes(h[..8].try_into().unwrap()) as f64 / u64::MAX as f64;
    x < rate
}

fn text_of(m: &Value) -> String {
    m["content"].as_str().unwrap_or("").to_string()
}

impl TestModel {
    pub fn new(faults: Faults) -> Arc<TestModel> {
        let prompts = [
            "refiner",
            "feeler",
            "judge",
            "user",
            "analysis_judge",
            "grounder",
        ]
        .into_iter()
        .map(|n| (n, tracer::llm::prompt::builtin(n).unwrap().system))
        .collect();
        Arc::new(TestModel {
            faults,
            run: Mutex::new(None),
            attempts: Mutex::new(HashMap::new()),
            injected: Mutex::new(BTreeMap::new()),
            answered: Mutex::new(BTreeMap::new()),
            rt: tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap(),
            prompts,
            watch: Mutex::new(None),
            reload: Mutex::new(()),
        })
    }

    /// Load the run in `output` whenever an episode's request names a task the model has
    /// not loaded (one command that runs every stage, as `tracer plan --pilot` does, writes
    /// its tasks while the model serves it).
    pub fn watch_run(&self, output: &Path, domains: &[&str], seed: u64, trials: u32) {
        *self.watch.lock().unwrap() = Some(Watch {
            output: output.to_path_buf(),
            domains: domains.iter().map(|d| d.to_string()).collect(),
            seed,
            trials,
        });
    }

    /// `look(run)`, after loading the watched run once more when the loaded one does not
    /// answer it.
    fn lookup<T>(&self, look: impl Fn(&Run) -> Option<T>) -> Option<T> {
        if let Some(found) = self.run.lock().unwrap().as_ref().and_then(&look) {
            return Some(found);
        }
        let watch = self.watch.lock().unwrap().clone()?;
        let ready = watch.domains.iter().all(|d| {
            watch
                .output
                .join("tasks")
                .join(format!("domain={d}"))
                .join("part-00000.parquet")
                .is_file()
        });
        if !ready {
            return None;
        }
        let _one_load = self.reload.lock().unwrap();
        if let Some(found) = self.run.lock().unwrap().as_ref().and_then(&look) {
            return Some(found);
        }
        let domains: Vec<&str> = watch.domains.iter().map(String::as_str).collect();
        self.load_run(&watch.output, &domains, watch.seed, watch.trials);
        self.run.lock().unwrap().as_ref().and_then(&look)
    }

    /// The handler to install on an [`super::openai_server::OpenAiServer`].
    pub fn handler(self: &Arc<TestModel>) -> Handler {
        let me = Arc::clone(self);
        Arc::new(move |body: &Value| me.answer(body))
    }

    /// Load what the episode roles need: the verified tasks of `domains` and their
    /// databases from a run's output, and the run's seed.
    pub fn load_run(&self, output: &Path, domains: &[&str], seed: u64, trials: u32) {
        let mut run = Run {
            by_instruction: HashMap::new(),
            by_seed: HashMap::new(),
            tasks: HashMap::new(),
            dbs: HashMap::new(),
            seed,
        };
        for d in domains {
            let dir = output.join("tasks").join(format!("domain={d}"));
            let (tasks, _) =
                tracer::artifact::read_records::<TaskRecord>(&dir.join("part-00000.parquet"))
                    .unwrap();
            let domain = tracer::domain::find(d).unwrap();
            let db_dir = output.join("db").join(format!("domain={d}"));
            for split in [tracer::split::Split::Train, tracer::split::Split::Eval] {
                let env = tracer::project::load_db(&db_dir, domain, split).unwrap();
                run.dbs.insert((d.to_string(), split), Arc::from(env));
            }
            for t in tasks {
                for trial in 0..trials {
                    let s = tracer::seed::derive_seed(
                        seed,
                        &["episode", &t.task_id, &trial.to_string()],
                    );
                    run.by_seed.insert(s, (t.task_id.clone(), trial));
                }
                if let Some(i) = &t.instruction {
                    run.by_instruction.insert(i.clone(), t.clone());
                }
                run.tasks.insert(t.task_id.clone(), t);
            }
        }
        *self.run.lock().unwrap() = Some(run);
    }

    fn count(&self, fault: Fault) {
        *self.injected.lock().unwrap().entry(fault).or_default() += 1;
    }

    fn draw(&self, key: &str, fault: Fault) -> bool {
        let rate = self.faults.rates.get(&fault).copied().unwrap_or(0.0);
        let hit = hits(key, fault, rate);
        if hit {
            self.count(fault);
        }
        hit
    }

    /// A fault that fails the first [`FAILED_ATTEMPTS`] attempts of a request: every attempt
    /// of a role with one retry, so the request errors in its run and is answered on a rerun.
    fn first_run_fault(&self, key: &str, fault: Fault) -> bool {
        let rate = self.faults.rates.get(&fault).copied().unwrap_or(0.0);
        if !hits(key, fault, rate) {
            return false;
        }
        let mut attempts = self.attempts.lock().unwrap();
        let n = attempts.entry(format!("{fault:?}{key}")).or_default();
        *n += 1;
        let failing = *n <= FAILED_ATTEMPTS;
        if *n == 1 {
            drop(attempts);
            self.count(fault);
        }
        failing
    }

    fn role_of(&self, body: &Value) -> &'static str {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let system = messages.first().map(text_of).unwrap_or_default();
        let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        for (name, text) in &self.prompts {
            if system.starts_with(text.as_str()) {
                return name;
            }
        }
        if has_tools { "agent" } else { "other" }
    }

    fn answer(&self, body: &Value) -> Reply {
        let role = self.role_of(body);
        *self.answered.lock().unwrap().entry(role).or_default() += 1;
        let key = Sha256::digest(body.to_string().as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        if role != "agent" {
            if self.first_run_fault(&key, Fault::ServerError) {
                return Reply::Status {
                    code: 503,
                    retry_after: None,
                    message: "the model is overloaded".into(),
                };
            }
            if self.first_run_fault(&key, Fault::Timeout) {
                return Reply::Delay(std::time::Duration::from_millis(1500));
            }
        }
        match role {
            "refiner" => self.refiner(body, &key),
            "feeler" => self.text_role(&key, self.feeling(&key), true),
            "judge" => self.text_role(
                &key,
                "ACCEPT\nThe customer can give that value.".into(),
                false,
            ),
            "analysis_judge" => Reply::Text("{\"faults\": []}".into()),
            "user" => self.user(body, &key),
            "agent" => self.agent(body, &key),
            _ => Reply::Text("OK".into()),
        }
    }

    /// A plain text answer with the generic faults (cut, empty; labels for the feeler).
    fn text_role(&self, key: &str, good: String, feeler: bool) -> Reply {
        if self.draw(key, Fault::EmptyAnswer) {
            return Reply::Text(String::new());
        }
        if self.draw(key, Fault::CutAtCap) {
            let half: String = good.chars().take(good.chars().count() / 2).collect();
            return Reply::Cut(half);
        }
        if feeler && self.draw(key, Fault::LeakedLabels) {
            return Reply::Text(format!("{LEAKED_LABELS} {good}"));
        }
        Reply::Text(good)
    }

    fn feeling(&self, key: &str) -> String {
        const FEELINGS: [&str; 6] = [
            "The customer is anxious that this might not go through and wants it settled quickly. They stay polite but want the agent to confirm every step.",
            "The customer is calm and friendly, simply wanting the request handled. There is no hurry in their tone and they take the agent at its word.",
            "The customer is irritated that this needs a call at all and keeps answers short. They doubt the agent will get it right the first time.",
            "The customer feels let down by how things went and sounds discouraged. They are courteous but tired, and want it over with.",
            "The customer is pleased and a little excited about the plans behind the request. They are warm and patient with the agent.",
            "The customer dislikes how the service has treated them and says so coolly. They want proof that the change was made before they believe it.",
        ];
        let i = u8::from_str_radix(&key[..2], 16).unwrap_or(0) as usize % FEELINGS.len();
        FEELINGS[i].to_string()
    }

    fn refiner(&self, body: &Value, key: &str) -> Reply {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        // The draft of this task: the last user message that carries one (a re-ask appends
        // the refusal's reason after it).
        let draft = messages
            .iter()
            .rev()
            .filter(|m| m["role"] == "user")
            .find_map(|m| {
                let t = text_of(m);
                let rest = t.strip_prefix("Draft:\n")?;
                Some(
                    rest.split("\n\nFacts the customer knows:")
                        .next()?
                        .to_string(),
                )
            })
            .unwrap_or_default();
        if self.draw(key, Fault::EmptyAnswer) {
            return Reply::Text(String::new());
        }
        if self.draw(key, Fault::CutAtCap) {
            let half: String = draft.chars().take(draft.chars().count() / 2).collect();
            return Reply::Cut(half);
        }
        if self.draw(key, Fault::Preamble) {
            return Reply::Text(format!("{PREAMBLE}{draft}"));
        }
        if self.draw(key, Fault::Markdown) {
            return Reply::Text(format!("**Instruction**\n- {draft}"));
        }
        if draft.starts_with("Your name is") && self.draw(key, Fault::FirstPerson) {
            return Reply::Text(draft.replacen("Your name is", "My name is", 1));
        }
        if let Some(reworded) = reword_value(&draft)
            && self.draw(key, Fault::RewordedValue)
        {
            return Reply::Text(reworded);
        }
        if let Some(dropped) = drop_last_sentence(&draft)
            && self.draw(key, Fault::DroppedIdentity)
        {
            return Reply::Text(dropped);
        }
        Reply::Text(draft)
    }

    fn user(&self, body: &Value, key: &str) -> Reply {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let system = messages.first().map(text_of).unwrap_or_default();
        let instruction = system
            .split("## Instruction\n")
            .nth(1)
            .map(|r| {
                r.split("\n\n## How you feel")
                    .next()
                    .unwrap_or(r)
                    .to_string()
            })
            .unwrap_or_default();
        let emotion = system.contains("## How you feel and communicate");
        let seed = body["seed"].as_u64().unwrap_or(0);
        let found = self.lookup(|run| {
            let task = run.by_instruction.get(&instruction).cloned()?;
            let trial = run
                .by_seed
                .get(&seed)
                .or_else(|| run.by_seed.get(&seed.wrapping_sub(1)))
                .map_or(0, |(_, t)| *t);
            Some((task, trial, run.seed))
        });
        let Some((task, trial, run_seed)) = found else {
            return Reply::Text("###STOP###".into());
        };
        let mut user = tracer::harness::user::ScriptedUser::new(&task, emotion, run_seed, trial);
        let mut reply = String::new();
        for m in messages.iter().skip(1).filter(|m| m["role"] == "user") {
            reply = self
                .rt
                .block_on(user.reply(&text_of(m)))
                .map(|(t, _)| t)
                .unwrap_or_else(|e| format!("error: {e}"));
        }
        if self.draw(key, Fault::EmptyAnswer) {
            return Reply::Text(String::new());
        }
        if reply.contains("###STOP###") && self.draw(key, Fault::UnsatisfiedAfterSuccess) {
            return Reply::Text(reply.replace("###STOP###", "###UNSATISFIED###"));
        }
        if !reply.contains("###") {
            if self.draw(key, Fault::ThinkingInTurn) {
                return Reply::Text(format!("{THINKING}{reply}"));
            }
            if let Some(direction) = stage_direction(&instruction)
                && self.draw(key, Fault::VerbatimInstruction)
            {
                return Reply::Text(format!("{reply} {direction}"));
            }
        }
        Reply::Text(reply)
    }

    fn agent(&self, body: &Value, key: &str) -> Reply {
        let seed = body["seed"].as_u64().unwrap_or(0);
        let transcript: Vec<ChatMessage> =
            serde_json::from_value(body["messages"].clone()).unwrap_or_default();
        let found = self.lookup(|run| {
            let (task_id, trial) = run
                .by_seed
                .get(&seed)
                .or_else(|| run.by_seed.get(&seed.wrapping_sub(1)))
                .cloned()?;
            let task = run.tasks[&task_id].clone();
            let env = Arc::clone(&run.dbs[&(task.domain.clone(), task.split)]);
            Some((task, trial, run.seed, env))
        });
        let Some((task, trial, run_seed, env)) = found else {
            return Reply::Text("I cannot help with that.".into());
        };
        let transfer = env
            .tool_specs()
            .iter()
            .find(|s| s.terminates)
            .map(|s| s.name.to_string());
        let identify = tracer::harness::discovery::identify_call(env.as_ref(), &task);
        let plan =
            tracer::harness::discovery::discovery_plan(env.as_ref(), &task, identify.as_ref());
        let mut agent = tracer::harness::agent::OracleAgent::new(
            &task,
            &Default::default(),
            transfer,
            identify,
            plan,
            run_seed,
            trial,
        );
        // Replay the agent's earlier turns (its state follows its own answers), then answer.
        let mut answer = None;
        for (i, m) in transcript.iter().enumerate() {
            let earlier_turn = m.role == MessageRole::Assistant && i > 1;
            if earlier_turn || i + 1 == transcript.len() {
                let prefix = if earlier_turn {
                    &transcript[..i]
                } else {
                    &transcript[..]
                };
                answer = self.rt.block_on(agent.respond(prefix)).ok().map(|(m, _)| m);
            }
        }
        let Some(message) = answer else {
            return Reply::Text("Could you say that again?".into());
        };
        if self.draw(key, Fault::EmptyAgentTurn) {
            return Reply::Text(String::new());
        }
        let calls: Vec<(String, String)> = message
            .tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.to_string()))
            .collect();
        if calls.is_empty() {
            return Reply::Text(message.content.clone().unwrap_or_default());
        }
        if self.draw(key, Fault::WrongArgument) {
            let mut calls = calls;
            let (name, args) = calls[0].clone();
            let mut v: Value = serde_json::from_str(&args).unwrap_or(json!({}));
            if let Some(obj) = v.as_object_mut()
                && let Some((_, first)) = obj.iter_mut().find(|(_, v)| v.is_string())
            {
                *first = json!("WRONG-0000");
            }
            calls[0] = (name, v.to_string());
            return Reply::ToolCalls(calls);
        }
        if calls.len() == 1 && self.draw(key, Fault::CallAsText) {
            let (name, args) = &calls[0];
            return Reply::Text(format!(
                "<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call>"
            ));
        }
        match message.content.filter(|c| !c.trim().is_empty()) {
            Some(text) => Reply::TextAndCalls(text, calls),
            None => Reply::ToolCalls(calls),
        }
    }
}

/// The draft with its first amount or date said differently (`638,705.73 NGN` ->
/// `638705.73`, `2025-06-30` -> `June 30`), if it has one.
fn reword_value(draft: &str) -> Option<String> {
    for word in draft.split_whitespace() {
        let w = word.trim_end_matches([',', '.', ';', ')']);
        let digits = w.chars().filter(char::is_ascii_digit).count();
        if w.len() == 10 && digits == 8 && w.matches('-').count() == 2 {
            return Some(draft.replacen(w, "the date we talked about", 1));
        }
        if w.contains('.')
            && digits >= 3
            && w.chars()
                .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
        {
            return Some(draft.replacen(w, &w.replace(',', "").replace('.', ","), 1));
        }
    }
    None
}

/// The draft without its last sentence (where the identity fact is said), if it has two.
fn drop_last_sentence(draft: &str) -> Option<String> {
    let cut = draft.trim_end().trim_end_matches('.').rfind(". ")?;
    Some(draft[..=cut].to_string())
}

/// A sentence of the instruction that tells the simulator how to behave (what a careless
/// model pastes into its turn).
fn stage_direction(instruction: &str) -> Option<String> {
    instruction
        .split_inclusive(". ")
        .map(str::trim)
        .find(|s| {
            let l = s.to_lowercase();
            l.starts_with("if asked")
                || l.starts_with("you do not give")
                || l.starts_with("if the agent")
                || l.starts_with("to confirm your identity")
        })
        .map(str::to_string)
}
