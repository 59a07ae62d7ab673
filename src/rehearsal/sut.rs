//! The system under test: the one type every kind of run is. Each kind says what its run
//! starts and how it stops, runs every arm of the scenario (the embedded engine's policies, a
//! gateway's one run, a fleet's coordinations) against the one upstream recorder, and returns
//! what it observed as one [`Observed`] (an [`crate::run::observation::Observation`] per arm);
//! [`crate::run::assemble::report`] then judges every kind alike (one section builder, the one
//! judge [`crate::report::judge`]) and [`super::cmd`] finishes and writes the report. A fourth
//! kind is one more variant here producing an `Observed`.

use std::path::Path;

use crate::report::model::Report;
use crate::run::harness::RunFiles;
use crate::run::observation::Observed;
use crate::run::plan::ScenarioPlan;
use crate::util::shutdown::Shutdown;

/// What a scenario rehearses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemUnderTest {
    /// The embedded failover and breaker engine, in this process: per policy, a fresh mock
    /// upstream, engine (the one rig, [`crate::run::rig`]), `/metrics`, scraper and canaries;
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
        } else if file.target.kind.is_external() {
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
        let observed = self.observe(sp, dir, files, stop, plain_progress).await;
        crate::run::assemble::report(sp, observed)
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
                crate::run::embedded::run_embedded(sp, dir, files, stop, plain_progress).await
            }
            Self::Gateway => crate::run::external::run_external(sp, dir, files, stop).await,
            Self::Fleet => crate::fleet::run_fleet_scenario(sp, dir, files, stop).await,
        }
    }
}
