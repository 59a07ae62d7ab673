//! The upstream's tests: its public face, its control API, disarm and arm.

use super::*;

fn inc<'a>(route: RouteKind) -> Incoming<'a> {
    Incoming {
        route,
        tool: None,
        channel: None,
        bearer: None,
        model: None,
        probe: None,
        canary: false,
        idempotency_key: None,
        host: None,
        turn: None,
        tokens: None,
        usage: None,
        stream: None,
        body: None,
    }
}

#[test]
fn dep_names_follow_the_engine() {
    let mut i = inc(RouteKind::Llm);
    i.model = Some("openai-codex/gpt-5.2");
    assert_eq!(dep_name(&i, Some("abc123")), "openai-codex/default/abc123");
    i.probe = Some("openai-codex/default/abc123");
    assert_eq!(dep_name(&i, None), "openai-codex/default/abc123");
    let mut t = inc(RouteKind::Tool);
    t.tool = Some("crm_search");
    assert_eq!(dep_name(&t, None), "crm_search");
    let mut w = inc(RouteKind::Ws);
    w.channel = Some("realtime");
    assert_eq!(dep_name(&w, None), "realtime");
}

#[test]
fn bad_speed_counts_as_one_and_token_interval_is_scaled() {
    // A speed is checked where it is made: the upstream only ever gets a valid one.
    assert!(Speed::new(0.0).is_err());
    let up = Upstream::new(UpstreamConfig::default());
    assert_eq!(up.speed(), Speed::ONE);
    let up = Upstream::new(UpstreamConfig {
        speed: Speed::new(4.0).unwrap(),
        ..UpstreamConfig::default()
    });
    assert_eq!(up.token_interval(), Duration::from_millis(5));
}

#[test]
fn canaries_are_recorded_apart_from_probes_and_never_see_a_first_fault() {
    let up = Upstream::new(UpstreamConfig {
        faults: faults::parse_fault_file(
            "[[fault]]\nroute='tool:crm'\nkind='status'\nstatus=503\nfirst=1\n",
            "f.toml",
        )
        .unwrap(),
        ..UpstreamConfig::default()
    });
    let records = Arc::new(MemoryRecords::default());
    up.subscribe(records.clone());
    let (now, wall) = (up.run_start(), SystemTime::now());
    let mut canary = inc(RouteKind::Tool);
    canary.tool = Some("crm");
    canary.probe = Some("crm");
    canary.canary = true;
    let mut probe = canary;
    probe.canary = false;
    let mut user = probe;
    user.probe = None;
    let hit = |i: &Incoming<'_>| up.admit(i, now, wall).map(|d| d.kind);
    assert_eq!(hit(&canary), None, "a first=N fault spares canaries");
    assert_eq!(hit(&canary), None, "and they do not use it up");
    assert_eq!(
        hit(&user),
        Some("status"),
        "the first user call still gets it"
    );
    assert_eq!(hit(&canary), None);
    assert_eq!(hit(&probe), None);
    let flags: Vec<(bool, bool)> = records.take().iter().map(|r| (r.probe, r.canary)).collect();
    let want = [
        (true, true),
        (true, true),
        (false, false),
        (true, true),
        (true, false),
    ];
    assert_eq!(flags, want);
    let st = up.stats();
    assert_eq!((st.requests, st.canaries), (5, 3));
    let canaries = st.deps["crm"].arrivals.iter().filter(|a| a.canary).count();
    assert_eq!(canaries, 3);
}

#[test]
fn the_scenarios_profiles_give_a_fault_its_profile_id_and_a_bare_models_provider() {
    let up = Upstream::new(UpstreamConfig {
        faults: faults::parse_fault_file(
            "[[fault]]\nroute='llm'\nprofile='mockai:a'\nmodel='mockai/m1'\nkind='status'\nstatus=503\n",
            "f.toml",
        )
        .unwrap(),
        owners: TokenOwners::new([
            ("sk-key-A", "mockai:a", "mockai"),
            ("sk-key-F", "fallback:f", "fallback"),
        ]),
        ..UpstreamConfig::default()
    });
    let (now, wall) = (up.run_start(), SystemTime::now());
    let call = |bearer: &'static str, model: &'static str| {
        let mut i = inc(RouteKind::Llm);
        i.bearer = Some(bearer);
        i.model = Some(model);
        up.admit(&i, now, wall).map(|d| d.kind)
    };
    // The engine's spelling and OpenClaw's bare id, with key-A's token (profile id in the
    // fault, not the token).
    assert_eq!(call("sk-key-A", "mockai/m1"), Some("status"));
    assert_eq!(call("sk-key-A", "m1"), Some("status"));
    // Another profile's token, or another provider's model of that id: no fault.
    assert_eq!(call("sk-key-F", "m1"), None);
    assert_eq!(call("sk-unknown", "m1"), None);
}

#[test]
fn a_disarmed_upstream_applies_no_fault_and_uses_up_no_first_until_armed() {
    let up = Upstream::new(UpstreamConfig {
        faults: faults::parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='status'\nstatus=503\nfirst=1\nuntil='2s'\n",
            "f.toml",
        )
        .unwrap(),
        ..UpstreamConfig::default()
    });
    let records = Arc::new(MemoryRecords::default());
    up.subscribe(records.clone());
    let wall = SystemTime::now();
    let t0 = Instant::now();
    up.disarm(t0);
    assert!(!up.armed());
    let user = inc(RouteKind::Llm);
    // Warm-up requests, one of them 17 s in: no fault, the `first` left for the run.
    assert_eq!(up.admit(&user, t0 + Duration::from_millis(500), wall), None);
    assert_eq!(up.admit(&user, t0 + Duration::from_secs(17), wall), None);
    let start = t0 + Duration::from_secs(20);
    up.arm(start);
    assert!(up.armed());
    let hit = up.admit(&user, start + Duration::from_millis(300), wall).map(|d| d.kind);
    assert_eq!(hit, Some("status"), "the run's first request meets it, inside 0–2 s");
    assert_eq!(up.admit(&user, start + Duration::from_millis(400), wall), None);
    let got: Vec<(u64, bool, bool)> = records
        .take()
        .iter()
        .map(|r| (r.t_ms, r.warmup, r.fault.is_some()))
        .collect();
    assert_eq!(
        got,
        vec![
            (500, true, false),
            (17_000, true, false),
            (300, false, true),
            (400, false, false)
        ]
    );
}
