//! What a system's turns say about its routing, read from the upstream's record alike for every
//! kind of system (the key figures' rotations, fallbacks and cooldowns, `rehearsal::figures`):
//!
//! - a **fallback** is a change of model between two consecutive model requests of one turn
//!   (models compared qualified with their provider: `openai/gpt-4o` and `azure/gpt-4o` differ);
//! - a **rotation** is a change of profile between two consecutive model requests of one turn
//!   naming the same model. A move to another model on another key is one fallback, not also a
//!   rotation;
//! - a **cooldown** of a profile is the quiet period after one of its model requests failed,
//!   up to its next model request (or the record's end), counted when at least
//!   [`min_turns_elsewhere`] turns lay wholly inside that period and sent model requests, none
//!   on that profile: turns that could have used it went elsewhere. The bar is the number of
//!   profiles its provider sent from, at least two, so a round robin that merely passed the
//!   profile by is no cooldown. Those turns are its witness (`turns_elsewhere`).
//!
//! Turns are never mixed: concurrent turns interleave in the one arrival order, but each change
//! is read inside one turn.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{TurnRequest, TurnRow};
use crate::upstream::RequestRoute;

/// One change of profile or model inside a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The turn.
    pub turn: u64,
    /// The request after the change arrived, scenario ms.
    pub t_ms: u64,
    /// The provider moved away from (the earlier request's).
    pub provider: Option<String>,
    /// The profile before and after.
    pub from_profile: Option<String>,
    pub to_profile: Option<String>,
    /// The model before and after (qualified).
    pub from_model: Option<String>,
    pub to_model: Option<String>,
}

/// A profile's quiet period after a failure while turns went elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cooldown {
    /// The profile (id, or the key's fingerprint).
    pub profile: String,
    /// Its provider.
    pub provider: Option<String>,
    /// Its failed request's arrival, scenario ms.
    pub from_ms: u64,
    /// Its next request's arrival (`None`: none until the record's end).
    pub until_ms: Option<u64>,
    /// Turns inside the period that sent model requests, none on the profile.
    pub turns_elsewhere: u64,
}

/// Every rotation, fallback and cooldown of a record's turns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Changes of profile within a model, in turn order.
    pub rotations: Vec<Change>,
    /// Changes of model, in turn order.
    pub fallbacks: Vec<Change>,
    /// Cooldowns, by profile then time.
    pub cooldowns: Vec<Cooldown>,
}

fn model_requests(row: &TurnRow) -> impl Iterator<Item = &TurnRequest> {
    row.requests.iter().filter(|q| q.route == RequestRoute::Llm)
}

/// How many turns elsewhere make a quiet period a cooldown for a provider that sent from
/// `profiles` profiles.
fn min_turns_elsewhere(profiles: usize) -> u64 {
    profiles.max(2) as u64
}

/// The rotations, fallbacks and cooldowns of `rows` (one arm's turns).
pub fn changes(rows: &[TurnRow]) -> Changes {
    let mut out = Changes::default();
    for row in rows {
        let reqs: Vec<&TurnRequest> = model_requests(row).collect();
        for w in reqs.windows(2) {
            let (a, b) = (w[0], w[1]);
            let change = || Change {
                turn: row.turn,
                t_ms: b.t_ms,
                provider: a.provider.clone(),
                from_profile: a.profile.clone(),
                to_profile: b.profile.clone(),
                from_model: a.qualified_model(),
                to_model: b.qualified_model(),
            };
            let (ma, mb) = (a.qualified_model(), b.qualified_model());
            if ma.is_some() && mb.is_some() && ma != mb {
                out.fallbacks.push(change());
            } else if a.profile.is_some() && b.profile.is_some() && a.profile != b.profile {
                out.rotations.push(change());
            }
        }
    }
    out.cooldowns = cooldowns(rows);
    out
}

fn cooldowns(rows: &[TurnRow]) -> Vec<Cooldown> {
    // Every profile's model requests in time order, and the profiles each provider sent from.
    let mut of_profile: BTreeMap<&str, Vec<&TurnRequest>> = BTreeMap::new();
    let mut profiles_of: BTreeMap<Option<&str>, BTreeSet<&str>> = BTreeMap::new();
    for row in rows {
        for q in model_requests(row) {
            if let Some(p) = q.profile.as_deref() {
                of_profile.entry(p).or_default().push(q);
                profiles_of.entry(q.provider.as_deref()).or_default().insert(p);
            }
        }
    }
    // Each turn's span and the profiles it used (turns with no model request do not count).
    let mut spans: Vec<(u64, u64, BTreeSet<&str>)> = rows
        .iter()
        .filter_map(|row| {
            let qs: Vec<&TurnRequest> = model_requests(row).collect();
            let first = qs.iter().map(|q| q.t_ms).min()?;
            let last = qs.iter().map(|q| q.t_ms).max()?;
            let used = qs.iter().filter_map(|q| q.profile.as_deref()).collect();
            Some((first, last, used))
        })
        .collect();
    spans.sort_by_key(|s| s.0);
    let mut out = Vec::new();
    for (profile, mut reqs) in of_profile {
        reqs.sort_by_key(|q| q.t_ms);
        let provider = reqs.first().and_then(|q| q.provider.clone());
        let bar = min_turns_elsewhere(
            profiles_of
                .get(&provider.as_deref())
                .map_or(1, BTreeSet::len),
        );
        for (i, q) in reqs.iter().enumerate() {
            if q.answered() {
                continue;
            }
            let until = reqs.get(i + 1).map(|n| n.t_ms);
            // The turns that began after the failure and before the next request (each once).
            let from = spans.partition_point(|s| s.0 <= q.t_ms);
            let elsewhere = spans[from..]
                .iter()
                .take_while(|(first, _, _)| until.is_none_or(|u| *first < u))
                .filter(|(_, last, used)| until.is_none_or(|u| *last < u) && !used.contains(profile))
                .count() as u64;
            if elsewhere >= bar {
                out.push(Cooldown {
                    profile: profile.to_string(),
                    provider: provider.clone(),
                    from_ms: q.t_ms,
                    until_ms: until,
                    turns_elsewhere: elsewhere,
                });
            }
        }
    }
    out
}
