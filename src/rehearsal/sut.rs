//! The system under test: the one type every kind of run is. Each kind says what its run
//! starts and how it stops, runs every arm of the scenario (the embedded engine's policies, a
//! gateway's one run, a fleet's coordinations) against the one upstream recorder, and returns
//! what it observed as one [`Observed`] (an [`crate::rehearsal::observation::Observation`] per arm);
//! [`crate::rehearsal::assemble::report`] then judges every kind alike (one section builder, the one
//! judge [`crate::report::judge`]) and [`super::cmd`] finishes and writes the report. A fourth
//! kind is one more variant here producing an `Observed`.

use std::path::Path;

use crate::report::model::Report;
use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::observation::Observed;
use crate::rehearsal::plan::ScenarioPlan;
use crate::util::shutdown::Shutdown;

/// What a scenario rehearses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemUnderTest {
    /// The embedded failover and breaker engine, in this process: per policy, a fresh mock
    /// upstream, engine (the one rig, [`crate::rehearsal::embedded::rig`]), `/metrics`, scraper and canaries;
    /// stopped in order at `duration`, on a stop request or when the upstream dies.
    Embedded,
    /// An external gateway (`[target] kind = "openclaw" | "http"`): the mock upstream, the
    /// gateway (OpenClaw started from a fresh state, or the user's by URL) sent the traffic as
    /// turns at speed 1, its metrics scraped when it has an endpoint; the gateway stopped (by
    /// its watchdog-guarded process group) and its log and auth state kept.
    Gateway,
    /// A fleet (`[fleet] hosts = N > 1`): per coordination, the mock upstream, the Redis of a
    /// `redis` run, N host processes (each the one rig) and their scrapers; every host stopped
    /// by closing its stdin, then by its pid.
    Fleet,
}

impl SystemUnderTest {
    /// The system `sp` rehearses.
    pub(crate) fn of(sp: &ScenarioPlan) -> Self {
        let file = &sp.checked.file;
        if file.fleet.is_fleet() {
            Self::Fleet
        } else if sp.is_external() {
            Self::Gateway
        } else {
            Self::Embedded
        }
    }

    /// Runs every arm of `sp` into `dir` and `files` until it ends or `stop` is requested; the
    /// judged report, not yet written. A harness failure is the report's verdict (`error`).
    pub async fn rehearse(
        self,
        sp: &ScenarioPlan,
        dir: &Path,
        files: &RunFiles,
        stop: &Shutdown,
        plain_progress: bool,
    ) -> Report {
        let Some(spec) = &sp.checked.file.prometheus else {
            let observed = self.observe(sp, dir, files, stop, plain_progress).await;
            crate::rehearsal::mutants::write_if_asked(dir, sp, &observed);
            return crate::rehearsal::assemble::report(sp, observed);
        };
        // The detection path, once for every kind: started before the first arm, each arm
        // publishing its metrics endpoints (`files.targets`), read arm by arm after the last,
        // stopped by pid; its death mid-run stops the run and is its harness failure.
        let mut detection =
            match crate::detection::Detection::start(spec, &sp.checked.path, dir, &files.targets)
                .await
            {
                Ok(d) => d,
                Err(e) => {
                    let why = crate::util::text::chain(&e);
                    let observed = self.not_started(sp, Some(format!("[prometheus]: {why}")));
                    return crate::rehearsal::assemble::report(sp, observed);
                }
            };
        let run_stop = Shutdown::new();
        let forward = {
            let (outer, inner) = (stop.clone(), run_stop.clone());
            tokio::spawn(async move {
                outer.requested().await;
                inner.request(&outer.reason().unwrap_or_default());
            })
        };
        detection.watch(&run_stop);
        let mut observed = self
            .observe(sp, dir, files, &run_stop, plain_progress)
            .await;
        forward.abort();
        if let Some(why) = detection.died() {
            observed.error.get_or_insert(why);
        } else if let Some(e) = files.targets.take_write_error() {
            observed.error.get_or_insert(crate::util::text::chain(&e));
        }
        let windows = files.targets.windows();
        for o in &mut observed.observations {
            let Some(i) = windows.iter().rposition(|w| w.arm == o.arm) else {
                o.alerts = Some(Err("the arm never published its metrics endpoints".into()));
                continue;
            };
            let next = windows.get(i + 1).map(|w| w.start_unix_ms);
            o.alerts = Some(match detection.died() {
                Some(_) => Err("Prometheus or Alertmanager died mid-run".into()),
                None => detection
                    .read(i, &windows[i], next)
                    .await
                    .map_err(|e| crate::util::text::chain(&e)),
            });
        }
        detection.stop();
        crate::rehearsal::mutants::write_if_asked(dir, sp, &observed);
        crate::rehearsal::assemble::report(sp, observed)
    }

    /// A run that did not start: every arm not run, for the harness error `why` (none: a stop
    /// request came first).
    pub(crate) fn not_started(self, sp: &ScenarioPlan, why: Option<String>) -> Observed {
        let file = &sp.checked.file;
        let (arm, arms): (&'static str, Vec<String>) = match self {
            Self::Embedded => (
                "policy",
                sp.policies.iter().map(|p| p.as_str().to_string()).collect(),
            ),
            Self::Gateway if !sp.versions.is_empty() => ("version", sp.versions.clone()),
            Self::Gateway => ("target", sp.gateways.iter().map(|g| g.arm.clone()).collect()),
            Self::Fleet => (
                "coordination",
                file.fleet
                    .coordination
                    .iter()
                    .map(|c| c.as_str().to_string())
                    .collect(),
            ),
        };
        Observed {
            arm,
            arms,
            observations: Vec::new(),
            error: why,
            started_at: crate::report::rfc3339(std::time::SystemTime::now()),
            host: serde_json::to_value(crate::host::fingerprint()).unwrap_or_default(),
            contradictions: Vec::new(),
            speed: sp.speed,
            part: crate::rehearsal::observation::KindPart::Embedded,
        }
    }

    /// Runs every arm of `sp` into `dir` and `files` until it ends or `stop` is requested; what
    /// the system under test observed, arm by arm.
    pub async fn observe(
        self,
        sp: &ScenarioPlan,
        dir: &Path,
        files: &RunFiles,
        stop: &Shutdown,
        plain_progress: bool,
    ) -> Observed {
        match self {
            Self::Embedded => {
                crate::rehearsal::embedded::arms::run_embedded(sp, dir, files, stop, plain_progress).await
            }
            Self::Gateway => crate::rehearsal::gateway::arms::run_external(sp, dir, files, stop).await,
            Self::Fleet => crate::rehearsal::fleet::run_fleet_scenario(sp, dir, files, stop).await,
        }
    }
}
