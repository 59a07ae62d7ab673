//! The failover decision as a pure function: (state, outcome, now, rng) → `Step`. No clock, no
//! I/O, no locks: the executor gathers a `FailoverCtx` (the provider's profiles with their
//! cooldowns and breaker states), calls [`decide`], applies the cooldown it asks for and acts on
//! the decision. Table tests and the criterion bench call it directly.
//!
//! Log lines (docs/engine.md, word for word): `Profile ID timed out. Retry 1/1 in 847ms...`,
//! `Profile ID timed out (1 retries exhausted). Trying next account...`,
//! `Cooldown applied: 10000ms for timeout reason`, legacy
//! `Profile ID timed out (possible rate limit). Trying next account...` (the old code logged it
//! for every rotation, and
//! `No available auth profile for PROVIDER (all in cooldown or unavailable).`. Ours for the other
//! rotations: `Profile ID rate limited (Retry-After 120s). Trying next account...` (without the
//! parenthesis when there was no Retry-After) and `Profile ID failed (REASON). Trying next
//! account...`; for fallbacks `Model Fallback: TO (selected FROM; REASON)` (OpenClaw's
//! user-visible string without its emoji).

use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

pub mod classify;
pub mod cooldown;
pub mod policy;
pub mod profiles;
pub mod retry_after;
pub mod store;
pub mod throttle;

use crate::engine::events::EventKind;
use crate::engine::outcome::Reason;
use classify::Classified;
use cooldown::{Preset, Schedules};
use policy::Policy;

/// One profile of the current provider as failover sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileView {
    /// Profile id.
    pub id: String,
    /// Unavailable until then (cooldown or disabled), if in the future.
    pub cooling_until: Option<Instant>,
    /// The reason of that cooldown.
    pub cooldown_reason: Option<Reason>,
    /// The model endpoint's breaker rejects every call.
    pub open: bool,
    /// Last use (unix ms; 0 = never), for least-recently-used rotation.
    pub last_used_ms: u64,
}

impl ProfileView {
    /// Usable at `now`.
    pub fn available(&self, now: Instant) -> bool {
        !self.open && self.cooling_until.is_none_or(|t| t <= now)
    }
}

/// What `decide` needs to know about configuration and the current provider.
#[derive(Debug, Clone)]
pub struct FailoverCtx<'a> {
    /// The policy.
    pub policy: Policy,
    /// `retrySameProfileOnTimeout`.
    pub same_profile_retries: u32,
    /// `retryBackoffMs` (min, max).
    pub backoff_ms: (u64, u64),
    /// The configured schedules (the `legacy` policy always uses the legacy preset).
    pub schedules: &'a Schedules,
    /// `modelFailover.fallbacks`.
    pub fallbacks: &'a [String],
    /// `modelFailover.contextFallbacks`.
    pub context_fallbacks: &'a [String],
    /// The current provider's profiles in configuration order.
    pub profiles: &'a [ProfileView],
    /// The current profile's `(errorCount, failureCounts[reason])` before this failure.
    pub counts: (u32, u32),
}

/// Per-request failover state, owned by the executor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestState {
    /// The model being tried.
    pub model: String,
    /// Its provider.
    pub provider: String,
    /// The profile of the last attempt.
    pub profile: String,
    /// Same-profile retries spent on `profile`.
    pub same_profile_retries: u32,
    /// Profiles tried for `model` (rotation does not go back to them).
    pub tried: Vec<String>,
    /// Models tried (the primary first).
    pub models: Vec<String>,
}

impl RequestState {
    /// A fresh state for `model` of `provider`.
    pub fn new(model: &str, provider: &str) -> Self {
        Self {
            model: model.to_string(),
            provider: provider.to_string(),
            models: vec![model.to_string()],
            ..Self::default()
        }
    }
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The attempt succeeded; the request is done.
    Done,
    /// Retry the same profile after `delay` (nominal, before dividing by speed).
    RetrySame {
        /// The jittered delay.
        delay: Duration,
    },
    /// Try profile `to` next.
    Rotate {
        /// The profile id.
        to: String,
    },
    /// Move the request to another model.
    Fallback {
        /// The model.
        model: String,
    },
    /// Give up.
    Fail,
}

/// A cooldown to write for the current profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CooldownWrite {
    /// Profile id.
    pub profile: String,
    /// Reason.
    pub reason: Reason,
    /// Length (nominal).
    pub duration: Duration,
}

/// The result of one decision: what to do, what to write, what to log.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The decision.
    pub choice: Choice,
    /// A cooldown to write first, if any.
    pub cooldown: Option<CooldownWrite>,
    /// Events to emit, with their log lines.
    pub events: Vec<(EventKind, Option<String>)>,
}

impl Step {
    fn new(choice: Choice) -> Self {
        Self {
            choice,
            cooldown: None,
            events: Vec::new(),
        }
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The cooldown a failure of `reason` writes under `policy`, if any (before Retry-After).
pub fn cooldown_for(ctx: &FailoverCtx<'_>, reason: Reason) -> Option<Duration> {
    let (errors, per_reason) = ctx.counts;
    match ctx.policy {
        Policy::Legacy => match reason {
            Reason::Content | Reason::ContextOverflow => None,
            _ => Schedules::preset(Preset::Legacy).cooldown(reason, errors.saturating_add(1)),
        },
        Policy::RetryGate => ctx.schedules.cooldown(reason, per_reason.saturating_add(1)),
    }
}

/// The next profile to try at `now`: available, not yet tried for this model, least recently
/// used first, configuration order breaking ties.
pub fn pick_profile(profiles: &[ProfileView], tried: &[String], now: Instant) -> Option<String> {
    profiles
        .iter()
        .enumerate()
        .filter(|(_, p)| p.available(now) && !tried.contains(&p.id))
        .min_by_key(|(i, p)| (p.last_used_ms, *i))
        .map(|(_, p)| p.id.clone())
}

fn next_model(list: &[String], tried: &[String]) -> Option<String> {
    list.iter().find(|m| !tried.contains(m)).cloned()
}

fn rotate_line(policy: Policy, id: &str, c: &Classified, gate: u32) -> String {
    let reason = c.reason.unwrap_or(Reason::Unknown);
    match (policy, reason) {
        (Policy::Legacy, _) => {
            format!("Profile {id} timed out (possible rate limit). Trying next account...")
        }
        (_, Reason::Timeout) => {
            format!("Profile {id} timed out ({gate} retries exhausted). Trying next account...")
        }
        (_, Reason::RateLimit) => match c.retry_after {
            Some(d) => format!(
                "Profile {id} rate limited (Retry-After {}s). Trying next account...",
                d.as_secs()
            ),
            None => format!("Profile {id} rate limited. Trying next account..."),
        },
        (_, r) => format!(
            "Profile {id} failed ({}). Trying next account...",
            r.as_str()
        ),
    }
}

/// When no profile of the provider can be picked: `NoProfileAvailable` (if every profile is
/// cooling or open) then the next fallback model, else failure. `cause` labels the fallback.
pub fn when_no_profile(
    ctx: &FailoverCtx<'_>,
    state: &RequestState,
    cause: Option<Reason>,
    now: Instant,
) -> Step {
    let all_unavailable = ctx.profiles.iter().all(|p| !p.available(now));
    if !all_unavailable {
        return Step::new(Choice::Fail);
    }
    let mut step = Step::new(Choice::Fail);
    let provider = state.provider.clone();
    step.events.push((
        EventKind::NoProfileAvailable {
            provider: provider.clone(),
        },
        Some(format!(
            "No available auth profile for {provider} (all in cooldown or unavailable)."
        )),
    ));
    let reason = cause
        .or_else(|| {
            ctx.profiles
                .iter()
                .filter(|p| p.cooling_until.is_some())
                .max_by_key(|p| p.cooling_until)
                .and_then(|p| p.cooldown_reason)
        })
        .unwrap_or(Reason::Unknown);
    if let Some(model) = next_model(ctx.fallbacks, &state.models) {
        step.events
            .push(fallback_event(&state.model, &model, reason));
        step.choice = Choice::Fallback { model };
    }
    step
}

/// The `ModelFallback` event and its log line `Model Fallback: TO (selected FROM; REASON)`.
pub fn fallback_event(from: &str, to: &str, reason: Reason) -> (EventKind, Option<String>) {
    (
        EventKind::ModelFallback {
            from: from.to_string(),
            to: to.to_string(),
            reason,
        },
        Some(format!(
            "Model Fallback: {to} (selected {from}; {})",
            reason.as_str()
        )),
    )
}

/// Decides what follows an attempt on `state.profile` that ended as `outcome`.
pub fn decide<R: Rng + ?Sized>(
    ctx: &FailoverCtx<'_>,
    state: &RequestState,
    outcome: &Classified,
    now: Instant,
    rng: &mut R,
) -> Step {
    let Some(reason) = outcome.reason else {
        return Step::new(Choice::Done);
    };
    let id = state.profile.as_str();
    let gate = ctx.same_profile_retries;
    if reason == Reason::Timeout
        && ctx.policy == Policy::RetryGate
        && state.same_profile_retries < gate
    {
        let (lo, hi) = ctx.backoff_ms;
        let delay = Duration::from_millis(rng.gen_range(lo..=hi.max(lo)));
        let retry = state.same_profile_retries + 1;
        let mut step = Step::new(Choice::RetrySame { delay });
        step.events.push((
            EventKind::SameProfileRetry {
                provider: state.provider.clone(),
                profile: id.to_string(),
                reason,
                retry,
                of: gate,
                delay_ms: ms(delay),
            },
            Some(format!(
                "Profile {id} timed out. Retry {retry}/{gate} in {}ms...",
                ms(delay)
            )),
        ));
        return step;
    }
    match reason {
        Reason::Content => return Step::new(Choice::Fail),
        Reason::ContextOverflow => {
            let mut step = Step::new(Choice::Fail);
            if let Some(model) = next_model(ctx.context_fallbacks, &state.models) {
                step.events
                    .push(fallback_event(&state.model, &model, reason));
                step.choice = Choice::Fallback { model };
            }
            return step;
        }
        _ => {}
    }
    let mut cooldown = cooldown_for(ctx, reason);
    if let (Reason::RateLimit, Some(c), Some(ra)) = (reason, cooldown, outcome.retry_after) {
        cooldown = Some(c.max(ra));
    }
    let mut events = Vec::new();
    // The view after this failure: the current profile cools (or at least was tried).
    let mut views: Vec<ProfileView> = ctx.profiles.to_vec();
    if let Some(d) = cooldown {
        if let Some(v) = views.iter_mut().find(|v| v.id == id) {
            let until = now + d;
            v.cooling_until = Some(v.cooling_until.map_or(until, |t| t.max(until)));
            v.cooldown_reason = Some(reason);
        }
        events.push((
            EventKind::CooldownApplied {
                provider: state.provider.clone(),
                profile: id.to_string(),
                reason,
                cooldown_ms: ms(d),
                error_count: ctx.counts.0.saturating_add(1),
            },
            Some(format!(
                "Cooldown applied: {}ms for {} reason",
                ms(d),
                reason.as_str()
            )),
        ));
    }
    let mut tried = state.tried.clone();
    if !tried.iter().any(|t| t == id) {
        tried.push(id.to_string());
    }
    let to = pick_profile(&views, &tried, now);
    events.push((
        EventKind::ProfileRotated {
            provider: state.provider.clone(),
            from: id.to_string(),
            to: to.clone(),
            reason,
        },
        Some(rotate_line(ctx.policy, id, outcome, gate)),
    ));
    let mut step = match to {
        Some(to) => Step::new(Choice::Rotate { to }),
        None => {
            let after = FailoverCtx {
                profiles: &views,
                ..ctx.clone()
            };
            when_no_profile(&after, state, Some(reason), now)
        }
    };
    events.append(&mut step.events);
    step.events = events;
    step.cooldown = cooldown.map(|duration| CooldownWrite {
        profile: id.to_string(),
        reason,
        duration,
    });
    step
}

#[cfg(test)]
mod tests;
