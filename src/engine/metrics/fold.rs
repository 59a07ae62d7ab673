//! Folding engine events into the registry's series: the [`EventSink`] side of [`Metrics`].

use super::Metrics;
use crate::engine::events::{AttemptOutcome, Event, EventKind, EventSink};

impl EventSink for Metrics {
    fn emit(&self, event: &Event) {
        match &event.kind {
            EventKind::AttemptFinished {
                dep,
                class,
                outcome,
                phase,
                latency_ms,
                probe,
                ..
            } => {
                self.touch(dep);
                self.requests
                    .with_label_values(&[dep.as_str(), outcome.as_str()])
                    .inc();
                let secs = latency_ms / 1000.0;
                if *outcome == AttemptOutcome::Rejected {
                    self.rejections.with_label_values(&[dep]).inc();
                } else {
                    self.request_latency.with_label_values(&[dep]).observe(secs);
                    if *probe {
                        self.probe_latency.with_label_values(&[dep]).observe(secs);
                    }
                }
                if let (AttemptOutcome::Timeout, Some(phase)) = (outcome, phase) {
                    self.timeouts
                        .with_label_values(&[class.as_str(), phase.as_str()])
                        .inc();
                }
            }
            EventKind::SameProfileRetry {
                provider, reason, ..
            } => self
                .retries
                .with_label_values(&[provider.as_str(), reason.as_str()])
                .inc(),
            EventKind::CooldownApplied {
                provider,
                profile,
                reason,
                ..
            } => self
                .cooldowns
                .with_label_values(&[provider.as_str(), profile.as_str(), reason.as_str()])
                .inc(),
            EventKind::ProfileRotated {
                provider, reason, ..
            } => self
                .rotations
                .with_label_values(&[provider.as_str(), reason.as_str()])
                .inc(),
            EventKind::NoProfileAvailable { .. } => {}
            EventKind::ModelFallback { from, to, reason } => self
                .fallbacks
                .with_label_values(&[from.as_str(), to.as_str(), reason.as_str()])
                .inc(),
            EventKind::BreakerTransition {
                dep,
                from,
                to,
                open_for_ms,
                ..
            } => self.transition(dep, (*from, *to), *open_for_ms, event.t_ms),
            EventKind::RetryAfterSkip { dep, until_ms } => {
                self.touch(dep);
                self.retry_after_skips.with_label_values(&[dep]).inc();
                self.open_extended(dep, *until_ms);
            }
            EventKind::RetryBudgetExhausted { class, .. } => self
                .budget_exhausted
                .with_label_values(&[class.as_str()])
                .inc(),
            EventKind::Throttled { tenant, .. } => {
                self.throttled.with_label_values(&[tenant]).inc()
            }
            EventKind::HealthCheck { dep, ok } => {
                self.touch(dep);
                self.set_disagreement(dep, |d| d.canary(*ok, event.t_ms));
            }
            EventKind::IdempotentDuplicate { dep } => {
                self.duplicates.with_label_values(&[dep]).inc()
            }
            // No docs/metrics.md series: the ladder's rungs are events only.
            EventKind::CoordinatorError { op, .. } => {
                self.coordinator_errors.with_label_values(&[op]).inc()
            }
            EventKind::CoordinatorMode { mode } => self.coordinator_mode(mode),
            EventKind::CooldownAdopted { profile, .. } => self
                .cooldowns_adopted
                .with_label_values(&[profile.as_str()])
                .inc(),
            EventKind::DeadlineChanged {
                dep,
                class,
                phase,
                deadline_ms,
                ..
            } => self
                .deadline
                .with_label_values(&[dep.as_str(), class.as_str(), phase.as_str()])
                .set(*deadline_ms as f64 / 1000.0),
            EventKind::RequestFinished { .. } | EventKind::Degraded { .. } => {}
        }
    }
}

impl Metrics {
    /// `coordinator_mode{mode}` := 1, every other mode seen (and `local`) := 0.
    fn coordinator_mode(&self, mode: &str) {
        use prometheus::core::Collector;
        let mut seen = vec!["local".to_string()];
        for mf in self.coordinator_mode.collect() {
            for m in mf.get_metric() {
                seen.extend(m.get_label().first().map(|l| l.value().to_string()));
            }
        }
        for m in seen {
            self.coordinator_mode
                .with_label_values(&[m.as_str()])
                .set(0.0);
        }
        self.coordinator_mode.with_label_values(&[mode]).set(1.0);
    }
}
