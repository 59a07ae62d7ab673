//! One GET of a metrics endpoint for the scraper: the body of a 2xx answer, following redirects
//! (301, 302, 303, 307, 308) on the same origin only — scheme, host and port — at most
//! [`MAX_REDIRECTS`] hops (LiteLLM's `/metrics` answers 307 to `/metrics/`). A bearer token
//! ([`Bearer`], `[target] metrics_token_env`) goes with every request, and every request goes to
//! the origin of the URL the scraper was given: a redirect to another origin is a failed scrape
//! naming both, and nothing (so no token) is sent there.

use bytes::Bytes;
use http::Uri;
use http::header::{AUTHORIZATION, LOCATION};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;

/// Most redirects one scrape follows.
pub const MAX_REDIRECTS: usize = 3;

/// Largest body accepted from `/metrics` (a runaway exporter must not exhaust memory).
const MAX_BODY: usize = 16 << 20;

/// A bearer token sent with every scrape; shown by fingerprint only.
#[derive(Clone, PartialEq, Eq)]
pub struct Bearer(String);

impl Bearer {
    /// The token (sent as `Authorization: Bearer TOKEN`).
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// Its fingerprint, as reports show it.
    pub fn fingerprint(&self) -> String {
        crate::util::fingerprint(&self.0)
    }
}

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bearer(fp {})", self.fingerprint())
    }
}

/// Why one scrape got no exposition text (written, as its message, to the scrape log).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    #[error("GET {url}: {source}")]
    Get {
        url: Uri,
        #[source]
        source: hyper_util::client::legacy::Error,
    },
    #[error("GET {url}: {source}")]
    Request {
        url: Uri,
        #[source]
        source: http::Error,
    },
    #[error("reading body: {0}")]
    Body(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("GET {url}: HTTP {status}")]
    Status { url: Uri, status: http::StatusCode },
    #[error("body is not UTF-8: {0}")]
    Utf8(#[source] std::string::FromUtf8Error),
    #[error("GET {url}: HTTP {status} without a usable Location ({location:?})")]
    BadLocation {
        url: Uri,
        status: http::StatusCode,
        location: Option<String>,
    },
    #[error(
        "GET {url}: HTTP {status} redirects to {to}, another origin than {origin}: a scrape \
         follows redirects on the same scheme, host and port only (nothing was sent there)"
    )]
    OtherOrigin {
        url: Uri,
        status: http::StatusCode,
        to: String,
        origin: String,
    },
    #[error("GET {first}: more than {MAX_REDIRECTS} redirects (the last to {last})")]
    TooManyRedirects { first: Uri, last: Uri },
}

/// The body of `url`'s 2xx answer, redirects on its origin followed, `bearer` sent with each
/// request.
pub(crate) async fn get(
    client: &Client<HttpConnector, Empty<Bytes>>,
    url: &Uri,
    bearer: Option<&Bearer>,
) -> Result<String, FetchError> {
    let origin = Origin::of(url);
    let mut at = url.clone();
    for hop in 0..=MAX_REDIRECTS {
        let mut req = http::Request::get(at.clone());
        if let Some(b) = bearer {
            req = req.header(AUTHORIZATION, format!("Bearer {}", b.0));
        }
        let req = req.body(Empty::new()).map_err(|source| FetchError::Request {
            url: at.clone(),
            source,
        })?;
        let resp = client.request(req).await.map_err(|source| FetchError::Get {
            url: at.clone(),
            source,
        })?;
        let status = resp.status();
        if is_redirect(status) {
            let location = resp
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let next = location.as_deref().and_then(|l| resolve(&at, l));
            let Some(next) = next else {
                return Err(FetchError::BadLocation {
                    url: at,
                    status,
                    location,
                });
            };
            if Origin::of(&next) != origin {
                return Err(FetchError::OtherOrigin {
                    url: at,
                    status,
                    to: next.to_string(),
                    origin: origin.to_string(),
                });
            }
            if hop == MAX_REDIRECTS {
                return Err(FetchError::TooManyRedirects {
                    first: url.clone(),
                    last: next,
                });
            }
            at = next;
            continue;
        }
        let body = http_body_util::Limited::new(resp.into_body(), MAX_BODY);
        let bytes = body.collect().await.map_err(FetchError::Body)?.to_bytes();
        if !status.is_success() {
            return Err(FetchError::Status { url: at, status });
        }
        return String::from_utf8(bytes.to_vec()).map_err(FetchError::Utf8);
    }
    // The loop returns on its last hop; kept for the type.
    Err(FetchError::TooManyRedirects {
        first: url.clone(),
        last: at,
    })
}

/// A status a GET follows.
fn is_redirect(s: http::StatusCode) -> bool {
    matches!(s.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// Scheme, host (lowercase) and port (the scheme's default when absent) of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    fn of(u: &Uri) -> Self {
        let scheme = u.scheme_str().unwrap_or("").to_ascii_lowercase();
        let default = match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        Self {
            host: u.host().unwrap_or("").to_ascii_lowercase(),
            port: u.port_u16().or(default),
            scheme,
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

/// `location` (absolute, `//authority…`, `/path…` or relative to `base`'s directory) as a URL;
/// `None` when it forms none.
fn resolve(base: &Uri, location: &str) -> Option<Uri> {
    let location = location.trim();
    if location.is_empty() {
        return None;
    }
    let scheme = base.scheme_str()?;
    let authority = base.authority()?.as_str();
    let joined = if let Some(rest) = location.strip_prefix("//") {
        format!("{scheme}://{rest}")
    } else if location.starts_with('/') {
        format!("{scheme}://{authority}{location}")
    } else if location.contains("://") {
        location.to_string()
    } else {
        let path = base.path();
        let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
        format!("{scheme}://{authority}{dir}{location}")
    };
    let uri: Uri = joined.parse().ok()?;
    (uri.scheme().is_some() && uri.authority().is_some()).then_some(uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn a_location_resolves_against_the_url_it_answered() {
        let base = u("http://127.0.0.1:4000/metrics");
        for (loc, want) in [
            ("/metrics/", "http://127.0.0.1:4000/metrics/"),
            ("http://127.0.0.1:4000/metrics/", "http://127.0.0.1:4000/metrics/"),
            ("//127.0.0.2:9/m", "http://127.0.0.2:9/m"),
            ("metrics/", "http://127.0.0.1:4000/metrics/"),
        ] {
            assert_eq!(resolve(&base, loc), Some(u(want)), "{loc}");
        }
        assert_eq!(resolve(&base, ""), None);
        assert_eq!(resolve(&base, "http://[bad"), None);
    }

    #[test]
    fn an_origin_is_scheme_host_and_port_with_the_default_port_filled() {
        let a = Origin::of(&u("http://LocalHost/metrics"));
        assert_eq!(a, Origin::of(&u("http://localhost:80/x")));
        assert_ne!(a, Origin::of(&u("http://localhost:8080/metrics")));
        assert_ne!(a, Origin::of(&u("https://localhost/metrics")));
        assert_ne!(a, Origin::of(&u("http://127.0.0.1/metrics")));
        assert_eq!(a.to_string(), "http://localhost:80");
    }

    #[test]
    fn a_bearer_shows_its_fingerprint_only() {
        let b = Bearer::new("sk-secret-metrics");
        let shown = format!("{b:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains(&crate::util::fingerprint("sk-secret-metrics")));
    }
}
