//! Faults of the coordinator itself (`[[fault]] route = "coordinator"`): `down` kills the
//! run's own redis-server (SIGKILL by pid: its data is gone) at `from` and starts it again,
//! empty, on the same port at `until`; `latency` delays every command the hosts send to Redis
//! by `delay` (± `jitter`) inside its window, through a loopback proxy the hosts connect to
//! instead of Redis. Windows are scenario time, divided by the run's speed.

use crate::util::sync::Locked;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, sleep_until};

use crate::rehearsal::fleet::redis_server::SpawnedRedis;
use crate::upstream::FaultSpec;
use crate::upstream::faults::{FaultKind, RouteSel};
use crate::util::speed::Speed;

/// One coordinator fault, in run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CoordFault {
    /// Redis is down in `[from, until)` (`until` `None`: for the rest of the run).
    Down {
        /// Start, run time.
        from: Duration,
        /// End, run time.
        until: Option<Duration>,
    },
    /// Every command waits `delay` in `[from, until)`.
    Latency {
        /// Start, run time.
        from: Duration,
        /// End, run time.
        until: Option<Duration>,
        /// The delay, run time.
        delay: Duration,
    },
}

/// The coordinator faults of a scenario.
#[derive(Debug, Clone, Default)]
pub(crate) struct CoordinatorFaults(pub Vec<CoordFault>);

/// What the fault task did, in run ms: (when, `Some(back up?)` for a `down` step, what).
#[derive(Debug, Default)]
pub(crate) struct FaultLog(Mutex<Vec<(u64, Option<bool>, String)>>);

impl FaultLog {
    fn push(&self, at: Instant, start: Instant, up: Option<bool>, what: String) {
        let ms = u64::try_from(at.saturating_duration_since(start).as_millis()).unwrap_or(0);
        self.0.locked().push((ms, up, what));
    }

    /// Everything so far: (run ms, what).
    pub(crate) fn entries(&self) -> Vec<(u64, String)> {
        let g = self.0.locked();
        g.iter().map(|(t, _, w)| (*t, w.clone())).collect()
    }

    /// The outages: (down ms, back-up ms if it came back).
    pub(crate) fn outages(&self) -> Vec<(u64, Option<u64>)> {
        let g = self.0.locked();
        let mut out: Vec<(u64, Option<u64>)> = Vec::new();
        for (t, up, _) in g.iter() {
            match (up, out.last_mut()) {
                (Some(false), _) => out.push((*t, None)),
                (Some(true), Some(last)) if last.1.is_none() => last.1 = Some(*t),
                _ => {}
            }
        }
        out
    }
}

impl CoordinatorFaults {
    /// The `route = "coordinator"` faults of `faults`, windows divided by `speed`.
    pub(crate) fn of(faults: &[FaultSpec], speed: Speed) -> Self {
        let s = |d: Duration| speed.scale(d);
        Self(
            faults
                .iter()
                .filter(|f| f.route == RouteSel::Coordinator)
                .filter_map(|f| {
                    let from = s(f.from.unwrap_or_default());
                    let until = f.until.map(s);
                    match &f.kind {
                        FaultKind::Down(_) => Some(CoordFault::Down { from, until }),
                        FaultKind::Latency(l) => Some(CoordFault::Latency {
                            from,
                            until,
                            delay: s(l.delay),
                        }),
                        _ => None,
                    }
                })
                .collect(),
        )
    }

    /// True when a latency fault needs the proxy in front of Redis.
    pub(crate) fn needs_proxy(&self) -> bool {
        self.0
            .iter()
            .any(|f| matches!(f, CoordFault::Latency { .. }))
    }

    /// The delay a command sent at `at` (run time) waits.
    fn delay_at(&self, at: Duration) -> Duration {
        self.0
            .iter()
            .filter_map(|f| match *f {
                CoordFault::Latency { from, until, delay }
                    if at >= from && until.is_none_or(|u| at < u) =>
                {
                    Some(delay)
                }
                _ => None,
            })
            .max()
            .unwrap_or_default()
    }

    /// Applies the `down` faults to `redis` on their schedule (from `start`), logging each
    /// stop and restart; then holds `redis` until the task is dropped (which stops it).
    pub(crate) async fn run(self, mut redis: Option<SpawnedRedis>, start: Instant, log: Arc<FaultLog>) {
        // (when, step): `Some(up)` for a `down` step, `None` a latency note.
        let mut steps: Vec<(Duration, Option<bool>, String)> = Vec::new();
        for f in &self.0 {
            match *f {
                CoordFault::Down { from, until } => {
                    steps.push((from, Some(false), String::new()));
                    if let Some(u) = until {
                        steps.push((u, Some(true), String::new()));
                    }
                }
                CoordFault::Latency { from, until, .. } => {
                    let on = "latency fault: every Redis command delayed".to_string();
                    steps.push((from, None, on));
                    if let Some(u) = until {
                        let off = "latency fault over: Redis commands no longer delayed";
                        steps.push((u, None, off.to_string()));
                    }
                }
            }
        }
        steps.sort();
        for (at, step, note) in steps {
            sleep_until(start + at).await;
            let Some(up) = step else {
                log.push(Instant::now(), start, None, note);
                continue;
            };
            let Some(r) = redis.as_mut() else { break };
            if up {
                // Blocking (the server is polled until it answers): off the async workers.
                let res = tokio::task::block_in_place(|| r.restart());
                let what = match res {
                    Ok(()) => format!("redis-server restarted (pid {})", r.pid().unwrap_or(0)),
                    Err(e) => format!("redis-server did not restart: {e}"),
                };
                log.push(Instant::now(), start, Some(true), what);
            } else {
                let pid = r.pid().unwrap_or(0);
                // The outage starts as the signal goes (hosts notice within a millisecond).
                let at = Instant::now();
                tokio::task::block_in_place(|| r.kill());
                log.push(
                    at,
                    start,
                    Some(false),
                    format!("redis-server killed (pid {pid})"),
                );
            }
        }
        std::future::pending::<()>().await;
        drop(redis);
    }
}

/// A loopback TCP proxy in front of Redis that delays what hosts send by the latency faults'
/// delay at that moment of the run (none before `start` is set: the run's `go`). Ends when its
/// task is dropped.
pub(crate) async fn latency_proxy(
    redis: SocketAddr,
    faults: CoordinatorFaults,
    start: Arc<std::sync::OnceLock<Instant>>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let addr = l.local_addr()?;
    let faults = Arc::new(faults);
    let task = tokio::spawn(async move {
        while let Ok((client, _)) = l.accept().await {
            let faults = faults.clone();
            let start = start.clone();
            tokio::spawn(async move {
                let Ok(server) = TcpStream::connect(redis).await else {
                    return;
                };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = async {
                    let mut buf = vec![0u8; 16 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        let d = start
                            .get()
                            .map_or(Duration::ZERO, |s| faults.delay_at(s.elapsed()));
                        if !d.is_zero() {
                            tokio::time::sleep(d).await;
                        }
                        if sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = sw.shutdown().await;
                };
                let down = async {
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                    let _ = cw.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    Ok((addr, task))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_scaled_and_only_coordinator_faults_count() {
        let faults = crate::upstream::parse_fault_file(
            "[[fault]]\nroute = \"coordinator\"\nkind = \"down\"\nfrom = \"10s\"\nuntil = \"20s\"\n\
             [[fault]]\nroute = \"coordinator\"\nkind = \"latency\"\ndelay = \"300ms\"\nfrom = \"30s\"\nuntil = \"40s\"\n\
             [[fault]]\nroute = \"llm\"\nkind = \"latency\"\ndelay = \"1s\"\n",
            "t",
        )
        .unwrap();
        let c = CoordinatorFaults::of(&faults, crate::util::speed::sp(2.0));
        assert_eq!(c.0.len(), 2);
        assert_eq!(
            c.0[0],
            CoordFault::Down {
                from: Duration::from_secs(5),
                until: Some(Duration::from_secs(10))
            }
        );
        assert!(c.needs_proxy());
        assert_eq!(
            c.delay_at(Duration::from_secs(16)),
            Duration::from_millis(150)
        );
        assert_eq!(c.delay_at(Duration::from_secs(20)), Duration::ZERO);
        assert_eq!(c.delay_at(Duration::from_secs(14)), Duration::ZERO);
    }

    #[test]
    fn coordinator_route_takes_down_or_latency_only() {
        for bad in [
            "route = \"coordinator\"\nkind = \"reset\"\n",
            "route = \"llm\"\nkind = \"down\"\n",
            "route = \"coordinator\"\nkind = \"down\"\nprobability = 0.5\n",
        ] {
            let text = format!("[[fault]]\n{bad}");
            assert!(
                crate::upstream::parse_fault_file(&text, "t").is_err(),
                "{bad}"
            );
        }
    }
}
