//! Timeline derivation from a committed sequence of scrapes (fixtures/metrics/*.scrapes.prom).

use rehearse::engine::events::BreakerState::{Closed, HalfOpen, Open};
use rehearse::scrape::timeline::derive;
use rehearse::scrape::{ScrapeLog, Timing};

const START_UNIX: f64 = 1_790_000_000.0;

fn fixture() -> ScrapeLog {
    let text = include_str!("../fixtures/metrics/breaker-flap.scrapes.prom");
    ScrapeLog::from_prom(text).expect("fixture parses")
}

#[test]
fn timeline_orders_transitions_timed_by_their_timestamps() {
    let log = fixture();
    assert_eq!(log.scrapes.len(), 6);
    let tl = derive(&log.parsed(), START_UNIX);
    let got: Vec<(&str, &str, &str, u64, Timing)> = tl
        .transitions
        .iter()
        .map(|t| {
            (
                t.dep.as_str(),
                t.from.as_str(),
                t.to.as_str(),
                t.t_ms,
                t.timing,
            )
        })
        .collect();
    use Timing::*;
    let want = vec![
        ("crm_search", "closed", "open", 1620, Timestamp),
        ("crm_search", "open", "half_open", 3210, Timestamp),
        ("crm_search", "half_open", "closed", 3650, Timestamp),
        ("crm_search", "closed", "open", 4300, Timestamp),
        ("crm_search", "open", "half_open", 4800, Timestamp),
        // No timestamp series for this dep: timed by the scrape that showed it.
        ("ws_realtime", "closed", "open", 5000, Scrape),
        // Two flaps in one interval: the earlier of each pair is interpolated, causal order kept.
        ("crm_search", "half_open", "open", 5350, Interpolated),
        ("crm_search", "open", "half_open", 5450, Interpolated),
        ("crm_search", "half_open", "open", 5700, Timestamp),
        ("crm_search", "open", "half_open", 5900, Timestamp),
    ];
    assert_eq!(got, want);
}

#[test]
fn timeline_gives_state_series_per_dep_and_rates_per_interval() {
    let log = fixture();
    let tl = derive(&log.parsed(), START_UNIX);
    let calc = &tl.states["calculator"];
    assert_eq!(calc.len(), 1);
    assert_eq!((calc[0].t_ms, calc[0].state), (0, Closed));
    let crm: Vec<_> = tl.states["crm_search"]
        .iter()
        .map(|p| (p.t_ms, p.state))
        .collect();
    assert_eq!(
        crm[..4],
        [(0, Closed), (1620, Open), (3210, HalfOpen), (3650, Closed)]
    );
    assert_eq!(crm.last(), Some(&(5900, HalfOpen)));
    assert_eq!(tl.states["ws_realtime"].len(), 2);
    let r: Vec<(u64, f64, f64)> = tl
        .rates
        .iter()
        .map(|r| (r.t_ms, r.requests_per_s, r.errors_per_s))
        .collect();
    assert_eq!(r[0], (1000, 20.0, 0.0));
    assert_eq!(r[1], (2000, 17.0, 5.0));
    assert_eq!(r[2], (3000, 13.0, 3.0));
    assert_eq!(r.len(), 6);
}

#[test]
fn timeline_scrapes_prom_round_trips() {
    let log = fixture();
    let again = ScrapeLog::from_prom(&log.to_prom()).unwrap();
    assert_eq!(again.scrapes.len(), log.scrapes.len());
    assert_eq!(again.to_prom(), log.to_prom());
    let tagged = ScrapeLog::from_prom("# scrape t_ms=250 policy=legacy\na 1\n").unwrap();
    assert_eq!(tagged.scrapes[0].t_ms, 250);
    let bad = "# scrape t_ms=5\na 1\n# scrape t_ms=9\na{ 1\n";
    let err = ScrapeLog::from_prom(bad).unwrap_err();
    assert_eq!((err.line, err.col), (4, 4), "{err}");
}

#[test]
fn timeline_includes_deps_first_seen_late_without_transitions() {
    let a = rehearse::scrape::parse("breaker_state{dep=\"a\"} 0\n").unwrap();
    let b = rehearse::scrape::parse("breaker_state{dep=\"a\"} 0\nbreaker_state{dep=\"late\"} 0\n")
        .unwrap();
    let tl = derive(&[(250, &a), (500, &b)], START_UNIX);
    assert!(tl.transitions.is_empty());
    assert_eq!(tl.states.keys().collect::<Vec<_>>(), vec!["a", "late"]);
    assert_eq!(tl.rates.len(), 2);
    assert_eq!(tl.rates[1].requests_per_s, 0.0);
}
