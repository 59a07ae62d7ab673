//! Tests of a fault's `headers`: checks, scaling, and the wait read back.
use super::*;
use crate::util::speed::sp;
use crate::wire::throttle::parse_go_duration;

fn h(pairs: &[(&str, &str)]) -> FaultHeaders {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn go_durations_read_and_write_as_openai_writes_them() {
    assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
    assert_eq!(parse_go_duration("1h2m3.5s"), Some(Duration::from_millis(3_723_500)));
    assert_eq!(parse_go_duration("20ms"), Some(Duration::from_millis(20)));
    assert_eq!(parse_go_duration("0s"), Some(Duration::ZERO));
    for bad in ["", "5", "1x", "s", "1.2.3s", "-1s"] {
        assert_eq!(parse_go_duration(bad), None, "{bad:?}");
    }
    assert_eq!(format_go(Duration::from_secs(360)), "6m0s");
    assert_eq!(format_go(Duration::from_millis(1500)), "1.5s");
    assert_eq!(format_go(Duration::from_micros(19_001)), "20ms");
    assert_eq!(format_go(Duration::from_secs(3723)), "1h2m3s");
    for d in [1, 999, 1000, 59_999, 61_010, 3_600_000, 86_400_123] {
        let d = Duration::from_millis(d);
        assert_eq!(parse_go_duration(&format_go(d)), Some(d), "{d:?}");
    }
}

#[test]
fn duration_headers_scale_with_speed_and_round_up_in_their_unit() {
    let headers = h(&[
        ("retry-after", "10"),
        ("retry-after-ms", "9000"),
        ("x-ms-retry-after-ms", "7"),
        ("x-ratelimit-reset-requests", "6m0s"),
        ("x-ms-throttle-reason", "quota"),
    ]);
    validate(&headers).unwrap();
    let at = |speed: f64| -> BTreeMap<String, String> { scaled(&headers, sp(speed)).into_iter().collect() };
    let one = at(1.0);
    assert_eq!(one, headers, "speed 1 sends them as written");
    let four = at(4.0);
    assert_eq!(four["retry-after"], "3", "2.5 s rounded up");
    assert_eq!(four["retry-after-ms"], "2250");
    assert_eq!(four["x-ms-retry-after-ms"], "2", "1.75 ms rounded up");
    assert_eq!(four["x-ratelimit-reset-requests"], "1m30s");
    assert_eq!(four["x-ms-throttle-reason"], "quota", "not a duration: as written");
}

#[test]
fn the_announced_wait_is_read_from_whichever_header_said_it_in_scenario_time() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let read = |pairs: &[(&str, &str)], speed: f64| {
        announced_wait(pairs.iter().map(|(k, v)| (*k, *v)), now, sp(speed))
    };
    assert_eq!(read(&[("retry-after-ms", "9000")], 1.0), Some(9000));
    assert_eq!(read(&[("x-ms-retry-after-ms", "2250")], 4.0), Some(9000));
    assert_eq!(read(&[("X-Ratelimit-Reset-Tokens", "1.5s")], 2.0), Some(3000));
    assert_eq!(read(&[("retry-after", "3")], 1.0), Some(3000));
    // retry-after-ms is preferred over retry-after, as the OpenAI SDKs read them.
    assert_eq!(read(&[("retry-after", "3"), ("retry-after-ms", "500")], 1.0), Some(500));
    let date = httpdate::fmt_http_date(now + Duration::from_secs(2));
    assert_eq!(read(&[("retry-after", &date)], 1.0), Some(2000));
    assert_eq!(read(&[("x-ms-throttle-reason", "x")], 1.0), None);
    assert_eq!(read(&[("retry-after-ms", "soon")], 1.0), None);
}

#[test]
fn bad_headers_are_refused_naming_the_header() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT")], "whole seconds"),
        (&[("retry-after-ms", "1.5")], "whole milliseconds"),
        (&[("x-ratelimit-reset-requests", "soon")], "a duration like"),
        (&[("retry-after", "99999999999")], "at most 365days"),
        (&[("content-length", "3")], "frames the response"),
        (&[("Retry-After-Ms", "3")], "lower case"),
        (&[("bad name", "3")], "not a header name"),
        (&[("x-a", "line\nbreak")], "not a header value"),
    ];
    for (pairs, want) in cases {
        let e = validate(&h(pairs)).unwrap_err();
        assert!(e.0.contains(want), "{pairs:?}: {e}");
        assert!(e.0.starts_with("`headers`"), "{e}");
    }
}
