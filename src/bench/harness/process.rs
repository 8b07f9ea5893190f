//! The scripted loopback server as the runs use it (a child process, or in this one) and
//! the `/proc` readings they measure with: CPU time, RSS, its peak, threads.

use crate::bench::server::{LoopbackServer, Script};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

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
pub(super) fn status_number(field: &str) -> Option<u64> {
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
pub(super) fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The scripted server: a child process (`tracer bench --loopback-server`) or in-process.
pub(super) enum Server {
    Child { child: Child, base_url: String },
    InProcess(LoopbackServer),
}

impl Server {
    pub(super) fn start(exe: Option<&Path>, script: &Script) -> Result<Server, String> {
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

    pub(super) fn base_url(&self) -> String {
        match self {
            Server::Child { base_url, .. } => base_url.clone(),
            Server::InProcess(s) => s.base_url(),
        }
    }

    /// The server's CPU seconds so far (child only: in-process it is part of ours).
    pub(super) fn cpu(&self) -> Option<f64> {
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
