//! [`InProcess`]: the coordinator without a service. Clones share one room (a mutex over the
//! records, leases and cooldowns), so the `Breakers` of several simulated hosts in one process
//! coordinate through it exactly as through Redis; its clock is tokio's (paused in tests), read
//! inside the room like Redis `TIME`. [`InProcess::set_down`] makes every call fail, to rehearse a
//! coordinator outage on paused time. The rules mirror `scripts/*.lua` one for one.

use crate::util::sync::Locked;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::time::Instant;

use super::{
    ChangeArgs, CloseRule, CooldownWrite, CoordError, CoordFuture, Coordinator, HostId, Lease,
    OpenFor, Record, Seed, SharedCooldown,
};
use crate::engine::backoff::open_backoff;
use crate::engine::failover::store::UsageStats;

#[derive(Debug, Clone)]
struct Rec {
    epoch: u64,
    /// (open until, open time of the trip), `None` while closed.
    open: Option<(Instant, Duration)>,
    reopens: u32,
    streak: u32,
    ok: Vec<String>,
    by: String,
}

#[derive(Debug, Default)]
struct Room {
    deps: HashMap<String, Rec>,
    leases: HashMap<String, (String, Instant)>,
    cooldowns: HashMap<String, (UsageStats, Instant)>,
    /// The room's clock origin: (instant, unix ms), for the `usageStats` stamps.
    origin: Option<(Instant, u64)>,
}

/// The in-process coordinator (clones share one room).
#[derive(Debug, Clone, Default)]
pub struct InProcess {
    room: Arc<Mutex<Room>>,
    down: Arc<AtomicBool>,
}

impl InProcess {
    /// An empty room.
    pub fn new() -> Self {
        Self::default()
    }

    /// Switches the room off (every call fails with `Unavailable`) or back on. Switching it back
    /// on keeps the records, like a Redis that was only unreachable; [`InProcess::wipe`] loses
    /// them, like a restarted Redis without persistence.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// Forgets every record, lease and cooldown.
    pub fn wipe(&self) {
        *self.lock() = Room::default();
    }

    fn lock(&self) -> MutexGuard<'_, Room> {
        self.room.locked()
    }

    fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Room, Instant) -> T,
    ) -> CoordFuture<'static, T> {
        let out = if self.down.load(Ordering::SeqCst) {
            Err(CoordError::Unavailable(
                "in-process coordinator is down".into(),
            ))
        } else {
            Ok(f(&mut self.lock(), Instant::now()))
        };
        std::future::ready(out).boxed()
    }
}

fn view(rec: &Rec, now: Instant) -> Record {
    Record {
        epoch: rec.epoch,
        open: rec.open.map(|(until, d)| OpenFor {
            remaining: until.saturating_duration_since(now),
            open_for: d,
        }),
        reopens: rec.reopens,
        streak: rec.streak,
        ok_hosts: rec.ok.clone(),
        by: rec.by.clone(),
    }
}

fn closed(epoch: u64, by: &str) -> Rec {
    Rec {
        epoch,
        open: None,
        reopens: 0,
        streak: 0,
        ok: Vec::new(),
        by: by.to_string(),
    }
}

impl Coordinator for InProcess {
    fn mode(&self) -> &'static str {
        "in_process"
    }

    fn read<'a>(&'a self, deps: &'a [String]) -> CoordFuture<'a, Vec<Option<Record>>> {
        let deps = deps.to_vec();
        self.with(move |room, now| {
            deps.iter()
                .map(|d| room.deps.get(d).map(|r| view(r, now)))
                .collect()
        })
    }

    fn change<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        args: ChangeArgs,
    ) -> CoordFuture<'a, Record> {
        let (dep, host) = (dep.to_string(), host.to_string());
        self.with(move |room, now| {
            let rec = room.deps.entry(dep).or_insert_with(|| closed(0, &host));
            if rec.epoch != args.from_epoch {
                return view(rec, now);
            }
            let reopens = match args.change {
                super::Change::Trip => 0,
                super::Change::Reopen => rec.reopens.saturating_add(1),
            };
            let d = open_backoff(args.base, args.cap, reopens);
            *rec = Rec {
                epoch: rec.epoch + 1,
                open: Some((now + d, d)),
                reopens,
                ..closed(0, &host)
            };
            view(rec, now)
        })
    }

    fn lease<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        epoch: u64,
        ttl: Duration,
    ) -> CoordFuture<'a, Lease> {
        let (dep, value) = (dep.to_string(), format!("{host} {epoch}"));
        self.with(move |room, now| match room.leases.get(&dep) {
            Some((holder, until)) if *until > now => Lease::Held {
                remaining: *until - now,
                holder: holder.clone(),
            },
            _ => {
                room.leases.insert(dep, (value, now + ttl));
                Lease::Granted
            }
        })
    }

    fn probe_ok<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        epoch: u64,
        rule: CloseRule,
    ) -> CoordFuture<'a, Record> {
        let (dep, host) = (dep.to_string(), host.to_string());
        self.with(move |room, now| {
            let rec = room.deps.entry(dep).or_insert_with(|| closed(0, &host));
            let half_open = matches!(rec.open, Some((until, _)) if until <= now);
            if rec.epoch != epoch || !half_open {
                return view(rec, now);
            }
            rec.streak = rec.streak.saturating_add(1);
            if !rec.ok.contains(&host) {
                rec.ok.push(host.clone());
            }
            if rec.streak >= rule.successes && rec.ok.len() >= rule.distinct as usize {
                *rec = closed(rec.epoch + 1, &host);
            }
            view(rec, now)
        })
    }

    fn seed<'a>(&'a self, dep: &'a str, host: &'a HostId, seed: Seed) -> CoordFuture<'a, Record> {
        let (dep, host) = (dep.to_string(), host.to_string());
        self.with(move |room, now| {
            let rec = room.deps.entry(dep).or_insert_with(|| Rec {
                open: seed.open.map(|o| (now + o.remaining, o.open_for)),
                reopens: seed.reopens,
                ..closed(1, &host)
            });
            view(rec, now)
        })
    }

    fn put_cooldown<'a>(
        &'a self,
        profile: &'a str,
        write: &'a CooldownWrite,
    ) -> CoordFuture<'a, Duration> {
        let (profile, write) = (profile.to_string(), write.clone());
        self.with(move |room, now| {
            let until = match room.cooldowns.get(&profile) {
                Some((_, u)) if *u > now + write.cool_for => *u,
                _ => now + write.cool_for,
            };
            let last_failure_at = unix_ms(room, now); // anchors the room's clock first
            let stats = UsageStats {
                cooldown_until: Some(unix_ms(room, until)),
                last_failure_at: Some(last_failure_at),
                error_count: Some(write.error_count),
                failure_counts: write.failure_counts.clone(),
                cooldown_reason: write.reason,
                ..UsageStats::default()
            };
            room.cooldowns.insert(profile, (stats, until));
            until - now
        })
    }

    fn cooldown<'a>(&'a self, profile: &'a str) -> CoordFuture<'a, Option<SharedCooldown>> {
        let profile = profile.to_string();
        self.with(move |room, now| {
            room.cooldowns.retain(|_, (_, until)| *until > now);
            room.cooldowns
                .get(&profile)
                .map(|(stats, until)| SharedCooldown {
                    stats: stats.clone(),
                    remaining: *until - now,
                })
        })
    }
}

/// Unix ms of `at` on the room's clock (anchored to the wall clock once, at the room's first call).
fn unix_ms(room: &mut Room, at: Instant) -> u64 {
    let (base, base_ms) = *room.origin.get_or_insert_with(|| {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (at, super::ms(wall))
    });
    base_ms.saturating_add(super::ms(at.saturating_duration_since(base)))
}
