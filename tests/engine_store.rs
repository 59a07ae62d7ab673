//! The cooldown store: OpenClaw `auth-profiles.json` shape, restarts, atomic writes.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rehearse::engine::RequestKind;
use rehearse::engine::events::Collector;
use rehearse::engine::failover::store::{CooldownStore, StoreError};
use rehearse::engine::{
    AlwaysAllow, ConfigError, Engine, EngineConfig, EngineOptions, EngineRequest, Profile, Reason,
};
use tokio::time::Instant;

use crate::support::engine::{Reply, Scripted};

const WALL: u64 = 1_800_000_000_000; // unix ms of the first engine's start

fn llm() -> EngineRequest {
    EngineRequest {
        id: 1,
        kind: RequestKind::Llm {
            model: "openai-codex/gpt-5".into(),
            stream: false,
            max_tokens: None,
            messages: None,
        },
        tenant: None,
        budget_tokens: None,
        session: None,
        class: None,
    }
}

fn engine_at(
    path: &std::path::Path,
    wall_ms: u64,
    t: Scripted,
) -> Result<Engine<Scripted>, ConfigError> {
    let mut opts = EngineOptions::new(Instant::now());
    opts.store_path = Some(path.to_path_buf());
    let profiles = vec![
        Profile::new("openai-codex", "openai-codex:p1"),
        Profile::new("openai-codex", "openai-codex:p2"),
    ];
    let e = Engine::new(
        EngineConfig::default(),
        profiles,
        opts,
        t,
        Arc::new(AlwaysAllow),
        Arc::new(Collector::default()),
    )?;
    Ok(e.with_wall_start(SystemTime::UNIX_EPOCH + Duration::from_millis(wall_ms)))
}

fn p1_rate_limited() -> Scripted {
    Scripted::new(|c, _| match c.bearer.as_deref() {
        Some("openai-codex:p1") => Reply::RateLimit(Some("120".into())),
        _ => Reply::Ok,
    })
}

#[tokio::test(start_paused = true)]
async fn a_restart_keeps_cooldowns_from_the_store_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth-profiles.json");
    let first = engine_at(&path, WALL, p1_rate_limited()).unwrap();
    assert!(first.handle(llm(), 0).await.is_ok());
    drop(first);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let p1 = &json["usageStats"]["openai-codex:p1"];
    assert_eq!(
        p1["cooldownUntil"].as_u64(),
        Some(WALL + 120_000),
        "{json:#}"
    );
    assert_eq!(p1["errorCount"].as_u64(), Some(1));
    assert_eq!(p1["failureCounts"]["rate_limit"].as_u64(), Some(1));
    assert_eq!(p1["lastFailureAt"].as_u64(), Some(WALL));
    assert!(p1["lastUsed"].as_u64().is_some());

    // A new process 60 s later: p1 is still cooling and is never called.
    let t = Scripted::new(|_, _| Reply::Ok);
    let second = engine_at(&path, WALL + 60_000, t.clone()).unwrap();
    assert!(second.handle(llm(), 0).await.is_ok());
    assert_eq!(t.profiles(), ["openai-codex:p2"]);
    // 61 s later still the cooldown is over: with p2 rate limited, p1 answers.
    let t = Scripted::new(|c, _| match c.bearer.as_deref() {
        Some("openai-codex:p2") => Reply::RateLimit(None),
        _ => Reply::Ok,
    });
    let third = engine_at(&path, WALL + 121_000, t.clone()).unwrap();
    assert!(third.handle(llm(), 0).await.is_ok());
    assert_eq!(
        t.profiles().last().map(String::as_str),
        Some("openai-codex:p1")
    );
    let after = third.store_snapshot();
    assert_eq!(
        after.stats("openai-codex:p1").unwrap().cooldown_until,
        None,
        "success clears it"
    );
}

/// A store as OpenClaw writes it (shape of `src/agents/auth-profiles/types.ts`).
const OPENCLAW_FILE: &str = r#"{
  "version": 1,
  "profiles": {
    "openai-codex:p1": { "type": "oauth", "provider": "openai-codex", "access": "REDACTED", "expires": 1893456000000 },
    "openai-codex:p2": { "type": "api_key", "provider": "openai-codex", "key": "REDACTED" }
  },
  "lastGood": { "openai-codex": "openai-codex:p2" },
  "usageStats": {
    "openai-codex:p1": {
      "lastUsed": 1799999990000,
      "cooldownUntil": 1800000300000,
      "errorCount": 2,
      "failureCounts": { "timeout": 1, "rate_limit": 1 },
      "lastFailureAt": 1799999995000,
      "cooldownModel": "gpt-5"
    },
    "openai-codex:p2": {
      "lastUsed": 1799999000000,
      "disabledUntil": 1800000100000,
      "disabledReason": "billing",
      "errorCount": 0
    }
  }
}"#;

#[tokio::test(start_paused = true)]
async fn a_real_openclaw_file_loads_and_its_other_keys_survive_a_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth-profiles.json");
    std::fs::write(&path, OPENCLAW_FILE).unwrap();
    // p1 cools until WALL+300 s, p2 is disabled (billing) until WALL+100 s: nothing available.
    let t = Scripted::new(|_, _| Reply::Ok);
    let e = engine_at(&path, WALL, t.clone()).unwrap();
    let r = e.handle(llm(), 0).await;
    assert!(!r.is_ok());
    assert_eq!(
        r.user_error.as_deref(),
        Some("No available auth profile for openai-codex (all in cooldown or unavailable).")
    );
    assert!(t.sent().is_empty());
    drop(e);
    // 150 s later p2's billing window is over; its success is written back.
    let e = engine_at(&path, WALL + 150_000, t.clone()).unwrap();
    assert!(e.handle(llm(), 0).await.is_ok());
    assert_eq!(t.profiles(), ["openai-codex:p2"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["profiles"]["openai-codex:p1"]["type"], "oauth");
    assert_eq!(json["lastGood"]["openai-codex"], "openai-codex:p2");
    assert_eq!(
        json["usageStats"]["openai-codex:p1"]["cooldownModel"],
        "gpt-5"
    );
    assert_eq!(
        json["usageStats"]["openai-codex:p1"]["cooldownUntil"],
        1_800_000_300_000u64
    );
    assert!(
        json["usageStats"]["openai-codex:p2"]
            .get("disabledUntil")
            .is_none()
    );
}

#[test]
fn a_malformed_store_is_an_error_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth-profiles.json");
    std::fs::write(
        &path,
        "{\n  \"usageStats\": { \"p\": { \"errorCount\": \"many\" } }\n}",
    )
    .unwrap();
    let err = CooldownStore::load(&path).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Parse { line: 2, .. }), "{msg}");
    assert!(msg.contains("auth-profiles.json:2:"), "{msg}");
}

#[test]
fn a_failed_rename_leaves_the_previous_content_intact_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth-profiles.json");
    let mut store = CooldownStore::load(&path).unwrap();
    store.mark_failure("p1", Reason::RateLimit, 5_000, 1_000, u64::MAX);
    store.save().unwrap();
    let before = std::fs::read(&path).unwrap();
    // The target becomes a non-empty directory (the rename fails for root too) holding the
    // previous content.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("previous.json"), &before).unwrap();
    store.mark_failure("p2", Reason::Timeout, 9_000, 2_000, u64::MAX);
    let err = store.save().unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Write { .. }), "{msg}");
    assert!(
        msg.contains("auth-profiles.json") && msg.contains("previous file left intact"),
        "{msg}"
    );
    assert_eq!(std::fs::read(path.join("previous.json")).unwrap(), before);
    // No temp file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["auth-profiles.json"], "{names:?}");
}

#[test]
fn an_unwritable_location_is_a_clear_error_and_the_old_file_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("auth-profiles.json");
    let mut store = CooldownStore::load(&good).unwrap();
    store.mark_failure("p1", Reason::Timeout, 5_000, 1_000, u64::MAX);
    store.save().unwrap();
    let before = std::fs::read(&good).unwrap();
    // A second store whose parent directory turns out to be a regular file: no temp file can
    // be created there.
    let bad = dir.path().join("sub").join("nested.json");
    let mut other = CooldownStore::load(&bad).unwrap();
    std::fs::write(dir.path().join("sub"), b"not a directory").unwrap();
    other.mark_failure("p1", Reason::Timeout, 7_000, 1_000, u64::MAX);
    let msg = other.save().unwrap_err().to_string();
    assert!(
        msg.contains("nested.json") && msg.contains("cannot write"),
        "{msg}"
    );
    assert_eq!(std::fs::read(&good).unwrap(), before);
}

#[test]
fn a_crash_before_the_rename_leaves_the_previous_file_complete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth-profiles.json");
    let mut store = CooldownStore::load(&path).unwrap();
    store.mark_failure("p1", Reason::Timeout, 5_000, 1_000, u64::MAX);
    store.save().unwrap();
    // What a crash mid-write leaves: a torn temp file beside the store, never the store itself.
    std::fs::write(
        dir.path().join(".rehearse-tmp-crash"),
        b"{\"usageStats\": {\"p1\": {\"cooldo",
    )
    .unwrap();
    let loaded = CooldownStore::load(&path).unwrap();
    assert_eq!(loaded.stats("p1").unwrap().cooldown_until, Some(5_000));
}

#[test]
fn readers_never_see_a_torn_store_while_it_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth-profiles.json");
    let mut store = CooldownStore::load(&path).unwrap();
    store.save().unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let text = std::fs::read_to_string(&path).unwrap();
                serde_json::from_str::<serde_json::Value>(&text).expect("a complete JSON document");
                reads += 1;
            }
            reads
        })
    };
    for i in 0..60u64 {
        // Sizes vary so a non-atomic rewrite would be caught half-way.
        store.mark_failure(
            &format!("profile-{i}"),
            Reason::Timeout,
            i * 1_000,
            i,
            u64::MAX,
        );
        store.save().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(CooldownStore::load(&path).unwrap().all().len(), 60);
}

#[tokio::test(start_paused = true)]
async fn the_engine_keeps_serving_when_the_store_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth-profiles.json");
    let e = engine_at(&path, WALL, p1_rate_limited()).unwrap();
    std::fs::create_dir_all(path.join("blocker")).unwrap();
    assert!(e.handle(llm(), 0).await.is_ok());
    let err = e.store_error().expect("the write error is reported");
    assert!(err.contains("auth-profiles.json"), "{err}");
    assert!(
        e.store_snapshot()
            .stats("openai-codex:p1")
            .unwrap()
            .cooldown_until
            .is_some()
    );
}

#[test]
fn a_store_path_that_is_a_directory_fails_engine_construction_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let err = engine_at(dir.path(), WALL, Scripted::new(|_, _| Reply::Ok)).unwrap_err();
    assert!(
        matches!(err, ConfigError::Store(StoreError::Read { .. })),
        "{err}"
    );
    assert!(err.to_string().contains(&dir.path().display().to_string()));
}
