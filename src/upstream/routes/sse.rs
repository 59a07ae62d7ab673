//! Paced bodies: SSE streams (a head of events sent at once, one content event per token
//! interval, a tail sent at once after the last token) and JSON bodies dribbled or cut by stream
//! faults. A cut falls on an event boundary, inside an event, or ends the body cleanly before
//! the tail ([`CutAt`]); a boundary or mid-event cut waits briefly so hyper flushes what was
//! sent, then either arms an RST and fails the body (hyper drops the socket) or holds the
//! connection open in silence until the client leaves.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream;
use http::{Response, StatusCode, header};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use super::{Body, BoxError, Proceed, json_response};
use crate::upstream::conn::{ConnCtl, Cut};
use crate::upstream::faults::{CutAt, CutMode};

/// Pause before a cut so the pieces already sent leave hyper's buffer and the socket.
const FLUSH_GRACE: Duration = Duration::from_millis(20);

/// How many of `n` pieces go out before a cut at `fraction`.
fn pieces_before_cut(n: usize, fraction: f64) -> usize {
    let k = (n as f64 * fraction + 1e-9).floor();
    (k.max(0.0) as usize).min(n)
}

/// One piece of a paced body and the pause before it.
type Piece = (Duration, Bytes);

struct Paced {
    pieces: VecDeque<Piece>,
    /// After the last piece: cut this way, or (`None`) end the body normally.
    cut: Option<CutMode>,
    ctl: Arc<ConnCtl>,
}

/// A body sending `pieces`, each after its pause, then ending normally or, with `cut`, cutting
/// the connection.
fn paced_body(pieces: Vec<Piece>, cut: Option<CutMode>, ctl: Arc<ConnCtl>) -> Body {
    let st = Paced {
        pieces: pieces.into(),
        cut,
        ctl,
    };
    let s = stream::unfold(st, |mut st| async move {
        let Some((pause, piece)) = st.pieces.pop_front() else {
            let mode = st.cut.take()?;
            tokio::time::sleep(FLUSH_GRACE).await;
            match mode {
                CutMode::Reset => st.ctl.arm_reset(),
                CutMode::Stall => st.ctl.hold().await,
            }
            let e: BoxError = Box::new(Cut);
            return Some((Err(e), st));
        };
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        Some((Ok(Frame::data(piece)), st))
    });
    StreamBody::new(s).boxed_unsync()
}

/// The events of one SSE answer, each a complete `data: ...\n\n` event.
#[derive(Debug, Clone, Default)]
pub(crate) struct SseEvents {
    /// Sent at once when the body starts (the role chunk).
    pub head: Vec<Bytes>,
    /// One per token interval (the content chunks).
    pub tokens: Vec<Bytes>,
    /// Sent at once after the last token (finish chunk, usage chunk, `data: [DONE]`).
    pub tail: Vec<Bytes>,
}

impl SseEvents {
    /// The pieces sent, and how the body ends, under `proceed` with tokens `interval` apart.
    fn plan(self, interval: Duration, proceed: Proceed) -> (Vec<Piece>, Option<CutMode>) {
        let (interval, cut) = match proceed {
            Proceed::Normal => (interval, None),
            Proceed::Slow(d) => (d, None),
            Proceed::Cut(f, mode, at) => (interval, Some((f, mode, at))),
        };
        let at_once = |b: Bytes| (Duration::ZERO, b);
        let paced = |b: Bytes| (interval, b);
        let mut pieces: Vec<Piece> = self.head.into_iter().map(at_once).collect();
        let Some((fraction, mode, at)) = cut else {
            pieces.extend(self.tokens.into_iter().map(paced));
            pieces.extend(self.tail.into_iter().map(at_once));
            return (pieces, None);
        };
        let k = pieces_before_cut(self.tokens.len(), fraction);
        let mut rest = self.tokens.into_iter();
        pieces.extend(rest.by_ref().take(k).map(paced));
        match at {
            CutAt::Frame => (pieces, Some(mode)),
            CutAt::NoTerminal => (pieces, None),
            CutAt::MidFrame => {
                let next = match rest.next() {
                    Some(token) => Some(paced(token)),
                    None => self.tail.into_iter().next().map(at_once),
                };
                if let Some((pause, event)) = next {
                    pieces.push((pause, event.slice(..event.len() / 2)));
                }
                (pieces, Some(mode))
            }
        }
    }
}

/// An SSE response of `events`, tokens `interval` apart, paced and cut as `proceed` says.
pub(crate) fn sse_response(
    events: SseEvents,
    interval: Duration,
    proceed: Proceed,
    ctl: Arc<ConnCtl>,
) -> Response<Body> {
    let (pieces, cut) = events.plan(interval, proceed);
    let mut r = Response::new(paced_body(pieces, cut, ctl));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    r
}

/// A 200 JSON response of `body` as `proceed` says: at once, dribbled in `pieces` pieces, or
/// cut after that fraction of its bytes — with the full `Content-Length` announced, or, for
/// `no_terminal`, ending cleanly with a `Content-Length` of what was sent.
pub(crate) fn json_body(
    body: Bytes,
    pieces: usize,
    proceed: Proceed,
    ctl: Arc<ConnCtl>,
) -> Response<Body> {
    let mut len = body.len();
    let (parts, cut) = match proceed {
        Proceed::Normal => return json_response(StatusCode::OK, body),
        Proceed::Slow(d) => {
            let parts = split(body, pieces.max(1)).into_iter().map(|p| (d, p));
            (parts.collect(), None)
        }
        Proceed::Cut(f, mode, at) => {
            let sent = body.slice(..pieces_before_cut(len, f));
            if at == CutAt::NoTerminal {
                len = sent.len();
                (vec![(Duration::ZERO, sent)], None)
            } else {
                (vec![(Duration::ZERO, sent)], Some(mode))
            }
        }
    };
    let mut r = Response::new(paced_body(parts, cut, ctl));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    h.insert(header::CONTENT_LENGTH, header::HeaderValue::from(len));
    r
}

/// `body` in `n` nearly equal pieces (fewer if it is shorter than `n` bytes).
fn split(body: Bytes, n: usize) -> Vec<Bytes> {
    let n = n.min(body.len()).max(1);
    let step = body.len().div_ceil(n);
    (0..body.len())
        .step_by(step.max(1))
        .map(|i| body.slice(i..(i + step).min(body.len())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_point_is_the_floor_of_the_fraction() {
        assert_eq!(pieces_before_cut(10, 0.4), 4);
        assert_eq!(pieces_before_cut(25, 0.4), 10);
        assert_eq!(pieces_before_cut(3, 0.5), 1);
        assert_eq!(pieces_before_cut(10, 0.0), 0);
        assert_eq!(pieces_before_cut(10, 1.0), 10);
    }

    #[test]
    fn split_keeps_every_byte() {
        let b = Bytes::from_static(b"0123456789abc");
        for n in [1, 2, 5, 13, 50] {
            let parts = split(b.clone(), n);
            assert!(parts.len() <= n.max(1));
            assert_eq!(parts.concat(), b.to_vec());
        }
    }

    fn events() -> SseEvents {
        let ev = |s: &str| Bytes::from(format!("data: {s}\n\n"));
        SseEvents {
            head: vec![ev("role")],
            tokens: (1..=4).map(|i| ev(&format!("tok{i}"))).collect(),
            tail: vec![ev("finish"), ev("[DONE]")],
        }
    }

    fn text(pieces: &[Piece]) -> String {
        let all: Vec<u8> = pieces.iter().flat_map(|(_, b)| b.to_vec()).collect();
        String::from_utf8(all).unwrap()
    }

    const MS: Duration = Duration::from_millis(7);

    #[test]
    fn a_whole_stream_paces_only_the_tokens() {
        let (pieces, cut) = events().plan(MS, Proceed::Normal);
        assert_eq!(cut, None);
        let pauses: Vec<Duration> = pieces.iter().map(|p| p.0).collect();
        let z = Duration::ZERO;
        assert_eq!(pauses, [z, MS, MS, MS, MS, z, z]);
        assert!(text(&pieces).ends_with("data: finish\n\ndata: [DONE]\n\n"));
        let slow = Duration::from_millis(90);
        let (pieces, _) = events().plan(MS, Proceed::Slow(slow));
        assert_eq!(pieces[1].0, slow);
    }

    #[test]
    fn a_frame_cut_ends_after_whole_events_then_cuts() {
        let (pieces, cut) = events().plan(MS, Proceed::Cut(0.5, CutMode::Reset, CutAt::Frame));
        assert_eq!(cut, Some(CutMode::Reset));
        let t = text(&pieces);
        assert_eq!(t, "data: role\n\ndata: tok1\n\ndata: tok2\n\n");
        // All tokens: the cut takes the finish chunk and [DONE].
        let (pieces, _) = events().plan(MS, Proceed::Cut(1.0, CutMode::Stall, CutAt::Frame));
        assert!(text(&pieces).ends_with("data: tok4\n\n"));
    }

    #[test]
    fn a_mid_frame_cut_sends_half_of_the_next_event() {
        let cut = Proceed::Cut(0.5, CutMode::Stall, CutAt::MidFrame);
        let (pieces, mode) = events().plan(MS, cut);
        assert_eq!(mode, Some(CutMode::Stall));
        let t = text(&pieces);
        assert_eq!(t, "data: role\n\ndata: tok1\n\ndata: tok2\n\ndata: ");
        assert!(!t.ends_with("\n\n"));
        // After every token, the half event is the finish chunk's.
        let cut = Proceed::Cut(1.0, CutMode::Reset, CutAt::MidFrame);
        let (pieces, _) = events().plan(MS, cut);
        assert!(
            text(&pieces).ends_with("data: tok4\n\ndata: f"),
            "{}",
            text(&pieces)
        );
    }

    #[test]
    fn a_no_terminal_cut_ends_cleanly_without_the_tail() {
        let cut = Proceed::Cut(1.0, CutMode::Reset, CutAt::NoTerminal);
        let (pieces, mode) = events().plan(MS, cut);
        assert_eq!(mode, None, "a clean end: no reset");
        let t = text(&pieces);
        assert!(t.ends_with("data: tok4\n\n"));
        assert!(!t.contains("finish") && !t.contains("[DONE]"));
    }
}
