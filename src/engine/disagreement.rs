//! One dependency's canary/breaker (dis)agreement and how long it has lasted: the state behind
//! `health_breaker_disagreement_seconds{dep}` (see [`crate::engine::health`] for the rule and its
//! alert). Kept apart from the canaries so the metrics that fold it need not name them.
//! Re-exported as `health::Disagreement`.

use super::vocab::BreakerState;

/// Tracks one dependency's canary/breaker (dis)agreement from events, in engine ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disagreement {
    canary_ok: Option<bool>,
    state: BreakerState,
    since_ms: Option<u64>,
}

impl Default for Disagreement {
    fn default() -> Self {
        Self {
            canary_ok: None,
            state: BreakerState::Closed,
            since_ms: None,
        }
    }
}

impl Disagreement {
    /// A canary finished at `t_ms`; returns the gauge value (seconds).
    pub fn canary(&mut self, ok: bool, t_ms: u64) -> f64 {
        self.canary_ok = Some(ok);
        self.update(t_ms)
    }

    /// The breaker moved to `state` at `t_ms`; returns the gauge value (seconds).
    pub fn breaker(&mut self, state: BreakerState, t_ms: u64) -> f64 {
        self.state = state;
        self.update(t_ms)
    }

    /// True while canary and breaker disagree.
    pub fn disagrees(&self) -> bool {
        matches!(
            (self.canary_ok, self.state),
            (Some(true), BreakerState::Open) | (Some(false), BreakerState::Closed)
        )
    }

    /// How long the current disagreement has lasted at `now_ms` (engine ms), in seconds; 0 while
    /// canary and breaker agree. Pure: the state is not changed.
    pub fn seconds_at(&self, now_ms: u64) -> f64 {
        match self.since_ms {
            Some(since) if self.disagrees() => now_ms.saturating_sub(since) as f64 / 1000.0,
            _ => 0.0,
        }
    }

    fn update(&mut self, t_ms: u64) -> f64 {
        if !self.disagrees() {
            self.since_ms = None;
            return 0.0;
        }
        let since = *self.since_ms.get_or_insert(t_ms);
        t_ms.saturating_sub(since) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disagreement_grows_while_canary_is_ok_and_breaker_open_and_resets_on_agreement() {
        let mut d = Disagreement::default();
        assert_eq!(d.canary(true, 0), 0.0);
        assert_eq!(d.breaker(BreakerState::Open, 1_000), 0.0);
        assert_eq!(d.canary(true, 11_000), 10.0);
        assert_eq!(d.canary(true, 181_000), 180.0);
        assert_eq!(d.breaker(BreakerState::HalfOpen, 182_000), 0.0);
        assert_eq!(d.breaker(BreakerState::Closed, 183_000), 0.0);
        assert_eq!(d.canary(false, 190_000), 0.0);
        assert_eq!(d.canary(false, 200_000), 10.0);
    }

    #[test]
    fn seconds_at_reads_the_current_length_without_an_event() {
        let mut d = Disagreement::default();
        assert_eq!(d.seconds_at(5_000), 0.0, "no canary yet: agree");
        d.canary(false, 10_000);
        assert_eq!(d.seconds_at(10_000), 0.0);
        assert_eq!(d.seconds_at(105_000), 95.0);
        assert_eq!(
            d.seconds_at(105_000),
            95.0,
            "pure: reading twice changes nothing"
        );
        assert_eq!(
            d.seconds_at(9_000),
            0.0,
            "a `now` before the start saturates"
        );
        d.breaker(BreakerState::Open, 106_000);
        assert_eq!(
            d.seconds_at(200_000),
            0.0,
            "canary failing and breaker open agree"
        );
    }
}
