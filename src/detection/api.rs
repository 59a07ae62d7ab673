//! The little of Prometheus's HTTP API the judge needs: readiness (`/-/ready`), the raw samples
//! of a range selector at one instant (`/api/v1/query`, a matrix), which carry each sample's own
//! timestamp (a rule evaluation's, a scrape's), any other endpoint's `data`
//! (`/api/v1/rules`, `/api/v1/targets`) and Prometheus's own `/metrics` (its rule evaluation
//! counters).

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::error::{DetectionError, QueryError};

/// How long a query waits for the response head, and then for its body, s.
const QUERY_WITHIN_S: u64 = 10;

/// One series of a matrix: labels and (unix ms, value) samples.
pub(crate) type Series = (BTreeMap<String, String>, Vec<(i64, f64)>);

/// A client of one Prometheus.
#[derive(Debug, Clone)]
pub(crate) struct Api {
    base: String,
    client: Client<HttpConnector, Empty<Bytes>>,
}

fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

impl Api {
    /// `base`: `http://HOST:PORT` (a trailing `/` is dropped).
    pub(crate) fn new(base: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }

    /// Its base URL.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    async fn get(&self, path_query: &str) -> Result<(u16, Bytes), QueryError> {
        let uri: http::Uri = format!("{}{path_query}", self.base).parse()?;
        let within = Duration::from_secs(QUERY_WITHIN_S);
        let resp = tokio::time::timeout(within, self.client.get(uri))
            .await
            .map_err(|_| QueryError::NoAnswer(QUERY_WITHIN_S))??;
        let status = resp.status().as_u16();
        let body = tokio::time::timeout(within, resp.into_body().collect())
            .await
            .map_err(|_| QueryError::NoBody(QUERY_WITHIN_S))??
            .to_bytes();
        Ok((status, body))
    }

    /// True once `/-/ready` answers 200.
    pub(crate) async fn ready(&self) -> bool {
        matches!(self.get("/-/ready").await, Ok((200, _)))
    }

    /// The JSON answer of `path_query` (`/api/v1/rules`), its `data` when Prometheus says
    /// `success`.
    pub(crate) async fn data(&self, path_query: &str) -> Result<serde_json::Value, DetectionError> {
        let answer = async {
            let (status, body) = self.get(path_query).await?;
            let mut v: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|source| QueryError::NotJson { status, source })?;
            if v["status"] != "success" {
                return Err(QueryError::Refused {
                    status,
                    text: v["error"].as_str().unwrap_or("no error text").to_string(),
                });
            }
            Ok(v["data"].take())
        };
        answer.await.map_err(|source| DetectionError::Query {
            base: self.base.clone(),
            query: path_query.to_string(),
            source,
        })
    }

    /// Prometheus's own `/metrics` text.
    pub(crate) async fn own_metrics(&self) -> Result<String, DetectionError> {
        let fail = |source| DetectionError::Query {
            base: self.base.clone(),
            query: "/metrics".into(),
            source,
        };
        let (status, body) = self.get("/metrics").await.map_err(fail)?;
        if status != 200 {
            return Err(fail(QueryError::Refused {
                status,
                text: "its own /metrics did not answer 200".into(),
            }));
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// The raw samples of `selector[range]` at `at_unix_ms`.
    pub(crate) async fn samples(
        &self,
        selector: &str,
        range: Duration,
        at_unix_ms: i64,
    ) -> Result<Vec<Series>, DetectionError> {
        let q = format!("{selector}[{}ms]", range.as_millis().max(1));
        let path = format!(
            "/api/v1/query?query={}&time={:.3}",
            encode(&q),
            at_unix_ms as f64 / 1000.0
        );
        let answer = async {
            let (status, body) = self.get(&path).await?;
            let v: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|source| QueryError::NotJson { status, source })?;
            if v["status"] != "success" {
                return Err(QueryError::Refused {
                    status,
                    text: v["error"].as_str().unwrap_or("no error text").to_string(),
                });
            }
            Ok(parse_matrix(&v["data"]["result"]))
        };
        answer.await.map_err(|source| DetectionError::Query {
            base: self.base.clone(),
            query: q.clone(),
            source,
        })
    }
}

/// A matrix result → series; malformed entries are left out.
fn parse_matrix(result: &serde_json::Value) -> Vec<Series> {
    let Some(list) = result.as_array() else {
        return Vec::new();
    };
    list.iter()
        .map(|s| {
            let labels = s["metric"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default();
            let points = s["values"]
                .as_array()
                .map(|vals| {
                    vals.iter()
                        .filter_map(|p| {
                            let t = p.get(0)?.as_f64()?;
                            let v: f64 = p.get(1)?.as_str()?.parse().ok()?;
                            Some(((t * 1000.0).round() as i64, v))
                        })
                        .collect()
                })
                .unwrap_or_default();
            (labels, points)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_parses_into_labels_and_ms_samples() {
        let v: serde_json::Value = serde_json::from_str(
            r#"[{"metric":{"alertname":"A","dep":"x"},"values":[[1700000000.5,"1"],[1700000001,"1"]]},
                {"metric":{},"values":[["bad","1"]]}]"#,
        )
        .unwrap();
        let m = parse_matrix(&v);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].0["alertname"], "A");
        assert_eq!(
            m[0].1,
            vec![(1_700_000_000_500, 1.0), (1_700_000_001_000, 1.0)]
        );
        assert!(m[1].1.is_empty());
    }
}
