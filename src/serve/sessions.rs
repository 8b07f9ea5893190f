//! The sessions of a [`Server`]: open one on a task, hand it the policy's messages (over
//! `/step` or MCP), read its state, score it, close idle ones; and whole episodes against a
//! caller's endpoint.

use super::wire::{Verdict, check_assistant, field, opt_bool, opt_u64, str_field, usage_field};
use super::{MAX_ARGUMENTS, Open, Play, REMEMBERED_EXPIRED, ServeError, Server};
use crate::artifact::TaskRecord;
use crate::harness::session::Session;
use crate::harness::{ChatMessage, MessageRole, Usage, batch};
use crate::llm::RoleModel;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
        let id = self.new_id();
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
        });
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
        };
        let mut sessions = self.sessions.lock().map_err(|_| {
            ServeError::new(500, "internal", "the session table's lock is poisoned")
        })?;
        // Checked again under the lock: concurrent resets never pass the cap together.
        if sessions.len() >= self.settings.max_sessions {
            return Err(self.full());
        }
        sessions.insert(id, Arc::new(Mutex::new(open)));
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
        // The reward only: the record is built when the client asks for it (`/verify`).
        let reward = done.map(|_| {
            let task = &o.task;
            let episode = o.session.snapshot(o.env.as_ref());
            crate::harness::reward::score(&episode, &task.reference_hash, &task.outputs).reward
        });
        json!({
            "observation": { "messages": added, "tool_errors": o.session.tool_errors() },
            "reward": reward,
            "done": done.is_some(),
            "termination": done.map(|t| t.as_str()),
            "steps": o.session.steps(),
        })
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
    /// endpoint (`agent`: a `[roles.agent]` table as JSON, `base_url` and `model` at least).
    pub fn episode(&self, body: &Value) -> Result<Verdict, ServeError> {
        let task_id = str_field(body, "task_id")?;
        let agent =
            field(body, "agent").ok_or_else(|| ServeError::bad("field 'agent' is missing"))?;
        let mut cfg: crate::llm::RoleConfig = serde_json::from_value(agent.clone())
            .map_err(|e| ServeError::bad(format!("field 'agent': {e}")))?;
        cfg.provider = crate::llm::Provider::Openai;
        let play = self.play(body)?;
        let model = crate::llm::build_role(crate::llm::Role::Agent, &cfg, &self.settings.cache)
            .map_err(|e| ServeError::bad(format!("field 'agent': {e}")))?;
        self.run_episode(task_id, model, &play)
    }

    /// One whole episode of `task_id` with `agent` (an endpoint model) as the agent.
    pub fn run_episode(
        &self,
        task_id: &str,
        agent: RoleModel,
        play: &Play,
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
        let episode = self.runtime.block_on(crate::harness::run_episode(
            env.as_mut(),
            data.policy(split),
            &mut agent,
            user.as_mut(),
            self.settings.max_steps,
        ));
        Ok(Verdict::of(
            &task,
            play,
            &episode,
            crate::harness::Agent::model_id(&agent),
            user.model_id(),
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
