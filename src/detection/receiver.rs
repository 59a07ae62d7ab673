//! The harness's Alertmanager webhook receiver: a small HTTP server on loopback that records
//! when each notification arrived, alert by alert (`alertmanager-notifications.jsonl` in the run
//! directory: `t_unix_ms`, `status`, `labels`), and keeps them for the judge.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::targets::unix_ms;
use crate::util::shutdown::Shutdown;
use crate::util::sync::Locked;

/// Largest notification body read.
const MAX_BODY: usize = 4 << 20;

/// One alert of one notification, as it arrived.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Arrival {
    /// Arrival, unix ms.
    pub t_unix_ms: i64,
    /// `firing` | `resolved`.
    pub status: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
}

/// The alerts of a webhook body (Alertmanager's webhook format, version 4).
pub(crate) fn arrivals(body: &[u8], t_unix_ms: i64) -> Vec<Arrival> {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let fallback = v["status"].as_str().unwrap_or("").to_string();
    v["alerts"]
        .as_array()
        .map(|alerts| {
            alerts
                .iter()
                .map(|a| Arrival {
                    t_unix_ms,
                    status: a["status"]
                        .as_str()
                        .map_or(fallback.clone(), str::to_string),
                    labels: a["labels"]
                        .as_object()
                        .map(|m| {
                            m.iter()
                                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The running receiver.
#[derive(Debug)]
pub(crate) struct Receiver {
    /// Its port.
    pub port: u16,
    got: Arc<Mutex<Vec<Arrival>>>,
    stop: Shutdown,
}

impl Receiver {
    /// Binds 127.0.0.1:0 and serves until stopped; its log is `log`.
    pub(crate) async fn start(log: &Path) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let file = Arc::new(Mutex::new(std::fs::File::create(log)?));
        let got = Arc::new(Mutex::new(Vec::new()));
        let stop = Shutdown::new();
        let (g, s) = (got.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let (stream, _) = tokio::select! {
                    _ = s.requested() => break,
                    a = listener.accept() => match a {
                        Ok(a) => a,
                        Err(_) => continue,
                    },
                };
                let (g, file) = (g.clone(), file.clone());
                let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let (g, file) = (g.clone(), file.clone());
                    async move {
                        let t = unix_ms(SystemTime::now());
                        let body = Limited::new(req.into_body(), MAX_BODY)
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let list = arrivals(&body, t);
                        {
                            let mut f = file.locked();
                            for a in &list {
                                if let Ok(line) = serde_json::to_string(a) {
                                    let _ = writeln!(f, "{line}");
                                }
                            }
                        }
                        g.locked().extend(list);
                        let mut r = Response::new(Full::new(Bytes::from_static(b"ok\n")));
                        *r.status_mut() = StatusCode::OK;
                        Ok::<_, Infallible>(r)
                    }
                });
                tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
            }
        });
        Ok(Self { port, got, stop })
    }

    /// Every alert received so far.
    pub(crate) fn arrivals(&self) -> Vec<Arrival> {
        self.got.locked().clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.request("the run ended");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_body_gives_one_arrival_per_alert() {
        let body = br#"{"version":"4","status":"firing","alerts":[
            {"status":"firing","labels":{"alertname":"BreakerOpen","dep":"crm"}},
            {"labels":{"alertname":"B"}}]}"#;
        let a = arrivals(body, 5);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].labels["dep"], "crm");
        assert_eq!(a[1].status, "firing");
        assert!(arrivals(b"not json", 5).is_empty());
    }
}
