//! [`AdaptiveDeadlines`]: every dependency's [`Estimator`] behind one lock (held for a map look-up,
//! never across an `.await`), and which deadline each dependency last announced (the
//! `timeout_deadline_seconds` gauge follows the announcements). Durations in and out are
//! nominal; the run's speed is applied by the caller.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::deadline::{Bounds, Estimator, expiry_counts};
use crate::engine::outcome::AttemptResult;
use crate::engine::timeouts::TimeoutConfig;
use crate::engine::vocab::DeadlineSource;
use crate::util::sync::Locked;

#[derive(Debug)]
struct DepState {
    tool: Estimator,
    /// The deadline last announced (ms), if any.
    announced: Option<u64>,
}

/// The deadline one call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chosen {
    /// The nominal deadline.
    pub deadline: Duration,
    /// Where it came from.
    pub source: DeadlineSource,
    /// True when it differs from the one last announced for this dependency (first use
    /// included): the caller emits a `DeadlineChanged` event.
    pub changed: bool,
}

/// Adaptive tool-call deadlines of one engine (one policy run).
#[derive(Debug)]
pub struct AdaptiveDeadlines {
    on: bool,
    bounds: Bounds,
    window: usize,
    deps: Mutex<HashMap<String, DepState>>,
}

impl AdaptiveDeadlines {
    /// From `[engine.timeouts]`, for a run of `policy` (whose name `adaptive` may list).
    pub fn new(cfg: &TimeoutConfig, policy: &str) -> Self {
        Self {
            on: cfg.adaptive.on_for(policy),
            bounds: Bounds {
                factor: cfg.factor,
                floor: cfg.tool_call_floor,
                cap: cfg.tool_call_cap,
                min_samples: usize::try_from(cfg.min_samples).unwrap_or(1),
            },
            window: usize::try_from(cfg.window).unwrap_or(1),
            deps: Mutex::new(HashMap::new()),
        }
    }

    /// True when deadlines adapt in this engine.
    pub fn is_on(&self) -> bool {
        self.on
    }

    fn with<R>(&self, dep: &str, f: impl FnOnce(&mut DepState) -> R) -> R {
        let mut deps = self.deps.locked();
        if let Some(s) = deps.get_mut(dep) {
            return f(s);
        }
        let s = deps.entry(dep.to_string()).or_insert_with(|| DepState {
            tool: Estimator::new(self.window),
            announced: None,
        });
        f(s)
    }

    /// The tool-call deadline of `dep`'s next call; `fixed` is `toolCall` (nominal).
    pub fn tool_call(&self, dep: &str, fixed: Duration) -> Chosen {
        self.with(dep, |s| {
            let (deadline, source) = if self.on {
                s.tool.deadline(fixed)
            } else {
                (fixed, DeadlineSource::Fixed)
            };
            let ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
            let changed = s.announced != Some(ms);
            s.announced = Some(ms);
            Chosen {
                deadline,
                source,
                changed,
            }
        })
    }

    /// Folds a tool call's result into `dep`'s window: successes only (a 2xx, or a 4xx that is
    /// the caller's problem), at their nominal `latency`, ended at `now`.
    pub fn observe(&self, dep: &str, result: &AttemptResult, latency: Duration, now: Instant) {
        if !self.on {
            return;
        }
        let ok = match result {
            AttemptResult::Ok { .. } => true,
            AttemptResult::Http { status, .. } => *status < 500 && *status != 429,
            _ => false,
        };
        if ok {
            self.with(dep, |s| s.tool.observe(latency, now, &self.bounds));
        }
    }

    /// Whether `result` goes to `dep`'s breaker (docs/engine.md): with adaptive deadlines on, an
    /// expired deadline with nothing received counts only when `dep` answered nothing since the
    /// attempt `started` ([`expiry_counts`]); everything else always goes.
    pub fn tell_breaker(
        &self,
        dep: &str,
        result: &AttemptResult,
        started: Instant,
        probe: bool,
    ) -> bool {
        let deadline_alone = matches!(
            result,
            AttemptResult::Timeout {
                tokens_received: 0,
                ..
            }
        );
        if !self.on || !deadline_alone {
            return true;
        }
        let last = self.with(dep, |s| s.tool.last_success());
        expiry_counts(last, started, probe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcome::TimeoutPhase;
    use crate::engine::timeouts::AdaptiveSwitch;

    fn ok(ms: u64) -> AttemptResult {
        AttemptResult::Ok {
            tokens: 0,
            latency: Duration::from_millis(ms),
        }
    }

    const EXPIRED: AttemptResult = AttemptResult::Timeout {
        phase: TimeoutPhase::Total,
        tokens_received: 0,
    };

    fn cfg(adaptive: AdaptiveSwitch) -> TimeoutConfig {
        TimeoutConfig {
            adaptive,
            min_samples: 3,
            ..TimeoutConfig::default()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn switch_per_policy_announcements_and_the_breaker_rule() {
        let fixed = Duration::from_secs(13);
        let off = AdaptiveDeadlines::new(
            &cfg(AdaptiveSwitch::Policies(vec!["retry-gate".into()])),
            "legacy",
        );
        let on = AdaptiveDeadlines::new(
            &cfg(AdaptiveSwitch::Policies(vec!["retry-gate".into()])),
            "retry-gate",
        );
        assert!(!off.is_on() && on.is_on());
        for t in [&off, &on] {
            let first = t.tool_call("heavy", fixed);
            assert_eq!(
                (first.deadline, first.source, first.changed),
                (fixed, DeadlineSource::Fixed, true)
            );
            assert!(!t.tool_call("heavy", fixed).changed, "announced once");
        }
        let start = Instant::now();
        tokio::time::advance(Duration::from_secs(10)).await;
        for t in [&off, &on] {
            for _ in 0..3 {
                t.observe(
                    "heavy",
                    &ok(10_000),
                    Duration::from_secs(10),
                    Instant::now(),
                );
            }
        }
        assert_eq!(off.tool_call("heavy", fixed).deadline, fixed);
        let c = on.tool_call("heavy", fixed);
        assert_eq!(
            (c.deadline, c.source, c.changed),
            (Duration::from_secs(15), DeadlineSource::Adaptive, true)
        );
        // `heavy` answered after `start`: its expiry stays away from the breaker; `light`
        // never answered: its expiry goes. Fixed deadlines tell the breaker everything.
        assert!(!on.tell_breaker("heavy", &EXPIRED, start, false));
        assert!(on.tell_breaker("heavy", &EXPIRED, start, true));
        assert!(on.tell_breaker("light", &EXPIRED, start, false));
        assert!(on.tell_breaker(
            "heavy",
            &EXPIRED,
            Instant::now() + Duration::from_millis(1),
            false
        ));
        assert!(off.tell_breaker("heavy", &EXPIRED, start, false));
        // Failures are not latencies of the window.
        on.observe("light", &EXPIRED, Duration::from_secs(1), Instant::now());
        assert!(on.tell_breaker("light", &EXPIRED, start, false));
    }
}
