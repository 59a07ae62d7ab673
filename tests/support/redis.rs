//! A real `redis-server` for one test: a free loopback port (bind 127.0.0.1:0, close, pass it:
//! redis has no `--port 0`), no persistence, a temp dir; killed when the guard drops. A missing
//! `redis-server` fails the test with how to install it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running redis-server (killed on drop).
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port");
    l.local_addr().expect("local addr").port()
}

/// True when `PING` on `port` answers `+PONG`.
fn pong(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

impl RedisServer {
    /// Starts one on a free port and waits until it answers.
    pub fn start() -> Self {
        for _ in 0..5 {
            let mut s = Self {
                child: None,
                port: free_port(),
                dir: tempfile::tempdir().expect("temp dir for redis-server"),
            };
            if s.spawn() {
                return s;
            }
        }
        panic!("redis-server did not come up on a free loopback port in 5 tries");
    }

    /// (Re)starts the server on its port; false if it did not answer within 5 s.
    fn spawn(&mut self) -> bool {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--dir", &self.dir.path().display().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => panic!(
                "redis-server is required for this test but could not be run ({e}); install it \
                 (Debian: apt-get install redis-server; macOS: brew install redis) so \
                 `redis-server` is on PATH"
            ),
        };
        // 500 × 10 ms (and the PING round trips): about 5 s.
        for _ in 0..500 {
            if pong(self.port) {
                self.child = Some(child);
                return true;
            }
            if let Ok(Some(_)) = child.try_wait() {
                return false; // exited: most likely the port was taken meanwhile
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server (SIGKILL) and waits for it: its data is gone.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port (empty, as after a restart without persistence).
    pub fn restart(&mut self) {
        self.kill();
        assert!(
            self.spawn(),
            "redis-server did not restart on port {}",
            self.port
        );
    }

    /// `redis-cli -p PORT ARGS...`, its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli (ships with redis-server) must be on PATH");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
