//! Tests of the event log against the scrapes: agreement, the stale gauge of the weekly run, a
//! transition rendered just before its event, counts the events lack.

use super::*;
use crate::scrape::{Timing, parse};

const DEP: &str = "crm_search";

fn tr(t_ms: u64, from: BreakerState, to: BreakerState) -> Transition {
    Transition {
        dep: DEP.into(),
        from,
        to,
        t_ms,
        timing: Timing::Event,
        reason: None,
    }
}

/// One scrape: the state gauge and the closed→open / open→half_open counters.
fn scrape(state: u8, opened: u32, half: u32) -> Exposition {
    parse(&format!(
        "# TYPE breaker_state gauge\nbreaker_state{{dep=\"{DEP}\"}} {state}\n\
         # TYPE breaker_transitions_total counter\n\
         breaker_transitions_total{{dep=\"{DEP}\",from=\"closed\",to=\"open\"}} {opened}\n\
         breaker_transitions_total{{dep=\"{DEP}\",from=\"open\",to=\"half_open\"}} {half}\n"
    ))
    .expect("exposition")
}

use BreakerState::{Closed, HalfOpen, Open};

fn run(events: &[Transition], scrapes: &[(u64, Exposition)]) -> Vec<Disagreement> {
    let refs: Vec<(u64, &Exposition)> = scrapes.iter().map(|(t, e)| (*t, e)).collect();
    crosscheck(events, &refs, 250, crate::util::speed::Speed::ONE)
}

#[test]
fn scrapes_that_follow_the_events_agree() {
    let events = [tr(1_000, Closed, Open), tr(31_000, Open, HalfOpen)];
    let mut scrapes = Vec::new();
    for k in 1..=140 {
        let t = k * 250;
        let (state, opened, half) = match t {
            ..1_000 => (0, 0, 0),
            1_000..31_000 => (2, 1, 0),
            _ => (1, 1, 1),
        };
        scrapes.push((t, scrape(state, opened, half)));
    }
    assert_eq!(run(&events, &scrapes), vec![]);
}

#[test]
fn a_scrape_rendered_just_before_the_event_is_not_a_disagreement() {
    // The scrape read at 1 100 ms was rendered before the trip at 1 000 ms (its request left
    // after the 900 ms read): closed, uncounted. The next one counts it.
    let events = [tr(1_000, Closed, Open)];
    let scrapes = [
        (900, scrape(0, 0, 0)),
        (1_100, scrape(0, 0, 0)),
        (1_350, scrape(2, 1, 0)),
    ];
    assert_eq!(run(&events, &scrapes), vec![]);
}

#[test]
fn the_stale_gauge_of_the_weekly_run_is_shown_twice() {
    // events.jsonl: half-open at 164.573 s; the scrapes kept showing open and counted it only
    // at 166.014 s.
    let events = [tr(134_573, Closed, Open), tr(164_573, Open, HalfOpen)];
    let mut scrapes = Vec::new();
    let mut t = 134_600;
    while t < 166_014 {
        scrapes.push((t, scrape(2, 1, 0)));
        t += 250;
    }
    scrapes.push((166_014, scrape(1, 1, 1)));
    let rows = run(&events, &scrapes);
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert_eq!(rows[0].kind, DisagreementKind::Late);
    assert_eq!(rows[0].t_ms, 164_573);
    assert!(
        rows[0].detail.contains(
            "first counted by the scrape at 166.014s (1.441s later; scrape interval 0.250s)"
        ),
        "{}",
        rows[0].detail
    );
    assert_eq!(rows[1].kind, DisagreementKind::State);
    // The scrape read at 164.600 s may have been rendered before 164.573 s (its request left
    // after the 164.350 s read), so its "open" stands; every later one could not have been.
    assert!(
        rows[1].detail.contains(
            "scrapes from 164.850s to 165.850s show crm_search open; events.jsonl has it half_open"
        ),
        "{}",
        rows[1].detail
    );
}

#[test]
fn counts_the_events_lack_and_transitions_no_scrape_counts_are_rows() {
    let events = [tr(1_000, Closed, Open)];
    let scrapes = [
        (900, scrape(0, 0, 0)),
        (1_250, scrape(2, 0, 0)),
        (1_500, scrape(2, 0, 2)),
        (1_750, scrape(2, 0, 2)),
    ];
    let rows = run(&events, &scrapes);
    let kinds: Vec<_> = rows.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [DisagreementKind::Late, DisagreementKind::NotInEvents],
        "{rows:#?}"
    );
    assert!(rows[0].detail.ends_with("never counted by any scrape"));
    assert!(
        rows[1]
            .detail
            .contains("counts 2 crm_search open→half_open transitions, events.jsonl 0")
    );
}

#[test]
fn a_transition_after_the_last_scrape_started_is_not_checked() {
    let events = [tr(1_000, Closed, Open)];
    let scrapes = [(900, scrape(0, 0, 0)), (1_010, scrape(0, 0, 0))];
    assert_eq!(run(&events, &scrapes), vec![]);
}
