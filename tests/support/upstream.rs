//! Helpers for the mock-upstream tests: start an in-process upstream on a loopback port, and a
//! raw HTTP/1.1 client over `TcpStream` that reports exactly how a response ended (clean EOF,
//! RST, or our own deadline).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rehearse::upstream::{Upstream, UpstreamConfig, parse_fault_file, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running in-process upstream.
pub struct TestUpstream {
    pub addr: SocketAddr,
    pub upstream: Arc<Upstream>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

impl TestUpstream {
    /// Stops the server and waits for it (bounded).
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        let r = tokio::time::timeout(Duration::from_secs(5), &mut self.task).await;
        assert!(r.is_ok(), "upstream did not stop within 5 s");
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Starts an upstream with `faults` (a TOML fault file) and `seed`.
pub async fn start(faults: &str, seed: u64) -> TestUpstream {
    let faults = parse_fault_file(faults, "test.toml").expect("test faults parse");
    start_with(UpstreamConfig {
        faults,
        seed,
        ..UpstreamConfig::default()
    })
    .await
}

/// Starts an upstream with `cfg`.
pub async fn start_with(cfg: UpstreamConfig) -> TestUpstream {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let upstream = Upstream::new(cfg);
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, upstream.clone(), async move {
        let _ = rx.await;
    }));
    TestUpstream {
        addr,
        upstream,
        stop: Some(tx),
        task,
    }
}

/// A raw HTTP/1.1 request with `Connection: close`.
pub fn raw(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut r = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" || method == "PUT" {
        r.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    r.push_str("\r\n");
    r.push_str(body);
    r.into_bytes()
}

/// A chat completion body.
pub fn chat_body(model: &str, stream: bool, max_tokens: u32) -> String {
    format!(
        "{{\"model\":\"{model}\",\"stream\":{stream},\"max_tokens\":{max_tokens},\
         \"messages\":[{{\"role\":\"user\",\"content\":\"hi\"}}]}}"
    )
}

/// How a response read ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Clean EOF (FIN).
    Eof,
    /// `ErrorKind::ConnectionReset`.
    Reset,
    /// Our deadline passed with the socket still open.
    Deadline,
    /// Another error.
    Other(io::ErrorKind),
}

/// What a client read.
#[derive(Debug)]
pub struct Got {
    pub bytes: Vec<u8>,
    pub end: End,
    /// The stream, if the deadline ended the read (still open).
    pub stream: Option<TcpStream>,
}

impl Got {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
    /// The status code, if a status line arrived.
    pub fn status(&self) -> Option<u16> {
        let t = self.text();
        let line = t.lines().next()?;
        line.split(' ').nth(1)?.parse().ok()
    }
    /// A header value (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<String> {
        let t = self.text();
        let head = t.split("\r\n\r\n").next()?;
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
    /// The body (after the head; chunked framing left in place).
    pub fn body(&self) -> String {
        let t = self.text();
        t.split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    }
    /// Number of SSE token events (chunks with a content delta).
    pub fn sse_tokens(&self) -> usize {
        self.body().matches("\"delta\":{\"content\":").count()
    }

    /// The SSE `data:` payloads of a chunked SSE body, in order (a cut-off last event is left
    /// out: an event counts once its blank line arrived).
    pub fn sse_events(&self) -> Vec<String> {
        let body = dechunk(&self.body());
        let complete = match body.rfind("\n\n") {
            Some(i) => &body[..i + 2],
            None => "",
        };
        complete
            .split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .map(str::to_string)
            .collect()
    }
}

/// The payload of a `Transfer-Encoding: chunked` body (as far as it arrived; a body that is not
/// chunked comes back as it is).
pub fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            return body.to_string();
        };
        if n == 0 {
            break;
        }
        let take = n.min(after.len());
        out.push_str(&after[..take]);
        rest = after.get(take..).unwrap_or("").trim_start_matches("\r\n");
    }
    out
}

/// Sends `request` to `addr` and reads until EOF, error or `deadline`.
pub async fn exchange(addr: SocketAddr, request: &[u8], deadline: Duration) -> Got {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request).await.expect("write request");
    read_to_end(s, deadline).await
}

/// Reads `s` until EOF, error or `deadline`.
pub async fn read_to_end(mut s: TcpStream, deadline: Duration) -> Got {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 8192];
    let until = tokio::time::Instant::now() + deadline;
    loop {
        match tokio::time::timeout_at(until, s.read(&mut buf)).await {
            Err(_) => {
                return Got {
                    bytes,
                    end: End::Deadline,
                    stream: Some(s),
                };
            }
            Ok(Ok(0)) => {
                return Got {
                    bytes,
                    end: End::Eof,
                    stream: None,
                };
            }
            Ok(Ok(n)) => bytes.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => {
                let end = if e.kind() == io::ErrorKind::ConnectionReset {
                    End::Reset
                } else {
                    End::Other(e.kind())
                };
                return Got {
                    bytes,
                    end,
                    stream: None,
                };
            }
        }
    }
}

/// One `Connection: close` request; returns what came back within 10 s.
pub async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Got {
    exchange(
        addr,
        &raw(method, path, headers, body),
        Duration::from_secs(10),
    )
    .await
}

/// Whether the socket is still open (no EOF, no error, nothing to read right now).
pub fn still_open(s: &TcpStream) -> bool {
    let mut buf = [0u8; 1];
    matches!(s.try_read(&mut buf), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
}

/// A `rehearse upstream` process, killed when dropped.
pub struct UpstreamProcess {
    pub child: std::process::Child,
    pub addr: SocketAddr,
}

impl UpstreamProcess {
    /// Starts `rehearse upstream --listen 127.0.0.1:0 ARGS…` and waits for its listening line.
    pub fn start(args: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(["upstream", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn rehearse upstream");
        let out = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .expect("listening line");
        let addr = line
            .trim_end()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("first line was {line:?}"))
            .parse()
            .expect("listening address");
        Self { child, addr }
    }

    /// SIGTERM, then waits (bounded) and returns what it wrote on stderr.
    pub fn stop(mut self) -> String {
        use std::io::Read;
        let pid = i32::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let mut exited = false;
        for _ in 0..200 {
            if self.child.try_wait().ok().flatten().is_some() {
                exited = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if !exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        err
    }
}

impl Drop for UpstreamProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
