//! What the one recorder's record shows an arm's section besides its rows: the per-turn rows
//! (keys named by the scenario's profiles) and the picture's request lanes.

use crate::rehearsal::observation::Observation;
use crate::rehearsal::plan::ScenarioPlan;

/// The turns of `o` in the upstream's record, keys named by the scenario's profiles.
pub(super) fn turns_of(plan: &ScenarioPlan, o: &Observation) -> crate::verdict::turns::TurnsPart {
    let names = turn_names(plan);
    let mut part = crate::verdict::turns::rows(&o.upstream.turns.records, &names, o.speed);
    part.dropped_requests = o.upstream.turns.dropped;
    // A gateway's own account of each turn (its response headers), beside the record's.
    if let Some(g) = &o.gateway {
        for r in part.rows.iter_mut().filter(|r| r.host.is_none()) {
            r.said = g
                .turns
                .iter()
                .find(|t| t.line as u64 == r.turn)
                .and_then(|t| t.said.clone());
        }
    }
    part
}

/// The scenario's profiles by key fingerprint: their ids and providers.
fn turn_names(plan: &ScenarioPlan) -> crate::verdict::turns::Names {
    let mut names = crate::verdict::turns::Names::default();
    for p in &plan.checked.file.profile {
        let fp = crate::util::fingerprint(p.credential());
        names.profile_of_fp.insert(fp.clone(), p.id.clone());
        names.provider_of_fp.insert(fp, p.provider.clone());
    }
    names
}

/// The picture's request lanes of `o`, from the recorder's tape (a gateway's turns and log
/// decisions with them). An implicit profile's token is its id, so it is named too.
pub(super) fn request_lanes(plan: &ScenarioPlan, o: &Observation) -> crate::report::requests::RequestLanes {
    let lane = |p: &crate::engine::Profile| crate::report::requests::LaneProfile {
        fp: crate::util::fingerprint(p.credential()),
        id: p.id.clone(),
        provider: p.provider.clone(),
    };
    let mut profiles: Vec<_> = plan.checked.file.profile.iter().map(lane).collect();
    // A provider's implicit `PROVIDER:default` profile, where its token shows up.
    for k in o.upstream.tape.keys.iter().filter(|k| k.is_llm()) {
        let implicit = lane(&crate::engine::Profile::implicit(k.provider()));
        if k.profile_fp.as_deref() == Some(implicit.fp.as_str())
            && !profiles.iter().any(|p| p.fp == implicit.fp)
        {
            profiles.push(implicit);
        }
    }
    let g = o.gateway.as_ref();
    crate::report::requests::build(&crate::report::requests::LaneInput {
        tape: &o.upstream.tape,
        speed: o.speed,
        profiles: &profiles,
        turns: g.map(|g| &g.turns[..]),
        decisions: g.map_or(&[][..], |g| &g.decisions[..]),
    })
}

