//! The accept loop and the connections: a worker thread per connection up to
//! [`Limits::max_connections`] (one beyond is answered 503 and closed, as is one whose
//! thread cannot be started); a whole request (head and body) must arrive within
//! [`Limits::request_timeout`] and an answer be taken within [`Limits::write_timeout`], so
//! a client that trickles or never reads frees its worker in bounded time; when the process
//! runs out of file descriptors the loop answers the waiting connection 503 from a reserved
//! descriptor and backs off instead of spinning.

use super::{Deadline, Hosts, ReadError, Request, Response, answer_bytes, read_request, write_by};
use std::io::{BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How much a server takes on at once, and how long it waits.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections served at once (each has a worker thread); one more is answered 503.
    pub max_connections: usize,
    /// A whole request must arrive within this, counted from when the server starts
    /// waiting for it (on a kept connection: the end of the previous answer), so it is
    /// also how long an idle kept connection stays open.
    pub request_timeout: Duration,
    /// An answer must be taken by the client within this.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 512,
            request_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
        }
    }
}

/// A server's limits, the host names it answers to, and its answer to a request it
/// cannot take (too large, malformed, a wrong `Host`, no room): made from status and reason.
#[derive(Clone)]
pub struct Config {
    pub limits: Limits,
    pub hosts: Hosts,
    pub refusal: fn(u16, &str) -> Response,
}

impl Config {
    /// Default limits, plain-text refusals, and the host names of a server bound on `ip`.
    pub fn for_bind(ip: std::net::IpAddr) -> Config {
        Config {
            limits: Limits::default(),
            hosts: Hosts::for_bind(ip, &[]),
            refusal: |status, why| Response::text(status, why),
        }
    }
}

/// Serve `listener` forever with [`Config::for_bind`] its address, answering each request
/// with `handler`.
pub fn serve<H>(listener: TcpListener, handler: Arc<H>)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    let ip = listener
        .local_addr()
        .map(|a| a.ip())
        .unwrap_or(std::net::Ipv4Addr::LOCALHOST.into());
    serve_with(listener, handler, Config::for_bind(ip));
}

/// Serve `listener` forever under `config`, answering each request with `handler`.
pub fn serve_with<H>(listener: TcpListener, handler: Arc<H>, config: Config)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    accept_loop(listener, handler, config, |job| {
        std::thread::Builder::new()
            .name("tracer-http".into())
            .spawn(job)
            .map(drop)
    });
}

/// A connection's place under the cap; given back when dropped (its worker ended, or
/// never started).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

pub(super) type Job = Box<dyn FnOnce() + Send + 'static>;

/// The accept loop, with the way a worker is started given (tests make it fail).
pub(super) fn accept_loop<H, S>(listener: TcpListener, handler: Arc<H>, config: Config, spawn: S)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
    S: Fn(Job) -> std::io::Result<()>,
{
    let config = Arc::new(config);
    let active = Arc::new(AtomicUsize::new(0));
    let mut spare = Spare::open();
    let mut backoff = Duration::ZERO;
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => {
                backoff = Duration::ZERO;
                stream
            }
            Err(e) => {
                // Out of file descriptors: accept fails again at once, and the waiting
                // connection stays in the backlog. Give up the reserved descriptor to take
                // that connection and answer it.
                if out_of_descriptors(&e) && spare.release() {
                    let answered = listener.accept().map(|(stream, _)| {
                        refuse(
                            &stream,
                            &config,
                            "the server has no file descriptors left; retry shortly",
                        )
                    });
                    spare = Spare::open();
                    if answered.is_ok() {
                        continue;
                    }
                }
                backoff = (backoff * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
                std::thread::sleep(backoff);
                continue;
            }
        };
        if active.load(Ordering::Acquire) >= config.limits.max_connections {
            refuse(
                &stream,
                &config,
                &format!(
                    "the server is serving {} connections, its most; retry shortly",
                    config.limits.max_connections
                ),
            );
            continue;
        }
        active.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(Arc::clone(&active));
        let stream = Arc::new(stream);
        let job: Job = {
            let (stream, handler, config) = (
                Arc::clone(&stream),
                Arc::clone(&handler),
                Arc::clone(&config),
            );
            Box::new(move || {
                let _slot = slot;
                connection(stream, handler.as_ref(), &config);
            })
        };
        // A refused spawn drops the job (and its slot): the client hears why, the loop
        // goes on.
        if spawn(job).is_err() {
            refuse(
                &stream,
                &config,
                "the server cannot start a worker for this connection now; retry shortly",
            );
        }
    }
}

/// Answer 503 with `why` on a connection that gets no worker, without ever blocking the
/// accept loop, and close it.
fn refuse(stream: &TcpStream, config: &Config, why: &str) {
    let mut answer = (config.refusal)(503, why);
    answer.headers.push(("Retry-After".into(), "1".into()));
    let _ = stream.set_nonblocking(true);
    let mut s = stream;
    let _ = std::io::Write::write_all(&mut s, &answer_bytes(&answer, false));
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // What the client already sent is read away, so that closing does not reset the
    // connection before the client reads the answer.
    let mut sink = [0u8; 4096];
    for _ in 0..16 {
        match s.read(&mut sink) {
            Ok(n) if n > 0 => {}
            _ => break,
        }
    }
}

/// A descriptor held in reserve, given up to accept (and refuse) one connection when the
/// process has none left.
struct Spare(Option<std::fs::File>);

impl Spare {
    fn open() -> Spare {
        #[cfg(unix)]
        let file = std::fs::File::open("/dev/null").ok();
        #[cfg(not(unix))]
        let file = None;
        Spare(file)
    }

    /// Close the reserved descriptor; whether there was one.
    fn release(&mut self) -> bool {
        self.0.take().is_some()
    }
}

#[cfg(unix)]
fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

#[cfg(not(unix))]
fn out_of_descriptors(_: &std::io::Error) -> bool {
    false
}

/// One connection: its requests in turn until it closes, asks to, or misses a deadline.
fn connection<H>(stream: Arc<TcpStream>, handler: &H, config: &Config)
where
    H: Fn(&Request) -> Response,
{
    let _ = stream.set_nodelay(true);
    let limits = &config.limits;
    let mut reader = BufReader::new(Deadline {
        stream: Arc::clone(&stream),
        until: Instant::now() + limits.request_timeout,
    });
    loop {
        reader.get_mut().until = Instant::now() + limits.request_timeout;
        let (mut response, keep) = match read_request(&mut reader) {
            Ok(mut req) => match config.hosts.check(&req) {
                Ok(()) => {
                    req.conn = Some(Arc::clone(&stream));
                    (handler(&req), req.keep_alive)
                }
                Err((status, why)) => ((config.refusal)(status, &why), false),
            },
            Err(ReadError::Closed) => return,
            // The rest of a refused request is unread: the connection cannot go on.
            Err(ReadError::Bad(status, why)) => ((config.refusal)(status, why), false),
        };
        let until = Instant::now() + limits.write_timeout;
        let upgrade = response.upgrade.take().filter(|_| response.status == 101);
        if !write_by(&stream, &answer_bytes(&response, keep), until) {
            return;
        }
        if let Some(run) = upgrade {
            // The connection is a WebSocket from here on, on this worker, in its place.
            let mut socket = super::ws::Socket::new(reader, Arc::clone(&stream), limits);
            run(&mut socket);
            socket.close(1000, "");
            return;
        }
        if !keep {
            return;
        }
    }
}
