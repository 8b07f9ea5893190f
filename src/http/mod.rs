//! A small HTTP/1.1 server for `tracer review` and `tracer serve`: persistent connections
//! (HTTP/1.1's default, until the client sends `Connection: close`), a bounded request line,
//! headers and body, and only the host names a local server answers to (DNS rebinding).
//! Here are the request and the response and how they are read and written; the accept
//! loop, its connection cap and its deadlines are `server.rs`.
//!
//! Nothing here touches the file system: handlers get the parsed request and return a
//! response. A leaf: it uses no other module of the crate.

mod server;
#[cfg(test)]
mod tests;
pub mod ws;

pub use server::{Config, Limits, serve, serve_with};

use std::io::{BufRead, Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Instant;

/// Largest request line plus headers.
pub const MAX_HEAD: usize = 16 * 1024;
/// Largest request body (an edit of a long task is a few KiB).
pub const MAX_BODY: usize = 1024 * 1024;

pub struct Request {
    pub method: String,
    /// The client may send another request on this connection (HTTP/1.1 without
    /// `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`).
    pub keep_alive: bool,
    /// The path without the query string, percent-decoded.
    pub path: String,
    /// Query parameters, percent-decoded, in order.
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// HTTP/1.0 (which may leave out `Host`).
    http10: bool,
    /// The connection it came on (to notice a client that has gone).
    conn: Option<Arc<TcpStream>>,
}

impl Request {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// A cookie's value.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.header("cookie")?.split(';').find_map(|c| {
            let (k, v) = c.trim().split_once('=')?;
            (k == name).then_some(v)
        })
    }

    /// The media type of the body (`Content-Type` without parameters, lower case).
    pub fn media_type(&self) -> Option<String> {
        self.header("content-type").map(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
    }

    /// Whether the request comes from a web page of another origin: an `Origin` header
    /// that is not `http://<Host>` (a browser sends one with every cross-origin request and
    /// with same-origin writes; other clients send none).
    pub fn cross_origin(&self) -> bool {
        match (self.header("origin"), self.header("host")) {
            (None, _) => false,
            (Some(origin), Some(host)) => !origin.eq_ignore_ascii_case(&format!("http://{host}")),
            (Some(_), None) => true,
        }
    }

    /// Whether the client has closed (or reset) its connection while this request is
    /// being answered. A client that half-closes after sending counts as gone; none of
    /// this server's clients do.
    pub fn client_gone(&self) -> bool {
        let Some(stream) = &self.conn else {
            return false;
        };
        // Only the thread answering this request uses the connection now, so switching it
        // to non-blocking for one peek races with nothing.
        if stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0u8; 1];
        let gone = match stream.peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ),
        };
        let _ = stream.set_nonblocking(false);
        gone
    }
}

pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// A `101` answer's WebSocket: run on the connection once the answer is written.
    pub upgrade: Option<ws::Upgrade>,
}

impl Response {
    pub fn html(body: String) -> Response {
        Response::new(200, "text/html; charset=utf-8", body.into_bytes())
    }
    pub fn json(status: u16, v: &serde_json::Value) -> Response {
        Response::new(status, "application/json", v.to_string().into_bytes())
    }
    pub fn text(status: u16, body: impl Into<String>) -> Response {
        Response::new(
            status,
            "text/plain; charset=utf-8",
            body.into().into_bytes(),
        )
    }
    pub fn new(status: u16, content_type: &'static str, body: Vec<u8>) -> Response {
        Response {
            status,
            content_type,
            headers: Vec::new(),
            body,
            upgrade: None,
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        499 => "Client Closed Request",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Decode `%XX` escapes and `+` (in query strings); invalid escapes stay as they are.
pub fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
                {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse a query string (or a form body) into pairs.
pub fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k, true), percent_decode(v, true))
        })
        .collect()
}

/// Which `Host` names a server answers to. A page on another site can point its own host
/// name at 127.0.0.1 (DNS rebinding) and then talk to a loopback server as if it were its
/// own origin; its requests still carry that name in `Host`. An IP address in `Host` is
/// never such a page (rebinding needs a name), nor is `localhost` (browsers resolve it
/// themselves), so a loopback server answers to those and to the names its operator
/// allows. A server bound beyond loopback answers to any name (it needs a token then).
#[derive(Clone, Debug, Default)]
pub struct Hosts {
    any: bool,
    names: Vec<String>,
}

impl Hosts {
    /// Loopback names and IP addresses, and `names` (`*`: any name).
    pub fn local(names: &[String]) -> Hosts {
        Hosts {
            any: names.iter().any(|n| n == "*"),
            names: names
                .iter()
                .map(|n| n.trim().trim_end_matches('.').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Any name.
    pub fn any() -> Hosts {
        Hosts {
            any: true,
            names: Vec::new(),
        }
    }

    /// What a server bound on `ip` answers to: loopback names (and `names`) on loopback,
    /// anything beyond.
    pub fn for_bind(ip: IpAddr, names: &[String]) -> Hosts {
        if ip.is_loopback() {
            Hosts::local(names)
        } else {
            Hosts::any()
        }
    }

    /// Whether a `Host` header value (name or address, maybe with a port) is answered.
    pub fn allows(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let host = host.trim();
        let name = if let Some(v6) = host.strip_prefix('[') {
            return v6.split_once(']').is_some_and(|(a, tail)| {
                a.parse::<std::net::Ipv6Addr>().is_ok()
                    && (tail.is_empty()
                        || tail
                            .strip_prefix(':')
                            .is_some_and(|p| p.parse::<u16>().is_ok()))
            });
        } else {
            match host.rsplit_once(':') {
                Some((name, port)) if port.parse::<u16>().is_ok() => name,
                Some(_) => return false,
                None => host,
            }
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        name.parse::<std::net::Ipv4Addr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.names.contains(&name)
    }

    /// `Err(why)` for a request whose `Host` this server does not answer to.
    fn check(&self, req: &Request) -> Result<(), (u16, String)> {
        match req.header("host") {
            None if req.http10 => Ok(()),
            None => Err((400, "an HTTP/1.1 request needs a Host header".to_string())),
            Some(h) if self.allows(h) => Ok(()),
            Some(h) => Err((
                403,
                format!(
                    "Host '{h}' is not a name this server answers to (it answers to localhost and IP addresses; a page that points its own name here is refused)"
                ),
            )),
        }
    }
}

/// Why a request could not be read: the status to answer with.
enum ReadError {
    Closed,
    Bad(u16, &'static str),
}

fn read_request<R: BufRead>(reader: &mut R) -> Result<Request, ReadError> {
    let mut head_bytes = 0usize;
    let mut line = String::new();
    let mut read_line = |reader: &mut R, line: &mut String| -> Result<(), ReadError> {
        line.clear();
        let n = reader
            .by_ref()
            .take((MAX_HEAD - head_bytes.min(MAX_HEAD)) as u64 + 1)
            .read_line(line)
            .map_err(|_| ReadError::Closed)?;
        head_bytes += n;
        if head_bytes > MAX_HEAD {
            return Err(ReadError::Bad(431, "request head too large"));
        }
        if n == 0 {
            return Err(ReadError::Closed);
        }
        Ok(())
    };
    read_line(reader, &mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().ok_or(ReadError::Closed)?.to_string();
    let target = parts
        .next()
        .ok_or(ReadError::Bad(400, "no request target"))?
        .to_string();
    let http10 = parts.next() == Some("HTTP/1.0");
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        read_line(reader, &mut line)?;
        let h = line.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            let value = value.trim().to_string();
            if name.eq_ignore_ascii_case("content-length") {
                length = value
                    .parse()
                    .map_err(|_| ReadError::Bad(400, "bad Content-Length"))?;
            }
            if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(ReadError::Bad(
                    411,
                    "send a Content-Length, not a chunked body",
                ));
            }
            headers.push((name.trim().to_string(), value));
        }
    }
    if length > MAX_BODY {
        return Err(ReadError::Bad(413, "request body too large"));
    }
    let mut body = vec![0u8; length];
    reader
        .read_exact(&mut body)
        .map_err(|_| ReadError::Bad(400, "body shorter than Content-Length"))?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let connection = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("connection"))
        .map(|(_, v)| v.to_ascii_lowercase());
    let keep_alive = match connection.as_deref() {
        Some(c) if c.contains("close") => false,
        Some(c) if c.contains("keep-alive") => true,
        _ => !http10,
    };
    Ok(Request {
        method,
        keep_alive,
        path: percent_decode(path, false),
        query: parse_query(query),
        headers,
        body,
        http10,
        conn: None,
    })
}

/// The bytes of an answer: head and body, for one write (no Nagle delay between them on a
/// kept connection).
fn answer_bytes(r: &Response, keep_alive: bool) -> Vec<u8> {
    if r.status == 101 {
        // Switching protocols: no body, no Content-Length (RFC 9110 §8.6).
        let mut head = "HTTP/1.1 101 Switching Protocols\r\n".to_string();
        for (k, v) in &r.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        return head.into_bytes();
    }
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len(),
        if keep_alive { "keep-alive" } else { "close" }
    );
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(&r.body);
    out
}

/// Write `bytes` to `stream`, all of them by `until` (a client that does not read its
/// answer cannot hold the connection, nor the answer's memory, past it).
fn write_by(stream: &TcpStream, mut bytes: &[u8], until: Instant) -> bool {
    let mut s = stream;
    while !bytes.is_empty() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_write_timeout(Some(left)).is_err() {
            return false;
        }
        match s.write(bytes) {
            Ok(0) => return false,
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    s.flush().is_ok()
}

/// Connections waiting to be accepted (`listen`'s backlog; the kernel caps it at
/// `net.core.somaxconn`, 4,096 on current Linux): a burst of 1,024 clients fits, and so do
/// the 2,048 connections the harness bench opens at once (two roles of 1,024 episodes).
pub const BACKLOG: i32 = 4096;

/// Bind a listening socket on `addr` with [`BACKLOG`].
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// Equal byte strings, compared in time that depends only on their lengths (tokens).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Reads from a connection that fail once `until` has passed, however the bytes trickle.
pub(crate) struct Deadline {
    pub(crate) stream: std::sync::Arc<std::net::TcpStream>,
    pub(crate) until: std::time::Instant,
}

impl std::io::Read for Deadline {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self
            .until
            .saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        std::io::Read::read(&mut &*self.stream, buf)
    }
}
