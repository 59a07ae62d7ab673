//! The tape of one arm → its [`RequestLanes`] (pure): lanes grouped and ordered, the requests
//! one by one or binned, the rotations and fallbacks read from the sequence, the turns, the
//! decisions on the lanes they name, and the warm-up apart.

use std::collections::BTreeMap;

use super::tape::{LaneKey, RequestTape, Seen};
use super::{
    BinCount, DecisionMark, MAX_BINS, MAX_DECISIONS, MAX_EXACT, MAX_LANES,
    MAX_TURN_SPANS, MAX_WARMUP_MARKS, RequestBins, RequestLane, RequestLanes, RequestMark,
    TurnLane, TurnSpan, WarmupBand, WarmupMark,
};
use crate::gateway::openclaw::log::profile_hash;
use crate::gateway::openclaw::{Decision, LoggedDecision};
use crate::report::target::TurnRow;
use crate::util::speed::Speed;
use crate::verdict::gateway_eval::event_name;

/// What the lanes are built from.
#[derive(Debug)]
pub(crate) struct LaneInput<'a> {
    /// The recorder's tape.
    pub tape: &'a RequestTape,
    /// The arm's speed (scenario ms = wall ms × speed).
    pub speed: Speed,
    /// The scenario's profiles in order.
    pub profiles: &'a [LaneProfile],
    /// A gateway's turns (`None` for an engine of ours).
    pub turns: Option<&'a [TurnRow]>,
    /// A gateway's log decisions on the run's clock.
    pub decisions: &'a [LoggedDecision],
}

/// A scenario profile as the lanes know it (never its token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaneProfile {
    /// Its token's fingerprint (what the upstream records).
    pub fp: String,
    /// Its id (`mockai:a`).
    pub id: String,
    /// Its provider (`mockai`): a gateway's decisions name `provider/model`.
    pub provider: String,
}

/// The lane a key is drawn in: route, name (profile id or dep), model.
type Group = (String, String, Option<String>);

fn group_of(k: &LaneKey, profile_of: &BTreeMap<&str, &str>) -> (Group, Option<String>) {
    let route = k.route.to_string();
    if !k.is_llm() {
        return ((route, k.dep.clone(), None), None);
    }
    let profile = k
        .profile_fp
        .as_deref()
        .and_then(|fp| profile_of.get(fp))
        .map(|p| p.to_string());
    let name = profile.clone().unwrap_or_else(|| k.dep.clone());
    ((route, name, k.model.clone()), profile)
}

/// The order lanes are drawn in: model calls of the scenario's profiles (in its order), other
/// model calls, then the rest by route and name; first appearance breaks ties (a profile's
/// first model before its fallback).
fn rank(g: &Group, first: usize, profiles: &[LaneProfile]) -> (u8, usize, String, usize) {
    match profiles.iter().position(|p| p.id == g.1) {
        Some(i) if g.0 == "llm" => (0, i, String::new(), first),
        _ if g.0 == "llm" => (1, 0, String::new(), first),
        _ => (2, 0, format!("{}\u{0}{}", g.0, g.1), first),
    }
}

/// Lanes of the tape: the lane of every key that has requests on the run's clock (`None` for
/// a key only the warm-up used), and the lanes — one more, empty, for each scenario profile
/// no model call used (a fallback never taken shows as such).
fn lanes(input: &LaneInput<'_>) -> (Vec<Option<usize>>, Vec<RequestLane>) {
    let tape = input.tape;
    let profile_of: BTreeMap<&str, &str> = input
        .profiles
        .iter()
        .map(|p| (p.fp.as_str(), p.id.as_str()))
        .collect();
    let mut first_seen = vec![usize::MAX; tape.keys.len()];
    for (i, s) in tape.seen.iter().enumerate().rev() {
        if let Some(f) = first_seen.get_mut(s.key as usize) {
            *f = i;
        }
    }
    // (group, profile, dep, first request)
    let mut groups: Vec<(Group, Option<String>, String, usize)> = Vec::new();
    let mut group_of_key = Vec::with_capacity(tape.keys.len());
    for (k, first) in tape.keys.iter().zip(&first_seen) {
        if *first == usize::MAX {
            group_of_key.push(None);
            continue;
        }
        let (g, profile) = group_of(k, &profile_of);
        let at = match groups.iter().position(|x| x.0 == g) {
            Some(i) => {
                groups[i].3 = groups[i].3.min(*first);
                i
            }
            None => {
                groups.push((g, profile, k.dep.clone(), *first));
                groups.len() - 1
            }
        };
        group_of_key.push(Some(at));
    }
    for p in input.profiles {
        if !groups.iter().any(|g| g.1.as_deref() == Some(p.id.as_str())) {
            let g = ("llm".to_string(), p.id.clone(), None);
            groups.push((g, Some(p.id.clone()), String::new(), usize::MAX));
        }
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|i| rank(&groups[*i].0, groups[*i].3, input.profiles));
    let overflow = order.len() > MAX_LANES;
    let mut lane_of_group = vec![0; groups.len()];
    let mut out: Vec<RequestLane> = Vec::new();
    for (pos, gi) in order.iter().enumerate() {
        if overflow && pos >= MAX_LANES - 1 {
            lane_of_group[*gi] = MAX_LANES - 1;
            continue;
        }
        let ((route, name, model), profile, dep, _) = &groups[*gi];
        lane_of_group[*gi] = out.len();
        let provider = match profile {
            Some(id) => input.profiles.iter().find(|p| &p.id == id).map(|p| p.provider.clone()),
            None if route == "llm" => dep.split('/').next().map(str::to_string),
            None => None,
        };
        out.push(RequestLane {
            name: name.clone(),
            route: route.clone(),
            dep: dep.clone(),
            provider,
            profile: profile.clone(),
            model: model.clone(),
            requests: 0,
            faulted: 0,
        });
    }
    if overflow {
        out.push(RequestLane {
            name: format!("other ({} lanes)", order.len() - (MAX_LANES - 1)),
            route: "*".into(),
            dep: "*".into(),
            ..RequestLane::default()
        });
    }
    let lane_of_key = group_of_key
        .iter()
        .map(|g| g.map(|g| lane_of_group[g]))
        .collect();
    (lane_of_key, out)
}

/// A round bin width (1, 2, 5 × 10ⁿ ms) giving at most [`MAX_BINS`] bins over `[0, end]`.
pub(crate) fn bin_width(end_ms: u64) -> u64 {
    let raw = end_ms.div_ceil(MAX_BINS).max(1);
    let mut mag = 1u64;
    loop {
        for m in [1, 2, 5] {
            let w = m * mag;
            if w >= raw {
                return w;
            }
        }
        match mag.checked_mul(10) {
            Some(next) => mag = next,
            None => return u64::MAX,
        }
    }
}

/// The lanes of one arm (see the module doc).
pub(crate) fn build(input: &LaneInput<'_>) -> RequestLanes {
    let tape = input.tape;
    let to_s = |t: u64| input.speed.scenario_ms_u(t);
    let (lane_of_key, mut lanes) = lanes(input);
    let lane = |s: &Seen| lane_of_key.get(s.key as usize).copied().flatten().unwrap_or(0);
    for s in &tape.seen {
        if let Some(l) = lanes.get_mut(lane(s)) {
            l.requests += 1;
            l.faulted += u64::from(s.kind.is_some());
        }
    }
    let mut out = RequestLanes {
        total: tape.total,
        not_kept: tape.dropped,
        not_kept_from_ms: tape.dropped_from_ms.map(to_s),
        ..RequestLanes::default()
    };
    let turn_end = input
        .turns
        .into_iter()
        .flatten()
        .map(|t| t.at_ms.saturating_add(t.lag_ms).saturating_add(t.elapsed_ms))
        .max()
        .unwrap_or(0);
    let last = tape.seen.iter().map(|s| to_s(s.t_ms)).max().unwrap_or(0);
    let width = bin_width(last.max(turn_end).max(1));
    if tape.seen.len() <= MAX_EXACT {
        out.requests = tape
            .seen
            .iter()
            .map(|s| RequestMark {
                t_ms: to_s(s.t_ms),
                lane: lane(s),
                outcome: tape.outcome(s).to_string(),
                fault: s.fault.map(|f| f as usize),
                probe: s.probe,
                canary: s.canary,
            })
            .collect();
        out.requests.sort_by_key(|r| r.t_ms);
    } else {
        let mut counts: BTreeMap<(usize, u64, String, Option<usize>), u64> = BTreeMap::new();
        for s in &tape.seen {
            let k = (
                lane(s),
                to_s(s.t_ms) / width,
                tape.outcome(s).to_string(),
                s.fault.map(|f| f as usize),
            );
            *counts.entry(k).or_default() += 1;
        }
        out.bins = Some(RequestBins {
            width_ms: width,
            counts: counts
                .into_iter()
                .map(|((lane, bin, outcome, fault), n)| BinCount {
                    lane,
                    bin,
                    outcome,
                    fault,
                    n,
                })
                .collect(),
        });
    }
    let provider_of: BTreeMap<&str, &str> = input
        .profiles
        .iter()
        .map(|p| (p.fp.as_str(), p.provider.as_str()))
        .collect();
    super::moves::sequence(tape, &provider_of, &lane, &to_s, &mut out);
    lanes.truncate(MAX_LANES);
    out.turns = input.turns.map(|t| turns(t, width));
    decisions(input, &lanes, &mut out);
    out.warmup = warmup(tape, &lane_of_key, &lanes, input);
    out.lanes = lanes;
    out
}

fn turns(rows: &[TurnRow], width: u64) -> TurnLane {
    let outcome = |t: &TurnRow| match t.outcome {
        Some(o) => o.as_str().to_string(),
        None if t.ok => "answered".into(),
        None => "error".into(),
    };
    let mut lane = TurnLane {
        total: rows.len() as u64,
        ..TurnLane::default()
    };
    if rows.len() <= MAX_TURN_SPANS {
        lane.spans = rows
            .iter()
            .map(|t| TurnSpan {
                line: t.line,
                due_ms: t.at_ms,
                end_ms: t.at_ms.saturating_add(t.lag_ms).saturating_add(t.elapsed_ms),
                outcome: outcome(t),
                ok: t.ok,
            })
            .collect();
        return lane;
    }
    let mut counts: BTreeMap<(u64, String), u64> = BTreeMap::new();
    for t in rows {
        *counts.entry((t.at_ms / width, outcome(t))).or_default() += 1;
    }
    lane.bins = Some(RequestBins {
        width_ms: width,
        counts: counts
            .into_iter()
            .map(|((bin, outcome), n)| BinCount {
                lane: 0,
                bin,
                outcome,
                fault: None,
                n,
            })
            .collect(),
    });
    lane
}

/// `provider/model` → (provider, model).
fn split_target(t: &str) -> (&str, &str) {
    t.split_once('/').unwrap_or(("", t))
}

/// The lane of a model call of `provider` and `model` most recent at or before `t` (scenario
/// ms), else the first such lane.
fn lane_of_target(out: &RequestLanes, lanes: &[RequestLane], target: &str, t: u64) -> Option<usize> {
    let (provider, model) = split_target(target);
    let fits = |l: &RequestLane| {
        l.route == "llm"
            && l.model.as_deref().is_some_and(|m| m == model || m == target)
            && (provider.is_empty() || l.provider.as_deref() == Some(provider))
    };
    let recent = out
        .requests
        .iter()
        .rev()
        .filter(|r| r.t_ms <= t)
        .find(|r| lanes.get(r.lane).is_some_and(fits))
        .map(|r| r.lane);
    recent.or_else(|| lanes.iter().position(fits))
}

fn decisions(input: &LaneInput<'_>, lanes: &[RequestLane], out: &mut RequestLanes) {
    let Some(clock) = input.tape.clock_unix_ms else {
        out.decisions_dropped = input.decisions.len() as u64;
        return;
    };
    let by_hash: BTreeMap<String, &str> = input
        .profiles
        .iter()
        .map(|p| (profile_hash(&p.id), p.id.as_str()))
        .collect();
    let profile_lane = |hash: &Option<String>, model: Option<&str>| {
        let id = *by_hash.get(hash.as_deref()?)?;
        let mine = |l: &&RequestLane| l.profile.as_deref() == Some(id);
        lanes
            .iter()
            .position(|l| mine(&l) && model.is_none_or(|m| l.model.as_deref() == Some(m)))
            .or_else(|| lanes.iter().position(|l| mine(&l)))
    };
    for d in input.decisions {
        let t = d.wall_ms.saturating_sub(clock);
        let (lane, detail, until_ms) = match &d.decision {
            Decision::Failover {
                reason,
                retry_count,
                profile_hash,
                model,
                ..
            } => (
                profile_lane(profile_hash, model.as_deref()),
                join([reason.clone(), retry_count.map(|n| format!("retry {n}"))]),
                None,
            ),
            Decision::ProfileFailureState {
                profile_hash,
                reason,
                cooldown_until_ms,
            } => (
                profile_lane(profile_hash, None),
                reason.clone().unwrap_or_default(),
                cooldown_until_ms.map(|u| u.saturating_sub(clock)),
            ),
            Decision::ModelFallback {
                candidate, reason, ..
            } => (
                candidate
                    .as_deref()
                    .and_then(|c| lane_of_target(out, lanes, c, t)),
                join([candidate.clone(), reason.clone()]),
                None,
            ),
            Decision::SameModelRetry {
                attempt,
                of,
                target,
                reason,
                delay_ms,
            } => (
                lane_of_target(out, lanes, target, t),
                join([
                    Some(format!("{attempt}/{of}")),
                    reason.clone(),
                    Some(format!("delay {:.1} s", *delay_ms as f64 / 1000.0)),
                ]),
                None,
            ),
            Decision::RetryWindowElapsed { target, retries } => (
                lane_of_target(out, lanes, target, t),
                join([retries.map(|n| format!("after {n} retries"))]),
                None,
            ),
            Decision::FallbackChainStopped { reason } => {
                (None, reason.clone().unwrap_or_default(), None)
            }
            Decision::IdleTimeoutBreakerTripped { consecutive, cap } => (
                None,
                join([
                    consecutive.map(|c| format!("consecutive {c}")),
                    cap.map(|c| format!("cap {c}")),
                ]),
                None,
            ),
        };
        if out.decisions.len() >= MAX_DECISIONS {
            out.decisions_dropped += 1;
            continue;
        }
        out.decisions.push(DecisionMark {
            t_ms: input.speed.scenario_ms_u(t),
            lane,
            event: event_name(&d.decision).to_string(),
            detail,
            until_ms: until_ms.map(|u| input.speed.scenario_ms_u(u)),
        });
    }
    out.decisions.sort_by_key(|d| d.t_ms);
}

fn join<const N: usize>(parts: [Option<String>; N]) -> String {
    parts
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" · ")
}

fn warmup(
    tape: &RequestTape,
    lane_of_key: &[Option<usize>],
    lanes: &[RequestLane],
    input: &LaneInput<'_>,
) -> Option<WarmupBand> {
    if tape.warm_total == 0 {
        return None;
    }
    let last = tape.warm.iter().map(|s| s.t_ms).max().unwrap_or(0);
    let before_clock_ms = match (tape.warm_unix_ms, tape.clock_unix_ms) {
        (Some(w), Some(c)) => c.saturating_sub(w).max(last),
        _ => last,
    };
    let profile_of: BTreeMap<&str, &str> = input
        .profiles
        .iter()
        .map(|p| (p.fp.as_str(), p.id.as_str()))
        .collect();
    let name = |s: &Seen| {
        let k = &tape.keys[s.key as usize];
        match lane_of_key.get(s.key as usize).copied().flatten() {
            Some(l) => lanes.get(l).map_or_else(String::new, |l| l.name.clone()),
            None => group_of(k, &profile_of).0.1,
        }
    };
    Some(WarmupBand {
        before_clock_ms,
        total: tape.warm_total,
        requests: tape
            .warm
            .iter()
            .take(MAX_WARMUP_MARKS)
            .map(|s| WarmupMark {
                t_ms: s.t_ms,
                lane: name(s),
                outcome: tape.outcome(s).to_string(),
            })
            .collect(),
    })
}
