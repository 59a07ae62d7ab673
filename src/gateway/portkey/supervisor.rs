//! Portkey behind the harness's gateway seam ([`crate::gateway::Supervisor`]): [`Portkey`] is
//! the install the plan found with what its gateways start with (the turn and ready timeouts,
//! `[target] retries`, the user's config file); its start writes nothing Portkey reads — its
//! routing is the `x-portkey-config` header the turns' client sends with every turn, generated
//! ([`super::config::generated`]) or the user's overlaid ([`super::user_file::overlay`]) with
//! the providers at the arm's upstream — and starts the process ([`super::process`]). A started
//! gateway gives the seam its client, its liveness by its answers, its console's last lines,
//! the config it runs with (keys fingerprinted), what it exports (nothing: no `/metrics`) and
//! its stop.

use std::path::Path;
use std::time::Duration;

use futures_util::future::BoxFuture;
use http::{HeaderName, HeaderValue};

use super::config::{Routing, generated};
use super::install::Install;
use super::process::{Process, last_lines_of};
use super::user_file::{UserFile, overlay};
use crate::gateway::openclaw::GatewayConfig;
use crate::gateway::{
    Effective, Ended, Facts, Found, Keep, StartError, Stop, Supervised, Supervisor, TurnClient,
};
use crate::replay::http::TargetError;

/// The header Portkey reads its routing from.
const CONFIG_HEADER: &str = "x-portkey-config";
/// What the report says Portkey exports.
const EXPORTS: &str = "none: Portkey's open-source gateway has no /metrics (and no circuit \
                           breaker); its decisions are read per turn from its response headers, \
                           and judged only at the upstream";

/// What the harness turns off or forces in every Portkey it starts, said beside the overrides
/// of the user's config.
const TURNED_OFF: [&str; 3] = [
    "listening on every interface: bound to 127.0.0.1 (a `node --require` preload)",
    "its UI and log stream: --headless, NODE_ENV=production",
    "the caller's environment: cleared (no proxy, no Redis cache); TRUSTED_CUSTOM_HOSTS=127.0.0.1,localhost; HOME and TMPDIR in its own directory",
];

/// A Portkey install the plan found, and what its gateways start with.
#[derive(Debug, Clone)]
pub struct Portkey {
    install: Install,
    /// Each generated target's retries (`[target] retries`).
    pub retries: u32,
    /// The user's config (`[target] config`).
    pub user: Option<UserFile>,
    /// How long one turn may take.
    pub turn_timeout: Duration,
    /// How long it may take to answer `GET /`.
    pub ready_timeout: Duration,
}

impl Portkey {
    /// Gateways of `install`, with the defaults (no retries, no user config, 600 s turns, 60 s
    /// to be ready).
    pub fn new(install: Install) -> Self {
        Self {
            install,
            retries: 0,
            user: None,
            turn_timeout: Duration::from_secs(600),
            ready_timeout: Duration::from_secs(60),
        }
    }

    /// The routing of `config` (its providers at the upstream), and what was laid over the
    /// user's config.
    pub fn routing(&self, config: &GatewayConfig) -> Result<(Routing, Option<Vec<String>>), String> {
        match &self.user {
            Some(u) => overlay(&u.value, config)
                .map(|(r, over)| (r, Some(over)))
                .map_err(|e| format!("{}: {e}", u.path.display())),
            None => generated(config, self.retries)
                .map(|r| (r, None))
                .map_err(|e| e.to_string()),
        }
    }
}

impl Supervisor for Portkey {
    fn facts(&self) -> Facts {
        Facts {
            name: "Portkey".into(),
            found: Some(Found {
                version: self.install.version.clone(),
                executable: self.install.entry.clone(),
            }),
            url: None,
            configured: true,
        }
    }

    fn start<'a>(
        &'a self,
        config: Option<&'a GatewayConfig>,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Supervised>, StartError>> {
        Box::pin(async move {
            let Some(config) = config else {
                return Err(StartError::new("Portkey needs a configuration", Vec::new()));
            };
            let (routing, over) = self.routing(config).map_err(|e| StartError::new(e, Vec::new()))?;
            let header = HeaderValue::from_str(&routing.config.to_string()).map_err(|_| {
                StartError::new("the Portkey config is not a valid header value", Vec::new())
            })?;
            let keys: Vec<String> = config.profiles.iter().map(|p| p.key.clone()).collect();
            let process = Process::start(&self.install, dir, self.ready_timeout)
                .await
                .map_err(|e| {
                    let exited = matches!(e, super::process::ProcessError::Exited { .. });
                    let err = StartError::new(e, last_lines_of(&dir.join("portkey.log")));
                    if exited { err.exited() } else { err }
                })?;
            let mut set: Vec<String> = TURNED_OFF.iter().map(|t| t.to_string()).collect();
            set.push(self.install.server_note());
            Ok(Box::new(Started {
                process,
                routing,
                over,
                set,
                header,
                keys,
                turn_timeout: self.turn_timeout,
                model: crate::gateway::portkey::config::split_model(&config.primary).1.to_string(),
            }) as Box<dyn Supervised>)
        })
    }

    fn says(&self) -> Option<String> {
        Some(self.install.version.clone())
    }
}

/// A started Portkey gateway.
struct Started {
    process: Process,
    routing: Routing,
    over: Option<Vec<String>>,
    /// What the harness turned off or forced, and the HTTP server it runs on.
    set: Vec<String>,
    header: HeaderValue,
    keys: Vec<String>,
    turn_timeout: Duration,
    model: String,
}

impl Supervised for Started {
    fn url(&self) -> String {
        self.process.base_url()
    }

    fn client(&self) -> Result<TurnClient, TargetError> {
        let labels = self
            .routing
            .leaves
            .iter()
            .map(|l| (l.path.clone(), l.label()))
            .collect();
        Ok(TurnClient::bare(
            &self.process.base_url(),
            self.turn_timeout,
            vec![(HeaderName::from_static(CONFIG_HEADER), self.header.clone())],
        )?
        .with_model(&self.model)
        .with_said(crate::wire::said::SaidBy::Portkey)
        .with_labels(labels))
    }

    fn alive(&mut self) -> bool {
        self.process.down().is_none()
    }

    fn down(&mut self) -> Option<String> {
        self.process.down()
    }

    fn last_lines(&self) -> Vec<String> {
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        let scrub = crate::util::secrets::Scrubber::fingerprinting(keys.iter().map(|k| k.to_string()));
        self.process.last_lines().iter().map(|l| scrub.scrub(l)).collect()
    }

    fn isolation(&self) -> Option<String> {
        // No /tmp namespace: its TMPDIR and HOME are in its own directory (`process`).
        None
    }

    fn effective(&self) -> Option<Effective> {
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        Some(Effective {
            name: "portkey-config.json",
            config: Ok(self.routing.shown(&keys)),
            // With a generated config, what the harness set is a note of the report.
            over_user: Some((self.over.clone().unwrap_or_default(), self.set.clone())),
        })
    }

    fn routing(&self) -> Vec<String> {
        self.routing.leaves.iter().map(|l| l.label()).collect()
    }

    fn exports(&self) -> Option<String> {
        Some(EXPORTS.into())
    }

    fn stop(self: Box<Self>) -> BoxFuture<'static, Ended> {
        Box::pin(async move {
            let s = self.process.stop().await;
            Ended {
                stop: Some(Stop {
                    graceful: s.graceful,
                    took: s.took,
                    survivors: s.survivors,
                    left_in_tmp: Vec::new(),
                }),
                decisions: None,
                auth: None,
                keep: vec![Keep {
                    from: s.dirs.log.clone(),
                    stem: "portkey",
                    ext: "log",
                }],
                // No key of its own (no auth on loopback): the profile tokens are all it holds.
                secrets: Vec::new(),
            }
        })
    }
}
