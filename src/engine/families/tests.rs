//! Tests of the parent module.

use super::*;

#[test]
fn known_series_and_labels_pass() {
    assert_eq!(check_selector("requests_total", ["dep", "outcome"]), Ok(()));
    assert_eq!(check_selector("model_fallbacks_total", []), Ok(()));
    assert_eq!(
        check_selector("request_latency_seconds_bucket", ["dep", "le"]),
        Ok(())
    );
    assert_eq!(
        check_selector("request_latency_seconds_count", ["dep"]),
        Ok(())
    );
}

#[test]
fn a_misspelt_series_is_named_with_a_suggestion() {
    let e = check_selector("request_total", []).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "`request_total` is not a series the engine exports; did you mean `requests_total`?"
        ),
        "{e}"
    );
    assert!(
        e.contains("breaker_state") && e.contains("throttled_total"),
        "{e}"
    );
    // A histogram's base name has no sample of its own.
    let e = check_selector("request_latency_seconds", [])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("it is a histogram: select `request_latency_seconds_count`"),
        "{e}"
    );
    let e = check_selector("zzz", []).unwrap_err().to_string();
    assert!(!e.contains("did you mean"), "{e}");
}

#[test]
fn every_label_says_where_its_values_come_from_and_every_time_is_placed() {
    for f in &FAMILIES {
        assert_eq!(f.labels.len(), f.values.len(), "{}", f.name);
        // A `_seconds` family is a time of some base; nothing else is.
        assert_eq!(
            f.name.ends_with("_seconds"),
            f.time != TimeBase::NotTime,
            "{}",
            f.name
        );
    }
    assert_eq!(
        sample_time("health_breaker_disagreement_seconds"),
        Some(SampleTime::Base(TimeBase::Wall))
    );
    assert_eq!(
        sample_time("timeout_deadline_seconds"),
        Some(SampleTime::Base(TimeBase::Scenario))
    );
    assert_eq!(
        sample_time("request_latency_seconds_bucket"),
        Some(SampleTime::WallBuckets)
    );
    assert_eq!(
        sample_time("request_latency_seconds_count"),
        Some(SampleTime::Base(TimeBase::NotTime))
    );
    assert_eq!(
        sample_time("request_latency_seconds_sum"),
        Some(SampleTime::Base(TimeBase::Wall))
    );
    assert_eq!(
        sample_time("breaker_open_since_timestamp_seconds"),
        Some(SampleTime::Base(TimeBase::Unix))
    );
    assert_eq!(sample_time("request_latency_seconds"), None);
    assert_eq!(
        sample_time("requests_total"),
        Some(SampleTime::Base(TimeBase::NotTime))
    );
    assert_eq!(
        le_values(&PROBE_LATENCY),
        ["0.025", "0.05", "0.1", "0.25", "0.5", "1", "2", "+Inf"]
    );
    assert_eq!(
        TRANSITIONS.values_of("to").and_then(LabelValues::fixed),
        Some(vec!["closed", "half_open", "open"])
    );
    assert_eq!(REQUESTS.values_of("dep"), Some(LabelValues::Dep));
    assert_eq!(REQUESTS.values_of("le"), None);
}

#[test]
fn a_misspelt_label_is_named_with_the_family_labels() {
    let e = check_selector("requests_total", ["dep", "outcom"])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "`requests_total` has no label `outcom`; did you mean `outcome`? (its labels: dep, outcome)"
    );
    // `le` belongs to buckets only.
    assert!(check_selector("request_latency_seconds_count", ["le"]).is_err());
}
