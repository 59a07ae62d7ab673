//! Expectations that can only hold vacuously are refused before a run: a
//! fault kind no `[[fault]]` has, a `model` subject the run cannot send, an `openclaw_decision`
//! filter on a field its event does not carry, a window past the end of what the run observes,
//! an `http` target without a fixed upstream address. Each is exit 2 from `validate` and `run`
//! naming file:line:col of the value, with a "did you mean" where a near name exists. A
//! foreign gateway's metric family is no longer checked against the engine's catalogue.
//! A `[models]` fallback may be named without `[engine.modelFailover]`; an engine override
//! naming a model `[models]` does not list, or a `[models] primary` the traffic does not ask
//! for, is exit 2 at it.

use crate::scenario_target::{OPENCLAW_TARGET, variant};
use crate::scenario_validate::{assert_rejected, smoke_plus, where_is};
use crate::support::rehearse;
use crate::support::run::show;

#[test]
fn a_fault_kind_no_fault_of_the_scenario_has_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = smoke_plus(
        tmp.path(),
        "kind-503",
        "[[expect.attempts]]\nmodel = \"openai-codex/gpt-5.2\"\nfault = \"503\"\nat_most = 0\n",
    );
    let (l, c) = where_is(&p, "\"503\"");
    assert_rejected(
        &p,
        (l, c),
        &[
            "expect.attempts[0].fault",
            "`503` is not the kind of any [[fault]] of this scenario",
            "its faults' kinds: status, none",
        ],
    );
    let p = smoke_plus(
        tmp.path(),
        "kind-typo",
        "[[expect.attempts]]\nmodel = \"openai-codex/gpt-5.2\"\nfault = \"stauts\"\nat_least = 1\n",
    );
    let (l, c) = where_is(&p, "\"stauts\"");
    assert_rejected(&p, (l, c), &["did you mean `status`?"]);
}

#[test]
fn a_model_subject_the_run_cannot_send_is_refused_with_a_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    for (tag, extra, model) in [
        (
            "attempts",
            "[[expect.attempts]]\nmodel = \"openai-codex/gpt-5.3\"\nat_most = 0\n",
            "openai-codex/gpt-5.3",
        ),
        (
            "no-request",
            "[[expect.no_request]]\nmodel = \"gpt-5.3\"\nfrom = \"1s\"\nuntil = \"2s\"\n",
            "gpt-5.3",
        ),
    ] {
        let p = smoke_plus(tmp.path(), tag, extra);
        let (l, c) = where_is(&p, &format!("\"{model}\""));
        let msg = format!("`{model}` is not a model this scenario can send");
        assert_rejected(&p, (l, c), &[&msg, "did you mean `", "gpt-5.2`?"]);
    }
    // The bare id and the qualified name of a model the traffic sends are both fine.
    for (tag, model) in [("bare", "gpt-5.2"), ("qualified", "openai-codex/gpt-5.2")] {
        let extra: &'static str = if model == "gpt-5.2" {
            "[[expect.attempts]]\nmodel = \"gpt-5.2\"\nat_least = 1\n"
        } else {
            "[[expect.attempts]]\nmodel = \"openai-codex/gpt-5.2\"\nat_least = 1\n"
        };
        let p = smoke_plus(tmp.path(), tag, extra);
        let out = rehearse(&["validate", p.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{tag}: {}", show(&out));
    }
}

#[test]
fn a_window_past_the_end_of_the_run_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // The smoke scenario lasts 21 s.
    let p = smoke_plus(
        tmp.path(),
        "late",
        "[[expect.no_request]]\nmodel = \"openai-codex/gpt-5.2\"\nfrom = \"500s\"\nuntil = \"600s\"\n",
    );
    let (l, c) = where_is(&p, "\"500s\"");
    assert_rejected(
        &p,
        (l, c),
        &[
            "expect.no_request[0].from",
            "past the end of what the run observes (`duration` 21s = 21s)",
        ],
    );
    // An external target observes `duration` plus the turns' timeout (10 s + 600 s here):
    // 500 s is inside, 700 s is not.
    let inside = variant(
        tmp.path(),
        "inside",
        OPENCLAW_TARGET,
        "[[expect.no_request]]\nprofile = \"mockai:b\"\nfrom = \"500s\"\nuntil = \"600s\"\n",
    );
    let out = rehearse(&["validate", inside.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let outside = variant(
        tmp.path(),
        "outside",
        OPENCLAW_TARGET,
        "[[expect.attempts]]\nprofile = \"mockai:b\"\nfrom = \"700s\"\nat_most = 0\n",
    );
    let (l, c) = where_is(&outside, "\"700s\"");
    crate::scenario_target::assert_rejected(
        &outside,
        (l, c),
        &[
            "expect.attempts[1].from",
            "`duration` 10s + the turns' timeout 10m",
        ],
    );
}

#[test]
fn a_decision_filter_on_a_field_the_event_does_not_carry_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (tag, extra, needle, field) in [
        (
            "retry-profile",
            "[[expect.openclaw_decision]]\nevent = \"same_model_retry\"\nprofile = \"mockai:a\"\nat_least = 1\n",
            "profile = \"mockai:a\"\nat_least = 1\n",
            "expect.openclaw_decision[1].profile",
        ),
        (
            "window-reason",
            "[[expect.openclaw_decision]]\nevent = \"retry_window_elapsed\"\nreason = \"timeout\"\nequals = 0\n",
            "reason = \"timeout\"\nequals = 0\n",
            "expect.openclaw_decision[1].reason",
        ),
    ] {
        let p = variant(tmp.path(), tag, OPENCLAW_TARGET, extra);
        let (l, c) = where_is(&p, needle);
        let col = c + needle.find('"').unwrap();
        crate::scenario_target::assert_rejected(
            &p,
            (l, col),
            &[field, "decision carries no", "would count 0"],
        );
    }
}

#[test]
fn an_http_target_without_a_fixed_upstream_address_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let p = variant(
        tmp.path(),
        "http-ephemeral",
        "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\n",
        "",
    );
    // Without the OpenClaw-only tables, which an http target refuses first.
    let text = std::fs::read_to_string(&p).unwrap();
    let kept: Vec<&str> = text
        .split("\n[[")
        .filter(|b| !b.starts_with("expect.openclaw_"))
        .collect();
    std::fs::write(&p, kept.join("\n[[")).unwrap();
    let (l, c) = where_is(&p, "\"http\"");
    crate::scenario_target::assert_rejected(
        &p,
        (l, c),
        &[
            "target.kind",
            "give `[upstream] listen = \"127.0.0.1:PORT\"`",
        ],
    );
}

#[test]
fn a_foreign_gateways_family_is_not_checked_against_the_engine_catalogue() {
    let tmp = tempfile::tempdir().unwrap();
    let p = variant(
        tmp.path(),
        "foreign-metric",
        "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\n\
         metrics_url = \"http://127.0.0.1:9/metrics\"\n[upstream]\nlisten = \"127.0.0.1:18081\"\n",
        "[[expect.metric]]\nseries = 'gateway_upstream_errors_total{code=\"503\"}'\nat_least = 1\n",
    );
    let text = std::fs::read_to_string(&p).unwrap();
    let kept: Vec<&str> = text
        .split("\n[[")
        .filter(|b| !b.starts_with("expect.openclaw_"))
        .collect();
    std::fs::write(&p, kept.join("\n[[")).unwrap();
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn a_models_fallback_may_be_named_and_an_engine_override_outside_models_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // The fallback named in an expectation, declared in `[models]` only: no engine table needed.
    let p = smoke_plus(
        tmp.path(),
        "models-fallback",
        "[models]\nfallbacks = [\"openai-codex/gpt-5.2-mini\"]\n\
         [[expect.attempts]]\nmodel = \"gpt-5.2-mini\"\nat_most = 1000\n",
    );
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // The engine's override adds a model `[models]` does not list: exit 2 at it.
    let p = smoke_plus(
        tmp.path(),
        "models-contradicted",
        "[models]\nfallbacks = [\"openai-codex/gpt-5.2-mini\"]\n\
         [engine.modelFailover]\nfallbacks = [\"openai-codex/gpt-9\"]\n",
    );
    let (l, c) = where_is(&p, "\"openai-codex/gpt-9\"");
    assert_rejected(
        &p,
        (l, c),
        &[
            "engine.modelFailover.fallbacks[0]",
            "is not among `[models] fallbacks` (openai-codex/gpt-5.2-mini)",
        ],
    );
    // A primary the traffic does not ask for.
    let p = smoke_plus(
        tmp.path(),
        "models-primary",
        "[models]\nprimary = \"openai-codex/gpt-4\"\n",
    );
    let (l, c) = where_is(&p, "\"openai-codex/gpt-4\"");
    assert_rejected(
        &p,
        (l, c),
        &[
            "models.primary",
            "its model calls name `openai-codex/gpt-5.2`",
        ],
    );
}
