//! `--pushgateway URL`: the run's group (job `rehearse`, grouping key `scenario`) replaced with a
//! PUT of its series, after reading the Pushgateway's `/metrics` for the scenario's previous last
//! success (carried forward by a failing run). Plain `http://` only; every failure is an error
//! the caller turns into a warning.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::series::{self, Outcome};

/// Longest a Pushgateway request may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Why a push failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PushError {
    /// The URL is not `http://HOST[:PORT][/PATH]`.
    #[error("--pushgateway {0:?}: give an http:// URL (https is not supported)")]
    Url(String),
    /// The request did not complete.
    #[error("{url}: {why}")]
    Request {
        /// The URL requested.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// The Pushgateway answered with an error status.
    #[error("{url}: HTTP {status}: {body}")]
    Status {
        /// The URL requested.
        url: String,
        /// The status.
        status: u16,
        /// The start of its body.
        body: String,
    },
}

/// The group's URL: `BASE/metrics/job/rehearse/scenario/NAME` (NAME base64url-encoded, with the
/// `@base64` suffix, unless it is made of URL-safe characters only).
fn group_url(base: &str, scenario: &str) -> Result<String, PushError> {
    let base = base.trim_end_matches('/');
    if !base.starts_with("http://") || base.len() <= "http://".len() {
        return Err(PushError::Url(base.to_string()));
    }
    let plain = !scenario.is_empty()
        && scenario
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    Ok(if plain {
        format!("{base}/metrics/job/rehearse/scenario/{scenario}")
    } else {
        format!(
            "{base}/metrics/job/rehearse/scenario@base64/{}",
            base64url(scenario.as_bytes())
        )
    })
}

/// Base64url without padding (RFC 4648 §5), as the Pushgateway accepts in a path.
fn base64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    if out.is_empty() {
        out.push('=');
    }
    out
}

async fn request(method: http::Method, url: &str, body: String) -> Result<String, PushError> {
    let err = |why: String| PushError::Request {
        url: url.to_string(),
        why,
    };
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build_http();
    let req = http::Request::builder()
        .method(method)
        .uri(url)
        .header(http::header::CONTENT_TYPE, "text/plain; version=0.0.4")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| err(e.to_string()))?;
    let res = tokio::time::timeout(TIMEOUT, async {
        let res = client.request(req).await.map_err(|e| err(format!("{e:#}")))?;
        let status = res.status();
        let body = res
            .into_body()
            .collect()
            .await
            .map_err(|e| err(e.to_string()))?
            .to_bytes();
        Ok::<_, PushError>((status, body))
    })
    .await
    .map_err(|_| err(format!("no answer within {} s", TIMEOUT.as_secs())))??;
    let (status, body) = res;
    let text = String::from_utf8_lossy(&body).into_owned();
    if !status.is_success() {
        return Err(PushError::Status {
            url: url.to_string(),
            status: status.as_u16(),
            body: text.chars().take(200).collect(),
        });
    }
    Ok(text)
}

/// The scenario's last success as the Pushgateway holds it (`None`: none, or unreadable).
pub(crate) async fn previous_success(base: &str, scenario: &str) -> Result<Option<f64>, PushError> {
    let base = base.trim_end_matches('/');
    group_url(base, scenario)?;
    let url = format!("{base}/metrics");
    let text = request(http::Method::GET, &url, String::new()).await?;
    Ok(crate::scrape::parse(&text)
        .ok()
        .and_then(|e| series::last_success_in(&e, scenario)))
}

/// Replaces the run's group with its series; `previous` is the last success to carry forward.
pub(crate) async fn push(
    base: &str,
    outcome: &Outcome,
    previous: Option<f64>,
) -> Result<String, PushError> {
    let url = group_url(base, &outcome.scenario)?;
    let body = series::render(&outcome.samples(previous, false));
    request(http::Method::PUT, &url, body).await?;
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_urls() {
        assert_eq!(
            group_url("http://127.0.0.1:9091/", "weekly").unwrap(),
            "http://127.0.0.1:9091/metrics/job/rehearse/scenario/weekly"
        );
        assert_eq!(
            group_url("http://pg:9091", "a/b").unwrap(),
            "http://pg:9091/metrics/job/rehearse/scenario@base64/YS9i"
        );
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert!(matches!(
            group_url("https://pg", "w"),
            Err(PushError::Url(_))
        ));
    }
}
