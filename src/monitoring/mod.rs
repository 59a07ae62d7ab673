//! TEMPORARY stand-in until the `monitoring` branch is merged (removed before that merge).
const RULES: &str = "groups:\n  - name: g\n    rules:\n      - alert: BreakerOpen\n        expr: max by (job, instance, dep) (breaker_state) > 0\n        for: 15s\n      - alert: HealthBreakerDisagreement\n        expr: health_breaker_disagreement_seconds >= 180\n";

/// The shipped rules.
pub fn shipped_rules() -> &'static str {
    RULES
}

/// Their alert names.
pub fn shipped_alert_names() -> Vec<String> {
    vec!["BreakerOpen".into(), "HealthBreakerDisagreement".into()]
}
