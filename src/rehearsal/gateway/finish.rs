//! The end of an arm's gateway, through the gateway seam ([`Supervised::stop`]): stop it
//! (OpenClaw: SIGTERM, grace, SIGKILL, workers), take what it gives back — its log decisions
//! and its auth state, its files (`openclaw.log`, `openclaw-console.log`) kept with profile keys
//! replaced by fingerprints, the typed cooldowns as `openclaw-auth-state.json` (no keys) — and
//! remove its working directory (its database holds the keys); its log decisions before the
//! run's clock started are the warm-up's (counted apart, not judged). A gateway by URL gives
//! back nothing and leaves the run as it was. Also the report row of one turn.

use std::path::Path;

use crate::gateway::openclaw::{AuthState, LoggedDecision};
use crate::gateway::{Supervised, TurnOutcome};
use crate::rehearsal::gateway::observe::ExternalRun;
use crate::report::model::{CooldownRow, TurnRow};
use crate::scenario::gateway::PlannedTurn;
use crate::util::secrets::Scrubber;
use crate::verdict::answers::{AnswerCheck, content_tokens, served_shape};
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

/// Stops `gw` and fills in what it leaves in `run`: how it stopped, its decisions (the warm-up's
/// apart), its auth state (kept as `openclaw-auth-state.json`), its files kept, its working
/// directory `gateway_dir` removed — each only when it has them (a gateway by URL has none).
pub(super) async fn finish_gateway(
    gw: Box<dyn Supervised>,
    dir: &Path,
    gateway_dir: &Path,
    run: &mut ExternalRun<'_>,
) {
    let ended = gw.stop().await;
    // The profile tokens and the gateway's own secrets (a master key, a gateway token).
    let secrets = run.gw.tokens.scrubber_with(&ended.secrets);
    let started = ended.stop.is_some();
    if let Some(stop) = &ended.stop {
        run.target.stop = Some(if stop.graceful {
            format!("SIGTERM: exited in {:.1} s", stop.took.as_secs_f64())
        } else {
            format!(
                "SIGKILL after {:.1} s (no exit within the grace after SIGTERM)",
                stop.took.as_secs_f64()
            )
        });
        run.target.left_running = stop.survivors.clone();
        run.target.left_in_tmp = stop
            .left_in_tmp
            .iter()
            .map(|p| p.display().to_string())
            .collect();
    }
    match ended.decisions {
        Some(Ok((d, lines))) => {
            count_decisions(run, d);
            run.log_lines = lines;
        }
        Some(Err(why)) => {
            run.notes.push(why.clone());
            run.log_error = Some(why);
        }
        None => {}
    }
    match ended.auth {
        Some(Ok(s)) => keep_auth(run, dir, s, &secrets),
        Some(Err(why)) => {
            run.notes.push(why.clone());
            run.auth_error = Some(why);
        }
        None => {}
    }
    for k in &ended.keep {
        let to = dir.join(kept_name(k.stem, k.ext, run.pinned.as_deref()));
        if let Some(f) = keep(&k.from, &to, &secrets) {
            run.target.files.push(f);
        }
    }
    if started && let Err(e) = std::fs::remove_dir_all(gateway_dir) {
        run.notes
            .push(format!("removing {}: {e}", gateway_dir.display()));
    }
}

/// The decisions `d` into `run`: those logged before the run's clock started are the
/// warm-up's, counted apart and never judged (a run that never got steady judged none of them).
fn count_decisions(run: &mut ExternalRun<'_>, d: Vec<LoggedDecision>) {
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
}

/// The auth state `s` into `run` (its cooldowns) and the run directory (the typed snapshot,
/// no keys: `openclaw-auth-state.json`).
fn keep_auth(run: &mut ExternalRun<'_>, dir: &Path, s: AuthState, secrets: &Scrubber) {
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
        // Checked against what the upstream served once the run's record is in
        // (`super::answers`).
        answer: o.is_ok().then(|| AnswerCheck {
            content_tokens: content_tokens(&o.text),
            served_shape: served_shape(&o.text),
            reported_model: o.model.clone(),
            usage: o.usage,
            recorded: false,
            served: None,
        }),
        said: None,
        turn: Some(t.line as u64),
        model: None,
        profile: None,
    }
}
