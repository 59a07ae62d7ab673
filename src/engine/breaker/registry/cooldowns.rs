//! Shared auth-profile cooldowns, the host side: a coordinated `Breakers` shares every cooldown
//! its engine writes ([`Admission::publish_cooldown`](crate::engine::admission::Admission::publish_cooldown) → [`share`]) and follows
//! the fleet's cooldowns of every profile its engine is configured with
//! ([`Admission::follow_profiles`](crate::engine::admission::Admission::follow_profiles)) or has looked at, reading them in the
//! follower's round ([`follow`]) into a [`Mirror`]. Failover reads the mirror
//! ([`Admission::fleet_cooldown`](crate::engine::admission::Admission::fleet_cooldown)), so picking a profile never waits for the coordinator: a
//! cooldown written on one host keeps the others off that profile within one follower round.
//!
//! Times: the coordinator answers with the cooldown *left*; this host adds it to its own `now`
//! at the answer (as for the breaker records), so a skewed wall clock changes nothing. A shared
//! cooldown is never shortened (the coordinator keeps the longer window) and ends by itself at
//! `cooldownUntil`; a success on one host clears that host's own store entry, not the fleet's.
//! While the coordinator is down the mirror's entries still run out at their instants and the
//! engine's own store applies as always; cooldowns this host writes meanwhile are held and
//! shared, with the time they have left, in the first follower round after it answers again.

use crate::util::sync::Locked;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use futures_util::future::try_join_all;
use tokio::time::Instant;

use super::link::Link;
use super::state::Core;
use crate::engine::coordinator::{CooldownWrite, FleetCooldown, SharedCooldown};
use crate::engine::events::EventKind;
use crate::engine::outcome::Reason;

/// The fleet's running cooldowns as this host last read them, and the profiles it follows.
#[derive(Debug, Default)]
pub(crate) struct Mirror(Mutex<MirrorState>);

#[derive(Debug, Default)]
struct MirrorState {
    /// Every profile the engine asked about, in order of first sight.
    followed: Vec<String>,
    running: BTreeMap<String, Running>,
    /// Cooldowns this host wrote while the coordinator did not answer: shared when it is back
    /// (until then, on this host's clock).
    pending: BTreeMap<String, (Instant, CooldownWrite)>,
}

/// One profile's fleet cooldown on this host's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Running {
    until: Instant,
    reason: Option<Reason>,
    /// When the call that set it was issued: an answer to an older call never overwrites it.
    issued: Instant,
}

/// What one answer does to a profile's mirror entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Merge {
    /// Keep what is there (an older answer, or the same cooldown).
    Keep,
    /// Set this entry; `adopted` when this host did not know the profile was cooling at `now`.
    Set { entry: Running, adopted: bool },
    /// The cooldown is over fleet-wide (or the coordinator lost it): forget it.
    Clear,
}

/// The pure merge of an answer `read` (a cooldown running until an instant, or none) issued at
/// `issued`, into the current entry `cur`, at `now` (this host's clock).
fn merge(
    cur: Option<&Running>,
    read: Option<(Instant, Option<Reason>)>,
    issued: Instant,
    now: Instant,
) -> Merge {
    if cur.is_some_and(|c| issued < c.issued) {
        return Merge::Keep;
    }
    let Some((until, reason)) = read else {
        return if cur.is_some() {
            Merge::Clear
        } else {
            Merge::Keep
        };
    };
    if until <= now {
        return if cur.is_some() {
            Merge::Clear
        } else {
            Merge::Keep
        };
    }
    let known = cur.filter(|c| c.until > now);
    let adopted = known.is_none();
    let entry = Running {
        until,
        reason,
        issued,
    };
    Merge::Set { entry, adopted }
}

impl Mirror {
    fn lock(&self) -> MutexGuard<'_, MirrorState> {
        self.0.locked()
    }

    /// Follows `profiles` (those not followed yet, in order).
    pub(crate) fn follow(&self, profiles: &[String]) {
        let mut m = self.lock();
        for p in profiles {
            if !m.followed.contains(p) {
                m.followed.push(p.clone());
            }
        }
    }

    /// `profile`'s running fleet cooldown at `now`; starts following the profile.
    pub(crate) fn get(&self, profile: &str, now: Instant) -> Option<FleetCooldown> {
        let mut m = self.lock();
        if !m.followed.iter().any(|p| p == profile) {
            m.followed.push(profile.to_string());
        }
        m.running
            .get(profile)
            .filter(|r| r.until > now)
            .map(|r| FleetCooldown {
                until: r.until,
                reason: r.reason,
            })
    }

    fn followed(&self) -> Vec<String> {
        self.lock().followed.clone()
    }

    /// Keeps a cooldown to share later (the longer of two for one profile).
    fn hold(&self, profile: &str, until: Instant, write: &CooldownWrite) {
        let mut m = self.lock();
        let keep = m.pending.get(profile).is_some_and(|(u, _)| *u >= until);
        if !keep {
            m.pending
                .insert(profile.to_string(), (until, write.clone()));
        }
    }

    /// The held cooldowns still running at `now`, each with the time it has left (taken out).
    fn take_held(&self, now: Instant) -> Vec<(String, CooldownWrite)> {
        let held = std::mem::take(&mut self.lock().pending);
        held.into_iter()
            .filter(|(_, (until, _))| *until > now)
            .map(|(p, (until, w))| {
                let left = until.saturating_duration_since(now);
                (
                    p,
                    CooldownWrite {
                        cool_for: left,
                        ..w
                    },
                )
            })
            .collect()
    }

    /// Applies one answer; true when it told this host of a cooldown it did not know.
    fn apply(
        &self,
        profile: &str,
        read: Option<(Instant, Option<Reason>)>,
        issued: Instant,
        now: Instant,
    ) -> bool {
        let mut m = self.lock();
        match merge(m.running.get(profile), read, issued, now) {
            Merge::Keep => false,
            Merge::Clear => {
                m.running.remove(profile);
                false
            }
            Merge::Set { entry, adopted } => {
                m.running.insert(profile.to_string(), entry);
                adopted
            }
        }
    }
}

/// Shares a cooldown of `profile` through the coordinator and mirrors it; the cooldown left
/// (a longer running one is kept), or `None` fallen back or on an error (counted; the
/// engine's own cooldown still applies).
pub(crate) async fn share(
    core: &Core,
    link: &Link,
    mirror: &Mirror,
    profile: &str,
    write: &CooldownWrite,
) -> Option<Duration> {
    let now = link.clock.now();
    let issued = now;
    if !link.is_up() {
        // Fallen back: shared when the coordinator is back (`follow`).
        mirror.hold(profile, now + write.cool_for, write);
        return None;
    }
    let started = Instant::now();
    match link.c.put_cooldown(profile, write).await {
        Ok(left) => {
            let at = now + started.elapsed();
            mirror.apply(profile, Some((at + left, write.reason)), issued, at);
            Some(left)
        }
        Err(e) => {
            mirror.hold(profile, now + write.cool_for, write);
            link.fail(core, "cooldown", &e, now + started.elapsed());
            None
        }
    }
}

/// `profile`'s shared cooldown read straight from the coordinator, and the instant it ends on
/// this host's clock, if running (the follower's mirror is what failover reads).
pub(crate) async fn read(
    core: &Core,
    link: &Link,
    profile: &str,
) -> Option<(SharedCooldown, Instant)> {
    if !link.is_up() {
        return None;
    }
    let (issued, now) = (Instant::now(), link.clock.now());
    match link.c.cooldown(profile).await {
        Ok(c) => c.map(|c| {
            let until = now + issued.elapsed() + c.remaining;
            (c, until)
        }),
        Err(e) => {
            link.fail(core, "cooldown", &e, now + issued.elapsed());
            None
        }
    }
}

/// The follower's cooldown half, once the coordinator answers: shares the cooldowns this host
/// wrote while it did not, with the time each has left (a rejoin), then reads the followed
/// profiles' cooldowns and mirrors them; a cooldown another host started is emitted once as
/// `CooldownAdopted`.
pub(crate) async fn follow(core: &Core, link: &Link, mirror: &Mirror) {
    share_held(core, link, mirror).await;
    follow_running(core, link, mirror).await;
}

async fn share_held(core: &Core, link: &Link, mirror: &Mirror) {
    for (profile, write) in mirror.take_held(link.clock.now()) {
        if share(core, link, mirror, &profile, &write).await.is_none() {
            return; // held again, and the host is back to local
        }
    }
}

async fn follow_running(core: &Core, link: &Link, mirror: &Mirror) {
    let profiles = mirror.followed();
    if profiles.is_empty() {
        return;
    }
    let now = link.clock.now();
    let issued = now;
    let started = Instant::now();
    let reads = try_join_all(profiles.iter().map(|p| link.c.cooldown(p))).await;
    let at = now + started.elapsed();
    let reads = match reads {
        Ok(r) => r,
        Err(e) => return link.fail(core, "cooldown", &e, at),
    };
    for (profile, read) in profiles.iter().zip(reads) {
        let read = read.map(|c| (at + c.remaining, c.stats.cooldown_reason));
        let remaining = read.map(|(until, _)| until.saturating_duration_since(at));
        if mirror.apply(profile, read, issued, at) {
            let reason = read.and_then(|(_, r)| r);
            let remaining_ms = remaining.map_or(0, crate::engine::coordinator::ms);
            let kind = EventKind::CooldownAdopted {
                profile: profile.clone(),
                reason,
                remaining_ms,
            };
            link.event(core, at, kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> Instant {
        Instant::now()
    }

    #[test]
    fn a_new_cooldown_is_adopted_once_and_extensions_are_silent() {
        let now = t0();
        let s = Duration::from_secs;
        let read = Some((now + s(10), Some(Reason::RateLimit)));
        let Merge::Set { entry, adopted } = merge(None, read, now, now) else {
            panic!("not set");
        };
        assert!(adopted);
        let later = now + s(1);
        let longer = Some((now + s(20), Some(Reason::RateLimit)));
        assert_eq!(
            merge(Some(&entry), longer, later, later),
            Merge::Set {
                entry: Running {
                    until: now + s(20),
                    reason: Some(Reason::RateLimit),
                    issued: later
                },
                adopted: false
            }
        );
    }

    #[test]
    fn older_answers_never_overwrite_and_ended_cooldowns_clear() {
        let now = t0();
        let s = Duration::from_secs;
        let cur = Running {
            until: now + s(10),
            reason: None,
            issued: now + s(2),
        };
        // Issued before the entry was set (a read racing this host's own write): ignored.
        assert_eq!(merge(Some(&cur), None, now + s(1), now + s(3)), Merge::Keep);
        // Issued after: the fleet has no cooldown any more.
        assert_eq!(
            merge(Some(&cur), None, now + s(3), now + s(3)),
            Merge::Clear
        );
        // An answer that has already run out on this host's clock.
        let past = Some((now + s(3), None));
        assert_eq!(
            merge(Some(&cur), past, now + s(4), now + s(4)),
            Merge::Clear
        );
        assert_eq!(merge(None, past, now + s(4), now + s(4)), Merge::Keep);
        // A cooldown this host knew had ended is new again.
        let again = Some((now + s(30), None));
        let at = now + s(11);
        assert!(matches!(
            merge(Some(&cur), again, at, at),
            Merge::Set { adopted: true, .. }
        ));
    }

    #[test]
    fn the_mirror_follows_what_it_is_asked_about() {
        let m = Mirror::default();
        let now = t0();
        assert_eq!(m.get("p1", now), None);
        assert_eq!(m.get("p2", now), None);
        assert_eq!(m.get("p1", now), None);
        assert_eq!(m.followed(), ["p1", "p2"]);
        let until = now + Duration::from_secs(5);
        assert!(m.apply("p2", Some((until, Some(Reason::Timeout))), now, now));
        assert_eq!(
            m.get("p2", now),
            Some(FleetCooldown {
                until,
                reason: Some(Reason::Timeout)
            })
        );
        assert_eq!(m.get("p2", until), None, "over at its instant");
    }
}
