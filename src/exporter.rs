//! The engine's `/metrics` endpoint: a small hyper 1 HTTP/1.1 server over a bound listener.
//! `GET /metrics` (or `HEAD`) answers [`Metrics::render`] with the 0.0.4 Content-Type (rendered at
//! the request, so every series is the state at scrape time: breakers whose open time ran out read
//! half-open, and the canary/breaker disagreement is current); any other
//! path is 404, any other method 405. It stops accepting when `shutdown` completes and lets
//! connections in progress finish.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::engine::metrics::{CONTENT_TYPE, Metrics};
use crate::util::shutdown::{Drain, Shutdown};

/// Serves `metrics` on `listener` until `shutdown` completes. Accept errors (e.g. too many open
/// files) are retried after a short pause rather than ending the server.
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    // Each connection holds the stop request and a drain token; once stopped, every open
    // connection finishes its response and closes, and the drain resolves when the last is gone.
    let stop = Shutdown::new();
    let drain = Drain::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let metrics = metrics.clone();
        let service = service_fn(move |req| {
            let metrics = metrics.clone();
            async move { Ok::<_, Infallible>(respond(&req, &metrics)) }
        });
        let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
        let (stop, token) = (stop.clone(), drain.token());
        tokio::spawn(async move {
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.requested() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            drop(token);
        });
    }
    drop(listener);
    stop.request("the exporter stopped");
    tokio::select! {
        _ = drain.wait() => {}
        _ = tokio::time::sleep(std::time::Duration::from_secs(5)) => {}
    }
    Ok(())
}

/// The response to one request.
fn respond(req: &Request<Incoming>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let plain = |status: StatusCode, text: &'static str| {
        let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
        *r.status_mut() = status;
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        r
    };
    if req.uri().path() != "/metrics" {
        return plain(StatusCode::NOT_FOUND, "not found; try GET /metrics\n");
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "only GET /metrics\n");
        r.headers_mut()
            .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let body = if req.method() == Method::HEAD {
        Bytes::new()
    } else {
        Bytes::from(metrics.render())
    };
    let mut r = Response::new(Full::new(body));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(CONTENT_TYPE),
    );
    r
}
