//! The `redis-server` a fleet run starts itself (`[coordinator] spawn = true`): from PATH, on a
//! free loopback port (bind 127.0.0.1:0, close, pass it: redis has no `--port 0`), no
//! persistence, its working directory inside the run directory. Stopped by its pid when the
//! run ends (and on drop), killed and restarted by a coordinator `down` fault.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::util::watchdog::Watchdog;

/// Why the run's redis-server could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RedisSpawnError {
    /// Not on PATH (or not runnable).
    #[error(
        "`redis-server` could not be run ({0}); install it (macOS: brew install redis; Debian: \
         apt-get install redis-server) or give [coordinator] url = \"redis://HOST:PORT\""
    )]
    Missing(std::io::Error),
    /// It never answered PING.
    #[error("redis-server did not answer on 127.0.0.1:{0} within 5 s")]
    NoAnswer(u16),
    /// No loopback port.
    #[error("no free loopback port for redis-server: {0}")]
    Port(std::io::Error),
}

/// A running redis-server (stopped on drop).
#[derive(Debug)]
pub(crate) struct SpawnedRedis {
    child: Option<Child>,
    /// Stops it if the run dies without stopping it.
    guard: Option<Watchdog>,
    port: u16,
    dir: PathBuf,
}

fn free_port() -> Result<u16, RedisSpawnError> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(RedisSpawnError::Port)?;
    Ok(l.local_addr().map_err(RedisSpawnError::Port)?.port())
}

/// True when `PING` on `port` answers `+PONG`.
pub(crate) fn pong(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

impl SpawnedRedis {
    /// Starts one with its working directory `dir` (created) and waits until it answers.
    pub(crate) fn start(dir: &Path) -> Result<Self, RedisSpawnError> {
        std::fs::create_dir_all(dir).map_err(RedisSpawnError::Missing)?;
        let mut last = RedisSpawnError::NoAnswer(0);
        for _ in 0..5 {
            let mut s = Self {
                child: None,
                guard: None,
                port: free_port()?,
                dir: dir.to_path_buf(),
            };
            match s.spawn() {
                Ok(()) => return Ok(s),
                Err(e @ RedisSpawnError::Missing(_)) => return Err(e),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    fn spawn(&mut self) -> Result<(), RedisSpawnError> {
        let mut child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--dir", &self.dir.display().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(RedisSpawnError::Missing)?;
        for _ in 0..500 {
            if pong(self.port) {
                // Stops it should the run die without stopping it (a SIGKILL of the run).
                self.guard = Watchdog::guard(child.id(), false)
                    .map_err(|e| eprintln!("warning: no watchdog over redis-server: {e}"))
                    .ok();
                self.child = Some(child);
                return Ok(());
            }
            if let Ok(Some(_)) = child.try_wait() {
                break; // exited: most likely the port was taken meanwhile
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(RedisSpawnError::NoAnswer(self.port))
    }

    /// `redis://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Its pid while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills it (SIGKILL, by its pid) and reaps it: its data is gone.
    pub(crate) fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(g) = self.guard.take() {
            g.release();
        }
    }

    /// Starts it again on the same port, empty (a restart without persistence).
    pub(crate) fn restart(&mut self) -> Result<(), RedisSpawnError> {
        self.kill();
        self.spawn()
    }
}

impl Drop for SpawnedRedis {
    fn drop(&mut self) {
        self.kill();
    }
}
