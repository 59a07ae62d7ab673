//! The user's configuration ([`super::user_config`]) as the base of `openclaw.json`, with what
//! the rehearsal must own laid over it and everything that talks to the outside world turned
//! off, whatever the user's configuration says (docs/openclaw.md, "Your own config").
//!
//! Owned (the generated configuration's value wins; listed as overridden where the user's
//! differed): `models.mode`, `models.catalogRefresh`, every provider's `baseUrl` (the mock
//! upstream; a model's own `baseUrl` removed), `api`, `apiKey` (removed: keys are seeded per
//! profile), every model's `maxTokens` (how much the mock streams back), the scenario's
//! providers and models (added when missing), `auth` (the seeded profiles and their order),
//! `agents.defaults.model` (primary; fallbacks as the generated configuration decided), a
//! model set per agent entry (removed), `gateway` port, bind, mode, auth, chat-completions
//! endpoint, `tls`, `customBindHost`, `logging.file` (and a level that would hide decisions),
//! `update`, `proxy`. Provider and agent timeouts are the user's unless the scenario sets them.
//!
//! Turned off: messaging channels (removed), heartbeats (`every: "0m"`), cron, hooks, plugin
//! entries and plugin load paths, MCP servers, mDNS and wide-area discovery, Tailscale and a
//! remote gateway, push relays, telemetry, OpenTelemetry export, the browser, web search and
//! fetch tools.

use serde_json::{Map, Value, json};

/// Which of the user's values the scenario overrides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OverlayOptions {
    /// `[target] provider_timeout` was given: it wins over every provider's `timeoutSeconds`.
    pub provider_timeout: bool,
    /// `[target] agent_timeout` was given: it wins over `agents.defaults.timeoutSeconds`.
    pub agent_timeout: bool,
}

/// The effective configuration and what the harness changed in the user's.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlaid {
    /// The configuration the gateway is given.
    pub config: Value,
    /// Key paths whose user value the harness replaced, removed or added to (with why).
    pub overridden: Vec<String>,
    /// What the harness turned off (key path and how).
    pub turned_off: Vec<String>,
}

/// Levels at which OpenClaw would not log the decisions the harness reads.
const QUIET_LEVELS: [&str; 4] = ["silent", "fatal", "error", "warn"];

struct Builder {
    out: Value,
    overridden: Vec<String>,
    turned_off: Vec<String>,
}

fn obj(v: &mut Value) -> &mut Map<String, Value> {
    if !v.is_object() {
        *v = json!({});
    }
    match v {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

/// The node at `path`, created (as objects) on the way.
fn node<'a>(root: &'a mut Value, path: &[&str]) -> &'a mut Value {
    let mut at = root;
    for k in path {
        at = obj(at).entry(k.to_string()).or_insert_with(|| json!({}));
    }
    at
}

fn get<'a>(root: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(root, |v, k| v.get(k))
}

impl Builder {
    /// Sets `path` to `v`; an existing different value is listed as overridden (`why`).
    fn own(&mut self, path: &[&str], v: Value, why: &str) {
        let Some((last, parent)) = path.split_last() else {
            return;
        };
        let p = obj(node(&mut self.out, parent));
        if let Some(old) = p.insert(last.to_string(), v.clone())
            && old != v
        {
            self.overridden.push(format!("{}: {why}", path.join(".")));
        }
    }

    /// Removes `path`; listed as overridden (`why`) when it was there.
    fn remove(&mut self, path: &[&str], why: &str) -> Option<Value> {
        let (last, parent) = path.split_last()?;
        let removed = get(&self.out, parent)?.as_object()?.contains_key(*last);
        if !removed {
            return None;
        }
        let old = obj(node(&mut self.out, parent)).remove(*last);
        self.overridden.push(format!("{}: {why}", path.join(".")));
        old
    }

    /// Sets `path` to `v`, a switch that stops outside traffic, when the user's configuration
    /// has `section` (or `always`: on by default); listed.
    fn off(&mut self, path: &[&str], v: Value, section: &[&str], always: bool) {
        if !always && get(&self.out, section).is_none() {
            return;
        }
        let Some((last, parent)) = path.split_last() else {
            return;
        };
        let old = obj(node(&mut self.out, parent)).insert(last.to_string(), v.clone());
        let was = old.map_or("unset".to_string(), |o| o.to_string());
        self.turned_off
            .push(format!("{} = {v} (was {was})", path.join(".")));
    }

    /// Removes `path` (a section that reaches outside); listed when it was there.
    fn drop_section(&mut self, path: &[&str], what: &str) {
        let Some((last, parent)) = path.split_last() else {
            return;
        };
        if get(&self.out, parent)
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key(*last))
        {
            obj(node(&mut self.out, parent)).remove(*last);
            self.turned_off
                .push(format!("{} removed ({what})", path.join(".")));
        }
    }

    fn keys(&self, path: &[&str]) -> Vec<String> {
        get(&self.out, path)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// Lays `generated` (the harness's own `openclaw.json` for this run) over `user`.
pub fn overlay(user: &Value, generated: &Value, opts: OverlayOptions) -> Overlaid {
    let mut b = Builder {
        out: user.clone(),
        overridden: Vec::new(),
        turned_off: Vec::new(),
    };
    let g = |path: &[&str]| get(generated, path).cloned().unwrap_or(Value::Null);
    let up = "points at the mock upstream";

    // Models: the catalog is the configured providers only, all at the mock upstream.
    b.own(&["models", "mode"], g(&["models", "mode"]), "only the configured providers");
    b.own(
        &["models", "catalogRefresh"],
        g(&["models", "catalogRefresh"]),
        "no remote catalog",
    );
    let gen_providers = get(generated, &["models", "providers"])
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let base_url = gen_providers
        .values()
        .find_map(|p| p.get("baseUrl").cloned())
        .unwrap_or(Value::Null);
    let mut ids = b.keys(&["models", "providers"]);
    for id in gen_providers.keys() {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    for id in &ids {
        let at = ["models", "providers", id.as_str()];
        let gp = gen_providers.get(id);
        if get(&b.out, &at).is_none() {
            if let Some(gp) = gp {
                obj(node(&mut b.out, &at[..2])).insert(id.clone(), gp.clone());
                b.overridden
                    .push(format!("{}: added (the scenario's provider)", at.join(".")));
            }
            continue;
        }
        b.own(&[&at[..], &["baseUrl"]].concat(), base_url.clone(), up);
        b.own(
            &[&at[..], &["api"]].concat(),
            json!(super::user_config::UPSTREAM_API),
            "what the mock upstream speaks",
        );
        b.remove(
            &[&at[..], &["apiKey"]].concat(),
            "removed: the scenario's keys are seeded per profile",
        );
        let timeout = [&at[..], &["timeoutSeconds"]].concat();
        if let Some(gp) = gp
            && (opts.provider_timeout || get(&b.out, &timeout).is_none())
        {
            let v = gp.get("timeoutSeconds").cloned().unwrap_or(Value::Null);
            b.own(&timeout, v, "[target] provider_timeout");
        }
        let models_at = [&at[..], &["models"]].concat();
        let mut models: Vec<Value> = get(&b.out, &models_at)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, m) in models.iter_mut().enumerate() {
            let o = obj(m);
            let mid = o.get("id").and_then(Value::as_str).unwrap_or("").to_string();
            if o.remove("baseUrl").is_some() {
                b.overridden.push(format!(
                    "{}[{i}].baseUrl: removed (the provider's {up})",
                    models_at.join(".")
                ));
            }
            let want = gp
                .and_then(|gp| gp.get("models"))
                .and_then(Value::as_array)
                .and_then(|a| a.iter().find(|x| x.get("id").and_then(Value::as_str) == Some(&mid)))
                .or_else(|| {
                    gen_providers
                        .values()
                        .flat_map(|p| p.get("models").and_then(Value::as_array).into_iter().flatten())
                        .next()
                })
                .and_then(|x| x.get("maxTokens").cloned());
            if let Some(want) = want
                && o.insert("maxTokens".into(), want.clone()).is_some_and(|old| old != want)
            {
                b.overridden.push(format!(
                    "{}[{i}].maxTokens: {want} (the mock upstream streams back that many tokens)",
                    models_at.join(".")
                ));
            }
        }
        for gm in gp
            .and_then(|gp| gp.get("models"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let gid = gm.get("id");
            if !models.iter().any(|m| m.get("id") == gid) {
                models.push(gm.clone());
                b.overridden.push(format!(
                    "{}: added {} (the scenario's model)",
                    models_at.join("."),
                    gid.cloned().unwrap_or(Value::Null)
                ));
            }
        }
        *node(&mut b.out, &models_at) = Value::Array(models);
    }

    // The profiles and their order are the seeded ones.
    b.own(&["auth"], g(&["auth"]), "the scenario's profiles, seeded, in its order");
    // The agent: the traffic's model first, then the fallbacks the scenario runs.
    if get(&b.out, &["agents", "defaults", "model"]).is_some_and(|m| !m.is_object()) {
        b.remove(&["agents", "defaults", "model"], "a model object instead");
    }
    for k in ["primary", "fallbacks"] {
        b.own(
            &["agents", "defaults", "model", k],
            g(&["agents", "defaults", "model", k]),
            "the scenario's traffic model and fallbacks",
        );
    }
    if opts.agent_timeout || get(&b.out, &["agents", "defaults", "timeoutSeconds"]).is_none() {
        b.own(
            &["agents", "defaults", "timeoutSeconds"],
            g(&["agents", "defaults", "timeoutSeconds"]),
            "[target] agent_timeout",
        );
    }
    for e in b.keys(&["agents", "entries"]) {
        b.remove(
            &["agents", "entries", &e, "model"],
            "removed: the turns go to the scenario's model chain",
        );
    }

    // The gateway the harness drives.
    for k in ["mode", "port", "bind", "auth"] {
        b.own(&["gateway", k], g(&["gateway", k]), "the harness's loopback gateway");
    }
    b.own(
        &["gateway", "http", "endpoints", "chatCompletions", "enabled"],
        json!(true),
        "the harness sends its turns there",
    );
    b.remove(&["gateway", "tls"], "removed: the harness speaks plain HTTP on loopback");
    b.remove(&["gateway", "customBindHost"], "removed: loopback only");
    b.own(&["logging", "file"], g(&["logging", "file"]), "in the run directory");
    if get(&b.out, &["logging", "level"])
        .and_then(Value::as_str)
        .is_some_and(|l| QUIET_LEVELS.contains(&l))
    {
        b.own(&["logging", "level"], json!("info"), "its decisions are logged at info");
    }
    b.own(&["update", "checkOnStart"], json!(false), "no update check");
    b.off(&["update", "auto", "enabled"], json!(false), &["update", "auto"], false);
    b.remove(&["proxy"], "removed: the mock upstream is on loopback");

    // Everything that talks to the outside world.
    for ch in b.keys(&["channels"]) {
        b.turned_off
            .push(format!("channels.{ch} removed (messaging channel)"));
    }
    if let Some(m) = b.out.as_object_mut() {
        m.remove("channels");
    }
    b.off(
        &["agents", "defaults", "heartbeat", "every"],
        json!("0m"),
        &[],
        true,
    );
    for e in b.keys(&["agents", "entries"]) {
        let hb = ["agents", "entries", e.as_str(), "heartbeat"];
        if get(&b.out, &hb).is_some() {
            b.off(&[&hb[..], &["every"]].concat(), json!("0m"), &hb, true);
        }
    }
    b.off(&["cron", "enabled"], json!(false), &[], true);
    b.off(&["hooks", "enabled"], json!(false), &["hooks"], false);
    for p in b.keys(&["plugins", "entries"]) {
        b.off(
            &["plugins", "entries", &p, "enabled"],
            json!(false),
            &["plugins", "entries", &p],
            true,
        );
    }
    b.drop_section(&["plugins", "load"], "plugins loaded from paths");
    for s in b.keys(&["mcp", "servers"]) {
        b.off(
            &["mcp", "servers", &s, "enabled"],
            json!(false),
            &["mcp", "servers", &s],
            true,
        );
    }
    b.off(&["discovery", "mdns", "mode"], json!("off"), &[], true);
    b.drop_section(&["discovery", "wideArea"], "wide-area discovery");
    b.off(
        &["gateway", "tailscale", "mode"],
        json!("off"),
        &["gateway", "tailscale"],
        false,
    );
    b.drop_section(&["gateway", "remote"], "a remote gateway");
    b.drop_section(&["gateway", "push"], "push relays");
    b.off(&["telemetry", "enabled"], json!(false), &["telemetry"], false);
    b.off(
        &["diagnostics", "otel", "enabled"],
        json!(false),
        &["diagnostics", "otel"],
        false,
    );
    b.off(&["browser", "enabled"], json!(false), &["browser"], false);
    for t in ["search", "fetch"] {
        b.off(
            &["tools", "web", t, "enabled"],
            json!(false),
            &["tools", "web", t],
            false,
        );
    }
    Overlaid {
        config: b.out,
        overridden: b.overridden,
        turned_off: b.turned_off,
    }
}

/// Key names whose string values are secrets (case-insensitive substrings).
const SECRET_NAMES: [&str; 6] = ["token", "apikey", "secret", "password", "authorization", "cookie"];

/// `config` with every secret-looking string (a value under a key named like a token, key,
/// secret or password, and every string in `secrets`) replaced by its fingerprint: what is
/// kept in the run directory.
pub fn fingerprinted(config: &Value, secrets: &[&str]) -> Value {
    fn walk(v: &Value, secret_key: bool, secrets: &[&str]) -> Value {
        match v {
            Value::String(s) if secret_key || secrets.contains(&s.as_str()) => {
                json!(format!("fingerprint:{}", crate::util::fingerprint(s)))
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let lower = k.to_ascii_lowercase();
                        let named = lower == "key" || SECRET_NAMES.iter().any(|n| lower.contains(n));
                        (k.clone(), walk(x, named || (secret_key && !x.is_string()), secrets))
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, secret_key, secrets)).collect()),
            other => other.clone(),
        }
    }
    walk(config, false, secrets)
}

#[cfg(test)]
mod tests;
