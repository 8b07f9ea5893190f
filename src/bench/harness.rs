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

use super::server::{LoopbackServer, Script, model_for};
use crate::domain::{self, Environment, Split};
use crate::harness::MessageRole;
use crate::harness::endpoint::{EndpointAgent, EndpointUser};
use crate::harness::{Termination, run_episode};
use crate::llm::{ChatModel, Provider, Role, RoleConfig, RoleModel, build_role};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// User turns per benchmark episode (the last one says `###STOP###`).
pub const USER_TURNS: usize = 3;

/// The latency of the scaling runs (each chat call), in milliseconds.
const LATENCY_MS: u64 = 200;

/// Ticks of `/proc/<pid>/stat` times (`USER_HZ`, 100 on every Linux architecture we run on).
const TICKS_PER_SEC: f64 = 100.0;

/// utime + stime of a process in seconds, from `/proc/<pid>/stat` (`self` for this one).
pub fn process_cpu(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces): state is field 3, utime 14.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / TICKS_PER_SEC)
}

/// The number on a line of `/proc/self/status` (`Threads`; `VmRSS`, `VmHWM` in kB).
fn status_number(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let value = line[field.len() + 1..].trim().trim_end_matches("kB");
    value.trim().parse().ok()
}

/// A `kB` line of `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes.
pub fn status_bytes(field: &str) -> Option<u64> {
    status_number(field).map(|kb| kb * 1024)
}

/// Reset the peak RSS (`VmHWM`) to the current RSS; false where the kernel refuses.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The scripted server: a child process (`tracer bench --loopback-server`) or in-process.
enum Server {
    Child { child: Child, base_url: String },
    InProcess(LoopbackServer),
}

impl Server {
    fn start(exe: Option<&Path>, script: &Script) -> Result<Server, String> {
        let Some(exe) = exe else {
            let s = LoopbackServer::start(script.clone()).map_err(|e| format!("server: {e}"))?;
            return Ok(Server::InProcess(s));
        };
        let json = serde_json::to_string(script).map_err(|e| e.to_string())?;
        let mut child = Command::new(exe)
            .args(["bench", "--loopback-server", &json])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let _ = BufReader::new(out).read_line(&mut line);
        }
        match line.trim().strip_prefix("listening ") {
            Some(addr) => Ok(Server::Child {
                base_url: format!("http://{addr}/v1"),
                child,
            }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("loopback server did not start (said {line:?})"))
            }
        }
    }

    fn base_url(&self) -> String {
        match self {
            Server::Child { base_url, .. } => base_url.clone(),
            Server::InProcess(s) => s.base_url(),
        }
    }

    /// The server's CPU seconds so far (child only: in-process it is part of ours).
    fn cpu(&self) -> Option<f64> {
        match self {
            Server::Child { child, .. } => process_cpu(&child.id().to_string()),
            Server::InProcess(_) => None,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Server::Child { child, .. } = self {
            drop(child.stdin.take()); // end of file: the server exits
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

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
                    let mut user = EndpointUser::new(user, &instruction, None, seed);
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

/// Bytes of RSS per held fork of `base`, as the slope between holding `small` and `large`
/// forks (each after `write`, when given), so memory already free in the allocator matters
/// less. `None` without `/proc`.
fn fork_bytes(
    base: &dyn Environment,
    write: Option<&(String, serde_json::Value)>,
    small: usize,
    large: usize,
) -> Option<f64> {
    let held = |n: usize| -> Option<u64> {
        let before = status_bytes("VmRSS")?;
        let forks: Vec<Box<dyn Environment>> = (0..n)
            .map(|_| {
                let mut f = base.fork();
                if let Some((tool, args)) = write {
                    f.invoke(tool, args);
                }
                f
            })
            .collect();
        let after = status_bytes("VmRSS")?;
        drop(std::hint::black_box(forks));
        Some(after.saturating_sub(before))
    };
    let (a, b) = (held(small)?, held(large)?);
    Some(b.saturating_sub(a) as f64 / (large - small) as f64)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn kib(bytes: f64) -> String {
    if bytes < 10_240.0 {
        format!("{bytes:.0} B")
    } else {
        format!("{:.1} KiB", bytes / 1024.0)
    }
}

/// Where the fresh per-run cache files go: tmpfs when there is one (so a commit's fsync is
/// not a disk write and the harness is what is measured), else the temp directory.
fn memory_cache_root() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// The harness section of the report (Markdown). `quick` shortens every run.
pub fn run(
    seed: u64,
    policy_text: String,
    server_exe: Option<&Path>,
    quick: bool,
) -> Result<String, String> {
    let mut b = HarnessBench::new(seed, policy_text, server_exe)?;
    let cache_root = memory_cache_root();
    let spec = |concurrency: usize, latency_ms: u64, episodes: usize, secs: Option<f64>| Spec {
        concurrency,
        latency: Duration::from_millis(latency_ms),
        episodes,
        warmup: secs.map(|_| Duration::from_secs_f64(if quick { 0.3 } else { 0.5 })),
        max_wall: secs.map(Duration::from_secs_f64),
        counted: None,
        cache_root: cache_root.clone(),
    };
    let mut out = String::new();
    let calls = b.calls_per_episode();
    let write = b.write_tool.clone().unwrap_or_else(|| "(none)".into());
    let where_ = if server_exe.is_some() {
        "a child process"
    } else {
        "this process"
    };
    out.push_str(&format!(
        "## Harness\n\nAirline episodes through `run_episode` with `EndpointAgent` / \
         `EndpointUser` over real HTTP to the scripted loopback server (in {where_}): {USER_TURNS} \
         user turns, the agent making one tool call per turn (`get_user_details`, then \
         `{write}`) before answering; {calls} chat calls per episode. Each run has a fresh \
         response cache file in `{}` (so no request is answered from cache) and endpoint \
         concurrency = C. CPU is utime + stime of the process. Every agent request carries \
         the policy ({:.1} KiB) and {} tool schemas ({:.1} KiB of JSON).\n\n",
        cache_root.display(),
        b.policy.len() as f64 / 1024.0,
        b.tools.len(),
        serde_json::to_string(&*b.tools).map_or(0, |t| t.len()) as f64 / 1024.0,
    ));

    // Memory first, while the allocator holds little freed memory from earlier work.
    let mem_counts: &[usize] = if quick { &[64, 256] } else { &[256, 1024] };
    let mut mem = Vec::new();
    for &n in mem_counts {
        eprintln!("bench: harness memory, {n} episodes in flight");
        mem.push((n, b.run(&spec(n, 100, n, None))?));
    }
    let fork_counts = if quick {
        (2_000, 10_000)
    } else {
        (5_000, 40_000)
    };
    let write_call = super::one_write(b.base.as_ref());
    let fork_empty = fork_bytes(b.base.as_ref(), None, fork_counts.0, fork_counts.1);
    let fork_written = fork_bytes(
        b.base.as_ref(),
        write_call.as_ref(),
        fork_counts.0,
        fork_counts.1,
    );

    let zero_secs = if quick { 1.0 } else { 3.0 };
    let on_disk = |s: Spec| Spec {
        cache_root: std::env::temp_dir(),
        ..s
    };
    // Each run's row label: its concurrency, and where its cache was when not in memory.
    let in_tmp = format!(", cache in `{}`", std::env::temp_dir().display());
    let mut zero = Vec::new();
    for c in [1usize, 32, 256, 1024] {
        eprintln!("bench: harness throughput, concurrency {c}, no latency");
        zero.push((
            c.to_string(),
            b.run(&spec(c, 0, usize::MAX, Some(zero_secs)))?,
        ));
    }
    for c in [32usize, 256] {
        eprintln!("bench: harness throughput, concurrency {c}, cache on disk");
        let load = b.run(&on_disk(spec(c, 0, usize::MAX, Some(zero_secs))))?;
        zero.push((format!("{c}{in_tmp}"), load));
    }
    let mut lat = Vec::new();
    for c in [1usize, 32, 256, 1024] {
        let episodes = if quick { c.max(2) } else { (2 * c).max(4) };
        eprintln!("bench: harness throughput, concurrency {c}, {LATENCY_MS} ms latency");
        lat.push((
            c,
            c.to_string(),
            b.run(&spec(c, LATENCY_MS, episodes, None))?,
        ));
    }
    let c = 1024;
    let episodes = if quick { c } else { 2 * c };
    eprintln!("bench: harness throughput, concurrency {c}, {LATENCY_MS} ms latency, cache on disk");
    let load = b.run(&on_disk(spec(c, LATENCY_MS, episodes, None)))?;
    lat.push((c, format!("{c}{in_tmp}"), load));
    // A long run's pace: C episodes kept in flight, counted from the C-th episode's end to
    // the end of the next 2C (C in a quick run). The runs above start every episode at once
    // and wait for the last, so they include the ramp and the drain; a window by count, not
    // by time, since episodes of equal latency finish in waves.
    let waves = if quick { 1 } else { 2 };
    for disk in [false, true] {
        let (said, label) = if disk {
            (", cache on disk", in_tmp.as_str())
        } else {
            ("", "")
        };
        eprintln!(
            "bench: harness throughput, concurrency {c}, {LATENCY_MS} ms latency, steady state{said}"
        );
        let steady = Spec {
            counted: Some((c, waves * c)),
            ..spec(c, LATENCY_MS, usize::MAX, None)
        };
        let steady = if disk { on_disk(steady) } else { steady };
        lat.push((c, format!("{c}, steady state{label}"), b.run(&steady)?));
    }

    out.push_str(
        "### Throughput, no latency\n\nSteady state: counted over a window after a warm-up, \
         with C episodes kept in flight.\n\n| concurrency | episodes counted (run) | errors | episodes/s | calls/s | \
         CPU/episode (harness) | CPU/episode (server) | harness CPU use |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let row = |label: &str, l: &Load| {
        format!(
            "| {label} | {} ({}) | {} | {:.0} | {:.0} | {:.2} ms | {} | {:.0}% |\n",
            l.episodes,
            l.total,
            l.errors,
            l.per_sec(),
            l.calls as f64 / l.wall.max(1e-9),
            l.cpu / l.episodes.max(1) as f64 * 1e3,
            l.server_cpu.map_or("-".into(), |s| format!(
                "{:.2} ms",
                s / l.episodes.max(1) as f64 * 1e3
            )),
            l.cpu / l.wall.max(1e-9) * 100.0
        )
    };
    for (label, l) in &zero {
        out.push_str(&row(label, l));
    }

    out.push_str(&format!(
        "\n### Throughput with {LATENCY_MS} ms per call\n\nA run starts C episodes at once and \
         ends with the last (ramp and drain included); a steady-state run keeps C in flight \
         and counts from the end of the C-th episode to the end of the 3C-th (2C-th in a quick run).\n\n| concurrency | episodes | errors | \
         calls/episode | achieved episodes/s | ideal C / (calls x {LATENCY_MS} ms) | ratio | \
         harness CPU use |\n|---|---|---|---|---|---|---|---|\n",
    ));
    for (c, label, l) in &lat {
        let ideal = *c as f64 / (l.calls_per_episode().max(1.0) * LATENCY_MS as f64 / 1e3);
        out.push_str(&format!(
            "| {label} | {} | {} | {:.1} | {:.1} | {:.1} | {:.2} | {:.0}% |\n",
            l.episodes,
            l.errors,
            l.calls_per_episode(),
            l.per_sec(),
            ideal,
            l.per_sec() / ideal,
            l.cpu / l.wall.max(1e-9) * 100.0
        ));
    }

    out.push_str(
        "\n### Memory per in-flight episode (100 ms per call, all episodes started at once)\n\n\
         | episodes in flight | RSS before the first run | peak RSS | growth | per episode | threads after |\n\
         |---|---|---|---|---|---|\n",
    );
    // One baseline for every row: RSS before the first memory run. A later run's own
    // "before" already holds memory the allocator kept from the run before it.
    let baseline = mem.first().and_then(|(_, l)| l.rss_before);
    for (n, l) in &mem {
        match (baseline, l.rss_peak) {
            (Some(before), Some(peak)) => {
                let g = peak.saturating_sub(before);
                out.push_str(&format!(
                    "| {n} | {} | {} | {} | {} | {} |\n",
                    mib(before),
                    mib(peak),
                    mib(g),
                    kib(g as f64 / *n as f64),
                    l.threads.map_or("-".into(), |t| t.to_string())
                ))
            }
            _ => out.push_str(&format!("| {n} | - | - | - | (no /proc peak RSS) | - |\n")),
        }
    }
    if let [(n0, l0), (n1, l1)] = mem.as_slice()
        && let (Some(p0), Some(p1)) = (l0.rss_peak, l1.rss_peak)
    {
        out.push_str(&format!(
            "| slope {n0} -> {n1} | | | | {} | |\n",
            kib(p1.saturating_sub(p0) as f64 / (n1 - n0) as f64)
        ));
    }
    let loads: Vec<&Load> = mem
        .iter()
        .map(|(_, l)| l)
        .chain(zero.iter().map(|(_, l)| l))
        .chain(lat.iter().map(|(_, _, l)| l))
        .collect();
    let errs: usize = loads.iter().map(|l| l.errors).sum();
    let hits: u64 = loads.iter().map(|l| l.cache_hits).sum();
    out.push_str(&format!(
        "\nForked database (airline eval), RSS per held fork, slope between {} and {} forks: \
         {} with an empty overlay, {} after one `{write}`.\n",
        fork_counts.0,
        fork_counts.1,
        fork_empty.map_or("-".into(), kib),
        fork_written.map_or("-".into(), kib),
    ));
    out.push_str(&format!(
        "\nAll runs: {errs} errored episodes, {hits} cache hits.\n"
    ));
    if let Some(e) = loads.iter().find_map(|l| l.first_error.clone()) {
        out.push_str(&format!("First error: {e}\n"));
    }
    Ok(out)
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
