//! WebSocket (RFC 6455) on the server's own connections: the opening handshake's answer, and
//! a [`Socket`] that reads a client's text messages and writes the server's, on the worker
//! thread that took the upgrade (so a WebSocket holds one connection place, like any
//! request). Text messages only, at most [`MAX_MESSAGE`] bytes; the client's frames must be
//! masked; pings are answered. Every read and write has a deadline: the next message may be
//! waited for up to [`Socket::idle`], but once a frame has begun it must arrive within the
//! server's request timeout, and a message the client does not take within the write
//! timeout closes the connection. A protocol violation closes it with the RFC's status.
//!
//! The handshake's SHA-1 and base64 are here too (a few lines each; no crate needed).

use super::Deadline;
use super::{Request, Response};
use std::io::{BufReader, Read};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest message a client may send (a JSON action; an HTTP body has the same limit).
pub const MAX_MESSAGE: usize = super::MAX_BODY;

/// What runs a WebSocket once the handshake is answered.
pub type Upgrade = Box<dyn FnOnce(&mut Socket) + Send>;

const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Whether `req` asks to open a WebSocket (RFC 6455 §4.2.1, version 13).
pub fn is_upgrade(req: &Request) -> bool {
    let has = |name: &str, token: &str| {
        req.header(name)
            .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    };
    req.method == "GET" && has("upgrade", "websocket") && has("connection", "upgrade")
}

/// The answer to a WebSocket handshake: `101` with the accept key and `run` to take over
/// the connection, or `Err(why)` for a handshake this server cannot take.
pub fn accept(req: &Request, run: Upgrade) -> Result<Response, String> {
    if req.header("sec-websocket-version").map(str::trim) != Some("13") {
        return Err("a WebSocket handshake needs 'Sec-WebSocket-Version: 13'".into());
    }
    let key = req
        .header("sec-websocket-key")
        .map(str::trim)
        .filter(|k| k.len() == 24)
        .ok_or("a WebSocket handshake needs a 'Sec-WebSocket-Key' of 16 bytes in base64")?;
    let mut answer = Response::new(101, "", Vec::new());
    answer.headers = vec![
        ("Upgrade".into(), "websocket".into()),
        ("Connection".into(), "Upgrade".into()),
        ("Sec-WebSocket-Accept".into(), accept_key(key)),
    ];
    answer.upgrade = Some(run);
    Ok(answer)
}

/// `Sec-WebSocket-Accept` for a client's key.
pub fn accept_key(key: &str) -> String {
    base64(&sha1(format!("{key}{GUID}").as_bytes()))
}

/// Why a socket stopped giving messages.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// The client closed, went away, or missed a deadline.
    Gone,
    /// The client broke the protocol; the socket was closed with this status.
    Violation(u16, &'static str),
}

/// An open WebSocket on a server connection.
pub struct Socket {
    reader: BufReader<Deadline>,
    stream: Arc<TcpStream>,
    /// How long the next message may be waited for.
    pub idle: Duration,
    /// Once a frame has begun, how long its rest may take.
    frame_timeout: Duration,
    write_timeout: Duration,
    closed: bool,
}

impl Socket {
    pub(super) fn new(
        reader: BufReader<Deadline>,
        stream: Arc<TcpStream>,
        limits: &super::Limits,
    ) -> Socket {
        Socket {
            reader,
            stream,
            idle: limits.request_timeout,
            frame_timeout: limits.request_timeout,
            write_timeout: limits.write_timeout,
            closed: false,
        }
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), End> {
        self.reader.read_exact(buf).map_err(|_| End::Gone)
    }

    /// The next text message; pings are answered and pongs skipped on the way.
    pub fn recv(&mut self) -> Result<String, End> {
        if self.closed {
            return Err(End::Gone);
        }
        let mut message: Vec<u8> = Vec::new();
        let mut started = false;
        loop {
            self.reader.get_mut().until = Instant::now() + self.idle;
            let mut head = [0u8; 2];
            self.read_exact(&mut head[..1])?;
            self.reader.get_mut().until = Instant::now() + self.frame_timeout;
            self.read_exact(&mut head[1..])?;
            let fin = head[0] & 0x80 != 0;
            let opcode = head[0] & 0x0f;
            if head[0] & 0x70 != 0 {
                return Err(self.violate(1002, "reserved bits set (no extension was agreed)"));
            }
            if head[1] & 0x80 == 0 {
                return Err(self.violate(1002, "a client's frames must be masked"));
            }
            let len = match head[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.read_exact(&mut b)?;
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.read_exact(&mut b)?;
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let control = opcode & 0x08 != 0;
            if control && (len > 125 || !fin) {
                return Err(self.violate(1002, "a control frame must be short and whole"));
            }
            if !control && message.len() as u64 + len > MAX_MESSAGE as u64 {
                return Err(self.violate(1009, "message too large"));
            }
            let mut mask = [0u8; 4];
            self.read_exact(&mut mask)?;
            let mut payload = vec![0u8; len as usize];
            self.read_exact(&mut payload)?;
            for (i, b) in payload.iter_mut().enumerate() {
                *b ^= mask[i % 4];
            }
            match opcode {
                0x8 => {
                    let code = payload
                        .get(..2)
                        .map_or(1000, |c| u16::from_be_bytes([c[0], c[1]]));
                    self.close(if code == 1005 { 1000 } else { code }, "");
                    return Err(End::Gone);
                }
                0x9 => {
                    if !self.frame(0xA, &payload) {
                        return Err(End::Gone);
                    }
                }
                0xA => {}
                0x1 | 0x2 if started => {
                    return Err(self.violate(1002, "a new message began inside another"));
                }
                0x1 => {
                    started = true;
                    message = payload;
                }
                0x2 => return Err(self.violate(1003, "this server takes text messages only")),
                0x0 if started => message.extend_from_slice(&payload),
                _ => return Err(self.violate(1002, "unexpected frame")),
            }
            if started && fin && !control {
                return String::from_utf8(message)
                    .map_err(|_| self.violate(1007, "a text message must be UTF-8"));
            }
        }
    }

    /// Send one text message; false when the client did not take it in time (the
    /// connection is then closed).
    pub fn send(&mut self, text: &str) -> bool {
        !self.closed && self.frame(0x1, text.as_bytes())
    }

    fn frame(&mut self, opcode: u8, payload: &[u8]) -> bool {
        let mut out = Vec::with_capacity(payload.len() + 10);
        out.push(0x80 | opcode);
        match payload.len() {
            n if n < 126 => out.push(n as u8),
            n if n <= 0xffff => {
                out.push(126);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                out.push(127);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        out.extend_from_slice(payload);
        let ok = super::write_by(&self.stream, &out, Instant::now() + self.write_timeout);
        if !ok {
            self.closed = true;
            let _ = self.stream.shutdown(std::net::Shutdown::Both);
        }
        ok
    }

    /// Close with a status and a reason (sent once; later sends are refused).
    pub fn close(&mut self, code: u16, reason: &str) {
        if self.closed {
            return;
        }
        let mut payload = code.to_be_bytes().to_vec();
        payload.extend(reason.bytes().take(120));
        self.frame(0x8, &payload);
        self.closed = true;
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
    }

    fn violate(&mut self, code: u16, why: &'static str) -> End {
        self.close(code, why);
        End::Violation(code, why)
    }
}

/// SHA-1 (FIPS 180-4) of `data`: only the handshake's accept key uses it.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i / 20 {
                0 => ((b & c) | (!b & d), 0x5A827999),
                1 => (b ^ c ^ d, 0x6ED9EBA1),
                2 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

/// Standard base64 with padding.
fn base64(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accept_key_is_the_rfcs_example() {
        // RFC 6455 §1.3.
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(
            sha1(b"abc")
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>(),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
    }
}
