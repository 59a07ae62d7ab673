//! Paced bodies: SSE streams (a head of events sent at once, one content event per token
//! interval, a tail sent at once after the last token) and JSON bodies dribbled or cut by stream
//! faults; a stream whose first token is late, one paused then resumed, one with an event
//! injected after N content chunks (then the rest, `[DONE]`, or the end). A cut falls on an event boundary, inside an event, or ends the body cleanly before
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
use crate::upstream::faults::{CutAt, CutMode, InjectThen};

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
        let at_once = |b: Bytes| (Duration::ZERO, b);
        let (interval, cut) = match proceed {
            Proceed::Normal => (interval, None),
            Proceed::Slow(d) => (d, None),
            Proceed::Cut(f, mode, at) => (interval, Some((f, mode, at))),
            Proceed::FirstToken(delay) => return (self.first_token_late(interval, delay), None),
            Proceed::Pause(f, at, resume) => return (self.paused(interval, f, at, resume), None),
            Proceed::Inject(after, event, then) => {
                return (self.injected(interval, after, event, then), None);
            }
        };
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

    /// The whole stream as usual, but the first content token `delay` after the role chunk.
    fn first_token_late(self, interval: Duration, delay: Duration) -> Vec<Piece> {
        let mut pieces: Vec<Piece> = self.head.into_iter().map(|b| (Duration::ZERO, b)).collect();
        for (i, token) in self.tokens.into_iter().enumerate() {
            pieces.push((if i == 0 { delay } else { interval }, token));
        }
        if pieces.len() == 1 {
            // No content token at all (cannot happen: an answer has one or more): the tail waits.
            pieces.extend(self.tail.into_iter().map(|b| (delay, b)));
        } else {
            pieces.extend(self.tail.into_iter().map(|b| (Duration::ZERO, b)));
        }
        pieces
    }

    /// The whole stream, with a silence of `resume` where a stall cut at `fraction` (`at`)
    /// would fall: after whole events, or inside the next one (its second half after the
    /// silence).
    fn paused(self, interval: Duration, fraction: f64, at: CutAt, resume: Duration) -> Vec<Piece> {
        let k = pieces_before_cut(self.tokens.len(), fraction);
        let mut pieces: Vec<Piece> = self.head.into_iter().map(|b| (Duration::ZERO, b)).collect();
        let later: Vec<Piece> = self
            .tokens
            .into_iter()
            .map(|b| (interval, b))
            .chain(self.tail.into_iter().map(|b| (Duration::ZERO, b)))
            .collect();
        let mut later = later.into_iter();
        pieces.extend(later.by_ref().take(k));
        if let Some((pause, next)) = later.next() {
            if at == CutAt::MidFrame {
                pieces.push((pause, next.slice(..next.len() / 2)));
                pieces.push((resume, next.slice(next.len() / 2..)));
            } else {
                pieces.push((pause.saturating_add(resume), next));
            }
        }
        pieces.extend(later);
        pieces
    }

    /// The stream with `event` after `after` content chunks (after the last one when the answer
    /// has fewer), then the rest as usual, `[DONE]` and an end, or an end.
    fn injected(self, interval: Duration, after: u64, event: Bytes, then: InjectThen) -> Vec<Piece> {
        let k = usize::try_from(after).unwrap_or(usize::MAX).min(self.tokens.len());
        let mut pieces: Vec<Piece> = self.head.into_iter().map(|b| (Duration::ZERO, b)).collect();
        let mut tokens = self.tokens.into_iter();
        pieces.extend(tokens.by_ref().take(k).map(|b| (interval, b)));
        pieces.push((interval, event));
        match then {
            InjectThen::Continue => {
                pieces.extend(tokens.map(|b| (interval, b)));
                pieces.extend(self.tail.into_iter().map(|b| (Duration::ZERO, b)));
            }
            InjectThen::Done => pieces.push((Duration::ZERO, Bytes::from_static(DONE))),
            InjectThen::Close => {}
        }
        pieces
    }
}

/// The stream's terminator.
const DONE: &[u8] = b"data: [DONE]\n\n";

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
        // A first-token delay was waited out before (`Proceed::settle_json`); an event has no
        // place in a JSON body.
        Proceed::Normal | Proceed::FirstToken(_) | Proceed::Inject(..) => {
            return json_response(StatusCode::OK, body);
        }
        Proceed::Pause(f, _, resume) => {
            let k = pieces_before_cut(len, f);
            let parts = vec![(Duration::ZERO, body.slice(..k)), (resume, body.slice(k..))];
            (parts, None)
        }
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

    #[test]
    fn a_late_first_token_waits_after_the_role_chunk_only() {
        let late = Duration::from_secs(8);
        let (pieces, cut) = events().plan(MS, Proceed::FirstToken(late));
        assert_eq!(cut, None);
        let pauses: Vec<Duration> = pieces.iter().map(|p| p.0).collect();
        let z = Duration::ZERO;
        assert_eq!(pauses, [z, late, MS, MS, MS, z, z], "role at once, t1 late, the rest paced");
        assert_eq!(text(&pieces), text(&events().plan(MS, Proceed::Normal).0), "the same bytes");
    }

    #[test]
    fn a_pause_is_silence_where_the_stall_falls_then_the_whole_rest() {
        let resume = Duration::from_secs(30);
        let whole = text(&events().plan(MS, Proceed::Normal).0);
        let (pieces, cut) = events().plan(MS, Proceed::Pause(0.5, CutAt::Frame, resume));
        assert_eq!(cut, None, "it completes");
        assert_eq!(text(&pieces), whole);
        let pauses: Vec<Duration> = pieces.iter().map(|p| p.0).collect();
        let z = Duration::ZERO;
        assert_eq!(pauses, [z, MS, MS, MS + resume, MS, z, z]);
        // Mid-frame: half of tok3, the silence, its other half.
        let (pieces, _) = events().plan(MS, Proceed::Pause(0.5, CutAt::MidFrame, resume));
        assert_eq!(text(&pieces), whole);
        assert_eq!(text(&pieces[..4]), "data: role\n\ndata: tok1\n\ndata: tok2\n\ndata: ");
        assert_eq!(pieces[4].0, resume);
        // After every token: the silence falls before the finish chunk.
        let (pieces, _) = events().plan(MS, Proceed::Pause(1.0, CutAt::Frame, resume));
        assert_eq!(pieces[5], (resume, Bytes::from_static(b"data: finish\n\n")));
    }

    #[test]
    fn an_injected_event_goes_after_n_chunks_then_the_rest_done_or_the_end() {
        let ev = Bytes::from_static(b"data: {bad\n\n");
        let inject = |after, then| events().plan(MS, Proceed::Inject(after, ev.clone(), then));
        let (pieces, cut) = inject(2, InjectThen::Continue);
        assert_eq!(cut, None);
        assert_eq!(
            text(&pieces),
            "data: role\n\ndata: tok1\n\ndata: tok2\n\ndata: {bad\n\ndata: tok3\n\n\
             data: tok4\n\ndata: finish\n\ndata: [DONE]\n\n"
        );
        let (pieces, _) = inject(2, InjectThen::Done);
        assert_eq!(
            text(&pieces),
            "data: role\n\ndata: tok1\n\ndata: tok2\n\ndata: {bad\n\ndata: [DONE]\n\n"
        );
        let (pieces, _) = inject(0, InjectThen::Close);
        assert_eq!(text(&pieces), "data: role\n\ndata: {bad\n\n");
        // More chunks than the answer has: after the last one.
        let (pieces, _) = inject(u64::MAX, InjectThen::Close);
        assert!(text(&pieces).ends_with("data: tok4\n\ndata: {bad\n\n"));
    }
}
