//! Load on a running `tracer serve` (`tracer bench --serve-load ADDR`, which
//! `scripts/bench_serve.sh` drives): C client threads each play whole episodes that replay a
//! task's gold actions — reset, one step per gold call, one text step telling the required
//! outputs, verify, close — over plain HTTP/1.1 on loopback, each client on one persistent
//! connection (as a trainer's pooled HTTP client talks). Measured per concurrency: sessions/s, the latency of each step as
//! the client sees it (p50 / p99), and the server's CPU per step (`/proc/<pid>/stat`). Then
//! memory per open session: the server's RSS growth with N sessions held open, over N.
//!
//! Speaks only HTTP: the server is a black box here (any build, any host).

use super::harness::process_cpu;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An HTTP/1.1 client on one persistent connection (reopened when the server closes it),
/// as a trainer's pooled client talks.
struct Client {
    addr: String,
    conn: Option<BufReader<TcpStream>>,
}

impl Client {
    fn new(addr: &str) -> Client {
        Client {
            addr: addr.to_string(),
            conn: None,
        }
    }

    /// One request; (status, JSON body).
    fn request(&mut self, method: &str, path: &str, body: &Value) -> Result<(u16, Value), String> {
        let body = if method == "GET" {
            String::new()
        } else {
            body.to_string()
        };
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        // A kept connection the server has closed in the meantime fails at once: retry once
        // on a new one.
        let fresh = self.conn.is_none();
        match self.exchange(&head, &body) {
            Err(_) if !fresh => {
                self.conn = None;
                self.exchange(&head, &body)
            }
            other => other,
        }
        .map_err(|e| format!("{method} {path}: {e}"))
    }

    fn exchange(&mut self, head: &str, body: &str) -> std::io::Result<(u16, Value)> {
        if self.conn.is_none() {
            let s = TcpStream::connect(&self.addr)?;
            s.set_nodelay(true)?;
            self.conn = Some(BufReader::new(s));
        }
        let conn = self.conn.as_mut().expect("connected above");
        let mut request = Vec::with_capacity(head.len() + body.len());
        request.extend_from_slice(head.as_bytes());
        request.extend_from_slice(body.as_bytes());
        conn.get_mut().write_all(&request)?;
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let mut line = String::new();
        conn.read_line(&mut line)?;
        let status: u16 = line
            .get(9..12)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no HTTP status in the answer"))?;
        let (mut length, mut close) = (0usize, false);
        loop {
            line.clear();
            if conn.read_line(&mut line)? == 0 {
                return Err(bad("connection closed in the answer's head"));
            }
            let h = line.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().map_err(|_| bad("bad Content-Length"))?;
                } else if k.eq_ignore_ascii_case("connection") {
                    close = v.trim().eq_ignore_ascii_case("close");
                }
            }
        }
        let mut body = vec![0u8; length];
        conn.read_exact(&mut body)?;
        if close {
            self.conn = None;
        }
        Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }

    fn ok(&mut self, method: &str, path: &str, body: &Value) -> Result<Value, String> {
        match self.request(method, path, body)? {
            (200, v) => Ok(v),
            (s, v) => Err(format!("{method} {path}: {s} {v}")),
        }
    }
}

/// A task to replay: its id, its gold calls (name, arguments text), the outputs to tell.
#[derive(Clone, Debug)]
struct Gold {
    task_id: String,
    calls: Vec<(String, String)>,
    outputs: Vec<String>,
}

fn gold_tasks(client: &mut Client, most: usize) -> Result<Vec<Gold>, String> {
    let list = client.ok("GET", &format!("/tasks?limit={most}"), &Value::Null)?;
    let mut out = Vec::new();
    for t in list["tasks"].as_array().into_iter().flatten() {
        let id = t["task_id"].as_str().unwrap_or_default();
        let task = client.ok("GET", &format!("/tasks/{id}"), &Value::Null)?;
        let calls = task["actions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                (
                    a["name"].as_str().unwrap_or_default().to_string(),
                    a["kwargs"].to_string(),
                )
            })
            .collect();
        let outputs = task["outputs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o.as_str().map(str::to_string))
            .collect();
        out.push(Gold {
            task_id: id.to_string(),
            calls,
            outputs,
        });
    }
    if out.is_empty() {
        return Err("the server lists no tasks".into());
    }
    Ok(out)
}

/// One episode replaying `gold`; the latency of each step, and the reward.
fn episode(client: &mut Client, gold: &Gold, steps: &mut Vec<Duration>) -> Result<i64, String> {
    let r = client.ok("POST", "/reset", &json!({"task_id": gold.task_id}))?;
    let session = r["session"].as_str().unwrap_or_default().to_string();
    let mut done = r["done"].as_bool().unwrap_or(true);
    let mut step = |message: Value| -> Result<bool, String> {
        let t = Instant::now();
        let v = client.ok(
            "POST",
            "/step",
            &json!({"session": session, "action": {"message": message}}),
        )?;
        steps.push(t.elapsed());
        Ok(v["done"].as_bool().unwrap_or(true))
    };
    for (i, (name, args)) in gold.calls.iter().enumerate() {
        if done {
            break;
        }
        done = step(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": args}}
        ]}))?;
    }
    if !done {
        let said = format!("Here is what I found: {}.", gold.outputs.join(", "));
        step(json!({"role": "assistant", "content": said}))?;
    }
    let v = client.ok("POST", "/verify", &json!({"session": session, "end": true}))?;
    client.ok("POST", "/close", &json!({"session": session}))?;
    Ok(v["reward"].as_i64().unwrap_or(0))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line["VmRSS:".len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()
        .map(|kb| kb * 1024)
}

/// What `--serve-load` measures.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub addr: String,
    /// The server's process id (its CPU and memory are read from `/proc`).
    pub server_pid: u32,
    pub concurrency: Vec<usize>,
    /// Episodes per concurrency level (at least the concurrency).
    pub episodes: usize,
    /// Sessions held open at once for the memory figure.
    pub held: usize,
}

/// Run the load; Markdown.
pub fn run(opts: &LoadOptions) -> Result<String, String> {
    let addr = opts.addr.as_str();
    let mut client = Client::new(addr);
    let golds = Arc::new(gold_tasks(&mut client, 200)?);
    let mut out = format!(
        "## Serve (`tracer serve`, scripted user, gold-replaying clients, {} tasks)\n\n\
         | concurrent sessions | episodes | sessions/s | steps | step p50 | step p99 | server CPU / step | rewards 1 / 0 / -1 |\n\
         |---|---|---|---|---|---|---|---|\n",
        golds.len()
    );
    let pid = opts.server_pid.to_string();
    for &c in &opts.concurrency {
        let total = opts.episodes.max(c);
        let next = Arc::new(Mutex::new(0usize));
        let results = Arc::new(Mutex::new((
            Vec::<Duration>::new(),
            [0usize; 3],
            None::<String>,
        )));
        let cpu0 = process_cpu(&pid).unwrap_or(0.0);
        let t0 = Instant::now();
        let workers: Vec<_> = (0..c)
            .map(|_| {
                let (next, results, golds, addr) = (
                    Arc::clone(&next),
                    Arc::clone(&results),
                    Arc::clone(&golds),
                    addr.to_string(),
                );
                std::thread::Builder::new()
                    .stack_size(256 * 1024)
                    .spawn(move || {
                        let mut client = Client::new(&addr);
                        let mut steps = Vec::new();
                        let mut mix = [0usize; 3];
                        let mut error = None;
                        loop {
                            let i = {
                                let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                                *n += 1;
                                *n - 1
                            };
                            if i >= total {
                                break;
                            }
                            match episode(&mut client, &golds[i % golds.len()], &mut steps) {
                                Ok(r) => mix[(1 - r.clamp(-1, 1)) as usize] += 1,
                                Err(e) => {
                                    error = Some(e);
                                    break;
                                }
                            }
                        }
                        let mut r = results.lock().unwrap_or_else(|e| e.into_inner());
                        r.0.extend(steps);
                        for (total, n) in r.1.iter_mut().zip(mix) {
                            *total += n;
                        }
                        if r.2.is_none() {
                            r.2 = error;
                        }
                    })
            })
            .collect::<Result<_, _>>()
            .map_err(|e| format!("client threads: {e}"))?;
        for w in workers {
            let _ = w.join();
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu = process_cpu(&pid).unwrap_or(0.0) - cpu0;
        let mut r = results.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = r.2.take() {
            return Err(format!("C = {c}: {e}"));
        }
        r.0.sort();
        let n = r.0.len().max(1);
        out.push_str(&format!(
            "| {c} | {total} | {:.0} | {} | {:.2} ms | {:.2} ms | {:.3} ms | {} / {} / {} |\n",
            total as f64 / wall,
            r.0.len(),
            percentile(&r.0, 0.5).as_secs_f64() * 1e3,
            percentile(&r.0, 0.99).as_secs_f64() * 1e3,
            cpu * 1e3 / n as f64,
            r.1[0],
            r.1[1],
            r.1[2],
        ));
    }
    // Memory: hold sessions open (each a fork and a transcript after its first exchange).
    let before = rss(opts.server_pid).ok_or("the server's /proc status is not readable")?;
    let mut held = Vec::new();
    for i in 0..opts.held {
        let gold = &golds[i % golds.len()];
        let r = client.ok("POST", "/reset", &json!({"task_id": gold.task_id}))?;
        let session = r["session"].as_str().unwrap_or_default().to_string();
        if let Some((name, args)) = gold.calls.first() {
            client.ok(
                "POST",
                "/step",
                &json!({"session": session, "action": {"message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": "c0", "type": "function", "function": {"name": name, "arguments": args}}]}}}),
            )?;
        }
        held.push(session);
    }
    let after = rss(opts.server_pid).ok_or("the server's /proc status is not readable")?;
    for s in &held {
        let _ = client.ok("POST", "/close", &json!({"session": s}));
    }
    out.push_str(&format!(
        "\nMemory: {} sessions held open (each after its first tool call) grew the server's RSS by {:.1} MiB, {:.1} KiB per session.\n",
        opts.held,
        after.saturating_sub(before) as f64 / (1 << 20) as f64,
        after.saturating_sub(before) as f64 / 1024.0 / opts.held.max(1) as f64
    ));
    Ok(out)
}
