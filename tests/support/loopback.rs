//! The stand-in gateways' one HTTP/1.1 reader and writer (a request read to the end of its body,
//! an answer with `connection: close`), for loopback servers a test runs on a thread of its own.

use std::io::{Read, Write};
use std::net::TcpStream;

/// Reads one request: the head, then as many body bytes as its `content-length` says (or until
/// the peer closes).
pub fn read_request(s: &mut TcpStream) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n) = s.read(&mut chunk) {
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                break;
            }
        }
    }
    buf
}

/// Writes one whole answer and lets the connection close.
pub fn answer(s: &mut TcpStream, status: &str, ctype: &str, body: &str) {
    let resp = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(resp.as_bytes());
}

/// A free loopback port (bound and released: another process may take it first, so a server
/// that binds it must fail loudly).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// One non-streamed chat completion for `model` to the mock upstream on `upstream` with bearer
/// `token`, as a gateway would relay a turn; true when it answered 2xx.
pub fn relay(upstream: u16, token: &str, model: &str) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return false;
    };
    let body = format!(
        r#"{{"model":"{model}","stream":false,"max_tokens":8,"messages":[{{"role":"user","content":"hi"}}]}}"#
    );
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{upstream}\r\n\
         authorization: Bearer {token}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 2")
}
