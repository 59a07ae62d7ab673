//! The scraper's redirects and bearer token against real loopback servers: a 307 on the same
//! origin (LiteLLM's `/metrics` → `/metrics/`) is followed with the token on every hop; a
//! redirect to another origin (another port, or another host name for the same address) is a
//! failed scrape naming it, and the other server gets nothing — no request, so no token; a
//! redirect loop stops after `MAX_REDIRECTS` hops; without a token no `Authorization` is sent.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rehearse::scrape::{Bearer, MAX_REDIRECTS, ScrapeLog, Scraper, ScraperConfig};
use tokio::net::TcpListener;
use tokio::time::Instant;

/// What one server saw: each request's path and its `Authorization` header.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// How a server answers a path: status, `Location`, body.
type Route = fn(&str, SocketAddr) -> (u16, Option<String>, String);

const EXPOSITION: &str = "# TYPE up gauge\nup 1\n";
const TOKEN: &str = "tok-metrics-7c1f";

async fn serve(route: Route) -> (SocketAddr, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let s = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let s = s.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let path = req.uri().path().to_string();
                    let auth = req
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    s.lock().unwrap().push((path.clone(), auth));
                    let (status, location, body) = route(&path, addr);
                    let mut resp = hyper::Response::builder().status(status);
                    if let Some(l) = location {
                        resp = resp.header("location", l);
                    }
                    let resp = resp.body(Full::new(Bytes::from(body))).unwrap();
                    async move { Ok::<_, Infallible>(resp) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (addr, seen)
}

/// One scrape of `url` (the stop is already done: the final scrape only).
async fn scrape_once(url: String, bearer: Option<Bearer>) -> ScrapeLog {
    Scraper::new(ScraperConfig {
        url: url.parse().unwrap(),
        interval: Duration::from_secs(60),
        start: Instant::now(),
        timeout: Duration::from_secs(5),
    })
    .with_bearer(bearer)
    .run(async {})
    .await
}

fn seen(s: &Seen) -> Vec<(String, Option<String>)> {
    s.lock().unwrap().clone()
}

/// `/metrics` → 307 to the absolute `/metrics/` of the same origin (as Starlette writes it);
/// `/metrics/` answers only with the token.
fn litellm_like(path: &str, me: SocketAddr) -> (u16, Option<String>, String) {
    match path {
        "/metrics" => (307, Some(format!("http://{me}/metrics/")), String::new()),
        "/metrics/" => (200, None, EXPOSITION.into()),
        _ => (404, None, String::new()),
    }
}

#[tokio::test]
async fn a_307_on_the_same_origin_is_followed_and_the_token_goes_with_each_hop() {
    let (a, a_seen) = serve(litellm_like).await;
    let log = scrape_once(format!("http://{a}/metrics"), Some(Bearer::new(TOKEN))).await;
    assert_eq!((log.ok, log.failures), (1, 0), "{:?}", log.last_error);
    assert_eq!(log.last_parsed().unwrap().families[0].name, "up");
    let bearer = Some(format!("Bearer {TOKEN}"));
    assert_eq!(
        seen(&a_seen),
        [
            ("/metrics".to_string(), bearer.clone()),
            ("/metrics/".to_string(), bearer)
        ]
    );

    // Without a token, none is sent.
    let (b, b_seen) = serve(litellm_like).await;
    let log = scrape_once(format!("http://{b}/metrics"), None).await;
    assert_eq!(log.ok, 1, "{:?}", log.last_error);
    assert!(seen(&b_seen).iter().all(|(_, auth)| auth.is_none()));
}

#[tokio::test]
async fn a_relative_location_stays_on_the_origin() {
    fn relative(path: &str, _: SocketAddr) -> (u16, Option<String>, String) {
        match path {
            "/metrics" => (308, Some("/metrics/".into()), String::new()),
            "/metrics/" => (200, None, EXPOSITION.into()),
            _ => (404, None, String::new()),
        }
    }
    let (a, a_seen) = serve(relative).await;
    let log = scrape_once(format!("http://{a}/metrics"), None).await;
    assert_eq!((log.ok, log.failures), (1, 0), "{:?}", log.last_error);
    assert_eq!(seen(&a_seen).len(), 2);
}

/// The port of the other server, for the route of the first (set before it serves).
static OTHER: Mutex<Option<SocketAddr>> = Mutex::new(None);

#[tokio::test]
async fn a_redirect_to_another_origin_is_a_failed_scrape_and_the_other_server_gets_nothing() {
    let (b, b_seen) = serve(|_, _| (200, None, EXPOSITION.into())).await;
    *OTHER.lock().unwrap() = Some(b);
    fn elsewhere(path: &str, _: SocketAddr) -> (u16, Option<String>, String) {
        let other = OTHER.lock().unwrap().unwrap();
        match path {
            "/metrics" => (307, Some(format!("http://{other}/metrics")), String::new()),
            _ => (404, None, String::new()),
        }
    }
    let (a, a_seen) = serve(elsewhere).await;
    let log = scrape_once(format!("http://{a}/metrics"), Some(Bearer::new(TOKEN))).await;
    assert_eq!((log.ok, log.failures), (0, 1));
    let why = log.last_error.unwrap();
    assert!(why.contains("another origin"), "{why}");
    assert!(why.contains(&format!("http://{b}/metrics")), "{why}");
    assert!(!why.contains(TOKEN), "{why}");
    assert_eq!(seen(&a_seen).len(), 1);
    // The other origin saw no request, so no Authorization header either.
    let at_b = seen(&b_seen);
    assert!(at_b.iter().all(|(_, auth)| auth.is_none()), "{at_b:?}");
    assert!(at_b.is_empty(), "{at_b:?}");

    // The same address under another host name is another origin too.
    fn renamed(path: &str, me: SocketAddr) -> (u16, Option<String>, String) {
        match path {
            "/metrics" => (
                302,
                Some(format!("http://localhost:{}/metrics/", me.port())),
                String::new(),
            ),
            _ => (200, None, EXPOSITION.into()),
        }
    }
    let (c, c_seen) = serve(renamed).await;
    let log = scrape_once(format!("http://{c}/metrics"), Some(Bearer::new(TOKEN))).await;
    assert_eq!((log.ok, log.failures), (0, 1));
    assert!(log.last_error.unwrap().contains("another origin"));
    assert_eq!(seen(&c_seen).len(), 1, "nothing sent to localhost");
}

#[tokio::test]
async fn a_redirect_loop_stops_after_the_most_hops() {
    fn ping_pong(path: &str, _: SocketAddr) -> (u16, Option<String>, String) {
        let to = if path == "/a" { "/b" } else { "/a" };
        (301, Some(to.into()), String::new())
    }
    let (a, a_seen) = serve(ping_pong).await;
    let log = scrape_once(format!("http://{a}/a"), None).await;
    assert_eq!((log.ok, log.failures), (0, 1));
    let why = log.last_error.unwrap();
    assert!(
        why.contains(&format!("more than {MAX_REDIRECTS} redirects")),
        "{why}"
    );
    assert_eq!(seen(&a_seen).len(), MAX_REDIRECTS + 1);
}
