//! Shared helpers: temporary directories, running the binary, asking pyarrow.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh, empty directory under the system temp dir, unique per test, removed when the test
/// that made it ends — kept when it ends in a panic, so a failure can be read afterwards (the
/// next run of the suite sweeps those away once their process has exited).
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept for inspection: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

const PREFIX: &str = "tracer-test-";

/// Removes what earlier runs of the suite left behind: directories of test processes that
/// have exited (their pid is the first part of the name). Runs once per process.
fn sweep_exited_runs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(PREFIX)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
            else {
                continue;
            };
            let alive = pid == std::process::id()
                || Path::new(&format!("/proc/{pid}")).exists()
                || !Path::new("/proc/self").exists();
            if !alive {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    });
}

pub fn temp_dir(label: &str) -> TempDir {
    static N: AtomicUsize = AtomicUsize::new(0);
    sweep_exited_runs();
    let dir = std::env::temp_dir().join(format!(
        "{PREFIX}{}-{}-{label}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// A copy of the project's source files (stages/, graphs/, policies/, emotion_anchors/,
/// prompts/) to edit in a test.
pub fn project_copy(label: &str) -> TempDir {
    let root = temp_dir(label);
    for dir in ["stages", "graphs", "policies", "emotion_anchors", "prompts"] {
        copy_dir(&repo().join(dir), &root.join(dir));
    }
    root
}

/// A project copy with smaller grounding caps, so a test runs the whole DAG quickly.
pub fn small_project(label: &str) -> TempDir {
    let root = project_copy(label);
    std::fs::write(
        root.join("stages/grounded.toml"),
        "max_train = 80\nmax_eval = 30\nmax_customers = 24\nmax_proposals = 6\nmax_expansions = 400\n",
    )
    .unwrap();
    root
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// The `tracer` binary set up for a project root and an output directory.
pub fn tracer_command(root: &Path, output: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tracer"));
    cmd.env("TRACER_ROOT", root)
        .env("TRACER_OUTPUT", output)
        // Every project copy shares the repository's encoder model (`make model`) and its
        // emotion cache (anchor vectors, trained mappers), each entry keyed and checked.
        .env(
            "TRACER_EMBED_MODEL",
            repo().join(".cache/models/all-MiniLM-L6-v2"),
        )
        .env("TRACER_EMOTION_CACHE", repo().join(".cache/emotion"))
        .current_dir(root);
    cmd
}

/// Run `tracer` with a project root and an output directory.
pub fn tracer(root: &Path, output: &Path, args: &[&str]) -> Output {
    tracer_command(root, output)
        .args(args)
        .output()
        .expect("run tracer")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[track_caller]
pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "tracer failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// Run a Python snippet (pyarrow must be installed: `make test-deps`); returns stdout.
pub fn python(code: &str) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(code)
        .output()
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Every file under `dir`, relative, sorted, with its bytes.
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A `tracer` server (`review`, `serve`) in a child process, killed when dropped.
pub struct ChildServer {
    pub child: std::process::Child,
    /// host:port, from the URL the server prints on its first line.
    pub addr: String,
}

impl ChildServer {
    /// Spawn `cmd` and wait for the first line of its stdout, which names the URL.
    pub fn start(mut cmd: Command) -> ChildServer {
        use std::io::BufRead;
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        ChildServer { child, addr }
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request on a new connection; (status, body).
pub fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl AsRef<[u8]>,
) -> (u16, String) {
    use std::io::{Read, Write};
    let body = body.as_ref();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    // A server may answer (and close) before reading a body it refuses.
    let _ = s.write_all(body);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let out = String::from_utf8_lossy(&out).to_string();
    let status = out[9..12].parse().unwrap();
    let body = out
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}
