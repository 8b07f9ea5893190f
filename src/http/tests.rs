//! HTTP server tests: requests read off a byte stream, queries decoded, the `Host` rule;
//! and a real accept loop on loopback with its worker start made to fail, its connection
//! cap filled, a request trickled past its deadline, an answer never read, a client gone.

use super::server::{Job, accept_loop};
use super::*;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

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

#[test]
fn a_loopback_server_answers_to_loopback_names_and_addresses_only() {
    let local = Hosts::local(&[]);
    for ok in [
        "127.0.0.1:8766",
        "127.0.0.1",
        "localhost:8766",
        "LOCALHOST.",
        "app.localhost:9",
        "[::1]:8766",
        "[::1]",
        "10.1.2.3:80",
    ] {
        assert!(local.allows(ok), "{ok}");
    }
    for bad in [
        "evil.example:8766",
        "evil.example",
        "localhost.evil.example",
        "127.0.0.1.nip.io:8766",
        "localhost:http",
        "[::1",
        "",
    ] {
        assert!(!local.allows(bad), "{bad}");
    }
    let named = Hosts::local(&["Box.lan".to_string()]);
    assert!(named.allows("box.lan:8766") && !named.allows("other.lan"));
    assert!(Hosts::local(&["*".to_string()]).allows("anything.example"));
    assert!(Hosts::for_bind("0.0.0.0".parse().unwrap(), &[]).allows("box.lan:1"));
    assert!(!Hosts::for_bind("127.0.0.1".parse().unwrap(), &[]).allows("box.lan:1"));
}

/// A server on a free loopback port, started with `spawn` as its way to start workers and
/// a handler that answers `/big` with 8 MiB and anything else with "ok".
fn start(limits: Limits, spawn: impl Fn(Job) -> std::io::Result<()> + Send + 'static) -> String {
    let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let config = Config {
        limits,
        hosts: Hosts::local(&[]),
        refusal: |status, why| Response::text(status, why),
    };
    let handler = Arc::new(|req: &Request| {
        if req.path == "/big" {
            Response::new(200, "text/plain", vec![b'x'; 8 << 20])
        } else {
            Response::text(200, "ok")
        }
    });
    std::thread::spawn(move || accept_loop(listener, handler, config, spawn));
    addr
}

/// Threads that run workers, counting those alive in `live`.
fn counted(live: Arc<AtomicUsize>) -> impl Fn(Job) -> std::io::Result<()> + Send + 'static {
    move |job: Job| {
        let live = Arc::clone(&live);
        live.fetch_add(1, Ordering::SeqCst);
        std::thread::spawn(move || {
            job();
            live.fetch_sub(1, Ordering::SeqCst);
        });
        Ok(())
    }
}

/// The status of one request on a new connection (0: closed without an answer).
fn status_of(addr: &str, path: &str) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out)
        .get(9..12)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Wait (up to a minute) for `cond`; whether it came.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..600 {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[test]
fn a_worker_that_cannot_start_is_a_503_and_the_server_goes_on() {
    let refused = Arc::new(AtomicUsize::new(0));
    let live = Arc::new(AtomicUsize::new(0));
    let spawn = {
        let (refused, live) = (Arc::clone(&refused), Arc::clone(&live));
        let threads = counted(live);
        // The first two workers cannot start (as when the system refuses a thread).
        move |job: Job| {
            if refused.fetch_add(1, Ordering::SeqCst) < 2 {
                return Err(std::io::Error::other("Resource temporarily unavailable"));
            }
            threads(job)
        }
    };
    let addr = start(Limits::default(), spawn);
    assert_eq!(status_of(&addr, "/"), 503);
    assert_eq!(status_of(&addr, "/"), 503);
    assert_eq!(status_of(&addr, "/"), 200, "the accept loop lives on");
}

#[test]
fn connections_beyond_the_cap_are_refused_and_their_places_come_back() {
    let live = Arc::new(AtomicUsize::new(0));
    let limits = Limits {
        max_connections: 3,
        ..Limits::default()
    };
    let addr = start(limits, counted(Arc::clone(&live)));
    // Three idle connections take every place; the next hundred are refused at once.
    let idle: Vec<TcpStream> = (0..3).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    assert!(eventually(|| live.load(Ordering::SeqCst) == 3));
    let refused = (0..100).filter(|_| status_of(&addr, "/") == 503).count();
    assert_eq!(refused, 100);
    assert_eq!(live.load(Ordering::SeqCst), 3, "no worker beyond the cap");
    drop(idle);
    assert!(eventually(|| status_of(&addr, "/") == 200));
}

#[test]
fn a_trickled_request_is_cut_at_its_deadline() {
    let live = Arc::new(AtomicUsize::new(0));
    let limits = Limits {
        max_connections: 4,
        request_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let addr = start(limits, counted(Arc::clone(&live)));
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    write!(s, "GET / HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").unwrap();
    // A byte of header every 50 ms: each read is quick, the request never completes.
    let mut sent = 0;
    let closed = loop {
        if sent == 1200 {
            break false;
        }
        if s.write_all(b"a").is_err() {
            break true;
        }
        sent += 1;
        let mut buf = [0u8; 64];
        match s.read(&mut buf) {
            Ok(0) => break true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            _ => break true,
        }
    };
    assert!(closed, "the server still waits after {sent} trickled bytes");
    assert!(eventually(|| live.load(Ordering::SeqCst) == 0));
}

#[test]
fn a_client_that_never_reads_its_answer_frees_its_worker() {
    let live = Arc::new(AtomicUsize::new(0));
    let limits = Limits {
        max_connections: 1,
        write_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let addr = start(limits, counted(Arc::clone(&live)));
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(s, "GET /big HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    // 8 MiB do not fit the socket buffers; the client reads nothing.
    assert!(eventually(|| live.load(Ordering::SeqCst) == 1));
    assert!(eventually(|| live.load(Ordering::SeqCst) == 0));
    assert_eq!(status_of(&addr, "/"), 200);
    drop(s);
}

#[test]
fn a_request_for_another_host_name_is_refused() {
    let addr = start(Limits::default(), counted(Arc::new(AtomicUsize::new(0))));
    let ask = |host: Option<&str>| {
        let mut s = TcpStream::connect(&addr).unwrap();
        let host = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
        write!(s, "GET / HTTP/1.1\r\n{host}Connection: close\r\n\r\n").unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    assert!(ask(Some(&addr)).starts_with("HTTP/1.1 200"));
    assert!(ask(Some("localhost:1")).starts_with("HTTP/1.1 200"));
    let rebound = ask(Some("rebind.evil.example:8766"));
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    assert!(rebound.contains("rebind.evil.example"), "{rebound}");
    assert!(ask(None).starts_with("HTTP/1.1 400"));
}

#[test]
fn a_closed_client_is_noticed_while_its_request_is_answered() {
    let (tx, rx) = std::sync::mpsc::channel::<bool>();
    let tx = std::sync::Mutex::new(tx);
    let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let handler = Arc::new(move |req: &Request| {
        let alive_at_first = !req.client_gone();
        let gone = eventually(|| req.client_gone());
        let _ = tx.lock().unwrap().send(alive_at_first && gone);
        Response::text(200, "late")
    });
    std::thread::spawn(move || serve(listener, handler));
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(s, "GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(s);
    assert_eq!(rx.recv_timeout(Duration::from_secs(120)), Ok(true));
}
