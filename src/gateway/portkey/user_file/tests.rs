use super::*;
use crate::gateway::openclaw::{ProfileSpec, ProviderSpec};

fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("portkey.json");
    std::fs::write(&p, text).unwrap();
    (d, p)
}

fn config() -> GatewayConfig {
    let p = |id: &str, key: &str| ProfileSpec {
        id: id.into(),
        provider: "mockai".into(),
        key: key.into(),
    };
    GatewayConfig {
        providers: vec![ProviderSpec {
            id: "mockai".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            timeout_seconds: 30,
            models: vec![],
        }],
        profiles: vec![p("mockai:a", "sk-A"), p("mockai:c", "sk-C")],
        primary: "mockai/gpt-4o".into(),
        fallbacks: vec![],
        agent_timeout_seconds: 600,
    }
}

const GOOD: &str = r#"{
  "strategy": {"mode": "fallback", "on_status_codes": [429, 503]},
  "cache": {"mode": "simple"},
  "targets": [
    {"profile": "mockai:a", "retry": {"attempts": 2, "on_status_codes": [503]}, "api_key": "mine"},
    {"profile": "mockai:c", "override_params": {"model": "gpt-4o-mini"}}
  ]
}"#;

#[test]
fn a_misspelt_key_is_refused_at_its_line_and_column() {
    let text = "{\n  \"targets\": [\n    {\"profile\": \"mockai:a\",\n     \"retry\": {\"atempts\": 2}}\n  ]\n}\n";
    let (_d, p) = write(text);
    let e = UserFile::load(&p).unwrap_err().to_string();
    assert!(e.contains("portkey.json:4:16: config.targets[0].retry.atempts"), "{e}");
    assert!(e.contains("did you mean `attempts`"), "{e}");
    let (_d, p) = write(r#"{"targets": [{"profile": "mockai:a", "guardrails": []}]}"#);
    let e = UserFile::load(&p).unwrap_err().to_string();
    assert!(e.contains("config.targets[0].guardrails: not a key the harness knows"), "{e}");
    let (_d, p) = write(r#"{"targets": [{"api_key": "x"}]}"#);
    let e = UserFile::load(&p).unwrap_err().to_string();
    assert!(e.contains("must name the [[profile]]"), "{e}");
    let (_d, p) = write(r#"{"strategy": {"mode": "conditional"}, "targets": [{"profile": "a"}]}"#);
    assert!(UserFile::load(&p).unwrap_err().to_string().contains("strategy.mode"));
    let (_d, p) = write("{\"targets\": [}");
    assert!(UserFile::load(&p).unwrap_err().to_string().contains("portkey.json:1:"));
}

#[test]
fn the_overlay_keys_each_target_and_lists_every_change() {
    let (_d, p) = write(GOOD);
    let f = UserFile::load(&p).unwrap();
    assert_eq!(
        f.profiles(),
        [("config.targets[0]".into(), "mockai:a".into()), ("config.targets[1]".into(), "mockai:c".into())]
    );
    let (r, over) = overlay(&f.value, &config()).unwrap();
    let labels: Vec<String> = r.leaves.iter().map(Leaf::label).collect();
    assert_eq!(labels, ["mockai:a gpt-4o", "mockai:c gpt-4o-mini"]);
    let t0 = &r.config["targets"][0];
    assert_eq!(t0["api_key"], "sk-A");
    assert_eq!(t0["custom_host"], "http://127.0.0.1:9/v1");
    assert_eq!(t0["provider"], "openai");
    assert_eq!(t0["override_params"]["model"], "gpt-4o");
    assert!(t0.get("profile").is_none(), "the harness's own key is not sent");
    assert_eq!(r.config["targets"][1]["api_key"], "sk-C");
    assert!(r.config.get("cache").is_none());
    let all = over.join("\n");
    for want in [
        "config.cache: removed",
        "config.targets[0].api_key: yours replaced",
        "config.targets[0].override_params.model: `gpt-4o` added",
        "config.targets[1].provider: \"openai\" added",
    ] {
        assert!(all.contains(want), "{want} not in\n{all}");
    }
    assert!(!all.contains("mine") && !all.contains("sk-A"), "{all}");
    let mut bad = f.value.clone();
    bad["targets"][1]["profile"] = json!("mockai:z");
    assert!(overlay(&bad, &config()).unwrap_err().0.contains("`mockai:z` is not a [[profile]] id"));
}
