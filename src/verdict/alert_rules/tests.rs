//! Tests of the parent module.

use super::*;

fn shipped() -> Vec<RuleRef> {
    crate::monitoring::alert_rules(&crate::monitoring::rehearsal_rules())
        .unwrap()
        .into_iter()
        .map(|rule| RuleRef {
            at: "the shipped rules".into(),
            rule,
        })
        .collect()
}

fn own(alert: &str, expr: &str, for_: Option<&str>) -> RuleRef {
    RuleRef {
        at: "own.yml:4".into(),
        rule: AlertRule {
            group: "g".into(),
            alert: alert.into(),
            expr: expr.into(),
            for_: for_.map(String::from),
            labels: [("severity".to_string(), "warning".to_string())].into(),
            annotations: Default::default(),
        },
    }
}

/// Checks `alert` (with `labels`) against `rules` in a run of `secs` seconds.
fn check(
    rules: &[RuleRef],
    records: &[RecordRule],
    alert: ExpectAlert,
    secs: u64,
) -> Result<(), RowError> {
    let deps: BTreeSet<String> = ["crm_search", "calculator"].map(String::from).into();
    let providers: BTreeSet<String> = ["openai-codex"].map(String::from).into();
    let arms = ["retry-gate", "legacy"].map(String::from);
    let hosts = ["sut".to_string()];
    let cx = RowsCx {
        rules,
        scope: Scope {
            catalogue: Catalogue::Engine,
            records,
            target_labels_known: true,
            domains: Some(Domains {
                deps: &deps,
                providers: &providers,
                arms: &arms,
                hosts: &hosts,
            }),
        },
        duration: Duration::from_secs(secs),
    };
    check_rows(&[alert], &[], &cx)
}

fn never(alert: &str, labels: &[(&str, &str)]) -> ExpectAlert {
    ExpectAlert {
        alert: alert.into(),
        never: true,
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

#[test]
fn every_shipped_rule_can_be_judged_in_a_five_minute_run() {
    let rules = shipped();
    for r in &rules {
        let labels: &[(&str, &str)] = if r.rule.expr.contains("provider") {
            &[("provider", "openai-codex")]
        } else if r.rule.expr.contains("dep") || r.rule.alert.starts_with("Breaker") {
            &[("dep", "crm_search")]
        } else {
            &[]
        };
        assert_eq!(
            check(&rules, &[], never(&r.rule.alert, labels), 300),
            Ok(()),
            "{}",
            r.rule.alert
        );
    }
}

#[test]
fn a_rule_that_cannot_fire_in_the_run_is_refused() {
    // The rollout's 3 minutes in a 60 s run.
    let e = check(&shipped(), &[], never("HealthBreakerDisagreement", &[]), 60).unwrap_err();
    assert_eq!(e.field, "expect.alert[0].alert");
    assert!(
        e.msg.contains("to reach 180") && e.msg.contains("cannot fire"),
        "{}",
        e.msg
    );
    // A `for:` as long as the run.
    let slow = [own("Slow", "max by (instance, dep) (breaker_state) > 0", Some("1m"))];
    let e = check(&slow, &[], never("Slow", &[]), 60).unwrap_err();
    assert!(e.msg.contains("`for: 1m` is not shorter"), "{}", e.msg);
    assert!(e.msg.contains("own.yml:4"), "{}", e.msg);
    assert_eq!(check(&slow, &[], never("Slow", &[]), 61), Ok(()));
}

#[test]
fn a_rule_reading_what_the_engine_cannot_export_is_refused() {
    let misspelt = [own("Typo", "max by (instance, dep) (breaker_stat) > 0", None)];
    let e = check(&misspelt, &[], never("Typo", &[]), 60).unwrap_err();
    assert!(e.msg.contains("did you mean `breaker_state`"), "{}", e.msg);
    let label = [own("Lbl", "breaker_state{dpe=\"crm_search\"} > 0", None)];
    let e = check(&label, &[], never("Lbl", &[]), 60).unwrap_err();
    assert!(e.msg.contains("no label `dpe`; did you mean `dep`"), "{}", e.msg);
    let value = [own("Val", "breaker_state{dep=\"crm_serch\"} > 0", None)];
    let e = check(&value, &[], never("Val", &[]), 60).unwrap_err();
    assert!(e.msg.contains("did you mean `crm_search`"), "{}", e.msg);
    let state = [own(
        "St",
        "increase(breaker_transitions_total{to=\"opened\"}[1m]) > 0",
        None,
    )];
    let e = check(&state, &[], never("St", &[]), 60).unwrap_err();
    assert!(e.msg.contains("did you mean `open`"), "{}", e.msg);
    // `up` and a recorded series are known.
    let rec = [RecordRule {
        record: "dep:breaker_state:max".into(),
        expr: "max by (job, instance, dep) (breaker_state)".into(),
    }];
    let on_rec = [own("Rec", "dep:breaker_state:max > 0 and on (instance) up == 1", None)];
    assert_eq!(check(&on_rec, &rec, never("Rec", &[("dep", "crm_search")]), 60), Ok(()));
}

#[test]
fn a_rule_that_aggregates_away_the_tying_labels_is_refused() {
    let by_dep = [own("ByDep", "max by (dep) (breaker_state) > 0", None)];
    let e = check(&by_dep, &[], never("ByDep", &[]), 60).unwrap_err();
    assert!(
        e.msg.contains("rule `ByDep` (own.yml:4)") && e.msg.contains("aggregates away"),
        "{}",
        e.msg
    );
    // Through a recording rule too.
    let rec = [RecordRule {
        record: "dep:breaker_state:max".into(),
        expr: "max by (dep) (breaker_state)".into(),
    }];
    let on_rec = [own("Rec", "dep:breaker_state:max > 0", None)];
    assert!(check(&on_rec, &rec, never("Rec", &[]), 60).is_err());
}

#[test]
fn row_labels_must_be_carried_and_producible() {
    let rules = shipped();
    let e = check(&rules, &[], never("BreakerOpen", &[("dep", "crm_serch")]), 60).unwrap_err();
    assert_eq!(e.field, "expect.alert[0].labels.dep");
    assert_eq!(e.needle, "crm_serch");
    assert!(e.msg.contains("did you mean `crm_search`"), "{}", e.msg);
    let e = check(&rules, &[], never("BreakerOpen", &[("tier", "x")]), 60).unwrap_err();
    assert_eq!(e.field, "expect.alert[0].labels.tier");
    assert!(
        e.msg.contains("no rule `BreakerOpen` carries a label `tier`"),
        "{}",
        e.msg
    );
    let e =
        check(&rules, &[], never("BreakerOpen", &[("severity", "critical")]), 60).unwrap_err();
    assert!(e.msg.contains("sets `severity` to `warning`"), "{}", e.msg);
    // `BreakerOpen` keeps job, instance and dep: `arm` is aggregated away.
    let e = check(&rules, &[], never("BreakerOpen", &[("arm", "legacy")]), 60).unwrap_err();
    assert!(e.msg.contains("carries a label `arm`"), "{}", e.msg);
    let ok = never("BreakerOpen", &[("dep", "crm_search"), ("severity", "warning")]);
    assert_eq!(check(&rules, &[], ok, 60), Ok(()));
    let arm = [own("Arm", "breaker_state > 0", None)];
    let e = check(&arm, &[], never("Arm", &[("arm", "retry-gat")]), 60).unwrap_err();
    assert!(e.msg.contains("did you mean `retry-gate`"), "{}", e.msg);
}

#[test]
fn a_dashboard_dep_must_exist() {
    let deps: BTreeSet<String> = ["crm_search"].map(String::from).into();
    let cx = RowsCx {
        rules: &[],
        scope: Scope {
            catalogue: Catalogue::Engine,
            records: &[],
            target_labels_known: true,
            domains: Some(Domains {
                deps: &deps,
                providers: &BTreeSet::new(),
                arms: &[],
                hosts: &[],
            }),
        },
        duration: Duration::from_secs(60),
    };
    let d = ExpectDashboard {
        dep: Some("crm_serch".into()),
        ..Default::default()
    };
    let e = check_rows(&[], &[d], &cx).unwrap_err();
    assert_eq!(e.field, "expect.dashboard[0].dep");
    assert!(e.msg.contains("did you mean `crm_search`"), "{}", e.msg);
}
