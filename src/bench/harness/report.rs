//! The harness section of the `tracer bench` report ([`run`]): the throughput, scaling and
//! memory runs, and the memory of a forked database.

use super::process::status_bytes;
use super::{HarnessBench, Load, Spec, USER_TURNS};
use crate::domain::Environment;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The latency of the scaling runs (each chat call), in milliseconds.
const LATENCY_MS: u64 = 200;

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
    let write_call = crate::bench::one_write(b.base.as_ref());
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
