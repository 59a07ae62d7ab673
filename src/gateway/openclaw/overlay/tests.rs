use super::*;
use crate::gateway::openclaw::config::{GatewayConfig, GatewaySettings};
use crate::gateway::openclaw::user_config::UserConfig;
use crate::gateway::openclaw::{ModelSpec, ProfileSpec, ProviderSpec};

fn generated() -> Value {
    let provider = |id: &str, model: &str| ProviderSpec {
        id: id.into(),
        base_url: "http://127.0.0.1:4242/v1".into(),
        timeout_seconds: 30,
        models: vec![ModelSpec::new(model)],
    };
    let c = GatewayConfig {
        providers: vec![provider("fallback", "m2"), provider("mockai", "m1")],
        profiles: vec![
            ProfileSpec {
                id: "mockai:a".into(),
                provider: "mockai".into(),
                key: "key-A".into(),
            },
            ProfileSpec {
                id: "fallback:f".into(),
                provider: "fallback".into(),
                key: "key-F".into(),
            },
        ],
        primary: "mockai/m1".into(),
        fallbacks: vec!["fallback/m2".into()],
        agent_timeout_seconds: 600,
    };
    c.to_json(&GatewaySettings {
        port: 40001,
        token: "rehearse-gw-token".into(),
        log_file: "/run/x/openclaw.log".into(),
    })
}

fn user() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/openclaw/user-fallback.json5");
    UserConfig::load(std::path::Path::new(path)).unwrap().value
}

fn has(list: &[String], needle: &str) -> bool {
    list.iter().any(|l| l.contains(needle))
}

#[test]
fn what_the_rehearsal_owns_is_the_harnesss_and_listed() {
    let o = overlay(&user(), &generated(), OverlayOptions::default());
    let c = &o.config;
    assert_eq!(c["models"]["mode"], "replace");
    assert_eq!(c["models"]["catalogRefresh"]["enabled"], false);
    for p in ["mockai", "fallback"] {
        let p = &c["models"]["providers"][p];
        assert_eq!(p["baseUrl"], "http://127.0.0.1:4242/v1");
        assert_eq!(p["api"], "openai-completions");
        assert!(p.get("apiKey").is_none());
        // The user's timeout is theirs: the scenario did not set one.
        assert_eq!(p["timeoutSeconds"], 5);
        assert_eq!(p["models"][0]["maxTokens"], 16);
    }
    assert_eq!(c["auth"], generated()["auth"]);
    assert_eq!(c["agents"]["defaults"]["model"]["primary"], "mockai/m1");
    assert_eq!(c["agents"]["defaults"]["model"]["fallbacks"], json!(["fallback/m2"]));
    assert_eq!(c["agents"]["defaults"]["timeoutSeconds"], 600);
    assert_eq!(c["gateway"]["port"], 40001);
    assert_eq!(c["gateway"]["bind"], "loopback");
    assert_eq!(c["gateway"]["auth"]["token"], "rehearse-gw-token");
    assert_eq!(c["gateway"]["http"]["endpoints"]["chatCompletions"]["enabled"], true);
    assert_eq!(c["logging"]["file"], "/run/x/openclaw.log");
    assert_eq!(c["update"]["checkOnStart"], false);
    let ov = &o.overridden;
    for k in [
        "models.mode",
        "models.providers.mockai.baseUrl",
        "models.providers.mockai.apiKey",
        "models.providers.mockai.models[0].maxTokens",
        "gateway.port",
        "gateway.bind",
        "gateway.auth",
    ] {
        assert!(has(ov, &format!("{k}:")), "{k} not in {ov:#?}");
    }
    // What the user's config did not have is not "overridden".
    assert!(!has(ov, "models.providers.fallback.apiKey"), "{ov:#?}");
    assert!(!has(ov, "agents.defaults.model.fallbacks"), "same list: {ov:#?}");
}

#[test]
fn everything_that_talks_to_the_outside_is_off_whatever_the_user_says() {
    let o = overlay(&user(), &generated(), OverlayOptions::default());
    let c = &o.config;
    assert!(c.get("channels").is_none(), "{c:#}");
    assert_eq!(c["agents"]["defaults"]["heartbeat"]["every"], "0m");
    assert_eq!(c["cron"]["enabled"], false);
    assert_eq!(c["discovery"]["mdns"]["mode"], "off");
    let off = &o.turned_off;
    assert!(has(off, "channels.telegram removed"), "{off:#?}");
    assert!(has(off, "agents.defaults.heartbeat.every = \"0m\" (was \"5m\")"), "{off:#?}");
    assert!(has(off, "cron.enabled = false (was true)"), "{off:#?}");
    assert!(has(off, "discovery.mdns.mode = \"off\" (was \"minimal\")"), "{off:#?}");
    // Plugins, MCP servers, hooks and a remote gateway the user enabled.
    let mut u = user();
    u["plugins"] = json!({"entries": {"brave": {"enabled": true}}, "load": {"paths": ["/x"]}});
    u["mcp"] = json!({"servers": {"search": {"command": "npx"}}});
    u["hooks"] = json!({"enabled": true, "token": "hook-secret"});
    u["gateway"]["remote"] = json!({"url": "wss://gw.example"});
    u["gateway"]["tailscale"] = json!({"mode": "funnel"});
    let o = overlay(&u, &generated(), OverlayOptions::default());
    let c = &o.config;
    assert_eq!(c["plugins"]["entries"]["brave"]["enabled"], false);
    assert!(c["plugins"].get("load").is_none());
    assert_eq!(c["mcp"]["servers"]["search"]["enabled"], false);
    assert_eq!(c["hooks"]["enabled"], false);
    assert!(c["gateway"].get("remote").is_none());
    assert_eq!(c["gateway"]["tailscale"]["mode"], "off");
    for k in [
        "plugins.entries.brave.enabled",
        "plugins.load removed",
        "mcp.servers.search.enabled",
        "hooks.enabled",
        "gateway.remote removed",
        "gateway.tailscale.mode",
    ] {
        assert!(has(&o.turned_off, k), "{k} not in {:#?}", o.turned_off);
    }
    // Sections the user never had are not created (the release validates what it is given).
    let bare = overlay(&json!({}), &generated(), OverlayOptions::default()).config;
    for k in ["plugins", "mcp", "hooks", "telemetry", "browser", "tools", "proxy"] {
        assert!(bare.get(k).is_none(), "{k}: {bare:#}");
    }
}

#[test]
fn the_scenarios_timeouts_win_when_it_sets_them() {
    let opts = OverlayOptions {
        provider_timeout: true,
        agent_timeout: true,
    };
    let mut u = user();
    u["agents"]["defaults"]["timeoutSeconds"] = json!(90);
    let o = overlay(&u, &generated(), opts);
    assert_eq!(o.config["models"]["providers"]["mockai"]["timeoutSeconds"], 30);
    assert_eq!(o.config["agents"]["defaults"]["timeoutSeconds"], 600);
    assert!(has(&o.overridden, "models.providers.mockai.timeoutSeconds: [target] provider_timeout"));
    let kept = overlay(&u, &generated(), OverlayOptions::default());
    assert_eq!(kept.config["agents"]["defaults"]["timeoutSeconds"], 90);
    // A provider the user's config lacks is the scenario's, added.
    u["models"]["providers"].as_object_mut().unwrap().remove("fallback");
    let o = overlay(&u, &generated(), OverlayOptions::default());
    assert_eq!(o.config["models"]["providers"]["fallback"]["timeoutSeconds"], 30);
    assert!(has(&o.overridden, "models.providers.fallback: added"));
}

#[test]
fn the_kept_config_has_fingerprints_not_secrets() {
    let o = overlay(&user(), &generated(), OverlayOptions::default());
    let mut c = o.config.clone();
    c["channels"] = user()["channels"].clone();
    c["models"]["providers"]["mockai"]["headers"] = json!({"Authorization": "Bearer sk-hdr"});
    let kept = fingerprinted(&c, &["key-A"]);
    let text = kept.to_string();
    for secret in [
        "rehearse-gw-token",
        "AAE-not-a-real-telegram-bot-token",
        "Bearer sk-hdr",
    ] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert_eq!(
        kept["gateway"]["auth"]["token"],
        format!("fingerprint:{}", crate::util::fingerprint("rehearse-gw-token"))
    );
    // Numbers under token-named keys stay numbers.
    assert_eq!(kept["models"]["providers"]["mockai"]["models"][0]["maxTokens"], 16);
    assert_eq!(kept["gateway"]["auth"]["mode"], "token");
}
