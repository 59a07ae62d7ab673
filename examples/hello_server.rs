//! A bare hyper HTTP/1.1 "hello" server: the baseline `scripts/bench-upstream.sh` compares
//! `rehearse upstream` against. Same runtime shape as `rehearse upstream` (multi-threaded tokio,
//! one task per connection); answers every request with a small JSON body.
//!
//! `cargo run --release --example hello_server -- 127.0.0.1:0` prints
//! `listening on http://HOST:PORT` first, like the real servers.

use std::convert::Infallible;
use std::io::Write;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

async fn hello(req: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    // Read the body like the real server does, so both sides do the same I/O.
    let _ = req.into_body().collect().await;
    let mut r = Response::new(Full::new(Bytes::from_static(b"{\"hello\":\"world\"}")));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_string());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "listening on http://{}", listener.local_addr()?)?;
            out.flush()?;
        }
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(hello))
                    .await;
            });
        }
    })
}
