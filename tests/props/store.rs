//! The cooldown store file (`auth-profiles-*.json`, shaped like OpenClaw's): no panic loading
//! any content, errors located inside it, and what the engine writes loads back the same.

use proptest::prelude::*;
use rehearse::engine::Reason;
use rehearse::engine::failover::store::{CooldownStore, StoreError};

use super::common::{apply, assert_inside, config, edits, noise};

const SAMPLE: &str = r#"{
  "version": 1,
  "profiles": {"openai-codex:default": {"provider": "openai-codex"}},
  "usageStats": {
    "openai-codex:default": {"lastUsed": 1790000000000, "cooldownUntil": 1790000010000,
      "errorCount": 2, "failureCounts": {"timeout": 2}, "lastFailureAt": 1790000000000,
      "cooldownReason": "timeout", "someFutureKey": [1, 2]}
  }
}
"#;

fn load_located(text: &str) -> Option<CooldownStore> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("auth-profiles.json");
    std::fs::write(&path, text).expect("write");
    match CooldownStore::load(&path) {
        Ok(s) => Some(s),
        Err(StoreError::Parse { line, column, .. }) => {
            assert_inside(text, line, column, "store parse error");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Used(usize, u64),
    Success(usize, u64),
    Failure(usize, Reason, u64, u64),
}

fn op() -> impl Strategy<Value = Op> {
    let reason = prop_oneof![
        Just(Reason::Timeout),
        Just(Reason::RateLimit),
        Just(Reason::Billing),
    ];
    prop_oneof![
        (0..4usize, any::<u64>()).prop_map(|(i, t)| Op::Used(i, t)),
        (0..4usize, any::<u64>()).prop_map(|(i, t)| Op::Success(i, t)),
        (0..4usize, reason, any::<u64>(), any::<u64>())
            .prop_map(|(i, r, u, t)| Op::Failure(i, r, u, t)),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_content_loads_or_fails_located(text in noise(), edits in edits(), mutate in any::<bool>()) {
        let text = if mutate { apply(SAMPLE, &edits) } else { text };
        load_located(&text);
    }

    #[test]
    fn what_the_engine_writes_loads_back(ops in prop::collection::vec(op(), 0..20), ids in prop::collection::vec(any::<String>(), 4)) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("auth-profiles.json");
        let mut store = CooldownStore::load(&path).expect("a missing file is an empty store");
        for op in &ops {
            match op {
                Op::Used(i, t) => store.mark_used(&ids[*i], *t),
                Op::Success(i, t) => { store.mark_success(&ids[*i], *t); }
                Op::Failure(i, r, until, t) => store.mark_failure(&ids[*i], *r, *until, *t, 60_000),
            }
        }
        store.save().expect("save");
        let back = CooldownStore::load(&path).expect("what the engine wrote loads");
        prop_assert_eq!(back.all(), store.all());
    }
}
