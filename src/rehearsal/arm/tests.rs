use std::time::Duration;

use tokio::time::Instant;

use super::*;

fn plan() -> crate::rehearsal::plan::ScenarioPlan {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenarios/smoke.toml");
    let args = crate::cli::RunArgs {
        scenarios: vec![path.display().to_string()],
        ..Default::default()
    };
    match crate::rehearsal::plan::build(&args) {
        Ok(mut p) => p.scenarios.remove(0),
        Err(e) => panic!("planning smoke: {e}"),
    }
}

fn spec<'a>(plan: &'a crate::rehearsal::plan::ScenarioPlan, arm: &'a str) -> UpstreamSpec<'a> {
    UpstreamSpec {
        plan,
        arm,
        listen: LOOPBACK,
        speed: Speed::ONE,
        keep_records: true,
        duplicates: None,
    }
}

async fn answers(addr: SocketAddr) -> bool {
    tokio::net::TcpStream::connect(addr).await.is_ok()
}

#[tokio::test]
async fn an_arm_serves_its_upstream_until_it_is_closed_or_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let files = RunFiles::open(dir.path()).unwrap();
    let stop = Shutdown::new();
    let plan = plan();

    let arm = Arm::open(spec(&plan, "a"), &files, &stop).await.unwrap();
    let addr = arm.upstream_addr();
    assert_ne!(addr.port(), 0, "bound to a real port");
    assert!(answers(addr).await, "serving once open");
    let closed = arm.close().await;
    assert_eq!(closed.stats.requests, 0, "nothing was sent: {:?}", closed.stats);
    assert!(!answers(addr).await, "closed: its port no longer answers");

    // An arm a kind gave up on part-way (dropped, never closed) stops serving too.
    let arm = Arm::open(spec(&plan, "b"), &files, &stop).await.unwrap();
    let addr = arm.upstream_addr();
    drop(arm);
    let deadline = Instant::now() + SHUTDOWN_GRACE * 4;
    while answers(addr).await {
        assert!(Instant::now() < deadline, "a dropped arm's upstream still answers");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_targets_are_published_at_go_and_withdrawn_at_the_end_or_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let files = RunFiles::open(dir.path()).unwrap();
    let stop = Shutdown::new();
    let plan = plan();
    let target = crate::detection::Target {
        url: "http://127.0.0.1:9/metrics".parse().unwrap(),
        host: "sut".into(),
    };
    // As a `[prometheus]` of the run turns them on: its file_sd file follows the arms.
    let sd = dir.path().join("targets.json");
    files.targets.enable(Some(sd.clone()));
    let scraped = || std::fs::read_to_string(&sd).unwrap();

    let mut arm = Arm::open(spec(&plan, "first"), &files, &stop).await.unwrap();
    assert!(!scraped().contains("127.0.0.1:9"), "nothing before the clock");
    arm.go(Clock::now(), std::slice::from_ref(&target), Vec::new());
    assert_eq!(
        files.targets.current().map(|(_, w)| w.arm),
        Some("first".into())
    );
    assert!(scraped().contains("127.0.0.1:9"), "{}", scraped());
    assert!(scraped().contains("first"), "{}", scraped());
    let ending = arm.end(|_| true);
    assert_eq!(ending.stopped, None, "nobody asked it to stop");
    assert!(files.targets.current().is_none(), "withdrawn at the end");
    assert!(!scraped().contains("127.0.0.1:9"), "{}", scraped());
    arm.close().await;

    let mut arm = Arm::open(spec(&plan, "second"), &files, &stop).await.unwrap();
    arm.go(Clock::now(), &[target], Vec::new());
    drop(arm);
    assert!(files.targets.current().is_none(), "withdrawn when dropped");
    let windows = files.targets.windows();
    assert_eq!(windows.len(), 2, "{windows:?}");
    assert!(windows.iter().all(|w| w.end_unix_ms.is_some()), "{windows:?}");
}

#[tokio::test]
async fn a_stop_cuts_the_arm_short_only_where_the_kind_says_it_cut_anything() {
    let dir = tempfile::tempdir().unwrap();
    let files = RunFiles::open(dir.path()).unwrap();
    let stop = Shutdown::new();
    let plan = plan();
    let mut arm = Arm::open(spec(&plan, "a"), &files, &stop).await.unwrap();
    arm.go(Clock::now(), &[], Vec::new());
    stop.request("stopped by SIGTERM");
    // Far away: only the stop ends the wait.
    tokio::time::timeout(Duration::from_secs(5), arm.until(Instant::now() + Duration::from_secs(3600)))
        .await
        .expect("a stop request ends the arm's wait");
    let ending = arm.end(|elapsed_ms| elapsed_ms < 60_000);
    assert_eq!(ending.stopped.as_deref(), Some("stopped by SIGTERM"));
    assert_eq!(ending.died, None);
    assert!(ending.elapsed_ms < 5_000, "{ending:?}");
    // Past `duration` a stop cut nothing.
    assert_eq!(arm.end(|_| false).stopped, None);
    arm.close().await;
}

#[tokio::test]
async fn a_watched_upstream_that_dies_ends_the_arm_as_a_harness_failure() {
    let dir = tempfile::tempdir().unwrap();
    let files = RunFiles::open(dir.path()).unwrap();
    let stop = Shutdown::new();
    let plan = plan();
    let mut arm = Arm::open(spec(&plan, "a"), &files, &stop).await.unwrap();
    let clock = Clock::now();
    arm.watch_upstream(clock.start, Speed::ONE);
    arm.go(clock, &[], Vec::new());
    arm.upstream().halt();
    tokio::time::timeout(Duration::from_secs(5), arm.until(Instant::now() + Duration::from_secs(3600)))
        .await
        .expect("the upstream's death ends the arm's wait");
    // Whatever the kind says of the time, a death cuts the arm short.
    let ending = arm.end(|_| false);
    let died = ending.died.clone().unwrap_or_default();
    assert!(died.contains("the mock upstream stopped serving"), "{died}");
    assert_eq!(ending.stopped, ending.died);
    assert_eq!(stop.reason(), None, "the user's stop is not touched");
    arm.close().await;

    // An upstream the arm closes itself is no death.
    let mut arm = Arm::open(spec(&plan, "b"), &files, &stop).await.unwrap();
    arm.watch_upstream(Instant::now(), Speed::ONE);
    arm.go(Clock::now(), &[], Vec::new());
    assert_eq!(arm.end(|_| true).died, None);
    arm.close().await;
}

#[tokio::test]
async fn a_scraper_of_a_dead_endpoint_keeps_its_failures_and_every_scraper_answers_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let files = RunFiles::open(dir.path()).unwrap();
    let stop = Shutdown::new();
    let plan = plan();
    let mut arm = Arm::open(spec(&plan, "a"), &files, &stop).await.unwrap();
    // A port nobody listens on (bound, then closed).
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let scrape = |start_unix_s: f64| Scrape {
        url: crate::scrape::metrics_url(dead),
        interval: Duration::from_millis(50),
        file: files.scrapes.clone(),
        start_unix_s,
    };
    arm.go(Clock::now(), &[], vec![scrape(1.0), scrape(2.0)]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    arm.end(|_| true);
    let kept = arm.final_scrapes().await;
    assert_eq!(kept.len(), 2);
    for k in &kept {
        assert!(k.failures >= 2, "{k:?}");
        assert!(k.last_error.is_some(), "{k:?}");
    }
    arm.close().await;
}

/// Readings 20 ms apart; the machine slept 42 s before the third.
#[derive(Debug, Default)]
struct SleepsBeforeTheThird(std::sync::atomic::AtomicU32);

impl crate::util::suspend::Clocks for SleepsBeforeTheThird {
    fn read(&self) -> Option<crate::util::suspend::Reading> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let awake = Duration::from_millis(20) * n;
        let slept = if n >= 3 { Duration::from_secs(42) } else { Duration::ZERO };
        Some(crate::util::suspend::Reading {
            counting: awake + Duration::from_secs(9) + slept,
            awake,
            wall: std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_778_000_000) + slept,
        })
    }
}

#[tokio::test]
async fn a_sleep_of_the_machine_ends_the_arm_at_the_reading_before_it_whatever_the_kind_says() {
    let dir = tempfile::tempdir().unwrap();
    let files = RunFiles::open(dir.path()).unwrap();
    let stop = Shutdown::new();
    let mut plan = plan();
    plan.sleep_watch = crate::util::suspend::SleepWatch {
        clocks: Arc::new(SleepsBeforeTheThird::default()),
        every: Duration::from_millis(20),
    };
    let mut arm = Arm::open(spec(&plan, "a"), &files, &stop).await.unwrap();
    let clock = Clock::now();
    arm.watch_upstream(clock.start, Speed::ONE);
    arm.go(clock, &[], Vec::new());
    tokio::time::timeout(Duration::from_secs(5), arm.until(Instant::now() + Duration::from_secs(3600)))
        .await
        .expect("the sleep ends the arm's wait");
    // The kind says nothing was cut (past `duration`): a sleep cuts the arm short anyway.
    let ending = arm.end(|_| false);
    assert_eq!(
        ending.stopped.as_deref(),
        Some("the machine slept for 42 s at 2026-05-05T16:53:20Z")
    );
    assert_eq!(ending.died, None, "no harness failure");
    assert_eq!(stop.reason(), None, "the user's stop is not touched");
    // Ends at the second reading (20 ms in), not at the detection.
    assert!(ending.elapsed_ms < 1_000, "{ending:?}");
    arm.close().await;
}
