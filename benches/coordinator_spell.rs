//! Redis commands per half-open spell: N simulated hosts (each its own `Breakers` and
//! `RedisCoordinator`, followers polling) against a real redis-server this program starts on a
//! free loopback port. Phase 1: closed traffic for a few seconds (only the followers' reads
//! should reach Redis). Phase 2: one host trips the dependency, every host waits out the open
//! time, probes succeed, and the spell ends when every host is closed again. Redis's own
//! `INFO commandstats` (reset before each phase) and the hosts' coordinator calls by kind are
//! printed as Markdown.
//!
//! Run: `scripts/bench-coordinator.sh [HOSTS] [RPS] [FOLLOW_MS] [PROFILES]` (defaults 12, 10,
//! 25 — what fleet hosts use —, 0; PROFILES is how many auth profiles each host's engine
//! follows the fleet cooldowns of).

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rehearse::engine::Now;
use rehearse::engine::admission::{Admission, Admit};
use rehearse::engine::breaker::BreakerConfig;
use rehearse::engine::breaker::{Breakers, HostClock};
use rehearse::engine::coordinator::{
    ChangeArgs, CloseRule, CooldownWrite, CoordFuture, Coordinator, HostId, Lease, Record,
    RedisCoordinator, RedisOptions, Seed, SharedCooldown,
};
use rehearse::engine::events::{BreakerState, Collector};
use rehearse::engine::outcome::{AttemptResult, TransportFailure};
use tokio::time::Instant;

const DEP: &str = "crm_search";

/// Coordinator calls by kind.
#[derive(Debug)]
struct Tally {
    inner: Arc<dyn Coordinator>,
    calls: Arc<Mutex<BTreeMap<&'static str, u64>>>,
}

impl Tally {
    fn note(&self, op: &'static str) {
        *self.calls.lock().unwrap().entry(op).or_default() += 1;
    }
}

impl Coordinator for Tally {
    fn mode(&self) -> &'static str {
        self.inner.mode()
    }
    fn read<'a>(&'a self, deps: &'a [String]) -> CoordFuture<'a, Vec<Option<Record>>> {
        self.note("read");
        self.inner.read(deps)
    }
    fn change<'a>(&'a self, d: &'a str, h: &'a HostId, a: ChangeArgs) -> CoordFuture<'a, Record> {
        self.note("change");
        self.inner.change(d, h, a)
    }
    fn lease<'a>(
        &'a self,
        d: &'a str,
        h: &'a HostId,
        e: u64,
        t: Duration,
    ) -> CoordFuture<'a, Lease> {
        self.note("lease");
        self.inner.lease(d, h, e, t)
    }
    fn probe_ok<'a>(
        &'a self,
        d: &'a str,
        h: &'a HostId,
        e: u64,
        r: CloseRule,
    ) -> CoordFuture<'a, Record> {
        self.note("probe_ok");
        self.inner.probe_ok(d, h, e, r)
    }
    fn seed<'a>(&'a self, d: &'a str, h: &'a HostId, s: Seed) -> CoordFuture<'a, Record> {
        self.note("seed");
        self.inner.seed(d, h, s)
    }
    fn put_cooldown<'a>(&'a self, p: &'a str, w: &'a CooldownWrite) -> CoordFuture<'a, Duration> {
        self.note("put_cooldown");
        self.inner.put_cooldown(p, w)
    }
    fn cooldown<'a>(&'a self, p: &'a str) -> CoordFuture<'a, Option<SharedCooldown>> {
        self.note("cooldown");
        self.inner.cooldown(p)
    }
}

struct Server(Child, u16);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_redis(dir: &std::path::Path) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port");
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("redis-server must be on PATH ({e})"));
    let server = Server(child, port);
    for _ in 0..500 {
        if cli(port, &["PING"]).trim() == "PONG" {
            return server;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("redis-server did not answer on port {port}");
}

fn cli(port: u16, args: &[&str]) -> String {
    Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// `cmdstat_NAME:calls=N,...` lines → NAME → N (the INFO and CONFIG calls of this program left out).
fn commandstats(port: u16) -> BTreeMap<String, u64> {
    cli(port, &["INFO", "commandstats"])
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest.split(',').find_map(|kv| kv.strip_prefix("calls="))?;
            Some((name.to_string(), calls.parse().ok()?))
        })
        .filter(|(n, _)| !n.starts_with("info") && !n.starts_with("config"))
        .collect()
}

fn print_stats(title: &str, secs: f64, stats: &BTreeMap<String, u64>, ops: &BTreeMap<&str, u64>) {
    let total: u64 = stats.values().sum();
    println!("\n### {title} ({secs:.2} s)\n");
    println!("| Redis command | calls |\n|---|---|");
    for (k, v) in stats {
        println!("| {k} | {v} |");
    }
    println!("| **total** | **{total}** ({:.0}/s) |", total as f64 / secs);
    println!("\n| coordinator call (all hosts) | calls |\n|---|---|");
    for (k, v) in ops {
        println!("| {k} | {v} |");
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (hosts, rps, follow_ms) = (arg(0, 12) as usize, arg(1, 10).max(1), arg(2, 25));
    let profiles = arg(3, 0) as usize;
    let dir = tempfile::tempdir().expect("temp dir");
    let server = start_redis(dir.path());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run(server.1, hosts, rps, follow_ms, profiles));
    drop(server);
}

async fn run(port: u16, n: usize, rps: u64, follow_ms: u64, profiles: usize) {
    let ids: Vec<String> = (0..profiles)
        .map(|i| format!("openai-codex:p{i}"))
        .collect();
    let cfg = BreakerConfig {
        open_for: Duration::from_secs(2),
        ..BreakerConfig::default()
    };
    let calls = Arc::new(Mutex::new(BTreeMap::new()));
    let (stop, rx) = tokio::sync::watch::channel(false);
    let hosts: Vec<Arc<Breakers>> = (0..n)
        .map(|i| {
            let redis = RedisCoordinator::new(RedisOptions {
                url: format!("redis://127.0.0.1:{port}"),
                ..RedisOptions::default()
            })
            .expect("coordinator");
            let tally = Tally {
                inner: Arc::new(redis),
                calls: calls.clone(),
            };
            let host = HostId::new(&format!("h{i}")).expect("host id");
            let b = Breakers::new(
                cfg.clone(),
                rehearse::util::speed::Speed::ONE,
                i as u64,
                Arc::new(Collector::default()),
                Instant::now(),
            )
            .with_coordinator(Arc::new(tally), host, HostClock::default());
            // What an engine with PROFILES auth profiles asks its breakers to follow.
            b.follow_profiles(&ids);
            let b = Arc::new(b);
            let mut rx = rx.clone();
            let every = Duration::from_millis(follow_ms);
            tokio::spawn(b.clone().run_follower(every, async move {
                let _ = rx.wait_for(|s| *s).await;
            }));
            b
        })
        .collect();
    let ok = AttemptResult::Ok {
        tokens: 1,
        latency: Duration::from_millis(20),
        ttfb: None,
        longest_gap: None,
    };
    let reset = AttemptResult::Transport {
        failure: TransportFailure::Reset,
    };
    // Every host calls the dependency at RPS / hosts, with probes answered after 20 ms.
    let each = Duration::from_secs_f64(n as f64 / rps as f64);
    let probes = Arc::new(Mutex::new(Vec::<(Instant, usize)>::new()));
    let traffic = |end: Instant| {
        let hosts = hosts.clone();
        let probes = probes.clone();
        let ok = ok.clone();
        async move {
            let tasks = hosts.iter().enumerate().map(|(i, b)| {
                let (probes, ok) = (probes.clone(), ok.clone());
                async move {
                    tokio::time::sleep(each.mul_f64(i as f64 / n as f64)).await;
                    while Instant::now() < end {
                        let now = Instant::now();
                        if let Admit::Allow { probe, .. } = b.admit_async(DEP, 0, now).await {
                            if probe {
                                probes.lock().unwrap().push((Instant::now(), i));
                                tokio::time::sleep(Duration::from_millis(20)).await;
                            }
                            b.record_async(
                                DEP,
                                0,
                                probe,
                                &ok,
                                Now::new(Instant::now(), SystemTime::now()),
                            )
                            .await;
                        }
                        tokio::time::sleep(each).await;
                    }
                }
            });
            futures_util::future::join_all(tasks).await;
        }
    };
    println!(
        "# Coordinator commands: {n} hosts, {rps} RPS in all, followers every {follow_ms} ms, \
         {profiles} followed profiles per host"
    );
    for b in &hosts {
        b.record_async(
            DEP,
            0,
            false,
            &ok,
            Now::new(Instant::now(), SystemTime::now()),
        )
        .await;
    }
    // Phase 1: closed.
    cli(port, &["CONFIG", "RESETSTAT"]);
    calls.lock().unwrap().clear();
    let t = Instant::now();
    traffic(t + Duration::from_secs(3)).await;
    let secs = t.elapsed().as_secs_f64();
    print_stats(
        "closed, traffic flowing",
        secs,
        &commandstats(port),
        &calls.lock().unwrap(),
    );

    // Phase 2: a trip on h0, open for 2 s, then the half-open spell until every host is closed.
    cli(port, &["CONFIG", "RESETSTAT"]);
    calls.lock().unwrap().clear();
    let t = Instant::now();
    for _ in 0..cfg.consecutive_failures {
        hosts[0]
            .record_async(
                DEP,
                0,
                false,
                &reset,
                Now::new(Instant::now(), SystemTime::now()),
            )
            .await;
    }
    let spell = async {
        loop {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let now = Instant::now();
            let all_closed = hosts.iter().all(|b| {
                b.tick(now);
                b.state(DEP) == BreakerState::Closed
            });
            if all_closed && t.elapsed() > cfg.open_for {
                return t.elapsed();
            }
        }
    };
    let took = tokio::select! {
        took = spell => took,
        _ = traffic(t + Duration::from_secs(60)) => t.elapsed(),
    };
    let stats = commandstats(port);
    print_stats(
        "trip, open 2 s, half-open spell until every host is closed",
        took.as_secs_f64(),
        &stats,
        &calls.lock().unwrap(),
    );
    let mut p = probes.lock().unwrap().clone();
    p.sort();
    let gaps: Vec<u128> = p
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).as_millis())
        .collect();
    let who: Vec<usize> = p.iter().map(|x| x.1).collect();
    println!("\nprobes: {} (hosts {who:?}), gaps ms {gaps:?}", p.len());
    let _ = stop.send(true);
}
