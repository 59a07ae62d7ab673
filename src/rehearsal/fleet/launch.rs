//! Starting one host process: its spec written into its directory, `rehearse __fleet-host`
//! spawned with piped stdin/stdout (stderr to `stderr.log`, killed if dropped), and its
//! `metrics ADDR` line awaited.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout;

use crate::rehearsal::fleet::error::FleetError;
use crate::rehearsal::fleet::spec::HostSpec;

/// How long a host may take to bind its `/metrics` and say so.
const HOST_READY: Duration = Duration::from_secs(30);

/// A started host process.
#[derive(Debug)]
pub(super) struct Proc {
    pub id: String,
    pub skew_ms: i64,
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: Lines<BufReader<ChildStdout>>,
    pub metrics: SocketAddr,
}

/// Starts the host of `spec` in `dir` and waits until it serves `/metrics`.
pub(super) async fn start_host(spec: &HostSpec, dir: &Path) -> Result<Proc, FleetError> {
    let fail = |why: String| FleetError::Host {
        host: spec.id.clone(),
        why,
    };
    std::fs::create_dir_all(dir).map_err(|e| fail(format!("creating {}: {e}", dir.display())))?;
    let spec_path = dir.join("spec.json");
    let json = serde_json::to_vec_pretty(spec).map_err(|e| fail(e.to_string()))?;
    crate::util::write_atomic(&spec_path, &json)
        .map_err(|e| fail(format!("writing {}: {e}", spec_path.display())))?;
    let stderr = std::fs::File::create(dir.join("stderr.log"))
        .map_err(|e| fail(format!("creating stderr.log: {e}")))?;
    let exe = crate::util::proc::self_exe()
        .map_err(|e| fail(format!("finding the rehearse executable: {e}")))?;
    let mut child = Command::new(&exe)
        .arg("__fleet-host")
        .arg("--spec")
        .arg(&spec_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| fail(format!("starting {}: {e}", exe.display())))?;
    let stdin = child.stdin.take();
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| fail("no stdout".into()))?;
    let mut lines = BufReader::new(stdout).lines();
    let first = timeout(HOST_READY, lines.next_line()).await;
    let addr = match first {
        Ok(Ok(Some(l))) => l
            .strip_prefix("metrics ")
            .and_then(|a| a.trim().parse::<SocketAddr>().ok())
            .ok_or_else(|| fail(format!("said {l:?} instead of `metrics ADDR`")))?,
        Ok(_) => {
            let why = std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default();
            return Err(fail(format!("exited before it was ready: {}", why.trim())));
        }
        Err(_) => return Err(fail(format!("not ready within {HOST_READY:?}"))),
    };
    Ok(Proc {
        id: spec.id.clone(),
        skew_ms: spec.skew_ms,
        child,
        stdin,
        lines,
        metrics: addr,
    })
}
