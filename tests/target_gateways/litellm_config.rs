//! The user's own LiteLLM config checked against the pinned release's own keys before anything
//! starts: a key it does not take is bad input (exit 2) named at its `file:line:col`, with the
//! closest key the release has; nothing is started.

use super::support::{command, one_at_a_time, scenario, show};

#[test]
fn a_user_config_key_the_release_does_not_take_is_exit_2_at_its_position() {
    let _one = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("litellm.yaml"),
        "router_settings:\n  routing_strategy: simple-shuffle\n  cooldown_tme: 30\n",
    )
    .unwrap();
    let path = scenario(
        tmp.path(),
        "litellm-503-key-a",
        "config = \"litellm.yaml\"",
        "",
    );
    let t = tokio::time::Instant::now();
    let out = command(&path, tmp.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        err.contains("litellm.yaml:3:3: `router_settings.cooldown_tme` is not a key LiteLLM"),
        "{}",
        show(&out)
    );
    assert!(
        err.contains("did you mean `cooldown_time`?"),
        "{}",
        show(&out)
    );
    assert!(
        !err.contains("starting LiteLLM"),
        "nothing started: {}",
        show(&out)
    );
    assert!(t.elapsed().as_secs() < 120, "refused before any run");

    // A YAML error is located too, at validation (no release asked).
    std::fs::write(tmp.path().join("litellm.yaml"), "router_settings: [1, 2\n").unwrap();
    let out = command(&path, tmp.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("litellm.yaml:"),
        "{}",
        show(&out)
    );
}
