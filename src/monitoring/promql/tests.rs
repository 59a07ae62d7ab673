//! Tests of the parent module.

use super::*;

/// A selector's series carry its family's `dep` and the target labels.
fn engine(_: &Selector) -> Shape {
    Shape::of(["dep", "job", "instance", "arm", "host"])
}

fn shapes_of(expr: &str) -> Vec<Shape> {
    parse(expr).unwrap().shapes(&engine)
}

fn tied(expr: &str) -> bool {
    shapes_of(expr).iter().all(Shape::tied)
}

#[test]
fn every_shipped_expression_parses_and_keeps_a_tying_label() {
    let rules = crate::monitoring::alert_rules(crate::monitoring::shipped_rules()).unwrap();
    assert!(rules.len() >= 8);
    for r in rules {
        let p = parse(&r.expr).unwrap_or_else(|e| panic!("{}: {e}", r.alert));
        assert!(!p.selectors().is_empty(), "{}", r.alert);
        let all = p.shapes(&engine);
        // The weekly job's `absent()` branch carries no target label: it is not a rule of
        // a rehearsal (the run leaves its group out).
        if r.group != "rehearse-weekly-job" {
            assert!(all.iter().all(Shape::tied), "{}: {all:?}", r.alert);
        }
    }
}

#[test]
fn aggregations_keep_only_their_grouping() {
    assert!(tied("max by (job, instance, dep) (breaker_state) > 0"));
    assert!(!tied("max by (dep) (breaker_state) > 0"));
    assert!(!tied("sum(breaker_state) > 0"));
    assert!(tied("sum without (dep) (breaker_state) > 0"));
    assert!(!tied(
        "sum without (job, instance, arm, host) (breaker_state) > 0"
    ));
    assert!(tied("topk(1, breaker_state)"));
    let s = shapes_of("count_values(\"v\", breaker_state)");
    assert!(s[0].may_carry("v") && !s[0].tied());
}

#[test]
fn vector_matching_follows_prometheus() {
    // one-to-one `on` keeps only the matching labels; `ignoring` drops them.
    assert!(!tied("breaker_state * on (dep) breaker_open_seconds"));
    assert!(tied("breaker_state * on (instance, dep) breaker_open_seconds"));
    assert!(!tied(
        "breaker_state * ignoring (job, instance, arm, host) breaker_open_seconds"
    ));
    // group_left keeps the many side (and adds what it includes).
    let s = shapes_of("sum by (dep) (breaker_state) * on (dep) group_left (instance) up");
    assert!(s[0].may_carry("instance") && s[0].tied());
    // `or` gives both sides' outputs: each must be tied.
    assert!(!tied("breaker_state > 0 or sum(breaker_state) > 5"));
    assert!(tied("breaker_state > 0 and sum(breaker_state) > 5"));
    // Scalars keep the vector side.
    assert!(tied("2 * breaker_state"));
    assert!(!tied("vector(1)"));
}

#[test]
fn functions_that_build_labels() {
    assert!(tied("rate(breaker_transitions_total[5m]) > 0"));
    assert!(tied("absent(breaker_state{job=\"rehearse\"})"));
    assert!(!tied("absent(breaker_state{dep=\"x\"})"));
    assert!(tied(
        "label_replace(sum by (dep) (breaker_state), \"instance\", \"x\", \"dep\", \".*\")"
    ));
    let s = shapes_of("histogram_quantile(0.9, rate(request_latency_seconds_bucket[1m]))");
    assert!(s[0].tied() && !s[0].may_carry("le"));
}

#[test]
fn selectors_are_read_with_their_matchers() {
    let p = parse(
        "sum by (job) (increase(breaker_transitions_total{from=\"closed\", to=~\"open|x\"}[10m])) < on (job) count_over_time(up[10m])",
    )
    .unwrap();
    let s = p.selectors();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].name.as_deref(), Some("breaker_transitions_total"));
    assert_eq!(s[0].matchers.len(), 2);
    assert!(s[0].matchers[0].requires_label());
    assert_eq!(s[0].matchers[1].kind, MatchKind::Re);
    assert!(s[0].matchers[1].requires_label());
    assert_eq!(s[1].name.as_deref(), Some("up"));
    let s = parse("{__name__=\"breaker_state\", dep!=\"\"}")
        .unwrap()
        .selectors();
    assert_eq!(s[0].name.as_deref(), Some("breaker_state"));
    assert!(!s[0].matchers[0].requires_label());
    assert_eq!(s[0].text(), "breaker_state{dep!=\"\"}");
    assert!(parse("breaker_state >").is_err());
}

#[test]
fn lower_bounds_are_those_every_output_needs() {
    let b = |e: &str| parse(e).unwrap().lower_bounds();
    assert_eq!(
        b("health_breaker_disagreement_seconds >= 180"),
        vec![("health_breaker_disagreement_seconds".to_string(), 180.0)]
    );
    assert_eq!(
        b("(max by (dep) (x) > 5) and y >= 2"),
        vec![("x".to_string(), 5.0), ("y".to_string(), 2.0)]
    );
    assert_eq!(b("180 <= x"), vec![("x".to_string(), 180.0)]);
    assert!(b("x >= 180 or y > 0").is_empty());
    assert!(b("sum(x) >= 180").is_empty());
    assert!(b("x < 180").is_empty());
    assert!(b("x >= bool 180").is_empty());
}
