//! The deadlines an attempt gets ([`Given`]): a tool call's total and a model call's TTFB and
//! inter-token deadlines, fixed or adapted to the dependency's observed p99s
//! ([`crate::engine::adaptive`]), announced when they change (`DeadlineChanged`), tightened by a
//! half-open probe's timeout; what a model call's answer adds to its windows; and which of them
//! expired, for the `timeout` event and log line.

use std::time::Duration;

use tokio::time::Instant;

use super::{Engine, ms_of};
use crate::engine::events::{EventKind, Expired, OpClass};
use crate::engine::outcome::{AttemptResult, TimeoutPhase};
use crate::engine::transport::{Deadlines, Transport};
use crate::engine::vocab::DeadlineSource;
use crate::util::speed::Speed;

/// The deadlines one attempt was given, and where the tightest came from.
#[derive(Debug, Clone, Copy)]
pub(super) struct Given {
    /// What the transport enforces (divided by the speed).
    pub deadlines: Deadlines,
    /// Where the class's own deadline (its total) came from (fixed or adaptive).
    source: DeadlineSource,
    /// Where a model call's TTFB deadline came from.
    ttfb_source: DeadlineSource,
    /// Where a model stream's inter-token deadline came from.
    inter_token_source: DeadlineSource,
    /// The half-open probe timeout that tightened them, if any (divided by the speed).
    probe: Option<Duration>,
}

impl<T: Transport> Engine<T> {
    /// The deadlines of a model call to `dep` at `now`, tightened by a probe `timeout`: its TTFB
    /// and inter-token deadlines adapt to `dep`'s observed p99s when adaptive deadlines are on
    /// (the total stays a fixed cap); a change of either is announced (`DeadlineChanged`, the
    /// `timeout_deadline_seconds` gauge).
    pub(super) fn model_deadlines(
        &self,
        dep: &str,
        class: OpClass,
        timeout: Option<Duration>,
        now: Instant,
    ) -> Given {
        let mut d = self.config.deadlines(class, self.opts.speed);
        let fixed = self.config.deadlines(class, Speed::ONE);
        let (Some(ttfb), Some(inter_token)) = (fixed.ttfb, fixed.inter_token) else {
            return Self::tightened(d, DeadlineSource::Fixed, timeout);
        };
        let chosen = self.adaptive.model_call(dep, ttfb, inter_token);
        for (phase, c) in [
            (TimeoutPhase::Ttfb, chosen.ttfb),
            (TimeoutPhase::InterToken, chosen.inter_token),
        ] {
            if c.changed {
                let kind = EventKind::DeadlineChanged {
                    dep: dep.to_string(),
                    class,
                    phase,
                    deadline_ms: ms_of(c.deadline),
                    source: c.source,
                };
                self.emit(now, kind, None);
            }
        }
        d.ttfb = Some(self.scale(chosen.ttfb.deadline));
        d.inter_token = Some(self.scale(chosen.inter_token.deadline));
        let mut g = Self::tightened(d, DeadlineSource::Fixed, timeout);
        g.ttfb_source = chosen.ttfb.source;
        g.inter_token_source = chosen.inter_token.source;
        g
    }

    /// Folds a model call's complete answer into `dep`'s TTFB and inter-token windows (nominal).
    pub(super) fn observe_model(&self, dep: &str, result: &AttemptResult, now: Instant) {
        if let AttemptResult::Ok {
            ttfb, longest_gap, ..
        } = result
        {
            let nominal = |d: &Option<Duration>| d.map(|d| self.nominal(d));
            self.adaptive
                .observe_model(dep, nominal(ttfb), nominal(longest_gap), now);
        }
    }

    /// The deadlines of a tool call or WebSocket session to `dep` at `now`: a tool call's total
    /// adapts to `dep`'s observed p99 when adaptive deadlines are on; a change of it is announced
    /// (`DeadlineChanged`, the `timeout_deadline_seconds` gauge).
    pub(super) fn dep_deadlines(
        &self,
        dep: &str,
        class: OpClass,
        timeout: Option<Duration>,
        now: Instant,
    ) -> Given {
        let mut d = self.config.deadlines(class, self.opts.speed);
        let mut source = DeadlineSource::Fixed;
        if class == OpClass::ToolCall {
            let chosen = self.adaptive.tool_call(dep, self.config.timeouts.tool_call);
            if chosen.changed {
                let kind = EventKind::DeadlineChanged {
                    dep: dep.to_string(),
                    class,
                    phase: TimeoutPhase::Total,
                    deadline_ms: ms_of(chosen.deadline),
                    source: chosen.source,
                };
                self.emit(now, kind, None);
            }
            d.total = self.scale(chosen.deadline);
            source = chosen.source;
        }
        Self::tightened(d, source, timeout)
    }

    fn tightened(mut d: Deadlines, source: DeadlineSource, timeout: Option<Duration>) -> Given {
        if let Some(t) = timeout {
            d.ttfb = Some(d.ttfb.map_or(t, |x| x.min(t)));
            d.total = d.total.min(t);
        }
        Given {
            deadlines: d,
            source,
            ttfb_source: DeadlineSource::Fixed,
            inter_token_source: DeadlineSource::Fixed,
            probe: timeout,
        }
    }

    /// The deadline of `phase` that `given` set, nominal, with its source.
    pub(super) fn expired(&self, given: &Given, phase: TimeoutPhase) -> Option<Expired> {
        let d = &given.deadlines;
        let wall = match phase {
            // A class without a TTFB deadline times out on its total.
            TimeoutPhase::Ttfb => d.ttfb.unwrap_or(d.total),
            TimeoutPhase::InterToken => d.inter_token?,
            TimeoutPhase::Total => d.total,
        };
        let source = match given.probe {
            Some(p) if p == wall && phase != TimeoutPhase::InterToken => DeadlineSource::Probe,
            _ => match phase {
                TimeoutPhase::Total => given.source,
                TimeoutPhase::Ttfb => given.ttfb_source,
                TimeoutPhase::InterToken => given.inter_token_source,
            },
        };
        let nominal = self.nominal(wall);
        Some(Expired {
            ms: ms_of(nominal),
            source,
        })
    }
}
