//! Per-connection control that faults need below HTTP: a duplicate handle on the accepted TCP
//! socket so a fault can turn the eventual close into an RST (SO_LINGER 0) and can notice the
//! client going away while the server holds a stalled request.

use std::io;
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::time::Duration;

use crate::util::shutdown::Shutdown;
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::transport::arrival::ArrivalMark;
use crate::util::sync::Locked;

use super::serving::Serving;
use super::{Decision, Incoming, Upstream};

/// How often a held (stalled) request checks whether its client is still there.
const HOLD_POLL: Duration = Duration::from_millis(100);

/// A handle on one accepted connection's socket.
#[derive(Debug)]
pub(crate) struct ConnCtl {
    /// A dup of the socket's descriptor; socket options set through it apply to the socket.
    /// `None` if dup failed (then faults degrade: resets become plain closes).
    sock: Option<socket2::Socket>,
    /// Fires when the server is shutting down.
    stop: Shutdown,
    /// When the current request's first bytes arrived.
    arrival: Arc<ArrivalMark>,
    /// The current request's serving, from its admission until its handler returns (then its
    /// body carries it, [`super::serving::ServedBody`]); dropped with the connection.
    serving: std::sync::Mutex<Option<Serving>>,
}

/// The error a handler returns to make hyper drop the connection without writing anything.
#[derive(Debug, thiserror::Error)]
#[error("connection cut by an injected fault")]
pub(crate) struct Cut;

impl ConnCtl {
    /// Wraps `stream`'s socket.
    pub(super) fn new(stream: &TcpStream, stop: Shutdown, arrival: Arc<ArrivalMark>) -> Self {
        let sock = socket2::SockRef::from(stream).try_clone().ok();
        Self {
            sock,
            stop,
            arrival,
            serving: std::sync::Mutex::new(None),
        }
    }

    /// Admits the current request ([`Upstream::admit_served`]) at its arrival, keeping its
    /// serving until [`ConnCtl::take_serving`].
    pub(super) fn admit(&self, up: &Upstream, inc: &Incoming<'_>) -> Option<Decision> {
        let (decision, serving) = up.admit_served(inc, self.arrived(), std::time::SystemTime::now());
        *self.serving.locked() = serving;
        decision
    }

    /// The current request's serving, once its handler returned.
    pub(super) fn take_serving(&self) -> Option<Serving> {
        self.serving.locked().take()
    }

    /// When the current request's first bytes reached the host (see [`ArrivalMark`]); the
    /// instant fault windows and arrival times are measured at.
    pub(super) fn arrived(&self) -> Instant {
        self.arrival.take_or(Instant::now())
    }

    /// Makes the connection's close an RST: zero linger. The caller then returns [`Cut`] so hyper
    /// drops the socket; the last close of the descriptor sends the RST.
    pub(super) fn arm_reset(&self) {
        if let Some(s) = &self.sock {
            let _ = s.set_linger(Some(Duration::ZERO));
        }
    }

    /// Whether the client closed or reset its end (a non-blocking peek).
    fn peer_gone(&self) -> bool {
        let Some(s) = &self.sock else { return false };
        let mut buf = [MaybeUninit::<u8>::uninit(); 1];
        match s.recv_with_flags(&mut buf, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ),
        }
    }

    /// Waits until the client goes away or the server stops.
    pub(super) async fn hold(&self) {
        loop {
            if self.stop.is_requested() || self.peer_gone() {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(HOLD_POLL) => {}
                _ = self.stop.requested() => return,
            }
        }
    }

    /// The server's stop request.
    pub(super) fn stop(&self) -> Shutdown {
        self.stop.clone()
    }
}
