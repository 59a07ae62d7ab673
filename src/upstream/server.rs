//! The accept loop: one listener for HTTP/1.1 and WebSocket upgrades, one task per connection,
//! and a clean stop when the shutdown future resolves (connections get a short grace, then are
//! dropped — stalled requests never finish on their own).

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::Upstream;
use super::conn::ConnCtl;
use super::routes;
use crate::transport::arrival::Stamped;

/// How long open connections may finish after shutdown before they are dropped.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Serves the mock upstream on `listener` until `shutdown` resolves or the control API's
/// `POST /_rehearse/shutdown` halts it ([`Upstream::halt`]). Returns once every connection has
/// finished or been dropped.
pub async fn serve(
    listener: TcpListener,
    upstream: Arc<Upstream>,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    crate::transport::arrival::stamp_listener(&listener);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut conns = JoinSet::new();
    tokio::pin!(shutdown);
    let halted = upstream.clone();
    let halted = halted.halted();
    tokio::pin!(halted);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            () = &mut halted => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    conns.spawn(connection(stream, upstream.clone(), stop_rx.clone()));
                }
                // Out of descriptors or a connection aborted before accept: keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while conns.join_next().await.is_some() {}
    })
    .await;
    conns.shutdown().await;
    Ok(())
}

/// Serves one connection.
async fn connection(stream: TcpStream, upstream: Arc<Upstream>, stop: watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    let (stream, arrival) = Stamped::new(stream);
    let ctl = Arc::new(ConnCtl::new(stream.get_ref(), stop.clone(), arrival));
    let svc = service_fn(move |req| routes::handle(req, upstream.clone(), ctl.clone()));
    let conn = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), svc)
        .with_upgrades();
    tokio::pin!(conn);
    let mut stop = stop;
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}
