//! The user's gateway by URL (`[target] kind = "http"`) behind the same seam as one the harness
//! starts, with nothing to start: its "start" is a client at its URL with the bearer token from
//! `token_env` and the model its turns name, and — with `health_path` — the wait until that path
//! answers 2xx (up to `ready_timeout`); it always runs as far as the harness knows, keeps no log
//! the harness reads, and its "stop" stops nothing. The user configures it (the run prints the
//! provider block to paste).

use std::path::Path;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::openclaw::GatewayConfig;
use super::{Effective, Ended, Facts, StartError, Supervised, Supervisor, TurnClient};
use crate::replay::http::TargetError;

/// A gateway the user runs, at `url`.
#[derive(Clone)]
pub struct ByUrl {
    /// Its base URL (`http://127.0.0.1:18789`).
    pub url: String,
    /// The bearer token sent (empty without `token_env`).
    pub token: String,
    /// The model its turns name.
    pub model: String,
    /// The path waited for before the warm-up (none: no health check).
    pub health_path: Option<String>,
    /// How long one turn may take.
    pub turn_timeout: Duration,
    /// How long `health_path` may take to answer 2xx.
    pub ready_timeout: Duration,
}

impl std::fmt::Debug for ByUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByUrl")
            .field("url", &self.url)
            .field("token_fp", &crate::util::fingerprint(&self.token))
            .field("model", &self.model)
            .field("health_path", &self.health_path)
            .field("turn_timeout", &self.turn_timeout)
            .field("ready_timeout", &self.ready_timeout)
            .finish()
    }
}

impl ByUrl {
    fn client(&self) -> Result<TurnClient, TargetError> {
        Ok(TurnClient::new(&self.url, &self.token, self.turn_timeout)?.with_model(&self.model))
    }
}

impl Supervisor for ByUrl {
    fn facts(&self) -> Facts {
        Facts {
            name: "http".into(),
            found: None,
            url: Some(self.url.clone()),
            configured: false,
        }
    }

    fn start<'a>(
        &'a self,
        _config: Option<&'a GatewayConfig>,
        _dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Supervised>, StartError>> {
        Box::pin(async move {
            let client = self.client().map_err(|e| StartError::new(e, Vec::new()))?;
            if let Some(path) = &self.health_path {
                wait_healthy(&client, path, self.ready_timeout)
                    .await
                    .map_err(|e| StartError::new(e, Vec::new()))?;
            }
            Ok(Box::new(Reached(self.clone())) as Box<dyn Supervised>)
        })
    }

    fn says(&self) -> Option<String> {
        None
    }
}

/// The user's gateway, once its health path answered.
struct Reached(ByUrl);

impl Supervised for Reached {
    fn url(&self) -> String {
        self.0.url.clone()
    }

    fn client(&self) -> Result<TurnClient, TargetError> {
        self.0.client()
    }

    fn alive(&mut self) -> bool {
        true
    }

    fn last_lines(&self) -> Vec<String> {
        Vec::new()
    }

    fn isolation(&self) -> Option<String> {
        None
    }

    fn effective(&self) -> Option<Effective> {
        None
    }

    fn stop(self: Box<Self>) -> BoxFuture<'static, Ended> {
        Box::pin(async { Ended::default() })
    }
}

/// The gateway's health path never answered 2xx in time.
#[derive(Debug, thiserror::Error)]
#[error("the gateway's health path {path} did not answer 2xx within {} (last: {last})", humantime::format_duration(*.within))]
pub struct NotHealthy {
    /// The health path.
    path: String,
    /// How long it was given.
    within: Duration,
    /// Its last answer (`HTTP 503`) or why none came, with the cause.
    last: String,
}

/// Waits until `GET health_path` answers 2xx, up to `within`; else why not.
async fn wait_healthy(client: &TurnClient, path: &str, within: Duration) -> Result<(), NotHealthy> {
    let started = Instant::now();
    loop {
        let last = match client.status_of(path).await {
            Ok(s) if (200..300).contains(&s) => return Ok(()),
            Ok(s) => format!("HTTP {s}"),
            Err(e) => crate::util::text::chain(&e),
        };
        if started.elapsed() >= within {
            return Err(NotHealthy {
                path: path.to_string(),
                within,
                last,
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
