//! The edge of every server subcommand (`upstream`, `record`): servers bind loopback unless told
//! otherwise (docs/cli.md), and the first stdout line is `listening on http://HOST:PORT` so a
//! script or test can read the port the kernel chose.

use std::io::Write;
use std::net::SocketAddr;

use tokio::net::TcpListener;

/// Why a server could not start listening. `exit` maps [`ListenError::NotLoopback`] to exit 2
/// (bad usage) and the rest to exit 3.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error(
        "--listen {addr} is not a loopback address; pass --allow-non-loopback to expose the \
         {what} beyond this machine"
    )]
    NotLoopback { addr: SocketAddr, what: String },
    #[error("binding {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("reading the bound address")]
    LocalAddr(#[source] std::io::Error),
}

impl ListenError {
    /// Whether the user asked for it (a flag), rather than the machine refusing.
    pub fn is_usage(&self) -> bool {
        matches!(self, ListenError::NotLoopback { .. })
    }
}

/// Refuses `addr` unless it is loopback or `allow_non_loopback` is set; `what` names the server.
pub(crate) fn check_loopback(
    addr: SocketAddr,
    allow_non_loopback: bool,
    what: &str,
) -> Result<(), ListenError> {
    if addr.ip().is_loopback() || allow_non_loopback {
        return Ok(());
    }
    Err(ListenError::NotLoopback {
        addr,
        what: what.to_string(),
    })
}

/// Binds `addr` and prints `listening on http://ADDR` with the bound port.
pub(crate) async fn bind_announced(addr: SocketAddr) -> Result<TcpListener, ListenError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ListenError::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(ListenError::LocalAddr)?;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening on http://{bound}");
    let _ = out.flush();
    Ok(listener)
}
