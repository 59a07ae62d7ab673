//! Tests of anchor resolution ([`super::resolve`]): pure, over faults and their applications in
//! scenario ms (the speed's part — the recorder's wall times to scenario ms — is tested where the
//! applications are built, `rehearsal/section/tests.rs`).

use std::collections::BTreeMap;

use super::*;

fn faults() -> Vec<FaultSpec> {
    crate::upstream::parse_fault_file(
        "[[fault]]\nname = \"outage\"\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\n\
         from = \"5s\"\nuntil = \"9s\"\n\
         [[fault]]\nname = \"blip\"\nroute = \"llm\"\nkind = \"reset\"\nfrom = \"8s\"\nuntil = \"20s\"\nfirst = 2\n\
         [[fault]]\nroute = \"llm\"\nkind = \"status\"\nstatus = 500\nfrom = \"1s\"\n\
         [[fault]]\nname = \"spare\"\nroute = \"llm\"\nkind = \"stall\"\noptional = true\n",
        "f.toml",
    )
    .unwrap()
}

fn since(fault: FaultRef, edge: Edge) -> Since {
    Since { fault, edge }
}

fn name(n: &str) -> FaultRef {
    FaultRef::Name(n.into())
}

fn applied() -> BTreeMap<usize, Applied> {
    [
        (0, Applied { count: 12, last_ms: Some(8_950) }),
        (1, Applied { count: 2, last_ms: Some(8_310) }),
        (2, Applied { count: 40, last_ms: Some(29_875) }),
    ]
    .into_iter()
    .collect()
}

fn at(s: &Since) -> Result<u64, String> {
    let f = faults();
    let a = applied();
    resolve(s, &FaultsSeen { faults: &f, applied: &a })
        .map(|x| x.at_ms)
        .map_err(|e| e.0)
}

#[test]
fn a_fault_with_until_starts_at_from_and_ends_at_until() {
    assert_eq!(at(&since(name("outage"), Edge::Start)), Ok(5_000));
    // Configured, not its last application (8.95 s): the window is what the scenario says.
    assert_eq!(at(&since(name("outage"), Edge::End)), Ok(9_000));
}

#[test]
fn a_first_n_fault_ends_at_its_last_application_from_the_record() {
    assert_eq!(at(&since(name("blip"), Edge::Start)), Ok(8_000));
    // `first = 2`: used up at its second application, long before its `until` (20 s).
    assert_eq!(at(&since(name("blip"), Edge::End)), Ok(8_310));
}

#[test]
fn a_fault_without_until_ends_at_its_last_application() {
    assert_eq!(at(&since(FaultRef::Index(2), Edge::Start)), Ok(1_000));
    assert_eq!(at(&since(FaultRef::Index(2), Edge::End)), Ok(29_875));
}

#[test]
fn by_index_and_by_name_are_the_same_fault() {
    for edge in [Edge::Start, Edge::End] {
        assert_eq!(
            at(&since(FaultRef::Index(1), edge)),
            at(&since(name("blip"), edge))
        );
    }
    let f = faults();
    let a = applied();
    let seen = FaultsSeen { faults: &f, applied: &a };
    let by_name = resolve(&since(name("outage"), Edge::Start), &seen).unwrap();
    assert_eq!(by_name.text, "fault `outage` start (5.000s)");
    assert_eq!(by_name.applications, 12);
    let by_index = resolve(&since(FaultRef::Index(0), Edge::End), &seen).unwrap();
    assert_eq!(by_index.text, "fault[0] end (9.000s)");
}

#[test]
fn a_fault_that_never_applied_anchors_nothing_never_zero() {
    for edge in [Edge::Start, Edge::End] {
        let why = at(&since(name("spare"), edge)).unwrap_err();
        assert!(why.starts_with("fault 'spare' never applied"), "{why}");
        assert!(why.contains(edge.as_str()), "{why}");
    }
    // Counted 0 is the same as absent.
    let f = faults();
    let a: BTreeMap<usize, Applied> = [(0, Applied { count: 0, last_ms: None })].into();
    let why = resolve(
        &since(FaultRef::Index(0), Edge::Start),
        &FaultsSeen { faults: &f, applied: &a },
    )
    .unwrap_err();
    assert!(why.0.starts_with("fault[0] never applied"), "{}", why.0);
    // A fault the scenario does not have (validation refuses it first) anchors nothing either.
    assert!(at(&since(name("nope"), Edge::Start)).is_err());
    assert!(at(&since(FaultRef::Index(9), Edge::Start)).is_err());
}

#[test]
fn the_table_reads_from_toml_with_start_by_default() {
    #[derive(serde::Deserialize)]
    struct T {
        since: Since,
    }
    let t: T = toml::from_str("since = { fault = \"outage\" }").unwrap();
    assert_eq!(t.since, since(name("outage"), Edge::Start));
    let t: T = toml::from_str("since = { fault = 2, edge = \"end\" }").unwrap();
    assert_eq!(t.since, since(FaultRef::Index(2), Edge::End));
    assert!(toml::from_str::<T>("since = { fault = \"x\", edge = \"middle\" }").is_err());
    assert!(toml::from_str::<T>("since = { fault = \"x\", at = \"end\" }").is_err());
}
