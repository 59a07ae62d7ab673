//! What the faults of an arm applied to: each fault's applications in the upstream's record
//! ([`applications`], where an anchor at a fault's end falls), the faults no run of the scenario
//! applied ([`unapplied_faults`]) and the failed row each of them gets ([`unapplied_rows`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::rehearsal::observation::Hits;
use crate::upstream::FaultSpec;
use crate::upstream::faults::RouteSel;
use crate::verdict::anchor::Applied;
use crate::verdict::{ExpectKind, ExpectStatus, ExpectationResult};

/// What the upstream's record says of each fault of one arm: how many user requests it applied
/// to and the last of them (scenario ms), from the recorder's hits (every route; the latest
/// always kept) — where an anchor at a fault's end falls (`verdict::anchor`).
pub(crate) fn applications(hits: &Hits) -> BTreeMap<usize, Applied> {
    hits.iter()
        .map(|(&i, (count, kept))| {
            let last_ms = kept.iter().map(|h| h.t_ms).max();
            (
                i,
                Applied {
                    count: *count,
                    last_ms,
                },
            )
        })
        .collect()
}

/// The faults that applied to no request in any run (`runs`: each run's fault hits) and do
/// not say `optional = true`:
/// a fault that never applied tested nothing, so the rows that hold despite it prove nothing
/// about it. A coordinator fault acts on the fleet's Redis, not on upstream requests (it is
/// judged by its effect on the hosts), so it is left out.
pub(crate) fn unapplied_faults(faults: &[FaultSpec], runs: &[&Hits]) -> BTreeSet<usize> {
    faults
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.optional && f.route != RouteSel::Coordinator)
        .filter(|(i, _)| runs.iter().all(|h| h.get(i).is_none_or(|(n, _)| *n == 0)))
        .map(|(i, _)| i)
        .collect()
}

/// One failed row per fault of `never`. In a run stopped at `stop` (scenario ms) only the
/// faults whose window had begun: `fail` when the window ended before the stop, `not_reached`
/// while it was still open (the fault might have applied later); a window the stop never
/// reached says nothing and has no row (the run is incomplete anyway).
pub(super) fn unapplied_rows(
    faults: &[FaultSpec],
    never: &BTreeSet<usize>,
    stop: Option<u64>,
) -> Vec<ExpectationResult> {
    let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    never
        .iter()
        .filter_map(|&i| faults.get(i).map(|f| (i, f)))
        .filter_map(|(i, f)| {
            let from = f.from.map_or(0, ms);
            let status = match stop {
                None => ExpectStatus::Fail,
                Some(s) if from >= s => return None,
                Some(s) if f.until.is_some_and(|u| ms(u) <= s) => ExpectStatus::Fail,
                Some(_) => ExpectStatus::NotReached,
            };
            Some((i, f, status))
        })
        .map(|(i, f, status)| {
            let mut scope = vec![format!("route {}", f.route)];
            if let Some(p) = &f.profile {
                let shown = crate::util::fingerprint(p);
                scope.push(format!("profile token {shown}"));
            }
            if let Some(m) = &f.model {
                scope.push(format!("model {m}"));
            }
            let from = f.from.map_or(0, |d| d.as_millis() as i64);
            let window = match f.until {
                Some(u) => format!(
                    "[{}, {})",
                    crate::verdict::secs(from),
                    crate::verdict::secs(u.as_millis() as i64)
                ),
                None => format!("from {}", crate::verdict::secs(from)),
            };
            let dep = format!("fault[{i}] {}", f.kind.name());
            let why = if status == ExpectStatus::NotReached {
                "not applied before the run was stopped, while its window was open".to_string()
            } else {
                "never applied in any run of the scenario: no request it scopes reached the \
                 upstream in its window, so nothing was rehearsed against it (say \
                 `optional = true` if it may not apply)"
                    .to_string()
            };
            ExpectationResult {
                witness: Default::default(),
                kind: ExpectKind::FaultApplied,
                dep: Some(dep.clone()),
                series: None,
                expected: format!("applies ({}, {window})", scope.join(", ")),
                observed: "0 requests".into(),
                expected_ms: None,
                observed_ms: None,
                delta_ms: None,
                tolerance_ms: None,
                ok: false,
                status,
                detail: format!("{dep}: {why}"),
            }
        })
        .collect()
}
