//! A fleet's hosts at the one upstream: the distinct hosts of a subject (`hosts_at_most`,
//! `hosts_at_least` of `[[expect.attempts]]`) and retry gaps judged per host.

use super::*;

#[test]
fn attempt_hosts_count_the_distinct_hosts_of_a_subject_in_a_window() {
    let mut r: Vec<UpstreamRecord> = ["h0", "h1", "h0", "h2"]
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let mut x = rec(5000 + i as u64 * 100, "fpa", "m1", Some("rate_limit"));
            x.host = Some(h.to_string());
            x
        })
        .collect();
    let mut late = rec(9000, "fpa", "m1", Some("rate_limit"));
    late.host = Some("h3".into());
    r.push(late);
    let fps = fps();
    let f = facts(&r, &fps);
    let e = ExpectAttempts {
        profile: Some("mockai:a".into()),
        fault: Some("rate_limit".into()),
        until: secs_d(8),
        hosts_at_most: Some(3),
        ..ExpectAttempts::default()
    };
    let row = attempt_hosts(&e, &f);
    assert!(row.ok, "{row:?}");
    assert_eq!(row.observed, "3 (h0, h1, h2)");
    // Its witness counts the subject's requests in the window, as the count row's does.
    assert_eq!(row.witness.get("subject_requests"), 4, "{:?}", row.witness);
    assert_eq!(row.witness.get("hosts"), 3);
    let all = ExpectAttempts {
        until: None,
        ..e.clone()
    };
    let row = attempt_hosts(&all, &f);
    assert!(!row.ok && row.status == ExpectStatus::Fail, "{row:?}");
    // A table with both kinds of bounds makes two rows; records without a host are one host.
    let both = ExpectAttempts {
        at_least: Some(1),
        hosts_at_least: Some(1),
        ..ExpectAttempts::default()
    };
    let both = ExpectAttempts {
        profile: Some("mockai:a".into()),
        ..both
    };
    let exp = crate::verdict::Expectations {
        attempts: vec![both],
        ..Default::default()
    };
    let single = records();
    let rows = evaluate(&exp, &facts(&single, &fps));
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].observed, "1 (-)");
}

fn from_host(t_ms: u64, host: &str) -> UpstreamRecord {
    UpstreamRecord {
        host: Some(host.into()),
        ..rec(t_ms, "fpa", "m1", Some("stall"))
    }
}

#[test]
fn retry_gaps_are_judged_per_host_so_a_slow_host_does_not_hide_among_the_others() {
    // h0 waits 5 s between its two retries; h1's requests fill the gap every second. Merged,
    // every gap is 1 s; h0's own gap is 5 s, past the 2 s bound.
    let mut r = vec![from_host(0, "h0"), from_host(5_000, "h0")];
    r.extend((1..5).map(|i| from_host(i * 1_000, "h1")));
    let fps = fps();
    let f = facts(&r, &fps);
    let e = ExpectRetryGaps {
        profile: Some("mockai:a".into()),
        max: secs_d(2),
        ..Default::default()
    };
    let got = retry_gaps(&e, &f);
    assert_eq!(got.status, ExpectStatus::Fail, "{}", got.detail);
    assert!(got.observed.contains("on h0: 5.000s"), "{}", got.observed);
    assert!(got.observed.contains("from 2 hosts"), "{}", got.observed);
}

#[test]
fn retry_gaps_per_host_do_not_fail_on_two_hosts_requests_interleaving() {
    // Each host waits 1 s between retries; their requests interleave 100 ms apart.
    let mut r: Vec<UpstreamRecord> = (0..4).map(|i| from_host(i * 1_000, "h0")).collect();
    r.extend((0..4).map(|i| from_host(i * 1_000 + 100, "h1")));
    let fps = fps();
    let f = facts(&r, &fps);
    let e = ExpectRetryGaps {
        profile: Some("mockai:a".into()),
        min: Some(Duration::from_millis(900)),
        max: secs_d(2),
        ..Default::default()
    };
    let got = retry_gaps(&e, &f);
    assert_eq!(got.status, ExpectStatus::Pass, "{}", got.detail);
    assert!(
        got.observed.starts_with("6 gaps from 2 hosts"),
        "{}",
        got.observed
    );
    // A host retrying too fast is named.
    r.push(from_host(3_200, "h1"));
    let f = facts(&r, &fps);
    let got = retry_gaps(&e, &f);
    assert_eq!(got.status, ExpectStatus::Fail);
    assert!(got.observed.contains("on h1: 0.100s"), "{}", got.observed);
}
