//! [`RedisCoordinator`]: the coordinator through Redis. One `aio::ConnectionManager` per host (it
//! reconnects in the background and fails in-flight commands when the connection drops), every
//! call bounded by [`RedisOptions::timeout`]. Breaker records are one hash per dependency
//! (`PREFIX:breaker:DEP`) changed only by single-key Lua scripts (`scripts/*.lua`, run through
//! `redis::Script`, which reloads them after a Redis restart), so a state, its epoch and its
//! set of successful hosts move together; the probe lease is `SET PREFIX:probe:DEP "HOST EPOCH"
//! NX PX ttl` (with a `PTTL` in the same round trip); profile cooldowns are a `usageStats` hash
//! per profile (`PREFIX:usage:PROFILE`) expiring at `cooldownUntil`.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::try_join_all;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{RedisResult, Script};

use super::{
    Change, ChangeArgs, CloseRule, CooldownWrite, CoordError, CoordFuture, Coordinator, HostId,
    Lease, OpenFor, Record, Seed, SharedCooldown, ms,
};
use crate::engine::failover::store::UsageStats;

const COMMON: &str = include_str!("scripts/common.lua");

/// Where and how to reach Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisOptions {
    /// `redis://HOST:PORT[/DB]`.
    pub url: String,
    /// Key prefix (several rehearsals can share one Redis).
    pub prefix: String,
    /// Bound of every call (connecting included); past it the host falls back to local.
    pub timeout: Duration,
}

impl Default for RedisOptions {
    fn default() -> Self {
        Self {
            url: "redis://127.0.0.1:6379".into(),
            prefix: "rehearse".into(),
            timeout: Duration::from_millis(100),
        }
    }
}

#[derive(Debug)]
struct Scripts {
    read: Script,
    change: Script,
    probe_ok: Script,
    seed: Script,
    cooldown_put: Script,
    cooldown_get: Script,
}

fn script(body: &str) -> Script {
    Script::new(&format!("{COMMON}\n{body}"))
}

/// The Redis coordinator of one host.
pub struct RedisCoordinator {
    conn: ConnectionManager,
    opts: RedisOptions,
    scripts: Scripts,
}

impl std::fmt::Debug for RedisCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisCoordinator")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl RedisCoordinator {
    /// A coordinator for `opts.url`. Connects lazily: only a malformed URL fails here; an
    /// unreachable server fails the calls (and the host falls back). Needs a tokio runtime.
    pub fn new(opts: RedisOptions) -> Result<Self, CoordError> {
        let client = redis::Client::open(opts.url.as_str())?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(opts.timeout))
            .set_response_timeout(Some(opts.timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(10))
            .set_max_delay(opts.timeout);
        let conn = ConnectionManager::new_lazy_with_config(client, config)?;
        Ok(Self {
            conn,
            opts,
            scripts: Scripts {
                read: script(include_str!("scripts/read.lua")),
                change: script(include_str!("scripts/change.lua")),
                probe_ok: script(include_str!("scripts/probe_ok.lua")),
                seed: script(include_str!("scripts/seed.lua")),
                cooldown_put: script(include_str!("scripts/cooldown_put.lua")),
                cooldown_get: script(include_str!("scripts/cooldown_get.lua")),
            },
        })
    }

    /// The options in use.
    pub fn options(&self) -> &RedisOptions {
        &self.opts
    }

    fn key(&self, kind: &str, name: &str) -> String {
        format!("{}:{kind}:{name}", self.opts.prefix)
    }

    async fn bounded<T>(&self, f: impl Future<Output = RedisResult<T>>) -> Result<T, CoordError> {
        match tokio::time::timeout(self.opts.timeout, f).await {
            Ok(r) => r.map_err(CoordError::from),
            Err(_) => Err(CoordError::Timeout(self.opts.timeout)),
        }
    }

    async fn record(&self, s: &Script, dep: &str, args: &[String]) -> Result<Record, CoordError> {
        let mut conn = self.conn.clone();
        let mut inv = s.key(self.key("breaker", dep));
        for a in args {
            inv.arg(a);
        }
        let raw: Option<Vec<String>> = self.bounded(inv.invoke_async(&mut conn)).await?;
        raw.map(parse_record)
            .transpose()?
            .ok_or_else(|| CoordError::Reply(format!("no record for {dep} after a write")))
    }
}

/// Connects to the Redis at `url` and sends `PING` (credentials and database in the URL are
/// used as the hosts use them), all within `within`: `Ok` when it answered `PONG`. What a run
/// checks before it hands `url` to its hosts, whose own connections are lazy (a Redis that is
/// not there would only show as every host falling back to its local breakers).
pub async fn ping(url: &str, within: Duration) -> Result<(), CoordError> {
    let client = redis::Client::open(url)?;
    let answer = tokio::time::timeout(within, async {
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    })
    .await
    .map_err(|_| CoordError::Timeout(within))??;
    if answer == "PONG" {
        Ok(())
    } else {
        Err(CoordError::Reply(format!("PING answered {answer:?}")))
    }
}

/// `{epoch, state, remaining_ms, open_for_ms, reopens, streak, ok_hosts, by}` → [`Record`].
fn parse_record(v: Vec<String>) -> Result<Record, CoordError> {
    let bad = || CoordError::Reply(format!("breaker record {v:?}"));
    let [epoch, state, remaining, open_for, reopens, streak, ok, by] =
        <[String; 8]>::try_from(v.clone()).map_err(|_| bad())?;
    let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
    let open = match state.as_str() {
        "closed" => None,
        "open" => Some(OpenFor {
            remaining: Duration::from_millis(num(&remaining)?),
            open_for: Duration::from_millis(num(&open_for)?),
        }),
        _ => return Err(bad()),
    };
    Ok(Record {
        epoch: num(&epoch)?,
        open,
        reopens: u32::try_from(num(&reopens)?).unwrap_or(u32::MAX),
        streak: u32::try_from(num(&streak)?).unwrap_or(u32::MAX),
        ok_hosts: ok
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        by,
    })
}

/// `{ms_left, field, value, ...}` → [`SharedCooldown`].
fn parse_cooldown(v: Vec<String>) -> Result<SharedCooldown, CoordError> {
    let bad = |what: &str| CoordError::Reply(format!("usageStats {what}: {v:?}"));
    let (left, pairs) = v.split_first().ok_or_else(|| bad("empty"))?;
    let left: u64 = left.parse().map_err(|_| bad("ms left"))?;
    let mut obj = serde_json::Map::new();
    for kv in pairs.chunks(2) {
        let [k, val] = kv else {
            return Err(bad("odd field list"));
        };
        let value = match k.as_str() {
            "cooldownReason" => serde_json::Value::String(val.clone()),
            "failureCounts" => serde_json::from_str(val).map_err(|_| bad("failureCounts"))?,
            _ => val
                .parse::<u64>()
                .map(serde_json::Value::from)
                .map_err(|_| bad(k))?,
        };
        obj.insert(k.clone(), value);
    }
    let stats: UsageStats =
        serde_json::from_value(serde_json::Value::Object(obj)).map_err(|e| bad(&e.to_string()))?;
    Ok(SharedCooldown {
        stats,
        remaining: Duration::from_millis(left),
    })
}

impl Coordinator for RedisCoordinator {
    fn mode(&self) -> &'static str {
        "redis"
    }

    fn read<'a>(&'a self, deps: &'a [String]) -> CoordFuture<'a, Vec<Option<Record>>> {
        async move {
            let reads = deps.iter().map(|dep| {
                let mut conn = self.conn.clone();
                let key = self.key("breaker", dep);
                async move {
                    let raw: Option<Vec<String>> = self
                        .bounded(self.scripts.read.key(key).invoke_async(&mut conn))
                        .await?;
                    raw.map(parse_record).transpose()
                }
            });
            try_join_all(reads).await
        }
        .boxed()
    }

    fn change<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        args: ChangeArgs,
    ) -> CoordFuture<'a, Record> {
        let argv = vec![
            host.to_string(),
            args.from_epoch.to_string(),
            args.change.as_str().to_string(),
            ms(args.base).to_string(),
            ms(args.cap).to_string(),
        ];
        debug_assert!(matches!(args.change, Change::Trip | Change::Reopen));
        async move { self.record(&self.scripts.change, dep, &argv).await }.boxed()
    }

    fn lease<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        epoch: u64,
        ttl: Duration,
    ) -> CoordFuture<'a, Lease> {
        async move {
            let key = self.key("probe", dep);
            let mut conn = self.conn.clone();
            let mut pipe = redis::pipe();
            pipe.cmd("SET")
                .arg(&key)
                .arg(format!("{host} {epoch}"))
                .arg("NX")
                .arg("PX")
                .arg(ms(ttl).max(1))
                .cmd("PTTL")
                .arg(&key)
                .cmd("GET")
                .arg(&key);
            let (set, pttl, holder): (Option<String>, i64, Option<String>) =
                self.bounded(pipe.query_async(&mut conn)).await?;
            Ok(match set {
                Some(_) => Lease::Granted,
                None => Lease::Held {
                    // -2 (expired in between) or -1 (no TTL: never written so): free now.
                    remaining: Duration::from_millis(u64::try_from(pttl).unwrap_or(0)),
                    holder: holder.unwrap_or_default(),
                },
            })
        }
        .boxed()
    }

    fn probe_ok<'a>(
        &'a self,
        dep: &'a str,
        host: &'a HostId,
        epoch: u64,
        rule: CloseRule,
    ) -> CoordFuture<'a, Record> {
        let argv = vec![
            host.to_string(),
            epoch.to_string(),
            rule.successes.to_string(),
            rule.distinct.to_string(),
        ];
        async move { self.record(&self.scripts.probe_ok, dep, &argv).await }.boxed()
    }

    fn seed<'a>(&'a self, dep: &'a str, host: &'a HostId, seed: Seed) -> CoordFuture<'a, Record> {
        let (state, remaining, open_for) = match seed.open {
            Some(o) => ("open", ms(o.remaining), ms(o.open_for)),
            None => ("closed", 0, 0),
        };
        let argv = vec![
            host.to_string(),
            state.to_string(),
            remaining.to_string(),
            open_for.to_string(),
            seed.reopens.to_string(),
        ];
        async move { self.record(&self.scripts.seed, dep, &argv).await }.boxed()
    }

    fn put_cooldown<'a>(
        &'a self,
        profile: &'a str,
        write: &'a CooldownWrite,
    ) -> CoordFuture<'a, Duration> {
        async move {
            let counts: BTreeMap<&str, u32> = write
                .failure_counts
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect();
            let counts = serde_json::to_string(&counts)
                .map_err(|e| CoordError::Reply(format!("failureCounts: {e}")))?;
            let mut conn = self.conn.clone();
            let mut inv = self.scripts.cooldown_put.key(self.key("usage", profile));
            inv.arg(ms(write.cool_for).max(1))
                .arg(write.reason.map_or("", |r| r.as_str()))
                .arg(write.error_count)
                .arg(counts);
            let left: String = self.bounded(inv.invoke_async(&mut conn)).await?;
            let left: u64 = left
                .parse()
                .map_err(|_| CoordError::Reply(format!("cooldown ms left {left:?}")))?;
            Ok(Duration::from_millis(left))
        }
        .boxed()
    }

    fn cooldown<'a>(&'a self, profile: &'a str) -> CoordFuture<'a, Option<SharedCooldown>> {
        async move {
            let mut conn = self.conn.clone();
            let inv = self.scripts.cooldown_get.key(self.key("usage", profile));
            let raw: Option<Vec<String>> = self.bounded(inv.invoke_async(&mut conn)).await?;
            raw.map(parse_cooldown).transpose()
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn records_parse_and_bad_ones_are_named() {
        let r = parse_record(strings(&[
            "3", "open", "250", "30000", "1", "1", "h1", "h2",
        ]))
        .unwrap();
        assert_eq!(r.epoch, 3);
        assert_eq!(
            r.open,
            Some(OpenFor {
                remaining: Duration::from_millis(250),
                open_for: Duration::from_secs(30)
            })
        );
        assert_eq!(r.ok_hosts, vec!["h1"]);
        let c = parse_record(strings(&["4", "closed", "0", "0", "0", "0", "", "h1"])).unwrap();
        assert_eq!((c.open, c.ok_hosts.len()), (None, 0));
        for bad in [
            strings(&["x", "open", "1", "1", "0", "0", "", ""]),
            strings(&["1", "ajar", "1", "1", "0", "0", "", ""]),
            strings(&["1", "open"]),
        ] {
            let e = parse_record(bad).unwrap_err();
            assert!(e.to_string().contains("breaker record"), "{e}");
        }
    }

    #[test]
    fn cooldowns_parse_in_usage_stats_shape() {
        let c = parse_cooldown(strings(&[
            "900",
            "cooldownUntil",
            "1700000010000",
            "errorCount",
            "2",
            "failureCounts",
            "{\"timeout\":2}",
            "cooldownReason",
            "timeout",
        ]))
        .unwrap();
        assert_eq!(c.remaining, Duration::from_millis(900));
        assert_eq!(c.stats.cooldown_until, Some(1_700_000_010_000));
        assert_eq!(c.stats.failure_counts.get("timeout"), Some(&2));
        assert_eq!(
            c.stats.cooldown_reason,
            Some(crate::engine::Reason::Timeout)
        );
        assert!(parse_cooldown(strings(&["1", "errorCount"])).is_err());
    }
}
