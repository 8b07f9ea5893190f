//! The wire to a remote domain (docs/remote-domains.md): JSON-RPC 2.0 over a child process's
//! stdio (one JSON object per line) or over HTTP POSTs to a loopback URL. One
//! [`Connection`] per domain, shared by every environment of it; calls are serialised (a
//! request, then its answer), each with a deadline.
//!
//! Every failure here is the infrastructure's, never a tool's: the process exited, did not
//! answer in time, answered something that is no JSON-RPC response, or answered with a
//! JSON-RPC `error`. Each says the domain and the method. After a transport failure the
//! connection is dead: the process is killed and every later call fails at once.
//!
//! Architecture invariant: bytes and JSON-RPC framing only; knows no stage.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An answer longer than this is refused (a runaway server must not exhaust memory).
const MAX_ANSWER: usize = 256 << 20;

/// Children started by this process, killed by [`shutdown`] (and by their stdin closing
/// when this process ends any other way).
static CHILDREN: Mutex<Vec<Arc<Mutex<Child>>>> = Mutex::new(Vec::new());

/// Kill every environment process this process started (the CLI calls it on the way out).
pub fn shutdown() {
    let children = std::mem::take(&mut *CHILDREN.lock().unwrap_or_else(|p| p.into_inner()));
    for child in children {
        let mut c = child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = c.kill();
        let _ = c.wait();
    }
}

enum Transport {
    Stdio {
        stdin: ChildStdin,
        lines: Receiver<std::io::Result<String>>,
        child: Arc<Mutex<Child>>,
    },
    Http {
        addr: SocketAddr,
        host: String,
        path: String,
    },
}

struct Wire {
    transport: Transport,
    next_id: u64,
    /// Why the connection is dead, once it is.
    dead: Option<String>,
}

/// A connection to one remote domain.
pub struct Connection {
    domain: String,
    timeout: Duration,
    wire: Mutex<Wire>,
}

impl Connection {
    /// Start `command` in `dir` with piped stdio (stderr passed through).
    pub fn spawn(
        domain: &str,
        command: &[String],
        dir: &Path,
        timeout: Duration,
    ) -> Result<Connection, String> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| format!("domain '{domain}': command is empty"))?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                format!(
                    "domain '{domain}': could not start `{}` in {}: {e}",
                    command.join(" "),
                    dir.display()
                )
            })?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name(format!("remote-{domain}"))
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let mut line = String::new();
                    let read = (&mut reader)
                        .take(MAX_ANSWER as u64 + 1)
                        .read_line(&mut line);
                    let end = matches!(read, Ok(0) | Err(_));
                    let sent = match read {
                        Ok(0) => tx.send(Err(std::io::Error::other("the process closed stdout"))),
                        Ok(n) if n > MAX_ANSWER => {
                            tx.send(Err(std::io::Error::other("an answer over 256 MiB")))
                        }
                        Ok(_) => tx.send(Ok(line)),
                        Err(e) => tx.send(Err(e)),
                    };
                    if end || sent.is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        let child = Arc::new(Mutex::new(child));
        CHILDREN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(child.clone());
        Ok(Connection {
            domain: domain.to_string(),
            timeout,
            wire: Mutex::new(Wire {
                transport: Transport::Stdio {
                    stdin,
                    lines: rx,
                    child,
                },
                next_id: 1,
                dead: None,
            }),
        })
    }

    /// Reach a server at `url` (`http://<loopback host>:<port>/<path>`).
    pub fn http(domain: &str, url: &str, timeout: Duration) -> Result<Connection, String> {
        let bad = |why: &str| format!("domain '{domain}': url '{url}': {why}");
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad("only http:// on loopback is supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let addr = authority
            .to_socket_addrs()
            .map_err(|e| bad(&e.to_string()))?
            .next()
            .ok_or_else(|| bad("the host resolves to no address"))?;
        if !addr.ip().is_loopback() {
            return Err(bad(
                "a remote domain is reached on loopback only (127.0.0.1 or ::1)",
            ));
        }
        Ok(Connection {
            domain: domain.to_string(),
            timeout,
            wire: Mutex::new(Wire {
                transport: Transport::Http {
                    addr,
                    host: authority.to_string(),
                    path: path.to_string(),
                },
                next_id: 1,
                dead: None,
            }),
        })
    }

    /// Call `method` and return its `result`; the error names the domain and the method.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        let mut wire = self.wire.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = &wire.dead {
            return Err(format!("domain '{}': {method}: {why}", self.domain));
        }
        let id = wire.next_id;
        wire.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut answer = match exchange(&mut wire.transport, &request, id, self.timeout) {
            Ok(a) => a,
            Err(why) => {
                wire.kill();
                wire.dead = Some(format!("the connection failed earlier ({why})"));
                return Err(format!("domain '{}': {method}: {why}", self.domain));
            }
        };
        if let Some(error) = answer.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string);
            return Err(format!(
                "domain '{}': {method}: the server answered an error: {message}",
                self.domain
            ));
        }
        // Taken, not cloned: a whole state is the largest answer there is.
        if let Some(result) = answer.get_mut("result") {
            return Ok(result.take());
        }
        Err(format!(
            "domain '{}': {method}: malformed answer (no result or error): {}",
            self.domain,
            clip(&answer.to_string())
        ))
    }

    /// Send a notification (no answer is read); failures are ignored (the next call reports
    /// a dead connection).
    pub fn notify(&self, method: &str, params: Value) {
        let mut wire = self.wire.lock().unwrap_or_else(|p| p.into_inner());
        if wire.dead.is_some() {
            return;
        }
        let note = json!({"jsonrpc": "2.0", "method": method, "params": params});
        match &mut wire.transport {
            Transport::Stdio { stdin, .. } => {
                let _ = writeln!(stdin, "{note}").and_then(|()| stdin.flush());
            }
            Transport::Http { addr, host, path } => {
                let _ = post(*addr, host, path, &note.to_string(), self.timeout);
            }
        }
    }
}

impl Wire {
    fn kill(&mut self) {
        if let Transport::Stdio { child, .. } = &self.transport {
            let mut c = child.lock().unwrap_or_else(|p| p.into_inner());
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One request and its answer (answers to other ids, left by an earlier timeout, skipped).
fn exchange(
    transport: &mut Transport,
    request: &Value,
    id: u64,
    timeout: Duration,
) -> Result<Value, String> {
    match transport {
        Transport::Stdio {
            stdin,
            lines,
            child,
        } => {
            writeln!(stdin, "{request}")
                .and_then(|()| stdin.flush())
                .map_err(|e| exited(child, &format!("could not write the request: {e}")))?;
            let deadline = std::time::Instant::now() + timeout;
            loop {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                let line = match lines.recv_timeout(left) {
                    Ok(Ok(line)) => line,
                    Ok(Err(e)) => return Err(exited(child, &e.to_string())),
                    Err(RecvTimeoutError::Timeout) => {
                        return Err(format!("no answer within {}s", timeout.as_secs_f64()));
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err(exited(child, "the process closed stdout"));
                    }
                };
                if line.trim().is_empty() {
                    continue;
                }
                let answer: Value = serde_json::from_str(&line).map_err(|e| {
                    format!(
                        "malformed answer (not JSON: {e}): {}",
                        clip(line.trim_end())
                    )
                })?;
                if answer.get("id") == Some(&json!(id)) {
                    return Ok(answer);
                }
                if answer.get("id").is_none_or(Value::is_null) && answer.get("method").is_some() {
                    continue; // a notification from the server (a log line, progress)
                }
                if answer
                    .get("id")
                    .and_then(Value::as_u64)
                    .is_some_and(|i| i < id)
                {
                    continue; // a late answer to a call that timed out
                }
                return Err(format!(
                    "malformed answer (id {} expected): {}",
                    id,
                    clip(&line)
                ));
            }
        }
        Transport::Http { addr, host, path } => {
            let body = post(*addr, host, path, &request.to_string(), timeout)?;
            let answer: Value = serde_json::from_str(&body)
                .map_err(|e| format!("malformed answer (not JSON: {e}): {}", clip(&body)))?;
            if answer.get("id") != Some(&json!(id)) {
                return Err(format!(
                    "malformed answer (id {} expected): {}",
                    id,
                    clip(&body)
                ));
            }
            Ok(answer)
        }
    }
}

/// What a dead child says: its exit status when it has one.
fn exited(child: &Arc<Mutex<Child>>, why: &str) -> String {
    let mut c = child.lock().unwrap_or_else(|p| p.into_inner());
    // The reader sees the pipe close a moment before the process is reaped.
    for _ in 0..50 {
        if let Ok(Some(status)) = c.try_wait() {
            return format!("the environment process exited ({status}): {why}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    why.to_string()
}

/// One HTTP/1.1 POST of a JSON body; the answer's body (status 200 or 202 only).
fn post(
    addr: SocketAddr,
    host: &str,
    path: &str,
    body: &str,
    timeout: Duration,
) -> Result<String, String> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|e| format!("could not connect to {addr}: {e}"))?;
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()))
        .map_err(|e| format!("could not send the request: {e}"))?;
    let mut raw = Vec::new();
    stream
        .take(MAX_ANSWER as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                format!("no answer within {}s", timeout.as_secs_f64())
            }
            _ => format!("could not read the answer: {e}"),
        })?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("malformed HTTP answer: {}", clip(&text)))?;
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if status != "200" && status != "202" {
        return Err(format!("HTTP {status}: {}", clip(body)));
    }
    Ok(body.to_string())
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}
