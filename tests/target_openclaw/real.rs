//! The real pinned OpenClaw against a real `rehearse` mock upstream (in-process, loopback):
//! started healthy from a fresh state dir, one turn that reaches the upstream with the seeded
//! key, one 503 on key-A that OpenClaw retries (or rotates away from) — read back from its own
//! log as typed decisions — then stopped with nothing left running and nothing written outside
//! the run directory. Timings are printed (`--nocapture`) for the record; they are not asserted.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use rehearse::gateway::Turn;
use rehearse::gateway::openclaw::procs::SeenProcess;
use rehearse::gateway::openclaw::sandbox::openclaw_tmp_entries;
use rehearse::gateway::openclaw::{
    Decision, GatewayConfig, GatewayOptions, Install, ModelSpec, ProfileSpec, ProviderSpec,
    TmpIsolation,
};
use rehearse::upstream::{MemoryRecords, Upstream, UpstreamConfig, UpstreamRecord, serve};
use rehearse::util::fingerprint;

const KEY_A: &str = "sk-rehearse-key-A";
const KEY_B: &str = "sk-rehearse-key-B";

fn llm(records: &[UpstreamRecord]) -> Vec<&UpstreamRecord> {
    records
        .iter()
        .filter(|r| r.route == rehearse::upstream::RouteKind::Llm)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_gateway_reaches_the_upstream_with_the_seeded_key_retries_a_503_and_stops_clean() {
    let t0 = Instant::now();
    let install = Install::find(None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(install.openclaw_version, "2026.9.6", "{install:?}");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = Upstream::new(UpstreamConfig::default());
    let records = Arc::new(MemoryRecords::default());
    upstream.subscribe(records.clone());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, upstream.clone(), async move {
        let _ = stop_rx.await;
    }));

    let config = GatewayConfig {
        providers: vec![ProviderSpec {
            id: "mockai".into(),
            base_url: format!("http://{addr}/v1"),
            timeout_seconds: 20,
            models: vec![ModelSpec::new("m1")],
        }],
        profiles: vec![
            ProfileSpec {
                id: "mockai:a".into(),
                provider: "mockai".into(),
                key: KEY_A.into(),
            },
            ProfileSpec {
                id: "mockai:b".into(),
                provider: "mockai".into(),
                key: KEY_B.into(),
            },
        ],
        primary: "mockai/m1".into(),
        fallbacks: vec![],
        agent_timeout_seconds: 300,
    };
    let home_openclaw = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".openclaw"));
    let home_before = home_openclaw.as_ref().is_some_and(|p| p.exists());
    let tmp_before = real_tmp_entries();
    let run = tempfile::tempdir().unwrap();

    let running = tokio::task::spawn_blocking(super::scenarios::RunPermit::take)
        .await
        .unwrap();
    let starting = tokio::task::spawn_blocking(super::scenarios::StartPermit::take)
        .await
        .unwrap();
    let mut gw =
        super::scenarios::start_gateway(&install, &config, run.path(), GatewayOptions::default())
            .await;
    drop(starting);
    eprintln!("healthy after {:?} ({:?})", t0.elapsed(), gw.isolation());
    // key-B went into the store the CLI wrote for key-A, not through a second CLI start.
    let seeded = std::fs::read_to_string(run.path().join("openclaw/seed.out")).unwrap_or_default();
    assert!(
        seeded.contains("1 further profile(s) added to the profile store beside mockai:a"),
        "{seeded}"
    );
    assert!(
        !seeded.contains(KEY_A) && !seeded.contains(KEY_B),
        "{seeded}"
    );
    let client = gw.client().unwrap();

    // One healthy turn: it reaches the upstream with the first profile's seeded key.
    let turn = |session: &str, stream: bool| Turn {
        session: session.into(),
        stream,
        message: "hello from rehearse".into(),
        messages: None,
    };
    let t1 = Instant::now();
    let first = client.send(&turn("s1", true)).await;
    eprintln!("turn 1 in {:?}: {first:?}", t1.elapsed());
    assert!(first.is_ok(), "{first:?}\n{}", gw.last_lines().join("\n"));
    assert_eq!(first.finish_reason.as_deref(), Some("stop"));
    assert!(first.text.starts_with("t1 t2 t3"), "{first:?}");
    let seen = records.take();
    let calls = llm(&seen);
    assert!(!calls.is_empty(), "no model call reached the upstream");
    let (fa, fb) = (fingerprint(KEY_A), fingerprint(KEY_B));
    assert!(
        calls
            .iter()
            .all(|r| r.profile_fp.as_deref() == Some(fa.as_str())),
        "key-A (order a, b) carried every call: {calls:?}"
    );
    assert!(
        calls
            .iter()
            .all(|r| r.fault.is_none() && r.model.as_deref() == Some("m1"))
    );

    // One 503 on key-A: OpenClaw retries it (or rotates to key-B) and the turn still answers.
    upstream.set_faults(
        rehearse::upstream::parse_fault_file(
            &format!(
                "[[fault]]\nroute='llm'\nprofile='{KEY_A}'\nkind='status'\nstatus=503\nfirst=1\n"
            ),
            "test.toml",
        )
        .unwrap(),
    );
    let t2 = Instant::now();
    let second = client.send(&turn("s2", false)).await;
    eprintln!("turn 2 in {:?}: {second:?}", t2.elapsed());
    assert!(second.is_ok(), "{second:?}\n{}", gw.last_lines().join("\n"));
    let seen = records.take();
    let calls = llm(&seen);
    assert!(calls.len() >= 2, "the 503 and the call after it: {calls:?}");
    assert_eq!(calls[0].fault.as_deref(), Some("status"));
    assert_eq!(calls[0].profile_fp.as_deref(), Some(fa.as_str()));
    let answered = calls.last().unwrap();
    assert!(answered.fault.is_none());
    assert!([fa.as_str(), fb.as_str()].contains(&answered.profile_fp.as_deref().unwrap_or("")));

    drop(client);
    let procs = gw.processes();
    let t3 = Instant::now();
    let stopped = gw.stop().await;
    drop(running);
    eprintln!(
        "stopped in {:?} (graceful: {}, status {:?}); processes seen {procs:?}",
        t3.elapsed(),
        stopped.graceful,
        stopped.status
    );
    assert!(stopped.survivors.is_empty(), "{:?}", stopped.survivors);
    let alive: Vec<&SeenProcess> = procs.iter().filter(|p| p.alive()).collect();
    assert!(alive.is_empty(), "left running: {alive:?}");

    // Its own log says what it did about the 503.
    let decisions = stopped.decisions().unwrap();
    let about_503: Vec<&Decision> = decisions
        .iter()
        .map(|d| &d.decision)
        .filter(|d| match d {
            Decision::SameModelRetry { target, reason, .. } => {
                target == "mockai/m1" && reason.as_deref() == Some("server_error")
            }
            Decision::Failover {
                decision, reason, ..
            } => decision == "rotate_profile" && reason.as_deref() == Some("server_error"),
            _ => false,
        })
        .collect();
    eprintln!("decisions: {decisions:?}");
    assert!(
        !about_503.is_empty(),
        "no retry/rotation decision parsed: {decisions:?}"
    );
    if let Some(Decision::SameModelRetry {
        attempt,
        of,
        delay_ms,
        ..
    }) = about_503.first()
    {
        assert_eq!((*attempt, *of), (1, 8), "{about_503:?}");
        assert!(*delay_ms > 0 && *delay_ms < 30_000, "{delay_ms}");
    }
    let auth = stopped.auth_state().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("auth state: {:?}", auth.profiles);
    assert!(auth.cooled().all(|p| p.cooldown_ms.is_some()));

    // Nothing outside the run directory.
    assert!(
        stopped
            .dirs
            .root
            .starts_with(run.path().canonicalize().unwrap())
    );
    assert!(stopped.dirs.log.exists(), "the log is in the run dir");
    assert!(stopped.dirs.state.join("state/openclaw.sqlite").exists());
    assert_eq!(
        home_openclaw.as_ref().is_some_and(|p| p.exists()),
        home_before,
        "the user's ~/.openclaw was touched"
    );
    match stopped.isolation {
        TmpIsolation::Namespace => {
            assert_eq!(real_tmp_entries(), tmp_before, "/tmp was written to");
            assert!(stopped.dirs.tmp.join("openclaw-state-locks-0").exists());
        }
        TmpIsolation::None => eprintln!("left in /tmp: {:?}", stopped.left_in_tmp),
    }
    let config_text = std::fs::read_to_string(&stopped.dirs.config).unwrap();
    assert!(!config_text.contains(KEY_A) && !config_text.contains(KEY_B));

    let _ = stop_tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    eprintln!("whole test {:?}", t0.elapsed());
}

/// What OpenClaw may have left in /tmp, leaving out the markers the fake gateways in
/// `fake.rs` write there while this test runs in parallel (`/tmp/openclaw-fake-*`): the real
/// gateway never names anything that way.
fn real_tmp_entries() -> std::collections::BTreeSet<PathBuf> {
    openclaw_tmp_entries()
        .into_iter()
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("openclaw-fake-"))
        })
        .collect()
}
