//! The edge of every server subcommand (`upstream`, `record`): servers bind loopback unless told
//! otherwise (docs/cli.md), and the first stdout line is `listening on http://HOST:PORT` so a
//! script or test can read the port the kernel chose.

use std::io::Write;
use std::net::SocketAddr;

use anyhow::{Context, anyhow};
use tokio::net::TcpListener;

use crate::exit::CmdError;

/// Exit 2 unless `addr` is loopback or `allow_non_loopback` is set; `what` names the server.
pub fn check_loopback(
    addr: SocketAddr,
    allow_non_loopback: bool,
    what: &str,
) -> Result<(), CmdError> {
    if addr.ip().is_loopback() || allow_non_loopback {
        return Ok(());
    }
    Err(CmdError::bad_input(anyhow!(
        "--listen {addr} is not a loopback address; pass --allow-non-loopback to expose the \
         {what} beyond this machine"
    )))
}

/// Binds `addr` (exit 3 on failure) and prints `listening on http://ADDR` with the bound port.
pub async fn bind_announced(addr: SocketAddr) -> Result<TcpListener, CmdError> {
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))
        .map_err(CmdError::harness)?;
    let bound = listener
        .local_addr()
        .context("reading the bound address")
        .map_err(CmdError::harness)?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening on http://{bound}");
    let _ = out.flush();
    Ok(listener)
}
