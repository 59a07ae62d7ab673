//! `[[expect.drift]]` subjects the run can produce, checked before any run: a drift row about
//! something the run can never count would wait for a baseline forever, or compare 0 with 0
//! forever, and never fail. Refused, each naming its field (file:line:col), with a "did you
//! mean" where a near name exists:
//!
//! - a breaker figure (`openings`, `open_ms`, ...) of a target whose breakers the harness
//!   cannot see (`openclaw`, `http` without `metrics_url`), and `probes_per_half_open` of any
//!   external target (its probes are not marked at the upstream);
//! - a `dep` the scenario cannot produce, where the system is an engine of ours (an `http`
//!   target's deps are its own names, known only from its scrapes: a dep none of them shows is
//!   a failed row with the reason, judged at the run);
//! - a `provider` that is not one of the scenario's (its profiles', its traffic's and its
//!   configured models');
//! - a time from the first fault (`time_to_open_ms`, `time_to_first_rotation_ms`,
//!   `time_to_first_fallback_ms`) in a scenario without `[[fault]]`, `cooldowns` of an `http`
//!   target (no auth state to read), and fallbacks where the engine has no model to fall back
//!   to.

use std::collections::BTreeSet;

use super::field::FieldError;
use super::format::ScenarioFile;
use super::target::TargetKind;
use crate::util::suggest::closest;
use crate::verdict::drift::FIGURES;

/// The first `[[expect.drift]]` table whose subject the run cannot produce. `deps`: every dep
/// the scenario can produce (`validate::exercised_deps`).
pub(super) fn check_drift(file: &ScenarioFile, deps: &BTreeSet<String>) -> Result<(), FieldError> {
    let kind = file.target.kind;
    let engine = !kind.is_external();
    let breakers_seen = engine || (kind == TargetKind::Http && file.target.metrics_url.is_some());
    let providers = providers(file, deps);
    let no_fault = file.fault.is_empty();
    for (i, d) in file.expect.drift.iter().enumerate() {
        let f = |key: &str| format!("expect.drift[{i}].{key}");
        let scope = FIGURES
            .iter()
            .find(|(n, _)| *n == d.figure)
            .map_or("", |(_, s)| *s);
        let figure = d.figure.as_str();
        if scope == "dep" && !breakers_seen {
            return Err(FieldError::new(
                f("figure"),
                format!(
                    "`{figure}` is a breaker figure, and this `{}` target exposes no breaker the \
                     harness can see{}: it would never be counted",
                    kind.as_str(),
                    if kind == TargetKind::Http {
                        " (give `[target] metrics_url` if it exports breaker series)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        if figure == "probes_per_half_open" && !engine {
            return Err(FieldError::new(
                f("figure"),
                "`probes_per_half_open` counts the engine's breaker probes at the upstream \
                 (marked `x-breaker-probe`); a gateway's probes are not marked, so it would \
                 always be 0"
                    .into(),
            ));
        }
        if no_fault
            && matches!(
                figure,
                "time_to_open_ms" | "time_to_first_rotation_ms" | "time_to_first_fallback_ms"
            )
        {
            return Err(FieldError::new(
                f("figure"),
                format!(
                    "`{figure}` is timed from the first applied [[fault]], and this scenario has \
                     none: it would never be counted"
                ),
            ));
        }
        if figure == "cooldowns" && matches!(kind, TargetKind::Http | TargetKind::Portkey) {
            return Err(FieldError::new(
                f("figure"),
                format!(
                    "`cooldowns` are read from an OpenClaw gateway's auth state or the engine's \
                     events; an `{}` target has neither, so they are never counted",
                    kind.as_str()
                ),
            ));
        }
        if engine
            && matches!(figure, "fallbacks" | "time_to_first_fallback_ms")
            && !can_fall_back(file)
        {
            return Err(FieldError::new(
                f("figure"),
                format!(
                    "`{figure}`: the engine has no model to fall back to (no \
                     `[engine.modelFailover] fallbacks` or other configured model), so it \
                     would always be 0"
                ),
            ));
        }
        if let Some(dep) = d.dep.as_deref().filter(|_| engine)
            && !deps.contains(dep)
        {
            return Err(unknown(&f("dep"), "dep", dep, deps));
        }
        if let Some(p) = d.provider.as_deref()
            && !providers.contains(p)
        {
            return Err(unknown(&f("provider"), "provider", p, &providers));
        }
    }
    Ok(())
}

/// `NAME` is not a WHAT of this scenario, with a did-you-mean and the known names.
fn unknown(field: &str, what: &str, name: &str, known: &BTreeSet<String>) -> FieldError {
    let hint = closest(name, known.iter().map(String::as_str))
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    let list = known.iter().cloned().collect::<Vec<_>>().join(", ");
    FieldError::new(
        field,
        format!(
            "`{name}` is not a {what} this scenario can produce, so its figure is never \
             counted{hint} ({what}s: {list})"
        ),
    )
}

/// The scenario's providers: its profiles', and those of the model deps it can produce.
fn providers(file: &ScenarioFile, deps: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = file.profile.iter().map(|p| p.provider.clone()).collect();
    out.extend(
        deps.iter()
            .filter(|d| d.matches('/').count() == 2)
            .filter_map(|d| d.split('/').next().map(str::to_string)),
    );
    out
}

/// Whether the engine's config names a model it can move to.
fn can_fall_back(file: &ScenarioFile) -> bool {
    let mf = &file.engine.model_failover;
    let th = &file.engine.throttle;
    !file.engine_fallbacks().is_empty()
        || !mf.context_fallbacks.is_empty()
        || mf.lighter_model.is_some()
        || th.cheaper_model.is_some()
        || !th.pinned.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "name = \"t\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n\
        [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-a\"\n\
        [[fault]]\nroute = \"tool:crm_search\"\nkind = \"status\"\nstatus = 503\n";

    fn check(extra: &str) -> Result<(), FieldError> {
        let file = ScenarioFile::parse(&format!("{BASE}{extra}"), "t.toml").unwrap();
        let deps: BTreeSet<String> = ["crm_search", "calculator", "mockai/default/abc123"]
            .map(String::from)
            .into();
        check_drift(&file, &deps)
    }

    fn drift(body: &str) -> String {
        format!("[[expect.drift]]\n{body}within = \"50%\"\n")
    }

    #[test]
    fn a_dep_or_provider_the_scenario_cannot_produce_is_refused_with_a_near_name() {
        assert!(check(&drift("figure = \"open_ms\"\ndep = \"crm_search\"\n")).is_ok());
        let e = check(&drift("figure = \"open_ms\"\ndep = \"crm_serch\"\n")).unwrap_err();
        assert_eq!(e.field, "expect.drift[0].dep");
        assert!(e.message.contains("did you mean `crm_search`?"), "{}", e.message);
        assert!(check(&drift("figure = \"rotations\"\nprovider = \"mockai\"\n")).is_ok());
        let e = check(&drift("figure = \"rotations\"\nprovider = \"mokai\"\n")).unwrap_err();
        assert_eq!(e.field, "expect.drift[0].provider");
        assert!(e.message.contains("did you mean `mockai`?"), "{}", e.message);
    }

    #[test]
    fn a_figure_the_kind_of_run_cannot_count_is_refused() {
        // No fallback configured: the engine never falls back.
        let e = check(&drift("figure = \"fallbacks\"\nprovider = \"mockai\"\n")).unwrap_err();
        assert_eq!(e.field, "expect.drift[0].figure");
        let with = "[engine.modelFailover]\nfallbacks = [\"mockai/m2\"]\n";
        assert!(check(&format!("{with}{}", drift("figure = \"fallbacks\"\n"))).is_ok());
        // An OpenClaw gateway shows no breaker.
        let oc = "[target]\nkind = \"openclaw\"\n";
        let e = check(&format!("{oc}{}", drift("figure = \"open_ms\"\n"))).unwrap_err();
        assert!(e.message.contains("exposes no breaker"), "{}", e.message);
        // An http gateway with metrics: its own dep names, known only at the run.
        let http = "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\n\
            metrics_url = \"http://127.0.0.1:9/metrics\"\n";
        assert!(check(&format!("{http}{}", drift("figure = \"open_ms\"\ndep = \"model\"\n"))).is_ok());
        let e = check(&format!("{http}{}", drift("figure = \"probes_per_half_open\"\n")))
            .unwrap_err();
        assert!(e.message.contains("not marked"), "{}", e.message);
        let e = check(&format!("{http}{}", drift("figure = \"cooldowns\"\n"))).unwrap_err();
        assert!(e.message.contains("auth state"), "{}", e.message);
    }

    #[test]
    fn a_time_from_the_first_fault_needs_a_fault() {
        let text = format!(
            "name = \"t\"\nduration = \"10s\"\ntraffic = \"t.jsonl\"\n{}",
            drift("figure = \"time_to_open_ms\"\n")
        );
        let file = ScenarioFile::parse(&text, "t.toml").unwrap();
        let e = check_drift(&file, &BTreeSet::new()).unwrap_err();
        assert_eq!(e.field, "expect.drift[0].figure");
        assert!(e.message.contains("has none"), "{}", e.message);
    }
}
