//! A fleet's every host judged on `[[expect.transition]]` and `[[expect.no_transition]]`, not
//! only h0 whose lanes the section shows: each other host's transitions diffed alike and matched
//! to h0's rows by the expectation they stand for ([`identities`]).

use crate::scrape::Transition;
use crate::util::speed::Speed;
use crate::verdict::anchor::FaultsSeen;
use crate::verdict::diff::diff_anchored;
use crate::verdict::{ExpectKind, ExpectStatus, ExpectationResult, Expectations};

/// Which expectation a transition-table row stands for: its kind, its dep and its place among
/// that dep's expectations of that kind (the diff gives each `[[expect.transition]]` and
/// `[[expect.no_transition]]` exactly one row, in table order per dep). `None` for the other
/// rows and for an unexpected transition (it stands for no expectation).
fn identities(rows: &[ExpectationResult]) -> Vec<Option<(ExpectKind, String, usize)>> {
    let mut seen: Vec<(ExpectKind, String, usize)> = Vec::new();
    rows.iter()
        .map(|r| {
            let table = matches!(r.kind, ExpectKind::Transition | ExpectKind::NoTransition);
            if !table || r.is_unexpected() {
                return None;
            }
            let dep = r.dep.clone().unwrap_or_default();
            let n = match seen.iter_mut().find(|s| s.0 == r.kind && s.1 == dep) {
                Some(s) => {
                    s.2 += 1;
                    s.2
                }
                None => {
                    seen.push((r.kind, dep.clone(), 0));
                    0
                }
            };
            Some((r.kind, dep, n))
        })
        .collect()
}

/// `[[expect.transition]]` and `[[expect.no_transition]]` hold on every host, not only on h0
/// whose lanes a fleet's section shows: each other host's transitions are diffed alike and
/// matched to h0's rows by the expectation they stand for ([`identities`]; never by their
/// `expected` text, which for an `after =` transition carries each host's own anchor time). A
/// row h0 passed fails when another host failed it (and is `not_reached` when another host did
/// not get that far); its detail names the host and what it observed. A transition another host
/// made that no expectation accounts for is a failed row of its own, naming the host, as h0's
/// are.
pub(super) fn every_host_transitions(
    rows: &mut Vec<ExpectationResult>,
    expect: &Expectations,
    others: &[(&str, &[Transition])],
    speed: Speed,
    stop: Option<u64>,
    faults: &FaultsSeen<'_>,
) {
    let only = Expectations {
        transition: expect.transition.clone(),
        no_transition: expect.no_transition.clone(),
        ..Default::default()
    };
    if only.is_empty() {
        return;
    }
    let mine = identities(rows);
    let mut extra = Vec::new();
    for (host, transitions) in others {
        // The fleet's one upstream applied the faults: every host's `since` falls where h0's does.
        let theirs = diff_anchored(&only, transitions, None, &[], speed, stop, faults);
        let ids = identities(&theirs);
        for (t, id) in theirs.iter().zip(&ids) {
            let Some(id) = id else {
                if t.is_unexpected() {
                    let mut u = t.clone();
                    u.observed = format!("{} on {host}", t.observed);
                    u.detail = format!("on {host}: {}", t.detail);
                    extra.push(u);
                }
                continue;
            };
            let Some(i) = mine.iter().position(|m| m.as_ref() == Some(id)) else {
                continue;
            };
            let r = &mut rows[i];
            let worse = match (t.status, r.status) {
                (ExpectStatus::Fail, ExpectStatus::Fail) => false,
                (ExpectStatus::Fail, _) => true,
                (ExpectStatus::NotReached, ExpectStatus::Pass) => true,
                _ => false,
            };
            if worse {
                let what = match t.status {
                    ExpectStatus::Fail => format!("observed {}", t.observed),
                    _ => "not reached".to_string(),
                };
                r.detail = format!("{}; on {host}: {what}", r.detail);
                r.ok = false;
                r.status = t.status;
            }
        }
    }
    rows.extend(extra);
}
