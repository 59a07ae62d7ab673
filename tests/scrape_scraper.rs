//! The scraper against a real loopback `/metrics`: periodic scrapes stamped from the run start,
//! a final scrape after stop, failures (HTTP 500, unparsable text, nothing listening) counted
//! and not fatal.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rehearse::scrape::{ScrapeLog, Scraper, ScraperConfig, metrics_url};
use tokio::net::TcpListener;
use tokio::time::Instant;

async fn serve_metrics() -> (std::net::SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicU64::new(0));
    let h = hits.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let h = h.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |_req| {
                    let n = h.fetch_add(1, Ordering::SeqCst) + 1;
                    async move {
                        let (status, body) = match n {
                            2 => (500, "oops".to_string()),
                            3 => (200, "not a metric line\n".to_string()),
                            _ => (200, format!("# TYPE hits_total counter\nhits_total {n}\n")),
                        };
                        let resp = hyper::Response::builder()
                            .status(status)
                            .body(Full::new(Bytes::from(body)))
                            .unwrap();
                        Ok::<_, Infallible>(resp)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (addr, hits)
}

fn config(addr: std::net::SocketAddr) -> ScraperConfig {
    ScraperConfig {
        url: metrics_url(addr),
        interval: Duration::from_millis(50),
        start: Instant::now(),
        timeout: Duration::from_secs(2),
    }
}

#[tokio::test]
async fn scraper_scrapes_periodically_counts_failures_and_takes_a_final_scrape() {
    let (addr, hits) = serve_metrics().await;
    let scraper = Scraper::new(config(addr));
    let latest = scraper.latest();
    let log: ScrapeLog = scraper
        .run(tokio::time::sleep(Duration::from_millis(400)))
        .await;
    assert_eq!(log.failures, 2, "{:?}", log.last_error);
    assert!(log.ok >= 3, "ok scrapes: {}", log.ok);
    assert_eq!(log.ok + log.failures, hits.load(Ordering::SeqCst));
    assert!(
        log.last_error
            .as_deref()
            .unwrap()
            .contains("parse error at 1:5"),
        "{:?}",
        log.last_error
    );
    assert!(log.scrapes.windows(2).all(|w| w[0].t_ms <= w[1].t_ms));
    assert!(
        log.scrapes.last().unwrap().t_ms >= 400,
        "final scrape after stop"
    );
    // The unparsable 200 is kept as raw text (for scrapes.prom) but has no parsed form.
    assert_eq!(log.scrapes.iter().filter(|s| s.parsed.is_none()).count(), 1);
    let last = log.last_parsed().unwrap();
    assert_eq!(last.families[0].name, "hits_total");
    assert!(latest.get().is_some());
    assert!(log.to_prom().starts_with("# scrape t_ms="));
}

#[tokio::test]
async fn scraper_survives_nothing_listening() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    let scraper = Scraper::new(config(addr));
    let log = scraper
        .run(tokio::time::sleep(Duration::from_millis(120)))
        .await;
    assert!(log.failures >= 2);
    assert_eq!(log.ok, 0);
    assert!(log.scrapes.is_empty());
    assert!(log.last_error.unwrap().contains("GET http://"));
}
