//! The embedded engine as the system under test: every policy of the scenario in turn, each a
//! fresh mock upstream and engine in this process ([`super::harness::run_policy`]), until the
//! last one, a stop request or a harness failure; then the report of what they observed
//! ([`super::assemble::report`], which judges them), not yet written.

use std::path::Path;
use std::time::SystemTime;

use super::assemble::{ReportContext, report};
use super::harness::{RunFiles, run_policy};
use super::plan::ScenarioPlan;
use crate::report::model::Report;
use crate::report::rfc3339;
use crate::transport::SocketsReport;
use crate::util::shutdown::Shutdown;

/// Runs every policy of `sp` into `dir` and `files`; the report (not yet written).
pub async fn run_embedded(
    sp: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
    plain: bool,
) -> Report {
    let started_at = rfc3339(SystemTime::now());
    let mut runs = Vec::new();
    let mut error = None;
    for &policy in &sp.policies {
        if stop.reason().is_some() {
            break;
        }
        match run_policy(sp, policy, dir, files, stop, plain).await {
            Ok(run) => {
                let failed = run.failed.clone();
                runs.push(run);
                if let Some(why) = failed {
                    error = Some(format!("{policy}: {why}", policy = policy.as_str()));
                    break;
                }
            }
            Err(e) => {
                error = Some(format!("{policy}: {e}", policy = policy.as_str()));
                break;
            }
        }
    }
    let host = crate::host::fingerprint();
    let contradictions = super::contradictions::check(sp, &host);
    let sockets =
        SocketsReport::merge(runs.iter().map(|r| r.sockets.clone())).unwrap_or_else(|| {
            SocketsReport {
                requested: sp.checked.file.tcp.clone(),
                ..SocketsReport::default()
            }
        });
    let mut host_json = serde_json::to_value(&host).unwrap_or_default();
    if let Some(obj) = host_json.as_object_mut() {
        obj.insert(
            "tcp_tuning".into(),
            serde_json::to_value(&sockets).unwrap_or_default(),
        );
    }
    let ctx = ReportContext {
        started_at,
        host: host_json,
        contradictions,
        error,
    };
    report(sp, &runs, ctx)
}
