//! Harness benchmarks: real episodes (`run_episode` with `EndpointAgent` / `EndpointUser`,
//! real HTTP through the LLM layer, a fresh response cache file per run so nothing is
//! answered from cache) against the scripted loopback server of [`super::server`].
//!
//! Measured:
//! - throughput at zero latency, concurrency 1 / 32 / 256: episodes/s and CPU seconds per
//!   episode of this process (utime + stime from `/proc/self/stat`), the server's CPU per
//!   episode beside it (it runs in a child process, `/proc/<pid>/stat`);
//! - with 200 ms per call, C up to 1,024 (and once with the cache on disk): achieved
//!   episodes/s against the ideal C / (calls x latency);
//! - memory per in-flight episode: peak RSS (`VmHWM` after resetting it through
//!   `/proc/self/clear_refs`) minus RSS before the run, with all episodes in flight at once
//!   (the latency makes them overlap), divided by their count; and the slope between two
//!   counts, which cancels fixed costs (connection pools, runtime);
//! - the memory of a forked database: RSS growth per held fork, empty and after one write.
//!
//! Every role's endpoint `concurrency` is set to the run's concurrency so the per-endpoint
//! limiter (default 8) is not what is measured; retries are off so a failure shows.
//!
//! The runs are here; the server's process and the `/proc` readings are `process.rs`, the
//! report's section and the memory of forks `report.rs`.

mod process;
mod report;

use super::server::{Script, model_for};
use crate::domain::{self, Environment, Split};
use crate::harness::MessageRole;
use crate::harness::endpoint::{EndpointAgent, EndpointUser};
use crate::harness::{Termination, run_episode};
use crate::llm::{ChatModel, Provider, Role, RoleConfig, RoleModel, build_role};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use process::{Server, reset_peak_rss, status_number};
pub use process::{process_cpu, status_bytes};
pub use report::run;

/// User turns per benchmark episode (the last one says `###STOP###`).
pub const USER_TURNS: usize = 3;

/// One load run.
#[derive(Clone, Debug)]
struct Spec {
    concurrency: usize,
    latency: Duration,
    /// Episodes to run (fewer if the window ends first).
    episodes: usize,
    /// Steady-state runs: time before counting starts.
    warmup: Option<Duration>,
    /// The counted window (after `warmup`); `None`: the whole run counts.
    max_wall: Option<Duration>,
    /// A window by count instead: (episodes finished before it opens, episodes it counts),
    /// from the moment the first number is reached to the moment the sum is.
    counted: Option<(usize, usize)>,
    cache_root: PathBuf,
}

/// Counters at one instant of a run.
struct Mark {
    at: Instant,
    cpu: Option<f64>,
    server_cpu: Option<f64>,
    episodes: usize,
    calls: usize,
}

#[derive(Clone, Debug, Default)]
struct Load {
    /// Episodes finished in the counted window.
    episodes: usize,
    /// Episodes run in all (warm-up and drain included).
    total: usize,
    errors: usize,
    first_error: Option<String>,
    calls: usize,
    wall: f64,
    cpu: f64,
    server_cpu: Option<f64>,
    rss_before: Option<u64>,
    rss_peak: Option<u64>,
    /// Threads of this process right after the run (idle blocking-pool threads linger 10 s).
    threads: Option<u64>,
    cache_hits: u64,
}

impl Load {
    fn per_sec(&self) -> f64 {
        self.episodes as f64 / self.wall.max(1e-9)
    }
    fn calls_per_episode(&self) -> f64 {
        self.calls as f64 / self.episodes.max(1) as f64
    }
}

/// What every run shares.
pub struct HarnessBench {
    base: Arc<dyn Environment>,
    policy: Arc<String>,
    tools: Arc<[serde_json::Value]>,
    instruction: String,
    script: Script,
    server: Server,
    runtime: tokio::runtime::Runtime,
    runs: usize,
    seed: u64,
    /// The write tool the scripted agent calls (for the report).
    pub write_tool: Option<String>,
}

impl HarnessBench {
    /// Airline's eval database, its policy (`policy_text`), a script of one read and one
    /// write call; the server in a child process of `server_exe`, or in-process for `None`.
    pub fn new(
        seed: u64,
        policy_text: String,
        server_exe: Option<&Path>,
    ) -> Result<HarnessBench, String> {
        let d = domain::find("airline").map_err(|e| e.to_string())?;
        let base: Arc<dyn Environment> = Arc::from(d.generate(seed, Split::Eval));
        let user_id = base.customers().into_iter().next().ok_or("no customers")?;
        let mut calls = vec![(
            "get_user_details".to_string(),
            serde_json::json!({ "user_id": user_id }).to_string(),
        )];
        let write = super::one_write(base.as_ref());
        if let Some((tool, args)) = &write {
            calls.push((tool.clone(), args.to_string()));
        }
        let script = Script {
            user_turns: USER_TURNS,
            calls,
        };
        let server = Server::start(server_exe, &script)?;
        let tools: Arc<[serde_json::Value]> =
            base.tool_specs().iter().map(|s| s.openai()).collect();
        Ok(HarnessBench {
            base,
            policy: Arc::new(policy_text),
            tools,
            instruction: format!(
                "Your user id is {user_id}. You want to review your reservations and then \
                 change one of them."
            ),
            script,
            server,
            runtime: crate::llm::runtime()?,
            runs: 0,
            seed,
            write_tool: write.map(|w| w.0),
        })
    }

    pub fn calls_per_episode(&self) -> usize {
        self.script.calls_per_episode()
    }

    fn model(&self, role: Role, spec: &Spec, cache: &Path) -> Result<Arc<dyn ChatModel>, String> {
        let cfg = RoleConfig {
            provider: Provider::Openai,
            base_url: Some(self.server.base_url()),
            model: Some(model_for(spec.latency)),
            concurrency: Some(spec.concurrency),
            max_retries: Some(0),
            timeout_secs: Some(300.0),
            ..Default::default()
        };
        match build_role(role, &cfg, cache).map_err(|e| e.to_string())? {
            RoleModel::Endpoint(m) => Ok(m),
            RoleModel::Scripted(_) => Err("expected an endpoint role".into()),
        }
    }

    /// Run `spec.episodes` episodes, at most `spec.concurrency` at a time.
    fn run(&mut self, spec: &Spec) -> Result<Load, String> {
        self.runs += 1;
        let dir =
            spec.cache_root
                .join(format!("tracer-bench-{}-{}", std::process::id(), self.runs));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = dir.join("cache.redb");
        let agent = self.model(Role::Agent, spec, &cache)?;
        let user = self.model(Role::User, spec, &cache)?;
        let run_seed = crate::seed::derive_seed(self.seed, &["bench", &self.runs.to_string()]);

        let rss_before = status_bytes("VmRSS");
        let peak_ok = reset_peak_rss();
        let server = &self.server;
        let mark = |load: &Load| Mark {
            at: Instant::now(),
            cpu: process_cpu("self"),
            server_cpu: server.cpu(),
            episodes: load.episodes,
            calls: load.calls,
        };
        let t0 = Instant::now();
        // Steady state: start counting after the warm-up, stop at the end of the window.
        let window_start = spec.warmup.map(|w| t0 + w);
        let window_end = spec
            .max_wall
            .map(|d| t0 + spec.warmup.unwrap_or_default() + d);
        let mut load = Load::default();
        let (mut first, mut last) = (
            if window_start.is_none() && spec.counted.is_none() {
                Some(mark(&load))
            } else {
                None
            },
            None,
        );
        let (base, policy, tools, instruction) = (
            &self.base,
            &self.policy,
            &self.tools,
            self.instruction.as_str(),
        );
        // When each episode ended, and its calls (a window by count is read from these).
        let mut ends: Vec<(Instant, usize)> = Vec::new();
        self.runtime.block_on(async {
            let limit = Arc::new(tokio::sync::Semaphore::new(spec.concurrency));
            let mut set = tokio::task::JoinSet::new();
            let mut take = |r: (usize, Option<String>, Instant), load: &mut Load| {
                ends.push((r.2, r.0));
                load.episodes += 1;
                load.calls += r.0;
                if let Some(e) = r.1 {
                    load.errors += 1;
                    load.first_error.get_or_insert(e);
                }
            };
            let rules =
                Arc::new(crate::llm::prompt::builtin("user").ok_or("no shipped user prompt")?);
            for i in 0..spec.episodes {
                let permit = Arc::clone(&limit)
                    .acquire_owned()
                    .await
                    .map_err(|e| e.to_string())?;
                while let Some(done) = set.try_join_next() {
                    take(done.map_err(|e| e.to_string())?, &mut load);
                }
                if let Some((skip, count)) = spec.counted {
                    if first.is_none() && load.episodes >= skip {
                        first = Some(mark(&load));
                    }
                    if load.episodes >= skip + count {
                        last = Some(mark(&load));
                        break;
                    }
                }
                let now = Instant::now();
                if first.is_none() && window_start.is_some_and(|w| now >= w) {
                    first = Some(mark(&load));
                }
                if window_end.is_some_and(|d| now >= d) {
                    last = Some(mark(&load));
                    break;
                }
                let (base, policy, tools) =
                    (Arc::clone(base), Arc::clone(policy), Arc::clone(tools));
                let (agent, user) = (Arc::clone(&agent), Arc::clone(&user));
                let instruction = instruction.to_string();
                let rules = Arc::clone(&rules);
                set.spawn(async move {
                    let _permit = permit;
                    let seed = crate::seed::derive_seed(run_seed, &[&i.to_string()]);
                    let mut env = base.fork();
                    let mut agent = EndpointAgent {
                        model: agent,
                        tools,
                        seed,
                    };
                    let user_model = Arc::clone(&user);
                    let mut user = EndpointUser::new(user, &rules, &instruction, None, seed);
                    let ep = run_episode(env.as_mut(), &policy, &mut agent, &mut user, 50).await;
                    // As the rollouts stage does before an episode reaches its journal.
                    let synced = match agent.model.sync().await {
                        Ok(()) => user_model.sync().await,
                        err => err,
                    };
                    // Every user and assistant message but the fixed greeting is one call.
                    let calls = ep
                        .messages
                        .iter()
                        .filter(|m| m.role == MessageRole::User || m.role == MessageRole::Assistant)
                        .count()
                        - 1;
                    let error = match (ep.termination, synced) {
                        (_, Err(e)) => Some(e.to_string()),
                        (Termination::UserStop, Ok(())) => None,
                        (other, Ok(())) => {
                            Some(ep.error.unwrap_or_else(|| other.as_str().to_string()))
                        }
                    };
                    (calls, error, Instant::now())
                });
            }
            while let Some(done) = set.join_next().await {
                take(done.map_err(|e| e.to_string())?, &mut load);
            }
            Ok::<(), String>(())
        })?;
        load.total = load.episodes;
        let last = last.unwrap_or_else(|| mark(&load));
        if let Some(first) = first {
            load.episodes = last.episodes - first.episodes;
            load.calls = last.calls - first.calls;
            load.wall = (last.at - first.at).as_secs_f64();
            load.cpu = last.cpu.zip(first.cpu).map_or(0.0, |(a, b)| a - b);
            load.server_cpu = last.server_cpu.zip(first.server_cpu).map(|(a, b)| a - b);
        }
        if let Some((skip, count)) = spec.counted {
            // The loop's marks came when it next ran; the episodes' own end times are exact.
            ends.sort_by_key(|e| e.0);
            if let (Some(from), Some(to)) =
                (ends.get(skip.saturating_sub(1)), ends.get(skip + count - 1))
            {
                load.wall = (to.0 - from.0).as_secs_f64();
                load.episodes = count;
                load.calls = ends[skip..skip + count].iter().map(|e| e.1).sum();
            }
        }
        load.rss_before = rss_before;
        load.rss_peak = if peak_ok { status_bytes("VmHWM") } else { None };
        load.threads = status_number("Threads");
        load.cache_hits = agent.stats().cache_hits + user.stats().cache_hits;
        drop((agent, user));
        let _ = std::fs::remove_dir_all(&dir);
        Ok(load)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_server_answers_and_an_episode_completes() {
        let mut b = HarnessBench::new(1, "policy".into(), None).unwrap();
        let spec = Spec {
            concurrency: 2,
            latency: Duration::ZERO,
            episodes: 3,
            warmup: None,
            max_wall: None,
            counted: None,
            cache_root: std::env::temp_dir(),
        };
        let load = b.run(&spec).unwrap();
        assert_eq!(load.episodes, 3);
        assert_eq!(load.errors, 0, "{:?}", load.first_error);
        assert_eq!(load.calls, 3 * b.calls_per_episode());
        assert_eq!(load.cache_hits, 0);
        let Server::InProcess(s) = &b.server else {
            unreachable!()
        };
        assert_eq!(s.posts() as usize, load.calls);
        assert!(b.write_tool.is_some());
    }

    #[test]
    fn a_window_by_count_counts_that_many_episodes_between_two_ends() {
        let mut b = HarnessBench::new(1, "policy".into(), None).unwrap();
        let spec = Spec {
            concurrency: 2,
            latency: Duration::from_millis(5),
            episodes: usize::MAX,
            warmup: None,
            max_wall: None,
            counted: Some((2, 4)),
            // Not the other test's directory: each bench numbers its runs from 1.
            cache_root: std::env::temp_dir().join("tracer-bench-window-test"),
        };
        let load = b.run(&spec).unwrap();
        assert_eq!(load.episodes, 4);
        assert_eq!(load.calls, 4 * b.calls_per_episode());
        // Four episodes of seven 5 ms calls, two at a time: at least two episode lengths.
        assert!(load.wall >= 2.0 * 7.0 * 0.005, "{}", load.wall);
        assert!(load.total >= 6, "{}", load.total);
        let _ = std::fs::remove_dir_all(&spec.cache_root);
    }

    #[test]
    fn latency_comes_from_the_model_id() {
        assert_eq!(
            super::super::server::latency_of("bench@100ms"),
            Duration::from_millis(100)
        );
        assert_eq!(super::super::server::latency_of("other"), Duration::ZERO);
        assert!(process_cpu("self").is_some());
    }
}
