//! The end of an OpenClaw target's run: stop it (SIGTERM, grace, SIGKILL, workers), read its
//! log decisions and its auth state, keep `openclaw.log` and `openclaw-console.log` (profile keys
//! replaced by fingerprints) and `openclaw-auth-state.json` (the typed cooldowns, no keys) in
//! the run directory, and remove its working directory (its database holds the keys); its log
//! decisions before the run's clock started are the warm-up's (counted apart, not judged). Also
//! the report row of one turn.

use std::path::Path;

use crate::rehearsal::gateway::observe::ExternalRun;
use crate::rehearsal::plan::ScenarioPlan;
use crate::gateway::openclaw::{Gateway, TurnOutcome};
use crate::report::model::{CooldownRow, TurnRow};
use crate::scenario::gateway::PlannedTurn;
use crate::util::secrets::Scrubber;
use crate::verdict::gateway_eval::event_name;

/// `openclaw.log`, or `openclaw-2026.9.2.log` for a version run side by side.
fn kept_name(stem: &str, ext: &str, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("{stem}-{v}.{ext}"),
        None => format!("{stem}.{ext}"),
    }
}

fn keep(from: &Path, to: &Path, secrets: &Scrubber) -> Option<String> {
    let bytes = std::fs::read(from).ok()?;
    let text = secrets.scrub(&String::from_utf8_lossy(&bytes));
    crate::util::atomic::write_atomic(to, text.as_bytes()).ok()?;
    to.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Stops `gw` and fills in what it leaves in `run`.
pub(super) async fn finish_gateway(
    gw: Gateway,
    dir: &Path,
    gateway_dir: &Path,
    plan: &ScenarioPlan,
    run: &mut ExternalRun<'_>,
) {
    let secrets = Scrubber::fingerprinting(
        plan.checked
            .file
            .profile
            .iter()
            .map(|p| p.credential().to_string()),
    );
    let stopped = gw.stop().await;
    run.target.stop = Some(if stopped.graceful {
        format!("SIGTERM: exited in {:.1} s", stopped.took.as_secs_f64())
    } else {
        format!(
            "SIGKILL after {:.1} s (no exit within the grace after SIGTERM)",
            stopped.took.as_secs_f64()
        )
    });
    run.target.left_running = stopped.survivors.clone();
    run.target.left_in_tmp = stopped
        .left_in_tmp
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    match stopped.decisions() {
        Ok(d) => {
            // Decisions logged before the run's clock started are the warm-up's: counted
            // apart, never judged (a run that never got steady judged none of them).
            let steady = run.target.warmup.as_ref().is_some_and(|w| w.steady);
            let start_ms = (run.start_unix_s() * 1000.0) as u64;
            let (warm, judged): (Vec<_>, Vec<_>) = d
                .into_iter()
                .partition(|x| !steady || (x.wall_ms != 0 && x.wall_ms < start_ms));
            if let Some(w) = run.target.warmup.as_mut() {
                for x in &warm {
                    *w.decisions
                        .entry(event_name(&x.decision).to_string())
                        .or_default() += 1;
                }
            }
            for x in &judged {
                *run.target
                    .decisions
                    .entry(event_name(&x.decision).to_string())
                    .or_default() += 1;
            }
            run.decisions = judged;
            run.log_lines = stopped.log_lines().unwrap_or(0);
        }
        Err(e) => {
            let why = format!("reading OpenClaw's log {}: {e}", stopped.dirs.log.display());
            run.notes.push(why.clone());
            run.log_error = Some(why);
        }
    }
    match stopped.auth_state() {
        Ok(s) => {
            run.target.cooldowns = s
                .profiles
                .iter()
                .map(|p| CooldownRow {
                    profile: p.profile.clone(),
                    reason: p.cooldown_reason.clone(),
                    cooldown_ms: p.cooldown_ms,
                    error_count: p.error_count,
                    disabled_reason: p.disabled_reason.clone(),
                })
                .collect();
            let snapshot = serde_json::json!({
                "found": s.found,
                "profiles": s.profiles,
            });
            let text = secrets.scrub(&serde_json::to_string_pretty(&snapshot).unwrap_or_default());
            let name = kept_name("openclaw-auth-state", "json", run.pinned.as_deref());
            if crate::util::atomic::write_atomic(&dir.join(&name), text.as_bytes()).is_ok() {
                run.target.files.push(name);
            }
            run.auth = Some(s);
        }
        Err(e) => {
            let why = format!("reading OpenClaw's auth state: {e}");
            run.notes.push(why.clone());
            run.auth_error = Some(why);
        }
    }
    let v = run.pinned.clone();
    let log = dir.join(kept_name("openclaw", "log", v.as_deref()));
    if let Some(f) = keep(&stopped.dirs.log, &log, &secrets) {
        run.target.files.push(f);
    }
    let console = dir.join(kept_name("openclaw-console", "log", v.as_deref()));
    if let Some(f) = keep(&stopped.dirs.console, &console, &secrets) {
        run.target.files.push(f);
    }
    if let Err(e) = std::fs::remove_dir_all(gateway_dir) {
        run.notes
            .push(format!("removing {}: {e}", gateway_dir.display()));
    }
}

/// The report row of one turn.
pub(super) fn turn_row(t: &PlannedTurn, lag_ms: u64, o: &TurnOutcome) -> TurnRow {
    TurnRow {
        line: t.line,
        session: t.session.clone(),
        at_ms: t.at_ms,
        lag_ms,
        stream: t.stream,
        status: o.status,
        ok: o.is_ok(),
        finish_reason: o.finish_reason.clone(),
        error: o.error.clone(),
        outcome: Some(o.end()),
        elapsed_ms: o.elapsed_ms,
    }
}
