use super::*;

fn spec(toml_text: &str) -> TargetSpec {
    toml::from_str(toml_text).unwrap()
}

#[test]
fn embedded_is_the_default_and_needs_nothing() {
    let t = TargetSpec::default();
    assert_eq!(t.kind, TargetKind::Embedded);
    assert!(!t.kind.is_external());
    assert!(t.validate().is_ok());
    assert_eq!(t.provider_timeout_s(), 30);
}

#[test]
fn http_needs_a_url_and_keys_belong_to_their_kind() {
    assert_eq!(
        spec("kind = \"http\"").validate().unwrap_err().field,
        "kind"
    );
    assert!(
        spec("kind = \"http\"\nurl = \"http://127.0.0.1:9\"")
            .validate()
            .is_ok()
    );
    assert_eq!(
        spec("kind = \"http\"\nurl = \"ftp://x\"")
            .validate()
            .unwrap_err()
            .field,
        "url"
    );
    assert_eq!(
        spec("url = \"http://127.0.0.1:9\"")
            .validate()
            .unwrap_err()
            .field,
        "url"
    );
    assert_eq!(
        spec("kind = \"http\"\nurl = \"http://127.0.0.1:9\"\ncommand = \"/x\"")
            .validate()
            .unwrap_err()
            .field,
        "command"
    );
    assert_eq!(
        spec("kind = \"openclaw\"\nprovider_timeout = \"500ms\"")
            .validate()
            .unwrap_err()
            .field,
        "provider_timeout"
    );
    assert!(
        spec("kind = \"openclaw\"\nprovider_timeout = \"5s\"")
            .validate()
            .is_ok()
    );
    assert!(toml::from_str::<TargetSpec>("kind = \"nginx\"").is_err());
}

#[test]
fn config_and_health_path_belong_to_their_kind_and_are_checked() {
    assert!(spec("kind = \"openclaw\"\nconfig = \"gw.json5\"").validate().is_ok());
    assert_eq!(
        spec("kind = \"http\"\nurl = \"http://127.0.0.1:9\"\nconfig = \"gw.json5\"")
            .validate()
            .unwrap_err()
            .field,
        "config"
    );
    let http = "kind = \"http\"\nurl = \"http://127.0.0.1:9\"\n";
    assert!(spec(&format!("{http}health_path = \"/healthz\"")).validate().is_ok());
    assert!(
        spec(&format!("{http}health_path = \"/healthz\"\nready_timeout = \"30s\""))
            .validate()
            .is_ok()
    );
    assert_eq!(
        spec(&format!("{http}ready_timeout = \"30s\"")).validate().unwrap_err().field,
        "ready_timeout"
    );
    for bad in ["healthz", "//evil/x", "/a b", ""] {
        let e = spec(&format!("{http}health_path = \"{bad}\"")).validate().unwrap_err();
        assert_eq!(e.field, "health_path", "{bad}");
    }
    assert_eq!(
        spec("kind = \"openclaw\"\nhealth_path = \"/healthz\"")
            .validate()
            .unwrap_err()
            .field,
        "health_path"
    );
}

#[test]
fn the_upstream_listens_on_loopback_only() {
    let u: UpstreamSpec = toml::from_str("listen = \"127.0.0.1:18081\"").unwrap();
    assert!(u.validate().is_ok());
    let u: UpstreamSpec = toml::from_str("listen = \"0.0.0.0:18081\"").unwrap();
    assert!(u.validate().unwrap_err().message.contains("loopback"));
    assert!(toml::from_str::<UpstreamSpec>("listen = \"localhost\"").is_err());
}

#[test]
fn a_metrics_token_goes_with_a_metrics_url_of_an_http_target() {
    let base = "kind = \"http\"\nurl = \"http://127.0.0.1:9\"\n";
    let ok = spec(&format!(
        "{base}metrics_url = \"http://127.0.0.1:9/metrics\"\nmetrics_token_env = \"LITELLM_KEY\""
    ));
    assert!(ok.validate().is_ok());
    assert_eq!(
        ok.external().unwrap().metrics_token_env.as_deref(),
        Some("LITELLM_KEY")
    );
    for (bad, why) in [
        (format!("{base}metrics_token_env = \"K\""), "give `metrics_url`"),
        (
            format!("{base}metrics_url = \"http://127.0.0.1:9/m\"\nmetrics_token_env = \"\""),
            "environment variable",
        ),
        (
            "kind = \"openclaw\"\nmetrics_token_env = \"K\"".to_string(),
            "only for `kind = \"http\"`",
        ),
    ] {
        let e = spec(&bad).validate().unwrap_err();
        assert_eq!(e.field, "metrics_token_env", "{bad}");
        assert!(e.message.contains(why), "{bad}: {e:?}");
    }
}

#[test]
fn portkey_takes_retries_config_versions_and_timeouts_and_nothing_of_the_others() {
    let ok = |t: &str| spec(t).validate().map_err(|e| e.field).err();
    assert_eq!(ok("kind = \"portkey\""), None);
    assert_eq!(ok("kind = \"portkey\"\nready_timeout = \"30s\"\n[router]\nretries = 2"), None);
    assert_eq!(ok("kind = \"portkey\"\nconfig = \"portkey.json\"\nversions = [\"1.15.2\"]"), None);
    assert_eq!(ok("kind = \"portkey\"\n[router]\nretries = 6"), Some("router.retries".into()));
    assert_eq!(ok("kind = \"portkey\"\n[router]\ncooldown = \"5s\""), Some("router".into()));
    assert_eq!(
        ok("kind = \"portkey\"\nconfig = \"p.json\"\n[router]\nretries = 1"),
        Some("router.retries".into()),
        "the user's config says its own retries"
    );
    assert_eq!(ok("kind = \"http\"\nurl = \"http://127.0.0.1:9\"\n[router]\nretries = 1"), Some("router".into()));
    for key in ["command = \"x\"", "url = \"http://127.0.0.1:9\"", "metrics_url = \"http://127.0.0.1:9\"", "agent_timeout = \"5s\""] {
        assert!(ok(&format!("kind = \"portkey\"\n{key}")).is_some(), "{key}");
    }
    let asked = spec("kind = \"portkey\"\n[router]\nretries = 2").external().unwrap();
    assert_eq!(asked.gateway, Asked::Portkey { retries: 2 });
}

#[test]
fn litellm_takes_config_versions_ready_timeout_and_a_router_and_nothing_of_http() {
    let t = spec(
        "kind = \"litellm\"\nconfig = \"ll.yaml\"\nversions = [\"1.108.7\"]\nready_timeout = \"60s\"\n\
         [router]\nretries = 2\nallowed_fails = 1\ncooldown = \"25s\"",
    );
    assert!(t.kind.is_external() && t.kind.is_supervised());
    t.validate().unwrap();
    let Some(External {
        gateway: Asked::Litellm { versions, router },
        ..
    }) = t.external()
    else {
        panic!("a litellm target asks for LiteLLM");
    };
    assert_eq!(versions, ["1.108.7"]);
    assert_eq!(router.cooldown, Some(Duration::from_secs(25)));
    for (text, field) in [
        ("kind = \"litellm\"\nurl = \"http://127.0.0.1:9\"", "url"),
        ("kind = \"litellm\"\ncommand = \"/bin/litellm\"", "command"),
        ("kind = \"litellm\"\n[router]\ncooldown = \"10ms\"", "router.cooldown"),
        ("kind = \"openclaw\"\n[router]\nretries = 1", "router"),
    ] {
        assert_eq!(spec(text).validate().unwrap_err().field, field, "{text}");
    }
    assert!(toml::from_str::<TargetSpec>("kind = \"litellm\"\n[router]\nretires = 1").is_err());
}
