//! When the upstream finished serving a request: [`Serving`], the guard a request's record
//! ([`super::UpstreamRecord::seq`]) is ended through, and [`ServedBody`], the response body
//! that carries it to the end. The end is the instant the last frame of the body was handed to
//! the connection (`whole` when the decision sends the whole answer), or the instant serving
//! stopped short: the body failed (a reset or cut the fault makes), the handler gave up (a stall
//! whose client went away), or the connection was dropped (the client went away, the server
//! stopped) — whichever drops the guard first. Every sink hears of it through
//! [`super::RecordSink::done`]; the time is a pure function of the `now` it is ended at.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tokio::time::Instant;

use super::RecordSink;

/// The serving of one recorded request, ended once: by [`Serving::complete_at`] when its
/// response went out to its last byte, else (dropped) as cut short at the drop.
pub(crate) struct Serving {
    seq: u64,
    /// The instant its `t_ms` counts from (the run's start, or the warm-up's, at its arrival).
    start: Instant,
    /// Whether the response, once out to its last byte, is the whole answer.
    whole_answer: bool,
    sinks: Vec<Arc<dyn RecordSink>>,
    ended: bool,
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving")
            .field("seq", &self.seq)
            .field("whole_answer", &self.whole_answer)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

/// Milliseconds from `start` to `now` (zero when `now` is earlier), saturating.
pub(crate) fn ms_since(start: Instant, now: Instant) -> u64 {
    u64::try_from(now.saturating_duration_since(start).as_millis()).unwrap_or(u64::MAX)
}

impl Serving {
    /// The serving of request `seq`, whose times count from `start`, told to `sinks`.
    pub(crate) fn new(
        seq: u64,
        start: Instant,
        whole_answer: bool,
        sinks: Vec<Arc<dyn RecordSink>>,
    ) -> Self {
        Self {
            seq,
            start,
            whole_answer,
            sinks,
            ended: false,
        }
    }

    /// Its response went out to its last byte at `now`.
    pub(crate) fn complete_at(mut self, now: Instant) {
        self.end_at(now, true);
    }

    /// Ends it at `now`: `complete` when the response went out to its last byte.
    fn end_at(&mut self, now: Instant, complete: bool) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        let done_ms = ms_since(self.start, now);
        let whole = complete && self.whole_answer;
        for s in &self.sinks {
            s.done(self.seq, done_ms, whole);
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.end_at(Instant::now(), false);
    }
}

/// A response body that ends its request's [`Serving`]: complete when its last frame was
/// polled (or it was empty), cut when it failed or was dropped before that.
pub(crate) struct ServedBody<B> {
    inner: B,
    serving: Option<Serving>,
}

impl<B: HttpBody + Unpin> ServedBody<B> {
    /// `inner` ending `serving` (none: a request the upstream keeps no record of).
    pub(crate) fn wrap(inner: B, serving: Option<Serving>) -> Self {
        let serving = match serving {
            // Nothing to send after the head (an upgrade, an empty answer): done with it.
            Some(s) if inner.is_end_stream() => {
                s.complete_at(Instant::now());
                None
            }
            other => other,
        };
        ServedBody { inner, serving }
    }
}

impl<B: HttpBody + Unpin> HttpBody for ServedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(None) => {
                if let Some(s) = self.serving.take() {
                    s.complete_at(Instant::now());
                }
            }
            Poll::Ready(Some(Ok(_))) if self.inner.is_end_stream() => {
                // Its last frame: hyper may not poll again before it drops the body.
                if let Some(s) = self.serving.take() {
                    s.complete_at(Instant::now());
                }
            }
            // Dropped: ends as cut, now.
            Poll::Ready(Some(Err(_))) => drop(self.serving.take()),
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::routes::BoxError;
    use crate::upstream::{MemoryRecords, UpstreamRecord};
    use bytes::Bytes;
    use http_body_util::BodyExt;
    use std::time::Duration;

    fn memory_with(seq: u64) -> Arc<MemoryRecords> {
        let m = Arc::new(MemoryRecords::default());
        let mut r =
            UpstreamRecord::llm_for_test(1_000, 0, "mockai/default/fp".into(), None, None, None);
        r.seq = Some(seq);
        m.record(&r);
        m
    }

    #[tokio::test(start_paused = true)]
    async fn a_completed_serving_ends_at_its_instant_whole_a_dropped_one_cut_at_the_drop() {
        let start = Instant::now();
        let m = memory_with(7);
        let sinks: Vec<Arc<dyn RecordSink>> = vec![m.clone()];
        let s = Serving::new(7, start, true, sinks.clone());
        tokio::time::advance(Duration::from_millis(20_500)).await;
        s.complete_at(Instant::now());
        let r = m.take();
        assert_eq!((r[0].done_ms, r[0].whole), (Some(20_500), Some(true)));

        // The client went away at 3 s: dropped, not whole whatever the decision would send.
        let m = memory_with(8);
        let s = Serving::new(8, Instant::now(), true, vec![m.clone()]);
        tokio::time::advance(Duration::from_secs(3)).await;
        drop(s);
        let r = m.take();
        assert_eq!((r[0].done_ms, r[0].whole), (Some(3_000), Some(false)));

        // A refusal sent to its last byte is served, never whole.
        let m = memory_with(9);
        Serving::new(9, Instant::now(), false, vec![m.clone()]).complete_at(Instant::now());
        assert_eq!(m.take()[0].whole, Some(false));
    }

    #[tokio::test(start_paused = true)]
    async fn the_end_counts_from_the_start_it_arrived_under_and_never_panics_before_it() {
        let start = Instant::now() + Duration::from_secs(5);
        assert_eq!(ms_since(start, Instant::now()), 0, "an instant before the start is 0");
        let m = memory_with(1);
        Serving::new(1, start, true, vec![m.clone()]).complete_at(start + Duration::from_secs(2));
        assert_eq!(m.take()[0].done_ms, Some(2_000));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_ends_its_serving_at_its_last_frame_or_as_cut_when_it_fails() {
        use futures_util::stream;
        use http_body_util::StreamBody;
        let pieces = |fail: bool| {
            let s = stream::unfold(0u8, move |i| async move {
                match i {
                    0 | 1 => {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        Some((Ok(Frame::data(Bytes::from_static(b"x"))), i + 1))
                    }
                    2 if fail => Some((Err(Box::new(crate::upstream::conn::Cut) as BoxError), 3)),
                    _ => None,
                }
            });
            StreamBody::new(s).boxed_unsync()
        };
        for (fail, whole) in [(false, true), (true, false)] {
            let m = memory_with(3);
            let serving = Serving::new(3, Instant::now(), true, vec![m.clone()]);
            let mut body = ServedBody::wrap(pieces(fail), Some(serving));
            while let Some(f) = body.frame().await {
                if f.is_err() {
                    break;
                }
            }
            let r = m.take();
            assert_eq!((r[0].done_ms, r[0].whole), (Some(2_000), Some(whole)), "fail {fail}");
        }
    }
}
