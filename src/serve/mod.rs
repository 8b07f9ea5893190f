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
//! Security model (docs/serve.md): a client is not trusted with the server's secrets,
//! memory or files. It cannot make the server read an environment variable (`/episode`'s
//! agent brings its own key), write the response cache (`/episode` answers stay in memory
//! for the call), or grow a session or an answer past the limits below; a web page cannot
//! reach the server (JSON bodies only, `Origin` and `Host` checked); the HTTP server caps
//! connections and deadlines every request (`crate::http`).
//!
//! Architecture invariant: nothing a client sends names a file; the server reads the run's
//! artifacts once, at start, and writes nothing but its endpoint user's response cache.

pub mod mcp;
pub mod openenv;
pub mod ors;
mod sessions;
pub mod wire;

pub use wire::{ServeError, Verdict, error_response};
use wire::{json_body, str_field, task_json, task_summary, unreadable};

use crate::artifact::TaskRecord;
use crate::domain::{Domain, Environment};
use crate::harness::User;
use crate::harness::session::Session;
use crate::http::{Request, Response};
use crate::llm::RoleModel;
use crate::split::Split;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest arguments text of one tool call (a request body may be up to
/// [`crate::http::MAX_BODY`]).
pub const MAX_ARGUMENTS: usize = 64 * 1024;
/// Tasks a `GET /tasks` page lists at most.
pub const MAX_PAGE: usize = 1000;
/// Tool calls in one assistant message at most (a model's parallel calls are a handful).
pub const MAX_TOOL_CALLS: usize = 32;
/// Bytes of text (contents, tool calls, thinking) in one session's transcript at most: a
/// step that would pass it is refused, so a session holds at most this plus one step's
/// tool results. Episodes of the ten domains stay under 64 KiB.
pub const MAX_TRANSCRIPT: usize = 2 << 20;

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
    /// A secret every request must carry as `Authorization: Bearer <token>` (checked by
    /// [`check_token`]).
    pub token: Option<String>,
    /// Whole episodes (`POST /episode`) running at once at most.
    pub max_episodes: usize,
    /// The HTTP server's connection cap and deadlines.
    pub http: crate::http::Limits,
    /// Host names the server answers to besides loopback ones and IP addresses
    /// (`--allow-host`; `*`: any).
    pub hosts: Vec<String>,
}

/// Shortest token `--token` takes.
pub const MIN_TOKEN: usize = 16;

/// A token as given, trimmed; `Err` says why it cannot guard a server (empty, short, or
/// not sendable in a header).
pub fn check_token(token: &str) -> Result<String, String> {
    let t = token.trim();
    if t.is_empty() {
        return Err("is empty (or only spaces)".to_string());
    }
    if !t.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(
            "may hold only printable ASCII without spaces (it travels in an HTTP header)"
                .to_string(),
        );
    }
    if t.len() < MIN_TOKEN {
        return Err(format!(
            "is {} characters; use at least {MIN_TOKEN} (e.g. `openssl rand -hex 16`)",
            t.len()
        ));
    }
    Ok(t.to_string())
}

/// The credentials of an `Authorization: Bearer <token>` header (the scheme in any case,
/// as RFC 9110 has it).
fn bearer(req: &Request) -> Option<&str> {
    let (scheme, credentials) = req
        .header("authorization")?
        .trim()
        .split_once([' ', '\t'])?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// One domain's tasks, databases, policy and tools, read at start.
pub struct DomainData {
    pub domain: &'static dyn Domain,
    pub tasks: Vec<Arc<TaskRecord>>,
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
        let tasks = tasks.into_iter().map(Arc::new).collect();
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

/// What decides an episode of a task besides the agent's messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Play {
    /// The emotion-conditioned user (false: the no-emotion variant).
    pub emotion: bool,
    /// The run seed the user's choices (and an endpoint agent's samples) derive from.
    pub seed: u64,
    pub trial: u32,
}

/// An open episode.
pub struct Open {
    pub session: Session,
    pub env: Box<dyn Environment>,
    user: Box<dyn User>,
    user_model: String,
    agent_model: String,
    pub domain: usize,
    pub task: Arc<TaskRecord>,
    play: Play,
    last_used: Instant,
    /// Tool calls made over MCP (they get ids of their own).
    mcp_calls: usize,
    /// Bytes of text in the transcript (see [`MAX_TRANSCRIPT`]).
    bytes: usize,
}

/// The server: the served domains and the open sessions.
pub struct Server {
    pub domains: Vec<DomainData>,
    /// Task id -> (domain index, task index).
    by_task: HashMap<String, (usize, usize)>,
    user_role: RoleModel,
    /// The endpoint user's rules (`prompts/user.md`; the shipped text until
    /// [`Server::with_user_prompt`]).
    user_prompt: Arc<crate::llm::Prompt>,
    pub settings: Settings,
    sessions: Mutex<HashMap<String, Arc<Mutex<Open>>>>,
    /// Ids of sessions closed for idleness (bounded), so a late step hears why.
    expired: Mutex<HashSet<String>>,
    /// When idle sessions were last looked for.
    last_purge: Mutex<Instant>,
    next: AtomicU64,
    /// Whole episodes running now (see [`Settings::max_episodes`]).
    episodes: AtomicUsize,
    salt: u64,
    runtime: tokio::runtime::Runtime,
}

/// How many expired ids are remembered for their error message.
const REMEMBERED_EXPIRED: usize = 65_536;

impl Server {
    pub fn new(
        domains: Vec<DomainData>,
        user_role: RoleModel,
        settings: Settings,
    ) -> Result<Server, String> {
        let mut by_task = HashMap::new();
        for (di, d) in domains.iter().enumerate() {
            for (ti, t) in d.tasks.iter().enumerate() {
                if let Some((other, _)) = by_task.insert(t.task_id.clone(), (di, ti)) {
                    return Err(format!(
                        "task id '{}' is in both {} and {}",
                        t.task_id,
                        domains[other].domain.name(),
                        d.domain.name()
                    ));
                }
            }
        }
        let salt =
            std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0u8);
        let user_prompt = crate::llm::prompt::builtin("user").ok_or("no shipped user prompt")?;
        Ok(Server {
            domains,
            by_task,
            user_role,
            user_prompt: Arc::new(user_prompt),
            settings,
            sessions: Mutex::new(HashMap::new()),
            expired: Mutex::new(HashSet::new()),
            last_purge: Mutex::new(Instant::now()),
            next: AtomicU64::new(1),
            episodes: AtomicUsize::new(0),
            salt,
            runtime: crate::llm::runtime()?,
        })
    }

    /// The rules an endpoint user simulator is given (the project's `prompts/user.md`).
    pub fn with_user_prompt(mut self, prompt: crate::llm::Prompt) -> Server {
        self.user_prompt = Arc::new(prompt);
        self
    }

    /// The user simulator's model id.
    pub fn user_model(&self) -> String {
        self.user_role.model_id()
    }

    /// Open sessions now.
    pub fn open_sessions(&self) -> usize {
        self.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    pub fn find_task(&self, task_id: &str) -> Result<(usize, Arc<TaskRecord>), ServeError> {
        let &(d, t) = self.by_task.get(task_id).ok_or_else(|| {
            ServeError::new(
                404,
                "unknown_task",
                format!("no task '{task_id}' is served"),
            )
        })?;
        Ok((d, Arc::clone(&self.domains[d].tasks[t])))
    }

    /// Answer one request, a WebSocket handshake on `/ws` included (its session then runs
    /// on this connection; see [`openenv`]).
    pub fn handle_shared(self: &Arc<Self>, req: &Request) -> Response {
        if req.path.trim_end_matches('/') != "/ws" {
            return self.handle(req);
        }
        if let Some(refused) = self.gate(req) {
            return refused;
        }
        if req.method != "GET" || !crate::http::ws::is_upgrade(req) {
            return error_response(
                400,
                "not_websocket",
                "/ws is a WebSocket: send GET with 'Upgrade: websocket' (OpenEnv's EnvClient does)",
            );
        }
        let server = Arc::clone(self);
        match crate::http::ws::accept(
            req,
            Box::new(move |socket| openenv::websocket(server, socket)),
        ) {
            Ok(r) => r,
            Err(why) => error_response(400, "bad_handshake", &why),
        }
    }

    /// Answer one request; every refusal is a JSON error.
    pub fn handle(&self, req: &Request) -> Response {
        if let Some(refused) = self.gate(req) {
            return refused;
        }
        match self.route(req) {
            Ok(r) => r,
            Err(e) => e.response(),
        }
    }

    /// The refusal of a request that has no token, comes from a web page, or posts no JSON.
    fn gate(&self, req: &Request) -> Option<Response> {
        if let Some(token) = &self.settings.token {
            let given = bearer(req).unwrap_or("");
            if !crate::http::constant_time_eq(given.as_bytes(), token.as_bytes()) {
                return Some(error_response(
                    401,
                    "unauthorized",
                    "this server needs 'Authorization: Bearer <token>'",
                ));
            }
        }
        // A web page's request: a cross-origin one carries its page's Origin, and the
        // only bodies a page can post without the server's consent are form or text ones.
        if req.cross_origin() {
            return Some(error_response(
                403,
                "cross_origin",
                &format!(
                    "requests from web pages ({}) are refused",
                    req.header("origin").unwrap_or("")
                ),
            ));
        }
        let bodiless = req.body.is_empty() && ors::bodiless(req.path.trim_end_matches('/'));
        if req.method == "POST"
            && !bodiless
            && req.media_type().as_deref() != Some("application/json")
        {
            return Some(error_response(
                415,
                "unsupported_media_type",
                &format!(
                    "a POST body must be JSON sent with 'Content-Type: application/json', not '{}'",
                    req.header("content-type").unwrap_or("(none)")
                ),
            ));
        }
        None
    }

    fn route(&self, req: &Request) -> Result<Response, ServeError> {
        let path = req.path.trim_end_matches('/');
        let method = req.method.as_str();
        if ors::claims(self, path) {
            return ors::handle(self, req);
        }
        if let Some(rest) = path.strip_prefix("/mcp/") {
            return Ok(mcp::handle(self, rest, req));
        }
        if let Some(id) = path.strip_prefix("/tasks/") {
            expect(method, "GET")?;
            let (_, t) = self.find_task(id)?;
            return Ok(Response::json(200, &task_json(&t)));
        }
        let ok = |v: Value| Ok(Response::json(200, &v));
        match path {
            "/health" => {
                expect(method, "GET")?;
                ok(json!({
                    "status": "healthy",
                    "sessions": self.open_sessions(),
                    "max_sessions": self.settings.max_sessions,
                    "episodes": self.episodes.load(std::sync::atomic::Ordering::Relaxed),
                    "limits": self.limits(),
                    "domains": self.domains.iter().map(|d| d.domain.name()).collect::<Vec<_>>(),
                    "user_model": self.user_model(),
                }))
            }
            "/tasks" => {
                expect(method, "GET")?;
                ok(self.list_tasks(req)?)
            }
            "/metadata" => {
                expect(method, "GET")?;
                ok(openenv::metadata(self))
            }
            "/schema" => {
                expect(method, "GET")?;
                ok(openenv::schema())
            }
            "/openapi.json" => {
                expect(method, "GET")?;
                ok(openenv::openapi())
            }
            "/mcp" => Ok(mcp::handle_global(self, req)),
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
                self.close_session(id)?;
                ok(json!({ "session": id, "closed": true }))
            }
            "/episode" => {
                expect(method, "POST")?;
                ok(self.episode(&json_body(req)?, req)?.json())
            }
            _ => Err(ServeError::new(
                404,
                "not_found",
                format!(
                    "no route {} {}; see GET /health, /metadata, /schema, /openapi.json, /tasks, /tasks/<id>, /state, /ws (WebSocket); POST /reset, /step, /verify, /close, /episode, /mcp, /mcp/<session>",
                    req.method, req.path
                ),
            )),
        }
    }

    /// What the server takes at most (`GET /health`).
    fn limits(&self) -> Value {
        json!({
            "max_sessions": self.settings.max_sessions,
            "max_episodes": self.settings.max_episodes,
            "max_connections": self.settings.http.max_connections,
            "request_timeout_secs": self.settings.http.request_timeout.as_secs_f64(),
            "idle_secs": self.settings.idle.as_secs(),
            "max_body_bytes": crate::http::MAX_BODY,
            "max_arguments_bytes": MAX_ARGUMENTS,
            "max_tool_calls": MAX_TOOL_CALLS,
            "max_transcript_bytes": MAX_TRANSCRIPT,
            "max_mcp_batch": mcp::MAX_BATCH,
        })
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
            .flat_map(|d| d.tasks.iter().map(|t| t.as_ref()))
            .filter(|t| split.is_none_or(|s| t.split == s))
            .filter(|t| family.is_none_or(|f| t.emotion_family.as_deref() == Some(f)))
            .collect();
        Ok(json!({
            "total": matching.len(),
            "offset": offset,
            "tasks": matching.iter().skip(offset).take(limit).map(|t| task_summary(t)).collect::<Vec<_>>(),
        }))
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
    if let Some(t) = &server.settings.token {
        check_token(t).map_err(|why| format!("--token: {why}"))?;
    }
    if !opts.bind.is_loopback() && server.settings.token.is_none() {
        return Err(format!(
            "--bind {}: serving beyond this machine needs --token (or TRACER_SERVE_TOKEN)",
            opts.bind
        ));
    }
    let listener = crate::http::bind(std::net::SocketAddr::new(opts.bind, opts.port))
        .map_err(|e| format!("--port {}: {e}", opts.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let tasks: BTreeMap<&str, usize> = server
        .domains
        .iter()
        .map(|d| (d.domain.name(), d.tasks.len()))
        .collect();
    let total: usize = tasks.values().sum();
    println!(
        "tracer serve: http://{}:{} ({total} tasks of {} domains; user: {}; at most {} sessions, {} connections)",
        if opts.bind.is_unspecified() {
            "127.0.0.1".to_string()
        } else {
            opts.bind.to_string()
        },
        addr.port(),
        tasks.len(),
        server.user_model(),
        server.settings.max_sessions,
        server.settings.http.max_connections
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let server = Arc::new(server);
    let config = crate::http::Config {
        limits: server.settings.http.clone(),
        hosts: crate::http::Hosts::for_bind(opts.bind, &server.settings.hosts),
        refusal: unreadable,
    };
    crate::http::serve_with(
        listener,
        Arc::new(move |req: &Request| server.handle_shared(req)),
        config,
    );
    Ok(())
}
