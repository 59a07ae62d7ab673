//! Linux kernel receive timestamps: `SO_TIMESTAMPNS` on the socket, then `recvmsg` with a
//! control buffer, so each read returns the kernel's arrival time of its first bytes.

use std::io::{self, IoSliceMut};
use std::os::fd::AsRawFd;
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg, setsockopt, sockopt};
use nix::sys::time::TimeSpec;
use tokio::io::{Interest, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::{ArrivalMark, arrival_instant};

/// Bytes one read takes at most (hyper asks for 8 KiB at first).
const SCRATCH: usize = 16 * 1024;

/// `recvmsg` writes into initialised memory only, and hyper's read buffer is not: reading
/// into a scratch buffer zeroed once and copying the bytes read costs less than zeroing
/// hyper's buffer on every read.
#[derive(Debug)]
pub(super) struct Buffers {
    scratch: Vec<u8>,
    /// Room for one `SCM_TIMESTAMPNS` control message.
    control: Vec<u8>,
}

impl Buffers {
    pub(super) fn new() -> Self {
        Self {
            scratch: vec![0; SCRATCH],
            control: nix::cmsg_space!(TimeSpec),
        }
    }
}

/// Asks for `SO_TIMESTAMPNS`; false if the kernel refuses.
pub(super) fn enable(s: &TcpStream) -> bool {
    setsockopt(s, sockopt::ReceiveTimestampns, &true).is_ok()
}

pub(super) fn poll_read(
    s: &TcpStream,
    bufs: &mut Buffers,
    mark: &ArrivalMark,
    cx: &mut Context<'_>,
    buf: &mut ReadBuf<'_>,
) -> Poll<io::Result<()>> {
    loop {
        ready!(s.poll_read_ready(cx))?;
        let want = buf.remaining().min(bufs.scratch.len());
        let Buffers { scratch, control } = &mut *bufs;
        let dst = &mut scratch[..want];
        // As tokio's own `poll_read` does: a short read drained the socket, so readiness is
        // cleared (by answering `WouldBlock` to `try_io`, whose readiness tick makes that
        // race-free) and the next read waits for epoll instead of paying an EAGAIN.
        let mut got = None;
        let r = s.try_io(Interest::READABLE, || {
            let (n, kernel) = recv(s, dst, control)?;
            got = Some((n, kernel));
            if n > 0 && n < want {
                Err(io::ErrorKind::WouldBlock.into())
            } else {
                Ok(())
            }
        });
        match (got, r) {
            (Some((n, kernel)), _) => {
                if n > 0 {
                    mark.note(arrival_instant(kernel, Instant::now(), SystemTime::now()));
                }
                buf.put_slice(&scratch[..n]);
                return Poll::Ready(Ok(()));
            }
            (None, Ok(())) => continue,
            (None, Err(e)) if e.kind() == io::ErrorKind::WouldBlock => continue,
            (None, Err(e)) => return Poll::Ready(Err(e)),
        }
    }
}

/// One `recvmsg`: bytes read and the kernel's receive timestamp, if it gave one.
fn recv(
    s: &TcpStream,
    dst: &mut [u8],
    control: &mut [u8],
) -> io::Result<(usize, Option<SystemTime>)> {
    let mut iov = [IoSliceMut::new(dst)];
    let msg = recvmsg::<()>(
        s.as_raw_fd(),
        &mut iov,
        Some(control),
        MsgFlags::MSG_DONTWAIT,
    )?;
    let mut at = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::ScmTimestampns(ts) = c
                && let (Ok(secs), Ok(nanos)) =
                    (u64::try_from(ts.tv_sec()), u32::try_from(ts.tv_nsec()))
            {
                at = UNIX_EPOCH.checked_add(Duration::new(secs, nanos));
            }
        }
    }
    Ok((msg.bytes, at))
}
