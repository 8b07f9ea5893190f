//! A small HTTP/1.1 server for `tracer review` and `tracer serve`: one thread per
//! connection, one request per connection (`Connection: close`), bounded request line,
//! headers and body. Nothing here touches the file system: handlers get the parsed request
//! and return a response. A leaf: it uses no other module of the crate.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// Largest request line plus headers.
pub const MAX_HEAD: usize = 16 * 1024;
/// Largest request body (an edit of a long task is a few KiB).
pub const MAX_BODY: usize = 1024 * 1024;

pub struct Request {
    pub method: String,
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

fn read_request(stream: &TcpStream) -> Result<Request, ReadError> {
    let mut reader = BufReader::new(stream.take((MAX_HEAD + MAX_BODY + 1) as u64));
    let mut head_bytes = 0usize;
    let mut line = String::new();
    let mut read_line = |reader: &mut BufReader<_>, line: &mut String| -> Result<(), ReadError> {
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
    read_line(&mut reader, &mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().ok_or(ReadError::Closed)?.to_string();
    let target = parts
        .next()
        .ok_or(ReadError::Bad(400, "no request target"))?
        .to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        read_line(&mut reader, &mut line)?;
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
    Ok(Request {
        method,
        path: percent_decode(path, false),
        query: parse_query(query),
        headers,
        body,
    })
}

fn write_response(mut stream: &TcpStream, r: &Response) {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&r.body);
    let _ = stream.flush();
}

/// Connections waiting to be accepted (`listen`'s backlog): a burst of 1,024 clients fits.
pub const BACKLOG: i32 = 1024;

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
            let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
            let response = match read_request(&stream) {
                Ok(req) => handler(&req),
                Err(ReadError::Closed) => return,
                Err(ReadError::Bad(status, why)) => unreadable(status, why),
            };
            write_response(&stream, &response);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
