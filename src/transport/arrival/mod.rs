//! When a request reached this host, independent of when our thread got round to reading it.
//!
//! Servers that timestamp arrivals (the recording proxy, the replay receiver, the mock upstream)
//! wrap each accepted stream in [`Stamped`]. It notes the arrival of the first bytes read since
//! the connection last wrote, so a handler's [`ArrivalMark::take`] gives the arrival of its
//! request's first bytes (HTTP/1.1: a request is read after the previous response is written).
//!
//! On Linux the arrival is the kernel's receive timestamp (`SO_TIMESTAMPNS`, delivered with each
//! `recvmsg`). On loopback it is taken when the sender's write enters the stack, so a receiver
//! whose thread wakes 20 ms late on a busy machine still reports when the request was sent.
//! Elsewhere, or when the kernel gives no timestamp, it is the instant the read returned.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// Kernel timestamps older than this are not trusted (the wall clock was stepped).
#[cfg_attr(not(target_os = "linux"), allow(dead_code, reason = "kernel timestamps on Linux only"))]
const MAX_KERNEL_AGE: Duration = Duration::from_secs(60);

/// The arrival of a connection's current request, shared between its stream and its handler.
#[derive(Debug, Default)]
pub(crate) struct ArrivalMark(Mutex<Option<Instant>>);

impl ArrivalMark {
    /// The arrival of the first bytes read since the connection last wrote (and since the last
    /// `take`), if any.
    pub(crate) fn take(&self) -> Option<Instant> {
        self.lock().take()
    }

    /// [`Self::take`], or `now` when nothing was noted (e.g. an HTTP/2 connection).
    pub(crate) fn take_or(&self, now: Instant) -> Instant {
        self.take().unwrap_or(now)
    }

    fn note(&self, at: Instant) {
        self.lock().get_or_insert(at);
    }

    fn clear(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Converts a kernel receive timestamp (wall clock) into an [`Instant`], given the instant and
/// wall time read just now. Without a timestamp, or one in the future or older than a minute
/// (the wall clock moved), the arrival is `now`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code, reason = "kernel timestamps on Linux only"))]
pub(crate) fn arrival_instant(kernel: Option<SystemTime>, now: Instant, wall_now: SystemTime) -> Instant {
    kernel
        .and_then(|k| wall_now.duration_since(k).ok())
        .filter(|age| *age <= MAX_KERNEL_AGE)
        .and_then(|age| now.checked_sub(age))
        .unwrap_or(now)
}

/// Asks the kernel to timestamp what `listener`'s connections receive, from the moment they are
/// established: accepted sockets inherit it, so a request that arrives before the server gets
/// round to `accept` is still stamped. Returns whether the kernel agreed (false off Linux).
///
/// The first such socket on a host switches stamping on from a kernel work queue, so bytes
/// received within moments of that call may carry no stamp; their arrival is then the read time.
pub(crate) fn stamp_listener(listener: &TcpListener) -> bool {
    #[cfg(target_os = "linux")]
    return nix::sys::socket::setsockopt(
        listener,
        nix::sys::socket::sockopt::ReceiveTimestampns,
        &true,
    )
    .is_ok();
    #[cfg(not(target_os = "linux"))]
    {
        let _ = listener;
        false
    }
}

/// An accepted TCP stream that notes arrivals into its [`ArrivalMark`].
#[derive(Debug)]
pub(crate) struct Stamped {
    inner: TcpStream,
    mark: Arc<ArrivalMark>,
    /// Buffers for `recvmsg`, when the kernel agreed to timestamp (Linux).
    #[cfg(target_os = "linux")]
    kernel: Option<linux::Buffers>,
}

impl Stamped {
    /// Wraps `inner`, asking the kernel for receive timestamps where it can give them.
    pub(crate) fn new(inner: TcpStream) -> (Self, Arc<ArrivalMark>) {
        let mark = Arc::new(ArrivalMark::default());
        #[cfg(target_os = "linux")]
        let kernel = linux::enable(&inner).then(linux::Buffers::new);
        let s = Self {
            inner,
            mark: mark.clone(),
            #[cfg(target_os = "linux")]
            kernel,
        };
        (s, mark)
    }

    /// Whether arrivals come from kernel timestamps.
    #[cfg(all(test, target_os = "linux"))] // used by the Linux tests only
    fn kernel_timestamps(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.kernel.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// The wrapped stream.
    pub(crate) fn get_ref(&self) -> &TcpStream {
        &self.inner
    }
}

impl AsyncRead for Stamped {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        #[cfg(target_os = "linux")]
        if let Some(bufs) = this.kernel.as_mut() {
            return linux::poll_read(&this.inner, bufs, &this.mark, cx, buf);
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            this.mark.note(Instant::now());
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Stamped {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        this.mark.clear();
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = ready!(Pin::new(&mut this.inner).poll_write_vectored(cx, bufs))?;
        this.mark.clear();
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(target_os = "linux")]
mod linux;

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn a_kernel_timestamp_becomes_the_instant_that_long_ago() {
        let now = Instant::now();
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let k = wall - Duration::from_micros(2_500);
        assert_eq!(
            arrival_instant(Some(k), now, wall),
            now - Duration::from_micros(2_500)
        );
    }

    #[test]
    fn no_future_or_stale_kernel_timestamp_is_trusted() {
        let now = Instant::now();
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(arrival_instant(None, now, wall), now);
        let future = wall + Duration::from_millis(3);
        assert_eq!(arrival_instant(Some(future), now, wall), now);
        let stale = wall - Duration::from_secs(61);
        assert_eq!(arrival_instant(Some(stale), now, wall), now);
        let old_but_fine = wall - Duration::from_secs(59);
        assert_eq!(
            arrival_instant(Some(old_but_fine), now, wall),
            now - Duration::from_secs(59)
        );
    }

    #[test]
    fn the_mark_keeps_the_first_read_until_taken() {
        let m = ArrivalMark::default();
        let t = Instant::now();
        assert_eq!(m.take(), None);
        m.note(t);
        m.note(t + Duration::from_millis(1));
        assert_eq!(m.take(), Some(t));
        assert_eq!(m.take(), None);
        m.note(t + Duration::from_millis(2));
        m.clear();
        assert_eq!(m.take_or(t), t);
    }

    /// A server that reads 300 ms late still learns when the bytes arrived; after it writes,
    /// the next read is a new arrival.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_late_read_reports_when_the_bytes_arrived() {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        assert!(stamp_listener(&l));
        // The kernel switches receive timestamps on host-wide from a work queue.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut c = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let sent = Instant::now();
        c.write_all(b"first").await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (s, _) = l.accept().await.unwrap();
        let (mut s, mark) = Stamped::new(s);
        assert!(s.kernel_timestamps());
        let mut b = [0u8; 16];
        assert_eq!(s.read(&mut b).await.unwrap(), 5);
        let read_at = Instant::now();
        let at = mark.take().unwrap();
        assert!(read_at >= sent + Duration::from_millis(300));
        let slack = Duration::from_millis(1);
        assert!(
            // The read came ≥ 300 ms after the send; the arrival must be well before it (250 ms
            // leaves room for this task being descheduled between `sent` and the write).
            at + slack >= sent && at < sent + Duration::from_millis(250),
            "arrival {:?} after the send, read {:?} after it",
            at.saturating_duration_since(sent),
            read_at - sent
        );

        s.write_all(b"answer").await.unwrap();
        let sent2 = Instant::now();
        c.write_all(b"second").await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(s.read(&mut b).await.unwrap(), 6);
        let at2 = mark.take().unwrap();
        // A new arrival, not the first request's.
        assert!(at2 + slack >= sent2 && at2 > at);
    }

    /// Short reads clear readiness (one `recvmsg` per request, like tokio's own reads); no
    /// wake-up may be lost by it, and reads that fill the buffer keep going until drained.
    #[tokio::test]
    async fn many_exchanges_and_a_large_payload_lose_no_wake_up() {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        stamp_listener(&l);
        let mut c = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (s, _) = l.accept().await.unwrap();
        let (mut s, mark) = Stamped::new(s);
        let bounded = |what: &'static str| {
            move |r: Result<std::io::Result<usize>, tokio::time::error::Elapsed>| match r {
                Ok(r) => r.unwrap(),
                Err(_) => panic!("{what}: no wake-up within 5 s"),
            }
        };
        let mut b = [0u8; 64];
        for i in 0..300u32 {
            c.write_all(&i.to_be_bytes()).await.unwrap();
            let read = tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await;
            assert_eq!(bounded("small exchange")(read), 4);
            assert_eq!(b[..4], i.to_be_bytes());
            assert!(mark.take().is_some());
            s.write_all(b"ok").await.unwrap();
            let mut two = [0u8; 2];
            c.read_exact(&mut two).await.unwrap();
        }
        let big: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let writer = {
            let big = big.clone();
            tokio::spawn(async move {
                c.write_all(&big).await.unwrap();
                c
            })
        };
        let mut got = vec![0u8; big.len()];
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_exact(&mut got)).await;
        assert_eq!(bounded("large payload")(read), big.len());
        assert_eq!(got, big);
        drop(writer.await.unwrap());
        let eof = tokio::time::timeout(Duration::from_secs(5), s.read(&mut b)).await;
        assert_eq!(bounded("end of stream")(eof), 0);
    }
}
