//! Paced bodies: SSE token streams (one `data:` event per token, then `data: [DONE]`) and JSON
//! bodies dribbled or cut by stream faults. A cut waits briefly so hyper flushes what was sent,
//! then either arms an RST and fails the body (hyper drops the socket) or holds the connection
//! open in silence until the client leaves.

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
use crate::upstream::faults::CutMode;

/// Pause before a cut so the pieces already sent leave hyper's buffer and the socket.
const FLUSH_GRACE: Duration = Duration::from_millis(20);

/// How many of `n` pieces go out before a cut at `fraction`.
pub(crate) fn pieces_before_cut(n: usize, fraction: f64) -> usize {
    let k = (n as f64 * fraction + 1e-9).floor();
    (k.max(0.0) as usize).min(n)
}

struct Paced {
    pieces: VecDeque<Bytes>,
    sent: usize,
    interval: Duration,
    cut: Option<(usize, CutMode)>,
    ctl: Arc<ConnCtl>,
}

/// A body sending `pieces` one per `interval` (the first after one interval), cut after `k`
/// pieces if `cut = Some((k, mode))`.
pub(crate) fn paced_body(
    pieces: Vec<Bytes>,
    interval: Duration,
    cut: Option<(usize, CutMode)>,
    ctl: Arc<ConnCtl>,
) -> Body {
    let st = Paced {
        pieces: pieces.into(),
        sent: 0,
        interval,
        cut,
        ctl,
    };
    let s = stream::unfold(st, |mut st| async move {
        if let Some((k, mode)) = st.cut
            && st.sent >= k
        {
            st.cut = None;
            st.pieces.clear();
            tokio::time::sleep(FLUSH_GRACE).await;
            match mode {
                CutMode::Reset => st.ctl.arm_reset(),
                CutMode::Stall => st.ctl.hold().await,
            }
            let e: BoxError = Box::new(Cut);
            return Some((Err(e), st));
        }
        let piece = st.pieces.pop_front()?;
        if !st.interval.is_zero() {
            tokio::time::sleep(st.interval).await;
        }
        st.sent += 1;
        Some((Ok(Frame::data(piece)), st))
    });
    StreamBody::new(s).boxed_unsync()
}

/// An SSE response of `events` (each a complete `data: ...\n\n` event, tokens first, `[DONE]`
/// last), of which `tokens` are token events, paced and cut as `proceed` says.
pub(crate) fn sse_response(
    events: Vec<Bytes>,
    tokens: usize,
    interval: Duration,
    proceed: Proceed,
    ctl: Arc<ConnCtl>,
) -> Response<Body> {
    let (interval, cut) = match proceed {
        Proceed::Normal => (interval, None),
        Proceed::Slow(d) => (d, None),
        Proceed::Cut(f, mode) => (interval, Some((pieces_before_cut(tokens, f), mode))),
    };
    let mut r = Response::new(paced_body(events, interval, cut, ctl));
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
/// cut after that fraction of its bytes (with the full `Content-Length` announced).
pub(crate) fn json_body(
    body: Bytes,
    pieces: usize,
    proceed: Proceed,
    ctl: Arc<ConnCtl>,
) -> Response<Body> {
    let len = body.len();
    let (parts, interval, cut) = match proceed {
        Proceed::Normal => return json_response(StatusCode::OK, body),
        Proceed::Slow(d) => (split(body, pieces.max(1)), d, None),
        Proceed::Cut(f, mode) => {
            let at = pieces_before_cut(len, f);
            let parts = vec![body.slice(..at), body.slice(at..)];
            (parts, Duration::ZERO, Some((1, mode)))
        }
    };
    let mut r = Response::new(paced_body(parts, interval, cut, ctl));
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
}
