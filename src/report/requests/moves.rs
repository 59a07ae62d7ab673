//! The picture's rotation and fallback arrows: read from each turn's model requests by the key
//! figures' one rule (`verdict::turns::changes::move_between`), never across turns or hosts;
//! unknown when no request carried its turn.

use std::collections::BTreeMap;

use super::tape::{LaneKey, RequestTape, Seen};
use super::{MAX_ARROWS, RequestLanes, SequenceMark};
use crate::verdict::turns::changes::{Move, move_between};

/// Rotations and fallbacks read from the model requests of each turn in arrival order (probes
/// and canaries left out), by the key figures' rule (`verdict::turns::changes::move_between`):
/// concurrent turns are never mixed. When model requests came and none carried its turn (a
/// gateway that strips the marker, a recording made before turns), they are unknown: no arrow
/// is drawn and `moves_unread` says so.
pub(super) fn sequence(
    tape: &RequestTape,
    provider_of: &BTreeMap<&str, &str>,
    lane: &dyn Fn(&Seen) -> usize,
    to_s: &dyn Fn(u64) -> u64,
    out: &mut RequestLanes,
) {
    let calls: Vec<&Seen> = tape
        .seen
        .iter()
        .filter(|s| !s.probe && !s.canary)
        .filter(|s| tape.keys.get(s.key as usize).is_some_and(LaneKey::is_llm))
        .collect();
    if !calls.is_empty() && calls.iter().all(|s| s.turn.is_none()) {
        out.moves_unread = true;
        return;
    }
    // (profile, model qualified with its provider) of a request's key.
    let idents: Vec<(Option<&str>, Option<String>)> = tape
        .keys
        .iter()
        .map(|k| {
            let fp = k.profile_fp.as_deref();
            // The profile's provider, else the model's own prefix (as the turns name it).
            let provider = fp.and_then(|fp| provider_of.get(fp).copied());
            let model = k
                .model
                .as_deref()
                .map(|m| crate::wire::model::qualified(m, provider));
            (fp, model)
        })
        .collect();
    let ident = |s: &Seen| {
        idents
            .get(s.key as usize)
            .map_or((None, None), |(p, m)| (*p, m.as_deref()))
    };
    let mark = |prev: &Seen, s: &Seen| SequenceMark {
        from_ms: to_s(prev.t_ms),
        from_lane: lane(prev),
        to_ms: to_s(s.t_ms),
        to_lane: lane(s),
    };
    let mut last_of_turn: BTreeMap<(Option<u16>, u64), &Seen> = BTreeMap::new();
    let mut ordered = calls;
    ordered.sort_by_key(|s| s.t_ms);
    for s in ordered {
        let Some(turn) = s.turn else { continue };
        if let Some(prev) = last_of_turn.insert((s.host, turn), s) {
            match move_between(ident(prev), ident(s)) {
                Some(Move::Rotation) => {
                    out.rotations_total += 1;
                    if out.rotations.len() < MAX_ARROWS {
                        out.rotations.push(mark(prev, s));
                    }
                }
                Some(Move::Fallback) => {
                    out.fallbacks_total += 1;
                    if out.fallbacks.len() < MAX_ARROWS {
                        out.fallbacks.push(mark(prev, s));
                    }
                }
                None => {}
            }
        }
    }
}

