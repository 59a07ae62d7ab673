//! The catalogue's stand-in gateways (`tests/support/py/catalogue_gateway.py`): one process per
//! mode on a free loopback port, killed on drop, with the `http` target file that points a run
//! at it (its mock upstream on a port of its own). Shared by tests/catalogue.rs and
//! tests/matrix.rs.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use super::run::repo_root;

/// A free loopback port (released: the process told it binds it).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running stand-in gateway; killed and reaped on drop.
pub struct Cheat {
    child: Child,
    /// Its target file.
    pub target: PathBuf,
}

impl Drop for Cheat {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the stand-in in `mode` (`warmup_only`: answers from its own cache, never asking the
/// upstream; `passthrough`: one request a turn, relayed as it came; `truncate`: as passthrough,
/// a 2xx answer cut to its first half and still finished; `hang`: never answers a turn of the
/// run) and writes its target file in `dir`. The harness waits 60 s for a turn, 12 s for one of
/// the stand-in that hangs.
pub fn start(dir: &Path, mode: &str) -> Cheat {
    let turn_timeout = if mode == "hang" { "12s" } else { "60s" };
    // The stand-in binds a port of the kernel's choice and says which: no other test can take
    // it between a probe and its bind. The upstream's port the harness binds itself.
    let script = repo_root().join("tests/support/py/catalogue_gateway.py");
    let up = free_port();
    let child = Command::new("python3")
        .arg(&script)
        .args([
            "0".to_string(),
            format!("http://127.0.0.1:{up}"),
            "sk-rehearse-key-A".into(),
            mode.into(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is needed for the stand-in gateways (tests/support/py)");
    // Owned by the guard before anything can fail: a panic below still kills it.
    let mut cheat = Cheat {
        child,
        target: dir.join(format!("{mode}-target.toml")),
    };
    let mut line = String::new();
    if let Some(out) = cheat.child.stdout.take() {
        std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).unwrap();
    }
    let gw: u16 = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the stand-in said no port: {line:?}"));
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        &cheat.target,
        format!(
            "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\nhealth_path = \"/health\"\n\
             ready_timeout = \"30s\"\nturn_timeout = \"{turn_timeout}\"\n\n[upstream]\nlisten = \"127.0.0.1:{up}\"\n"
        ),
    )
    .unwrap();
    cheat
}
