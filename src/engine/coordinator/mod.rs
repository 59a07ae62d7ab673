//! The fleet coordinator: what several gateway hosts share about each dependency's breaker, behind
//! one trait with two implementations — [`InProcess`] (no service: the `Breakers` of one process,
//! each a host, share it; the reference the Redis one is tested against) and [`RedisCoordinator`]
//! (`redis` crate, tokio, `aio::ConnectionManager`, single-key Lua scripts).
//!
//! A `Breakers` without a coordinator (the default, `Breakers::new`) decides alone, exactly as a
//! single host always has; `Breakers::with_coordinator` attaches one (see
//! `engine/breaker/registry/fleet.rs` for the host side: when it calls, what it adopts, the local
//! fallback). Nothing here is on a closed breaker's hot path: admit and record while closed stay
//! local; only a trip, a half-open probe lease, a probe success and cooldown writes call, and a
//! background follower reads the shared records every few tens of ms.
//!
//! # What is shared, per dependency
//!
//! - **The record** ([`Record`]): closed, or open with an open-until, plus an **epoch** that
//!   moves on every change (trip, re-open, close), the re-open count (open times double fleet-wide)
//!   and the hosts whose probes succeeded in this epoch. A host that sees an epoch other than the
//!   one it follows adopts the record; its own trip is a change *from* the epoch it follows, so
//!   of two hosts tripping together one wins and the other adopts its record.
//! - **The probe lease** ([`Lease`]): `SET NX PX ttl` — at most one half-open probe starts
//!   fleet-wide per probe interval (ttl = the interval plus the prober's jitter).
//! - **Closing** ([`CloseRule`]): `successes` consecutive probe successes from at least `distinct`
//!   distinct hosts (the engine's "2 successes from 2 distinct workers" counts hosts here).
//! - **Profile cooldowns** ([`CooldownWrite`], [`SharedCooldown`]): OpenClaw's `usageStats` shape,
//!   a hash per profile whose TTL ends at `cooldownUntil`.
//!
//! # Time
//!
//! Hosts never compare their own clocks. Every time a host acts on comes back as a *remaining
//! duration* computed by the coordinator's clock (Redis `TIME` inside the scripts, lease `PTTL`s,
//! or the in-process room's tokio clock) at the moment it answered; the host adds it to its own
//! `now` at the answer. A host whose wall clock is seconds off therefore behaves exactly like
//! one whose clock is right.
//!
//! # API for fleet mode
//!
//! Build one coordinator per host process (`RedisCoordinator::new(RedisOptions { url, .. })`, lazy:
//! a down server is not an error until used), attach it with
//! `Breakers::new(..).with_coordinator(Arc::new(c), HostId::new("h3")?, HostClock::default())`,
//! spawn `breakers.clone().run_follower(every, shutdown)`, and let the engine call
//! `Admission::admit_async` / `record_async` (it does). Coordinator errors fall back to the local
//! breaker and are emitted as `CoordinatorError` / `CoordinatorMode` events
//! (`coordinator_errors_total{op}`, `coordinator_mode{mode}`).

pub mod local;
pub mod redis;

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::failover::store::UsageStats;
use super::outcome::Reason;

pub use local::InProcess;
pub use redis::{RedisCoordinator, RedisOptions};

/// A coordinator call's future.
pub type CoordFuture<'a, T> = BoxFuture<'a, Result<T, CoordError>>;

/// Why a coordinator call failed (the host then falls back to its local breaker).
#[derive(Debug, thiserror::Error)]
pub enum CoordError {
    /// The coordinator cannot be reached (the in-process room switched off, a bad URL).
    #[error("coordinator unavailable: {0}")]
    Unavailable(String),
    /// Redis answered with an error or the connection dropped.
    #[error("redis: {0}")]
    Redis(#[from] ::redis::RedisError),
    /// No answer within the call's bound.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// An answer this version cannot read.
    #[error("malformed coordinator reply: {0}")]
    Reply(String),
}

impl CoordError {
    /// A short label for logs and events.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Unavailable(_) => "unavailable",
            Self::Redis(_) => "redis",
            Self::Timeout(_) => "timeout",
            Self::Reply(_) => "reply",
        }
    }
}

/// A host's id: what the lease, the close rule and the records name. 1–64 characters of
/// `A-Z a-z 0-9 . _ -` (it is joined with `,` and spaces in the shared records).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(String);

impl HostId {
    /// Checks and wraps a host id.
    pub fn new(id: &str) -> Result<Self, CoordError> {
        let ok = !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(Self(id.to_string()))
        } else {
            Err(CoordError::Unavailable(format!(
                "host id {id:?}: use 1-64 characters of A-Z a-z 0-9 . _ -"
            )))
        }
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for HostId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The open part of a shared record, relative to the coordinator's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFor {
    /// Open time left when the coordinator answered (zero: half-open).
    pub remaining: Duration,
    /// The open time of the trip that opened it.
    pub open_for: Duration,
}

/// One dependency's shared breaker record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Moves on every change; a host follows one epoch at a time.
    pub epoch: u64,
    /// `None` while closed.
    pub open: Option<OpenFor>,
    /// Re-opens from half-open since the dependency last closed.
    pub reopens: u32,
    /// Consecutive probe successes in this epoch.
    pub streak: u32,
    /// The hosts whose probes succeeded in this epoch, in order of first success.
    pub ok_hosts: Vec<String>,
    /// The host that made the latest change.
    pub by: String,
}

/// A change a host asks for, from the epoch it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Closed → open (open time `base`).
    Trip,
    /// Half-open → open after a failed probe (open time `base × 2^reopens`, capped).
    Reopen,
}

impl Change {
    /// The label (`trip`, `reopen`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Trip => "trip",
            Self::Reopen => "reopen",
        }
    }
}

/// The arguments of a [`Coordinator::change`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeArgs {
    /// What happened.
    pub change: Change,
    /// The epoch the host followed when it happened; another epoch means someone moved first
    /// and the current record is returned unchanged.
    pub from_epoch: u64,
    /// The breaker's `openFor`.
    pub base: Duration,
    /// The breaker's `openForCap`.
    pub cap: Duration,
}

/// The answer to a probe lease request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lease {
    /// This host may send the probe.
    Granted,
    /// Another probe started within the interval; the lease is free again in `remaining`.
    Held {
        /// Time left on the lease when the coordinator answered.
        remaining: Duration,
        /// The lease's value (`host epoch`).
        holder: String,
    },
}

/// The fleet's closing rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CloseRule {
    /// Consecutive probe successes needed.
    pub successes: u32,
    /// Distinct hosts they must come from.
    pub distinct: u32,
}

/// A host's local state, written when a coordinator that lost its data (a restarted Redis
/// without persistence) is seen again and has no record of the dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seed {
    /// `None` when closed.
    pub open: Option<OpenFor>,
    /// The host's re-open count.
    pub reopens: u32,
}

/// A cooldown a host applied to an auth profile, to share.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CooldownWrite {
    /// How long the profile cools from now (coordinator time); an existing longer window is kept.
    pub cool_for: Duration,
    /// The failure reason (`cooldownReason`).
    pub reason: Option<Reason>,
    /// `errorCount`.
    pub error_count: u32,
    /// `failureCounts`.
    pub failure_counts: BTreeMap<String, u32>,
}

/// A shared cooldown as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedCooldown {
    /// The profile's `usageStats` entry; `cooldownUntil` and `lastFailureAt` are coordinator
    /// time (unix ms), to show, never to compare with a host's clock.
    pub stats: UsageStats,
    /// Cooldown left when the coordinator answered.
    pub remaining: Duration,
}

/// A fleet cooldown of a profile as a host follows it: until an instant on that host's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetCooldown {
    /// The profile is skipped until then.
    pub until: tokio::time::Instant,
    /// Why it cools (`cooldownReason`), when the writer said.
    pub reason: Option<Reason>,
}

/// What the hosts of a fleet share. Every call is bounded in time by the implementation.
pub trait Coordinator: Send + Sync + std::fmt::Debug {
    /// The `coordinator_mode` label while this coordinator answers (`redis`, `in_process`).
    fn mode(&self) -> &'static str;

    /// The current records of `deps` (`None`: no record, i.e. closed and never changed).
    fn read<'a>(&'a self, deps: &'a [String]) -> CoordFuture<'a, Vec<Option<Record>>>;

    /// Applies `args` to `dep`'s record if it is still at `args.from_epoch`; returns the record.
    fn change<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        args: ChangeArgs,
    ) -> CoordFuture<'a, Record>;

    /// Takes `dep`'s probe lease for `ttl` if nobody holds it (`SET NX PX`).
    fn lease<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        epoch: u64,
        ttl: Duration,
    ) -> CoordFuture<'a, Lease>;

    /// Counts `host`'s probe success in `epoch` (ignored when the record moved on or is not
    /// half-open) and closes the record when `rule` is met; returns the record.
    fn probe_ok<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        epoch: u64,
        rule: CloseRule,
    ) -> CoordFuture<'a, Record>;

    /// Creates `dep`'s record from `seed` unless one exists; returns the record.
    fn seed<'a>(&'a self, dep: &'a str, host: &'a HostId, seed: Seed) -> CoordFuture<'a, Record>;

    /// Shares a profile cooldown; returns the cooldown left (a longer existing one is kept).
    fn put_cooldown<'a>(
        &'a self,
        profile: &'a str,
        write: &'a CooldownWrite,
    ) -> CoordFuture<'a, Duration>;

    /// A profile's shared cooldown, if one is running.
    fn cooldown<'a>(&'a self, profile: &'a str) -> CoordFuture<'a, Option<SharedCooldown>>;
}

/// `d` in whole ms (saturating).
pub(crate) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_ids_are_checked() {
        assert!(HostId::new("h-01.fleet_a").is_ok());
        for bad in ["", "a,b", "a b", &"x".repeat(65)] {
            assert!(HostId::new(bad).is_err(), "{bad:?}");
        }
    }
}
