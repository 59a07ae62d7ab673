//! A scenario's `[[fault]]` tables as the report's fault windows: the whole scope (route,
//! profile, model, first, probability), the window in scenario time, the requests each one
//! actually applied to (from the upstream's records), and the timeline lanes (deps) it can
//! touch — a `tool:crm_search` fault only crm_search, an `llm` fault with a `profile` only that
//! profile's endpoint `PROVIDER/REGION/FP` (FP being the fingerprint of the token the fault
//! matches), with a `model` only that model's provider's endpoints.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::Profile;
use crate::report::model::{FaultHit, FaultWindow};
use crate::upstream::FaultSpec;
use crate::upstream::faults::RouteSel;
use crate::util::speed::nominal_ms;
use crate::wire::dep::provider_of;

fn ms(d: std::time::Duration) -> u64 {
    nominal_ms(d).max(0) as u64
}

/// `kind`'s own settings as `key=value` pairs (`status=503`, `retry_after="120s"`), then the
/// envelope's `when` (`when=stream,!tools`) and the names of its `headers` (`headers=a,b`: names
/// only, a value may be anything the user wrote).
fn detail(f: &FaultSpec) -> String {
    let mut parts: Vec<String> = serde_json::to_value(&f.kind)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|o| {
            o.iter()
                .filter(|(k, _)| k.as_str() != "kind")
                .map(|(k, v)| format!("{k}={v}"))
                .collect()
        })
        .unwrap_or_default();
    if let Some(w) = &f.when {
        let keys = [("stream", w.stream), ("tools", w.tools), ("prefill", w.prefill)];
        let said: Vec<String> = keys
            .iter()
            .filter_map(|(k, v)| v.map(|v| if v { k.to_string() } else { format!("!{k}") }))
            .collect();
        parts.push(format!("when={}", said.join(",")));
    }
    if let Some(h) = &f.headers {
        parts.push(format!(
            "headers={}",
            h.keys().cloned().collect::<Vec<_>>().join(",")
        ));
    }
    parts.join(" ")
}

/// The fault windows of a scenario (scenario time), with what each applied to (`hits`: per
/// fault index, the count and the kept hits). Lanes are left empty: see [`assign_lanes`].
pub(crate) fn fault_windows(
    faults: &[FaultSpec],
    profiles: &[Profile],
    mut hits: BTreeMap<usize, (u64, Vec<FaultHit>)>,
) -> Vec<FaultWindow> {
    faults
        .iter()
        .enumerate()
        .map(|(index, f)| {
            let (applied_count, applied) = hits.remove(&index).unwrap_or_default();
            FaultWindow {
                index,
                route: f.route.to_string(),
                kind: f.kind.name().to_string(),
                from_ms: f.from.map_or(0, ms),
                until_ms: f.until.map(ms),
                detail: detail(f),
                profile: f.profile.as_deref().map(|t| profile_label(t, profiles)),
                model: f.model.clone(),
                first: f.first,
                probability: f.probability,
                lanes: Vec::new(),
                applied,
                applied_count,
            }
        })
        .collect()
}

/// How the report names a fault's `profile` scope. The fault matches a bearer token, which
/// defaults to the profile id: a token that is a profile's id or credential is shown as that
/// profile's id; any other token only by fingerprint (it may be a credential).
fn profile_label(token: &str, profiles: &[Profile]) -> String {
    profiles
        .iter()
        .find(|p| p.id == token || p.credential() == token)
        .map_or_else(
            || format!("token {}", crate::util::fingerprint(token)),
            |p| p.id.clone(),
        )
}

/// The deps of `lanes` a fault can touch.
fn lanes_of(f: &FaultSpec, lanes: &[String], ws_channels: &BTreeSet<String>) -> Vec<String> {
    let is_model_dep = |d: &str| d.matches('/').count() == 2;
    let keep = |d: &&String| -> bool {
        let route_ok = match &f.route {
            RouteSel::Tool(name) => d.as_str() == name,
            RouteSel::Ws => ws_channels.contains(d.as_str()),
            RouteSel::Llm => is_model_dep(d),
            RouteSel::Any => true,
            RouteSel::Coordinator => false,
        };
        if !route_ok {
            return false;
        }
        // Profile and model scopes only narrow model calls.
        if !is_model_dep(d) {
            return f.profile.is_none() && f.model.is_none();
        }
        let fp_ok = f
            .profile
            .as_ref()
            .is_none_or(|t| d.rsplit('/').next() == Some(crate::util::fingerprint(t).as_str()));
        let model_ok = f
            .model
            .as_ref()
            .is_none_or(|m| d.split('/').next() == Some(provider_of(m)));
        fp_ok && model_ok
    };
    lanes.iter().filter(keep).cloned().collect()
}

/// Fills every window's lanes from the deps the timeline has.
pub(crate) fn assign_lanes(
    windows: &mut [FaultWindow],
    faults: &[FaultSpec],
    lanes: &[String],
    ws_channels: &BTreeSet<String>,
) {
    for w in windows {
        if let Some(f) = faults.get(w.index) {
            w.lanes = lanes_of(f, lanes, ws_channels);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml: &str) -> FaultSpec {
        crate::upstream::parse_fault_file(&format!("[[fault]]\n{toml}"), "test.toml")
            .unwrap()
            .remove(0)
    }

    #[test]
    fn the_detail_names_when_and_the_header_names_never_their_values() {
        let f = spec(
            "route = \"llm\"\nkind = \"status\"\nerror = \"insufficient_quota\"\n\
             when = { stream = true, prefill = false }\n\
             headers = { retry-after-ms = \"9000\", x-secret = \"sk-do-not-show\" }",
        );
        let d = detail(&f);
        assert_eq!(
            d,
            "error=\"insufficient_quota\" when=stream,!prefill headers=retry-after-ms,x-secret"
        );
        assert!(!d.contains("sk-do-not-show"));
    }

    #[test]
    fn a_fault_touches_only_the_lanes_in_its_scope() {
        let default =
            crate::wire::dep::model_dep("openai-codex", "default", "openai-codex:default");
        let backup = crate::wire::dep::model_dep("openai-codex", "default", "openai-codex:backup");
        let claude = crate::wire::dep::model_dep("anthropic", "default", "anthropic:default");
        let lanes: Vec<String> = vec![
            "calculator".into(),
            "crm_search".into(),
            "realtime".into(),
            default.clone(),
            backup.clone(),
            claude.clone(),
        ];
        let ws: BTreeSet<String> = ["realtime".to_string()].into();
        let tool = spec("route = \"tool:crm_search\"\nkind = \"status\"\nstatus = 503");
        assert_eq!(lanes_of(&tool, &lanes, &ws), vec!["crm_search"]);
        let llm = spec("route = \"llm\"\nprofile = \"openai-codex:backup\"\nkind = \"stall\"");
        assert_eq!(lanes_of(&llm, &lanes, &ws), vec![backup.clone()]);
        let model = spec("route = \"llm\"\nmodel = \"openai-codex/gpt-5.2\"\nkind = \"stall\"");
        assert_eq!(lanes_of(&model, &lanes, &ws), vec![default.clone(), backup]);
        let all_llm = spec("route = \"llm\"\nkind = \"stall\"");
        assert_eq!(lanes_of(&all_llm, &lanes, &ws).len(), 3);
        let ws_fault = spec("route = \"ws\"\nkind = \"ws_close\"\ncode = 1011");
        assert_eq!(lanes_of(&ws_fault, &lanes, &ws), vec!["realtime"]);
        let any = spec("route = \"*\"\nkind = \"reset\"");
        assert_eq!(lanes_of(&any, &lanes, &ws), lanes);
    }

    #[test]
    fn windows_carry_scope_and_hits_in_scenario_time() {
        let f = spec(
            "route = \"tool:crm_search\"\nkind = \"rate_limit\"\nretry_after = \"120s\"\nfrom = \"10s\"\nfirst = 1",
        );
        let hits = [(
            0,
            (
                1,
                vec![FaultHit {
                    t_ms: 10_050,
                    dep: "crm_search".into(),
                }],
            ),
        )]
        .into();
        let w = &fault_windows(&[f], &[], hits)[0];
        assert_eq!(
            (w.from_ms, w.until_ms),
            (10_000, None),
            "not divided by speed"
        );
        assert_eq!(w.first, Some(1));
        assert_eq!(w.applied_count, 1);
        assert_eq!(w.scope(), "first=1");
        assert!(w.detail.contains("retry_after"), "{}", w.detail);
    }

    #[test]
    fn a_secret_token_is_shown_by_fingerprint_only() {
        let mut p = Profile::new("openai-codex", "openai-codex:default");
        p.token = Some("sk-live-SECRET".into());
        let by_token = spec("route = \"llm\"\nprofile = \"sk-live-SECRET\"\nkind = \"stall\"");
        let other = spec("route = \"llm\"\nprofile = \"sk-other-SECRET\"\nkind = \"stall\"");
        let w = fault_windows(&[by_token, other], &[p], BTreeMap::new());
        assert_eq!(w[0].profile.as_deref(), Some("openai-codex:default"));
        let shown = w[1].profile.clone().unwrap();
        assert!(
            shown.starts_with("token ") && !shown.contains("SECRET"),
            "{shown}"
        );
    }
}
