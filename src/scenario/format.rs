//! The scenario file (docs/scenario.md): TOML with unknown keys rejected at every level. Parse
//! errors carry the file, line and column (from the TOML span); semantic errors the field.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::fleet::{CoordinatorConfig, FleetConfig};
use crate::engine::{EngineConfig, Policy, Profile};
use crate::transport::TcpTuning;
use crate::upstream::FaultSpec;
use crate::verdict::Expectations;

use super::locate::locate;
use super::target::{TargetSpec, UpstreamSpec};
use crate::util::textpos::line_col;

/// One scenario exactly as written in its file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// The scenario's name (the run directory is named after it).
    pub name: String,
    /// One line for `rehearse list` and the report.
    #[serde(default)]
    pub description: String,
    /// How long the replay runs (at speed 1).
    #[serde(with = "humantime_serde")]
    pub duration: Duration,
    /// The traffic file, relative to the scenario file.
    pub traffic: PathBuf,
    /// How often `/metrics` is scraped (at speed 1).
    #[serde(default = "default_scrape_interval", with = "humantime_serde")]
    pub scrape_interval: Duration,
    /// Seed of every random choice (engine jitter, fault probabilities).
    #[serde(default)]
    pub seed: u64,
    /// The policies to run, one fresh engine and upstream each (A/B when more than one).
    #[serde(default = "default_policies")]
    pub policies: Vec<Policy>,
    /// Engine workers.
    #[serde(default = "default_workers")]
    pub workers: usize,
    /// Overrides of the engine defaults (docs/engine.md).
    #[serde(default)]
    pub engine: EngineConfig,
    /// `[[profile]]`: auth profiles.
    #[serde(default)]
    pub profile: Vec<Profile>,
    /// `[[fault]]`: faults the mock upstream injects (docs/faults.md).
    #[serde(default)]
    pub fault: Vec<FaultSpec>,
    /// `[expect]`: what the run must show.
    #[serde(default)]
    pub expect: Expectations,
    /// `[tcp]`: socket options of the harness's upstream connections (keepalive, user timeout);
    /// empty = the kernel defaults.
    #[serde(default)]
    pub tcp: TcpTuning,
    /// `[fleet]`: several gateway hosts as separate processes (docs/coordinator.md).
    #[serde(default)]
    pub fleet: FleetConfig,
    /// `[coordinator]`: the Redis the fleet's `redis` coordination uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator: Option<CoordinatorConfig>,
    /// `[models]`: the primary and fallback models any gateway can send (`models.rs`).
    #[serde(default, skip_serializing_if = "super::models::ModelsSpec::is_empty")]
    pub models: super::models::ModelsSpec,
    /// `[target]`: the system under test (default: the embedded engine).
    #[serde(default)]
    pub target: TargetSpec,
    /// `[upstream]`: where the mock upstream listens.
    #[serde(default)]
    pub upstream: UpstreamSpec,
    /// `[prometheus]`: a real Prometheus (and Alertmanager) in the run (docs/alerts.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<super::prometheus::PrometheusSpec>,
}

fn default_scrape_interval() -> Duration {
    Duration::from_millis(250)
}

fn default_policies() -> Vec<Policy> {
    vec![Policy::RetryGate]
}

fn default_workers() -> usize {
    4
}

/// A scenario file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// TOML syntax or shape error (unknown key, wrong type), located.
    #[error("{path}:{line}:{col}: {msg}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column (characters).
        col: usize,
        /// What is wrong.
        msg: String,
    },
    /// A well-formed file with a wrong value; names the field, and where it is written when
    /// the file's text was at hand (see [`ScenarioError::located`]).
    #[error("{path}{}: {field}: {msg}", at.map_or(String::new(), |(l, c)| format!(":{l}:{c}")))]
    Invalid {
        /// The file.
        path: String,
        /// 1-based line and column of the offending value, when known.
        at: Option<(usize, usize)>,
        /// The field path (`expect.transition[1].dep`).
        field: String,
        /// What is wrong.
        msg: String,
    },
    /// The scenario cannot run against its system under test at all — not a fault of the file,
    /// nor a failure of the system: a case that does not apply to that kind of target (a run
    /// matrix reports it as such, never as a fail). Refused before the run (exit 2).
    #[error("not applicable: {traffic}:{line}: {reason} (target kind `{kind}`)")]
    NotApplicable {
        /// The traffic file.
        traffic: String,
        /// The 1-based line of the first traffic row the target cannot send.
        line: usize,
        /// The target kind (`openclaw`).
        kind: &'static str,
        /// Why.
        reason: String,
    },
}

impl ScenarioError {
    /// A semantic error without a location yet.
    pub(crate) fn invalid(path: &str, field: &str, msg: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_string(),
            at: None,
            field: field.to_string(),
            msg: msg.into(),
        }
    }

    /// Fills in where an `Invalid` error's field is written in `text` (the scenario file's
    /// content); other errors, and already located ones, are returned as they are.
    pub(crate) fn located(self, text: &str) -> Self {
        match self {
            Self::Invalid {
                path,
                at: None,
                field,
                msg,
            } => Self::Invalid {
                at: locate(text, &field),
                path,
                field,
                msg,
            },
            other => other,
        }
    }
}

impl ScenarioFile {
    /// The kind of system under test (`[target] kind`).
    pub(crate) fn target_kind(&self) -> super::target::TargetKind {
        self.target.kind
    }

    /// Whether the system under test is a gateway outside the harness's process.
    pub(crate) fn is_external(&self) -> bool {
        self.target.kind.is_external()
    }

    /// `[target] versions`, as written.
    pub(crate) fn target_versions(&self) -> &[String] {
        &self.target.versions
    }

    /// `[target]` as written (the report's config block).
    pub(crate) fn target_table(&self) -> serde_json::Value {
        serde_json::to_value(&self.target).unwrap_or_default()
    }

    /// What `[target]` asks of an external gateway, its defaults applied; `None` for the
    /// embedded engine.
    pub(crate) fn external(&self) -> Option<super::target::External> {
        self.target.external()
    }

    /// The embedded engine's fallback chain: `[engine.modelFailover] fallbacks` when written,
    /// else `[models] fallbacks` (`super::models`).
    pub(crate) fn engine_fallbacks(&self) -> &[String] {
        self.models
            .engine_fallbacks(&self.engine.model_failover.fallbacks)
    }

    /// The embedded engine's configuration, its fallback chain [`Self::engine_fallbacks`].
    pub(crate) fn engine_config(&self) -> EngineConfig {
        self.models.engine_config(&self.engine)
    }

    /// A generated gateway configuration's fallbacks and the field they are written at:
    /// `[models] fallbacks`, else `[engine.modelFailover] fallbacks`; `None` without either.
    pub(crate) fn gateway_fallbacks(&self) -> Option<(&[String], &'static str)> {
        self.models
            .gateway_fallbacks(&self.engine.model_failover.fallbacks)
    }

    /// Every fallback model any system under test of the scenario can send (`[models]` and
    /// `[engine.modelFailover]`): expectations and labels may name any of them.
    pub(crate) fn all_fallbacks(&self) -> impl Iterator<Item = &String> {
        self.models
            .all_fallbacks(&self.engine.model_failover.fallbacks)
    }

    /// The expectations a run (`arm`: a policy, a coordination or a target kind) judges: those
    /// without a `policy`, and those naming the run. A fleet's coordination runs each run the
    /// scenario's one policy, so an expectation naming that policy applies to every one.
    pub(crate) fn expect_for(&self, arm: &str) -> crate::verdict::Expectations {
        let mut names = vec![arm];
        if self.fleet.is_fleet() {
            names.extend(self.policies.iter().map(|p| p.as_str()));
        }
        self.expect.for_run(&names)
    }

    /// Parses scenario text; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ScenarioError> {
        toml::from_str::<ScenarioFile>(text).map_err(|e| {
            let (line, col) = e.span().map_or((1, 1), |span| line_col(text, span.start));
            ScenarioError::Syntax {
                path: origin.to_string(),
                line,
                col,
                msg: e.message().trim().to_string(),
            }
        })
    }

    /// Reads and parses a scenario file.
    pub(crate) fn load(path: &Path) -> Result<Self, ScenarioError> {
        let origin = crate::builtin::shown(path);
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Io {
            path: origin.clone(),
            source,
        })?;
        Self::parse(&text, &origin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = "name = \"x\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n";

    #[test]
    fn a_fleets_coordination_runs_judge_what_names_the_policy_they_run() {
        let text = format!(
            "{MIN}policies = [\"retry-gate\"]\n[fleet]\nhosts = 3\ncoordination = [\"none\", \"redis\"]\n\
             [coordinator]\nspawn = true\n\
             [[expect.metric]]\nseries = \"requests_total\"\nat_least = 99999\npolicy = \"retry-gate\"\n\
             [[expect.metric]]\nseries = \"requests_total\"\nat_least = 1\npolicy = \"redis\"\n"
        );
        let f = ScenarioFile::parse(&text, "f.toml").unwrap();
        // Before: filtered out by coordination name in both runs, never judged.
        assert_eq!(f.expect_for("none").metric.len(), 1);
        assert_eq!(f.expect_for("none").metric[0].at_least, Some(99999.0));
        assert_eq!(f.expect_for("redis").metric.len(), 2);
        // Not a fleet: a policy run judges only what names it.
        let one = ScenarioFile::parse(
            &format!("{MIN}policies = [\"legacy\", \"retry-gate\"]\n[[expect.metric]]\nseries = \"requests_total\"\nat_least = 1\npolicy = \"retry-gate\"\n"),
            "p.toml",
        )
        .unwrap();
        assert!(one.expect_for("legacy").metric.is_empty());
        assert_eq!(one.expect_for("retry-gate").metric.len(), 1);
    }

    #[test]
    fn minimal_scenario_gets_defaults() {
        let s = ScenarioFile::parse(MIN, "x.toml").unwrap();
        assert_eq!(s.duration, Duration::from_secs(10));
        assert_eq!(s.scrape_interval, Duration::from_millis(250));
        assert_eq!(s.policies, vec![Policy::RetryGate]);
        assert_eq!(s.workers, 4);
    }

    #[test]
    fn unknown_top_level_key_is_located() {
        let text = format!("{MIN}bogus = 1\n");
        let err = ScenarioFile::parse(&text, "dir/x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("dir/x.toml:4:1: "), "{err}");
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn unknown_key_in_an_expectation_table_is_located() {
        let text = format!("{MIN}[expect]\nsurprise = true\n");
        let err = ScenarioFile::parse(&text, "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.toml:5:1: "), "{err}");
    }

    #[test]
    fn bad_duration_and_unknown_policy_are_errors() {
        let text = MIN.replace("10s", "ten seconds");
        let err = ScenarioFile::parse(&text, "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.toml:2:"), "{err}");
        let text = format!("{MIN}policies = [\"fast\"]\n");
        let err = ScenarioFile::parse(&text, "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.toml:4:"), "{err}");
    }

    #[test]
    fn tcp_table_takes_humantime_and_locates_bad_values() {
        let text = format!("{MIN}[tcp]\nkeepalive_idle = \"5s\"\nuser_timeout = \"2500ms\"\n");
        let s = ScenarioFile::parse(&text, "x.toml").unwrap();
        assert_eq!(s.tcp.keepalive_idle, Some(Duration::from_secs(5)));
        assert_eq!(s.tcp.user_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(
            ScenarioFile::parse(MIN, "x.toml").unwrap().tcp,
            TcpTuning::default()
        );
        for (bad, col) in [
            ("keepalive_idle = \"1500ms\"", 18),
            ("keepalive_retries = 0", 21),
            ("user_timeout = \"soon\"", 16),
            ("keepidle = \"5s\"", 1),
        ] {
            let text = format!("{MIN}[tcp]\n{bad}\n");
            let err = ScenarioFile::parse(&text, "d/x.toml")
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("d/x.toml:5:{col}: ")),
                "{bad}: {err}"
            );
        }
    }
}
