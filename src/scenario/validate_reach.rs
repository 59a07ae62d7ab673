//! Checks of the expectations against what the run can produce, so none holds on nothing: an
//! `[[expect.attempts]]` `fault` is a kind of one of the scenario's faults (or `none`); a
//! `model` subject is a model the traffic, the fallbacks or the profiles' providers can send
//! (the rule of [`crate::wire::model`]); windows start inside the run (for an external target,
//! `duration` plus the turns' timeout, the longest a turn sent before `duration` may take);
//! an `http` target has a fixed `[upstream] listen` address its providers can point at. Each
//! error names the field, with a "did you mean" where a near name exists.

use std::collections::BTreeSet;
use std::time::Duration;

use super::field::FieldError;
use super::format::ScenarioFile;
use super::target::TargetKind;
use crate::engine::RequestKind;
use crate::replay::traffic::TrafficLine;
use crate::util::suggest::closest;
use crate::wire::model::names_model;

/// The first check that fails, naming its field.
pub(super) fn check_reach(file: &ScenarioFile, traffic: &[TrafficLine]) -> Result<(), FieldError> {
    http_upstream(file)?;
    fault_kinds(file)?;
    model_subjects(file, traffic)?;
    windows(file)
}

/// `" (did you mean `X`?)"` for the candidate nearest `word`, else nothing.
fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

/// An `http` target's providers are configured outside the harness: they can only reach a mock
/// upstream whose address is fixed in the scenario.
fn http_upstream(file: &ScenarioFile) -> Result<(), FieldError> {
    if file.target.kind == TargetKind::Http && file.upstream.listen.is_none() {
        return Err(FieldError::new(
            "target.kind",
            "an `http` target's providers must point at the mock upstream, whose port is \
             otherwise picked at run time: give `[upstream] listen = \"127.0.0.1:PORT\"` and \
             point the gateway's providers there"
                .into(),
        ));
    }
    Ok(())
}

/// `[[expect.attempts]] fault` names the kind of one of the scenario's faults, or `none`.
fn fault_kinds(file: &ScenarioFile) -> Result<(), FieldError> {
    let kinds: BTreeSet<&str> = file.fault.iter().map(|f| f.kind.name()).collect();
    for (i, a) in file.expect.attempts.iter().enumerate() {
        let Some(k) = a.fault.as_deref() else {
            continue;
        };
        if k == "none" || kinds.contains(k) {
            continue;
        }
        let mut names: Vec<&str> = kinds.iter().copied().collect();
        names.push("none");
        let hint = did_you_mean(k, names.iter().copied());
        let known = if kinds.is_empty() {
            "the scenario has no [[fault]]".to_string()
        } else {
            format!("its faults' kinds: {}", names.join(", "))
        };
        return Err(FieldError::new(
            format!("expect.attempts[{i}].fault"),
            format!(
                "`{k}` is not the kind of any [[fault]] of this scenario, so no request can \
                 carry it and the count is always 0{hint} ({known})"
            ),
        ));
    }
    Ok(())
}

/// Every model the run can send: the traffic's model calls, `[models]` and every model the
/// engine config can route to (fallbacks, context fallbacks, the ladder's lighter model, the
/// throttle's cheaper and pinned models).
fn models(file: &ScenarioFile, traffic: &[TrafficLine]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = traffic
        .iter()
        .filter_map(|l| match &l.kind {
            RequestKind::Llm { model, .. } => Some(model.clone()),
            _ => None,
        })
        .collect();
    let mf = &file.engine.model_failover;
    let th = &file.engine.throttle;
    out.extend(
        file.all_fallbacks()
            .chain(file.models.primary.iter())
            .chain(mf.context_fallbacks.iter())
            .chain(mf.lighter_model.iter())
            .chain(th.cheaper_model.iter())
            .chain(th.pinned.values())
            .cloned(),
    );
    out
}

/// Whether a subject `name` can match a request for `model`: sent as written, or as its bare
/// id with a token of any profile's provider.
fn reachable(name: &str, model: &str, providers: &BTreeSet<&str>) -> bool {
    if names_model(name, model, None) {
        return true;
    }
    let bare = model.split_once('/').map_or(model, |(_, m)| m);
    providers
        .iter()
        .any(|p| names_model(name, model, Some(p)) || names_model(name, bare, Some(p)))
}

/// A `model` subject of a ground-truth table names a model the run can send.
fn model_subjects(file: &ScenarioFile, traffic: &[TrafficLine]) -> Result<(), FieldError> {
    let models = models(file, traffic);
    let providers: BTreeSet<&str> = file
        .profile
        .iter()
        .map(|p| p.provider.as_str())
        .chain(models.iter().filter_map(|m| m.split_once('/').map(|(p, _)| p)))
        .collect();
    let e = &file.expect;
    let subjects = e
        .attempts
        .iter()
        .enumerate()
        .map(|(i, a)| ("attempts", i, &a.model))
        .chain(e.first_request.iter().enumerate().map(|(i, a)| ("first_request", i, &a.model)))
        .chain(e.no_request.iter().enumerate().map(|(i, a)| ("no_request", i, &a.model)))
        .chain(e.retry_gaps.iter().enumerate().map(|(i, a)| ("retry_gaps", i, &a.model)));
    for (table, i, model) in subjects {
        let Some(name) = model.as_deref() else {
            continue;
        };
        if models.iter().any(|m| reachable(name, m, &providers)) {
            continue;
        }
        let bare: Vec<&str> = models
            .iter()
            .filter_map(|m| m.split_once('/').map(|(_, b)| b))
            .collect();
        let hint = did_you_mean(name, models.iter().map(String::as_str).chain(bare));
        let known = models.iter().cloned().collect::<Vec<_>>().join(", ");
        return Err(FieldError::new(
            format!("expect.{table}[{i}].model"),
            format!(
                "`{name}` is not a model this scenario can send: no traffic line, fallback or \
                 profile's provider reaches it, so no request matches{hint} (models: {known})"
            ),
        ));
    }
    Ok(())
}

/// How far a run observes, in scenario time: `duration`, and for an external target the turns'
/// timeout on top (a turn sent just before `duration` may take that long).
fn horizon(file: &ScenarioFile) -> (Duration, String) {
    let d = humantime::format_duration(file.duration);
    if file.target.kind.is_external() {
        let t = file.target.turn_timeout();
        (
            file.duration + t,
            format!(
                "`duration` {d} + the turns' timeout {}",
                humantime::format_duration(t)
            ),
        )
    } else {
        (file.duration, format!("`duration` {d}"))
    }
}

/// Windows of the ground-truth tables start inside the run and end no later than its horizon.
fn windows(file: &ScenarioFile) -> Result<(), FieldError> {
    let (end, said) = horizon(file);
    let e = &file.expect;
    // (field, value, whether the value is a window end: it may equal the horizon, and how early
    // it may be observed: a transition's tolerance).
    let mut bounds: Vec<(String, Duration, bool, Duration)> = Vec::new();
    for (i, a) in e.attempts.iter().enumerate() {
        if let Some(f) = a.from {
            bounds.push((format!("expect.attempts[{i}].from"), f, false, Duration::ZERO));
        }
        if let Some(u) = a.until {
            bounds.push((format!("expect.attempts[{i}].until"), u, true, Duration::ZERO));
        }
    }
    for (i, a) in e.no_request.iter().enumerate() {
        bounds.push((format!("expect.no_request[{i}].from"), a.from, false, Duration::ZERO));
        bounds.push((format!("expect.no_request[{i}].until"), a.until, true, Duration::ZERO));
    }
    for (i, a) in e.first_request.iter().enumerate() {
        if let Some(l) = a.at_least {
            bounds.push((
                format!("expect.first_request[{i}].at_least"),
                l,
                false,
                Duration::ZERO,
            ));
        }
    }
    for (i, r) in e.recovered.iter().enumerate() {
        bounds.push((
            format!("expect.recovered[{i}].after"),
            r.after,
            false,
            Duration::ZERO,
        ));
    }
    for (i, t) in e.transition.iter().enumerate() {
        if let Some(at) = t.at {
            let tolerance = t.tolerance.unwrap_or(Duration::from_secs(1));
            bounds.push((format!("expect.transition[{i}].at"), at, false, tolerance));
        }
    }
    for (field, at, is_end, early) in bounds {
        let seen_from = at.saturating_sub(early);
        let outside = if is_end { at > end } else { seen_from >= end };
        if outside {
            return Err(FieldError::new(
                field,
                format!(
                    "`{}` is past the end of what the run observes ({said} = {}): nothing is \
                     observed there, so the expectation would judge nothing",
                    humantime::format_duration(at),
                    humantime::format_duration(end)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "name = \"t\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n\
        [engine.modelFailover]\nfallbacks = [\"fallback/m2\"]\n\
        [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-a\"\n\
        [[fault]]\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\n";

    fn traffic() -> Vec<TrafficLine> {
        crate::replay::traffic::parse_traffic(
            "{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":8}\n",
            "t.jsonl",
        )
        .unwrap()
    }

    fn check(extra: &str) -> Result<(), FieldError> {
        let file = ScenarioFile::parse(&format!("{BASE}{extra}"), "t.toml").unwrap();
        check_reach(&file, &traffic())
    }

    #[test]
    fn an_attempts_fault_is_a_kind_of_the_scenarios_faults_or_none() {
        let e = check("[[expect.attempts]]\nmodel = \"m1\"\nfault = \"503\"\nat_most = 0\n")
            .unwrap_err();
        assert_eq!(e.field, "expect.attempts[0].fault");
        assert!(e.message.contains("always 0"), "{}", e.message);
        let e = check("[[expect.attempts]]\nmodel = \"m1\"\nfault = \"stats\"\nat_most = 0\n")
            .unwrap_err();
        assert!(e.message.contains("did you mean `status`?"), "{}", e.message);
        // A real kind the scenario has no fault of holds on nothing either.
        let e = check("[[expect.attempts]]\nmodel = \"m1\"\nfault = \"stall\"\nat_most = 0\n")
            .unwrap_err();
        assert_eq!(e.field, "expect.attempts[0].fault");
        for ok in ["status", "none"] {
            let extra = format!("[[expect.attempts]]\nmodel = \"m1\"\nfault = \"{ok}\"\nat_most = 9\n");
            assert!(check(&extra).is_ok(), "{ok}");
        }
    }

    #[test]
    fn a_model_subject_is_one_the_traffic_fallbacks_or_profiles_can_send() {
        for ok in ["mockai/m1", "m1", "fallback/m2", "m2"] {
            let extra = format!("[[expect.first_request]]\nmodel = \"{ok}\"\nnever = true\n");
            assert!(check(&extra).is_ok(), "{ok}");
        }
        let e = check("[[expect.retry_gaps]]\nmodel = \"mockai/m3\"\nmax = \"1s\"\n").unwrap_err();
        assert_eq!(e.field, "expect.retry_gaps[0].model");
        assert!(e.message.contains("did you mean `mockai/m1`?"), "{}", e.message);
        // Another provider's model of the same id is not sent.
        let e = check("[[expect.attempts]]\nmodel = \"azure/m1\"\nat_most = 0\n").unwrap_err();
        assert_eq!(e.field, "expect.attempts[0].model");
    }

    #[test]
    fn a_model_subject_may_be_a_models_fallback_without_the_engine_table() {
        let without = BASE.replace("[engine.modelFailover]\nfallbacks = [\"fallback/m2\"]\n", "");
        let run = |extra: &str| {
            let file = ScenarioFile::parse(&format!("{without}{extra}"), "t.toml").unwrap();
            check_reach(&file, &traffic())
        };
        let expect = "[[expect.first_request]]\nmodel = \"fallback/m2\"\nnever = true\n";
        // Before `[models]`, naming the fallback needed the engine's table.
        assert_eq!(run(expect).unwrap_err().field, "expect.first_request[0].model");
        for m in ["fallback/m2", "m2"] {
            let e = expect.replace("fallback/m2", m);
            let with = format!("[models]\nfallbacks = [\"fallback/m2\"]\n{e}");
            assert!(run(&with).is_ok(), "{m}");
        }
    }

    #[test]
    fn windows_start_inside_the_run_and_end_by_its_horizon() {
        let e = check("[[expect.no_request]]\nmodel = \"m1\"\nfrom = \"500s\"\nuntil = \"600s\"\n")
            .unwrap_err();
        assert_eq!(e.field, "expect.no_request[0].from");
        let e = check("[[expect.attempts]]\nmodel = \"m1\"\nuntil = \"11s\"\nat_most = 1\n")
            .unwrap_err();
        assert_eq!(e.field, "expect.attempts[0].until");
        let e = check("[[expect.first_request]]\nmodel = \"m1\"\nat_least = \"10s\"\n")
            .unwrap_err();
        assert_eq!(e.field, "expect.first_request[0].at_least");
        assert!(check("[[expect.attempts]]\nmodel = \"m1\"\nfrom = \"9s\"\nuntil = \"10s\"\nat_most = 1\n").is_ok());
        let e = check("[[expect.recovered]]\nmodel = \"m1\"\nafter = \"10s\"\n").unwrap_err();
        assert_eq!(e.field, "expect.recovered[0].after");
        assert!(check("[[expect.recovered]]\nmodel = \"m1\"\nafter = \"9s\"\n").is_ok());
        // A transition is observed from `at` − its tolerance (default 1 s).
        let tr = "[[expect.transition]]\ndep = \"m1\"\nfrom = \"closed\"\nto = \"open\"\nat = \"10500ms\"\n";
        assert!(check(tr).is_ok());
        let e = check(&tr.replace("10500ms", "11s")).unwrap_err();
        assert_eq!(e.field, "expect.transition[0].at");
        assert!(check(&format!("{tr}tolerance = \"2s\"\n").replace("10500ms", "11s")).is_ok());
        // An external target observes the turns' timeout past `duration`.
        let ext = "[target]\nkind = \"openclaw\"\nturn_timeout = \"60s\"\n\
            [[expect.no_request]]\nmodel = \"m1\"\nfrom = \"30s\"\nuntil = \"70s\"\n";
        assert!(check(ext).is_ok());
        let e = check(&ext.replace("\"70s\"", "\"71s\"")).unwrap_err();
        assert!(e.message.contains("`duration` 10s + the turns' timeout 1m"), "{}", e.message);
    }

    #[test]
    fn an_http_target_needs_a_fixed_upstream_address() {
        let http = "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\n";
        assert_eq!(check(http).unwrap_err().field, "target.kind");
        let fixed = format!("{http}[upstream]\nlisten = \"127.0.0.1:18081\"\n");
        assert!(check(&fixed).is_ok());
    }
}
