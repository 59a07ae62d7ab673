//! The stand-in gateway the `http`-kind tests run in front of the mock upstream
//! (`fake_gateway.py`, a Python process), started on a free loopback port and killed by its
//! handle when the test ends, whatever happens.

use std::process::{Child, Command, Stdio};

/// A free loopback port (bound and released: a small race, tolerable in tests).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `fake_gateway.py` on `port` in front of the upstream on `up`, with its keys (comma
/// separated) and its mode's arguments (`router`, `strip`, `litellm`, `proxy 3`, …).
pub struct StandIn(Child);

impl StandIn {
    pub fn start(port: u16, up: u16, keys: &str, mode: &[&str]) -> Self {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/target_openclaw/fake_gateway.py"
        );
        let child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(format!("http://127.0.0.1:{up}"))
            .arg(keys)
            .args(mode)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the stand-in gateway");
        let t = tokio::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed().as_secs() < 20,
                "the stand-in gateway never listened"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        StandIn(child)
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
