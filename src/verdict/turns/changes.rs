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
    /// The first request of the last of those turns, scenario ms: the profile was still
    /// passed by then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_elsewhere_ms: Option<u64>,
    /// The wait the failed request's `Retry-After` told the client, scenario ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl Cooldown {
    /// Its length: from the failure to the next request, scenario ms (`None`: it had not
    /// ended by the record's end).
    pub fn length_ms(&self) -> Option<u64> {
        self.until_ms.map(|u| u.saturating_sub(self.from_ms))
    }
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

/// A move between two consecutive model requests of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// Another model (qualified with its provider).
    Fallback,
    /// Another profile, the same model.
    Rotation,
}

/// What the move from request `a` to request `b` of one turn is, each given as (its profile,
/// its model qualified with its provider): the one rule the key figures and the picture's
/// arrows share (the module doc). A move to another model on another key is a fallback only.
pub fn move_between(
    a: (Option<&str>, Option<&str>),
    b: (Option<&str>, Option<&str>),
) -> Option<Move> {
    match (a, b) {
        ((_, Some(ma)), (_, Some(mb))) if ma != mb => Some(Move::Fallback),
        ((Some(pa), _), (Some(pb), _)) if pa != pb => Some(Move::Rotation),
        _ => None,
    }
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
            match move_between(
                (a.profile.as_deref(), ma.as_deref()),
                (b.profile.as_deref(), mb.as_deref()),
            ) {
                Some(Move::Fallback) => out.fallbacks.push(change()),
                Some(Move::Rotation) => out.rotations.push(change()),
                None => {}
            }
        }
    }
    out.cooldowns = cooldowns(rows);
    out
}

/// One turn's span (its first and last model request) and its model requests.
type Span<'a> = (u64, u64, Vec<&'a TurnRequest>);

fn spans(rows: &[TurnRow]) -> Vec<Span<'_>> {
    // Turns with no model request do not count.
    let mut spans: Vec<Span<'_>> = rows
        .iter()
        .filter_map(|row| {
            let qs: Vec<&TurnRequest> = model_requests(row).collect();
            let first = qs.iter().map(|q| q.t_ms).min()?;
            let last = qs.iter().map(|q| q.t_ms).max()?;
            Some((first, last, qs))
        })
        .collect();
    spans.sort_by_key(|s| s.0);
    spans
}

/// The profiles each provider sent model requests from.
fn profiles_of(rows: &[TurnRow]) -> BTreeMap<Option<&str>, BTreeSet<&str>> {
    let mut out: BTreeMap<Option<&str>, BTreeSet<&str>> = BTreeMap::new();
    for q in rows.iter().flat_map(model_requests) {
        if let Some(p) = q.profile.as_deref() {
            out.entry(q.provider.as_deref()).or_default().insert(p);
        }
    }
    out
}

fn cooldowns(rows: &[TurnRow]) -> Vec<Cooldown> {
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for q in rows.iter().flat_map(model_requests) {
        if let Some(p) = q.profile.as_deref() {
            names.insert(p);
        }
    }
    names
        .into_iter()
        .flat_map(|p| cooldowns_of(rows, &|q: &TurnRequest| q.profile.as_deref() == Some(p)))
        .collect()
}

/// The cooldowns of one subject: the model requests `is_subject` picks (a profile's, or a
/// model's on a profile), by the same rule as every profile's (see the module's opening): the
/// bar is the number of profiles the subject's provider sent from, and a turn elsewhere sent
/// no request of the subject.
pub fn cooldowns_of(rows: &[TurnRow], is_subject: &dyn Fn(&TurnRequest) -> bool) -> Vec<Cooldown> {
    let mut reqs: Vec<&TurnRequest> = rows
        .iter()
        .flat_map(model_requests)
        .filter(|q| is_subject(q))
        .collect();
    reqs.sort_by_key(|q| q.t_ms);
    let Some(head) = reqs.first() else {
        return Vec::new();
    };
    let profile = head.profile.clone().unwrap_or_default();
    let provider = head.provider.clone();
    let bar = min_turns_elsewhere(
        profiles_of(rows)
            .get(&provider.as_deref())
            .map_or(1, BTreeSet::len),
    );
    let spans = spans(rows);
    let mut out = Vec::new();
    for (i, q) in reqs.iter().enumerate() {
        if q.answered() {
            continue;
        }
        let until = reqs.get(i + 1).map(|n| n.t_ms);
        // The turns that began after the failure and before the next request (each once).
        let from = spans.partition_point(|s| s.0 <= q.t_ms);
        let elsewhere: Vec<u64> = spans[from..]
            .iter()
            .take_while(|(first, _, _)| until.is_none_or(|u| *first < u))
            .filter(|(_, last, used)| {
                until.is_none_or(|u| *last < u) && !used.iter().any(|q| is_subject(q))
            })
            .map(|s| s.0)
            .collect();
        if elsewhere.len() as u64 >= bar {
            out.push(Cooldown {
                profile: profile.clone(),
                provider: provider.clone(),
                from_ms: q.t_ms,
                until_ms: until,
                turns_elsewhere: elsewhere.len() as u64,
                last_elsewhere_ms: elsewhere.last().copied(),
                retry_after_ms: q.retry_after_ms,
            });
        }
    }
    out
}
