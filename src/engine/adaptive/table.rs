//! [`AdaptiveDeadlines`]: every dependency's [`Estimator`]s behind one lock (held for a map
//! look-up, never across an `.await`) — a tool's total, a model's TTFB and inter-token (the
//! longest wait for a stream's next frame) — and which deadline each dependency last announced
//! per phase (the `timeout_deadline_seconds` gauge follows the announcements). Durations in and
//! out are nominal; the run's speed is applied by the caller.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::deadline::{Bounds, Estimator, expiry_counts};
use crate::engine::outcome::{AttemptResult, TimeoutPhase};
use crate::engine::timeouts::TimeoutConfig;
use crate::engine::vocab::DeadlineSource;
use crate::util::sync::Locked;

#[derive(Debug)]
struct DepState {
    /// A tool call's whole latency.
    tool: Estimator,
    /// A model call's time to the response head.
    ttfb: Estimator,
    /// A model stream's longest wait for its next frame.
    inter_token: Estimator,
    /// The deadline last announced (ms) per phase: total (tools), TTFB, inter-token.
    announced: [Option<u64>; 3],
}

/// Index into [`DepState::announced`].
fn slot(phase: TimeoutPhase) -> usize {
    match phase {
        TimeoutPhase::Total => 0,
        TimeoutPhase::Ttfb => 1,
        TimeoutPhase::InterToken => 2,
    }
}

/// The deadline of `est` (the fixed one while it warms up, or when adaptive deadlines are off),
/// and whether it differs from the one last announced in `announced` (which it becomes).
fn choose(on: bool, est: &Estimator, announced: &mut Option<u64>, fixed: Duration) -> Chosen {
    let (deadline, source) = if on {
        est.deadline(fixed)
    } else {
        (fixed, DeadlineSource::Fixed)
    };
    let ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
    let changed = *announced != Some(ms);
    *announced = Some(ms);
    Chosen {
        deadline,
        source,
        changed,
    }
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

/// The model deadlines one call gets (TTFB, inter-token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelChosen {
    /// Time to the response head.
    pub ttfb: Chosen,
    /// Longest wait for a stream's next frame.
    pub inter_token: Chosen,
}

/// Adaptive deadlines of one engine (one policy run): tool calls' totals, model calls' TTFB and
/// inter-token deadlines.
#[derive(Debug)]
pub struct AdaptiveDeadlines {
    on: bool,
    bounds: Bounds,
    ttfb_bounds: Bounds,
    inter_token_bounds: Bounds,
    window: usize,
    deps: Mutex<HashMap<String, DepState>>,
}

impl AdaptiveDeadlines {
    /// From `[engine.timeouts]`, for a run of `policy` (whose name `adaptive` may list).
    pub fn new(cfg: &TimeoutConfig, policy: &str) -> Self {
        let bounds = |floor, cap| Bounds {
            factor: cfg.factor,
            floor,
            cap,
            min_samples: usize::try_from(cfg.min_samples).unwrap_or(1),
        };
        Self {
            on: cfg.adaptive.on_for(policy),
            bounds: bounds(cfg.tool_call_floor, cfg.tool_call_cap),
            ttfb_bounds: bounds(cfg.llm_ttfb_floor, cfg.llm_ttfb_cap),
            inter_token_bounds: bounds(cfg.llm_inter_token_floor, cfg.llm_inter_token_cap),
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
            ttfb: Estimator::new(self.window),
            inter_token: Estimator::new(self.window),
            announced: [None; 3],
        });
        f(s)
    }

    /// The tool-call deadline of `dep`'s next call; `fixed` is `toolCall` (nominal).
    pub fn tool_call(&self, dep: &str, fixed: Duration) -> Chosen {
        self.with(dep, |s| {
            let announced = &mut s.announced[slot(TimeoutPhase::Total)];
            choose(self.on, &s.tool, announced, fixed)
        })
    }

    /// The TTFB and inter-token deadlines of `dep`'s next model call; `ttfb` and `inter_token`
    /// are the fixed ones (nominal). The total stays a fixed cap (not here).
    pub fn model_call(&self, dep: &str, ttfb: Duration, inter_token: Duration) -> ModelChosen {
        self.with(dep, |s| {
            let [_, t, i] = &mut s.announced;
            ModelChosen {
                ttfb: choose(self.on, &s.ttfb, t, ttfb),
                inter_token: choose(self.on, &s.inter_token, i, inter_token),
            }
        })
    }

    /// Folds a model call's complete answer into `dep`'s TTFB and inter-token windows: its
    /// nominal `ttfb` and `longest_gap` as the transport measured them (a transport that measured
    /// neither adds nothing), ended at `now`. Failures are not latencies of the windows.
    pub fn observe_model(
        &self,
        dep: &str,
        ttfb: Option<Duration>,
        longest_gap: Option<Duration>,
        now: Instant,
    ) {
        if !self.on || (ttfb.is_none() && longest_gap.is_none()) {
            return;
        }
        self.with(dep, |s| {
            if let Some(t) = ttfb {
                s.ttfb.observe(t, now, &self.ttfb_bounds);
            }
            if let Some(g) = longest_gap {
                s.inter_token.observe(g, now, &self.inter_token_bounds);
            }
        });
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
    use crate::engine::timeouts::AdaptiveSwitch;

    fn ok(ms: u64) -> AttemptResult {
        AttemptResult::Ok {
            tokens: 0,
            latency: Duration::from_millis(ms),
            ttfb: None,
            longest_gap: None,
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

    #[tokio::test(start_paused = true)]
    async fn a_model_dep_adapts_its_ttfb_and_inter_token_apart_from_its_tools() {
        let on = AdaptiveDeadlines::new(&cfg(AdaptiveSwitch::All(true)), "legacy");
        let (ttfb, gap) = (Duration::from_secs(30), Duration::from_secs(10));
        let first = on.model_call("m", ttfb, gap);
        assert_eq!(
            (first.ttfb.deadline, first.inter_token.deadline),
            (ttfb, gap)
        );
        assert!(first.ttfb.changed && first.inter_token.changed);
        // A transport that measured nothing adds nothing; a TTFB-only answer (not a stream)
        // warms the TTFB window alone.
        for _ in 0..3 {
            on.observe_model("m", None, None, Instant::now());
            on.observe_model("m", Some(Duration::from_secs(2)), None, Instant::now());
        }
        let c = on.model_call("m", ttfb, gap);
        assert_eq!(
            (c.ttfb.deadline, c.ttfb.source, c.ttfb.changed),
            (Duration::from_secs(3), DeadlineSource::Adaptive, true)
        );
        assert_eq!(
            (
                c.inter_token.deadline,
                c.inter_token.source,
                c.inter_token.changed
            ),
            (gap, DeadlineSource::Fixed, false)
        );
        for _ in 0..3 {
            on.observe_model("m", None, Some(Duration::from_millis(100)), Instant::now());
        }
        // 150 ms: below the 1 s floor. The tool window of the same dep is untouched.
        let c = on.model_call("m", ttfb, gap);
        assert_eq!(c.inter_token.deadline, Duration::from_secs(1));
        assert_eq!(
            on.tool_call("m", Duration::from_secs(13)).source,
            DeadlineSource::Fixed
        );
        // Off: nothing is folded in, the fixed values stay.
        let off = AdaptiveDeadlines::new(&cfg(AdaptiveSwitch::All(false)), "legacy");
        for _ in 0..3 {
            off.observe_model("m", Some(Duration::from_secs(2)), None, Instant::now());
        }
        assert_eq!(off.model_call("m", ttfb, gap).ttfb.deadline, ttfb);
    }
}
