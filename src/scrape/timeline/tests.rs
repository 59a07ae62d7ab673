//! Tests of the incremental timeline: it derives what the whole-scrape-log derivation derived
//! (kept here verbatim as `full_store_derive`, the version that held every scrape), on the
//! recorded fixture and on a long synthetic run, while its own size stays bounded.

use super::*;
use crate::scrape::ScrapeLog;
use crate::scrape::parse::{Family, MetricKind};

const START_UNIX: f64 = 1_790_000_000.0;

// ---- the derivation over a full store of scrapes, as it was before the builder ----

fn full_store_derive(scrapes: &[(u64, &Exposition)], start_unix_s: f64) -> Timeline {
    let mut tl = Timeline::default();
    let mut current: BTreeMap<String, BreakerState> = BTreeMap::new();
    let mut prev: Option<(u64, &Exposition)> = None;
    for &(t_cur, cur) in scrapes {
        let t_prev = prev.map_or(0, |p| p.0);
        let mut fresh: BTreeMap<String, Vec<Transition>> = BTreeMap::new();
        for s in cur
            .samples()
            .filter(|s| s.name == "breaker_transitions_total")
        {
            let (Some(dep), Some(from), Some(to)) = (
                s.labels.get("dep"),
                s.labels.get("from").and_then(|v| state_from_label(v)),
                s.labels.get("to").and_then(|v| state_from_label(v)),
            ) else {
                continue;
            };
            let before = prev
                .and_then(|p| find(p.1, &s.name, s))
                .map_or(0.0, |p| p.value);
            let delta = if s.value >= before {
                s.value - before
            } else {
                s.value
            };
            if !delta.is_finite() || delta < 0.5 {
                continue;
            }
            let n = (delta.round() as u64).min(MAX_PER_INTERVAL);
            let stamp = find(cur, "breaker_last_transition_timestamp_seconds", s)
                .map(|ts| ((ts.value - start_unix_s) * 1000.0).round())
                .filter(|ms| ms.is_finite())
                .map(|ms| ms as i64)
                .filter(|&ms| {
                    ms >= t_prev as i64 - STAMP_SLACK_MS && ms <= t_cur as i64 + STAMP_SLACK_MS
                });
            let (last_t, timing) = match stamp {
                Some(ms) => (ms.max(0) as u64, Timing::Timestamp),
                None => (t_cur, Timing::Scrape),
            };
            let list = fresh.entry(dep.clone()).or_default();
            for k in 1..n {
                let t = t_prev + (last_t.saturating_sub(t_prev)) * k / n;
                list.push(Transition {
                    dep: dep.clone(),
                    from,
                    to,
                    t_ms: t,
                    timing: Timing::Interpolated,
                    reason: None,
                });
            }
            list.push(Transition {
                dep: dep.clone(),
                from,
                to,
                t_ms: last_t,
                timing,
                reason: None,
            });
        }
        for (dep, events) in fresh {
            let start = current.get(&dep).copied().or_else(|| {
                prev.and_then(|p| {
                    p.1.samples()
                        .find(|s| s.name == "breaker_state" && s.labels.get("dep") == Some(&dep))
                        .and_then(|s| state_from_gauge(s.value))
                })
            });
            let ordered = causal_order(events, start);
            if let Some(last) = ordered.last() {
                current.insert(dep.clone(), last.to);
            }
            tl.transitions.extend(ordered);
        }
        let dt = t_cur.saturating_sub(t_prev) as f64 / 1000.0;
        if dt > 0.0 {
            let p = prev.map(|p| p.1);
            let all = |e| total(e, "requests_total", |_| true);
            let bad = |e| {
                total(e, "requests_total", |s: &Sample| {
                    s.labels.get("outcome").is_some_and(|o| o != "ok")
                })
            };
            tl.rates.push(RatePoint {
                t_ms: t_cur,
                requests_per_s: (all(Some(cur)) - all(p)).max(0.0) / dt,
                errors_per_s: (bad(Some(cur)) - bad(p)).max(0.0) / dt,
            });
        }
        prev = Some((t_cur, cur));
    }
    tl.transitions.sort_by_key(|t| t.t_ms); // stable: per-dep causal order is kept on ties
    tl.states = full_store_states(&tl.transitions, scrapes);
    tl
}

fn full_store_states(
    transitions: &[Transition],
    scrapes: &[(u64, &Exposition)],
) -> BTreeMap<String, Vec<StatePoint>> {
    let mut out: BTreeMap<String, Vec<StatePoint>> = BTreeMap::new();
    for t in transitions {
        let v = out.entry(t.dep.clone()).or_insert_with(|| {
            vec![StatePoint {
                t_ms: 0,
                state: t.from,
            }]
        });
        v.push(StatePoint {
            t_ms: t.t_ms,
            state: t.to,
        });
    }
    for (_, e) in scrapes {
        for s in e.samples().filter(|s| s.name == "breaker_state") {
            if let (Some(dep), Some(state)) = (s.labels.get("dep"), state_from_gauge(s.value)) {
                out.entry(dep.clone())
                    .or_insert_with(|| vec![StatePoint { t_ms: 0, state }]);
            }
        }
    }
    out
}

// ---- a synthetic engine: one flapping breaker, one that never moves ----

fn sample(name: &str, labels: &[(&str, &str)], value: f64) -> Sample {
    Sample {
        name: name.to_string(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        value,
        timestamp_ms: None,
    }
}

const SCRAPE_MS: u64 = 250;
const CYCLE_MS: u64 = 40_000;
/// One cycle of `crm`: trips, half-opens, flaps twice inside one scrape interval, closes.
const CYCLE: [(u64, BreakerState, BreakerState); 5] = [
    (5_010, BreakerState::Closed, BreakerState::Open),
    (35_010, BreakerState::Open, BreakerState::HalfOpen),
    (35_060, BreakerState::HalfOpen, BreakerState::Open),
    (35_130, BreakerState::Open, BreakerState::HalfOpen),
    (36_420, BreakerState::HalfOpen, BreakerState::Closed),
];

/// The engine's state at scrape `i` as an exposition, and the transitions it made up to then.
#[derive(Default)]
struct Engine {
    counts: BTreeMap<(&'static str, &'static str), u64>,
    stamps: BTreeMap<(&'static str, &'static str), u64>,
    state: Option<BreakerState>,
    requests_ok: u64,
    requests_bad: u64,
    made: Vec<(u64, BreakerState, BreakerState)>,
    t_prev: u64,
}

impl Engine {
    fn scrape(&mut self, i: u64) -> (u64, Exposition) {
        // Every 250 ms, give or take up to 40 ms (as a busy scraper would be).
        let t = i * SCRAPE_MS + (i * 37) % 41;
        let t_prev = std::mem::replace(&mut self.t_prev, t);
        let from_cycle = (t_prev / CYCLE_MS) * CYCLE_MS;
        for c in [from_cycle, from_cycle + CYCLE_MS] {
            for (off, from, to) in CYCLE {
                let at = c + off;
                if at > t_prev && at <= t {
                    let key = (from.as_str(), to.as_str());
                    *self.counts.entry(key).or_default() += 1;
                    self.stamps.insert(key, at);
                    self.state = Some(to);
                    self.made.push((at, from, to));
                }
            }
        }
        let state = self.state.unwrap_or(BreakerState::Closed);
        self.requests_ok += 3;
        if state != BreakerState::Closed {
            self.requests_bad += 1;
        }
        let gauge = |s: BreakerState| match s {
            BreakerState::Closed => 0.0,
            BreakerState::HalfOpen => 1.0,
            BreakerState::Open => 2.0,
        };
        let mut samples = vec![
            sample("breaker_state", &[("dep", "calc")], 0.0),
            sample("breaker_state", &[("dep", "crm")], gauge(state)),
        ];
        for (&(from, to), &n) in &self.counts {
            let l = [("dep", "crm"), ("from", from), ("to", to)];
            samples.push(sample("breaker_transitions_total", &l, n as f64));
            let stamp = START_UNIX + self.stamps[&(from, to)] as f64 / 1000.0;
            samples.push(sample(
                "breaker_last_transition_timestamp_seconds",
                &l,
                stamp,
            ));
        }
        let ok = [("dep", "crm"), ("outcome", "ok")];
        samples.push(sample("requests_total", &ok, self.requests_ok as f64));
        let bad = [("dep", "crm"), ("outcome", "http_5xx")];
        samples.push(sample("requests_total", &bad, self.requests_bad as f64));
        let family = Family {
            name: "all".into(),
            help: None,
            kind: MetricKind::Untyped,
            samples,
        };
        let e = Exposition {
            families: vec![family],
        };
        (t, e)
    }
}

fn fixture() -> ScrapeLog {
    let text = include_str!("../../../fixtures/metrics/breaker-flap.scrapes.prom");
    ScrapeLog::from_prom(text).expect("fixture parses")
}

#[test]
fn builder_derives_what_the_full_store_derived_on_the_recorded_fixture() {
    let log = fixture();
    let full = full_store_derive(&log.parsed(), START_UNIX);
    let mut b = Builder::new(START_UNIX);
    for s in &log.scrapes {
        // Each scrape is parsed afresh and dropped after the push: the builder keeps none.
        let e = crate::scrape::parse(&s.text).unwrap();
        b.push(s.t_ms, &e);
    }
    let tl = b.timeline();
    assert_eq!(tl, full);
    assert_eq!(tl.transitions.len(), 10);
    assert_eq!(derive(&log.parsed(), START_UNIX), full);
}

#[test]
fn builder_matches_the_full_store_past_downsampling_with_exact_interval_means() {
    // 6 000 scrapes (25 min at 250 ms): more than MAX_RATE_POINTS, so rate points merge.
    let mut engine = Engine::default();
    let scrapes: Vec<(u64, Exposition)> = (1..=6_000).map(|i| engine.scrape(i)).collect();
    let pairs: Vec<(u64, &Exposition)> = scrapes.iter().map(|(t, e)| (*t, e)).collect();
    let full = full_store_derive(&pairs, START_UNIX);
    let tl = derive(&pairs, START_UNIX);
    assert_eq!(tl.transitions, full.transitions);
    assert_eq!(tl.states, full.states);
    assert_eq!(full.rates.len(), 6_000);
    assert!(tl.rates.len() <= MAX_RATE_POINTS, "{}", tl.rates.len());
    assert!(tl.rates.len() >= 6_000 / 4, "{}", tl.rates.len());
    // Each kept point is the time-weighted mean of the full store's points it covers.
    let mut from = 0;
    for p in &tl.rates {
        let covered: Vec<&RatePoint> = full
            .rates
            .iter()
            .filter(|r| r.t_ms > from && r.t_ms <= p.t_ms)
            .collect();
        assert!(!covered.is_empty(), "{p:?}");
        let dt = (p.t_ms - from) as f64;
        let mut t0 = from;
        let (mut req, mut err) = (0.0, 0.0);
        for r in &covered {
            let w = (r.t_ms - t0) as f64 / dt;
            req += r.requests_per_s * w;
            err += r.errors_per_s * w;
            t0 = r.t_ms;
        }
        assert!((p.requests_per_s - req).abs() < 1e-9, "{p:?} vs {req}");
        assert!((p.errors_per_s - err).abs() < 1e-9, "{p:?} vs {err}");
        from = p.t_ms;
    }
    assert_eq!(from, scrapes.last().map_or(0, |s| s.0));
}

#[test]
fn builder_stays_bounded_and_keeps_every_state_change_over_a_long_run() {
    // 100 000 scrapes at 250 ms ≈ 7 h of a flapping breaker; no scrape outlives its push.
    let n = 100_000;
    let mut engine = Engine::default();
    let mut b = Builder::new(START_UNIX);
    for i in 1..=n {
        let (t, e) = engine.scrape(i);
        b.push(t, &e);
        if i % 10_000 == 0 {
            // What the builder holds besides transitions does not grow with the scrapes.
            assert!(b.rates.with_intervals().count() <= MAX_RATE_POINTS);
            assert_eq!(b.prev.as_ref().map(|p| p.transitions.len()), Some(4));
            assert_eq!((b.first_state.len(), b.current.len()), (2, 1));
            assert_eq!(b.transitions.len(), engine.made.len());
        }
    }
    let tl = b.timeline();
    let cycles = (n * SCRAPE_MS / CYCLE_MS) as usize;
    assert!(
        engine.made.len() >= cycles * CYCLE.len(),
        "{}",
        engine.made.len()
    );
    // Every state change the engine made, in order, each within the interval it fell in.
    let got: Vec<(BreakerState, BreakerState)> =
        tl.transitions.iter().map(|t| (t.from, t.to)).collect();
    let made: Vec<(BreakerState, BreakerState)> =
        engine.made.iter().map(|&(_, f, t)| (f, t)).collect();
    assert_eq!(got, made);
    for (t, &(at, _, _)) in tl.transitions.iter().zip(&engine.made) {
        assert!(t.t_ms.abs_diff(at) < SCRAPE_MS + 41, "{t:?} made at {at}");
    }
    // Alone in its interval, a transition keeps its exact timestamp.
    let trip = &tl.transitions[0];
    assert_eq!((trip.t_ms, trip.timing), (5_010, Timing::Timestamp));
    assert_eq!(tl.states["crm"].len(), engine.made.len() + 1);
    assert_eq!(
        tl.states["calc"],
        vec![StatePoint {
            t_ms: 0,
            state: BreakerState::Closed
        }]
    );
    // Rates: bounded, and the requests they add up to are every request counted.
    assert!(tl.rates.len() <= MAX_RATE_POINTS && tl.rates.len() > MAX_RATE_POINTS / 4);
    let total: f64 = b
        .rates
        .with_intervals()
        .map(|(p, dt)| p.requests_per_s * dt as f64 / 1000.0)
        .sum();
    let counted = (engine.requests_ok + engine.requests_bad) as f64;
    assert!(
        (total - counted).abs() < 1e-6 * counted,
        "{total} vs {counted}"
    );
}
