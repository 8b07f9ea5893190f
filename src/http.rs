//! A small HTTP/1.1 server for `tracer review` and `tracer serve`: one thread per
//! connection, persistent connections (HTTP/1.1's default, until the client sends
//! `Connection: close` or stays idle for [`IDLE`]), bounded request line, headers and body.
//! Nothing here touches the file system: handlers get the parsed request and return a
//! response. A leaf: it uses no other module of the crate.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// Largest request line plus headers.
pub const MAX_HEAD: usize = 16 * 1024;
/// How long a connection may wait for (the rest of) a request before it is closed.
pub const IDLE: Duration = Duration::from_secs(30);
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
}

pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
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
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        431 => "Request Header Fields Too Large",
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
    })
}

fn write_response(mut stream: &TcpStream, r: &Response, keep_alive: bool) -> bool {
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
    // One write for small answers (no Nagle delay between head and body on a kept
    // connection).
    let mut out = head.into_bytes();
    out.extend_from_slice(&r.body);
    stream.write_all(&out).and_then(|()| stream.flush()).is_ok()
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

/// Serve `listener` forever, answering each request with `handler` (a request that cannot
/// be read is answered in plain text).
pub fn serve<H>(listener: TcpListener, handler: Arc<H>)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    serve_with(listener, handler, |status, why| Response::text(status, why))
}

/// [`serve`], with the answer to a request that cannot be read (too large, malformed)
/// made by `unreadable` from its status and reason.
pub fn serve_with<H>(listener: TcpListener, handler: Arc<H>, unreadable: fn(u16, &str) -> Response)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let handler = Arc::clone(&handler);
        std::thread::spawn(move || {
            let _ = stream.set_read_timeout(Some(IDLE));
            let _ = stream.set_nodelay(true);
            let mut reader = BufReader::new(&stream);
            loop {
                let (response, keep) = match read_request(&mut reader) {
                    Ok(req) => (handler(&req), req.keep_alive),
                    Err(ReadError::Closed) => return,
                    // The rest of a refused request is unread: the connection cannot go on.
                    Err(ReadError::Bad(status, why)) => (unreadable(status, why), false),
                };
                if !write_response(&stream, &response, keep) || !keep {
                    return;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Result<(String, bool, usize), u16>> {
        let mut reader = std::io::Cursor::new(text.as_bytes().to_vec());
        let mut out = Vec::new();
        loop {
            match read_request(&mut reader) {
                Ok(r) => out.push(Ok((r.path, r.keep_alive, r.body.len()))),
                Err(ReadError::Closed) => return out,
                Err(ReadError::Bad(status, _)) => {
                    out.push(Err(status));
                    return out;
                }
            }
        }
    }

    #[test]
    fn requests_follow_each_other_on_a_kept_connection() {
        let two = "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nConnection: close\r\n\r\n";
        assert_eq!(
            read(two),
            vec![Ok(("/a".into(), true, 3)), Ok(("/b".into(), false, 0))]
        );
        assert_eq!(
            read("GET / HTTP/1.0\r\n\r\n"),
            vec![Ok(("/".into(), false, 0))]
        );
        assert_eq!(
            read("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"),
            vec![Ok(("/".into(), true, 0))]
        );
        assert_eq!(
            read("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
            vec![Err(411)]
        );
        let big = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert_eq!(read(&big), vec![Err(413)]);
        assert_eq!(
            read("POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc"),
            vec![Err(400)]
        );
    }

    #[test]
    fn queries_and_paths_decode() {
        assert_eq!(
            parse_query("q=late+fee%21&domain=bank&x"),
            vec![
                ("q".into(), "late fee!".into()),
                ("domain".into(), "bank".into()),
                ("x".into(), "".into())
            ]
        );
        assert_eq!(percent_decode("/task/a%2Fb", false), "/task/a/b");
        assert_eq!(percent_decode("100%", false), "100%");
        assert_eq!(percent_decode("%zz+", false), "%zz+");
    }
}
