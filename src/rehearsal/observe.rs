//! What the report reads from the engine's events while a policy run goes (an [`EventSink`] next
//! to the metrics and events.jsonl): every attempt's exact latency into one HDR histogram per dep
//! (the Prometheus buckets only allow a guess), and the marks the picture draws — Retry-After
//! deadlines, cooldowns, rotations, same-profile retries, fallbacks. Converts the engine's clock
//! (wall ms since the run start) to scenario time on the way in; bounded memory (auto-resizing
//! histograms, capped mark lists).

use crate::util::sync::Locked;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use hdrhistogram::Histogram;

use crate::engine::{AttemptOutcome, Event, EventKind, EventSink, TimeoutPhase};
use crate::report::marks::{
    CooldownMark, DeadlineMark, FallbackMark, MAX_MARKS, Marks, RetryMark, RotationMark,
};
use crate::report::model::{DeadlineRange, FaultHit, Latency};
use crate::util::speed::Speed;

/// Significant digits of the latency histograms (0.1 % resolution).
const SIGFIG: u8 = 3;

#[derive(Default)]
struct State {
    /// Per dep, latencies in µs of wall clock.
    latency: BTreeMap<String, Histogram<u64>>,
    marks: Marks,
    deadlines: BTreeSet<(String, u64)>,
    /// Per dep, its tool-call deadline over the run (the "Deadlines" table).
    timeouts: BTreeMap<String, DeadlineRange>,
}

/// Collects latency samples and marks for one policy run.
pub struct Observed {
    speed: Speed,
    state: Mutex<State>,
}

impl std::fmt::Debug for Observed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observed")
            .field("speed", &self.speed)
            .finish_non_exhaustive()
    }
}

fn micros(latency_ms: f64) -> u64 {
    if latency_ms.is_finite() && latency_ms > 0.0 {
        (latency_ms * 1000.0).round().min(u64::MAX as f64) as u64
    } else {
        0
    }
}

impl Observed {
    /// A collector for a run at `speed`.
    pub(crate) fn new(speed: Speed) -> Self {
        Self {
            speed,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.locked()
    }

    fn scen(&self, wall_ms: u64) -> u64 {
        self.speed.scenario_ms_u(wall_ms)
    }

    /// Per dep: p50, p99 and max of the attempts' latencies in scenario ms, with the count.
    pub(crate) fn latency(&self) -> BTreeMap<String, Latency> {
        let ms = |us: u64| self.speed.to_scenario(us as f64 / 1000.0);
        self.lock()
            .latency
            .iter()
            .filter(|(_, h)| !h.is_empty())
            .map(|(dep, h)| {
                let l = Latency {
                    p50_ms: ms(h.value_at_quantile(0.5)),
                    p99_ms: ms(h.value_at_quantile(0.99)),
                    max_ms: ms(h.max()),
                    count: h.len(),
                    exact: true,
                };
                (dep.clone(), l)
            })
            .collect()
    }

    /// Per dep, its tool-call deadline's first, last, lowest and highest value (nominal ms).
    pub(crate) fn deadlines(&self) -> BTreeMap<String, DeadlineRange> {
        self.lock().timeouts.clone()
    }

    /// The marks so far.
    pub(crate) fn marks(&self) -> Marks {
        self.lock().marks.clone()
    }
}

impl EventSink for Observed {
    fn emit(&self, e: &Event) {
        let t_ms = self.scen(e.t_ms);
        let mut g = self.lock();
        let st = &mut *g;
        let m = &mut st.marks;
        match &e.kind {
            EventKind::AttemptFinished {
                dep,
                outcome,
                latency_ms,
                ..
            } if *outcome != AttemptOutcome::Rejected => {
                if !st.latency.contains_key(dep) {
                    // Fails only for more than 5 significant digits.
                    let Ok(h) = Histogram::new(SIGFIG) else {
                        return;
                    };
                    st.latency.insert(dep.clone(), h);
                }
                if let Some(h) = st.latency.get_mut(dep) {
                    // `record` grows the auto-resizing histogram; `saturating_record` would clamp
                    // to its current (initially tiny) range.
                    let us = micros(*latency_ms);
                    if h.record(us).is_err() {
                        h.saturating_record(us);
                    }
                }
            }
            EventKind::DeadlineChanged {
                dep,
                phase,
                deadline_ms,
                source,
                ..
            } => {
                // A tool call's total under its dep; a model call's TTFB and inter-token
                // deadlines as `DEP (ttfb)`, `DEP (inter_token)`.
                let key = match phase {
                    TimeoutPhase::Total => dep.clone(),
                    p => format!("{dep} ({})", p.as_str()),
                };
                match st.timeouts.get_mut(&key) {
                    Some(r) => r.change(*deadline_ms, *source),
                    None => {
                        let r = DeadlineRange::new(*deadline_ms, *source);
                        st.timeouts.insert(key, r);
                    }
                }
            }
            EventKind::RetryAfterSkip { dep, until_ms } => {
                let until_ms = self.scen(*until_ms);
                if st.deadlines.insert((dep.clone(), until_ms)) {
                    let d = DeadlineMark {
                        dep: dep.clone(),
                        t_ms,
                        until_ms,
                    };
                    Marks::keep(&mut m.retry_after, &mut m.dropped, d);
                }
            }
            EventKind::CooldownApplied {
                profile,
                reason,
                cooldown_ms,
                ..
            } => {
                let c = CooldownMark {
                    profile: profile.clone(),
                    t_ms,
                    until_ms: t_ms.saturating_add(*cooldown_ms),
                    reason: reason.as_str().to_string(),
                };
                Marks::keep(&mut m.cooldowns, &mut m.dropped, c);
            }
            EventKind::ProfileRotated {
                from, to, reason, ..
            } => {
                let r = RotationMark {
                    t_ms,
                    from: from.clone(),
                    to: to.clone(),
                    reason: reason.as_str().to_string(),
                };
                Marks::keep(&mut m.rotations, &mut m.dropped, r);
            }
            EventKind::SameProfileRetry {
                profile, delay_ms, ..
            } => {
                let r = RetryMark {
                    t_ms,
                    profile: profile.clone(),
                    delay_ms: *delay_ms,
                };
                Marks::keep(&mut m.retries, &mut m.dropped, r);
            }
            EventKind::ModelFallback { from, to, .. } => {
                let f = FallbackMark {
                    t_ms,
                    from: from.clone(),
                    to: to.clone(),
                };
                Marks::keep(&mut m.fallbacks, &mut m.dropped, f);
            }
            _ => {}
        }
    }
}

/// Per `[[fault]]` table, the user requests it applied to (from the upstream's records, in
/// scenario time; the first [`MAX_MARKS`] kept, the last of them replaced by the latest past the
/// cap, all counted).
#[derive(Debug, Default)]
pub struct FaultHits {
    speed: Speed,
    hits: Mutex<BTreeMap<usize, (u64, Vec<FaultHit>)>>,
}

impl FaultHits {
    /// A collector for a run at `speed`.
    pub(crate) fn new(speed: Speed) -> Self {
        Self {
            speed,
            hits: Mutex::default(),
        }
    }

    /// Fault `index` applied to a request of `dep` arriving at `wall_ms`.
    pub(crate) fn record(&self, index: usize, wall_ms: u64, dep: &str) {
        let mut g = self.hits.locked();
        let (count, list) = g.entry(index).or_default();
        *count += 1;
        let hit = FaultHit {
            t_ms: self.speed.scenario_ms_u(wall_ms),
            dep: dep.to_string(),
        };
        if list.len() < MAX_MARKS {
            list.push(hit);
        } else if let Some(last) = list.last_mut().filter(|l| l.t_ms <= hit.t_ms) {
            // Past the cap the last kept hit is the latest: a fault's last application is
            // where an anchor at its end falls (`verdict::anchor`).
            *last = hit;
        }
    }

    /// Per fault index: how many requests it applied to, and the kept hits.
    pub(crate) fn snapshot(&self) -> BTreeMap<usize, (u64, Vec<FaultHit>)> {
        self.hits.locked().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{OpClass, Reason};

    fn attempt(t_ms: u64, dep: &str, outcome: AttemptOutcome, latency_ms: f64) -> Event {
        Event {
            t_ms,
            kind: EventKind::AttemptFinished {
                dep: dep.into(),
                worker: 0,
                class: OpClass::ToolCall,
                outcome,
                phase: None,
                latency_ms,
                probe: false,
                profile: None,
                model: None,
                deadline: None,
            },
            log: None,
        }
    }

    #[test]
    fn latency_quantiles_are_exact_samples_in_scenario_time() {
        let o = Observed::new(crate::util::speed::sp(4.0));
        // 100 samples 0.10 … 1.09 ms of wall clock, and a rejection that must not count.
        for i in 0..100 {
            o.emit(&attempt(
                i,
                "calculator",
                AttemptOutcome::Ok,
                0.1 + i as f64 * 0.01,
            ));
        }
        o.emit(&attempt(5, "calculator", AttemptOutcome::Rejected, 0.0));
        // A model call stalled into a 3 s timeout at ×4 (750 ms of wall clock) is not clamped.
        o.emit(&attempt(9, "llm", AttemptOutcome::Timeout, 750.0));
        o.emit(&attempt(9, "llm", AttemptOutcome::Ok, 145.0));
        let llm = o.latency()["llm"];
        assert!((llm.max_ms - 3_000.0).abs() < 3.0, "{llm:?}");
        assert!((llm.p50_ms - 580.0).abs() < 1.0, "{llm:?}");
        let l = o.latency()["calculator"];
        assert_eq!(l.count, 100);
        assert!(l.exact);
        // Wall p50 ≈ 0.59 ms, p99 ≈ 1.08 ms, max 1.09 ms; × 4 for scenario time (0.1 % HDR).
        assert!((l.p50_ms - 4.0 * 0.59).abs() < 0.01, "{l:?}");
        assert!((l.p99_ms - 4.0 * 1.08).abs() < 0.01, "{l:?}");
        assert!((l.max_ms - 4.0 * 1.09).abs() < 0.01, "{l:?}");
    }

    #[test]
    fn marks_are_kept_in_scenario_time_and_deadlines_once() {
        let o = Observed::new(crate::util::speed::sp(2.0));
        let ev = |t_ms, kind| Event {
            t_ms,
            kind,
            log: None,
        };
        o.emit(&ev(
            1_000,
            EventKind::CooldownApplied {
                provider: "p".into(),
                profile: "p:a".into(),
                reason: Reason::Timeout,
                cooldown_ms: 60_000,
                error_count: 1,
            },
        ));
        for t in [5_000, 5_250, 5_500] {
            o.emit(&ev(
                t,
                EventKind::RetryAfterSkip {
                    dep: "crm_search".into(),
                    until_ms: 65_000,
                },
            ));
        }
        o.emit(&ev(
            1_500,
            EventKind::SameProfileRetry {
                provider: "p".into(),
                profile: "p:a".into(),
                reason: Reason::Timeout,
                retry: 1,
                of: 1,
                delay_ms: 481,
            },
        ));
        let m = o.marks();
        assert_eq!(
            m.cooldowns,
            vec![CooldownMark {
                profile: "p:a".into(),
                t_ms: 2_000,
                until_ms: 62_000,
                reason: "timeout".into()
            }]
        );
        assert_eq!(
            m.retry_after,
            vec![DeadlineMark {
                dep: "crm_search".into(),
                t_ms: 10_000,
                until_ms: 130_000
            }]
        );
        assert_eq!(m.retries[0].t_ms, 3_000);
        assert_eq!(
            m.retries[0].delay_ms, 481,
            "nominal delays stay as they are"
        );
        assert_eq!(m.dropped, 0);
    }
}
