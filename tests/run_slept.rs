//! Sleep cannot cut a run short unseen: a real run whose arm's clocks show the machine
//! suspended (a fake that jumps: the suspend-counting clock 42 s ahead of the other between two
//! readings) ends that arm at the last reading before the gap, and the run is `incomplete` with
//! `the machine slept for 42 s at T` as its reason and on its first lines — never `pass`, and
//! nothing judged across the gap.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use rehearse::rehearsal::arm::RunFiles;
use rehearse::report::model::{PolicyStatus, Verdict};
use rehearse::util::shutdown::Shutdown;
use rehearse::util::suspend::{Clocks, Reading, SleepWatch};

use crate::support::run::repo_root;

/// One reading per call, 100 ms apart on both clocks; from the `at`-th on, the clock that
/// counts suspend (and the wall clock) 42 s further: the machine slept before that reading.
#[derive(Debug)]
struct SleepsOnce {
    reads: AtomicU32,
    at: u32,
}

const SLEPT: Duration = Duration::from_secs(42);
/// 2026-05-05T16:53:20Z.
const WALL0: u64 = 1_778_000_000;

impl Clocks for SleepsOnce {
    fn read(&self) -> Option<Reading> {
        let n = self.reads.fetch_add(1, Ordering::SeqCst) + 1;
        let awake = Duration::from_secs(7_000) + Duration::from_millis(100) * n;
        let slept = if n >= self.at { SLEPT } else { Duration::ZERO };
        Some(Reading {
            // Not zero apart to begin with: what counts is the growth.
            counting: awake + Duration::from_secs(3_600) + slept,
            awake,
            wall: SystemTime::UNIX_EPOCH
                + Duration::from_secs(WALL0)
                + Duration::from_millis(100) * n
                + slept,
        })
    }
}

#[test]
fn a_run_whose_machine_slept_is_incomplete_with_the_sleep_as_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let args = rehearse::cli::RunArgs {
        scenarios: vec![
            repo_root()
                .join("fixtures/scenarios/smoke.toml")
                .display()
                .to_string(),
        ],
        speed: Some(crate::support::speed(4.0)),
        ..Default::default()
    };
    let mut plan = rehearse::rehearsal::plan::build(&args).unwrap();
    let mut sp = plan.scenarios.remove(0);
    // Read every 100 ms; the 5th reading (at 0.4 s of the arm) is the first after the sleep.
    sp.sleep_watch = SleepWatch {
        clocks: Arc::new(SleepsOnce {
            reads: AtomicU32::new(0),
            at: 5,
        }),
        every: Duration::from_millis(100),
    };
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    let files = RunFiles::open(&dir).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let t0 = tokio::time::Instant::now();
    let report = rt.block_on(
        rehearse::rehearsal::sut::SystemUnderTest::Embedded.rehearse(
            &sp,
            &dir,
            &files,
            &Shutdown::new(),
            true,
        ),
    );
    rt.shutdown_timeout(Duration::from_millis(500));
    // Smoke is 21 s, 5.25 s at ×4: the sleep ended the arm's wait, not `duration`.
    assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());

    // T: when it went to sleep, the wall time of the first reading after it less the sleep
    // (2026-05-05T16:53:20.5Z).
    let why = "the machine slept for 42 s at 2026-05-05T16:53:20Z";
    assert_eq!(report.verdict, Verdict::Incomplete, "{:?}", report.reason);
    assert_eq!(report.reason.as_deref(), Some(why));
    let stopped = report.stopped.clone().expect("the sleep cut the arm short");
    assert_eq!(stopped.reason, why);
    assert_eq!(stopped.policy, "retry-gate");
    // The arm ends at the last reading before the gap (the 4th, 0.3 s in: 1.2 s of scenario
    // time at ×4), never across it.
    assert!(
        (1_200..4_000).contains(&stopped.at_ms),
        "stopped at {} ms of scenario time",
        stopped.at_ms
    );
    assert!(!report.policies.is_empty());
    for p in &report.policies {
        assert_ne!(
            p.status,
            PolicyStatus::Pass,
            "[{}] a slept arm never passes",
            p.policy
        );
        assert!(!p.ok, "[{}]", p.policy);
        assert!(p.stopped_at_ms.is_some(), "[{}]", p.policy);
    }
    assert!(matches!(
        report.verdict.into_result(report.reason.as_deref()),
        Ok(rehearse::exit::Status::Incomplete)
    ));

    // The report's first lines say it.
    rehearse::report::write_all(&dir, &report).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let head: String = md.lines().take(8).collect::<Vec<_>>().join("\n");
    assert!(head.contains("stopped at "), "{head}");
    assert!(head.contains(&format!(": {why}")), "{head}");
}
