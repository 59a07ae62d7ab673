//! `[[expect.fleet]]` against a coordination run's fleet checks (pure): one report row per
//! bound given, about the dep's [`DepFleet`] figures (scenario time). A run stopped early keeps
//! a bound already broken (too many probes seen, a close after too few hosts, too wide a
//! spread, too late a rejoin) failed, and leaves one that held so far `not_reached`
//! ([`crate::verdict::reach`]): the figures cover only the part of the run before the stop.

use crate::rehearsal::fleet::checks::Outage;
use crate::rehearsal::fleet::report::DepFleet;
use crate::util::speed::Speed;
use crate::verdict::reach::{Decided, settle};
use crate::verdict::{ExpectFleet, ExpectKind, ExpectStatus, ExpectationResult, secs};

fn row(
    e: &ExpectFleet,
    expected: String,
    observed: String,
    ok: bool,
    ms: Option<(i64, i64)>,
) -> ExpectationResult {
    let how = if ok { "ok" } else { "not met" };
    ExpectationResult {
        witness: Default::default(),
        kind: ExpectKind::Fleet,
        dep: Some(e.dep.clone()),
        series: None,
        detail: format!("{} expected {expected}, observed {observed}, {how}", e.dep),
        expected,
        observed,
        expected_ms: ms.map(|m| m.0),
        observed_ms: ms.map(|m| m.1),
        delta_ms: ms.map(|(x, o)| o - x),
        tolerance_ms: None,
        ok,
        status: ExpectStatus::from_ok(ok),
    }
}

/// Settles `r` for a run stopped at `stop` (wall ms, and the run's speed): `certain` when what
/// was seen already decides it (a broken bound, or a minimum already reached).
fn settled(
    mut r: ExpectationResult,
    certain: bool,
    stop: (Option<u64>, Speed),
) -> ExpectationResult {
    let decided = if certain {
        Decided::Now
    } else {
        Decided::EndOfRun
    };
    let dep = r.dep.clone().unwrap_or_default();
    settle(&mut r, &dep, decided, stop);
    r
}

/// The rows of `e` for `dep` (`None`: the run saw neither probes nor transitions of it) and
/// the run's coordinator `outages`, in a run stopped at `stop` (wall ms of the stop, `None`:
/// it reached `duration`; and the run's speed).
pub(crate) fn check(
    e: &ExpectFleet,
    dep: Option<&DepFleet>,
    outages: &[Outage],
    stop: (Option<u64>, Speed),
) -> Vec<ExpectationResult> {
    let empty = DepFleet {
        dep: e.dep.clone(),
        spacing: Default::default(),
        spells: Vec::new(),
        closes: Vec::new(),
        agreement: Vec::new(),
        max_spread_ms: None,
    };
    let d = dep.unwrap_or(&empty);
    let s = &d.spacing;
    let gap = s
        .min_gap_ms
        .map_or(String::new(), |g| format!(", min gap {}", secs(g as i64)));
    let mut out = Vec::new();
    if let Some(max) = e.max_probes_per_interval {
        out.push(settled(
            row(
            e,
            format!("≤ {max} probes in any probe interval (all hosts)"),
            format!("{} of {} probes{gap}", s.max_in_interval, s.probes),
            s.probes > 0 && s.max_in_interval <= max,
            None,
            ),
            s.max_in_interval > max,
            stop,
        ));
    }
    if let Some(min) = e.min_probes_per_interval {
        out.push(settled(
            row(
            e,
            format!("≥ {min} probes in some probe interval (all hosts)"),
            format!("{} of {} probes{gap}", s.max_in_interval, s.probes),
            s.max_in_interval >= min,
            None,
            ),
            s.max_in_interval >= min,
            stop,
        ));
    }
    if let Some(max) = e.max_probes_per_host_per_interval {
        out.push(settled(
            row(
            e,
            format!("≤ {max} probes per host in any probe interval"),
            format!("at most {}", s.max_per_host_in_interval),
            s.probes > 0 && s.max_per_host_in_interval <= max,
            None,
            ),
            s.max_per_host_in_interval > max,
            stop,
        ));
    }
    if let Some(min) = e.min_close_hosts {
        let fewest = d.closes.iter().map(|c| c.ok_hosts.len() as u64).min();
        let observed = match fewest {
            None => "no close".to_string(),
            Some(f) => format!(
                "{} closes, the fewest after successes from {f} hosts",
                d.closes.len()
            ),
        };
        out.push(settled(
            row(
            e,
            format!("every close after successes from ≥ {min} distinct hosts"),
            observed,
            fewest.is_some_and(|f| f >= min),
            None,
            ),
            fewest.is_some_and(|f| f < min),
            stop,
        ));
    }
    if let Some(within) = e.agree_within {
        let want = i64::try_from(within.as_millis()).unwrap_or(i64::MAX);
        let spread = d.max_spread_ms.map(|m| m as i64);
        out.push(settled(
            row(
            e,
            format!("hosts enter each state within {}", secs(want)),
            spread.map_or("no state shared by two hosts".into(), |m| {
                format!("largest spread {}", secs(m))
            }),
            spread.is_some_and(|m| m <= want),
            spread.map(|m| (want, m)),
            ),
            spread.is_some_and(|m| m > want),
            stop,
        ));
    }
    if let Some(max) = e.max_probes_per_spell {
        let most = d.spells.iter().map(|s| s.probes).max();
        out.push(settled(
            row(
            e,
            format!("≤ {max} probes per half-open spell"),
            most.map_or("no probes".into(), |m| {
                format!("at most {m} over {} spells", d.spells.len())
            }),
            most.is_some_and(|m| m <= max),
            None,
            ),
            most.is_some_and(|m| m > max),
            stop,
        ));
    }
    if let Some(within) = e.rejoin_within {
        let want = i64::try_from(within.as_millis()).unwrap_or(i64::MAX);
        let worst = outages
            .iter()
            .map(|o| o.rejoin_ms.map(|r| r as i64))
            .try_fold(0_i64, |m, r| r.map(|r| m.max(r)));
        let observed = match (outages.len(), worst) {
            (0, _) => "no coordinator outage".to_string(),
            (n, Some(w)) => format!("{n} outages, the last host back {} after", secs(w)),
            (n, None) => format!("{n} outages, a host never rejoined"),
        };
        let ok = !outages.is_empty() && worst.is_some_and(|w| w <= want);
        out.push(settled(
            row(
            e,
            format!("every host back on the coordinator within {}", secs(want)),
            observed,
            ok,
            worst.filter(|_| !outages.is_empty()).map(|w| (want, w)),
            ),
            worst.is_some_and(|w| w > want),
            stop,
        ));
    }
    // What every row of the dep was judged on: the probes, closes, half-open spells and
    // states two hosts shared that the run saw of it, and the coordinator's outages.
    let witness = crate::verdict::Witness::of(&[
        ("probes", s.probes),
        ("closes", d.closes.len() as u64),
        ("spells", d.spells.len() as u64),
        ("shared_states", d.agreement.len() as u64),
        ("outages", outages.len() as u64),
    ]);
    for r in &mut out {
        r.witness = witness.clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rehearsal::fleet::checks::{CloseCheck, Spacing, Spell};

    /// A run that reached its `duration`.
    const DONE: (Option<u64>, Speed) = (None, Speed::ONE);

    fn dep() -> DepFleet {
        DepFleet {
            dep: "crm".into(),
            spacing: Spacing {
                probes: 7,
                min_gap_ms: Some(318),
                gaps_under_interval: 0,
                max_in_interval: 1,
                max_per_host_in_interval: 1,
            },
            spells: vec![Spell {
                from_ms: 0,
                to_ms: 300,
                probes: 2,
                hosts: 2,
            }],
            closes: vec![CloseCheck {
                t_ms: 300,
                ok_hosts: vec!["h3".into(), "h8".into()],
            }],
            agreement: Vec::new(),
            max_spread_ms: Some(54),
        }
    }

    #[test]
    fn each_bound_is_a_row_and_fails_when_not_met() {
        let e = ExpectFleet {
            dep: "crm".into(),
            max_probes_per_interval: Some(1),
            min_close_hosts: Some(2),
            agree_within: Some(std::time::Duration::from_millis(250)),
            max_probes_per_spell: Some(2),
            ..Default::default()
        };
        let rows = check(&e, Some(&dep()), &[], DONE);
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|r| r.ok), "{rows:#?}");
        let strict = ExpectFleet {
            min_close_hosts: Some(3),
            min_probes_per_interval: Some(3),
            ..e.clone()
        };
        let rows = check(&strict, Some(&dep()), &[], DONE);
        assert_eq!(rows.iter().filter(|r| !r.ok).count(), 2);
        // A dep the run never saw: nothing holds.
        assert!(check(&e, None, &[], DONE).iter().all(|r| !r.ok));
        let rejoin = ExpectFleet {
            dep: "crm".into(),
            rejoin_within: Some(std::time::Duration::from_millis(250)),
            ..Default::default()
        };
        let o = |r: Option<u64>| Outage {
            down_ms: 1000,
            up_ms: Some(3000),
            hosts_fell_back: 3,
            hosts_rejoined: 3,
            rejoin_ms: r,
            probes: 2,
            max_per_host_in_interval: 1,
        };
        assert!(check(&rejoin, Some(&dep()), &[o(Some(120))], DONE)[0].ok);
        assert!(!check(&rejoin, Some(&dep()), &[o(Some(400))], DONE)[0].ok);
        assert!(!check(&rejoin, Some(&dep()), &[o(None)], DONE)[0].ok);
        assert!(
            !check(&rejoin, Some(&dep()), &[], DONE)[0].ok,
            "no outage: nothing shown"
        );
    }

    #[test]
    fn a_stopped_run_keeps_a_broken_bound_failed_and_leaves_one_that_held_so_far_not_reached() {
        // Stopped at 5 s of wall clock at speed 2: 10 s of scenario time.
        let stop = (Some(5_000), crate::util::speed::sp(2.0));
        let e = ExpectFleet {
            dep: "crm".into(),
            max_probes_per_interval: Some(1),
            min_probes_per_interval: Some(1),
            min_close_hosts: Some(3),
            ..Default::default()
        };
        let rows = check(&e, Some(&dep()), &[], stop);
        let status: Vec<ExpectStatus> = rows.iter().map(|r| r.status).collect();
        assert_eq!(
            status,
            vec![
                ExpectStatus::NotReached, // ≤ 1 per interval held so far: the rest was not seen
                ExpectStatus::Pass,       // ≥ 1 per interval: reached already
                ExpectStatus::Fail,       // a close after 2 hosts: broken for good
            ],
            "{rows:#?}"
        );
        assert!(rows[0].detail.contains("the run stopped at 10.000s"), "{}", rows[0].detail);
        // The same figures in a run that reached its end: all decided.
        let done: Vec<ExpectStatus> = check(&e, Some(&dep()), &[], DONE)
            .iter()
            .map(|r| r.status)
            .collect();
        assert_eq!(done, vec![ExpectStatus::Pass, ExpectStatus::Pass, ExpectStatus::Fail]);
    }
}
