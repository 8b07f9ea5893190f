//! `tracer serve`: the domains and their verified tasks as an environment an RL trainer
//! drives over HTTP. `POST /reset` opens an episode of a task on a fresh fork of its
//! database (the policy, the tools and the simulated user's opening message come back);
//! `POST /step` hands in the policy model's assistant message (text and/or tool calls) and
//! returns the tool results and the user's reply; `POST /verify` scores the episode with the
//! rollouts' reward and returns its rollout record. The agent's tools are also served over
//! MCP (`/mcp/<session>`, see [`mcp`]); `POST /episode` runs a whole episode against the
//! caller's OpenAI-compatible endpoint.
//!
//! Every episode is a [`Session`] of the harness, the state machine `tracer run rollouts`
//! drives: with the scripted user, the same task, seed, trial and assistant messages give
//! the same transcript, state hash and reward as the rollouts stage.
//!
//! Architecture invariant: nothing a client sends names a file; the server reads the run's
//! artifacts once, at start, and writes nothing but the response cache of endpoint roles.

pub mod mcp;

use crate::artifact::{RolloutRecord, TaskRecord};
use crate::domain::{Domain, Environment};
use crate::harness::reward::{self, RewardBreakdown};
use crate::harness::session::Session;
use crate::harness::{ChatMessage, MessageRole, Usage, User, batch};
use crate::http::{Request, Response};
use crate::llm::RoleModel;
use crate::split::Split;
use crate::task::TaskParts;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest arguments text of one tool call (a request body may be up to
/// [`crate::http::MAX_BODY`]).
pub const MAX_ARGUMENTS: usize = 64 * 1024;
/// Tasks a `GET /tasks` page lists at most.
pub const MAX_PAGE: usize = 1000;

/// How the server runs episodes.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Interaction steps (user and agent messages) before an episode is cut.
    pub max_steps: usize,
    /// Emotion-conditioned users unless a reset says otherwise.
    pub emotion: bool,
    /// The run seed of a reset that names none (the scripted user's choices derive from it).
    pub seed: u64,
    /// Open sessions at most; a reset beyond it is refused.
    pub max_sessions: usize,
    /// A session untouched this long is closed.
    pub idle: Duration,
    /// A secret every request must carry as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Where endpoint roles (the user, `/episode`'s agent) cache their answers.
    pub cache: std::path::PathBuf,
}

/// A task the server offers, its JSON columns decoded once.
pub struct ServedTask {
    pub task: TaskRecord,
    pub parts: TaskParts,
}

/// One domain's tasks, databases, policy and tools, read at start.
pub struct DomainData {
    pub domain: &'static dyn Domain,
    pub tasks: Vec<Arc<ServedTask>>,
    eval: Arc<dyn Environment>,
    train: Arc<dyn Environment>,
    eval_policy: Arc<String>,
    train_policy: Arc<String>,
    /// The agent's tools as OpenAI function schemas.
    pub tools: Arc<[Value]>,
}

impl DomainData {
    /// `tasks` of `domain` on its two databases, with each database's policy.
    pub fn new(
        domain: &'static dyn Domain,
        tasks: Vec<TaskRecord>,
        eval: Box<dyn Environment>,
        train: Box<dyn Environment>,
        policy: impl Fn(&dyn Environment) -> Result<String, String>,
    ) -> Result<DomainData, String> {
        let tasks = tasks
            .into_iter()
            .map(|task| {
                let parts = TaskParts::decode(&task)?;
                Ok(Arc::new(ServedTask { task, parts }))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let tools = eval.tool_specs().iter().map(|s| s.openai()).collect();
        Ok(DomainData {
            domain,
            tasks,
            eval_policy: Arc::new(policy(eval.as_ref())?),
            train_policy: Arc::new(policy(train.as_ref())?),
            eval: Arc::from(eval),
            train: Arc::from(train),
            tools,
        })
    }

    fn env(&self, split: Split) -> &Arc<dyn Environment> {
        if split == Split::Eval {
            &self.eval
        } else {
            &self.train
        }
    }

    fn policy(&self, split: Split) -> &Arc<String> {
        if split == Split::Eval {
            &self.eval_policy
        } else {
            &self.train_policy
        }
    }
}

/// An open episode.
pub struct Open {
    pub session: Session,
    pub env: Box<dyn Environment>,
    user: Box<dyn User>,
    user_model: String,
    agent_model: String,
    pub domain: usize,
    pub task: Arc<ServedTask>,
    emotion: bool,
    trial: u32,
    seed: u64,
    last_used: Instant,
    /// Tool calls made over MCP (they get ids of their own).
    mcp_calls: usize,
}

/// A request the server refuses: HTTP status, a machine-readable code, a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ServeError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ServeError {
        ServeError {
            status,
            code,
            message: message.into(),
        }
    }
    fn bad(message: impl Into<String>) -> ServeError {
        ServeError::new(400, "bad_request", message)
    }
    pub fn response(&self) -> Response {
        error_response(self.status, self.code, &self.message)
    }
}

/// The JSON error every refusal answers with: `{"error": {"code", "message"}}`.
pub fn error_response(status: u16, code: &str, message: &str) -> Response {
    Response::json(
        status,
        &json!({ "error": { "code": code, "message": message } }),
    )
}

/// A request that could not be read at all (too large, malformed head).
fn unreadable(status: u16, why: &str) -> Response {
    let code = match status {
        413 => "too_large",
        431 => "head_too_large",
        _ => "bad_request",
    };
    error_response(status, code, why)
}

pub struct Server {
    pub domains: Vec<DomainData>,
    /// Task id -> (domain index, task index).
    by_task: HashMap<String, (usize, usize)>,
    user_role: RoleModel,
    pub settings: Settings,
    sessions: Mutex<HashMap<String, Arc<Mutex<Open>>>>,
    /// Ids of sessions closed for idleness (bounded), so a late step hears why.
    expired: Mutex<HashSet<String>>,
    next: AtomicU64,
    salt: u64,
    runtime: tokio::runtime::Runtime,
}

/// How many expired ids are remembered for their error message.
const REMEMBERED_EXPIRED: usize = 65_536;

fn field<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body.get(name).filter(|v| !v.is_null())
}

fn str_field<'a>(body: &'a Value, name: &str) -> Result<&'a str, ServeError> {
    match field(body, name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(_) => Err(ServeError::bad(format!(
            "field '{name}' must be a non-empty string"
        ))),
        None => Err(ServeError::bad(format!("field '{name}' is missing"))),
    }
}

fn opt_u64(body: &Value, name: &str) -> Result<Option<u64>, ServeError> {
    match field(body, name) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            ServeError::bad(format!("field '{name}' must be a non-negative integer"))
        }),
    }
}

fn opt_bool(body: &Value, name: &str) -> Result<Option<bool>, ServeError> {
    match field(body, name) {
        None => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| ServeError::bad(format!("field '{name}' must be true or false"))),
    }
}

/// The JSON object of a request body.
pub fn json_body(req: &Request) -> Result<Value, ServeError> {
    let body: Value = serde_json::from_slice(&req.body)
        .map_err(|e| ServeError::bad(format!("the request body is not JSON: {e}")))?;
    if !body.is_object() {
        return Err(ServeError::bad("the request body must be a JSON object"));
    }
    Ok(body)
}

/// A task as `GET /tasks/<id>` shows it: its record, the JSON columns as JSON.
pub fn task_json(task: &TaskRecord) -> Value {
    let mut v = serde_json::to_value(task).unwrap_or(Value::Null);
    if let Some(obj) = v.as_object_mut() {
        for column in ["actions", "user_facts", "requests"] {
            if let Some(Value::String(text)) = obj.get(column) {
                let decoded = serde_json::from_str(text).unwrap_or(Value::Null);
                obj.insert(column.into(), decoded);
            }
        }
    }
    v
}

/// A task's line in `GET /tasks`.
fn task_summary(task: &TaskRecord) -> Value {
    json!({
        "task_id": task.task_id,
        "domain": task.domain,
        "split": task.split.as_str(),
        "emotion_family": task.emotion_family,
        "emotion": task.emotion,
        "politeness": task.politeness,
        "urgency": task.urgency,
        "trust": task.trust,
        "intents": task.intents.len(),
    })
}

/// Check a client's assistant message: an assistant role, something said or called, tool
/// calls with names and bounded arguments. Whether the tool exists and the arguments parse
/// is the environment's to answer, in the transcript, as in rollouts.
pub fn check_assistant(message: &Value) -> Result<ChatMessage, ServeError> {
    let msg: ChatMessage = serde_json::from_value(message.clone()).map_err(|e| {
        ServeError::new(
            400,
            "bad_message",
            format!("field 'message' is not an OpenAI chat message: {e}"),
        )
    })?;
    if msg.role != MessageRole::Assistant {
        return Err(ServeError::new(
            400,
            "bad_message",
            format!(
                "field 'message': role must be 'assistant', not '{}'",
                message["role"].as_str().unwrap_or("?")
            ),
        ));
    }
    let said = msg.content.as_deref().is_some_and(|c| !c.trim().is_empty());
    if !said && msg.tool_calls.is_empty() {
        return Err(ServeError::new(
            400,
            "bad_message",
            "field 'message': an assistant message needs content or tool_calls",
        ));
    }
    for call in &msg.tool_calls {
        if call.name.is_empty() || call.id.is_empty() {
            return Err(ServeError::new(
                400,
                "bad_message",
                "field 'message': every tool call needs an id and a function name",
            ));
        }
        if call.arguments.len() > MAX_ARGUMENTS {
            return Err(ServeError::new(
                400,
                "arguments_too_large",
                format!(
                    "the arguments of tool call '{}' ({}) are {} bytes; the limit is {MAX_ARGUMENTS}",
                    call.id,
                    call.name,
                    call.arguments.len()
                ),
            ));
        }
    }
    Ok(msg)
}

/// Token counts a client reports with a step (optional).
fn usage_field(body: &Value) -> Result<Usage, ServeError> {
    let Some(u) = field(body, "usage") else {
        return Ok(Usage::default());
    };
    let count = |name: &str| -> Result<u64, ServeError> { Ok(opt_u64(u, name)?.unwrap_or(0)) };
    Ok(Usage {
        prompt_tokens: count("prompt_tokens")?,
        cached_prompt_tokens: count("cached_prompt_tokens")?,
        completion_tokens: count("completion_tokens")?,
    })
}

/// What a finished (or cut) episode scores: reward, its parts, and its rollout record.
pub struct Verdict {
    pub breakdown: RewardBreakdown,
    pub record: RolloutRecord,
}

impl Verdict {
    pub fn json(&self) -> Value {
        json!({
            "reward": self.breakdown.reward,
            "breakdown": self.breakdown,
            "termination": self.record.termination,
            "record": self.record,
        })
    }
}

impl Server {
    pub fn new(
        domains: Vec<DomainData>,
        user_role: RoleModel,
        settings: Settings,
    ) -> Result<Server, String> {
        let mut by_task = HashMap::new();
        for (di, d) in domains.iter().enumerate() {
            for (ti, t) in d.tasks.iter().enumerate() {
                if let Some((other, _)) = by_task.insert(t.task.task_id.clone(), (di, ti)) {
                    return Err(format!(
                        "task id '{}' is in both {} and {}",
                        t.task.task_id,
                        domains[other].domain.name(),
                        d.domain.name()
                    ));
                }
            }
        }
        let salt =
            std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0u8);
        Ok(Server {
            domains,
            by_task,
            user_role,
            settings,
            sessions: Mutex::new(HashMap::new()),
            expired: Mutex::new(HashSet::new()),
            next: AtomicU64::new(1),
            salt,
            runtime: crate::llm::runtime()?,
        })
    }

    /// The user simulator's model id.
    pub fn user_model(&self) -> String {
        self.user_role.model_id()
    }

    /// Open sessions now.
    pub fn open_sessions(&self) -> usize {
        self.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    pub fn find_task(&self, task_id: &str) -> Result<(usize, Arc<ServedTask>), ServeError> {
        let &(d, t) = self.by_task.get(task_id).ok_or_else(|| {
            ServeError::new(
                404,
                "unknown_task",
                format!("no task '{task_id}' is served"),
            )
        })?;
        Ok((d, Arc::clone(&self.domains[d].tasks[t])))
    }

    /// Answer one request; every refusal is a JSON error.
    pub fn handle(&self, req: &Request) -> Response {
        if let Some(token) = &self.settings.token {
            let given = req
                .header("authorization")
                .and_then(|h| h.strip_prefix("Bearer "))
                .unwrap_or("");
            if !crate::http::constant_time_eq(given.trim().as_bytes(), token.as_bytes()) {
                return error_response(
                    401,
                    "unauthorized",
                    "this server needs 'Authorization: Bearer <token>'",
                );
            }
        }
        match self.route(req) {
            Ok(r) => r,
            Err(e) => e.response(),
        }
    }

    fn route(&self, req: &Request) -> Result<Response, ServeError> {
        let path = req.path.trim_end_matches('/');
        let method = req.method.as_str();
        if let Some(rest) = path.strip_prefix("/mcp/") {
            return Ok(mcp::handle(self, rest, req));
        }
        if let Some(id) = path.strip_prefix("/tasks/") {
            expect(method, "GET")?;
            let (_, t) = self.find_task(id)?;
            return Ok(Response::json(200, &task_json(&t.task)));
        }
        let ok = |v: Value| Ok(Response::json(200, &v));
        match path {
            "/health" => {
                expect(method, "GET")?;
                ok(json!({
                    "status": "ok",
                    "sessions": self.open_sessions(),
                    "max_sessions": self.settings.max_sessions,
                    "domains": self.domains.iter().map(|d| d.domain.name()).collect::<Vec<_>>(),
                    "user_model": self.user_model(),
                }))
            }
            "/tasks" => {
                expect(method, "GET")?;
                ok(self.list_tasks(req)?)
            }
            "/reset" => {
                expect(method, "POST")?;
                ok(self.reset(&json_body(req)?)?)
            }
            "/step" => {
                expect(method, "POST")?;
                ok(self.step(&json_body(req)?)?)
            }
            "/state" => {
                expect(method, "GET")?;
                let id = req
                    .param("session")
                    .ok_or_else(|| ServeError::bad("query parameter 'session' is missing"))?;
                ok(self.state(id)?)
            }
            "/verify" => {
                expect(method, "POST")?;
                ok(self.verify(&json_body(req)?)?.json())
            }
            "/close" => {
                expect(method, "POST")?;
                let body = json_body(req)?;
                let id = str_field(&body, "session")?;
                let open = self
                    .sessions
                    .lock()
                    .map(|mut s| s.remove(id))
                    .ok()
                    .flatten();
                if open.is_none() {
                    return Err(self.missing(id));
                }
                ok(json!({ "session": id, "closed": true }))
            }
            "/episode" => {
                expect(method, "POST")?;
                ok(self.episode(&json_body(req)?)?.json())
            }
            _ => Err(ServeError::new(
                404,
                "not_found",
                format!(
                    "no route {} {}; see GET /health, /tasks, /tasks/<id>, /state; POST /reset, /step, /verify, /close, /episode, /mcp/<session>",
                    req.method, req.path
                ),
            )),
        }
    }

    fn list_tasks(&self, req: &Request) -> Result<Value, ServeError> {
        let domain = req.param("domain");
        if let Some(d) = domain
            && !self.domains.iter().any(|x| x.domain.name() == d)
        {
            return Err(ServeError::new(
                404,
                "unknown_domain",
                format!("domain '{d}' is not served"),
            ));
        }
        let split = req
            .param("split")
            .map(|s| s.parse::<Split>())
            .transpose()
            .map_err(|e| ServeError::bad(format!("query parameter 'split': {e}")))?;
        let number = |name: &str, default: usize| -> Result<usize, ServeError> {
            req.param(name).map_or(Ok(default), |v| {
                v.parse().map_err(|_| {
                    ServeError::bad(format!("query parameter '{name}' must be a number"))
                })
            })
        };
        let offset = number("offset", 0)?;
        let limit = number("limit", 100)?.min(MAX_PAGE);
        let family = req.param("emotion_family");
        let matching: Vec<&TaskRecord> = self
            .domains
            .iter()
            .filter(|d| domain.is_none_or(|n| d.domain.name() == n))
            .flat_map(|d| d.tasks.iter().map(|t| &t.task))
            .filter(|t| split.is_none_or(|s| t.split == s))
            .filter(|t| family.is_none_or(|f| t.emotion_family.as_deref() == Some(f)))
            .collect();
        Ok(json!({
            "total": matching.len(),
            "offset": offset,
            "tasks": matching.iter().skip(offset).take(limit).map(|t| task_summary(t)).collect::<Vec<_>>(),
        }))
    }

    fn missing(&self, id: &str) -> ServeError {
        let expired = self.expired.lock().is_ok_and(|e| e.contains(id));
        if expired {
            ServeError::new(
                410,
                "expired_session",
                format!(
                    "session '{id}' was closed after {} s without a request",
                    self.settings.idle.as_secs()
                ),
            )
        } else {
            ServeError::new(404, "unknown_session", format!("no open session '{id}'"))
        }
    }

    /// The open session `id`, touched; an idle one is closed here and reported expired.
    pub fn session(&self, id: &str) -> Result<Arc<Mutex<Open>>, ServeError> {
        let open = self
            .sessions
            .lock()
            .ok()
            .and_then(|s| s.get(id).cloned())
            .ok_or_else(|| self.missing(id))?;
        {
            let mut o = open
                .lock()
                .map_err(|_| ServeError::new(500, "internal", "a session's lock is poisoned"))?;
            if o.last_used.elapsed() > self.settings.idle {
                drop(o);
                self.expire(id);
                return Err(self.missing(id));
            }
            o.last_used = Instant::now();
        }
        Ok(open)
    }

    fn expire(&self, id: &str) {
        if let Ok(mut s) = self.sessions.lock() {
            s.remove(id);
        }
        if let Ok(mut e) = self.expired.lock() {
            if e.len() >= REMEMBERED_EXPIRED {
                e.clear();
            }
            e.insert(id.to_string());
        }
    }

    /// Close every session idle past the limit.
    pub fn purge_idle(&self) {
        let idle: Vec<String> = match self.sessions.lock() {
            Ok(s) => s
                .iter()
                .filter(|(_, o)| {
                    o.try_lock()
                        .is_ok_and(|o| o.last_used.elapsed() > self.settings.idle)
                })
                .map(|(id, _)| id.clone())
                .collect(),
            Err(_) => return,
        };
        for id in idle {
            self.expire(&id);
        }
    }

    fn new_id(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mix = std::hash::BuildHasher::hash_one(
            &std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default(),
            (self.salt, n),
        );
        format!("s{n}-{:012x}", mix & 0xffff_ffff_ffff)
    }

    /// `POST /reset`: open an episode of a task.
    pub fn reset(&self, body: &Value) -> Result<Value, ServeError> {
        let task_id = str_field(body, "task_id")?;
        let (d, task) = self.find_task(task_id)?;
        let data = &self.domains[d];
        if let Some(name) = field(body, "domain").and_then(Value::as_str)
            && name != data.domain.name()
        {
            return Err(ServeError::bad(format!(
                "task '{task_id}' is a {} task, not {name}",
                data.domain.name()
            )));
        }
        let emotion = opt_bool(body, "emotion")?.unwrap_or(self.settings.emotion);
        let seed = opt_u64(body, "seed")?.unwrap_or(self.settings.seed);
        let trial = u32::try_from(opt_u64(body, "trial")?.unwrap_or(0))
            .map_err(|_| ServeError::bad("field 'trial' is too large"))?;
        let agent_model = match field(body, "agent_model") {
            None => "client".to_string(),
            Some(_) => str_field(body, "agent_model")?.to_string(),
        };
        self.purge_idle();
        if self.open_sessions() >= self.settings.max_sessions {
            return Err(ServeError::new(
                429,
                "too_many_sessions",
                format!(
                    "{} sessions are open, the most this server keeps; POST /close the finished ones (idle ones close after {} s)",
                    self.settings.max_sessions,
                    self.settings.idle.as_secs()
                ),
            ));
        }
        let split = task.task.split;
        let base = data.env(split);
        let env = base.fork();
        let mut user = batch::episode_user(
            &self.user_role,
            &task.task,
            &task.parts,
            trial,
            emotion,
            seed,
        );
        let mut session = Session::new(env.as_ref(), data.policy(split), self.settings.max_steps);
        self.runtime.block_on(session.advance(user.as_mut()));
        let id = self.new_id();
        let reply = json!({
            "session": id,
            "observation": {
                "task_id": task.task.task_id,
                "domain": data.domain.name(),
                "split": split.as_str(),
                "emotion": emotion,
                "policy": data.policy(split).as_str(),
                "tools": &*data.tools,
                "messages": session.messages(),
            },
            "reward": Value::Null,
            "done": session.termination().is_some(),
            "termination": session.termination().map(|t| t.as_str()),
        });
        let open = Open {
            session,
            env,
            user_model: user.model_id(),
            user,
            agent_model,
            domain: d,
            task,
            emotion,
            trial,
            seed,
            last_used: Instant::now(),
            mcp_calls: 0,
        };
        self.sessions
            .lock()
            .map_err(|_| ServeError::new(500, "internal", "the session table's lock is poisoned"))?
            .insert(id, Arc::new(Mutex::new(open)));
        Ok(reply)
    }

    fn lock<'a>(open: &'a Arc<Mutex<Open>>) -> Result<std::sync::MutexGuard<'a, Open>, ServeError> {
        open.lock()
            .map_err(|_| ServeError::new(500, "internal", "a session's lock is poisoned"))
    }

    fn over(id: &str, o: &Open) -> Option<ServeError> {
        o.session.termination().map(|t| {
            ServeError::new(
                409,
                "episode_over",
                format!(
                    "the episode of session '{id}' is over ({}); POST /verify for its reward",
                    t.as_str()
                ),
            )
        })
    }

    /// Hand an assistant message to an open session: its tool calls run, or its text goes to
    /// the user, who answers. The messages it added after the assistant's, and whether the
    /// episode is over.
    pub fn turn(&self, o: &mut Open, msg: ChatMessage, usage: Usage) -> Value {
        let before = o.session.messages().len();
        let Open {
            session, env, user, ..
        } = o;
        session.agent_turn(env.as_mut(), Ok((msg, usage)));
        self.runtime.block_on(session.advance(user.as_mut()));
        let added = &o.session.messages()[(before + 1).min(o.session.messages().len())..];
        let done = o.session.termination();
        let reward = done.map(|_| self.score(o).breakdown.reward);
        json!({
            "observation": { "messages": added, "tool_errors": o.session.tool_errors() },
            "reward": reward,
            "done": done.is_some(),
            "termination": done.map(|t| t.as_str()),
            "steps": o.session.steps(),
        })
    }

    /// `POST /step`.
    pub fn step(&self, body: &Value) -> Result<Value, ServeError> {
        let id = str_field(body, "session")?;
        let message = field(body, "action")
            .and_then(|a| field(a, "message"))
            .or_else(|| field(body, "message"))
            .ok_or_else(|| ServeError::bad("field 'action.message' (or 'message') is missing"))?;
        let msg = check_assistant(message)?;
        let usage = usage_field(body)?;
        let open = self.session(id)?;
        let mut o = Self::lock(&open)?;
        if let Some(e) = Self::over(id, &o) {
            return Err(e);
        }
        Ok(self.turn(&mut o, msg, usage))
    }

    /// `GET /state`.
    pub fn state(&self, id: &str) -> Result<Value, ServeError> {
        let open = self.session(id)?;
        let o = Self::lock(&open)?;
        Ok(json!({
            "session": id,
            "task_id": o.task.task.task_id,
            "domain": self.domains[o.domain].domain.name(),
            "emotion": o.emotion,
            "seed": o.seed,
            "trial": o.trial,
            "steps": o.session.steps(),
            "done": o.session.termination().is_some(),
            "termination": o.session.termination().map(|t| t.as_str()),
            "state_hash": o.env.state_hash().to_hex(),
            "messages": o.session.messages(),
        }))
    }

    fn score(&self, o: &Open) -> Verdict {
        let episode = o.session.snapshot(o.env.as_ref());
        let record = batch::rollout_record(
            &o.task.task,
            o.trial,
            &episode,
            o.agent_model.clone(),
            o.user_model.clone(),
            o.emotion,
            None,
        );
        let breakdown = reward::score(&episode, &o.task.task.reference_hash, &o.task.task.outputs);
        Verdict { breakdown, record }
    }

    /// `POST /verify`: the reward of a finished episode (or, with `end: true`, of an open
    /// one, cut now as at the step limit).
    pub fn verify(&self, body: &Value) -> Result<Verdict, ServeError> {
        let id = str_field(body, "session")?;
        let end = opt_bool(body, "end")?.unwrap_or(false);
        let open = self.session(id)?;
        let mut o = Self::lock(&open)?;
        if o.session.termination().is_none() {
            if !end {
                return Err(ServeError::new(
                    409,
                    "episode_open",
                    format!(
                        "the episode of session '{id}' is still open; step until done, or send \"end\": true to cut it here (scored as max_steps)"
                    ),
                ));
            }
            o.session.cut();
        }
        Ok(self.score(&o))
    }

    /// `POST /episode`: a whole episode of a task against the caller's OpenAI-compatible
    /// endpoint (`agent`: a `[roles.agent]` table as JSON, `base_url` and `model` at least).
    pub fn episode(&self, body: &Value) -> Result<Verdict, ServeError> {
        let task_id = str_field(body, "task_id")?;
        let agent =
            field(body, "agent").ok_or_else(|| ServeError::bad("field 'agent' is missing"))?;
        let mut cfg: crate::llm::RoleConfig = serde_json::from_value(agent.clone())
            .map_err(|e| ServeError::bad(format!("field 'agent': {e}")))?;
        cfg.provider = crate::llm::Provider::Openai;
        let emotion = opt_bool(body, "emotion")?.unwrap_or(self.settings.emotion);
        let seed = opt_u64(body, "seed")?.unwrap_or(self.settings.seed);
        let trial = u32::try_from(opt_u64(body, "trial")?.unwrap_or(0))
            .map_err(|_| ServeError::bad("field 'trial' is too large"))?;
        let model = crate::llm::build_role(crate::llm::Role::Agent, &cfg, &self.settings.cache)
            .map_err(|e| ServeError::bad(format!("field 'agent': {e}")))?;
        self.run_episode(task_id, model, emotion, seed, trial)
    }

    /// One whole episode of `task_id` with `agent` (an endpoint model) as the agent.
    pub fn run_episode(
        &self,
        task_id: &str,
        agent: RoleModel,
        emotion: bool,
        seed: u64,
        trial: u32,
    ) -> Result<Verdict, ServeError> {
        let RoleModel::Endpoint(model) = agent else {
            return Err(ServeError::bad(
                "the agent of an episode must be an endpoint model",
            ));
        };
        let (d, task) = self.find_task(task_id)?;
        let data = &self.domains[d];
        let split = task.task.split;
        let mut env = data.env(split).fork();
        let mut agent = crate::harness::endpoint::EndpointAgent {
            model,
            tools: Arc::clone(&data.tools),
            seed: crate::seed::derive_seed(seed, &["episode", task_id, &trial.to_string()]),
        };
        let mut user = batch::episode_user(
            &self.user_role,
            &task.task,
            &task.parts,
            trial,
            emotion,
            seed,
        );
        let episode = self.runtime.block_on(crate::harness::run_episode(
            env.as_mut(),
            data.policy(split),
            &mut agent,
            user.as_mut(),
            self.settings.max_steps,
        ));
        let record = batch::rollout_record(
            &task.task,
            trial,
            &episode,
            crate::harness::Agent::model_id(&agent),
            user.model_id(),
            emotion,
            None,
        );
        let breakdown = reward::score(&episode, &task.task.reference_hash, &task.task.outputs);
        Ok(Verdict { breakdown, record })
    }

    /// Run one MCP tool call on a session: an assistant message with the one call and its
    /// tool message join the transcript, as if the policy had sent it through `/step`.
    pub fn mcp_call(
        &self,
        id: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<(String, bool), ServeError> {
        let open = self.session(id)?;
        let mut o = Self::lock(&open)?;
        if let Some(e) = Self::over(id, &o) {
            return Err(e);
        }
        let arguments = serde_json::to_string(arguments).unwrap_or_default();
        if arguments.len() > MAX_ARGUMENTS {
            return Err(ServeError::new(
                400,
                "arguments_too_large",
                format!(
                    "the arguments of {name} are {} bytes; the limit is {MAX_ARGUMENTS}",
                    arguments.len()
                ),
            ));
        }
        o.mcp_calls += 1;
        let call = crate::llm::ToolCall {
            id: format!("mcp_{}", o.mcp_calls),
            name: name.to_string(),
            arguments,
        };
        let msg = ChatMessage {
            role: MessageRole::Assistant,
            content: None,
            tool_calls: vec![call],
            tool_call_id: None,
            name: None,
            reasoning_content: None,
        };
        self.turn(&mut o, msg, Usage::default());
        let text = o
            .session
            .messages()
            .iter()
            .rev()
            .find(|m| m.role == MessageRole::Tool)
            .and_then(|m| m.content.clone())
            .unwrap_or_default();
        let is_error = o.session.tool_errors().first().copied().unwrap_or(true);
        Ok((text, is_error))
    }
}

fn expect(method: &str, want: &str) -> Result<(), ServeError> {
    if method == want {
        Ok(())
    } else {
        Err(ServeError::new(
            405,
            "method_not_allowed",
            format!("this route takes {want}, not {method}"),
        ))
    }
}

/// Where `tracer serve` listens.
#[derive(Clone, Debug)]
pub struct Options {
    pub bind: std::net::IpAddr,
    pub port: u16,
}

/// Bind, print the address, and serve until killed. A non-loopback address needs a token.
pub fn run(server: Server, opts: &Options) -> Result<(), String> {
    if !opts.bind.is_loopback() && server.settings.token.is_none() {
        return Err(format!(
            "--bind {}: serving beyond this machine needs --token (or TRACER_SERVE_TOKEN)",
            opts.bind
        ));
    }
    let listener = std::net::TcpListener::bind(std::net::SocketAddr::new(opts.bind, opts.port))
        .map_err(|e| format!("--port {}: {e}", opts.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let tasks: BTreeMap<&str, usize> = server
        .domains
        .iter()
        .map(|d| (d.domain.name(), d.tasks.len()))
        .collect();
    let total: usize = tasks.values().sum();
    println!(
        "tracer serve: http://{}:{} ({total} tasks of {} domains; user: {}; at most {} sessions)",
        if opts.bind.is_unspecified() {
            "127.0.0.1".to_string()
        } else {
            opts.bind.to_string()
        },
        addr.port(),
        tasks.len(),
        server.user_model(),
        server.settings.max_sessions
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let server = Arc::new(server);
    crate::http::serve_with(
        listener,
        Arc::new(move |req: &Request| server.handle(req)),
        unreadable,
    );
    Ok(())
}
