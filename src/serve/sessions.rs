//! The sessions of a [`Server`]: open one on a task, hand it the policy's messages (over
//! `/step` or MCP), read its state, score it, close idle ones; and whole episodes against a
//! caller's endpoint.

use super::wire::{
    Verdict, check_assistant, field, message_bytes, opt_bool, opt_u64, str_field, usage_field,
};
use super::{MAX_ARGUMENTS, MAX_TRANSCRIPT, Open, Play, REMEMBERED_EXPIRED, ServeError, Server};
use crate::artifact::TaskRecord;
use crate::harness::session::Session;
use crate::harness::{ChatMessage, MessageRole, Usage, batch};
use crate::http::Request;
use crate::llm::{LlmError, RoleConfig, RoleModel};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The name under which `/episode` hands its client's own API key to the endpoint client
/// (it is looked up in the request, never in the environment).
const CLIENT_KEY: &str = "agent.api_key";

/// A running whole episode's place under [`super::Settings::max_episodes`].
struct EpisodePlace<'a>(&'a AtomicUsize);

impl Drop for EpisodePlace<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The agent of an `/episode` request: its role table, and the key the client sent.
fn client_agent(body: &Value) -> Result<(RoleConfig, Option<String>), ServeError> {
    let Some(Value::Object(agent)) = field(body, "agent") else {
        return Err(ServeError::bad(
            "field 'agent' must be an object (a [roles.agent] table as JSON)",
        ));
    };
    let mut agent = agent.clone();
    if agent.contains_key("api_key_env") {
        // Refused whatever the name, set or not: the answer tells nothing of the server's
        // environment.
        return Err(ServeError::new(
            403,
            "key_env_refused",
            "field 'agent.api_key_env': a client cannot have the server read its environment; send the endpoint's key itself as 'agent.api_key' (it goes to the agent's base URL only)",
        ));
    }
    if agent.contains_key("cache_namespace") {
        return Err(ServeError::bad(
            "field 'agent.cache_namespace': /episode answers are not cached, so there is no namespace to choose; leave it out",
        ));
    }
    let key = match agent.remove("api_key") {
        None | Some(Value::Null) => None,
        Some(Value::String(k)) if !k.trim().is_empty() => Some(k),
        Some(_) => {
            return Err(ServeError::bad(
                "field 'agent.api_key' must be a non-empty string",
            ));
        }
    };
    let mut cfg: RoleConfig = serde_json::from_value(Value::Object(agent))
        .map_err(|e| ServeError::bad(format!("field 'agent': {e}")))?;
    cfg.provider = crate::llm::Provider::Openai;
    cfg.api_key_env = key.as_ref().map(|_| CLIENT_KEY.to_string());
    Ok((cfg, key))
}

/// Why an `/episode` agent could not be set up: the client's config (400), or the server's
/// side (5xx).
fn agent_error(e: LlmError) -> ServeError {
    match e {
        LlmError::Config { .. } => ServeError::bad(format!("field 'agent': {e}")),
        LlmError::InvalidApiKey { reason, .. } => {
            ServeError::bad(format!("field 'agent.api_key': {reason}"))
        }
        LlmError::Cache { .. } => ServeError::new(503, "cache_unavailable", e.to_string()),
        other => ServeError::new(
            500,
            "internal",
            format!("the agent could not be set up: {other}"),
        ),
    }
}

/// Resolves once the client of `req` has closed its connection.
async fn client_gone(req: &Request) {
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if req.client_gone() {
            return;
        }
    }
}

impl Server {
    pub(super) fn missing(&self, id: &str) -> ServeError {
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

    fn full(&self) -> ServeError {
        ServeError::new(
            429,
            "too_many_sessions",
            format!(
                "{} sessions are open, the most this server keeps; POST /close the finished ones (idle ones close after {} s)",
                self.settings.max_sessions,
                self.settings.idle.as_secs()
            ),
        )
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

    /// The episode fields of a request: `emotion`, `seed`, `trial` (the server's defaults).
    fn play(&self, body: &Value) -> Result<Play, ServeError> {
        Ok(Play {
            emotion: opt_bool(body, "emotion")?.unwrap_or(self.settings.emotion),
            seed: opt_u64(body, "seed")?.unwrap_or(self.settings.seed),
            trial: u32::try_from(opt_u64(body, "trial")?.unwrap_or(0))
                .map_err(|_| ServeError::bad("field 'trial' is too large"))?,
        })
    }

    /// The user simulator of one episode.
    fn user(&self, task: &TaskRecord, play: &Play) -> Box<dyn crate::harness::User> {
        batch::episode_user(
            &self.user_role,
            &self.user_prompt,
            task,
            play.trial,
            play.emotion,
            play.seed,
        )
    }

    fn new_id(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mix = std::hash::BuildHasher::hash_one(
            &std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default(),
            (self.salt, n),
        );
        format!("s{n}-{:012x}", mix & 0xffff_ffff_ffff)
    }

    /// A new session id (unguessable: salted).
    pub fn fresh_id(&self) -> String {
        self.new_id()
    }

    /// `POST /reset`: open an episode of a task.
    pub fn reset(&self, body: &Value) -> Result<Value, ServeError> {
        self.reset_as(body, None)
    }

    /// Open an episode under the id `chosen` (an ORS client's session id; refused when in
    /// use), or a new one.
    pub fn reset_as(&self, body: &Value, chosen: Option<String>) -> Result<Value, ServeError> {
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
        let play = self.play(body)?;
        let agent_model = match field(body, "agent_model") {
            None => "client".to_string(),
            Some(_) => str_field(body, "agent_model")?.to_string(),
        };
        // Idle sessions are looked for at most once a second, and whenever the table is full.
        let due = self.last_purge.lock().is_ok_and(|mut last| {
            let due = last.elapsed() >= std::time::Duration::from_secs(1);
            if due {
                *last = Instant::now();
            }
            due
        });
        if due || self.open_sessions() >= self.settings.max_sessions {
            self.purge_idle();
        }
        if self.open_sessions() >= self.settings.max_sessions {
            return Err(self.full());
        }
        let split = task.split;
        let base = data.env(split);
        let env = base.fork();
        let mut user = self.user(&task, &play);
        let mut session = Session::new(env.as_ref(), data.policy(split), self.settings.max_steps);
        self.runtime.block_on(session.advance(user.as_mut()));
        let id = chosen.unwrap_or_else(|| self.new_id());
        let failure = match session.termination() {
            None => Value::Null,
            Some(_) => {
                let episode = session.snapshot(env.as_ref());
                let b =
                    crate::harness::reward::score(&episode, &task.reference_hash, &task.outputs);
                super::wire::failure(&episode, &b, &user.frictions())
            }
        };
        let reply = json!({
            "session": id,
            "observation": {
                "task_id": task.task_id,
                "domain": data.domain.name(),
                "split": split.as_str(),
                "emotion": play.emotion,
                "policy": data.policy(split).as_str(),
                "tools": &*data.tools,
                "messages": session.messages(),
            },
            "reward": Value::Null,
            "done": session.termination().is_some(),
            "termination": session.termination().map(|t| t.as_str()),
            "failure": failure,
        });
        let bytes = session.messages().iter().map(message_bytes).sum();
        let open = Open {
            session,
            env,
            user_model: user.model_id(),
            user,
            agent_model,
            domain: d,
            task,
            play,
            last_used: Instant::now(),
            mcp_calls: 0,
            bytes,
        };
        let mut sessions = self.sessions.lock().map_err(|_| {
            ServeError::new(500, "internal", "the session table's lock is poisoned")
        })?;
        // Checked again under the lock: concurrent resets never pass the cap together.
        if sessions.len() >= self.settings.max_sessions {
            return Err(self.full());
        }
        if sessions.contains_key(&id) {
            return Err(ServeError::new(
                409,
                "session_exists",
                format!("session '{id}' is already open"),
            ));
        }
        sessions.insert(id, Arc::new(Mutex::new(open)));
        Ok(reply)
    }

    /// Close session `id` (`POST /close`, a WebSocket's end, `openenv/session/close`).
    pub fn close_session(&self, id: &str) -> Result<(), ServeError> {
        let open = self
            .sessions
            .lock()
            .map(|mut s| s.remove(id))
            .ok()
            .flatten();
        match open {
            Some(_) => Ok(()),
            None => Err(self.missing(id)),
        }
    }

    /// The id of the served task at `index` (counted over every domain's tasks in turn,
    /// modulo their number): the task of a reset that names none.
    pub fn task_at(&self, index: u64) -> Option<&str> {
        let total: usize = self.domains.iter().map(|d| d.tasks.len()).sum();
        if total == 0 {
            return None;
        }
        let mut i = (index % total as u64) as usize;
        for d in &self.domains {
            if i < d.tasks.len() {
                return Some(&d.tasks[i].task_id);
            }
            i -= d.tasks.len();
        }
        None
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
        o.bytes = o.session.messages().iter().map(message_bytes).sum();
        let added = &o.session.messages()[(before + 1).min(o.session.messages().len())..];
        let done = o.session.termination();
        // The reward only: the record is built when the client asks for it (`/verify`). An
        // endpoint's failure is no reward (null) and says so.
        let (reward, failure) = match done {
            None => (None, Value::Null),
            Some(_) => {
                let task = &o.task;
                let episode = o.session.snapshot(o.env.as_ref());
                let b =
                    crate::harness::reward::score(&episode, &task.reference_hash, &task.outputs);
                let failure = super::wire::failure(&episode, &b, &o.user.frictions());
                let reward = (!super::wire::infrastructure_failed(&failure)).then_some(b.reward);
                (reward, failure)
            }
        };
        json!({
            "observation": { "messages": added, "tool_errors": o.session.tool_errors() },
            "reward": reward,
            "done": done.is_some(),
            "termination": done.map(|t| t.as_str()),
            "failure": failure,
            "steps": o.session.steps(),
        })
    }

    /// Refuse a message of `adding` bytes that would take the transcript past
    /// [`MAX_TRANSCRIPT`] (nothing runs).
    fn room(id: &str, o: &Open, adding: usize) -> Result<(), ServeError> {
        if o.bytes + adding <= MAX_TRANSCRIPT {
            return Ok(());
        }
        Err(ServeError::new(
            413,
            "transcript_too_large",
            format!(
                "the transcript of session '{id}' holds {} bytes and this message {adding} more; the limit is {MAX_TRANSCRIPT}: POST /verify with \"end\": true to score it",
                o.bytes
            ),
        ))
    }

    /// The domain of an open session (what its MCP tools are).
    pub fn session_domain(
        &self,
        id: &str,
    ) -> Result<&'static dyn crate::domain::Domain, ServeError> {
        let open = self.session(id)?;
        let o = Self::lock(&open)?;
        Ok(self.domains[o.domain].domain)
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
        Self::room(id, &o, message_bytes(&msg))?;
        Ok(self.turn(&mut o, msg, usage))
    }

    /// `GET /state`.
    pub fn state(&self, id: &str) -> Result<Value, ServeError> {
        let open = self.session(id)?;
        let o = Self::lock(&open)?;
        Ok(json!({
            "session": id,
            "task_id": o.task.task_id,
            "domain": self.domains[o.domain].domain.name(),
            "emotion": o.play.emotion,
            "seed": o.play.seed,
            "trial": o.play.trial,
            "steps": o.session.steps(),
            "done": o.session.termination().is_some(),
            "termination": o.session.termination().map(|t| t.as_str()),
            "state_hash": o.env.state_hash().to_hex(),
            "messages": o.session.messages(),
        }))
    }

    fn score(&self, o: &Open) -> Verdict {
        let episode = o.session.snapshot(o.env.as_ref());
        Verdict::of(
            &o.task,
            &o.play,
            &episode,
            o.agent_model.clone(),
            o.user_model.clone(),
            &o.user.frictions(),
        )
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
    /// endpoint (`agent`: a `[roles.agent]` table as JSON, `base_url` and `model` at least;
    /// `api_key`: the endpoint's key). The answers are kept for this call only, and the
    /// episode stops when its client goes.
    pub fn episode(&self, body: &Value, req: &Request) -> Result<Verdict, ServeError> {
        let task_id = str_field(body, "task_id")?;
        let (cfg, key) = client_agent(body)?;
        let play = self.play(body)?;
        self.find_task(task_id)?;
        let _place = self.episode_place()?;
        let env = move |name: &str| -> Option<String> {
            if name == CLIENT_KEY {
                return key.clone();
            }
            // The operator's CA bundle for HTTPS endpoints; nothing else of the
            // environment.
            #[cfg(feature = "tls")]
            if name == crate::llm::tls::CA_BUNDLE_VAR {
                return std::env::var(name).ok();
            }
            None
        };
        let model = crate::llm::build_role_uncached(crate::llm::Role::Agent, &cfg, &env)
            .map_err(agent_error)?;
        self.run_episode(task_id, model, &play, client_gone(req))
    }

    /// A place for one more whole episode, or 503 when [`super::Settings::max_episodes`]
    /// run.
    fn episode_place(&self) -> Result<EpisodePlace<'_>, ServeError> {
        let most = self.settings.max_episodes;
        if self.episodes.fetch_add(1, Ordering::AcqRel) >= most {
            self.episodes.fetch_sub(1, Ordering::AcqRel);
            return Err(ServeError::new(
                503,
                "too_many_episodes",
                format!(
                    "{most} episodes are running, the most this server runs at once; retry when one ends"
                ),
            ));
        }
        Ok(EpisodePlace(&self.episodes))
    }

    /// One whole episode of `task_id` with `agent` (an endpoint model) as the agent.
    /// It stops (499 `client_closed`) when `stop` resolves first.
    pub fn run_episode(
        &self,
        task_id: &str,
        agent: RoleModel,
        play: &Play,
        stop: impl std::future::Future<Output = ()>,
    ) -> Result<Verdict, ServeError> {
        let RoleModel::Endpoint(model) = agent else {
            return Err(ServeError::bad(
                "the agent of an episode must be an endpoint model",
            ));
        };
        let (d, task) = self.find_task(task_id)?;
        let data = &self.domains[d];
        let split = task.split;
        let mut env = data.env(split).fork();
        let mut agent = crate::harness::endpoint::EndpointAgent {
            model,
            tools: Arc::clone(&data.tools),
            seed: crate::seed::derive_seed(
                play.seed,
                &["episode", task_id, &play.trial.to_string()],
            ),
        };
        let mut user = self.user(&task, play);
        let episode = self.runtime.block_on(async {
            tokio::select! {
                episode = crate::harness::run_episode(
                    env.as_mut(),
                    data.policy(split),
                    &mut agent,
                    user.as_mut(),
                    self.settings.max_steps,
                ) => Some(episode),
                () = stop => None,
            }
        });
        let Some(episode) = episode else {
            return Err(ServeError::new(
                499,
                "client_closed",
                "the client closed its connection; the episode was stopped",
            ));
        };
        Ok(Verdict::of(
            &task,
            play,
            &episode,
            crate::harness::Agent::model_id(&agent),
            user.model_id(),
            &user.frictions(),
        ))
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
        Self::room(id, &o, name.len() + arguments.len())?;
        o.mcp_calls += 1;
        let call = crate::llm::ToolCall {
            id: format!("mcp_{}", o.mcp_calls),
            name: name.to_string(),
            arguments,
        };
        self.turn(
            &mut o,
            ChatMessage::assistant_tool_calls(None, vec![call]),
            Usage::default(),
        );
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
