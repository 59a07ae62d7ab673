//! One `[[expect.dashboard]]` judged: every breaker transition counted in Prometheus in time.

use super::*;

/// Judges one `[[expect.dashboard]]`.
pub(super) fn judge_dashboard(
    d: &ExpectDashboard,
    seen: &AlertsSeen,
    f: &AlertFacts<'_>,
) -> ExpectationResult {
    let within = dur_ms(d.within.unwrap_or(DASHBOARD_WITHIN));
    let subject = d.dep.clone().unwrap_or_else(|| "every dep".into());
    let expected = format!(
        "each breaker transition queryable in Prometheus ≤{}",
        secs(within)
    );
    let mut r = ExpectationResult::counted(
        ExpectKind::Dashboard,
        subject.clone(),
        expected.clone(),
        String::new(),
    );
    let mut count: BTreeMap<(String, &str, &str), usize> = BTreeMap::new();
    let (mut worst, mut judged, mut skipped) = (None::<(i64, String)>, 0usize, 0usize);
    let mut late = Vec::new();
    for t in f
        .transitions
        .iter()
        .filter(|t| d.dep.as_ref().is_none_or(|x| x == &t.dep))
    {
        let k = count
            .entry((t.dep.clone(), t.from.as_str(), t.to.as_str()))
            .or_default();
        *k += 1;
        let at = t.t_ms as i64;
        let seen_at = seen
            .transitions_total
            .iter()
            .filter(|s| {
                s.labels.get("dep") == Some(&t.dep)
                    && s.labels.get("from").map(String::as_str) == Some(t.from.as_str())
                    && s.labels.get("to").map(String::as_str) == Some(t.to.as_str())
            })
            .flat_map(|s| s.points.iter())
            .filter(|(_, v)| *v >= *k as f64)
            .map(|p| p.0)
            .min();
        let what = format!(
            "{} {}→{} at {}",
            t.dep,
            t.from.as_str(),
            t.to.as_str(),
            secs(at)
        );
        match seen_at {
            Some(v) => {
                judged += 1;
                let delay = (v - at).max(0);
                if delay > within {
                    late.push(format!(
                        "{what} queryable only at {} (+{})",
                        secs(v),
                        secs(delay)
                    ));
                }
                if worst.as_ref().is_none_or(|w| delay > w.0) {
                    worst = Some((delay, what));
                }
            }
            None if at + within > seen.end_ms.min(f.stop_ms.unwrap_or(i64::MAX)) => skipped += 1,
            None => late.push(format!("{what} never queryable")),
        }
    }
    let tail = if skipped > 0 {
        format!(
            " ({skipped} transition(s) in the last {} of the run not judged: the run ended before they were due)",
            secs(within)
        )
    } else {
        String::new()
    };
    let (status, observed, why) = if !late.is_empty() {
        (
            ExpectStatus::Fail,
            format!("{} late", late.len()),
            late.join("; "),
        )
    } else if let Some((delay, what)) = worst {
        (
            ExpectStatus::Pass,
            format!("max +{}", secs(delay)),
            format!(
                "{judged} transition(s), the slowest {what} +{}",
                secs(delay)
            ),
        )
    } else if skipped > 0 || f.stop_ms.is_some() {
        (
            ExpectStatus::NotReached,
            "none judged".into(),
            "no transition could be judged".into(),
        )
    } else {
        (
            ExpectStatus::Fail,
            "no transition".into(),
            "no breaker transition happened: nothing was shown queryable".into(),
        )
    };
    r.observed = observed;
    r.ok = status == ExpectStatus::Pass;
    r.status = status;
    r.detail = format!("{subject} {expected}: {why}{tail}");
    let samples: usize = seen.transitions_total.iter().map(|s| s.points.len()).sum();
    let up = seen.up.iter().filter(|(_, v)| *v == 1.0).count() as u64;
    r.witness = crate::verdict::Witness::of(&[
        ("transitions_judged", judged as u64),
        ("samples", samples as u64),
        ("target_up_samples", up),
        ("run_targets", seen.run_targets),
    ]);
    r
}
