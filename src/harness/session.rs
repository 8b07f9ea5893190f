//! One episode as a state machine: the user's turns are run by the session, the agent's
//! message is handed in from outside. [`super::run_episode`] drives it with an `Agent`
//! role; `tracer serve` drives it with messages a client sends over HTTP. Both go through
//! the same transitions, so an episode served with the same task, seed and assistant
//! messages is the episode `tracer run rollouts` records, byte for byte.

use super::{
    ChatMessage, Episode, GREETING, HarnessError, STOP, Termination, UNSATISFIED, Usage, User,
    has_marker,
};
use crate::domain::Environment;

/// An episode in progress. Steps count the user's and the agent's messages.
#[derive(Clone, Debug)]
pub struct Session {
    messages: Vec<ChatMessage>,
    terminating: Vec<String>,
    steps: usize,
    max_steps: usize,
    /// The agent text the user has yet to answer (the greeting at the start).
    pending_user: Option<String>,
    agent_usage: Usage,
    user_usage: Usage,
    end: Option<(Termination, Option<String>)>,
    /// Per tool call of the latest agent turn: whether the tool answered with an error.
    tool_errors: Vec<bool>,
}

impl Session {
    /// A new episode on `env` (the tools that end an episode are read from it): the policy
    /// as system prompt and the harness's greeting, the user to answer it.
    pub fn new(env: &dyn Environment, policy: &str, max_steps: usize) -> Session {
        Session {
            messages: vec![
                ChatMessage::system(policy),
                ChatMessage::assistant(GREETING),
            ],
            terminating: env
                .tool_specs()
                .iter()
                .filter(|s| s.terminates)
                .map(|s| s.name.to_string())
                .collect(),
            steps: 0,
            max_steps,
            pending_user: Some(GREETING.to_string()),
            agent_usage: Usage::default(),
            user_usage: Usage::default(),
            end: None,
            tool_errors: Vec::new(),
        }
    }

    /// The transcript so far (system prompt first).
    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }

    /// Why the episode ended, once it has.
    pub fn termination(&self) -> Option<Termination> {
        self.end.as_ref().map(|(t, _)| *t)
    }

    /// The error that ended the episode, if one did.
    pub fn error(&self) -> Option<&str> {
        self.end.as_ref().and_then(|(_, e)| e.as_deref())
    }

    /// Per tool call of the latest agent turn, in order: whether it failed (an unknown
    /// tool, arguments that are not JSON or break the tool's rules).
    pub fn tool_errors(&self) -> &[bool] {
        &self.tool_errors
    }

    /// Interaction steps taken (user and agent messages).
    pub fn steps(&self) -> usize {
        self.steps
    }

    fn end(&mut self, termination: Termination, error: Option<String>) {
        self.end.get_or_insert((termination, error));
    }

    /// End the episode here, as at the step limit (a served episode its client cuts).
    pub fn cut(&mut self) {
        self.end(Termination::MaxSteps, None);
    }

    /// Run the user's turns until it is the agent's turn or the episode is over.
    pub async fn advance(&mut self, user: &mut dyn User) {
        while self.end.is_none() {
            if self.steps >= self.max_steps {
                self.end(Termination::MaxSteps, None);
                return;
            }
            let Some(agent_text) = self.pending_user.take() else {
                return;
            };
            self.steps += 1;
            match user.reply(&agent_text).await {
                Ok((text, usage)) => {
                    self.user_usage += usage;
                    let unsatisfied = has_marker(&text, UNSATISFIED);
                    let stop = has_marker(&text, STOP);
                    self.messages.push(ChatMessage::user(text));
                    if unsatisfied {
                        self.end(Termination::UserUnsatisfied, None);
                    } else if stop {
                        self.end(Termination::UserStop, None);
                    }
                }
                Err(e) => {
                    let termination = match e {
                        HarnessError::ContextExceeded(_) => Termination::ContextExceeded,
                        _ => Termination::EndpointError,
                    };
                    self.end(termination, Some(e.to_string()));
                }
            }
        }
    }

    /// The agent's turn: its message (or the error that kept it from answering). Tool calls
    /// run in order on `env`, each answered by its own tool message; text goes to the user
    /// at the next [`Session::advance`]. A turn handed in after the end changes nothing.
    pub fn agent_turn(
        &mut self,
        env: &mut dyn Environment,
        reply: Result<(ChatMessage, Usage), HarnessError>,
    ) {
        if self.end.is_some() || self.pending_user.is_some() {
            return;
        }
        self.steps += 1;
        self.tool_errors.clear();
        let (reply, usage) = match reply {
            Ok(r) => r,
            Err(e) => {
                let termination = match e {
                    HarnessError::Endpoint(_) => Termination::EndpointError,
                    HarnessError::ContextExceeded(_) => Termination::ContextExceeded,
                    HarnessError::Agent(_) => Termination::AgentError,
                };
                self.end(termination, Some(e.to_string()));
                return;
            }
        };
        self.agent_usage += usage;
        let calls = reply.tool_calls.clone();
        let text = reply.content.clone().unwrap_or_default();
        self.messages.push(reply);
        if calls.is_empty() {
            self.pending_user = Some(text);
            return;
        }
        let mut transferred = false;
        for call in calls {
            let (output, failed) = match serde_json::from_str::<serde_json::Value>(&call.arguments)
            {
                Ok(args) => {
                    let out = env.invoke(&call.name, &args);
                    (out.text, out.is_error)
                }
                Err(e) => (
                    format!(
                        "Error: the arguments of {} are not valid JSON: {e}",
                        call.name
                    ),
                    true,
                ),
            };
            self.tool_errors.push(failed);
            self.messages.push(ChatMessage::tool(
                call.id.clone(),
                call.name.clone(),
                output,
            ));
            transferred |= self.terminating.contains(&call.name);
        }
        if transferred {
            self.end(Termination::AgentTransfer, None);
        }
    }

    /// The finished episode (its state hash read from `env` now).
    pub fn finish(self, env: &dyn Environment) -> Episode {
        let (termination, error) = self.end.unwrap_or((Termination::MaxSteps, None));
        Episode {
            messages: self.messages,
            termination,
            error,
            final_hash: env.state_hash().to_hex(),
            agent_usage: self.agent_usage,
            user_usage: self.user_usage,
        }
    }

    /// The episode as it stands, without consuming the session (a served episode is scored
    /// and exported while it may still be open).
    pub fn snapshot(&self, env: &dyn Environment) -> Episode {
        self.clone().finish(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::BoxFuture;

    /// A user who says its lines in order, then `###STOP###`.
    struct Lines(Vec<&'static str>);

    impl User for Lines {
        fn model_id(&self) -> String {
            "lines".into()
        }
        fn reply<'a>(
            &'a mut self,
            _agent_text: &'a str,
        ) -> BoxFuture<'a, Result<(String, Usage), HarnessError>> {
            let line = if self.0.is_empty() {
                STOP
            } else {
                self.0.remove(0)
            };
            Box::pin(async move { Ok((line.to_string(), Usage::default())) })
        }
    }

    fn env() -> Box<dyn Environment> {
        crate::domain::find("airline")
            .unwrap()
            .generate(3, crate::domain::Split::Eval)
    }

    fn block<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    fn call(name: &str, args: &str) -> ChatMessage {
        ChatMessage::assistant_tool_calls(
            None,
            vec![crate::llm::ToolCall {
                id: "c1".into(),
                name: name.into(),
                arguments: args.into(),
            }],
        )
    }

    #[test]
    fn turns_alternate_tools_answer_in_the_transcript_and_the_user_ends_it() {
        let mut env = env();
        let mut user = Lines(vec!["I need help.", "Thanks."]);
        let mut s = Session::new(env.as_ref(), "policy", 50);
        block(s.advance(&mut user));
        assert_eq!(
            s.messages().len(),
            3,
            "system, greeting, the user's opening"
        );
        assert_eq!(s.termination(), None);
        // Tool calls run on the environment; an unknown tool is answered, and marked.
        s.agent_turn(
            env.as_mut(),
            Ok((call("no_such_tool", "{}"), Usage::default())),
        );
        block(s.advance(&mut user));
        assert_eq!(s.tool_errors(), [true]);
        assert_eq!(
            s.messages().last().unwrap().role,
            crate::llm::MessageRole::Tool
        );
        s.agent_turn(
            env.as_mut(),
            Ok((call("think", "{\"thought\": \"x\"}"), Usage::default())),
        );
        assert_eq!(s.tool_errors(), [false]);
        // Text goes to the user, who answers; the second answer is the stop.
        s.agent_turn(
            env.as_mut(),
            Ok((ChatMessage::assistant("How?"), Usage::default())),
        );
        block(s.advance(&mut user));
        assert_eq!(
            s.messages().last().unwrap().content.as_deref(),
            Some("Thanks.")
        );
        s.agent_turn(
            env.as_mut(),
            Ok((ChatMessage::assistant("Done."), Usage::default())),
        );
        block(s.advance(&mut user));
        assert_eq!(s.termination(), Some(Termination::UserStop));
        let n = s.messages().len();
        s.agent_turn(
            env.as_mut(),
            Ok((ChatMessage::assistant("late"), Usage::default())),
        );
        assert_eq!(
            s.messages().len(),
            n,
            "a turn after the end changes nothing"
        );
        assert_eq!(s.steps(), 7, "three user and four agent messages");
    }

    #[test]
    fn the_step_limit_and_a_cut_end_the_episode_as_max_steps() {
        let mut env = env();
        let mut user = Lines(vec!["Hello.", "More."]);
        let mut s = Session::new(env.as_ref(), "policy", 2);
        block(s.advance(&mut user));
        s.agent_turn(
            env.as_mut(),
            Ok((ChatMessage::assistant("Hi?"), Usage::default())),
        );
        block(s.advance(&mut user));
        assert_eq!(s.termination(), Some(Termination::MaxSteps));
        assert_eq!(
            s.messages().len(),
            4,
            "the user never answered past the limit"
        );

        let mut s = Session::new(env.as_ref(), "policy", 50);
        block(s.advance(&mut user));
        s.cut();
        let ep = s.finish(env.as_ref());
        assert_eq!(ep.termination, Termination::MaxSteps);
        assert_eq!(ep.final_hash, env.state_hash().to_hex());
    }
}
