//! Why a gateway run's expectation failed, in its row's detail: what the upstream saw for the
//! row's profile (each model request's time and fault, in order) and what the gateway decided
//! (its log decisions and the profile's auth state, on the same clock). A count of 15 attempts
//! where 4–10 were allowed, or a cooldown of 17.4 s instead of 30 s, then says whether the
//! gateway retried past its rotation, rotated back, or wrote its cooldown at another failure.
//!
//! Pure: everything comes in as read; times are scenario seconds from the run's clock (the
//! records' `wall_ms − t_ms`), so the requests and the decisions line up.

use std::collections::BTreeMap;

use super::{ExpectKind, ExpectStatus, ExpectationResult};
use crate::gateway::openclaw::log::{Decision, LoggedDecision, profile_hash};
use crate::gateway::openclaw::state::AuthState;
use crate::upstream::{RouteKind, UpstreamRecord};

/// At most this many requests, and this many decisions, in one row's detail.
const MAX_ITEMS: usize = 40;

/// What a gateway run left to explain its failed rows with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GatewayTrace<'a> {
    /// The model requests the run's recorder kept (warm-up excluded).
    pub records: &'a [UpstreamRecord],
    /// Profile id → fingerprint of its token.
    pub profile_fps: &'a BTreeMap<String, String>,
    /// The gateway's log decisions, when read (an OpenClaw target).
    pub decisions: Option<&'a [LoggedDecision]>,
    /// Its auth state after the stop, when read.
    pub auth: Option<&'a AuthState>,
}

/// Appends the trace to the detail of each failed row judged at the upstream or on the
/// gateway's log or state.
pub(crate) fn annotate(rows: &mut [ExpectationResult], t: &GatewayTrace<'_>) {
    for r in rows.iter_mut().filter(|r| explained(r)) {
        let text = explain(r.dep.as_deref(), t);
        r.detail = format!("{} — {text}", r.detail);
    }
}

fn explained(r: &ExpectationResult) -> bool {
    r.status == ExpectStatus::Fail
        && matches!(
            r.kind,
            ExpectKind::Attempts
                | ExpectKind::FirstRequest
                | ExpectKind::NoRequest
                | ExpectKind::RetryGaps
                | ExpectKind::Recovered
                | ExpectKind::GatewayDecision
                | ExpectKind::GatewayCooldown
        )
}

/// `12.3s` (one decimal, scenario time; negative before the clock started).
fn at(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let a = ms.unsigned_abs();
    format!("{sign}{}.{}s", a / 1000, (a % 1000) / 100)
}

fn capped(items: Vec<String>, sep: &str) -> String {
    let n = items.len();
    let mut out = items
        .into_iter()
        .take(MAX_ITEMS)
        .collect::<Vec<_>>()
        .join(sep);
    if n > MAX_ITEMS {
        out.push_str(&format!("{sep}… {} more", n - MAX_ITEMS));
    }
    out
}

/// The text for a row whose dep is `dep` (`mockai:a`, `mockai:a m1`, a model, `all`).
pub(crate) fn explain(dep: Option<&str>, t: &GatewayTrace<'_>) -> String {
    let names: BTreeMap<&str, &str> = t
        .profile_fps
        .iter()
        .map(|(id, fp)| (fp.as_str(), id.as_str()))
        .collect();
    let model_calls: Vec<&UpstreamRecord> = t
        .records
        .iter()
        .filter(|r| r.route == RouteKind::Llm && !r.canary && !r.warmup)
        .collect();
    // The run's clock in wall ms (speed 1: an external target's only speed).
    let origin = model_calls
        .iter()
        .find(|r| r.wall_ms > 0)
        .map(|r| r.wall_ms.saturating_sub(r.t_ms) as i64);
    let profile = dep
        .and_then(|d| d.split_whitespace().next())
        .filter(|p| t.profile_fps.contains_key(*p));
    let fp = profile.and_then(|p| t.profile_fps.get(p)).map(String::as_str);
    let seen: Vec<String> = model_calls
        .iter()
        .filter(|r| fp.is_none_or(|f| r.profile_fp.as_deref() == Some(f)))
        .map(|r| {
            let who = match (fp, r.profile_fp.as_deref()) {
                (Some(_), _) => String::new(),
                (None, Some(f)) => format!("{} ", names.get(f).copied().unwrap_or("unknown key")),
                (None, None) => "no key ".into(),
            };
            let model = r.model.as_deref().unwrap_or("?");
            format!(
                "{} {who}{model} {}",
                at(r.t_ms as i64),
                r.fault.as_deref().unwrap_or("ok")
            )
        })
        .collect();
    let mut out = format!(
        "the upstream saw for {} ({} request{}): {}",
        profile.unwrap_or("every profile"),
        seen.len(),
        if seen.len() == 1 { "" } else { "s" },
        if seen.is_empty() {
            "none".into()
        } else {
            capped(seen, ", ")
        }
    );
    let hashes: BTreeMap<String, &str> = t
        .profile_fps
        .keys()
        .map(|id| (profile_hash(id), id.as_str()))
        .collect();
    let when = |wall: u64| match origin {
        Some(o) => at(wall as i64 - o),
        None => format!("wall {wall}"),
    };
    if let Some(ds) = t.decisions {
        let said: Vec<String> = ds
            .iter()
            .map(|d| format!("{} {}", when(d.wall_ms), decision_text(&d.decision, &hashes, &when)))
            .collect();
        out.push_str(&format!(
            "; the gateway decided ({}): {}",
            said.len(),
            if said.is_empty() {
                "nothing".into()
            } else {
                capped(said, "; ")
            }
        ));
    }
    if let Some(state) = t.auth {
        let shown: Vec<String> = state
            .profiles
            .iter()
            .filter(|p| profile.is_none_or(|id| p.profile == id))
            .map(|p| {
                let mut s = format!("{}: errors {}", p.profile, p.error_count);
                if let Some(f) = p.last_failure_at_ms {
                    s.push_str(&format!(", last failure {}", when(f)));
                }
                if let Some(u) = p.cooldown_until_ms {
                    s.push_str(&format!(
                        ", cooldown until {} ({} {})",
                        when(u),
                        p.cooldown_ms.map_or("?".into(), |c| at(c as i64)),
                        p.cooldown_reason.as_deref().unwrap_or("no reason")
                    ));
                }
                if let Some(u) = p.disabled_until_ms.filter(|u| *u > 0) {
                    s.push_str(&format!(", disabled until {}", when(u)));
                }
                s
            })
            .collect();
        out.push_str(&format!(
            "; auth state: {}",
            if shown.is_empty() {
                "no profile state".into()
            } else {
                shown.join("; ")
            }
        ));
    }
    out
}

fn decision_text(
    d: &Decision,
    hashes: &BTreeMap<String, &str>,
    when: &dyn Fn(u64) -> String,
) -> String {
    let who = |h: &Option<String>| match h {
        Some(h) => hashes.get(h).copied().unwrap_or(h.as_str()).to_string(),
        None => "?".into(),
    };
    let opt = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
    let name = super::gateway_eval::event_name(d);
    match d {
        Decision::Failover {
            reason,
            retry_count,
            profile_hash,
            provider,
            model,
            ..
        } => format!(
            "{name} {} from {} {}/{}{}",
            opt(reason),
            who(profile_hash),
            opt(provider),
            opt(model),
            retry_count.map_or(String::new(), |n| format!(" after {n} retries"))
        ),
        Decision::ProfileFailureState {
            profile_hash,
            reason,
            cooldown_until_ms,
        } => format!(
            "{name} {} {}{}",
            who(profile_hash),
            opt(reason),
            cooldown_until_ms.map_or(String::new(), |u| format!(" cooldown until {}", when(u)))
        ),
        Decision::ModelFallback {
            candidate, reason, ..
        } => format!("{name} {} {}", opt(candidate), opt(reason)),
        Decision::FallbackChainStopped { reason } => format!("{name} {}", opt(reason)),
        Decision::SameModelRetry {
            attempt,
            of,
            target,
            reason,
            delay_ms,
        } => format!(
            "{name} {attempt}/{of} {target} {} wait {}",
            opt(reason),
            at(*delay_ms as i64)
        ),
        Decision::RetryWindowElapsed { target, retries } => format!(
            "{name} {target}{}",
            retries.map_or(String::new(), |n| format!(" after {n} retries"))
        ),
        Decision::IdleTimeoutBreakerTripped { consecutive, cap } => format!(
            "{name} {}/{}",
            consecutive.map_or("?".into(), |n| n.to_string()),
            cap.map_or("?".into(), |n| n.to_string())
        ),
    }
}

#[cfg(test)]
mod tests;
