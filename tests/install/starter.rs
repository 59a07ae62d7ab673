//! `rehearse init --gateway http` runs as written: its README's setup — a gateway at
//! 127.0.0.1:18789 whose provider calls 127.0.0.1:18790/v1 with key sk-rehearse-key-A — played by
//! the stand-in gateway `tests/target_openclaw/fake_gateway.py`, and the run passes; a gateway
//! that answers without ever calling its provider is never green.

use std::process::{Child, Command, Stdio};

use super::show;

/// The stand-in gateway in `mode` on the starter's addresses.
struct Gateway(Child);

impl Gateway {
    fn start(mode: &str) -> Self {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/target_openclaw/fake_gateway.py"
        );
        let child = Command::new("python3")
            .args([
                script,
                "18789",
                "http://127.0.0.1:18790",
                "sk-rehearse-key-A",
                mode,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs the stand-in gateway");
        let t = std::time::SystemTime::now();
        while std::net::TcpStream::connect(("127.0.0.1", 18789)).is_err() {
            assert!(
                t.elapsed().is_ok_and(|e| e.as_secs() < 20),
                "the stand-in gateway never listened on 18789 (is the port taken?)"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Gateway(child)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_http_starter_runs_as_written_and_a_gateway_that_never_calls_its_provider_is_not_green() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_rehearse");
    let out = Command::new(bin)
        .current_dir(tmp.path())
        .args(["init", "proj", "--gateway", "http"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let proj = tmp.path().join("proj");
    let readme = std::fs::read_to_string(proj.join("README.md")).unwrap();
    assert!(
        readme.contains("http://127.0.0.1:18789")
            && readme.contains("http://127.0.0.1:18790/v1")
            && readme.contains("sk-rehearse-key-A"),
        "{readme}"
    );
    let run = || {
        Command::new(bin)
            .current_dir(&proj)
            .args(["--scenario", "my-gateway-503", "--no-progress"])
            .env_remove("REHEARSE_SCENARIOS")
            .output()
            .unwrap()
    };
    {
        let _gw = Gateway::start("proxy");
        let out = run();
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("my-gateway-503: pass"),
            "{}",
            show(&out)
        );
    }
    {
        let _gw = Gateway::start("silent");
        let out = run();
        assert_ne!(out.status.code(), Some(0), "{}", show(&out));
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains(": pass"),
            "{}",
            show(&out)
        );
    }
}
