//! OpenClaw behind the harness's gateway seam ([`crate::gateway::Supervisor`]): [`Openclaw`] is
//! the install the plan found with the options it planned (timeouts, the user's config as the
//! base); its start is [`Gateway::start`] (config written, keys seeded, started in its private
//! namespace, `/health` waited for), and a started gateway ([`Started`]) gives the seam its
//! turns' client, its liveness, its last lines, its effective config and its stop — after
//! which its log decisions and auth state are read back and its log and console offered for
//! keeping.

use std::path::Path;

use futures_util::future::BoxFuture;

use super::errors::{GatewayError, GatewayOptions};
use super::install::Install;
use super::process::{Gateway, Stopped};
use crate::gateway::{
    Effective, Ended, Facts, Found, Keep, StartError, Stop, Supervised, Supervisor, TurnClient,
};
use crate::replay::http::TargetError;

/// An OpenClaw install the plan found, and the options its gateways start with.
#[derive(Debug, Clone)]
pub struct Openclaw {
    install: Install,
    options: GatewayOptions,
}

impl Openclaw {
    /// Gateways of `install`, started with `options`.
    pub fn new(install: Install, options: GatewayOptions) -> Self {
        Self { install, options }
    }
}

impl Supervisor for Openclaw {
    fn facts(&self) -> Facts {
        Facts {
            name: "OpenClaw".into(),
            found: Some(Found {
                version: self.install.openclaw_version.clone(),
                executable: self.install.openclaw.clone(),
            }),
            url: None,
            configured: true,
        }
    }

    fn start<'a>(
        &'a self,
        config: Option<&'a super::GatewayConfig>,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Supervised>, StartError>> {
        Box::pin(async move {
            let Some(config) = config else {
                return Err(StartError::new("OpenClaw needs a configuration", Vec::new()));
            };
            match Gateway::start(&self.install, config, dir, self.options.clone()).await {
                Ok(gw) => Ok(Box::new(Started(gw)) as Box<dyn Supervised>),
                Err(e) => Err(start_error(e)),
            }
        })
    }

    fn says(&self) -> Option<String> {
        self.install.says()
    }
}

/// The seam's error for `e`: an exit before healthy is worth one more try.
fn start_error(e: GatewayError) -> StartError {
    let exited = matches!(e, GatewayError::Exited { .. });
    let lines = e.last_lines().to_vec();
    let err = StartError::new(e, lines);
    if exited { err.exited() } else { err }
}

/// A started OpenClaw gateway.
#[derive(Debug)]
struct Started(Gateway);

impl Supervised for Started {
    fn url(&self) -> String {
        self.0.base_url()
    }

    fn client(&self) -> Result<TurnClient, TargetError> {
        self.0.client()
    }

    fn alive(&mut self) -> bool {
        self.0.running()
    }

    fn last_lines(&self) -> Vec<String> {
        self.0.last_lines()
    }

    fn isolation(&self) -> Option<String> {
        Some(self.0.isolation().as_str().to_string())
    }

    fn effective(&self) -> Option<Effective> {
        Some(Effective {
            name: "openclaw-config.json",
            config: self.0.effective_config(),
            over_user: self
                .0
                .overlaid()
                .map(|o| (o.overridden.clone(), o.turned_off.clone())),
        })
    }

    fn stop(self: Box<Self>) -> BoxFuture<'static, Ended> {
        // Its gateway token (the turns' bearer) is a secret of its own in its kept files.
        let token = self.0.token().to_string();
        Box::pin(async move {
            let mut e = ended(self.0.stop().await);
            e.secrets.push(token);
            e
        })
    }
}

/// What a stopped OpenClaw leaves: how it stopped, its log decisions, its auth state, its log
/// and console.
fn ended(stopped: Stopped) -> Ended {
    let decisions = match stopped.decisions() {
        Ok(d) => Ok((d, stopped.log_lines().unwrap_or(0))),
        Err(e) => Err(format!(
            "reading OpenClaw's log {}: {e}",
            stopped.dirs.log.display()
        )),
    };
    let auth = stopped
        .auth_state()
        .map_err(|e| format!("reading OpenClaw's auth state: {e}"));
    Ended {
        stop: Some(Stop {
            graceful: stopped.graceful,
            took: stopped.took,
            survivors: stopped.survivors.clone(),
            left_in_tmp: stopped.left_in_tmp.clone(),
        }),
        decisions: Some(decisions),
        auth: Some(auth),
        keep: vec![
            Keep {
                from: stopped.dirs.log.clone(),
                stem: "openclaw",
                ext: "log",
            },
            Keep {
                from: stopped.dirs.console.clone(),
                stem: "openclaw-console",
                ext: "log",
            },
        ],
        secrets: Vec::new(),
    }
}
